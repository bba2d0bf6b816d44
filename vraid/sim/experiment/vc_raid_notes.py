"""The prose of the ``vc-raid`` report: the set-up lines and the causes, from the run's own numbers."""

from __future__ import annotations

from typing import Any

from .vc_raid_paper import TABLE2, number as _num


def setup(detail: dict[str, Any]) -> list[str]:
    from .vc_raid_collect import settings_of

    runs = detail.get("runs", [])
    spec = settings_of([r["spec"] for r in runs if "spec" in r])
    tree = next((r.get("tree") for r in runs if r.get("tree")), {}) or {}
    made = {r["spec"]["config"]: r["spec"]["create"] for r in runs}  # one per configuration, not per round
    creates = "; ".join(f"`{config}`: `vraid create DIR {' '.join(args)}`" for config, args in made.items())
    pm = ", ".join(f"{s['name']} {s['files']} files / {s['transactions']} transactions"
                   for s in spec.get("postmark", []))
    ram = spec.get("ram")
    cap = (f"PostMark runs in a memory cgroup of {ram >> 20} MiB (page cache included), as the paper's machine "
           "had about 34 MB for file cache" if ram else "PostMark runs without a memory cap")
    scale = detail.get("time_scale", "?")
    if spec.get("sim"):
        return [f"In the simulator (`--set sim=true`), virtual time: the `postmark` workload "
                f"(vraid/sim/workload/postmark.py, no page cache, no fsync) on 4 x `{detail.get('disk_model', '?')}`, "
                f"{pm}; TPS = transactions / the virtual time of the transaction phase. untar / copy / remove are "
                "not simulated."]
    return [
        f"Real mounts on this machine, one configuration after another{_rounds(runs)}: {creates}. Each is mounted with "
        f"`vraid mount --disk-model {detail.get('disk_model', '?')} --time real:{scale}` (every member and "
        f"cache disk behind the paper's DNES-318350 timing model, every modelled millisecond taking {scale} ms "
        "of real time), member files in /dev/shm, attached to a loop device, `mkfs.ext4 -b 4096`, mounted with "
        "`noinit_itable` (no background inode-table zeroing while we measure).",
        "",
        f"PostMark 1.51 (Debian), 1 KiB read/write blocks, seed 42, other settings at their defaults: {pm}. "
        f"{cap}. TPS = transactions / the transaction phase's wall time, timed from PostMark's progress output.",
        "",
        f"untar / copy / remove: `tar xf`, `cp -r`, `rm -rf` of a tar of {tree.get('source', '?')}: "
        f"{tree.get('files', '?')} files in {tree.get('dirs', '?')} directories, {tree.get('mb', '?')} MB "
        f"({tree.get('mean_kb', '?')} KB per file on average; the paper's tree: 12322 files in 952 directories, "
        "122 MB, 9.9 KB), first with ext4 as mounted by default, each program in the memory cap and timed until it "
        "returns, after an untimed write-back of the file system, `sync -f` (a plain `sync` in runs of code "
        "before 119b7db, 2026-11-29, `1c58995` among them) (asynchronous mode), then with ext4 remounted "
        "`-o sync` (the paper's synchronous mode).",
        "",
        f"Bonnie: `bonnie++ -s {spec.get('bonnie_mb', '?')} -r {int(spec.get('bonnie_mb', 0) or 0) // 2} -n 0 -f` "
        "(block write, rewrite, block read, random seeks; Bonnie 2.0.6 is not packaged, bonnie++ 2.00 runs the same "
        "block tests), in the same memory cap but not under a third of the file (the paper: a 100 MB file, 34 MB "
        "of file cache) nor under 32 MiB (an 8 MiB cap got bonnie++ killed by the cgroup's OOM killer on mcd).",
        "",
        "After each part the log disk's occupancy and counters are read with `vraid status --json` (table below). "
        "`scd-fill` is vraid's ablation: scd with a 4M log (64 segments) instead of 200M, PostMark only. "
        "`raid0-floor` and `raid5-floor` are the floor ablation: RAID-0 and RAID-5 mounted with `--time none` "
        "(no disk time, so a transaction's time is the mount's own: FUSE, the loop device, the daemon), PostMark "
        "only.",
    ]


def _ratio(a: Any, b: Any) -> str:
    a, b = _num(a), _num(b)
    return f"{a / b:.2f}x" if a and b else "n/a"


def notes(res: dict[str, Any], detail: dict[str, Any]) -> list[str]:
    out: list[str] = []
    from .vc_raid_collect import merge_rounds

    pairs = [(r["spec"], r) for r in detail.get("runs", []) if "spec" in r]
    merged = merge_rounds(pairs) if pairs else [({}, r) for r in detail.get("runs", [])]
    runs = {r["config"]: r for _, r in merged if r.get("available", True) and r.get("postmark")}
    pm = res.get("postmark", {})
    sim = any(r.get("mode") == "sim" for r in runs.values())
    if sim:
        out.append("- Simulated: every PostMark read and write reaches the array (no page cache), so RAID-5's "
                   "small-write penalty shows in full in every configuration, small included.")
    if "raid0" in runs and "raid5" in runs and not sim:
        small = pm.get("small", {})
        out.append(
            f"- **PostMark small runs from memory.** Its pool (the paper's 1000 files, about 5 MB) fits the "
            f"page cache, ours as the paper's; RAID-5 / RAID-0 here {_ratio(small.get('raid5'), small.get('raid0'))} "
            f"(paper {TABLE2['small']['raid5'] / TABLE2['small']['raid0']:.2f}x). PostMark never calls fsync: the "
            "disks see only ext4's 5 s journal commits and the writeback of dirty pages, and a short run (the "
            "quick one lasts well under a second) may or may not meet a commit: its TPS is mostly noise (see "
            "the range), and the comparison with the paper's small column says little. The "
            "paper's 50000 transactions on a 400 MHz machine lasted about a minute, long enough for Linux 2.0's "
            "bdflush to write back every few seconds in the middle of them.")
        med, lg = pm.get("medium", {}), pm.get("large", {})
        out.append(
            f"- **PostMark medium and large wait for the disks** because of the memory cap: RAID-5 / RAID-0 "
            f"{_ratio(med.get('raid5'), med.get('raid0'))} and {_ratio(lg.get('raid5'), lg.get('raid0'))} (paper "
            f"{TABLE2['medium']['raid5'] / TABLE2['medium']['raid0']:.2f}x, "
            f"{TABLE2['large']['raid5'] / TABLE2['large']['raid0']:.2f}x). Without the cap (`--set ram=none`) "
            "this machine's page cache holds every pool and all four arrays run at the speed of memory. Where "
            "ours lose less to RAID-5 than the paper's, the floor ablation (below, where it ran) measures whether "
            "the mount's own per-request cost compresses the ratio towards 1; the other candidates are ours and "
            "not measured: ext4's delayed allocation writes back in longer runs than 1999's ext2 (fewer small "
            "read-modify-writes), and a short transaction phase. The medium and large ranges show how far the "
            "loaded machine moves one run.")
        out.append(
            f"- **untar / copy / remove, sync:** RAID-5 / RAID-0 time {_ratio(res['untar_s'].get('raid5'), res['untar_s'].get('raid0'))}, "
            f"{_ratio(res['copy_s'].get('raid5'), res['copy_s'].get('raid0'))}, "
            f"{_ratio(res['remove_s'].get('raid5'), res['remove_s'].get('raid0'))}. Every synchronous write "
            "also passes ext4's journal, the loop device, FUSE and the daemon's Python, and that cost does not "
            "shrink with the time scale: on this machine (shared by other jobs, load average "
            f"{_load(detail.get('runs', []))}) a RAID-5 untar of the quick tree took about 18 s with the disk model at 1/1000 of "
            "real time and about 18 s at real time, measured once each while building this experiment (an "
            "earlier, larger quick tree). The disks' part is the smaller one, so ratios between arrays are "
            "compressed towards 1; the mcd rows measure how much (RAID-5's time over RAID-0's bounds any write "
            "cache's gain). "
            "This is a deviation of ours (a user-space array on a shared two-core VM); a quiet machine and a "
            "larger time scale (`--set time_scale=1`) widen them.")
    for name, r in runs.items():
        parts = []
        for size, p in r["postmark"].items():
            each = p if isinstance(p, list) else [p]
            parts.append(f"{size} " + ", ".join(f"{q['tps']:.0f}" for q in each) + " TPS (creation "
                         + ", ".join(f"{q['create_seconds']:.1f}" for q in each) + " s)")
        out.append(f"- {name}, every PostMark run in order: " + "; ".join(parts) + ".")
    if "scd-fill" in runs:
        from .vc_raid_rows import fill_cause

        out.append("- **The log-fill ablation** (scd with a 4M log, so that the log fills and level-2 destages run "
                   "during PostMark): " + "; ".join(f"{size}: {fill_cause(res, size)}" for size in pm) + ".")
    if "raid0-floor" in runs and "raid5-floor" in runs:
        from .vc_raid_rows import floor_cause

        out.append("- **The floor ablation** (RAID-0 and RAID-5 with no disk time): "
                   + "; ".join(f"{size}: {floor_cause(res, size) or 'not measured'}" for size in pm) + ".")
    out.append("- Bonnie: ext4's delayed allocation hands the array long sequential runs, which RAID-5 writes as "
               "whole stripes: the small-write penalty the paper's 1999 ext2 met in Bonnie's block write is mostly "
               "absent here, and with it most of what a write cache can hide.")
    out.append("- ServerBench (Figs. 4-6) is not run: it is a discontinued Windows client/server benchmark; its "
               "claims are `not run` rows above.")
    return out


def _rounds(runs: list[dict[str, Any]]) -> str:
    """How the repeats were made: round by round on fresh arrays, or (older runs) all on one mount."""
    rounds = max((r["spec"].get("round", 0) for r in runs), default=0)
    if rounds >= 1:
        return (f", PostMark round by round ({rounds} rounds; each builds every configuration afresh and runs "
                "PostMark's three sizes once on it), bonnie++ and untar / copy / remove once per configuration on "
                "an array of their own, after round 1")
    return " (PostMark's repeats all on one mount, each in a fresh directory)"


def _load(runs: list[dict[str, Any]]) -> str:
    """The load averages the runs (every round of every configuration) started and ended at."""
    loads = [r[k] for r in runs for k in ("loadavg_start", "loadavg_end") if k in r]
    return f"{min(loads):.1f} to {max(loads):.1f}" if loads else "not recorded"
