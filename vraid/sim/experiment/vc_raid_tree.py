"""The paper's source tree, synthesized: paper 002 sec. 4.2.4's untar / copy / remove tree.

The paper untarred ZDNet's web-bench test suites, doubled: "952 directories, 12322 files of
9.9 KB on average, 122 MB". That tar is not available, and the trees this machine has differ
from it (the Python standard library, vc-raid's ``full`` tree, is 723 files and 14 MB: it fits
the paper's 34 MB file cache, so the asynchronous mode of Fig. 7 never waits for the disks).
``tree=paper`` writes a tree with the paper's counts and size instead:

* 952 directories: directory ``i`` (``i >= 1``) hangs under one of the directories before it,
  chosen at random, so the tree is a random recursive tree (a few levels deep, as a source tree);
* 12,322 files, each in a directory chosen at random, of log-normal sizes (sigma 1: many small
  files and a few large ones; the paper gives only the mean) scaled so that they sum to exactly
  122,000,000 bytes (a mean of 9.9 KB);
* contents random bytes (ext4 does not compress: what matters is how many blocks are written).

Everything comes from one seeded generator (numpy), and the tar has fixed names, order, mtime
and owners, so the same bytes on every machine. Where vraid differs: the paper's file sizes and
directory shape are not published, so these are ours; the counts and the total are the paper's.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

#: the paper's tree (sec. 4.2.4)
PAPER_TREE = {"dirs": 952, "files": 12322, "bytes": 122_000_000}
SEED = 2002


def layout(seed: int = SEED) -> tuple[list[str], list[tuple[str, int]]]:
    """The directories (paths, parents first) and the files (path, size) of the paper's tree."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dirs = ["src"]
    for i in range(1, PAPER_TREE["dirs"]):
        parent = dirs[int(rng.integers(0, i))]
        dirs.append(f"{parent}/d{i:03d}")
    raw = rng.lognormal(mean=0.0, sigma=1.0, size=PAPER_TREE["files"])
    sizes = np.floor(raw / raw.sum() * PAPER_TREE["bytes"]).astype(np.int64)
    sizes[: PAPER_TREE["bytes"] - int(sizes.sum())] += 1  # the bytes the floor dropped, one each: exact total
    where = rng.integers(0, len(dirs), size=PAPER_TREE["files"])
    files = [(f"{dirs[int(d)]}/f{j:05d}.dat", int(s)) for j, (d, s) in enumerate(zip(where, sizes))]
    return dirs, files


def write_tar(tar_path: Path, seed: int = SEED) -> dict[str, Any]:
    """Write the paper's tree as a tar to ``tar_path``; returns what it holds (as vc-raid's other trees)."""
    import numpy as np

    dirs, files = layout(seed)
    content = np.random.default_rng(seed + 1)

    def info(name: str, kind: bytes, size: int = 0) -> tarfile.TarInfo:
        t = tarfile.TarInfo(name)
        t.type, t.size, t.mtime, t.uid, t.gid, t.uname, t.gname = kind, size, 0, 0, 0, "root", "root"
        t.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        return t

    by_dir: dict[str, list[tuple[str, int]]] = {}
    for path, size in files:
        by_dir.setdefault(path.rsplit("/", 1)[0], []).append((path, size))
    with tarfile.open(tar_path, "w", format=tarfile.GNU_FORMAT) as tar:
        for d in dirs:  # parents first: each directory, then its files
            tar.addfile(info(d, tarfile.DIRTYPE))
            for path, size in by_dir.get(d, []):
                tar.addfile(info(path, tarfile.REGTYPE, size), io.BytesIO(content.bytes(size)))
    total = sum(s for _, s in files)
    return {"source": "synthesized with the paper's counts (vraid/sim/experiment/vc_raid_tree.py)",
            "files": len(files), "dirs": len(dirs), "mb": round(total / 1e6, 2),
            "mean_kb": round(total / len(files) / 1e3, 2)}


__all__ = ["PAPER_TREE", "SEED", "layout", "write_tar"]
