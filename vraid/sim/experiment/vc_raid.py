"""Experiment ``vc-raid``: seed 002 (He & Yang, VC-RAID) Table 2 and Fig. 7, on a real mount.

The paper (sec. 4): four 7,200 rpm SCSI disks (IBM DNES-318350/309170) form RAID-0, RAID-5
(Linux md) or VC-RAID, a RAID-5 with a 4 MB RAM buffer and a 200 MB cache disk (scd: one
5,400 rpm IDE disk; mcd: two partitions, one on each IDE disk); ext2 on top, Linux 2.0.36,
64 MB of RAM. Table 2: PostMark TPS, small / medium / large (1000 / 50000, 20000 / 50000,
20000 / 100000 files / transactions, 1 KB blocks). Fig. 7: user response time of ``tar xf``,
``cp -r`` and ``rm -rf`` of a 122 MB tree, synchronous and asynchronous mode.

vraid runs the same on this machine, for real (:mod:`.vc_raid_mount`): ``vraid create`` with
the arguments of :data:`CONFIGS`, ``vraid mount --disk-model hdd:dnes-318350 --time
real:F`` (every member, and the cache disks, behind the hdd timing model, time scaled by F),
a loop device, ext4, then the parts of :data:`PARTS`: PostMark on ext4 as mounted by default,
each configuration ``repeats`` times, round by round, each round on an array of its own (median
and range in the report); bonnie++'s block write
and random seeks (sec. 4.3.3, Fig. 8, :mod:`.vc_raid_bonnie`); untar / copy / remove with ext4
as mounted by default under the memory cap (asynchronous mode) and remounted ``-o sync`` (the
synchronous mode). After each part the log disk's counters and the array's write cycles (parity
groups written full-stripe, by read-modify-write, by reconstruct-write) are read from ``vraid
status --json``. ``scd-fill`` is vraid's ablation: scd with a log small enough to fill during PostMark;
``raid0-floor`` and ``raid5-floor`` are the floor ablation: RAID-0 and RAID-5 mounted with ``--time
none`` (no disk time: what a PostMark transaction costs in the mount itself, FUSE, the loop
device and the daemon), PostMark only, so that the disks' share of each transaction can be set
apart from the mount's (:func:`.vc_raid_rows.floor_cause`).
The configurations run one after another (``SERIAL``): they share the machine's two cores and
must not disturb each other. A configuration this vraid cannot create is reported "not
available", with the reason.

Options (``--set KEY=VALUE``): ``time_scale`` (F), ``disk_size``, ``configs`` (a list of
:data:`CONFIGS` names), ``postmark`` ({"small": [files, transactions], ...}), ``repeats``
(PostMark runs per configuration, default 5), ``bonnie_mb`` (bonnie++'s file, MiB; 100 as the
paper, 64 quick), ``tree`` ("quick", "full" or "paper": the paper's 952 directories, 12,322
files and 122 MB, synthesized, :mod:`.vc_raid_tree`; the paper size's), ``ram`` (the memory cap
of PostMark, bonnie++ and the asynchronous programs, "34M"; "none": no cap), ``work`` (directory for the member files,
default a new one in /dev/shm, or /var/tmp), ``sim`` (true: the PostMark-like workload in the
simulator instead, :mod:`.vc_raid_sim`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from vraid.core.units import parse_size
from . import vc_raid_report as rep
from .vc_raid_bonnie import bonnie_ram
from .vc_raid_postmark import settings as postmark_settings

NAME = "vc-raid"
#: run the configurations one after another, never in parallel (real time, shared CPUs)
SERIAL = True
#: the paper's array disks (Table 1); the mount gives every member and cache disk this model
DISK_MODEL = "hdd:dnes-318350"
DISKS = 4
STRIP = "64K"
#: configuration name -> ``vraid create`` arguments besides DIR, --disks, --disk-size, --strip
CONFIGS: dict[str, tuple[str, ...]] = {
    "raid0": ("--level", "0"),
    "raid5": ("--level", "5"),
    # the paper's cache disk is 200 MB (sec. 4.1): scd one log of 200M, mcd two of 100M. vraid's log
    # spends a whole 64 KiB segment slot on every fsync however few blocks it carries, so a log
    # of vraid's default 16M fills under a synchronous workload and every fsync then waits for
    # a level-2 destage in the foreground (docs/experiments.md, vc-raid)
    "scd": ("--level", "5", "--log", "scd", "--log-size", "200M"),
    "mcd": ("--level", "5", "--log", "mcd:2", "--log-size", "100M"),
    # the log-fill ablation of the scd-versus-RAID-0 row: scd with a log of 4M (64 segments of
    # 64 KiB), which PostMark's writeback fills, so that level-2 destages run during the
    # benchmark and level-1 destages wait for them (the log's counters show it)
    "scd-fill": ("--level", "5", "--log", "scd", "--log-size", "4M"),
    # the floor ablation of the RAID-5-versus-RAID-0 rows: the same arrays with no disk time
    # (``--time none``, :data:`NO_DISK_TIME`): a transaction's time there is the mount's own
    "raid0-floor": ("--level", "0"),
    "raid5-floor": ("--level", "5"),
}
#: the configurations mounted with ``--time none`` (the model's time ignored: the mount's floor)
NO_DISK_TIME = ("raid0-floor", "raid5-floor")
#: the configurations of the paper (all a ``sim`` run makes); the others are vraid's ablations, which a
#: mount run makes too
PAPER_CONFIGS = ("raid0", "raid5", "scd", "mcd")
#: the parts of one configuration's run, in order
PARTS = ("postmark", "bonnie", "async", "sync")
#: configuration -> its parts where not all of them (the ablation needs PostMark only)
CONFIG_PARTS: dict[str, tuple[str, ...]] = {"scd-fill": ("postmark",), "raid0-floor": ("postmark",),
                                            "raid5-floor": ("postmark",)}
#: the id suffix of a configuration's run of its parts besides PostMark (bonnie++, Fig. 8; the
#: untar / copy / remove of Fig. 7)
FILES_RUN = "fig7-8"
#: PostMark runs each configuration this many times (the table shows the median and the range)
REPEATS = 5
#: the time scale (``--time real:F``): every modelled disk time runs at F of its length. Not
#: smaller: the mount's own cost per request (FUSE, loop, the daemon's Python; more when the
#: machine is shared) is a floor under every run, and the RAID's differences show only while
#: the modelled disk time stays well above it (docs/experiments.md, vc-raid)
TIME_SCALE = 0.5
#: PostMark's memory cap (:class:`~.vc_raid_bench.MemoryCap`): the paper's 34 MB of file cache; the
#: quick run's pools are a tenth of the paper's, and so is its cap, but not under 8 MB
#: (PostMark, ext4's metadata and the cgroup's own share)
FULL = {"disk_size": "256M", "tree": "full", "ram": "34M", "bonnie_mb": 100}
QUICK = {"disk_size": "128M", "tree": "quick", "ram": "8M", "bonnie_mb": 64}
NOT_AVAILABLE = "not available"


def describe() -> str:
    return ("paper 002 Table 2 / Fig. 7 on a real mount: PostMark TPS and untar/copy/remove times on ext4 over "
            "RAID-0, RAID-5, VC-RAID scd and mcd (4 x hdd:dnes-318350, scaled real time), bonnie++; ablations "
            "scd-fill (a log PostMark fills) and raid0-floor, raid5-floor (no disk time: the mount's floor)")


def create_args(config: str, disk_size: str) -> list[str]:
    """The full ``vraid create`` argument list (after DIR) of configuration ``config``."""
    return [*CONFIGS[config], "--disks", str(DISKS), "--disk-size", disk_size, "--strip", STRIP]


def runs(quick: bool, *, time_scale: float = TIME_SCALE, disk_size: str | None = None,
         configs: list[str] | None = None, postmark: dict[str, list[int]] | None = None,
         tree: str | None = None, work: str | None = None, disk_model: str = DISK_MODEL,
         ram: str | None = None, sim: bool = False, repeats: int = REPEATS,
         bonnie_mb: int | None = None) -> list[dict[str, Any]]:
    """The runs of the configurations (the paper's four, the log-fill and the floor ablations), each
    a whole mount session of its own: PostMark's three sizes once per round (``repeats`` rounds,
    ids ``CONFIG-rN``), and once per configuration its other parts (``CONFIG-fig7-8``: bonnie++,
    untar / copy / remove); in the order round 1, the other parts, rounds 2 and on. A ``sim``
    run: one per configuration, id ``CONFIG``."""
    from vraid.errors import VraidError

    base = QUICK if quick else FULL
    names = configs or (list(PAPER_CONFIGS) if sim else list(CONFIGS))
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        raise VraidError(f"unknown vc-raid configuration {unknown}", f"choose from {', '.join(CONFIGS)}")
    size = disk_size or base["disk_size"]
    parse_size(size, "disk size")
    ram = base["ram"] if ram is None else ram
    ram_bytes = parse_size(str(ram), "PostMark memory cap") if ram not in ("", "none", 0) else None
    if not (isinstance(repeats, int) and repeats >= 1):
        raise VraidError(f"repeats {repeats!r} is not a whole number of at least 1", "e.g. --set repeats=5")
    bonnie = int(bonnie_mb if bonnie_mb is not None else base["bonnie_mb"])
    if bonnie < 2:
        raise VraidError(f"bonnie_mb {bonnie} is too small", "give the bonnie++ file size in MiB, e.g. --set bonnie_mb=64")
    if not time_scale > 0:
        raise VraidError(f"time_scale {time_scale} is not positive", "e.g. --set time_scale=0.1")
    from .vc_raid_bench import check_tree

    tree = check_tree(tree or base["tree"])
    pm = [s.as_json() for s in postmark_settings(quick, {k: tuple(v) for k, v in postmark.items()} if postmark else None)]

    def common(name: str) -> dict[str, Any]:
        return {"config": name, "create": create_args(name, size), "disk_model": disk_model,
                "time_scale": float(time_scale), "ram": ram_bytes, "work": work, "sim": bool(sim),
                **({"no_disk_time": True} if name in NO_DISK_TIME else {})}

    def parts_of(name: str) -> list[str]:
        return list(CONFIG_PARTS.get(name, PARTS))

    if sim:  # a simulated run is deterministic: once per configuration
        return [{"id": name, **common(name), "postmark": pm, "tree": tree, "bonnie_mb": bonnie, "parts": parts_of(name)}
                for name in names]
    # a mount run: PostMark round by round, every configuration once a round on an array of its own,
    # so that a change in the machine's load falls on every one alike and an interrupted sweep
    # resumes at the round it was in; the other parts (bonnie++, untar / copy / remove) once per
    # configuration, a run of their own. A spec holds only what its run uses (a round no tree, no
    # ``repeats``): the same sweep with more repeats, or another tree, keeps the runs it still needs
    rounds = {r: [{"id": f"{name}-r{r}", **common(name), "round": r, "postmark": pm, "parts": ["postmark"]}
                  for name in names if "postmark" in parts_of(name)] for r in range(1, repeats + 1)}
    files = [{"id": f"{name}-{FILES_RUN}", **common(name), "tree": tree, "bonnie_mb": bonnie,
              "parts": [p for p in parts_of(name) if p != "postmark"]}
             for name in names if any(p != "postmark" for p in parts_of(name))]
    # round 1 and the once-only parts first: every row of the report has its data before the
    # later rounds add their ranges
    return rounds[1] + files + [s for r in range(2, repeats + 1) for s in rounds[r]]


def _log(text: str) -> None:
    print(f"vc-raid: {text}", file=sys.stderr, flush=True)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """One run of a configuration: build the rig, then the spec's parts (:data:`PARTS`): PostMark x3
    (once: the spec's ``round``); bonnie++; untar/copy/remove with ext4 as mounted by default (asynchronous) and
    remounted ``-o sync``; the log's counters after each part; tear down."""
    from .vc_raid_bench import make_tree_tar, run_postmark, untar_copy_remove
    from .vc_raid_bonnie import run_bonnie
    from .vc_raid_mount import Rig, Unavailable, check_tools, session
    from .vc_raid_postmark import Setting

    if spec.get("sim"):
        from .vc_raid_sim import run_sim_config

        return run_sim_config(spec)
    check_tools()
    parent = Path(spec["work"]) if spec.get("work") else default_work()
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"vraid-vc-{spec['config']}-", dir=parent))
    rig = Rig(work, disk_model=spec["disk_model"], time_scale=0.0 if spec.get("no_disk_time") else spec["time_scale"],
              log=_log)
    import os

    parts = spec.get("parts", list(PARTS))
    out: dict[str, Any] = {"config": spec["config"], "create": spec["create"], "available": True,
                           "loadavg_start": round(os.getloadavg()[0], 2), "parts": parts}
    with session(rig, work, out):
        if "async" in parts or "sync" in parts:
            tree = make_tree_tar(work / "tree.tar", spec["tree"])
            out["tree"] = tree
        try:
            rig.open(spec["create"])
        except Unavailable as exc:
            _log(f"{spec['config']}: {exc}")
            return {**out, "available": False, "reason": str(exc)}
        out["log"], out["cycles"] = {}, {}

        def snapshot(part: str) -> None:
            """The log's and the array's counters after ``part``, from one ``vraid status``."""
            st = rig.status()
            out["log"][part], out["cycles"][part] = rig.log_status(st), rig.cycle_status(st)

        snapshot("start")
        if "postmark" in parts:
            out["postmark"] = {s["name"]: [] for s in spec["postmark"]}
            out["log"]["postmark"] = []
            st = None  # each size's status, the last one the part's end
            # one round (``round``); a spec without one (an older store's) ran all its repeats on one mount
            rounds = [int(spec["round"]) - 1] if "round" in spec else range(int(spec.get("repeats", 1)))
            for rep in rounds:
                for s in spec["postmark"]:
                    setting = Setting(s["name"], s["files"], s["transactions"], s["block"])
                    one = run_postmark(setting, rig.ext4 / f"pm-{setting.name}-{rep}", work, ram=spec.get("ram"))
                    out["postmark"][setting.name].append(one)
                    st = rig.status()
                    out["log"]["postmark"].append(rig.log_status(st))
                    _log(f"{spec['config']}: postmark {setting.name} #{rep + 1} ({setting.files} files, "
                         f"{setting.transactions} transactions): {one['tps']} TPS")
            out["cycles"]["postmark"] = rig.cycle_status(st)
        if "bonnie" in parts:
            mb = int(spec["bonnie_mb"])
            _log(f"{spec['config']}: bonnie++ -s {mb}")
            out["bonnie"] = _part(lambda: run_bonnie(rig.ext4 / "bonnie", mb, ram=bonnie_ram(spec.get("ram"), mb)))
            snapshot("bonnie")
            _log(f"{spec['config']}: bonnie++ {out['bonnie']}")
        if "async" in parts:
            _log(f"{spec['config']}: untar/copy/remove of {tree['files']} files, ext4 async, memory cap")
            out["async"] = _part(lambda: untar_copy_remove(work / "tree.tar", rig.ext4, sync_after=False,
                                                           ram=spec.get("ram"), settle=True))
            snapshot("async")
            _log(f"{spec['config']}: {out['async']}")
        if "sync" in parts:
            rig.remount("sync")
            _log(f"{spec['config']}: untar/copy/remove of {tree['files']} files, ext4 -o sync")
            out["sync"] = _part(lambda: untar_copy_remove(work / "tree.tar", rig.ext4, sync_after=False))
            snapshot("sync")
            _log(f"{spec['config']}: {out['sync']}")
        out["loadavg_end"] = round(os.getloadavg()[0], 2)
        return out


def _part(job) -> dict[str, Any]:
    """One part's result, or ``{"error": ...}`` when its program failed (the run goes on to the next part)."""
    from vraid.errors import VraidError

    try:
        return job()
    except VraidError as exc:
        _log(f"part failed: {exc}")
        return {"error": str(exc).strip()[-400:]}


def default_work() -> Path:
    """Where the member files go: /dev/shm (tmpfs) when it has room, so that each ext4 sync's
    fsync of the members costs no real disk time on top of the model's; else /var/tmp."""
    import shutil

    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and shutil.disk_usage(shm).free > 4 << 30:
            return shm
    except OSError:
        pass
    return Path("/var/tmp")


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """results.json (:func:`.vc_raid_collect.collect`)."""
    from .vc_raid_collect import collect as gather

    return gather(results)


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """detail.json: every run's PostMark reports, bonnie++, phase times, log counters, tree, and why a
    configuration was not available."""
    return {"detail.json": {"disk_model": results[0][0]["disk_model"] if results else DISK_MODEL,
                            "time_scale": results[0][0]["time_scale"] if results else TIME_SCALE,
                            "runs": [{"spec": s, **o} for s, o in results]}}


def summary(results: dict[str, Any]):
    return rep.summary(results)


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    return rep.report(results, Path(out_dir))


__all__ = ["CONFIGS", "DISK_MODEL", "NAME", "SERIAL", "TIME_SCALE", "collect", "create_args", "describe", "extras",
           "report", "run", "runs", "summary"]
