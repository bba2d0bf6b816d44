"""Lab exercises: ``vraid lab list | run | check`` (docs/labs/README.md).

Each lab is one module here holding ``LAB``, an instance of a :class:`~vraid.labs.framework.Lab`
subclass. :data:`MODULES` lists them in teaching order.
"""

from __future__ import annotations

import importlib

from vraid.errors import VraidError

#: the lab modules, in the order `vraid lab list` shows them
MODULES = (
    "layouts",
    "small_write",
    "rcw_rmw",
    "rxw_matrix",
    "cache_org",
    "contiguity",
    "stride",
    "destage_order",
    "watermarks",
    "adaptive",
    "degraded",
    "crashes",
    "prefetching",
    "log_disk",
    "multibuffering",
    "disk_timing",
    "raid_levels",
    "double_failure",
)


def all_labs() -> list:
    """Every lab, in teaching order."""
    return [importlib.import_module(f"vraid.labs.{m}").LAB for m in MODULES]


def get(name: str):
    """The lab called ``name``.

    Raises:
        VraidError: naming the labs there are.
    """
    labs = all_labs()
    for lab in labs:
        if lab.name == name:
            return lab
    raise VraidError(f"there is no lab {name!r}", "labs: " + ", ".join(lab.name for lab in labs) + " (`vraid lab list`)")
