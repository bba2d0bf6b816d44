"""A host page cache in front of another workload: what the block layer sees of buffered writes.

Seed 000's Tiobench writes (sec. IV-B, Fig. 11) go through ext3 and the Linux 2.6.11 page
cache before they reach the RAID driver: the driver sees the page cache's *writeback*, not
the program's random writes. This wrapper is vraid's model of that path (the paper does not
describe it; the parameters below are ours, each with its reason):

* ``dirty`` (bytes): the dirty limit. A write to a page already dirty is absorbed (it never
  reaches the array on its own); when ``dirty`` bytes of pages are dirty, writeback starts.
  For seed 000 the experiment sets it to Linux 2.6's ``vm.dirty_ratio`` of 40 % of the
  memory the page cache can use: the paper's 1 GB of main memory less the 512 MiB the RAID
  driver's cache takes (sec. IV-A), i.e. 0.4 x 512 MiB.
* ``background`` (bytes): writeback stops when this much is still dirty. 0 (the default)
  writes every dirty page back at once, as a writer throttled at the limit with nothing else
  to do sees it; Linux's ``dirty_background_ratio`` (10 %) would stop pdflush earlier.
* ``order``: ``ascending`` (the default) writes the pages back in ascending offset order: 2.6
  writeback walks each file's dirty pages in page-index order and Tiobench's per-thread files
  are taken as contiguous extents one after the other, so file by file in index order is
  ascending offset order. ``arrival`` writes them back in the order they were first dirtied
  (no sorting: the bound of what ordering buys).
* ``gap`` (time): the written-back pages are handed to the array one ``gap`` apart, open
  loop; the simulator's ``max_in_flight`` (the block layer's queue) bounds how many are
  outstanding. 1 us: writeback issues as fast as the queue takes them.

Reads of a dirty page are served by the page cache (dropped); other reads pass through in
order with the writeback. At the end every page still dirty is written back (Tiobench's
final sync). ``of`` is the wrapped workload's spec with ``;`` in place of ``,``
(``page-cache:of=random-write:workspace=1G;threads=1,dirty=200M``).

:func:`writeback` is the model itself, on page offsets; the experiment ``msc-ct`` uses it
through this workload.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from .base import HostRequest, Param, Workload, need


def writeback(offsets: Iterable[int], dirty_pages: int, *, background_pages: int = 0,
              order: str = "ascending") -> list[int]:
    """Page offsets a write-back page cache hands down for the page writes ``offsets``.

    A write to a dirty page is absorbed; when ``dirty_pages`` pages are dirty, pages are
    written back (ascending, or in first-dirtied order) until ``background_pages`` remain;
    at the end the rest is.
    """
    if dirty_pages < 1:
        raise ValueError("dirty_pages must be at least 1")
    if not 0 <= background_pages < dirty_pages:
        raise ValueError("background_pages must be at least 0 and below dirty_pages")
    if order not in ("ascending", "arrival"):
        raise ValueError(f"order must be 'ascending' or 'arrival', not {order!r}")
    out: list[int] = []
    dirty: dict[int, None] = {}  # insertion order = first dirtied
    for off in offsets:
        dirty[off] = None
        if len(dirty) >= dirty_pages:
            out.extend(_flush(dirty, len(dirty) - background_pages, order))
    out.extend(_flush(dirty, len(dirty), order))
    return out


def _flush(dirty: dict[int, None], n: int, order: str) -> list[int]:
    pages = sorted(dirty) if order == "ascending" else list(dirty)
    chosen = pages[:n]
    for p in chosen:
        del dirty[p]
    return chosen


class PageCache(Workload):
    """Another workload's writes through a write-back host page cache (see the module doc)."""

    name = "page-cache"
    summary = "another workload through a write-back host page cache (dirty limit, writeback order)"
    source = "vraid's model of paper 000's Tiobench-through-ext3 path (sec. IV-A, IV-B)"
    PARAMS = {"of": Param("path", None, "the wrapped workload's spec, ';' in place of ','"),
              "dirty": Param("size", 200 << 20, "dirty limit: writeback starts when this much is dirty"),
              "background": Param("size", 0, "writeback stops when this much is still dirty (0: all)"),
              "order": Param("ascending|arrival", "ascending", "writeback order of the dirty pages"),
              "page": Param("size", 4096, "page size"),
              "gap": Param("time", 1e-6, "time between two written-back pages handed to the array")}
    #: the wrapped workload's parser: the package's ``parse_workload``, handed in by
    #: vraid.sim.workload when it registers this class (a wrapper must not import its registry)
    parse_inner: Callable[[str], Workload]

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["of"] is not None, "page-cache: no wrapped workload", "write page-cache:of=random-write:workspace=1G")
        need(p["page"] > 0 and p["dirty"] >= p["page"], "page-cache: dirty must hold at least one page",
             "e.g. dirty=200M")
        need(0 <= p["background"] < p["dirty"], "page-cache: background must be below dirty", "e.g. background=0")
        need(p["gap"] > 0, "page-cache: gap must be positive", "e.g. gap=1us")
        need(p["of"].partition(":")[0].strip() != self.name, "page-cache: cannot wrap a page cache",
             "wrap the workload itself")
        self.inner = self.parse_inner(p["of"].replace(";", ","))

    @property
    def closed_loop(self) -> None:
        return None

    @property
    def uses_seed(self) -> bool:  # type: ignore[override]
        return self.inner.uses_seed

    def requests(self, capacity: int, block_size: int, count: int, seed: int) -> Iterator[HostRequest]:
        """``count`` requests of the wrapped workload, through the page cache (fewer come out)."""
        need(count >= 0, f"count {count} is negative", "ask for zero or more requests")
        return self._through(self.inner.requests(capacity, block_size, count, seed))

    def _through(self, inner: Iterable[HostRequest]) -> Iterator[HostRequest]:
        p = self.params
        page = p["page"]
        limit, keep = p["dirty"] // page, p["background"] // page
        dirty: dict[int, None] = {}
        n = 0
        for req in inner:
            pages = range(req.offset // page, -(-(req.offset + req.length) // page))
            if req.op == "write":
                for q in pages:
                    dirty[q] = None
                    if len(dirty) >= limit:
                        for off in _flush(dirty, len(dirty) - keep, p["order"]):
                            yield HostRequest("write", off * page, page, n * p["gap"])
                            n += 1
            elif req.op == "read" and all(q in dirty for q in pages):
                continue
            else:
                yield HostRequest(req.op, req.offset, req.length, n * p["gap"], req.stream)
                n += 1
        for off in _flush(dirty, len(dirty), p["order"]):
            yield HostRequest("write", off * page, page, n * p["gap"])
            n += 1

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:  # pragma: no cover
        raise NotImplementedError("PageCache overrides requests()")
