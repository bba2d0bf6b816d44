"""The one table of policy families (engine-seams issue): how a spec string becomes a policy.

A *family* is one kind of decision the controller delegates (cache organisation, destage
order, destage scheduler, contiguity transform; prefetch, log disk and placement later). Each
row names its key (the CLI flag ``--KEY``, the ``vraid.toml`` key, the ``vraid ctl`` key and
the ``vraid status`` line all come from it), its default spec, and how to build a policy
from a spec.

This first version is the *contract* the rest of the engine codes against:

* :func:`parse` checks a spec string and returns a :class:`PolicySpec` (nothing is built);
* :func:`create` builds the policy a spec names, given a :class:`Context` (the geometry,
  the disk model preset name, the superblock's parameters);
* :data:`FAMILIES` lists the families in display order.

Errors are :class:`~vraid.errors.VraidError` with a hint, always before anything changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from vraid.errors import VraidError


@dataclass(frozen=True)
class Context:
    """What a policy may need to be built: never a store, a member or the array itself."""

    #: vraid.core.geometry.Geometry of the array (cache organisations need it)
    geometry: Any = None
    #: the disk model spec of the members (``hdd:st373454lc``), or None for real disks
    disk_model: str | None = None
    #: the superblock's JSON parameters (``params["ct"]`` holds measured CT limits)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the members' disk preset as measured (``vraid.backends.models.disk_preset(disk_model)``),
    #: or None; the CT limits are looked up by it (policies do not import backends)
    disk_preset: str | None = None


@dataclass(frozen=True)
class PolicySpec:
    """A checked spec: the family key, the policy name and its parameters as given."""

    family: str
    name: str
    text: str


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    default: str
    check: Callable[[str], str]
    build: Callable[[str, Context], Any]


def _check_cache(text: str) -> str:
    from vraid.policies.cache import CHOICES

    if text not in CHOICES:
        raise VraidError(f"unknown cache organisation {text!r}", f"use --cache {' | '.join(CHOICES)}")
    return text


def _build_cache(text: str, ctx: Context):
    from vraid.policies.cache import organisation

    return None if text == "none" else organisation(text, ctx.geometry)


def _check_order(text: str) -> str:
    from vraid.policies.order import ORDERS

    if text not in ORDERS:
        raise VraidError(f"unknown destage order {text!r}", f"use --destage-order {' | '.join(ORDERS)}")
    return text


def _build_order(text: str, ctx: Context):
    from vraid.policies.order import destage_order

    return destage_order(text)


def _check_destage(text: str) -> str:
    from vraid.policies.destage import load_scheduler

    load_scheduler(text)
    return text


def _build_destage(text: str, ctx: Context):
    from vraid.policies.destage import load_scheduler

    return load_scheduler(text)


def _check_ct(text: str) -> str:
    from vraid.policies.ct import parse_spec

    parse_spec(text)
    return text


def _build_ct(text: str, ctx: Context):
    from vraid.policies.ct import default_limits, load_ct

    return load_ct(text, default_limits(dict(ctx.params) or None, disk_preset=ctx.disk_preset))


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family("cache", "write cache organisation", "none", _check_cache, _build_cache),
        Family("destage_order", "destage order", "lrw", _check_order, _build_order),
        Family("destage", "destage scheduler", "hlwm", _check_destage, _build_destage),
        Family("ct", "contiguity transform", "none", _check_ct, _build_ct),
    )
}


def family(key: str) -> Family:
    try:
        return FAMILIES[key]
    except KeyError:
        raise VraidError(f"unknown policy family {key!r}", f"families: {', '.join(FAMILIES)}") from None


def parse(key: str, text: str | None) -> PolicySpec:
    """Check ``text`` (None: the family's default) as a spec of family ``key``."""
    fam = family(key)
    spec = fam.default if text is None else str(text).strip()
    return PolicySpec(key, spec.partition(":")[0], fam.check(spec))


def create(key: str, spec: "str | PolicySpec | None", ctx: Context | None = None) -> Any:
    """The policy ``spec`` names in family ``key`` (None where the family's "none" means no policy)."""
    if not isinstance(spec, PolicySpec):
        spec = parse(key, spec)
    return family(key).build(spec.text, ctx or Context())
