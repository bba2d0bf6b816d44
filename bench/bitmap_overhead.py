"""What does the write-intent bitmap cost? Write time with the bitmap / without it.

Two settings, both through the real controller (``vraid.engine.host.array.Array``):

* **modelled disks, virtual time**: members in memory behind the hdd timing model
  (``hdd:st373454lc``), run under trio's MockClock, so the ratio is in modelled seconds
  and does not depend on this machine. A bitmap set is one 4 KiB write to every member
  plus a flush of every member; a flush of the model drains its write buffer.
* **member files, real time**: page-cache member files with real fsyncs (the cost a
  mount pays), wall-clock seconds.

Workloads: random 4 KiB writes over the whole array (the worst case: at first nearly
every write finds its chunk's bit clear) and over a 16 MiB hot region (writes
cluster, as a filesystem's do). Chunk sizes: one stripe per bit (the most bitmap
writes), the default (4 MiB of data per bit) and 64 MiB. Each case prints the ratio
time-with-bitmap / time-without and how many bitmap writes it took.

    .venv/bin/python bench/bitmap_overhead.py               # 4,000 writes per case
    .venv/bin/python bench/bitmap_overhead.py --writes 20000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import trio  # noqa: E402
import trio.testing  # noqa: E402

from vraid.backends.file import FileStore  # noqa: E402
from vraid.backends.memory import MemoryStore  # noqa: E402
from vraid.engine.build import EngineConfig, open_engine  # noqa: E402
from vraid.ondisk.bitmap import default_chunk  # noqa: E402
from vraid.core.geometry import Geometry  # noqa: E402

BS = 4096


def _offsets(g: Geometry, writes: int, region: int | None, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    blocks = (region or g.capacity) // BS
    return [int(b) * BS for b in rng.integers(0, blocks, writes)]


async def _workload(array, offsets: list[int], threads: int) -> float:
    clock = array.clock
    data = b"\xab" * BS
    it = iter(offsets)
    start = clock.now()

    async def worker() -> None:
        for off in it:
            await array.write(off, data)

    async with trio.open_nursery() as n:
        for _ in range(threads):
            n.start_soon(worker)
    await array.flush()
    return clock.now() - start


def run_case(g: Geometry, chunk: int | None, offsets: list[int], threads: int, *, files: bool) -> tuple[float, dict]:
    """Seconds (modelled or wall) for the writes; chunk None: no bitmap."""
    stats: dict = {}

    async def main() -> float:
        tmp = None
        if files:
            tmp = tempfile.TemporaryDirectory(dir="/var/tmp")
            stores = [FileStore.create(Path(tmp.name) / f"m{i}", g.member_size) for i in range(g.ndisks)]
            config = EngineConfig(g, stores=tuple(stores), bitmap_chunk=chunk, bitmap_recorded=False)
        else:
            stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]
            config = EngineConfig(g, stores=tuple(stores), disk_model="hdd:st373454lc", bitmap_chunk=chunk,
                                  bitmap_recorded=False)
        try:
            async with open_engine(config) as engine:
                t = await _workload(engine.array, offsets, threads)
                if engine.bitmap is not None:
                    stats.update(engine.bitmap.stats.to_dict())
                return t
        finally:
            for s in stores:
                s.close()
            if tmp is not None:
                tmp.cleanup()

    if files:
        t0 = time.perf_counter()
        trio.run(main)
        return time.perf_counter() - t0, stats
    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0)), stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writes", type=int, default=4000, help="4 KiB writes per case (default 4000)")
    ap.add_argument("--threads", type=int, default=8, help="writers in flight (default 8)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    g = Geometry.for_disk_size(level=5, ndisks=5, disk_size=257 << 20, strip_size=64 << 10)
    chunks = {"1 stripe": 1, "default (4 MiB)": default_chunk(g), "64 MiB": default_chunk(g, 64 << 20)}
    results = []
    print(f"RAID-5, 5 disks, 64K strip, {g.capacity >> 20} MiB; {args.writes} random 4 KiB writes, "
          f"{args.threads} in flight, then one flush")
    print(f"{'members':<22} {'region':<12} {'chunk':<16} {'without':>10} {'with':>10} {'ratio':>7} {'bitmap writes':>14}")
    for files in (False, True):
        for region_name, region in (("whole array", None), ("16 MiB hot", 16 << 20)):
            offsets = _offsets(g, args.writes, region, args.seed)
            base, _ = run_case(g, None, offsets, args.threads, files=files)
            for name, chunk in chunks.items():
                t, st = run_case(g, chunk, offsets, args.threads, files=files)
                row = {"members": "files, wall s" if files else "hdd model, virtual s", "region": region_name,
                       "chunk": name, "chunk_stripes": chunk, "without": base, "with": t, "ratio": t / base,
                       "bitmap_set_writes": st.get("set_writes", 0), "bits_set": st.get("bits_set", 0)}
                results.append(row)
                print(f"{row['members']:<22} {region_name:<12} {name:<16} {base:>10.3f} {t:>10.3f} "
                      f"{t / base:>7.3f} {row['bitmap_set_writes']:>14}")
    if args.json:
        args.json.write_text(json.dumps({"writes": args.writes, "threads": args.threads, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
