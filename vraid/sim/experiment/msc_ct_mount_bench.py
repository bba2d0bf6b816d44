"""The file-system workloads of ``msc-ct``'s mount part, on an ext3 a :class:`~.vc_raid_mount.Rig` mounted.

Seed 000 sec. IV-C..E, scaled down (:mod:`.msc_ct_mount` says by how much):

* :func:`self_copy`: Table II's *self-copy*, "the writing of files, that are read from a storage
  device, to a different directory on the same storage device": the tree is written (untimed),
  the page cache dropped, then ``cp -a`` of it beside itself and ``sync``, timed;
* :func:`fio_file`: Table II's sequential and bulky random read/write through the file system
  (the paper used Tiobench; fio does the same I/O here): one file, 1 MiB sequential or
  stripe-sized random requests, writes ended by an fsync, reads after the page cache is dropped;
* :func:`run_dbench`: Fig. 13's DBench with N clients, its page cache capped
  (:class:`~.vc_raid_bench.MemoryCap`) so that its writes reach the array while it runs;
* :func:`age`: Fig. 14's synthetic aging (sec. IV-D): "Up to 90% of the storage capacity, the
  benchmark sequentially writes files, the sizes of which have a normal distribution with a
  mean value mu and standard deviation mu/4. The benchmark deletes 20% of the files, and then
  creates such files up to 90% of the storage capacity", repeated; each cycle's creation is
  timed (written and synced), its MB/s is the cycle's throughput.

Every time is wall time as the user waits for it (``time.monotonic``), the array running in
scaled real time (``vraid mount --time real:F``). Given a ``probe`` (the mount's ``vraid status
--json``), each timed step also records what the members did during it (:func:`disk_use`):
their requests, the bytes they moved and how busy they were, read just before and just after
the step, outside its time.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from vraid.errors import VraidError

from .vc_raid_bench import MemoryCap
from .vc_raid_mount import disk_use, sh, sync_fs

MIB = 1 << 20
#: a snapshot of the mount's status (``vraid status --json``), taken outside a step's time
Probe = Callable[[], dict]


def probed(probe: Probe | None, step: Callable[[], Any]) -> tuple[Any, float, dict[str, Any] | None]:
    """Run ``step`` timed; with a ``probe``, the members' :func:`disk_use` during it."""
    before = probe() if probe else None
    started = time.monotonic()
    result = step()
    seconds = time.monotonic() - started
    return result, seconds, disk_use(before, probe() if probe else None, seconds)


def with_disks(out: dict[str, Any], disks: dict[str, Any] | None) -> dict[str, Any]:
    """``out`` with the step's :func:`disk_use` under ``"disks"`` where it was measured."""
    return {**out, "disks": disks} if disks else out


def drop_caches(fs: Path) -> None:
    """Write back the file system ``fs`` (only it: :func:`.vc_raid_mount.sync_fs`) and drop the
    page cache, so that the next reads reach the array."""
    sync_fs(fs)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:  # pragma: no cover - a container that forbids it: the remount still drops ext3's
        pass


def write_files(root: Path, sizes: list[int], *, seed: int, chunk: int = MIB) -> int:
    """Files ``f000000``.. of ``sizes`` bytes (pseudo-random content) under ``root``; bytes written."""
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    block = rng.randbytes(chunk)
    total = 0
    for i, size in enumerate(sizes):
        with open(root / f"f{i:06d}", "wb") as f:
            left = size
            while left > 0:
                n = min(left, chunk)
                f.write(block[:n])
                left -= n
        total += size
    return total


def self_copy(ext: Path, name: str, make: Callable[[Path], None], remount: Callable[[], None],
              probe: Probe | None = None) -> dict[str, Any]:
    """``make(ext/name)`` builds the tree; after a remount and a dropped cache, ``cp -a`` of it to
    ``ext/name-copy`` plus the ``sync -f`` of ``ext``, timed; both trees are removed afterwards."""
    src = ext / name
    make(src)
    sync_fs(ext)
    remount()
    drop_caches(ext)
    mb = int(sh(["du", "-sb", src]).stdout.split()[0]) / 1e6
    _, seconds, disks = probed(probe, lambda: (sh(["cp", "-a", src, ext / f"{name}-copy"], timeout=7200),
                                               sync_fs(ext)))
    sh(["rm", "-rf", src, ext / f"{name}-copy"], timeout=3600)
    sync_fs(ext)
    return with_disks({"seconds": round(seconds, 3), "mb": round(mb, 2),
                       "mb_s": round(mb / seconds, 3) if seconds else 0.0}, disks)


def fio_file(path: Path, rw: str, size: int, bs: int, *, seed: int = 1, probe: Probe | None = None) -> dict[str, Any]:
    """One fio job on ``path`` (``rw``: write, read, randwrite, randread), buffered I/O as an
    application does, writes ended by an fsync; MB/s (10^6 bytes) over fio's own run time."""
    out, _, disks = probed(probe, lambda: _fio(path, rw, size, bs, seed))
    return with_disks(out, disks)


def _fio(path: Path, rw: str, size: int, bs: int, seed: int) -> dict[str, Any]:
    cmd = ["fio", "--name=msc-ct", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--size={size}",
           "--ioengine=psync", "--end_fsync=1", f"--randseed={seed}", "--output-format=json"]
    out = json.loads(sh(cmd, timeout=7200).stdout)
    job = out["jobs"][0]
    side = job["read"] if "read" in rw else job["write"]
    seconds = (side.get("runtime") or job.get("job_runtime") or 0) / 1000
    return {"mb_s": round(side["io_bytes"] / 1e6 / seconds, 3) if seconds else 0.0, "seconds": round(seconds, 3),
            "bytes": side["io_bytes"]}


#: a DBench client's own memory (its process), added to the page-cache cap per client
CLIENT_MEMORY = 4 * MIB
_THROUGHPUT = re.compile(r"Throughput ([0-9.]+) MB/sec")


def parse_dbench(text: str) -> float:
    """DBench's final "Throughput N MB/sec".

    Raises:
        VraidError: no throughput in the output.
    """
    found = _THROUGHPUT.findall(text)
    if not found:
        raise VraidError(f"no throughput in dbench's output: {text.strip()[-300:]}", "see dbench's output above")
    return float(found[-1])


def run_dbench(directory: Path, clients: int, seconds: int, *, ram: int | None,
               probe: Probe | None = None) -> dict[str, Any]:
    """``dbench -t SECONDS CLIENTS`` in ``directory``, its memory (page cache included) capped at
    ``ram`` plus :data:`CLIENT_MEMORY` per client (each client is a process of its own)."""
    out, _, disks = probed(probe, lambda: _dbench(directory, clients, seconds, ram))
    return with_disks(out, disks)


def _dbench(directory: Path, clients: int, seconds: int, ram: int | None) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    cap = MemoryCap(ram + clients * CLIENT_MEMORY if ram else None, f"vraid-msc-ct-{os.getpid()}")
    try:
        proc = subprocess.run(["dbench", "-D", str(directory), "-t", str(seconds), str(clients)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=seconds + 1800,
                              preexec_fn=cap.enter)
        capped = cap.path is not None
    finally:
        cap.close()
    if proc.returncode != 0:
        raise VraidError(f"dbench {clients} exited {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-300:]}",
                         "see dbench's output above (ENOSPC: give the mount part a larger disk_size)")
    sh(["rm", "-rf", directory], timeout=3600)
    return {"clients": clients, "mb_s": parse_dbench(proc.stdout), "seconds": seconds,
            "ram": ram + clients * CLIENT_MEMORY if capped and ram else None}


def aging_sizes(rng: random.Random, mean: int, budget: int, block: int = 4096) -> list[int]:
    """File sizes ~ N(mean, mean/4), at least one block, until ``budget`` bytes are used."""
    out: list[int] = []
    used = 0
    while True:
        size = max(block, int(rng.gauss(mean, mean / 4)))
        if used + size > budget:
            return out
        out.append(size)
        used += size


def age(ext: Path, *, mean: int, cycles: int, fill: float = 0.9, delete: float = 0.2, seed: int = 1,
        probe: Probe | None = None) -> list[dict[str, Any]]:
    """Fig. 14's aging benchmark: cycle 1 writes files up to ``fill`` of the file system; each later
    cycle deletes ``delete`` of the files (chosen at random) and writes new ones up to ``fill``
    again. Returns each cycle's bytes, seconds (files written + ``sync``) and MB/s."""
    root = ext / "aged"
    root.mkdir(exist_ok=True)
    rng = random.Random(seed)
    files: list[Path] = []
    out = []
    for cycle in range(1, cycles + 1):
        if cycle == 1:
            st = os.statvfs(ext)
            budget = int(st.f_bavail * st.f_frsize - (1 - fill) * st.f_blocks * st.f_frsize)
        else:  # delete, then create files up to the same fill again: as many bytes as were deleted
            budget = 0
            for victim in rng.sample(files, int(len(files) * delete)):
                budget += victim.stat().st_size
                victim.unlink()
                files.remove(victim)
            sync_fs(ext)
        sizes = aging_sizes(rng, mean, max(0, budget))
        directory = root / f"c{cycle:03d}"
        drop_caches(ext)
        written, seconds, disks = probed(probe, lambda: (write_files(directory, sizes, seed=seed + cycle),
                                                         sync_fs(ext))[0])
        files += sorted(directory.iterdir())
        out.append(with_disks({"cycle": cycle, "files": len(sizes), "mb": round(written / 1e6, 2),
                               "seconds": round(seconds, 3), "mb_s": round(written / 1e6 / seconds, 3) if seconds else 0.0},
                              disks))
    return out


__all__ = ["Probe", "age", "aging_sizes", "disk_use", "drop_caches", "fio_file", "parse_dbench", "probed", "run_dbench",
           "self_copy", "with_disks", "write_files"]
