"""Standard block traces replay (issue 35 item 8): MSR Cambridge, UMass/SPC and blkparse text,
sniffed or named, each device on its own disjoint range of the array (paper 003 sec. 4.1).
The samples are the ones in docs/trace-format.md, written for vraid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vraid.errors import VraidError
from vraid.sim.block_traces import foreign_requests, sniff

MSR = """\
128166372000000000,hostA,0,Write,8192,4096,1203
128166372000012000,hostA,1,Read,65536,16384,880
128166372000030000,hostA,0,Write,12288,8192,1544
128166372000051000,hostA,1,Write,4096,4096,902
"""
SPC = """\
0,16,4096,w,0.000000
1,128,8192,r,0.001250
0,24,4096,W,0.002500
1,0,512,w,0.004000
"""
BLKPARSE = """\
  8,0    0        1     0.000000000  1201  Q   W 2048 + 8 [dd]
  8,0    0        2     0.000004100  1201  G   W 2048 + 8 [dd]
  8,0    0        3     0.000120000  1201  D   W 2048 + 8 [dd]
  8,16   1        1     0.000500000  1202  Q   R 4096 + 16 [cat]
  8,0    0        4     0.000900000  1201  C   W 2048 + 8 [0]
  8,0    0        5     0.001200000  1201  Q FWS 0 + 0 [sync]
  8,16   1        2     0.001500000  1202  Q   W 100 + 3 [cat]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
"""
VRAID = "# vraid-trace v1 capacity=1048576 block=4096\n0.000000000 W 0 4096\n0.001 R 4096 4096\n"
CAP, BLOCK = 64 << 20, 4096


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, fmt", [(MSR, "msr"), (SPC, "spc"), (BLKPARSE, "blkparse"), (VRAID, "vraid"),
                                       ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" + MSR, "msr")])
def test_the_format_is_sniffed_from_the_first_record(tmp_path, text, fmt):
    assert sniff(_file(tmp_path, "t", text)) == fmt


def test_an_unknown_format_is_a_clear_error(tmp_path):
    with pytest.raises(VraidError, match="cannot tell the trace format"):
        sniff(_file(tmp_path, "t", "hello world\n"))


def _reqs(tmp_path, text, fmt, **kw):
    return [(r.op, r.offset, r.length, round(r.at, 9)) for r in
            foreign_requests(_file(tmp_path, "t", text), fmt, CAP, BLOCK, **kw)]


def test_msr_devices_get_disjoint_ranges_and_filetime_becomes_seconds(tmp_path):
    half = CAP // 2  # two devices: hostA/0 first, hostA/1 second
    assert _reqs(tmp_path, MSR, "msr") == [("write", 8192, 4096, 0.0), ("read", half + 65536, 16384, 0.0012),
                                           ("write", 12288, 8192, 0.003), ("write", half + 4096, 4096, 0.0051)]


def test_spc_lbas_are_sectors_and_asus_are_devices(tmp_path):
    half = CAP // 2
    assert _reqs(tmp_path, SPC, "spc", speed=2) == [("write", 16 * 512, 4096, 0.0), ("read", half + 128 * 512, 8192, 0.000625),
                                                    ("write", 24 * 512, 4096, 0.00125), ("write", half, 512, 0.002)]


def test_blkparse_takes_the_queued_events_and_a_flush(tmp_path):
    half = CAP // 2
    assert _reqs(tmp_path, BLKPARSE, "blkparse") == [
        ("write", 2048 * 512, 8 * 512, 0.0), ("read", half + 4096 * 512, 16 * 512, 0.0005),
        ("flush", 0, 0, 0.0012), ("write", half + 100 * 512, 3 * 512, 0.0015)]


def test_a_request_past_its_range_is_rejected_with_its_line_or_wrapped(tmp_path):
    far = "0,200000,4096,w,0.0\n1,0,4096,w,0.1\n"  # 100 MB into ASU 0, on a 64 MiB array: 32 MiB each
    with pytest.raises(VraidError, match=r"t:1: write at 102400000\+4096 of device 0 runs past its range"):
        _reqs(tmp_path, far, "spc")
    assert _reqs(tmp_path, far, "spc", beyond="wrap")[0][1] == 200000 * 512 % (CAP // 2)


def test_a_bad_record_names_its_line(tmp_path):
    with pytest.raises(VraidError, match=r"t:2: opcode 'x' is not r or w"):
        _reqs(tmp_path, "0,16,4096,w,0.0\n0,16,4096,x,0.1\n", "spc")


@pytest.mark.parametrize("text, fmt, counts", [
    (MSR, None, (1, 3, 0)), (SPC, "spc", (1, 3, 0)), (BLKPARSE, None, (1, 2, 1)), (VRAID, None, (1, 1, 0))])
def test_vraid_sim_replays_each_format(tmp_path, text, fmt, counts):
    path = _file(tmp_path, "trace.txt", text)
    spec = f"replay:{path}" + (f",format={fmt}" if fmt else "")
    out = subprocess.run([sys.executable, "-m", "vraid", "sim", "--workload", spec, "--json"],
                         capture_output=True, text=True, check=True)
    m = json.loads(out.stdout)["metrics"]
    assert (m["host_reads"], m["host_writes"], m["host_flushes"]) == counts
    assert m["disk_write_requests"] > 0
