"""A PostMark-like small-file workload as block I/O (seed 002, sec. 4.3.4, Table 2).

PostMark [Katcher 1997] creates a pool of ``files`` files of ``min`` to ``max`` bytes, then runs
``transactions`` transactions, each a pair: create or delete a file, and read or append one
(both halves chosen with PostMark's default bias, 50/50), then deletes what is left (not
generated here: the run ends with the transactions). The simulator has no filesystem, so this
workload is one, reduced to the block I/O a simple filesystem would issue:

* the array starts with a metadata area: one inode block per 16 files (256-byte inodes), the
  block bitmap (one bit per data block), and ``dir_blocks`` directory blocks (a file's entry
  lives in block ``id mod dir_blocks``); data blocks follow;
* a create allocates ``ceil(size / block)`` blocks next-fit (contiguous where the bitmap
  allows), writes the data in contiguous runs, then its inode, bitmap and directory blocks;
* a delete frees the blocks and writes the inode, bitmap and directory blocks;
* a read reads the file's runs; an append writes ``min..max`` bytes more (capped at ``max``
  in all, as PostMark's files never outgrow it), newly allocated, plus inode and bitmap;
* PostMark never calls fsync, and by default (``fsync=none``) neither does this workload;
  with ``fsync=transaction`` every transaction ends with a flush (``op="flush"``), as an
  application that makes each transaction durable would (what a write-back cache or a log
  disk must then absorb).

Where it differs from PostMark on a real filesystem (on purpose: it is the disk-level shape we
want, not a filesystem): no page cache (every read reaches the array), no journal, whole
blocks only, one directory. Closed loop, one stream.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .base import HostRequest, Param, Workload, make_rng, need

INODES_PER_BLOCK = 16


class PostMark(Workload):
    """PostMark's pool and transactions as the block I/O of a simple filesystem."""

    name = "postmark"
    summary = "PostMark-like small files: create/delete + read/append over a block allocator"
    source = "paper 002 (He & Yang, VC-RAID), sec. 4.3.4, Table 2 (PostMark [Katcher 1997])"
    PARAMS = {"files": Param("int", 1000, "initial files (the pool)"),
              "transactions": Param("int", 50000, "transactions after the pool is made"),
              "min": Param("size", 500, "smallest file"),
              "max": Param("size", 10000, "largest file"),
              "dir_blocks": Param("int", 16, "directory blocks (entries spread over them)"),
              "fsync": Param("none|transaction", "none", "never flush (PostMark's own behaviour), or after every transaction"),
              "phase": Param("all|transactions", "all", "emit the pool's creation too, or only the transactions")}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["files"] >= 1 and p["transactions"] >= 0, f"{self.name}: files must be >= 1, transactions >= 0",
             "e.g. files=1000,transactions=50000")
        need(0 < p["min"] <= p["max"], f"{self.name}: need 0 < min <= max", "e.g. min=500,max=10000")
        need(p["dir_blocks"] >= 1, f"{self.name}: dir_blocks must be at least 1", "e.g. dir_blocks=16")

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        fs = _SimpleFs(self.params, capacity, block_size)
        rng = make_rng(seed)
        p = self.params
        emit_pool = p["phase"] == "all"
        for _ in range(p["files"]):
            reqs = fs.create(rng)
            if emit_pool:
                yield from reqs
        if emit_pool and p["fsync"] == "transaction":
            yield HostRequest("flush", 0, 0, None)
        for _ in range(p["transactions"]):
            if rng.random() < 0.5 or not fs.files:
                yield from fs.create(rng)
            else:
                yield from fs.delete(rng)
            if fs.files:
                yield from (fs.read(rng) if rng.random() < 0.5 else fs.append(rng))
            if p["fsync"] == "transaction":
                yield HostRequest("flush", 0, 0, None)


class _SimpleFs:
    """Inode table, block bitmap, directory blocks and a next-fit block allocator."""

    def __init__(self, p: dict[str, Any], capacity: int, block: int) -> None:
        self.p, self.block = p, block
        total = capacity // block
        max_files = p["files"] + p["transactions"] + 1
        self.inode_blocks = -(-max_files // INODES_PER_BLOCK)
        self.bitmap_blocks = -(-total // (8 * block))
        self.dir_start = self.inode_blocks + self.bitmap_blocks
        self.data_start = self.dir_start + p["dir_blocks"]
        self.free = np.ones(max(total - self.data_start, 0), dtype=bool)
        blocks_max = -(-p["max"] // block)
        need(len(self.free) >= blocks_max * (p["files"] + 2),
             f"postmark: {p['files']} files of up to {p['max']} bytes do not fit a {capacity}-byte array",
             "use fewer files or a larger array")
        self.cursor = 0
        self.files: dict[int, tuple[int, list[int]]] = {}  # id -> (bytes, data block numbers)
        self.ids: list[int] = []  # live ids, for uniform choice
        self.next_id = 0

    # -- helpers -----------------------------------------------------------------------------
    def _alloc(self, n: int) -> list[int]:
        out: list[int] = []
        free = self.free
        while len(out) < n:
            idx = np.flatnonzero(free[self.cursor:])
            if len(idx) == 0:
                idx = np.flatnonzero(free[:self.cursor])
                need(len(idx) > 0, "postmark: the array is full", "use fewer or smaller files")
                base = 0
            else:
                base = self.cursor
            take = (idx[: n - len(out)] + base).tolist()
            free[take] = False
            out += take
            self.cursor = (take[-1] + 1) % len(free)
        return out

    def _runs(self, op: str, blocks: list[int]) -> Iterator[HostRequest]:
        """Requests for ``blocks`` (data-area numbers), one per contiguous run."""
        bs, i = self.block, 0
        while i < len(blocks):
            j = i
            while j + 1 < len(blocks) and blocks[j + 1] == blocks[j] + 1:
                j += 1
            yield HostRequest(op, (self.data_start + blocks[i]) * bs, (j - i + 1) * bs, None)
            i = j + 1

    def _meta(self, fid: int, blocks: list[int], directory: bool) -> list[HostRequest]:
        bs = self.block
        out = [HostRequest("write", (fid // INODES_PER_BLOCK) * bs, bs, None)]
        bitmap = sorted({self.inode_blocks + b // (8 * bs) for b in blocks})
        out += [HostRequest("write", b * bs, bs, None) for b in bitmap]
        if directory:
            out.append(HostRequest("write", (self.dir_start + fid % self.p["dir_blocks"]) * bs, bs, None))
        return out

    def _pick(self, rng: np.random.Generator) -> int:
        return self.ids[int(rng.integers(0, len(self.ids)))]

    # -- operations --------------------------------------------------------------------------
    def create(self, rng: np.random.Generator) -> list[HostRequest]:
        size = int(rng.integers(self.p["min"], self.p["max"] + 1))
        fid, self.next_id = self.next_id, self.next_id + 1
        blocks = self._alloc(-(-size // self.block))
        self.files[fid] = (size, blocks)
        self.ids.append(fid)
        return [*self._runs("write", blocks), *self._meta(fid, blocks, True)]

    def delete(self, rng: np.random.Generator) -> list[HostRequest]:
        fid = self._pick(rng)
        _, blocks = self.files.pop(fid)
        i = self.ids.index(fid)
        self.ids[i] = self.ids[-1]
        self.ids.pop()
        self.free[blocks] = True
        return self._meta(fid, blocks, True)

    def read(self, rng: np.random.Generator) -> list[HostRequest]:
        return list(self._runs("read", self.files[self._pick(rng)][1]))

    def append(self, rng: np.random.Generator) -> list[HostRequest]:
        fid = self._pick(rng)
        size, blocks = self.files[fid]
        more = min(int(rng.integers(self.p["min"], self.p["max"] + 1)), self.p["max"] - size)
        have = len(blocks) * self.block
        need_blocks = max(0, -(-(size + more - have) // self.block)) if more > 0 else 0
        new = self._alloc(need_blocks) if need_blocks else []
        # the partly filled last block is rewritten, then any new blocks
        tail = blocks[-1:] if more > 0 and size % self.block else []
        self.files[fid] = (size + max(more, 0), blocks + new)
        return [*self._runs("write", tail + new), *self._meta(fid, new, False)] if more > 0 else \
            [self._meta(fid, [], False)[0]]


__all__ = ["PostMark"]
