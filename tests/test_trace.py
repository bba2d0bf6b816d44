"""The trace format v1: writer, reader, validation with line numbers, and replay."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.errors import VraidError
from vraid.sim.trace import MAGIC, TraceHeader, TraceWriter, read_trace, read_trace_header, replay_requests
from vraid.sim.workload import HostRequest, parse_workload

CAP = 1 << 20
BLOCK = 4096


def write_trace(path, body: str, header: str = f"{MAGIC} capacity={CAP} block={BLOCK}") -> str:
    path.write_text(header + "\n" + body)
    return str(path)


def test_writer_header_and_lines(tmp_path):
    path = tmp_path / "t.trace"
    with TraceWriter(path, capacity=CAP, block=BLOCK) as tw:
        tw.record(100.0, "W", 0, 4096)
        tw.record(100.5, "read", 8192, 16384)
        tw.record(101.25, "F", 0, 0)
    lines = path.read_text().splitlines()
    assert lines[0] == f"# vraid-trace v1 capacity={CAP} block={BLOCK}"
    assert lines[1:] == ["0.000000000 W 0 4096", "0.500000000 R 8192 16384", "1.250000000 F 0 0"]
    assert read_trace_header(path) == TraceHeader(CAP, BLOCK)
    assert list(read_trace(path)) == [HostRequest("write", 0, 4096, 0.0), HostRequest("read", 8192, 16384, 0.5),
                                      HostRequest("flush", 0, 0, 1.25)]
    assert tw.records == 3


records = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from("RWF"), st.integers(0, CAP // BLOCK - 1),
                             st.integers(1, 8)), max_size=200)


@settings(max_examples=60, deadline=None)
@given(recs=records)
def test_round_trip(tmp_path_factory, recs):
    path = tmp_path_factory.mktemp("rt") / "t.trace"
    t, expected = 0, []
    with TraceWriter(path, capacity=CAP, block=BLOCK, flush_every=7) as tw:
        for gap_us, op, blk, nblk in recs:
            t += gap_us
            off, length = (0, 0) if op == "F" else (blk * BLOCK, min(nblk * BLOCK, CAP - blk * BLOCK))
            tw.record(5.0 + t * 1e-6, op, off, length)
            expected.append((op, off, length, t * 1e-6))
    got = list(read_trace(path))
    assert [(r.op[0].upper(), r.offset, r.length) for r in got] == [e[:3] for e in expected]
    t0 = expected[0][3] if expected else 0.0
    assert [r.at for r in got] == pytest.approx([e[3] - t0 for e in expected], abs=2e-9)


def test_writer_buffers_and_flushes_periodically(tmp_path):
    path = tmp_path / "b.trace"
    tw = TraceWriter(path, capacity=CAP, flush_every=100, flush_interval=10.0)
    header = path.read_text()
    for i in range(99):
        tw.record(i * 0.01, "W", 0, 4096)
    assert path.read_text() == header                 # still buffered
    tw.record(0.99, "W", 0, 4096)
    assert len(path.read_text().splitlines()) == 101  # the 100th record flushed the buffer
    tw.record(5.0, "R", 0, 4096)
    assert len(path.read_text().splitlines()) == 101
    tw.record(11.0, "R", 0, 4096)                      # 10 s of trace time since the last flush
    assert len(path.read_text().splitlines()) == 103
    tw.record(11.5, "R", 0, 4096)
    tw.close()
    tw.close()
    assert len(path.read_text().splitlines()) == 104


def test_record_after_close_raises(tmp_path):
    tw = TraceWriter(tmp_path / "c.trace")
    tw.record(0.0, "W", 0, 4096)
    tw.close()
    with pytest.raises(VraidError, match="closed"):
        tw.record(0.0, "W", 0, 4096)


def test_writer_cannot_create(tmp_path):
    with pytest.raises(VraidError, match="cannot write trace"):
        TraceWriter(tmp_path / "no" / "such" / "dir.trace")


def test_writer_is_cheap(tmp_path):
    n = 100_000
    with TraceWriter(tmp_path / "fast.trace", capacity=1 << 40) as tw:
        start = time.perf_counter()
        for i in range(n):
            tw.record(i * 1e-5, "W", i * 4096, 4096)
        per_call = (time.perf_counter() - start) / n
    assert per_call < 10e-6, f"{per_call * 1e6:.2f} us per record"


@pytest.mark.parametrize("body,lineno,words", [
    ("0.0 W 0 4096\n0.1 W 0\n", 3, ["3 fields"]),
    ("0.0 W 0 4096\n0.1 W 0 4096 9\n", 3, ["5 fields"]),
    ("abc W 0 4096\n", 2, ["time 'abc'"]),
    ("-1 W 0 4096\n", 2, ["time '-1'"]),
    ("nan W 0 4096\n", 2, ["time 'nan'"]),
    ("0.5 W 0 4096\n0.4 R 0 4096\n", 3, ["goes back"]),
    ("0.0 X 0 4096\n", 2, ["op 'X'"]),
    ("0.0 W -4096 4096\n", 2, ["offset '-4096'"]),
    ("0.0 W 0 4k\n", 2, ["length '4k'"]),
    ("0.0 W 0 0\n", 2, ["length 0"]),
    ("0.0 F 0 4096\n", 2, ["flush"]),
    (f"0.0 W {CAP - 4096} 8192\n", 2, ["past the header's capacity"]),
    ("# a comment\n\n0.0 W 0 4096\n1.0 R\n", 5, ["2 fields"]),
])
def test_bad_lines_rejected_with_line_numbers(tmp_path, body, lineno, words):
    path = write_trace(tmp_path / "bad.trace", body)
    with pytest.raises(VraidError) as err:
        list(read_trace(path))
    assert f"{path}:{lineno}:" in str(err.value)
    for word in words:
        assert word in str(err.value)
    assert err.value.hint


@pytest.mark.parametrize("header,words", [
    ("0.0 W 0 4096", ["not a vraid trace"]),
    ("# vraid-trace v2 capacity=1 block=1", ["another version"]),
    (f"{MAGIC} capacity=10", ["lacks"]),
    (f"{MAGIC} capacity=ten block=4096", ["capacity='ten'"]),
    (f"{MAGIC} capacity=10 block=0", ["block size"]),
])
def test_bad_headers(tmp_path, header, words):
    path = write_trace(tmp_path / "h.trace", "", header=header)
    with pytest.raises(VraidError) as err:
        read_trace_header(path)
    assert f"{path}:1:" in str(err.value)
    for word in words:
        assert word in str(err.value)


def test_header_unknown_keys_ignored_and_capacity_zero_unchecked(tmp_path):
    path = write_trace(tmp_path / "u.trace", f"0 W {1 << 40} 4096\n",
                       header=f"{MAGIC} capacity=0 block=512 host=lab3")
    assert read_trace_header(path) == TraceHeader(0, 512)
    assert list(read_trace(path)) == [HostRequest("write", 1 << 40, 4096, 0.0)]


def test_missing_file(tmp_path):
    with pytest.raises(VraidError, match="cannot read trace"):
        list(read_trace(tmp_path / "absent.trace"))


# ---------------------------------------------------------------- replay
BODY = "10.0 W 0 4096\n10.5 R 8192 8192\n10.75 F 0 0\n12.0 W 4096 4096\n"


def test_replay_keeps_inter_arrival_times_relative_to_first(tmp_path):
    path = write_trace(tmp_path / "r.trace", BODY)
    w = parse_workload(f"replay:{path}")
    assert w.closed_loop is None
    got = list(w.requests(CAP, BLOCK, 100, 0))
    assert got == [HostRequest("write", 0, 4096, 0.0), HostRequest("read", 8192, 8192, 0.5),
                   HostRequest("flush", 0, 0, 0.75), HostRequest("write", 4096, 4096, 2.0)]
    fast = list(parse_workload(f"replay:file={path},speed=2,flush=drop").requests(CAP, BLOCK, 100, 0))
    assert [r.at for r in fast] == [0.0, 0.25, 1.0] and "flush" not in {r.op for r in fast}
    assert len(list(w.requests(CAP, BLOCK, 2, 0))) == 2                     # count still caps a replay
    assert list(w.requests(CAP, BLOCK, 100, 0)) == list(w.requests(CAP, BLOCK, 100, 99))  # seed unused


def test_replay_beyond_capacity_rejects_or_wraps(tmp_path):
    path = write_trace(tmp_path / "big.trace", "0 W 0 4096\n1 W 65536 4096\n2 R 126976 8192\n",
                       header=f"{MAGIC} capacity={1 << 20} block=4096")
    small = 128 << 10
    with pytest.raises(VraidError) as err:
        list(parse_workload(f"replay:{path}").requests(small, BLOCK, 100, 0))
    assert f"{path}:4:" in str(err.value) and "beyond=wrap" in err.value.hint
    wrapped = list(parse_workload(f"replay:{path},beyond=wrap").requests(64 << 10, BLOCK, 100, 0))
    assert [(r.offset, r.length) for r in wrapped] == [(0, 4096), (0, 4096), (57344, 8192)]
    assert all(r.offset + r.length <= 64 << 10 for r in wrapped)
    with pytest.raises(VraidError, match="past the end"):
        list(replay_requests(path, 4096, BLOCK, beyond="wrap"))              # 8 KiB cannot wrap into 4 KiB


def test_replay_errors_surface_at_the_call(tmp_path):
    with pytest.raises(VraidError, match="not a vraid trace|cannot tell the trace format"):
        parse_workload(f"replay:{write_trace(tmp_path / 'x.trace', '', header='hello')}").requests(CAP, BLOCK, 5, 0)


def test_recorded_trace_replays_identically(tmp_path):
    """What a mount records, the simulator replays: the same requests at the same relative times."""
    source = list(parse_workload("zipf:iat=1ms").requests(10000 * BLOCK, BLOCK, 3000, 5))
    path = tmp_path / "zipf.trace"
    with TraceWriter(path, capacity=10000 * BLOCK, block=BLOCK) as tw:
        for r in source:
            tw.record(r.at, r.op, r.offset, r.length)
    replayed = list(parse_workload(f"replay:{path}").requests(10000 * BLOCK, BLOCK, 10**6, 0))
    assert [(r.op, r.offset, r.length) for r in replayed] == [(r.op, r.offset, r.length) for r in source]
    assert [r.at for r in replayed] == pytest.approx([r.at - source[0].at for r in source], abs=2e-9)
