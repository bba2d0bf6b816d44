"""Host read-ahead (vraid.sim.host): SEQP's window ramp, SASEQP's strip cut, the paper's
Fig. 3/4 counts (seed 001: 11 member requests for SEQP, 7 for SASEQP) through the whole
simulator, and the ``readers`` workload."""

from __future__ import annotations

import json

import pytest

from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.sim.host import ReadaheadSpec, file_windows, init_ra_size, next_ra_size, parse_readahead
from vraid.sim.simulator import SimConfig, run_sim
from vraid.sim.workload import parse_workload

KIB = 1 << 10
PAGE = 4 * KIB


# ---------------------------------------------------------------------- the ramp (Linux 2.6.18)
def ramp(first: int, max_pages: int, n: int) -> list[int]:
    out = [first]
    while len(out) < n:
        out.append(next_ra_size(out[-1], max_pages))
    return out


def test_next_window_grows_x4_below_max_over_16_then_x2_up_to_max():
    assert ramp(4, 32, 6) == [4, 8, 16, 32, 32, 32]  # 128 KiB: 4 is not below 32/16 = 2
    assert ramp(4, 128, 6) == [4, 16, 32, 64, 128, 128]  # 512 KiB: 4 < 8 grows x4 once
    assert ramp(1, 4, 4) == [1, 2, 4, 4]  # the paper's Fig. 3 example: 1, 2, 4 blocks
    assert ramp(1, 256, 5) == [1, 4, 16, 32, 64]


def test_initial_window_from_request_size_and_max():
    assert init_ra_size(1, 32) == 4  # a 4 KiB read, max 128 KiB: x4 (1 <= 32/32)
    assert init_ra_size(1, 128) == 4
    assert init_ra_size(3, 128) == 16  # rounded up to 4 pages, <= 128/32: x4
    assert init_ra_size(8, 128) == 16  # <= max/4: x2
    assert init_ra_size(64, 128) == 128  # above max/4: the maximum
    assert init_ra_size(1, 4) == 2  # why Fig. 3's 1-block start needs init=4K


def test_larger_max_ramps_faster():
    """Sec. 5.2: "the greater the max, the greater the initial prefetch size ... the faster the
    incremental speed": SEQP512 reaches 128 KiB windows in fewer windows than SEQP128."""
    w128 = file_windows(ReadaheadSpec("seqp", 128 * KIB), 1024, 1, strip_pages=32)
    w512 = file_windows(ReadaheadSpec("seqp", 512 * KIB), 1024, 1, strip_pages=32)
    first_full = lambda ws: next(i for i, w in enumerate(ws) if w.count >= 32)  # noqa: E731
    assert first_full(w512) < first_full(w128)
    assert max(w.count for w in w512) == 128 and max(w.count for w in w128) == 32


# ---------------------------------------------------------------------- Fig. 3 / Fig. 4
FIG = dict(strip_pages=4, base_block=16)  # Fig. 1: four blocks per strip, the file at B16..B35
FIG_SPEC = {p: ReadaheadSpec(p, 16 * KIB, 4 * KIB) for p in ("seqp", "saseqp")}  # ramp 1..4 blocks


def member_requests(windows, base: int, u: int) -> int:
    """Disk requests as the paper counts them: one per strip a prefetch request touches."""
    return sum(len({(base + p) // u for p in range(w.start, w.end)}) for w in windows)


def test_fig3_seqp_windows_and_eleven_disk_requests():
    ws = file_windows(FIG_SPEC["seqp"], 20, 1, **FIG)
    assert [(16 + w.start, 16 + w.end - 1) for w in ws] == [
        (16, 16), (17, 18), (19, 22), (23, 26), (27, 30), (31, 34), (35, 35)]
    assert [w.sync for w in ws] == [True, True, False, False, False, False, False]
    assert len(ws) == 7 and member_requests(ws, 16, 4) == 11


def test_fig4_saseqp_windows_and_seven_disk_requests():
    ws = file_windows(FIG_SPEC["saseqp"], 20, 1, **FIG)
    assert [(16 + w.start, 16 + w.end - 1) for w in ws] == [
        (16, 16), (17, 18), (19, 19), (20, 23), (24, 27), (28, 31), (32, 35)]
    assert ws[2].ramp == 4 and ws[2].count == 1  # the third prefetch shrunk from 4 blocks to 1
    assert len(ws) == 7 and member_requests(ws, 16, 4) == 7


@pytest.mark.parametrize("policy,expected", [("seqp", 11), ("saseqp", 7)])
def test_fig3_fig4_counts_through_the_simulator(policy, expected):
    """The same file read by the host model into the real engine: RAID-5 of five disks, four
    4 KiB blocks per strip (the array of Fig. 1); the members see exactly 11 and 7 requests."""
    g = Geometry(level=5, ndisks=5, stripes=8, block_size=PAGE, strip_size=16 * KIB)
    assert g.data_disks * g.u == 16  # B16 is the first block of stripe 1 (strip 4)
    config = SimConfig(level=5, disks=5, strip=16 * KIB, block=PAGE, disk_size=2 << 20,
                       workload="readers:streams=1,total=80K,start=64K", requests=100,
                       host_readahead=f"{policy}:max=16K,init=4K")
    m = run_sim(config).metrics
    assert m["disk_read_requests"] == expected
    h = m["host_readahead"]
    assert h["windows"] == 7 and h["file_read_bytes"] == 80 * KIB and h["miss_pages"] == 0
    assert h["crossing_windows"] == (4 if policy == "seqp" else 0)
    assert h["streams"][0]["window_ramp"][:3] == ([4096, 8192, 16384] if policy == "seqp" else [4096, 8192, 4096])


# ---------------------------------------------------------------------- in the simulator
def test_saseqp_never_crosses_a_strip_and_seqp_does(tmp_path):
    runs = {}
    for policy in ("seqp:max=512K", "saseqp:max=512K"):
        config = SimConfig(level=0, disks=5, strip=128 * KIB, capacity=8 << 20, workload="readers:streams=2,total=8M",
                           requests=10**6, host_readahead=policy)
        runs[policy] = run_sim(config)
    seqp, saseqp = (runs[k].metrics["host_readahead"] for k in runs)
    assert seqp["crossing_windows"] > 0 and saseqp["crossing_windows"] == 0
    assert saseqp["shrunk_windows"] > 0
    for h in (seqp, saseqp):
        assert h["file_read_bytes"] == 8 << 20 and h["array_read_bytes"] == 8 << 20  # each page read once
        assert [s["file_bytes"] for s in h["streams"]] == [4 << 20, 4 << 20]
    assert runs["saseqp:max=512K"].metrics["disk_read_requests"] < runs["seqp:max=512K"].metrics["disk_read_requests"]
    # the same settings give the same JSON
    again = run_sim(runs["seqp:max=512K"].config)
    assert again.to_json() == runs["seqp:max=512K"].to_json()
    assert json.loads(again.to_json())["config"]["host_readahead"] == "seqp:max=512K"


def test_window_events_are_published():
    seen = []
    config = SimConfig(level=0, disks=5, strip=128 * KIB, capacity=2 << 20, workload="readers:streams=1,total=1M",
                       requests=10**6, host_readahead="seqp")
    run_sim(config, observe=lambda a: a.events.subscribe(lambda e: e.kind == "readahead" and seen.append(e)))
    assert [e.pages for e in seen][:5] == [4, 8, 16, 32, 32]
    assert seen[0].sync and not seen[-1].sync and {e.stream for e in seen} == {0}


def test_without_host_model_the_json_is_unchanged():
    config = SimConfig(level=0, disks=5, strip=128 * KIB, capacity=2 << 20, workload="random-read", requests=20)
    out = run_sim(config).to_dict()
    assert "host_readahead" not in out["config"] and "host_readahead" not in out["metrics"]


def test_other_workloads_read_the_array_as_one_file():
    config = SimConfig(level=0, disks=5, strip=128 * KIB, capacity=4 << 20,
                       workload="sequential:streams=1,size=4K,total=1M", requests=256, host_readahead="seqp")
    h = run_sim(config).metrics["host_readahead"]
    assert h["file_reads"] == 256 and h["streams"][0]["file_bytes"] == Geometry.for_disk_size(
        level=0, ndisks=5, disk_size=config.geometry().member_size, strip_size=128 * KIB).capacity
    assert h["hit_pages"] + h["wait_pages"] == 256 and h["miss_pages"] == 0


# ---------------------------------------------------------------------- specs and the workload
def test_parse_readahead():
    assert parse_readahead(None) is None and parse_readahead("none") is None
    assert parse_readahead("seqp") == ReadaheadSpec("seqp", 128 * KIB, None)
    spec = parse_readahead("saseqp:max=512K,init=16K")
    assert spec.text == "saseqp:max=512K,init=16K" and spec.label == "SASEQP512"
    for bad in ("lru", "seqp:max", "seqp:foo=1", "seqp:max=1K,max=2K"):
        with pytest.raises(VraidError):
            parse_readahead(bad)
    with pytest.raises(VraidError, match="page"):
        ReadaheadSpec("seqp", 6 * KIB).pages(PAGE)
    with pytest.raises(VraidError, match="above max"):
        ReadaheadSpec("seqp", 16 * KIB, 32 * KIB).pages(PAGE)


def test_readers_workload_files_and_requests():
    w = parse_workload("readers:streams=3,size=8K,total=96K,start=16K")
    assert w.files(1 << 20, PAGE) == [(16 * KIB, 32 * KIB), (48 * KIB, 32 * KIB), (80 * KIB, 32 * KIB)]
    reqs = list(w.requests(1 << 20, PAGE, 1000, 0))
    assert len(reqs) == 12 and [r.stream for r in reqs[:4]] == [0, 1, 2, 0]
    assert [r.offset for r in reqs if r.stream == 1] == [48 * KIB, 56 * KIB, 64 * KIB, 72 * KIB]
    assert w.closed_loop == 3
    with pytest.raises(VraidError):
        parse_workload("readers:streams=2,total=2M").files(1 << 20, PAGE)
