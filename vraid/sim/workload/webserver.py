"""FileBench's "Web server" personality as paper 001 ran it (sec. 5.4, Fig. 10).

Paper 001 (Baek & Park, sec. 5.4): "the 'Web server' workload personality of FileBench
version 1.1.0 ... creates multiple processes, each of which reads whole data of an arbitrary
file"; Fig. 10's caption gives the defaults: average file size ($filesize) 4 MB, number of
files ($files) 8 GB / $filesize, I/O size ($iosize) 4 KB, 32 threads ($nthreads).
"""

from __future__ import annotations

from typing import Any, Iterator

from vraid.core.units import format_size
from .base import HostRequest, Param, Workload, make_rng, need


class WebServer(Workload):
    """``threads`` threads, each reading one whole file after another in ``iosize`` reads
    (FileBench's web server personality, paper 001 sec. 5.4, Fig. 10).

    The workspace is ``total`` bytes (the paper: 8 GB; default the whole array) cut into
    ``total / filesize`` files of ``filesize`` bytes (the paper's average; every file has
    it here), stored one after the other from ``start`` as FileBench's preallocation writes
    them. Each thread opens a file, reads it from first byte to last, and opens the next:
    ``opens`` whole-file reads in all (default: one per file, the whole workspace once), the
    files in a seeded random order without repeats, dealt to the threads in turn, so no two
    threads read the same file at once (FileBench draws with repeats from 2,048 files,
    where two threads rarely meet; at vraid's smaller workspaces they would often share
    pages instead of reading the disks). Requests are round robin over the threads and
    tagged with the thread as ``stream``; ``vraid sim --host-readahead`` keeps one
    outstanding per thread and gives each opened file a fresh read-ahead (``reopens``).

    Left out: the personality's 16 KiB append to a log file after every ten file reads
    (0.04 % of the bytes at 4 MiB files) and its open/close metadata.
    """

    name = "webserver"
    summary = "FileBench web server: threads read whole files one after another (paper 001 Fig. 10)"
    source = "paper 001 (Baek & Park, SASEQP/MSP), sec. 5.4, Fig. 10"
    PARAMS = {"threads": Param("int", 32, "concurrent threads ($nthreads; the paper: 32)"),
              "filesize": Param("size", 4 << 20, "bytes of each file ($filesize; the paper's average: 4 MB)"),
              "iosize": Param("size", 4096, "read size ($iosize; the paper: 4 KB)"),
              "total": Param("size", None, "workspace bytes of all files (the paper: 8 GB; default: whole array)"),
              "opens": Param("int", None, "whole-file reads in all (default: one per file)"),
              "start": Param("size", 0, "array offset of the first file")}
    #: a thread reads many files: the host model opens the file a read starts
    reopens = True

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["threads"] >= 1, "webserver: threads must be at least 1", "e.g. threads=32")
        need(p["filesize"] > 0 and p["iosize"] > 0, "webserver: filesize and iosize must be positive",
             "e.g. filesize=4M,iosize=4K")
        if p["opens"] is not None:
            need(p["opens"] >= 1, "webserver: opens must be at least 1", "e.g. opens=64")

    @property
    def closed_loop(self) -> int:
        return self.params["threads"]

    def files(self, capacity: int, block_size: int) -> list[tuple[int, int]]:
        """(array offset, bytes) of every file of the workspace.

        Raises:
            VraidError: when the files do not fit the array or none fits the workspace.
        """
        p = self.params
        total = p["total"] or capacity - p["start"]
        self._fit("filesize", p["filesize"], capacity, block_size)
        self._fit("iosize", p["iosize"], capacity, block_size)
        need(p["start"] % block_size == 0 and 0 <= p["start"] < capacity,
             f"webserver: start {p['start']} is not a block offset inside the array", "e.g. start=0")
        need(p["start"] + total <= capacity, f"webserver: a {format_size(total)} workspace from offset "
             f"{format_size(p['start'])} does not fit the {format_size(capacity)} array",
             "make total smaller or the array larger")
        n = total // p["filesize"]
        need(n >= 1, f"webserver: no {format_size(p['filesize'])} file fits {format_size(total)}",
             "make filesize smaller or total larger")
        return [(p["start"] + k * p["filesize"], p["filesize"]) for k in range(n)]

    def order(self, nfiles: int, seed: int) -> list[int]:
        """The files in the order they are opened: seeded permutations, one after another."""
        rng = make_rng(seed)
        opens = self.params["opens"] or nfiles
        out: list[int] = []
        while len(out) < opens:
            out.extend(int(k) for k in rng.permutation(nfiles))
        return out[:opens]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p = self.params
        files = self.files(capacity, block_size)
        order = self.order(len(files), seed)
        threads, size, iosize = p["threads"], p["filesize"], p["iosize"]
        for first in range(0, len(order), threads):  # one round: every thread reads one file
            batch = order[first:first + threads]
            for pos in range(0, size, iosize):
                for t, k in enumerate(batch):
                    yield HostRequest("read", files[k][0] + pos, min(iosize, size - pos), None, t)
