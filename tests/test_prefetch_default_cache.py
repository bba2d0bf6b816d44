"""``--prefetch`` without ``--read-cache-size`` gets a read cache sized from the array
(issue 35 item 6; ``vraid.policies.prefetch.base.default_read_cache_size``), on a mount and in
the simulator; a size given, 0 included, is kept."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.policies.prefetch.base import default_read_cache_size

M = 1 << 20


def test_the_default_is_32_stripes_of_data_within_1m_to_64m_and_a_quarter_of_the_array():
    five = Geometry.for_disk_size(level=5, ndisks=5, disk_size=128 * M, strip_size=64 * 1024)
    assert default_read_cache_size(five) == 8 * M  # 32 x 4 x 64K
    wide = Geometry.for_disk_size(level=5, ndisks=9, disk_size=1024 * M, strip_size=1024 * 1024)
    assert default_read_cache_size(wide) == 64 * M
    small = Geometry.for_disk_size(level=5, ndisks=3, disk_size=8 * M, strip_size=4096)
    assert default_read_cache_size(small) == M
    tiny = Geometry.for_disk_size(level=5, ndisks=3, disk_size=2 * M, strip_size=4096)
    assert default_read_cache_size(tiny) <= tiny.capacity // 4


def test_a_mount_with_prefetch_alone_gets_the_default_read_cache(tmp_path):
    from vraid.engine.build import EngineConfig
    from vraid.fuse.daemon import MountOptions, check_engine
    from vraid.ondisk.assemble import assemble
    from vraid.ondisk.create import create

    g = Geometry.for_disk_size(level=5, ndisks=5, disk_size=64 * M, strip_size=64 * 1024)
    create(tmp_path / "arr", g, g.member_size)
    asm = assemble(tmp_path / "arr")
    try:
        opts = MountOptions(policies={"prefetch": "msp"})
        check_engine(asm, opts)  # was refused: "add --read-cache-size SIZE"
        assert EngineConfig.from_assembled(asm, opts, opened=False).read_cache_size == default_read_cache_size(asm.geometry)
        given = MountOptions(policies={"prefetch": "msp", "read_cache_size": "2M"})
        assert EngineConfig.from_assembled(asm, given, opened=False).read_cache_size == 2 * M
        with pytest.raises(VraidError, match="needs a read cache"):
            check_engine(asm, MountOptions(policies={"prefetch": "msp", "read_cache_size": "0"}))
        assert EngineConfig.from_assembled(asm, MountOptions(), opened=False).read_cache_size == 0
    finally:
        asm.close()


def test_sim_with_prefetch_alone_prefetches():
    out = subprocess.run([sys.executable, "-m", "vraid", "sim", "--prefetch", "msp", "--json", "--requests", "400",
                          "--workload", "sequential:streams=1,size=64K,op=read"],
                         capture_output=True, text=True, check=True)
    pf = json.loads(out.stdout)["metrics"]["prefetch"]
    assert pf["size"] == 8 * M  # the simulator's default array: 5 disks, 64K strips
    assert pf["prefetches"] > 0 and pf["prefetch_hits"] > 0
