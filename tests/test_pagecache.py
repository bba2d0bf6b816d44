"""The host page-cache workload wrapper (vraid.sim.workload.pagecache)."""

import pytest

from vraid.errors import VraidError
from vraid.sim.workload import parse_workload
from vraid.sim.workload.pagecache import PageCache, writeback

MiB = 1 << 20


def test_writeback_absorbs_and_sorts():
    assert writeback([40, 8, 40, 16, 0, 24, 8], 3) == [8, 16, 40, 0, 8, 24]
    assert writeback([], 5) == []
    # background: stop with that many pages still dirty (the lowest go first)
    assert writeback([5, 1, 3, 2], 3, background_pages=1) == [1, 3, 2, 5]
    assert writeback([5, 1, 3], 3, order="arrival") == [5, 1, 3]
    for bad in (dict(dirty_pages=0), dict(dirty_pages=2, background_pages=2), dict(dirty_pages=2, order="x")):
        with pytest.raises(ValueError):
            writeback([0], **bad)


def test_workload_is_the_model_on_the_wrapped_writes():
    spec = "page-cache:of=random-write:workspace=4M;threads=2,dirty=256K"
    w = parse_workload(spec)
    assert isinstance(w, PageCache) and w.closed_loop is None
    assert parse_workload(w.spec).params == w.params
    inner = [r.offset for r in parse_workload("random-write:workspace=4M,threads=2").requests(64 * MiB, 4096, 500, 7)]
    out = list(w.requests(64 * MiB, 4096, 500, 7))
    assert [r.offset for r in out] == writeback(inner, 64)
    assert all(r.op == "write" and r.length == 4096 for r in out)
    assert [r.at for r in out[:3]] == pytest.approx([0.0, 1e-6, 2e-6])
    assert len(out) < 500  # overwrites of dirty pages were absorbed
    assert out == list(parse_workload(spec).requests(64 * MiB, 4096, 500, 7))  # deterministic


def test_reads_of_dirty_pages_are_served_by_the_page_cache():
    w = parse_workload("page-cache:of=zipf:blocks=64;write_ratio=0.5,dirty=1M")
    reqs = list(w.requests(64 * MiB, 4096, 400, 1))
    inner = list(parse_workload("zipf:blocks=64,write_ratio=0.5").requests(64 * MiB, 4096, 400, 1))
    assert 0 < sum(r.op == "read" for r in reqs) < sum(r.op == "read" for r in inner)


@pytest.mark.parametrize("spec, word", [
    ("page-cache", "no wrapped workload"),
    ("page-cache:of=random-write,dirty=1K", "at least one page"),
    ("page-cache:of=random-write,dirty=1M,background=1M", "background"),
    ("page-cache:of=page-cache", "cannot wrap"),
    ("page-cache:of=nosuch", "unknown workload"),
])
def test_bad_specs(spec, word):
    with pytest.raises(VraidError, match=word):
        parse_workload(spec)
