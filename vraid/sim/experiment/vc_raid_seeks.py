"""The Bonnie random-seek ablation of ``vc-raid`` (seed 002 sec. 4.3.3, Fig. 8b), in virtual time.

The paper finds RAID-5, VC-RAID and RAID-0 "very close" on Bonnie's random seeks: 90 % of the
requests are reads, which VC-RAID passes to the array, and "the 10% follow up write operations
are in place write with no seek time involved". On the mount, bonnie++'s seeks run 1.5x faster
through either log than on RAID-5. Which part of the test makes that gap is measured here, with
bonnie++'s seek test as block I/O (the ``seeks`` workload: 5 processes, 8,192 seeks of 8 KiB
chunks over the bonnie++ file, a share written back in place) on the mount's members (four
``hdd:dnes-318350``, the same strip, RAID levels and log sizes) in the simulator, three times:

* ``none``: no write-back (every seek a read): the arrays differ only in where reads go;
* ``bonnie``: 10 % of the reads written back, as the test does;
* ``cached``: 10 % of the reads *that reach the disks* written back: the write-backs all reach
  the array (as dirty pages), while the reads of the part of the file the page cache holds (the
  memory cap's share of the file, :func:`.vc_raid_bonnie.bonnie_ram`) do not: 0.1 / (1 - cap / file).

The simulator has no page cache, so ``cached`` stands for it by the share alone (vraid's
assumption that the cached part is hit as often as the rest: the seeks are uniform). The
results are deterministic; a report computes them once per setting (:func:`seeks_ablation`).
"""

from __future__ import annotations

import functools
from typing import Any

#: bonnie++ 2.00's seek test as the mount runs it: processes, seeks, chunk
PROCS, SEEKS, CHUNK = 5, 8192, "8K"
#: Bonnie's share of the reads written back (sec. 4.2.2)
UPDATE = 0.1
#: the configurations of the ablation (of :data:`.vc_raid_sim.SIM_CONFIGS`)
CONFIGS = ("raid0", "raid5", "scd", "mcd")


def workload(file_mb: int, update: float) -> str:
    """The ``seeks`` workload spec of one run."""
    return f"seeks:procs={PROCS},seeks={SEEKS},file={int(file_mb)}M,chunk={CHUNK},update={update:g}"


def cached_update(file_mb: int, ram: int | None) -> float:
    """Bonnie's write-back share of the reads that reach the disks, when the page cache holds
    ``ram`` bytes of the ``file_mb`` MiB file (None: no cap, the whole file cached: no read
    reaches the disks, and the share is 1)."""
    held = 1.0 if not ram else min(1.0, ram / (file_mb << 20))
    return round(min(1.0, UPDATE / (1.0 - held)) if held < 1.0 else 1.0, 4)


@functools.lru_cache(maxsize=8)
def seeks_ablation(creates: tuple[tuple[str, tuple[str, ...]], ...], file_mb: int, ram: int | None,
                   disk_model: str) -> dict[str, Any]:
    """Seeks per second of each configuration under the three write-back shares (module docstring):
    ``{"workloads": {case: spec}, "seeks_per_s": {case: {config: n}}, "member_reads" and
    "member_writes": {case: {config: n}}, "small_writes": {case: {config: {"rmw": n, "rcw": n}}}}``
    (parity groups written by read-modify-write and by reconstruct-write). ``creates``: (config,
    its ``vraid create`` arguments) of the configurations the mount ran, of :data:`CONFIGS`."""
    from vraid.sim.simulator import run_sim
    from .vc_raid_sim import sim_config

    cases = {"none": 0.0, "bonnie": UPDATE, "cached": cached_update(file_mb, ram)}
    out: dict[str, Any] = {"workloads": {c: workload(file_mb, u) for c, u in cases.items()},
                           "seeks_per_s": {}, "member_reads": {}, "member_writes": {}, "small_writes": {}}
    for case, update in cases.items():
        for key in ("seeks_per_s", "member_reads", "member_writes", "small_writes"):
            out[key][case] = {}
        for config, create in creates:
            m = run_sim(sim_config(config, list(create), disk_model, workload(file_mb, update), no_data=True)).metrics
            secs = m["virtual_seconds"]
            out["seeks_per_s"][case][config] = round(SEEKS / secs, 1) if secs else None
            out["member_reads"][case][config] = m.get("disk_read_requests")
            out["member_writes"][case][config] = m.get("disk_write_requests")
            # parity groups written by a small write (read-modify-write or reconstruct-write), the
            # array's write cycles (paper 000 sec. II-A) of the write-backs
            out["small_writes"][case][config] = {k: m.get(f"pbg_{k}", 0) for k in ("rmw", "rcw")}
    return out


def from_specs(specs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ablation for the bonnie++ runs among ``specs`` (the settings of the first of them;
    every configuration with a log gives its log size), or None when no spec ran bonnie++ on a
    mount."""
    from .vc_raid_bonnie import bonnie_ram
    from .vc_raid_sim import SIM_CONFIGS, create_arg

    runs = [s for s in specs if "bonnie" in s.get("parts", []) and not s.get("sim")]
    if not runs:
        return None
    first = runs[0]
    # RAID-0 and RAID-5 on the first run's member size (the ablation's baselines, run even where the
    # sweep left them out), the log configurations as their own mounts were created
    creates = {c: ("--disk-size", create_arg(first["create"], "--disk-size")) for c in ("raid0", "raid5")}
    creates |= {s["config"]: tuple(s["create"]) for s in runs if s["config"] in CONFIGS and SIM_CONFIGS[s["config"]][1]}
    mb = int(first["bonnie_mb"])
    ram = bonnie_ram(first.get("ram"), mb)
    return {"bonnie_mb": mb, "ram": ram,
            **seeks_ablation(tuple((c, creates[c]) for c in CONFIGS if c in creates), mb, ram, first["disk_model"])}


__all__ = ["CHUNK", "CONFIGS", "PROCS", "SEEKS", "UPDATE", "cached_update", "from_specs", "seeks_ablation", "workload"]
