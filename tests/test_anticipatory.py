"""The host's anticipatory scheduler (paper 001 sec. 5.1; Linux 2.6 as-iosched): its timing rule,
its switch, and the web server workload the prefetch experiment runs (paper 001 Fig. 10)."""

from __future__ import annotations

import math

import pytest

from vraid.errors import VraidError
from vraid.sim.host.anticipatory import DEFAULT_ANTIC_EXPIRE, AnticipatoryQueue
from vraid.sim.host.readahead import parse_readahead
from vraid.sim.simulator import SimConfig, run_sim
from vraid.sim.workload import parse_workload


def test_default_window_is_linux_26_antic_expire():
    assert DEFAULT_ANTIC_EXPIRE == pytest.approx(0.006)  # HZ/150 jiffies at HZ=1000
    assert parse_readahead("seqp:max=512K,antic=on").antic == pytest.approx(0.006)
    assert parse_readahead("seqp:max=512K,antic=4ms").antic == pytest.approx(0.004)
    assert parse_readahead("seqp:max=512K,antic=off").antic is None
    assert parse_readahead("seqp:max=512K").antic is None
    assert parse_readahead("seqp:max=512K,antic=4ms").text == "seqp:max=512K,antic=4ms"
    for bad in ("seqp:antic=soon", "seqp:antic=0ms", "seqp:antic=on,antic=off"):
        with pytest.raises(VraidError):
            parse_readahead(bad)


def test_reads_go_at_once_without_a_completion():
    q: AnticipatoryQueue[str] = AnticipatoryQueue(0.006)
    q.add(1, "a", 0.0)
    q.add(2, "b", 0.0)
    assert q.take(0.0) == "a" and q.take(0.0) == "b" and q.take(0.0) is None
    assert q.wait(0.0) == math.inf


def test_other_streams_wait_for_the_window_after_a_completion():
    q: AnticipatoryQueue[str] = AnticipatoryQueue(0.006)
    q.completed(1, 1.0)  # stream 1's read completes at t = 1 s
    q.add(2, "other", 1.001)
    assert q.take(1.001) is None  # held: stream 1 is anticipated until 1.006
    assert q.wait(1.001) == pytest.approx(0.005)
    assert q.take(1.0059) is None
    assert q.take(1.006) == "other"  # the window has passed: a timeout
    assert q.stats.timeouts == 1 and q.stats.hits == 0 and q.stats.held_reads == 1
    assert q.stats.held_seconds == pytest.approx(0.005)


def test_the_anticipated_stream_jumps_the_queue_and_ends_the_wait():
    q: AnticipatoryQueue[str] = AnticipatoryQueue(0.006)
    q.completed(1, 0.0)
    q.add(2, "other", 0.001)
    assert q.take(0.001) is None
    q.add(1, "mine", 0.002)
    assert q.take(0.002) == "mine"  # a hit: before the waiting read of stream 2
    assert q.take(0.002) == "other"  # and the anticipation is over
    assert q.stats.hits == 1 and q.stats.timeouts == 0
    assert q.stats.held_seconds == pytest.approx(0.001)


def test_window_must_be_positive():
    with pytest.raises(ValueError):
        AnticipatoryQueue(0.0)


def _sim(ra: str, workload: str, strip: str = "128K", total: int = 8 << 20):
    config = SimConfig(level=0, disks=5, strip=int(strip[:-1]) << 10, capacity=max(total, 32 << 20),
                       disk_model="hdd:st373454lc,stroke=partition", workload=workload, requests=10 ** 7,
                       host_readahead=ra)
    return run_sim(config).metrics


def test_scheduler_idles_the_disks_for_many_streams_and_is_off_by_default():
    work = "readers:streams=16,size=4K,total=32M"
    off = _sim("seqp:max=512K", work, total=32 << 20)
    on = _sim("seqp:max=512K,antic=on", work, total=32 << 20)
    assert "anticipation" not in off["host_readahead"]
    a = on["host_readahead"]["anticipation"]
    assert a["antic_expire_ms"] == pytest.approx(6.0)
    assert a["anticipations"] == on["host_readahead"]["array_reads"]  # one per completed window
    assert a["held_reads"] > 0 and a["held_seconds"] > 0
    assert a["hits"] > 0  # a stream's next window often comes within the window
    assert on["host_readahead"]["file_read_bytes"] == off["host_readahead"]["file_read_bytes"] == 32 << 20
    assert on["virtual_seconds"] > off["virtual_seconds"]  # idling costs time here


def test_webserver_reads_every_file_whole_by_its_threads():
    w = parse_workload("webserver:threads=4,filesize=1M,total=8M")
    files = w.files(32 << 20, 4096)
    assert files == [(k << 20, 1 << 20) for k in range(8)]
    reqs = list(w.requests(32 << 20, 4096, 10 ** 6, seed=3))
    assert len(reqs) == 8 * 256 and all(r.op == "read" and r.length == 4096 for r in reqs)
    by_thread: dict[int, list[int]] = {}
    for r in reqs:
        by_thread.setdefault(r.stream, []).append(r.offset)
    assert sorted(by_thread) == [0, 1, 2, 3]
    opened = []
    for offs in by_thread.values():  # each thread: whole files, first byte to last, one after another
        for i in range(0, len(offs), 256):
            assert offs[i:i + 256] == list(range(offs[i], offs[i] + (1 << 20), 4096))
            opened.append(offs[i] >> 20)
    assert sorted(opened) == list(range(8))  # every file once
    assert w.order(8, 3) == w.order(8, 3) and w.order(8, 3) != w.order(8, 4)


def test_webserver_under_the_host_model_opens_each_file_anew():
    m = _sim("saseqp:max=64K", "webserver:threads=4,filesize=1M,total=8M")
    h = m["host_readahead"]
    assert h["file_opens"] == 8 and h["file_read_bytes"] == 8 << 20
    assert h["crossing_windows"] == 0 and h["miss_pages"] == 0
    seqp = _sim("seqp:max=64K", "webserver:threads=4,filesize=1M,total=8M")["host_readahead"]
    assert seqp["crossing_windows"] > 0  # SEQP's unaligned ramp makes windows that span strips


def test_webserver_bad_input_is_refused():
    with pytest.raises(VraidError):
        parse_workload("webserver:threads=0")
    with pytest.raises(VraidError):
        list(parse_workload("webserver:filesize=64M,total=8M").requests(32 << 20, 4096, 10, 0))
