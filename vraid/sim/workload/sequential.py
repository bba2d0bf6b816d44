"""Sequential and semisequential reads of seed 001 (IOzone streams, Fig. 8; Fig. 6)."""

from __future__ import annotations

import math
from typing import Any, Iterator

from vraid.core.units import format_size
from .base import HostRequest, Param, Workload, need


class Sequential(Workload):
    """N concurrent sequential streams, IOzone-like (seed 001, sec. 5.2, Fig. 8).

    ``total`` bytes (the paper: an 8 GB aggregate file size; here by default the whole array)
    are cut into ``streams`` equal regions; stream k reads (or writes) its own region from its
    start in ``size`` requests and wraps at its end. Closed loop with one outstanding request
    per stream; streams take turns. The paper does not give IOzone's record size: 4 KiB here.
    """

    name = "sequential"
    summary = "N concurrent sequential streams, each over its own region (IOzone)"
    source = "paper 001 (Baek & Park, SASEQP/MSP), sec. 5.2, Fig. 8"
    PARAMS = {"streams": Param("int", 4, "concurrent processes (the paper: 1..64)"),
              "size": Param("size", 4096, "request (record) size"),
              "op": Param("read|write", "read", "read or write"),
              "total": Param("size", None, "aggregate bytes of all streams (default: whole array)")}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["streams"] >= 1, "sequential: streams must be at least 1", "e.g. streams=8")

    @property
    def closed_loop(self) -> int:
        return self.params["streams"]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, size, n = self.params, self.params["size"], self.params["streams"]
        total = p["total"] or capacity
        self._fit("total", total, capacity, block_size)
        self._fit("size", size, capacity, block_size)
        region = total // n // size * size
        need(region > 0, f"sequential: {n} streams of {format_size(size)} requests do not fit "
             f"{format_size(total)}", "use fewer streams or a smaller size")
        pos, op = 0, p["op"]
        while True:
            for s in range(n):
                yield HostRequest(op, s * region + pos, size, None, s)
            pos = (pos + size) % region


class Semisequential(Workload):
    """A file read at the file level, as the block level sees it (seed 001, sec. 4, Fig. 6).

    Before each run of ``per_meta`` data blocks one metadata block is read. With the defaults
    the block sequence is (0, 16, 17, 18, 1, 19, 20, 21, 2, 22, 23, 24, 3, 25, 26, 27): a
    12-block file at B16..B27 whose metadata is B0..B3. Block numbers count array blocks of
    ``block_size``; one request per block, closed loop, one outstanding (a single reader). The
    file is read again after its last block. Raise ``file_blocks`` (and ``data_start``) for reads
    long enough to drive MSP's sequential counter to SC_thresh = 38.
    """

    name = "semisequential"
    summary = "data blocks interleaved with metadata blocks (a file read seen at block level)"
    source = "paper 001 (Baek & Park, SASEQP/MSP), sec. 4, Fig. 6"
    PARAMS = {"meta_start": Param("int", 0, "first metadata block"),
              "data_start": Param("int", 16, "first data block of the file"),
              "file_blocks": Param("int", 12, "data blocks in the file"),
              "per_meta": Param("int", 3, "data blocks located by one metadata block"),
              "op": Param("read|write", "read", "read or write")}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["file_blocks"] >= 1 and p["per_meta"] >= 1 and min(p["meta_start"], p["data_start"]) >= 0,
             "semisequential: file_blocks and per_meta must be at least 1, block numbers not negative",
             "e.g. file_blocks=120")
        meta = range(p["meta_start"], p["meta_start"] + math.ceil(p["file_blocks"] / p["per_meta"]))
        data = range(p["data_start"], p["data_start"] + p["file_blocks"])
        need(meta.stop <= data.start or data.stop <= meta.start,
             f"semisequential: metadata blocks {meta.start}..{meta.stop - 1} overlap data blocks "
             f"{data.start}..{data.stop - 1}", f"set data_start={meta.stop} or more")
        self.last_block = max(meta.stop, data.stop) - 1

    @property
    def closed_loop(self) -> int:
        return 1

    def block_sequence(self) -> list[int]:
        """Array block numbers of one read of the file, metadata included."""
        p, seq = self.params, []
        for i in range(p["file_blocks"]):
            if i % p["per_meta"] == 0:
                seq.append(p["meta_start"] + i // p["per_meta"])
            seq.append(p["data_start"] + i)
        return seq

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        need((self.last_block + 1) * block_size <= capacity, f"semisequential: block {self.last_block} is "
             "past the end of the array", "lower data_start or file_blocks, or use a larger array")
        op, one_pass = self.params["op"], [b * block_size for b in self.block_sequence()]
        while True:
            for off in one_pass:
                yield HostRequest(op, off, block_size, None)
