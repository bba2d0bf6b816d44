"""What does vraid's daemon cost per request apart from its engine?

Issue 17's ratios through FUSE follow the daemon's CPU per request (docs/performance.md).
This benchmark splits that CPU in two by mounting, side by side, with fio's random 4 KiB
writes and reads on each image (iodepth 1, psync, caches dropped before every job, the
targets alternating job by job as in ``bench/run.py``):

- ``passthrough``: ``bench/passthrough.py``, the baseline of every ratio;
- ``vraid-bare``: vraid's own daemon, FUSE layer, pyfuse3 and trio loop, exactly as
  ``vraid mount`` starts them, with the engine replaced by the passthrough's work: one
  ``os.pwrite``/``os.pread`` of the request on one sparse backing file (this script's
  ``--as-vraid`` mode patches ``Array.write`` and ``Array.read`` before it hands over to
  vraid's CLI, whose daemon is forked from it);
- ``vraid``: write-through;
- ``vraid-stripe``: ``--cache stripe --cache-size 128M --nvram FILE`` (the 48 MiB of the
  random writes fit in the cache).

Printed per job and target: IOPS, the ratio to the passthrough, and the daemon's CPU per
request (user + system, from /proc). ``vraid-bare`` against ``passthrough`` is what vraid's
use of FUSE, pyfuse3 and trio costs beyond the passthrough's; every vraid row minus
``vraid-bare`` is what its engine costs beyond one ``pwrite``/``pread`` of the request.
Needs root, fio and fusermount3 (no loop device)::

    .venv/bin/python bench/fuse_floor.py                 # 3 rounds, 8 s per write job
    .venv/bin/python bench/fuse_floor.py --repeat 5 --runtime 10 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

BARE = "vraid-bare"
#: where ``--as-vraid`` finds the backing file of ``vraid-bare``
BACKING_ENV = "VRAID_BARE_BACKING"
TARGETS = ("passthrough", BARE, "vraid", "vraid-stripe")
JOB_NAMES = ("rand-write", "rand-read")


def as_vraid(argv: list[str]) -> int:
    """vraid's CLI with the engine's host reads and writes replaced by the passthrough's work:
    one ``pwrite``/``pread`` on the file named by ``$VRAID_BARE_BACKING`` (the ``vraid-bare``
    target)."""
    from vraid.cli.main import main
    from vraid.engine.host.array import Array

    fd = os.open(os.environ[BACKING_ENV], os.O_RDWR)

    async def write(self, offset, data):  # noqa: ARG001 - the engine taken out
        os.pwrite(fd, data, offset)

    async def read(self, offset, length):  # noqa: ARG001
        return os.pread(fd, length, offset)

    Array.write = write  # type: ignore[method-assign]
    Array.read = read  # type: ignore[method-assign]
    return main(argv)


def measure(settings, repeat: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """(IOPS, daemon CPU us per request) of every run, by job and target."""
    import run as bench

    jobs = [job for job in bench.JOBS if job.name in JOB_NAMES]
    out: dict[str, dict[str, list[tuple[float, float]]]] = {j.name: {t: [] for t in TARGETS} for j in jobs}
    bare_settings = dataclasses.replace(settings, vraid=settings.workdir / "vraid-bare.sh")
    backing = settings.workdir / "vraid-bare-backing.img"
    with open(backing, "wb") as f:  # sparse, as the passthrough's
        f.truncate(bench.IMAGE_BYTES)
    bare_settings.vraid.write_text(f'#!/bin/sh\n{BACKING_ENV}="{backing}" exec "{sys.executable}" '
                                   f'"{Path(__file__).resolve()}" --as-vraid "$@"\n')
    bare_settings.vraid.chmod(0o755)
    bench.CONFIGS[BARE] = ()
    with contextlib.ExitStack() as mounts:
        mounted = {}
        for target in TARGETS:
            bench.log(f"mounting {target} ...")
            if target == "passthrough":
                mounted[target] = mounts.enter_context(bench.mount_passthrough(settings.workdir, settings.read_ahead_kb))
            else:
                mounted[target] = mounts.enter_context(
                    bench.mount_vraid(bare_settings if target == BARE else settings, target))
        for rep in range(1, repeat + 1):
            order = TARGETS if rep % 2 else tuple(reversed(TARGETS))
            for job in jobs:
                for target in order:
                    m = mounted[target]
                    before = bench.cpu_seconds(m.pid)
                    result = bench.run_fio(job, str(m.image), bench.ROUTES["image"], settings)
                    cpu = bench.cpu_seconds(m.pid) - before
                    requests = result.io_bytes / job.block_size
                    out[job.name][target].append((result.iops, cpu / requests * 1e6 if requests else 0.0))
                    bench.log(f"  [{rep}/{repeat}] {job.label:<17} {target:<13}{result.iops:10.0f} IOPS"
                              f" {out[job.name][target][-1][1]:7.1f} us CPU/request")
    return out


def report(figures: dict[str, dict[str, list[tuple[float, float]]]]) -> dict:
    """Print the medians; return them (and every run) for --json."""
    summary: dict = {}
    print(f"\n{'job':18s} {'target':13s} {'IOPS':>9s} {'/passthrough':>13s} {'CPU us/req':>11s} {'- bare us':>10s}")
    for job, by_target in figures.items():
        pt = statistics.median(i for i, _ in by_target["passthrough"])
        bare_cpu = statistics.median(c for _, c in by_target[BARE])
        summary[job] = {}
        for target, runs in by_target.items():
            iops = statistics.median(i for i, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            engine = cpu - bare_cpu if target.startswith("vraid") and target != BARE else None
            summary[job][target] = {"iops": iops, "ratio": iops / pt, "cpu_us": cpu, "engine_us": engine, "runs": runs}
            print(f"{job:18s} {target:13s} {iops:9.0f} {iops / pt:13.2f} {cpu:11.1f} "
                  f"{'' if engine is None else f'{engine:10.1f}'}")
    return summary


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--as-vraid":
        return as_vraid(sys.argv[2:])
    import run as bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds, the targets alternating (default 3)")
    parser.add_argument("--runtime", type=int, default=8, help="seconds of each random-write job (default 8)")
    parser.add_argument("--size", type=str, default="128M", help="region of the random reads (default 128M)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if args.repeat < 1 or args.runtime < 1:
        parser.error("--repeat and --runtime must be at least 1")
    if os.geteuid() != 0:
        parser.error("needs root (FUSE mounts, dropping the page cache)")
    with bench.work_directory(None, keep=False) as workdir:  # kept only if something stayed mounted
        settings = bench.Settings(
            size=bench.parse_size(args.size), runtime=args.runtime, repeat=args.repeat, targets=TARGETS,
            vraid=bench.REPO_DIR / ".venv" / "bin" / "vraid", mount_args=(), read_ahead_kb=128, workdir=workdir,
            out=workdir / "unused.json", keep_workdir=False)
        bench.check_environment(settings)
        summary = report(measure(settings, args.repeat))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
