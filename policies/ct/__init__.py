"""Contiguity transforms (``--ct``): rewrite a plan's rxw-matrix before it runs.

Seed 000 (Baek & Park, MSC-CT), sections III-B to III-E. A transform is a pure, synchronous
``Plan -> Plan`` the controller calls between planning and executing every stripe write
(``Array(ct=...)``); ``none`` leaves plans alone.

=====  ==========================================================================  ========
name   what it does                                                                source
=====  ==========================================================================  ========
none   no transform: the basic rxw-matrix runs as planned                          -
msc    read then write contiguity transform under eq. (6)-(9), Fig. 10 (msc.py)    seed 000
=====  ==========================================================================  ========

Spec syntax (``vraid mount --ct``, ``vraid sim --ct``, ``ct =`` in vraid.toml; parsed by
:mod:`vraid.policies.registry`, like every family)::

    none | msc[:sr_max=N,sw_max=N,sr_except=a-b;c-d,sw_except=a-b] | pkg.mod:Class[:...] | file.py:Class[:...]

Keys given override the defaults (:func:`default_limits`); the rest keep them.

Limits (eq. (8), (9)): a gap of stride distance S is filled only when ``S < S^max`` and S lies
in no excluded region ``[a, b]`` (inclusive); reads use ``sr_*``, writes ``sw_*``. They are
stored per array in the superblocks as ``params["ct"]`` (``vraid stride-bench --save``), as
the paper keeps them "in a non-volatile storage" after one benchmark run (sec. III-D).

Where the defaults come from (:func:`default_limits`, first that applies):

1. the superblock's ``params["ct"]``;
2. the members' disk preset in :data:`PRESET_LIMITS` (its name is handed in: policies do not
   import backends): measured once with the stride benchmark of seed 000 Fig. 8 on vraid's
   own hdd models, each preset as it runs by default (command queue on where the drive has
   one), and the 1.2 rule (``vraid experiment stride``, full run, strides 1..64;
   ``vraid.core.stride_rule``);
3. :data:`CONSERVATIVE`: the smallest limits over the measured presets (no read transform;
   S_w^max = 3, the smallest write threshold, so eq. (9)'s S < S_w^max fills writes only
   across one-block gaps, S = 2): safe for a disk nobody measured.

Adding a transform: one module here with a :class:`~vraid.policies.ct.base.ContiguityTransform`
subclass (built with :class:`CtLimits`, callable on a Plan) and one entry in the ``ct`` row of
:data:`vraid.policies.registry.FAMILIES`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from vraid.errors import VraidError

Regions = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class CtLimits:
    """S_r^max, S_w^max and the excluded regions of eq. (8) and (9); ``source`` says where
    the numbers come from (shown by ``vraid status`` and the docs, not part of the spec)."""

    sr_max: int
    sw_max: int
    sr_except: Regions = ()
    sw_except: Regions = ()
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for key in ("sr_max", "sw_max"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise VraidError(f"CT limit {key} = {value!r} is not an integer of at least 1",
                                 f"{key} is the stride distance S^max of eq. (8)/(9); 1 turns that transform off")
        for key in ("sr_except", "sw_except"):
            regions = getattr(self, key)
            checked = []
            for region in regions:
                try:
                    a, b = (int(x) for x in region)
                except (TypeError, ValueError):
                    raise VraidError(f"CT limit {key}: {region!r} is not a region [a, b]",
                                     "give each excluded region as two stride distances a <= b") from None
                if a < 1 or a > b:
                    raise VraidError(f"CT limit {key}: region {a}-{b} is not a range of stride distances",
                                     "an excluded region a-b needs 1 <= a <= b")
                checked.append((a, b))
            object.__setattr__(self, key, tuple(sorted(checked)))

    def spec(self, name: str = "msc") -> str:
        """``msc:sr_max=8,sw_max=16[,sr_except=3-4;9-10][,sw_except=...]``."""
        parts = [f"sr_max={self.sr_max}", f"sw_max={self.sw_max}"]
        for key in ("sr_except", "sw_except"):
            regions = getattr(self, key)
            if regions:
                parts.append(f"{key}=" + ";".join(f"{a}-{b}" for a, b in regions))
        return f"{name}:{','.join(parts)}"

    def to_params(self) -> dict[str, Any]:
        """The superblock form: ``params["ct"]``."""
        return {"sr_max": self.sr_max, "sw_max": self.sw_max,
                "sr_except": [[a, b] for a, b in self.sr_except],
                "sw_except": [[a, b] for a, b in self.sw_except],
                "source": self.source}

    @classmethod
    def from_params(cls, d: dict[str, Any]) -> "CtLimits":
        """Read ``params["ct"]`` back.

        Raises:
            VraidError: when it is not such a dict (a damaged or hand-edited superblock).
        """
        if not isinstance(d, dict) or "sr_max" not in d or "sw_max" not in d:
            raise VraidError(f"the superblock's CT limits {d!r} are not readable",
                             "run `vraid stride-bench --save` again, or give the limits with --ct msc:sr_max=N,sw_max=N")
        regions = {}
        for key in ("sr_except", "sw_except"):
            value = d.get(key) or ()
            if not isinstance(value, (list, tuple)):
                raise VraidError(f"the superblock's CT limit {key} = {value!r} is not a list of regions",
                                 "run `vraid stride-bench --save` again")
            regions[key] = tuple(value)
        return cls(sr_max=_int(d["sr_max"], "sr_max"), sw_max=_int(d["sw_max"], "sw_max"),
                   source=str(d.get("source", "")), **regions)


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise VraidError(f"CT limit {key} = {value!r} is not an integer", "write a whole number of blocks, e.g. 8")
    return value


#: Stride-benchmark limits per hdd preset of ``vraid models``, each preset as it runs by
#: default (its command queue on at the native depth; the ATA presets have none). Measured
#: with ``vraid experiment stride`` (full run: every hdd preset, S = 1..64, 16 MiB span,
#: 2 passes, 32 outstanding, stroke=partition; results/stride/) on vraid 0.1.0, 2026-11-23;
#: S^max by the 1.2 rule of vraid.core.stride_rule. No curve had an excluded region.
#: Normalized time at S = 2 (write / read): st373454lc 2.18 / 1.96, st39175fc 2.19 / 2.00,
#: dnes-318350 and dnes-309170 1.00 / 1.07 (their one-block gap outlasts the drive's setup
#: of the next queued transfer), 91366u4 31.17 / 1.88, 91020d6 23.51 / 1.44, st52160n and
#: st32151n 12.87 / 1.49. One command at a time (``tcq=off``, a disk these limits do not
#: name) the queueing drives measured S = 2 writes at 43.46 (st373454lc), 19.93 (st39175fc)
#: and 19.05 (dnes, S_w^max 3).
PRESET_LIMITS: dict[str, tuple[int, int]] = {  # preset -> (sr_max, sw_max)
    "st373454lc": (4, 4),
    "st39175fc": (3, 3),
    "dnes-318350": (1, 1),
    "dnes-309170": (1, 1),
    "91366u4": (3, 3),
    "91020d6": (3, 3),
    "st52160n": (3, 3),
    "st32151n": (3, 3),
}
_MEASURED = "vraid experiment stride (full, 1.2 rule), see policies/ct/__init__.py PRESET_LIMITS"

#: No stored and no preset limits (no disk model, an ssd, a model nobody measured): the
#: smallest S^max over the measured presets, for reads and writes separately, where writes
#: count the presets that have a write threshold (S_w^max > 1): dnes-318350 has S_r^max = 1,
#: every other preset S_w^max >= 3; the queued dnes disks have none (their S = 2, 3 writes
#: measured 1.00, 1.03), so filling a one- or two-block write gap costs them nothing. A
#: transform these limits allow helped every measured disk or cost it nothing.
CONSERVATIVE = CtLimits(sr_max=min(r for r, _ in PRESET_LIMITS.values()),
                        sw_max=min(w for _, w in PRESET_LIMITS.values() if w > 1),
                        source="conservative default: the smallest limits over all measured hdd presets")

#: What ``vraid rxw --ct msc`` uses when no limit is given: large enough that every gap of a
#: stripe is filled (the paper's worked example transforms fully).
GENEROUS = CtLimits(sr_max=1 << 20, sw_max=1 << 20, source="vraid rxw: generous limits (every gap filled)")


def default_limits(params: dict | None = None, *, disk_preset: str | None = None) -> CtLimits:
    """The limits to use when a spec gives none: stored, preset, or conservative (see module doc).

    ``disk_preset`` is the name of the members' disk preset as measured (``"st373454lc"``),
    which the caller takes from the disk model (``vraid.backends.models.disk_preset``): a
    policy does not read disk models itself. None (real disks, an ssd, a modified preset)
    falls back to :data:`CONSERVATIVE`.

    Raises:
        VraidError: when ``params["ct"]`` is present but unreadable.
    """
    if params and params.get("ct") is not None:
        stored = CtLimits.from_params(params["ct"])
        return stored if stored.source else replace(stored, source="superblock")
    if disk_preset is not None and disk_preset in PRESET_LIMITS:
        sr, sw = PRESET_LIMITS[disk_preset]
        return CtLimits(sr_max=sr, sw_max=sw, source=f"preset {disk_preset}: {_MEASURED}")
    return CONSERVATIVE


def build_transform(cls: type, given: dict[str, Any], base: CtLimits) -> Callable:
    """``cls`` built with ``base`` overridden by the limits in ``given`` (the rest of ``given``
    are the class's own parameters); the limits' ``source`` says which keys the spec gave."""
    limit_keys = {f.name for f in fields(CtLimits)} - {"source"}
    values = {k: v for k, v in given.items() if k in limit_keys and v is not None}
    own = {k: v for k, v in given.items() if k not in limit_keys}
    limits = base
    if values:
        limits = replace(base, **values)
        limits = replace(limits, source=f"--ct {','.join(sorted(values))}" + (f"; rest: {base.source}" if base.source else ""))
    return cls(limits, **own)
