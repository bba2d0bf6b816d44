"""Bonnie for the ``vc-raid`` experiment: Debian's ``bonnie++`` on the ext4 of a :class:`~.vc_raid_mount.Rig`.

Seed 002 (He & Yang, VC-RAID) sec. 4.2.2 and 4.3.3 (Fig. 8) run Bonnie 2.0.6 on a 100 MB file and
report two of its block-device numbers: block write (sequential output with ``write()``) and
random seeks (4 processes, 200,000 ``lseek()`` + ``read()``, a tenth of them rewritten in place).
Bonnie 2.0.6 is not packaged; bonnie++ (its successor, Debian's ``bonnie++``) runs the same
block-write and random-seek tests (its seek test: 8192 seeks by 5 processes, a tenth rewritten).
:func:`bonnie_args` skips the per-character tests (``-f``) and the file-creation tests (``-n 0``),
which the paper does not report, and states the RAM it assumes (``-r``, half the file, bonnie++'s
floor) so that a file smaller than this machine's memory is allowed; the run is held to the
experiment's memory cap (:class:`~.vc_raid_bench.MemoryCap`) as PostMark is, so the file does not
stay in the page cache. :func:`parse_csv` reads its CSV line: block write, rewrite and block read
in KiB/s, seeks per second.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

#: the columns of bonnie++'s CSV line (format 1.98, bonnie++ 2.00) this experiment reads
FIELDS = {"format": 0, "size": 5, "block_write_kBps": 11, "rewrite_kBps": 13, "block_read_kBps": 17, "seeks_per_s": 19}
#: the file size in MiB: the paper's 100 MB, and the quick run's (a member of 128M leaves room for it)
FULL_MB = 100
QUICK_MB = 64
#: the smallest memory cap bonnie++ runs in (:func:`bonnie_ram`)
BONNIE_RAM_FLOOR = 32 << 20


def bonnie_ram(ram: int | None, size_mb: int) -> int | None:
    """bonnie++'s memory cap: the experiment's, but not under a third of its file (the paper's 100 MB
    file against 34 MB of file cache) nor under :data:`BONNIE_RAM_FLOOR`: an 8 MiB cap got bonnie++
    killed by the cgroup's OOM killer (on mcd, twice) while its writeback waited for the array."""
    return None if not ram else max(int(ram), (size_mb << 20) // 3, BONNIE_RAM_FLOOR)


def bonnie_args(directory: Path, size_mb: int) -> list[str]:
    """The ``bonnie++`` command line: a ``size_mb`` MiB file in ``directory``, block tests only, as root."""
    if size_mb < 2:
        raise ValueError(f"bonnie size {size_mb} MiB is too small (at least 2)")
    return ["bonnie++", "-d", str(directory), "-s", str(size_mb), "-r", str(size_mb // 2), "-n", "0", "-f",
            "-u", "root", "-q", "-m", "vraid"]


def _number(text: str) -> float | None:
    """A bonnie++ cell: a number, or None for "+++++" (too fast to measure) and an empty cell."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_csv(text: str) -> dict[str, Any]:
    """The numbers of bonnie++'s CSV output line (the last line that starts with its format).

    Raises:
        ValueError: no CSV line in ``text`` (bonnie++ failed or was cut off).
    """
    lines = [ln for ln in text.strip().splitlines() if ln.count(",") > 20 and ln.split(",")[0][:1].isdigit()]
    if not lines:
        raise ValueError(f"no bonnie++ CSV line in its output (last lines: {text.strip().splitlines()[-3:]})")
    cells = lines[-1].split(",")
    out: dict[str, Any] = {"format": cells[FIELDS["format"]], "size": cells[FIELDS["size"]]}
    for key in ("block_write_kBps", "rewrite_kBps", "block_read_kBps", "seeks_per_s"):
        out[key] = _number(cells[FIELDS[key]])
    return out


def run_bonnie(location: Path, size_mb: int, *, ram: int | None = None) -> dict[str, Any]:
    """One bonnie++ run in ``location`` (created), in a memory cgroup of ``ram`` bytes."""
    from vraid.errors import VraidError
    from .vc_raid_bench import MemoryCap

    location.mkdir(parents=True, exist_ok=True)
    cap = MemoryCap(ram, f"vraid-vc-raid-bonnie-{os.getpid()}")
    try:
        proc = subprocess.run(bonnie_args(location, size_mb), capture_output=True, text=True, timeout=7200,
                              preexec_fn=cap.enter)
    finally:
        capped = cap.path is not None
        cap.close()
    if proc.returncode != 0:
        raise VraidError(f"bonnie++ exited {proc.returncode} in {location}: {(proc.stderr or proc.stdout).strip()[-300:]}",
                         "see the message above (apt-get install bonnie++)")
    return {**parse_csv(proc.stdout), "size_mb": size_mb, "ram": ram if capped else None}


__all__ = ["BONNIE_RAM_FLOOR", "FIELDS", "FULL_MB", "QUICK_MB", "bonnie_args", "bonnie_ram", "parse_csv", "run_bonnie"]
