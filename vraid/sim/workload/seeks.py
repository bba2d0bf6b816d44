"""Bonnie's random-seek test as block I/O (seed 002, sec. 4.2.2 and 4.3.3, Fig. 8b)."""

from __future__ import annotations

from typing import Any, Iterator

from vraid.core.units import format_size
from .base import CHUNK, HostRequest, Param, Workload, make_rng, need


class Seeks(Workload):
    """``procs`` processes seek to random chunks of one ``file``-byte file, read each chunk, and
    write a share ``update`` of them back in place at once (seed 002 sec. 4.2.2: "4 concurrent
    processes operating on one large file of 100MB ... a total of 200,000 lseek()s ... Each such
    random seek is followed by a read ... 10% of them are rewritten immediately in the same
    location").

    The file lies contiguously from array offset ``start`` (a file written alone on an empty
    filesystem); a seek picks a whole ``chunk`` uniformly. Each process is one stream: its read,
    then, for a drawn share ``update``, the write of the same chunk. Closed loop, one request
    outstanding per process, ``seeks`` reads in all (the request count is ``seeks`` plus the
    write-backs). ``update=0`` is the ablation with no write-back.

    vraid's stand-in differs from the test it models in two ways: there is no page cache, so
    every read reaches the array (Bonnie's 100 MB file against 34 MB of file cache, sec. 4.3.2:
    most do), and the closed loop hands the next request to whichever process is free, so a
    write-back may run beside its own read instead of after it. bonnie++ 2.00, which the
    ``vc-raid`` mount runs, seeks 8 KiB chunks (``chunk``'s default) with 5 processes, 8,192 in
    all; Bonnie 2.0.6 with 4 processes, 200,000.
    """

    name = "seeks"
    summary = "Bonnie's random seeks: processes read random chunks of a file, rewriting a share in place"
    source = "paper 002 (He & Yang, VC-RAID), sec. 4.2.2 and 4.3.3, Fig. 8b (Bonnie [BON 96])"
    PARAMS = {"procs": Param("int", 4, "concurrent processes (the paper: 4; bonnie++: 5)"),
              "seeks": Param("int", 200000, "seeks (reads) of all processes (the paper: 200,000; bonnie++: 8,192)"),
              "file": Param("size", 100 << 20, "bytes of the file (the paper: 100 MB)"),
              "chunk": Param("size", 8192, "bytes read (and rewritten) per seek"),
              "update": Param("float", 0.1, "share of the reads written back in place (the paper: 10 %)"),
              "start": Param("size", 0, "array offset of the file")}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["procs"] >= 1, "seeks: procs must be at least 1", "e.g. procs=4")
        need(p["seeks"] >= 1, "seeks: seeks must be at least 1", "e.g. seeks=8192")
        need(0.0 <= p["update"] <= 1.0, f"seeks: update={p['update']} is not a share between 0 and 1",
             "e.g. update=0.1 (one read in ten is written back)")

    @property
    def closed_loop(self) -> int:
        return self.params["procs"]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p = self.params
        self._fit("chunk", p["chunk"], capacity, block_size)
        self._fit("file", p["file"], capacity, block_size)
        need(p["start"] % block_size == 0 and p["start"] + p["file"] <= capacity,
             f"seeks: a {format_size(p['file'])} file from offset {format_size(p['start'])} does not fit the "
             f"{format_size(capacity)} array", "make file or start smaller, or the array larger")
        chunks = p["file"] // p["chunk"]
        need(chunks > 0, f"seeks: a {format_size(p['file'])} file holds no {format_size(p['chunk'])} chunk",
             "make chunk smaller than file")
        rng, done, procs = make_rng(seed), 0, p["procs"]
        while done < p["seeks"]:
            picks, rewrite = rng.integers(0, chunks, CHUNK).tolist(), (rng.random(CHUNK) < p["update"]).tolist()
            for pick, again in zip(picks, rewrite):
                if done == p["seeks"]:
                    return
                off, stream = p["start"] + pick * p["chunk"], done % procs
                yield HostRequest("read", off, p["chunk"], None, stream)
                if again:
                    yield HostRequest("write", off, p["chunk"], None, stream)
                done += 1
