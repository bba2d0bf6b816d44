"""Concurrent sequential readers of their own files (seed 001, sec. 5.2, Fig. 8: IOzone)."""

from __future__ import annotations

from typing import Any, Iterator

from vraid.core.units import format_size
from .base import HostRequest, Param, Workload, need


class Readers(Workload):
    """N processes, each reading its own file once from start to end (IOzone's concurrent
    sequential reads, seed 001 sec. 5.2, Fig. 8).

    ``total`` bytes (the paper: a fixed aggregate file size of 8 GB; default the whole array)
    are cut into ``streams`` files of equal whole-block size, stored contiguously one after
    the other from array offset ``start`` (as ext3 lays out a large file written alone; the
    paper's Fig. 3 file is such an extent). Stream k reads file k in ``size`` requests (the
    last one shorter if ``size`` does not divide the file) and stops at its end: a finite
    workload of about ``total / size`` requests. Requests are generated round robin and tagged
    with ``stream``; ``vraid sim --host-readahead`` keeps one outstanding per stream and puts
    its read-ahead in front of each file (:meth:`files` tells it where they are). Without a
    host model it is a closed loop of ``streams`` outstanding requests, like ``sequential``.
    The paper does not give IOzone's record size: 4 KiB (one page) by default.
    """

    name = "readers"
    summary = "N concurrent sequential readers, each reading its own contiguous file once (IOzone)"
    source = "paper 001 (Baek & Park, SASEQP/MSP), sec. 5.2, Fig. 8"
    PARAMS = {"streams": Param("int", 1, "concurrent readers, one file each (the paper: 1..64)"),
              "size": Param("size", 4096, "request (record) size"),
              "total": Param("size", None, "aggregate bytes of all files (default: whole array)"),
              "start": Param("size", 0, "array offset of the first file")}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["streams"] >= 1, "readers: streams must be at least 1", "e.g. streams=8")

    @property
    def closed_loop(self) -> int:
        return self.params["streams"]

    def files(self, capacity: int, block_size: int) -> list[tuple[int, int]]:
        """(array offset, bytes) of each stream's file.

        Raises:
            VraidError: when the files do not fit the array or a file would be empty.
        """
        p, n = self.params, self.params["streams"]
        total = p["total"] or capacity - p["start"]
        self._fit("size", p["size"], capacity, block_size)
        need(p["start"] % block_size == 0 and 0 <= p["start"] < capacity,
             f"readers: start {p['start']} is not a block offset inside the array", "e.g. start=0")
        need(p["start"] + total <= capacity, f"readers: {format_size(total)} of files from offset "
             f"{format_size(p['start'])} do not fit the {format_size(capacity)} array",
             "make total smaller or the array larger")
        each = total // n // block_size * block_size
        need(each > 0, f"readers: {n} files do not fit {format_size(total)}", "use fewer streams or a larger total")
        return [(p["start"] + k * each, each) for k in range(n)]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        files, size = self.files(capacity, block_size), self.params["size"]
        pos = 0
        while pos < files[0][1]:
            for s, (base, length) in enumerate(files):
                yield HostRequest("read", base + pos, min(size, length - pos), None, s)
            pos += size
