"""bench/engine_floor.py's baseline is a real RAID-5 (its parity holds), and the benchmark runs
end to end. Its figures are not asserted: they are measurements (docs/performance.md)."""

import functools
import importlib.util
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent.parent / "bench" / "engine_floor.py"


def _module():
    spec = importlib.util.spec_from_file_location("engine_floor", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_minimal_raid5_keeps_parity_and_reads_back(tmp_path):
    ef = _module()
    m = ef.Minimal(tmp_path)
    try:
        rng = np.random.default_rng(0)
        written = {}
        blocks = (ef.DISKS - 1) * ef.STRIP // ef.BLOCK * 3  # three stripes
        for b in rng.integers(0, blocks, 60):
            data = rng.integers(0, 256, ef.BLOCK, dtype=np.uint8).tobytes()
            m.write(int(b) * ef.BLOCK, data)
            written[int(b)] = data
        for b, data in written.items():
            assert m.read(b * ef.BLOCK) == data
        members = [np.frombuffer(os.pread(fd, 3 * ef.STRIP, 0), np.uint8) for fd in m.fds]
        assert not functools.reduce(np.bitwise_xor, members).any()  # each row's XOR over data and parity is 0
        disks = {m._place(b * ef.BLOCK)[0] for b in written}
        assert len(disks) == ef.DISKS  # the data rotates over every member (left-symmetric)
    finally:
        m.close()


def test_the_minimal_cache_keeps_the_newest_record_of_each_block(tmp_path):
    """MinimalCache, the cached row's baseline, does the work it stands for: each block's bytes
    in memory, and in the journal file a whole record (data, entry with a CRC) whose newest
    sequence number per block holds the block's newest bytes."""
    ef = _module()
    c = ef.MinimalCache(tmp_path)
    try:
        rng = np.random.default_rng(1)
        written = {}
        for b in rng.integers(0, 64, 200):
            data = rng.integers(0, 256, ef.BLOCK, dtype=np.uint8).tobytes()
            c.write(int(b) * ef.BLOCK, data)
            written[int(b)] = data
        newest: dict[int, tuple[int, bytes]] = {}
        for frame in range(2 * 64):
            seq, block, crc = c.ENTRY.unpack(os.pread(c.fd, c.ENTRY.size, frame * c.ENTRY.size))
            if seq == 0:
                continue
            data = os.pread(c.fd, ef.BLOCK, c.table + frame * ef.BLOCK)
            assert zlib.crc32(data) == crc and frame // 2 == block
            if seq > newest.get(block, (0, b""))[0]:
                newest[block] = (seq, data)
        assert {b: d for b, (_, d) in newest.items()} == written
        assert all(c.memory[b].tobytes() == d for b, d in written.items())
    finally:
        c.close()


def test_the_benchmark_runs(tmp_path):
    out = subprocess.run([sys.executable, str(BENCH), "--requests", "30", "--rounds", "1", "--workdir", str(tmp_path),
                          "--json", str(tmp_path / "out.json")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["request", "vraid", "us", "minimal", "us", "vraid/minimal"]
    assert [" ".join(line.split()[:-3]) for line in lines[2:]] == ["write", "read", "cached write"]
    assert (tmp_path / "out.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # the temporary array is gone
