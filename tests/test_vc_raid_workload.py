"""The ``postmark`` sim workload (seed 002 Table 2): deterministic, flushes per transaction,
metadata writes in the metadata area, data within the array, and RAID-5 slower than RAID-0."""

from __future__ import annotations

import pytest

from vraid.errors import VraidError
from vraid.sim.workload import WORKLOADS, parse_workload
from vraid.sim.workload.postmark import INODES_PER_BLOCK

CAP, BS = 64 << 20, 4096


def _reqs(spec, seed=1):
    return list(parse_workload(spec).requests(CAP, BS, 10**7, seed))


def test_registered_and_deterministic():
    assert "postmark" in WORKLOADS
    a = _reqs("postmark:files=50,transactions=200")
    assert a == _reqs("postmark:files=50,transactions=200")
    assert a != _reqs("postmark:files=50,transactions=200", seed=2)


def test_transactions_end_with_a_flush_and_fit_the_array():
    reqs = _reqs("postmark:files=20,transactions=100,phase=transactions,fsync=transaction")
    assert sum(r.op == "flush" for r in reqs) == 100 and reqs[-1].op == "flush"
    io = [r for r in reqs if r.op != "flush"]
    assert all(r.offset % BS == 0 and r.length % BS == 0 and 0 < r.offset + r.length <= CAP for r in io)
    assert {r.op for r in io} == {"read", "write"}
    none = _reqs("postmark:files=20,transactions=100")  # PostMark's default: no fsync
    assert not any(r.op == "flush" for r in none)


def test_pool_creation_writes_data_then_metadata():
    reqs = _reqs("postmark:files=1,transactions=0,min=8192,max=8192,fsync=none")
    # one file of two blocks: one data run, its inode block, one bitmap block, one directory block
    assert [(r.op, r.length) for r in reqs] == [("write", 2 * BS), ("write", BS), ("write", BS), ("write", BS)]
    inode_blocks = -(-(1 + 0 + 1) // INODES_PER_BLOCK)
    assert reqs[1].offset == 0 and reqs[2].offset == inode_blocks * BS
    assert reqs[0].offset > reqs[3].offset  # data after the metadata area


def test_bad_parameters():
    with pytest.raises(VraidError, match="min <= max"):
        parse_workload("postmark:min=9000,max=100")
    with pytest.raises(VraidError, match="do not fit"):
        list(parse_workload("postmark:files=100000").requests(1 << 20, BS, 10, 0))


def test_raid5_slower_than_raid0_in_virtual_time():
    from vraid.sim.simulator import SimConfig, run_sim

    secs = {}
    for level in (0, 5):
        cfg = SimConfig(level=level, disks=4, capacity=CAP, disk_model="hdd:dnes-318350",
                        workload="postmark:files=50,transactions=100,phase=transactions", requests=10**6)
        secs[level] = run_sim(cfg).metrics["virtual_seconds"]
    assert secs[5] > 1.2 * secs[0] > 0
