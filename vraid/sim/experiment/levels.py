"""Experiment ``levels``: OSTEP ch. 38's RAID comparison table (Figure 38.8) on vraid's simulator.

OSTEP (Arpaci-Dusseau, "Operating Systems: Three Easy Pieces", ch. 38 "Redundant Arrays of
Inexpensive Disks", sec. 38.8, Fig. 38.8) compares the RAID levels in capacity, reliability,
throughput (sequential and random reads and writes) and latency, in units of one disk's
capacity B, sequential bandwidth S, random bandwidth R and request latency T. This experiment
measures the same on the hdd model (``hdd:st373454lc``), with the engine a mount runs, in
virtual time. The book's R is a constant: one disk's rate of small random requests. A drive with
a tagged queue serves more of them per second the more it holds (SPTF), so each member's queue
is capped at ``depth`` (the preset with ``queue_depth=depth``, default 4), the depth R is
measured at: a member that gets more than its share of the requests (RAID-4's parity member)
then serves them at R, as the book assumes, instead of catching up by reordering a deeper queue
(with the preset's own 64-deep queue a RAID-4-like test level's random writes came out at
0.9 R on a quick run instead of the book's R/2; ``--set model=hdd:st373454lc`` runs that). The steps:

1. **one disk**: the baseline level (no check strips, one member: RAID-0 on one disk *is* one
   disk) runs each workload; its MB/s and mean response are S, R and T, each for reads and for
   writes apart (the model reads and writes at different speeds; the book has one S and one R);
2. **each level** of :func:`vraid.core.redundancy.levels` on ``disks`` members (default 6) runs
   the same workloads: one stream of full-stripe reads and writes (each request 4 MiB per
   member), 4 KiB random reads and writes with ``depth`` requests outstanding per member
   (default 4, so every member stays busy, as the book assumes), and one 4 KiB random read or
   write at a time for the latency; no write cache (every write costs its member I/Os at once);
3. capacity comes from the level's geometry and reliability from the scheme's ``reconstruct``
   tried on every set of failed members (:func:`.levels_book.survivable`): nothing to simulate;
4. each value is divided by the one-disk unit and set beside the book's formula evaluated at N
   (:mod:`.levels_book`, which derives the book's reasoning for any scheme), with one verdict
   rule for every row: :func:`vraid.sim.experiment.verdict.judge`, *reproduced* within 25 % of
   the book's value, *direction* further off (all the values are positive, so every other row
   is on the book's side), *not reproduced* where the book says 0 and vraid does not;
5. the small-write cost: member reads and writes per one-block write, from the latency run's
   member counters, beside the book's subtractive count.

A level that refuses ``disks`` members, or a run that fails, keeps its rows with the reason.
The levels come from the registry when the experiment runs: a level registered later gets its
column with no change here. :mod:`.levels_report` writes results.md, levels.png and the
terminal table.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vraid.core import redundancy
from vraid.core.geometry import DEFAULT_STRIP, Geometry
from vraid.errors import VraidError

from .levels_book import ROWS, accepts, dependence, formula, shape, survivable
from .verdict import REPRODUCED, compare, paper_vs_vraid

NAME = "levels"
MODEL = "hdd:st373454lc"
#: bytes each member moves per sequential request (long enough to stream at the media rate)
PER_MEMBER = 4 << 20
#: each member's size: the workloads cover all of it
DISK_SIZE = 1 << 30
SEED = 1
#: (workload kind, host op) of the simulated rows, and which unit divides each
KINDS = ("seq_read", "seq_write", "rand_read", "rand_write", "lat_read", "lat_write")
FULL = {"seq": 40, "rand": 4000, "lat": 1000}
QUICK = {"seq": 10, "rand": 600, "lat": 200}


def describe() -> str:
    return ("OSTEP ch. 38 Fig. 38.8: capacity, reliability, throughput (S, R) and latency (T) of every RAID "
            "level vraid runs, on the hdd model, beside the book's formulas; small-write member I/Os")


def baseline_level() -> int:
    """The level whose one-member array is one disk: no check strips, one member allowed."""
    for level in redundancy.levels():
        scheme = redundancy.for_level(level)
        if not scheme.parity_columns and scheme.min_disks <= 1:
            return level
    raise VraidError("no registered RAID level runs on one member without check strips",
                     "register RAID-0 (vraid.core.redundancy.NoRedundancy): it measures one disk")


def runs(quick: bool, *, disks: int = 6, depth: int = 4, model: str | None = None) -> list[dict[str, Any]]:
    """The one-disk runs, then each level's six runs and its static row ("static": capacity,
    reliability); a level that refuses ``disks`` members gets a static run that says so.
    ``model``: the members' disk model (default: :data:`MODEL` with its queue capped at ``depth``)."""
    from vraid.backends.models import parse_model

    for key, value in (("disks", disks), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise VraidError(f"{key} {value!r} is not a positive whole number", f"e.g. --set {key}=" + ("6" if key == "disks" else "4"))
    model = model or f"{MODEL},queue_depth={depth}"
    parse_model(model)  # a bad model is refused before anything runs (VraidError names it)
    counts = QUICK if quick else FULL
    base = {"depth": depth, "model": model}
    specs = [{"id": f"disk-{k}", "level": baseline_level(), "disks": 1, "kind": k,
              "requests": counts[k.split("_")[0]], **base} for k in KINDS]
    for level in redundancy.levels():
        specs.append({"id": f"raid{level}-static", "level": level, "disks": disks, "kind": "static", **base})
        if accepts(level, disks):
            specs += [{"id": f"raid{level}-{k}", "level": level, "disks": disks, "kind": k,
                       "requests": counts[k.split("_")[0]], **base} for k in KINDS]
    return specs


def workload(g: Geometry, kind: str, depth: int) -> str:
    """The workload spec of a run kind on geometry ``g``."""
    family, op = kind.split("_")
    if family == "seq":
        size = (PER_MEMBER // (g.strip_size * g.depth)) * g.stripe_data_bytes  # (a stripe: depth strips a member)
        return f"sequential:streams=1,size={size},op={op}"
    outstanding = depth * g.ndisks if family == "rand" else 1
    return f"random-{op}:size=4K,outstanding={outstanding}"


def array_geometry(level: int, n: int) -> Geometry:
    """The measured array: ``n`` members of :data:`DISK_SIZE`, 64 KiB strips, the level's default layout."""
    return Geometry.for_disk_size(level=level, ndisks=n, disk_size=DISK_SIZE, strip_size=DEFAULT_STRIP,
                                  layout=redundancy.for_level(level).layouts[0])


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """One run: a simulation (its throughput, response and member counters), or the static row."""
    from vraid.sim.simulator import SimConfig, run_sim

    level, n = spec["level"], spec["disks"]
    if spec["kind"] == "static":
        if not accepts(level, n):
            least = redundancy.for_level(level).min_disks
            return {"not_run": f"RAID-{level} does not run on {n} members (it needs {least} or more, or another "
                               f"count): run with --set disks=N"}
        g = array_geometry(level, n)
        sure, lucky = survivable(level, n)
        return {"capacity": g.capacity / g.member_data_bytes, "reliability_sure": sure,
                "reliability_lucky": lucky}
    g = array_geometry(level, n)
    config = SimConfig(level=level, disks=n, strip=g.strip_size, layout=g.layout, disk_size=DISK_SIZE,
                       disk_model=spec["model"], requests=spec["requests"], seed=SEED, no_data=True,
                       workload=workload(g, spec["kind"], spec["depth"]))
    try:
        m = run_sim(config).metrics
    except VraidError as exc:
        return {"not_run": str(exc)}
    keep = ("throughput_mb_s", "mean_response_ms", "host_reads", "host_writes", "disk_read_requests",
            "disk_write_requests", "virtual_seconds", "mean_seek_ms", "rotation_wait_seconds", "rotation_waits")
    return {k: m[k] for k in keep} | {"workload": config.workload}


# ---------------------------------------------------------------------- collect
#: the one-disk run and metric each row is divided by
UNITS = {"seq_read": ("seq_read", "throughput_mb_s"), "seq_write": ("seq_write", "throughput_mb_s"),
         "rand_read": ("rand_read", "throughput_mb_s"), "rand_write": ("rand_write", "throughput_mb_s"),
         "lat_read": ("lat_read", "mean_response_ms"), "lat_write": ("lat_write", "mean_response_ms")}


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    disk = {spec["kind"]: out for spec, out in results if spec["id"].startswith("disk-")}
    per_level: dict[int, dict[str, Any]] = {}
    disks_of: dict[int, int] = {}
    first = results[0][0] if results else {}
    for spec, out in results:
        if not spec["id"].startswith("disk-"):
            per_level.setdefault(spec["level"], {})[spec["kind"]] = out
            disks_of[spec["level"]] = spec["disks"]
    units = {k: disk.get(run_kind, {}).get(metric) for k, (run_kind, metric) in UNITS.items()}
    levels = []
    comparisons = []
    for level, runs_of in per_level.items():
        n = disks_of[level]
        entry: dict[str, Any] = {"level": level, "title": redundancy.for_level(level).name, "rows": {}}
        static = runs_of.get("static", {})
        if "not_run" in static:
            entry["not_run"] = static["not_run"]
        book_shape = shape(level, n) if "not_run" not in static else None
        for row in ROWS:
            cell: dict[str, Any] = {"formula": formula(level, row, n) if book_shape else "",
                                    "book": float(row.book(book_shape)) if book_shape else None}
            measured, why = _measured(row.key, static, runs_of, units)
            cell["vraid"] = measured
            if measured is None:
                cell["not_run"] = why
            else:
                c = compare(f"{entry['title']} {row.label.lower()}", cell["book"], measured, tolerance=0.25)
                if c.verdict != REPRODUCED:
                    c = replace(c, cause=_cause(row.key, level, n, runs_of.get(row.key, {}), disk.get(row.key, {})))
                cell["verdict"] = c.verdict
                comparisons.append(c)
            entry["rows"][row.key] = cell
        lat = runs_of.get("lat_write", {})
        if book_shape is not None:
            entry["small_write"] = {"book": [book_shape.write_reads, book_shape.write_writes],
                                    "vraid": ([lat["disk_read_requests"] / lat["host_writes"],
                                               lat["disk_write_requests"] / lat["host_writes"]]
                                              if lat.get("host_writes") else None)}
        levels.append(entry)
    return {"disks": next(iter(disks_of.values()), None), "depth": first.get("depth"),
            "model": first.get("model"), "units": units, "one_disk": disk, "levels": levels,
            "runs": {spec["id"]: out for spec, out in results},
            "paper_vs_vraid": paper_vs_vraid(comparisons)}


def _cause(key: str, level: int, n: int, out: dict[str, Any], one: dict[str, Any]) -> str:
    """The cause of a row off the book's value: for a latency row, the run's own counters (a
    request's mean seek and rotational wait) beside the one disk's; else what to examine first
    (:data:`.levels_report.CAUSES`)."""
    from .levels_report import CAUSES

    if key not in ("lat_read", "lat_write") or "mean_seek_ms" not in out or "mean_seek_ms" not in one:
        return CAUSES.get(key, "")
    seek, seek1 = out["mean_seek_ms"], one["mean_seek_ms"]
    rot = 1e3 * out["rotation_wait_seconds"] / max(1, out["rotation_waits"])
    rot1 = 1e3 * one["rotation_wait_seconds"] / max(1, one["rotation_waits"])
    text = (f"measured (the run's counters): a member request's mean seek {seek:.2f} ms against one disk's "
            f"{seek1:.2f} ms, its mean rotational wait {rot:.2f} ms against {rot1:.2f} ms")
    mirrored = any(k >= 0 for k in dependence(level, n)[0])
    if key == "lat_read" and mirrored and seek < 0.8 * seek1:
        text += ("; each read goes to the copy whose head is nearest (vraid/engine/raid/balance.py, as md's "
                 "read_balance), and the nearest of several heads seeks less than one disk's random one: the "
                 "book's T is one disk's random access, whichever copy serves it")
    return text


def _measured(key: str, static: dict[str, Any], runs_of: dict[str, Any],
              units: dict[str, float | None]) -> tuple[float | None, str]:
    """A row's value in its unit, or (None, why it was not measured)."""
    if "not_run" in static:
        return None, static["not_run"]
    if key in static:
        return float(static[key]), ""
    out = runs_of.get(key)
    if out is None or "not_run" in out:
        return None, (out or {}).get("not_run", "no run")
    unit = units.get(key)
    if not unit:
        return None, "the one-disk run that gives its unit did not run"
    metric = UNITS[key][1]
    return out[metric] / unit, ""


from .levels_report import report, summary  # noqa: E402  (the report half lives beside this module)

__all__ = ["NAME", "collect", "describe", "report", "run", "runs", "summary"]
