"""What does vraid's engine cost per request, against the RAID-5 arithmetic and system calls alone?

Issue 17's ratios through FUSE are set by the daemon's CPU per request (docs/performance.md).
This benchmark takes FUSE out and asks how much of a request's CPU is RAID-5 itself and how
much is vraid's machinery around it. Both sides run in this process, on member files of the
same size in the page cache, one request at a time, and alternate round by round:

- **vraid**: the engine exactly as ``vraid mount`` builds it (``vraid.ondisk.assemble``,
  ``EngineConfig.from_assembled``, ``vraid.engine.build``), write-through, on an array made by
  ``vraid create`` (5 members, 64 KiB strips); ``Array.write`` and ``Array.read`` of random
  4 KiB blocks: the plan and its rxw-matrix, the stripe lock, the write-intent bitmap, the
  pooled stripe buffers, the member requests with their accounting, the plan event, the
  metrics;
- **minimal**: the same left-symmetric RAID-5 small write and read with nothing else:
  ``os.pread`` of the old data and old parity, one numpy XOR, two ``os.pwrite``; a read is
  one ``os.pread``. No plan, lock, bitmap, event, metric or trio.

A third row, **cached write**, is issue 17's cached random write without FUSE: vraid's engine
as ``vraid mount --cache stripe --cache-size 128M --nvram FILE`` builds it (a second array),
whose random 4 KiB writes over the 48 MiB region all hit the cache and are absorbed, against
the least a write-back cache with a durable journal can do per write (:class:`MinimalCache`):
copy the block into memory and put one record into a journal file, the data and then an entry
with its sequence number and CRC (two ``pwrite``s; each block alternates between two frames, so
a torn record never spoils the older one). No organisation, policy guard, destage order,
scheduler, metric or trio.

Printed: CPU per request (``time.process_time``) of each, the minimum over the rounds, and
vraid/minimal. Needs nothing but a writable work directory (no root, no FUSE)::

    .venv/bin/python bench/engine_floor.py
    .venv/bin/python bench/engine_floor.py --requests 5000 --rounds 7 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vraid.engine.build import EngineConfig, EngineOptions, build_engine  # noqa: E402
from vraid.ondisk.assemble import assemble  # noqa: E402

DISKS = 5
STRIP = 64 << 10
BLOCK = 4096
DISK_SIZE = 320 << 20
#: random requests fall in the first 48 MiB of the image (as bench/run.py's random writes)
REGION = 48 << 20
#: the cached row's cache (as bench/run.py's cache configurations): REGION fits in it
CACHE_SIZE = "128M"
#: the rows: write-through writes and reads, and writes absorbed by a write-back cache
OPS = ("write", "read", "cached write")


class Minimal:
    """RAID-5, left-symmetric, on ``DISKS`` plain files: the arithmetic and the system calls."""

    def __init__(self, directory: Path) -> None:
        self.fds = []
        for i in range(DISKS):
            path = directory / f"minimal{i}.img"
            with open(path, "wb") as f:  # written, so that every page is in the page cache
                f.write(bytes(REGION // (DISKS - 1) + STRIP))
            self.fds.append(os.open(path, os.O_RDWR))

    def _place(self, offset: int) -> tuple[int, int, int]:
        strip_no, within = divmod(offset, STRIP)
        stripe, k = divmod(strip_no, DISKS - 1)
        parity = (DISKS - 1) - stripe % DISKS
        return (parity + 1 + k) % DISKS, parity, stripe * STRIP + within

    def write(self, offset: int, data: bytes) -> None:
        disk, parity, at = self._place(offset)
        old = np.frombuffer(os.pread(self.fds[disk], BLOCK, at), np.uint8)
        par = np.frombuffer(os.pread(self.fds[parity], BLOCK, at), np.uint8)
        os.pwrite(self.fds[disk], data, at)
        os.pwrite(self.fds[parity], par ^ old ^ np.frombuffer(data, np.uint8), at)

    def read(self, offset: int) -> bytes:
        disk, _, at = self._place(offset)
        return os.pread(self.fds[disk], BLOCK, at)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


class MinimalCache:
    """A write-back cache's absorb at its least: the block copied into memory, and one record
    (data, then a 16-byte entry: sequence, block, CRC) put into a journal file at one of the
    block's two frames (the one not holding its newest record; replay takes the newer)."""

    ENTRY = struct.Struct("<QII")

    def __init__(self, directory: Path) -> None:
        blocks = REGION // BLOCK
        self.memory = np.zeros((blocks, BLOCK), dtype=np.uint8)
        self.table = 2 * blocks * self.ENTRY.size  # the entries first, then the data frames
        path = directory / "journal.bin"
        with open(path, "wb") as f:  # written, so that every page is in the page cache
            f.write(bytes(self.table + 2 * blocks * BLOCK))
        self.fd = os.open(path, os.O_RDWR)
        self.newest = bytearray(blocks)  # the frame (0/1) of each block's newest record
        self.seq = 0

    def write(self, offset: int, data: bytes) -> None:
        block = offset // BLOCK
        self.memory[block] = np.frombuffer(data, dtype=np.uint8)
        other = self.newest[block] = 1 - self.newest[block]
        frame = 2 * block + other
        self.seq += 1
        os.pwrite(self.fd, data, self.table + frame * BLOCK)  # the data first ...
        os.pwrite(self.fd, self.ENTRY.pack(self.seq, block, zlib.crc32(data)), frame * self.ENTRY.size)  # ... the entry last

    def close(self) -> None:
        os.close(self.fd)


def per_request(run, offsets: list[int]) -> float:
    """CPU microseconds per request of ``run(offsets)``."""
    c0 = time.process_time()
    run(offsets)
    return (time.process_time() - c0) / len(offsets) * 1e6


def open_engine(workdir: Path, name: str, opts: EngineOptions):
    """An array made by ``vraid create`` in ``workdir/name`` and the engine ``vraid mount``
    would build on it with ``opts``: (assembly, engine)."""
    array_dir = workdir / name
    subprocess.run([sys.executable, "-m", "vraid", "create", str(array_dir), "--level", "5", "--disks", str(DISKS),
                    "--disk-size", str(DISK_SIZE), "--strip", str(STRIP)], check=True, capture_output=True)
    asm = assemble(array_dir)
    asm.open_stores()
    return asm, build_engine(EngineConfig.from_assembled(asm, opts))


def measure(workdir: Path, requests: int, rounds: int, seed: int) -> dict:
    with contextlib.ExitStack() as stack:  # every engine and file closed, whatever fails
        return _measure(stack, workdir, requests, rounds, seed)


def _measure(stack: contextlib.ExitStack, workdir: Path, requests: int, rounds: int, seed: int) -> dict:
    def opened(name: str, opts: EngineOptions):
        asm, engine = open_engine(workdir, name, opts)

        def close() -> None:
            engine.close()
            asm.mark(clean=True)
            asm.close()

        stack.callback(close)
        return engine

    engine = opened("array", EngineOptions())
    array = engine.array
    cengine = opened("cached", EngineOptions(cache="stripe", cache_size=CACHE_SIZE, nvram=workdir / "nvram.bin"))
    cached = cengine.array
    minimal = Minimal(workdir)
    stack.callback(minimal.close)
    mcache = MinimalCache(workdir)
    stack.callback(mcache.close)
    rng = random.Random(seed)
    offsets = [rng.randrange(REGION // BLOCK) * BLOCK for _ in range(requests)]
    data = rng.randbytes(BLOCK)
    figures: dict[str, dict[str, list[float]]] = {op: {"vraid": [], "minimal": []} for op in OPS}

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(array.serve)
            await nursery.start(cached.serve)
            await engine.recover()
            await cengine.recover()
            for offset in offsets:  # warm: every block written once on every side
                await array.write(offset, data)
                await cached.write(offset, data)
                minimal.write(offset, data)
                mcache.write(offset, data)
            for _ in range(rounds):
                for op in OPS:
                    c0 = time.process_time()
                    if op == "write":
                        for offset in offsets:
                            await array.write(offset, data)
                    elif op == "read":
                        for offset in offsets:
                            await array.read(offset, BLOCK)
                    else:
                        for offset in offsets:
                            await cached.write(offset, data)
                    figures[op]["vraid"].append((time.process_time() - c0) / requests * 1e6)
                    if op == "write":
                        figures[op]["minimal"].append(per_request(lambda o: [minimal.write(x, data) for x in o], offsets))
                    elif op == "read":
                        figures[op]["minimal"].append(per_request(lambda o: [minimal.read(x) for x in o], offsets))
                    else:
                        figures[op]["minimal"].append(per_request(lambda o: [mcache.write(x, data) for x in o], offsets))
            await array.shutdown()
            await cached.shutdown()
            nursery.cancel_scope.cancel()

    trio.run(main)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="random 4 KiB requests per round (default 3000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, vraid and minimal alternating (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None, help="parent of the temporary directory (default /tmp)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if args.requests < 1 or args.rounds < 1:
        parser.error("--requests and --rounds must be at least 1")
    workdir = Path(tempfile.mkdtemp(prefix="vraid-engine-floor-", dir=args.workdir))
    try:
        figures = measure(workdir, args.requests, args.rounds, args.seed)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"random 4 KiB requests, in process, CPU per request (min of {args.rounds} rounds of {args.requests:,})")
    print(f"{'request':12s} {'vraid us':>9s} {'minimal us':>11s} {'vraid/minimal':>14s}")
    out = {}
    for op, f in figures.items():
        v, m = min(f["vraid"]), min(f["minimal"])
        out[op] = {"vraid_us": v, "minimal_us": m, "ratio": v / m, "rounds": f}
        print(f"{op:12s} {v:9.1f} {m:11.1f} {v / m:14.1f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
