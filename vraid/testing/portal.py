"""The model machines' portal: a :class:`vraid.testing.session.Session` over given member stores.

Hypothesis state machines cannot run async rules, so the engine lives in a trio
loop on a helper thread (in virtual time) and the test thread calls into it::

    portal = ArrayPortal(geometry, stores)
    portal.write(0, b"hello")
    assert portal.read(0, 5) == b"hello"
    portal.close()          # drops the engine (no shutdown), ends the loop, joins the thread

Everything else an :class:`~vraid.engine.config.EngineConfig` holds (a cache, NVRAM,
a bitmap, failed roles) is passed as keywords; ``cache=CacheConfig(...)`` is
accepted as the tests always wrote it. The tests import it as ``portal`` (tests/portal.py);
:mod:`vraid.testing.machines` and ``vraid fuzz`` run on it.
"""

from __future__ import annotations

from typing import Any, Sequence

from vraid.backends.base import Store
from vraid.core.geometry import Geometry
from vraid.engine.chain import CacheConfig
from vraid.engine.config import EngineConfig, policies_of
from vraid.testing.session import Session, SessionError

PortalError = SessionError


class ArrayPortal(Session):
    """An engine over ``stores`` running in its own trio loop on a helper thread."""

    def __init__(self, geometry: Geometry, stores: Sequence[Store], *, cache: CacheConfig | None = None,
                 policies: dict[str, str] | None = None, **config: Any) -> None:
        self.geometry = geometry
        self.stores = list(stores)
        specs = policies_of(cache) | dict(policies or {})
        if cache is not None:
            config.setdefault("cache_size", cache.size)
        super().__init__(EngineConfig(geometry, stores=tuple(self.stores), policies=specs, **config))
