"""Disk model presets and the ``--disk-model`` spec language.

Spec grammar (``parse_model``)::

    none                                  no timing model (the plain store)
    hdd                                   the default disk, hdd:st373454lc
    hdd:PRESET                            a preset, e.g. hdd:dnes-318350
    hdd:PRESET,key=value,...              a preset with overrides (hdd:st373454lc,write_cache=on)
    hdd:key=value,...                     the generic 7,200 rpm disk with overrides
    ssd | ssd:key=value,...               the flash model
    PRESET                                a preset name alone (st373454lc, ssd)

Values carry units: times ``8ms``, ``50us``, ``0.5s``; a bare number is in the
key's unit (ms for hdd times, us for ssd times), and a ``_ms``/``_us``/``_s``
suffix on a key sets it (``read_us=50``); sizes ``73G``, ``8M`` (binary units,
:func:`vraid.core.units.parse_size`); rates in MB/s (``96`` or ``96MB/s``); switches
``on``/``off``.

Command queueing is on by default where the drive has a queue: a preset's
``queue_depth`` and ``scheduling`` are the drive's own (the seeds' SCSI/FC drives
queue tagged commands, 16-64 deep; the ATA drives of the era and the generic disk
do not, depth 1), so ``hdd:st373454lc`` takes up to 64 commands and orders them
itself (SPTF). ``tcq=off`` serves one command at a time (the one-command model,
``hdd:st373454lc,tcq=off``); ``queue_depth=N`` sets another depth (N = 1: no queue).

Where the presets come from: the seeds give the figures they cite (see each
``source``); everything else is a datasheet-like plausible value and says so.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from ..errors import VraidError
from vraid.core.units import parse_size
from .base import Store
from .hdd import HddModel
from .hdd_params import HddParams
from .ssd import SsdModel, SsdParams

MS = 1e-3
US = 1e-6

# ---------------------------------------------------------------------- presets
# Seed 000 (Baek & Park, MSC-CT), section I-C: ST373454LC turns at 15,000 rpm (4 ms per
# revolution) and its average write seek is 4.1 ms; section IV-A: "a 74 GB capacity" and
# two Adaptec SCSI320 host adapters. The capacity here, 73.4 GB, is the datasheet's (the
# paper rounds it to 74 GB). Not in the seeds (datasheet-like, plausible for a Cheetah
# 15K.4): read seek 3.6 ms, track-to-track 0.2 ms, full stroke 7.4 ms, 4 heads, 58-96 MB/s
# media, 8 MiB buffer, 0.1 ms command overhead, tagged command queueing of 64 commands
# ordered by positioning time (SPTF; on by default, tcq=off turns it off). Seed 000 section I-C: its stride benchmark keeps
# "from 32 to 64 outstanding I/Os" and the disks use write-on-arrival (write cache off).
# Read-ahead is off: seed 000 section I-C says the disks of its Fig. 9(a) and 9(d) do not
# read ahead to the end of the track, and section IV-F identifies Fig. 9(a) as ST373454LC.
_ST373454LC = HddParams(
    name="st373454lc", drive="Seagate Cheetah 15K.4 ST373454LC (Ultra320 SCSI)",
    rpm=15000, capacity=73_400_000_000, heads=4, zones=8, rate_outer=96.0, rate_inner=58.0,
    avg_seek=3.6 * MS, avg_write_seek=4.1 * MS, track_seek=0.2 * MS, full_seek=7.4 * MS,
    head_switch=0.2 * MS, overhead=0.1 * MS, bus_rate=320.0, cache_size=8 << 20, segments=16,
    read_ahead="off", queue_depth=64, scheduling="sptf",
    source="paper 000 I-C (rpm, 4.1 ms write seek, write-on-arrival, 32-64 outstanding), IV-A (74 GB); "
           "rest datasheet-like",
)
# Seed 003 (Nam & Park), section 4: eight 7,200 rpm 9 GB Seagate Barracuda ST39175FC on
# Fibre Channel. All other figures are datasheet-like plausible values (Barracuda 9LP),
# among them tagged command queueing of 64 commands ordered by positioning time (on by
# default).
_ST39175FC = HddParams(
    name="st39175fc", drive="Seagate Barracuda 9LP ST39175FC (Fibre Channel)",
    rpm=7200, capacity=9_100_000_000, heads=6, zones=8, rate_outer=21.0, rate_inner=13.5,
    avg_seek=7.1 * MS, avg_write_seek=7.9 * MS, track_seek=0.8 * MS, full_seek=16.0 * MS,
    head_switch=0.8 * MS, overhead=0.2 * MS, bus_rate=100.0, cache_size=1 << 20, segments=8,
    read_ahead="track", queue_depth=64, scheduling="sptf",
    source="paper 003 s.4 (7,200 rpm, 9 GB); rest datasheet-like",
)


def _table1(name: str, drive: str, capacity: int, cache: int, rpm: int, rates: tuple[float, float],
            seek_ms: float, bus: float, heads: int, overhead_ms: float, track_ms: float,
            depth: int = 1, scheduling: str = "sptf") -> HddParams:
    """A disk of seed 002 (He & Yang, VC-RAID) Table 1: capacity, buffer, rpm, media
    rate(s) and average seek from the table; heads, zones, track-to-track and full
    seek, head switch, command overhead, the bus and the command queue are plausible
    values for the interface and era (SCSI disks queue tagged commands, the ATA disks
    of the table none; the queue is on by default, ``tcq=off`` turns it off). Where the table gives one media rate it is taken as the outer
    zone and the inner zone is assumed to run at 60 % of it. The table gives no write
    seek, so writes seek like reads."""
    return HddParams(
        name=name, drive=drive, rpm=rpm, capacity=capacity, heads=heads, zones=8,
        rate_outer=rates[1], rate_inner=rates[0], avg_seek=seek_ms * MS, avg_write_seek=None,
        track_seek=track_ms * MS, full_seek=2.1 * seek_ms * MS, head_switch=track_ms * MS,
        overhead=overhead_ms * MS, bus_rate=bus, cache_size=cache, segments=min(8, max(2, cache // (64 << 10))),
        read_ahead="track", queue_depth=depth, scheduling=scheduling,
        source="paper 002 Table 1 (capacity, buffer, rpm, rate, seek); rest plausible",
    )


PRESETS: dict[str, HddParams | SsdParams] = {
    p.name: p
    for p in (
        _ST373454LC,
        _ST39175FC,
        _table1("dnes-318350", "IBM Ultrastar 18ES DNES-318350 (Ultra SCSI)", 18_200_000_000, 2 << 20, 7200,
                (12.7, 20.2), 7.0, 40.0, 10, 0.2, 0.8, 32),
        _table1("dnes-309170", "IBM Ultrastar 18ES DNES-309170 (Ultra SCSI)", 9_100_000_000, 2 << 20, 7200,
                (12.7, 20.2), 7.0, 40.0, 5, 0.2, 0.8, 32),
        _table1("91366u4", "Maxtor 91366U4 (ATA-5)", 13_600_000_000, 2 << 20, 7200,
                (0.6 * 33.7, 33.7), 9.0, 66.7, 4, 0.2, 1.0),
        # 5,400 rpm disks; the table's latencies (5.54-5.56 ms) are half a revolution.
        _table1("91020d6", "Maxtor 91020D6 (ATA-4, 5,400 rpm)", 10_200_000_000, 256 << 10, 5400,
                (0.6 * 18.6, 18.6), 9.0, 33.3, 6, 0.3, 1.2),
        _table1("st52160n", "Seagate Medalist ST52160N (Ultra SCSI, 5,400 rpm)", 2_100_000_000, 128 << 10, 5400,
                (6.0, 10.0), 11.0, 20.0, 4, 0.5, 1.5, 16, "clook"),
        _table1("st32151n", "Seagate Hawk 2XL ST32151N (SCSI-2, 5,400 rpm)", 2_100_000_000, 256 << 10, 5400,
                (6.0, 10.0), 10.4, 10.0, 8, 0.5, 1.5, 16, "clook"),
        # Not in the seeds: a plausible SATA flash disk for contrast.
        SsdParams(source="plausible values (no seed models flash)"),
    )
}
DEFAULT_HDD = "st373454lc"

# ---------------------------------------------------------------------- spec keys
_TIME_UNITS = {"s": 1.0, "ms": MS, "us": US, "µs": US, "ns": 1e-9}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TIME = re.compile(rf"^\s*({_NUMBER})\s*(s|ms|us|µs|ns)?\s*$")
_RATE = re.compile(rf"^\s*({_NUMBER})\s*(?:MB/s)?\s*$", re.IGNORECASE)
_ON = {"on": True, "yes": True, "true": True, "1": True, "off": False, "no": False, "false": False, "0": False}


@dataclass(frozen=True)
class _Key:
    field: str
    kind: str  # time | rate | size | int | float | bool | choice
    help: str
    choices: tuple[str, ...] = ()


_HDD_KEYS: dict[str, _Key] = {
    "rpm": _Key("rpm", "float", "spindle speed, revolutions per minute"),
    "capacity": _Key("capacity", "size", "datasheet capacity (used with stroke=partition)"),
    "heads": _Key("heads", "int", "recording surfaces"),
    "zones": _Key("zones", "int", "recording zones"),
    "rate_outer": _Key("rate_outer", "rate", "media rate of the outer zone, MB/s"),
    "rate_inner": _Key("rate_inner", "rate", "media rate of the inner zone, MB/s"),
    "avg_seek": _Key("avg_seek", "time", "average (read) seek over random requests"),
    "write_seek": _Key("avg_write_seek", "time", "average write seek (default: avg_seek)"),
    "track_seek": _Key("track_seek", "time", "single-cylinder seek, also the cylinder switch"),
    "full_seek": _Key("full_seek", "time", "full-stroke seek (default 2.1 x avg_seek)"),
    "head_switch": _Key("head_switch", "time", "switch to another surface of the cylinder"),
    "overhead": _Key("overhead", "time", "command processing per request"),
    "bus": _Key("bus_rate", "rate", "interface rate, MB/s"),
    "bus_serial": _Key("bus_serial", "bool", "the bus moves one command's data at a time (on), or every "
                       "command's transfer overlaps the others' (off, the default)"),
    "cache": _Key("cache_size", "size", "on-board buffer"),
    "segments": _Key("segments", "int", "buffer segments"),
    "read_ahead": _Key("read_ahead", "choice", "read-ahead after a read", ("off", "track", "segment")),
    "write_cache": _Key("write_cache", "bool", "write-back buffer (on) or write-on-arrival (off)"),
    "stroke": _Key("stroke", "choice", "member spread over all cylinders, or the start of the disk",
                   ("full", "partition")),
    "tcq": _Key("tcq", "bool", "tagged command queueing at the preset's native depth (default on; "
                "off: one command at a time)"),
    "queue_depth": _Key("queue_depth", "int", "tagged command queueing: commands the drive takes at once "
                        "(1: none; more than 1 turns tcq on)"),
    "scheduling": _Key("scheduling", "choice", "the drive's order for its queue: shortest positioning time "
                       "first, or ascending LBA", ("sptf", "clook")),
}
_SSD_KEYS: dict[str, _Key] = {
    "read": _Key("read", "time", "page read latency"),
    "program": _Key("program", "time", "page program latency"),
    "channels": _Key("channels", "int", "flash channels working in parallel"),
    "overhead": _Key("overhead", "time", "command processing per request"),
    "page": _Key("page_size", "size", "flash page"),
    "bus": _Key("bus_rate", "rate", "interface rate, MB/s"),
}
_ALIASES = {
    "hdd": {"seek": "avg_seek", "avg_write_seek": "write_seek", "bus_rate": "bus", "cache_size": "cache",
            "depth": "queue_depth", "sched": "scheduling"},
    "ssd": {"write": "program", "page_size": "page", "bus_rate": "bus"},
}
_DEFAULT_TIME_UNIT = {"hdd": ("ms", MS), "ssd": ("us", US)}


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--disk-model``: ``kind`` is "none", "hdd" or "ssd"."""

    kind: str
    params: HddParams | SsdParams | None = None
    preset: str | None = None
    overrides: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        """The canonical spelling (parses back to an equal spec)."""
        if self.kind == "none":
            return "none"
        parts = [self.preset] if self.preset and self.preset != self.kind else []
        parts += [f"{k}={v}" for k, v in self.overrides]
        return f"{self.kind}:{','.join(parts)}" if parts else self.kind

    def __str__(self) -> str:
        return self.text

    def wrap(self, store: Store, clock) -> Store:
        if self.kind == "hdd":
            assert isinstance(self.params, HddParams)
            return HddModel(store, clock, self.params)
        if self.kind == "ssd":
            assert isinstance(self.params, SsdParams)
            return SsdModel(store, clock, self.params)
        return store


def _hint_keys(kind: str) -> str:
    keys = _HDD_KEYS if kind == "hdd" else _SSD_KEYS
    presets = [n for n, p in PRESETS.items() if isinstance(p, HddParams if kind == "hdd" else SsdParams)]
    return f"valid {kind} keys: {', '.join(keys)}; {kind} presets: {', '.join(presets)} (see `vraid models`)"


def _convert(kind: str, key: str, spec: _Key, value: str, unit: tuple[str, float] | None) -> Any:
    def bad(what: str) -> VraidError:
        return VraidError(f"disk model key {key!r}: {value!r} is not {what}", _hint_keys(kind))

    if spec.kind == "time":
        m = _TIME.match(value)
        if not m:
            raise bad("a time such as 8ms or 50us")
        scale = _TIME_UNITS[m.group(2)] if m.group(2) else (unit or _DEFAULT_TIME_UNIT[kind])[1]
        out: Any = float(m.group(1)) * scale
    elif spec.kind == "rate":
        m = _RATE.match(value)
        if not m:
            raise bad("a rate in MB/s such as 96 or 96MB/s")
        out = float(m.group(1))
    elif spec.kind == "size":
        try:
            out = parse_size(value, f"disk model key {key!r}")
        except VraidError as exc:
            raise bad("a size such as 73G or 8M") from exc
    elif spec.kind == "int":
        if not re.fullmatch(r"\s*\d+\s*", value):
            raise bad("a whole number")
        out = int(value)
    elif spec.kind == "float":
        try:
            out = float(value)
        except ValueError:
            raise bad("a number") from None
    elif spec.kind == "bool":
        if value.lower() not in _ON:
            raise bad("on or off")
        out = _ON[value.lower()]
    else:
        v = {"on": "track"}.get(value.lower(), value.lower()) if key == "read_ahead" else value.lower()
        if v not in spec.choices:
            raise bad("one of " + ", ".join(spec.choices))
        out = v
    if spec.kind in ("rate", "float") and not out > 0:
        raise bad("positive")
    if spec.kind in ("int", "size") and out < (0 if spec.field == "cache_size" else 1):
        raise bad("at least 1")
    return out


def _check(kind: str, p: HddParams | SsdParams) -> None:
    problems: list[str] = []
    if isinstance(p, HddParams):
        if p.rate_inner > p.rate_outer:
            problems.append(f"rate_inner ({p.rate_inner:g}) is above rate_outer ({p.rate_outer:g})")
        if p.track_seek > p.avg_seek:
            problems.append("track_seek is longer than avg_seek")
        if p.full_seek is not None and p.full_seek < p.avg_seek:
            problems.append("full_seek is shorter than avg_seek")
        if p.avg_write_seek is not None and p.avg_write_seek < p.avg_seek:
            problems.append("write_seek is shorter than avg_seek (writes settle longer than reads)")
        if p.avg_seek <= 0:
            problems.append("avg_seek must be positive")
    elif p.read <= 0 and p.program <= 0:
        problems.append("read and program latencies are both zero")
    if problems:
        raise VraidError(f"disk model {p.name!r}: " + "; ".join(problems), _hint_keys(kind))


def parse_model(spec: str | None) -> ModelSpec:
    """Parse a ``--disk-model`` spec (see the module docstring).

    Raises:
        VraidError: naming the unknown model, preset or key, or the bad value,
            with a hint listing the valid keys and presets.
    """
    text = (spec or "none").strip()
    if text.lower() in ("none", "off", ""):
        return ModelSpec("none")
    head, _, rest = text.partition(":" if ":" in text else ",")
    head = head.strip().lower()
    items = [s.strip() for s in rest.split(",")] if rest else []
    preset: str | None
    if head in ("hdd", "ssd"):
        kind, preset = head, None
        if items and "=" not in items[0]:
            preset = items.pop(0).lower()
            p0 = PRESETS.get(preset)
            if p0 is None or (kind == "hdd") != isinstance(p0, HddParams):
                raise VraidError(f"unknown {kind} preset {preset!r}", _hint_keys(kind))
    elif head in PRESETS:  # a bare preset name: st373454lc
        kind = "ssd" if isinstance(PRESETS[head], SsdParams) else "hdd"
        preset = head
    else:
        raise VraidError(
            f"unknown disk model {head!r}",
            "write none, hdd[:PRESET][,key=value...], ssd[:key=value...] or a preset name; presets: "
            + ", ".join(PRESETS),
        )
    if preset is None:
        preset = DEFAULT_HDD if kind == "hdd" and not items else ("ssd" if kind == "ssd" else None)
    params: HddParams | SsdParams = PRESETS[preset] if preset else HddParams()
    keys = _HDD_KEYS if kind == "hdd" else _SSD_KEYS
    changes: dict[str, Any] = {}
    overrides: list[tuple[str, str]] = []
    for item in items:
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        value = value.strip()
        if not eq:
            raise VraidError(f"disk model item {item!r} is not key=value", _hint_keys(kind))
        unit = None
        base = _ALIASES[kind].get(key, key)
        if base not in keys:
            for suffix in ("_ms", "_us", "_ns", "_s"):
                stem = _ALIASES[kind].get(key[: -len(suffix)], key[: -len(suffix)])
                if key.endswith(suffix) and stem in keys and keys[stem].kind == "time":
                    base, unit = stem, (suffix[1:], _TIME_UNITS[suffix[1:]])
                    break
            else:
                raise VraidError(f"unknown {kind} model key {key!r}", _hint_keys(kind))
        changes[keys[base].field] = _convert(kind, key, keys[base], value, unit)
        overrides.append((key, value))
    if "queue_depth" in changes and "tcq" not in changes:  # queue_depth=N asks for a queue of N
        changes["tcq"] = changes["queue_depth"] > 1
    if changes:
        params = dataclasses.replace(params, **changes)
    if (isinstance(params, HddParams) and changes.get("tcq") and params.queue_depth <= 1
            and "queue_depth" not in changes):
        raise VraidError(f"disk model {params.name!r} does not queue commands (native queue depth 1): tcq=on "
                         "has nothing to turn on", "give the depth to model: queue_depth=N")
    _check(kind, params)
    return ModelSpec(kind, params, preset, tuple(overrides))


def wrap(store: Store, spec: str | ModelSpec | None, clock) -> Store:
    """``store`` behind the timing model ``spec`` (unchanged for ``none``)."""
    ms = spec if isinstance(spec, ModelSpec) else parse_model(spec)
    return ms.wrap(store, clock)


def disk_preset(spec: str | ModelSpec | None) -> str | None:
    """The preset a ``--disk-model`` spec names when the disk is that preset unchanged, else None.

    Only ``stroke`` may be overridden: it places the member on the disk, it does not make
    another disk; ``tcq``/``queue_depth`` may be given when they leave the drive's queue as
    the preset has it (``tcq=on``, the default; ``tcq=off`` on a drive that queues makes a
    one-command disk with other limits). ``hdd:st373454lc`` and
    ``hdd:st373454lc,stroke=partition`` are ``"st373454lc"``; ``hdd:rpm=5400``,
    ``hdd:st373454lc,write_cache=on``, ``hdd:st373454lc,tcq=off`` and ``none`` are None. Per-preset measurements (the CT limits of ``vraid.policies.ct``) are looked up by
    this name; the caller hands it to the policy, so policies never import a backend.
    Never raises: a spec that does not parse names no preset.
    """
    try:
        ms = spec if isinstance(spec, ModelSpec) else parse_model(spec)
    except VraidError:
        return None
    if ms.kind == "none" or ms.params is None or not ms.preset:
        return None
    base = PRESETS.get(ms.preset)
    if any(key not in ("stroke", "tcq", "queue_depth", "depth") for key, _ in ms.overrides):
        return None
    if isinstance(base, HddParams) and _effective_depth(ms.params) != _effective_depth(base):
        return None
    return ms.params.name


def _effective_depth(p: HddParams | SsdParams) -> int:
    """Commands the drive takes at once: its queue depth with tcq on, else 1."""
    return max(1, p.queue_depth) if isinstance(p, HddParams) and p.tcq else 1


# ---------------------------------------------------------------------- listing
def describe_presets() -> list[dict[str, Any]]:
    """One dict per preset, for ``vraid models`` (and its ``--json``)."""
    out: list[dict[str, Any]] = []
    for name, p in PRESETS.items():
        if isinstance(p, HddParams):
            ws = p.avg_write_seek if p.avg_write_seek is not None else p.avg_seek
            out.append({
                "name": name, "kind": "hdd", "spec": f"hdd:{name}", "drive": p.drive,
                "rpm": p.rpm, "revolution_ms": round(60_000 / p.rpm, 3), "capacity": p.capacity,
                "avg_seek_ms": round(p.avg_seek / MS, 3), "write_seek_ms": round(ws / MS, 3),
                "media_mb_s": [p.rate_inner, p.rate_outer], "bus_mb_s": p.bus_rate,
                "cache": p.cache_size, "read_ahead": p.read_ahead,
                "write_cache": "on" if p.write_cache else "off",
                "queue_depth": p.queue_depth, "scheduling": p.scheduling,
                "tcq": "on" if _effective_depth(p) > 1 else "off", "source": p.source,
            })
        else:
            out.append({
                "name": name, "kind": "ssd", "spec": "ssd", "drive": p.drive, "page": p.page_size,
                "read_us": round(p.read / US, 3), "program_us": round(p.program / US, 3),
                "channels": p.channels, "bus_mb_s": p.bus_rate, "source": p.source,
            })
    return out
