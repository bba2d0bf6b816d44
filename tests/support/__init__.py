"""Shared fixtures of the tests: geometries, member stores, and engines built the way
every caller builds them (``vraid.engine.build``). Import from here, never copy.

* :mod:`.stores`: in-memory members, :class:`SlowStore` (requests that take virtual time),
  the array's data read straight from the members;
* :mod:`.geometry`: the small RAID-5 geometries the engine tests run on;
* :mod:`.engines`: an engine's array run inside a block (:func:`running`), the write-cache
  fields of an ``EngineConfig`` (:func:`write_cache`), ``trio.run`` in virtual time, seeded random writes against a model (:func:`random_writes`).
"""

from .engines import random_writes, run_virtual, running, write_cache
from .geometry import small_geometry
from .stores import SlowStore, members_image, memory_stores, slow_stores

__all__ = ["SlowStore", "members_image", "memory_stores", "random_writes", "run_virtual", "running", "slow_stores", "small_geometry",
           "write_cache"]
