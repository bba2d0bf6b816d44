"""`vraid stride-bench` (seed 000 sec. III-D, Fig. 8): model mode, member-file mode, --save."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mountutil import requires_mount, tree_hash, vraid
from vraid.sim import stride_bench as sb
from vraid.errors import VraidError
from vraid.sim.experiment import stride as stride_exp

DATA_OFFSET_KEY = "data_offset"


def _superblocks(arr: Path) -> list[dict]:
    return [e["superblock"] for e in json.loads(vraid("examine", arr, "--json").stdout) if e["superblock"]]


def _data_hashes(arr: Path) -> dict[str, str]:
    """sha256 of every member's data area (everything after the superblock area)."""
    out = {}
    for entry in json.loads(vraid("examine", arr, "--json").stdout):
        sb_ = entry["superblock"]
        with open(entry["path"], "rb") as f:
            f.seek(sb_[DATA_OFFSET_KEY])
            out[Path(entry["path"]).name] = hashlib.sha256(f.read()).hexdigest()
    return out


def _fill(arr: Path, seed: int = 7) -> None:
    """Random bytes in every member's data area (the benchmark must write these same bytes back)."""
    rng = __import__("random").Random(seed)
    for entry in json.loads(vraid("examine", arr, "--json").stdout):
        off = entry["superblock"][DATA_OFFSET_KEY]
        size = os.path.getsize(entry["path"]) - off
        with open(entry["path"], "r+b") as f:
            f.seek(off)
            f.write(rng.randbytes(size))


# ---------------------------------------------------------------------- pure parts
def test_pattern_is_fig8():
    # S = 3 over blocks 0..15: B0 B3 B6 B9 B12 B15 (Fig. 8's third row), S = 1 is one request
    assert sb.pass_requests(3, 0, 16) == [(b, 1) for b in (0, 3, 6, 9, 12, 15)]
    assert sb.pass_requests(1, 10, 16) == [(10, 16)]
    # the last stride is cut short so that every S ends at the same destination block
    assert sb.pass_requests(4, 0, 15) == [(0, 1), (4, 1), (8, 1), (12, 1), (14, 1)]
    assert sb.pass_requests(4, 0, 14) == [(0, 1), (4, 1), (8, 1), (12, 2)]


def test_model_limits_equal_the_stride_experiment():
    """Same model, same strides, span and passes: the same S_w^max, S_r^max as `experiment stride`."""
    setting = {"strides": list(range(1, 33)), "span": 2 << 20, "passes": 2}
    pairs = []
    for op in ("write", "read"):
        spec = {"id": op, "kind": "fig9", "preset": "st373454lc", "op": op, **setting}
        pairs.append((spec, stride_exp.run(spec)))
    exp = stride_exp.collect(pairs)["disks"]["st373454lc"]
    result = sb.bench_model("hdd:st373454lc", max_stride=32, span=2 << 20, passes=2)
    lim = result.limits()
    assert (lim["sw_max"], lim["sr_max"]) == (exp["sw_max"], exp["sr_max"])
    assert (lim["sw_except"], lim["sr_except"]) == (exp["sw_except"], exp["sr_except"])
    assert result.write.normalized == exp["write"]["normalized"]
    assert lim["sw_max"] > 2  # the ST373454LC model does miss revolutions on close strides
    ct = result.ct_params()
    assert set(ct) == {"sr_max", "sw_max", "sr_except", "sw_except", "source"}
    assert "hdd:st373454lc,stroke=partition" in ct["source"]


def test_model_spec_keeps_an_explicit_stroke_and_refuses_none():
    # a drive with a command queue is benchmarked with it on (the paper's 32-64 outstanding)
    assert sb.bench_spec("hdd:st373454lc,stroke=full").text == "hdd:st373454lc,stroke=full,tcq=on"
    assert sb.bench_spec("hdd").text == "hdd:st373454lc,stroke=partition,tcq=on"
    assert sb.bench_spec("hdd:st373454lc,tcq=off").text == "hdd:st373454lc,tcq=off,stroke=partition"
    assert sb.bench_spec("hdd:91366u4").text == "hdd:91366u4,stroke=partition"  # ATA: no queue
    assert sb.bench_spec("hdd:rpm=5400").params.rpm == 5400
    with pytest.raises(VraidError, match="no timing"):
        sb.bench_spec("none")
    with pytest.raises(VraidError, match="too short"):
        sb.check_strides(64, 64 << 10)


# ---------------------------------------------------------------------- member files
def test_member_bench_leaves_bytes_unchanged_and_saves(tmp_path):
    arr, out = tmp_path / "arr", tmp_path / "out"
    vraid("create", arr, "--disks", "4", "--disk-size", "8M")
    _fill(arr)
    before = tree_hash(arr)
    res = json.loads(vraid("stride-bench", arr, "--member", "2", "--max-stride", "8", "--span", "64K",
                           "--repeat", "1", "--out", out, "--json").stdout)
    assert tree_hash(arr) == before  # nothing modified, superblocks included
    assert res["timing"] in ("O_DIRECT", "fsync per batch")
    assert res["S"] == list(range(1, 9)) and res["write"]["normalized"][0] == 1.0
    assert res["setup"]["member"] == 2 and res["saved"] is None
    assert (out / "stride-bench.png").stat().st_size > 0

    data = _data_hashes(arr)
    events = [s["events"] for s in _superblocks(arr)]
    res = json.loads(vraid("stride-bench", arr, "--max-stride", "8", "--span", "64K", "--repeat", "1",
                           "--out", out, "--save", "--json").stdout)
    assert _data_hashes(arr) == data
    sbs = _superblocks(arr)
    assert len(sbs) == 4
    for s, ev in zip(sbs, events):
        assert s["params"]["ct"] == res["ct"]
        assert s["clean"] is True and s["events"] == ev + 1
    assert res["ct"]["sw_max"] == res["sw_max"]
    assert res["ct"]["source"].endswith(f"({res['timing']})")


def test_model_save_keeps_other_params_and_the_dirty_flag(tmp_path):
    from vraid.ondisk.assemble import assemble

    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    asm = assemble(arr)
    asm.mark(clean=False, params={"other": 5})
    data = _data_hashes(arr)
    vraid("stride-bench", "--disk-model", "hdd:st373454lc", "--max-stride", "32", "--span", "2M",
          "--array", arr, "--save", "--out", tmp_path)
    for s in _superblocks(arr):
        assert s["params"]["other"] == 5 and s["params"]["ct"]["sw_max"] == 4
        assert s["clean"] is False
    assert _data_hashes(arr) == data


@pytest.mark.parametrize("args, expect", [
    (["{missing}"], "is not a directory"),
    (["{arr}", "--member", "3"], "--member 3 is not a member"),
    (["{arr}", "--member", "-1"], "--member -1 is not a member"),
    (["{arr}", "--disk-model", "hdd"], "not both or neither"),
    ([], "not both or neither"),
    (["--disk-model", "hdd", "--save"], "needs --array"),
    (["--disk-model", "nosuch"], "unknown disk model"),
    (["--disk-model", "hdd", "--member", "1"], "applies to an array directory"),
    (["{arr}", "--max-stride", "1"], "below 2"),
    (["{arr}", "--span", "8K"], "too short"),
    (["{arr}", "--span", "64M", "--save"], "do not fit"),
    (["{arr}", "--passes", "0"], "at least 1"),
])
def test_bad_input_exits_1_and_modifies_nothing(tmp_path, args, expect):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    _fill(arr)
    before = tree_hash(arr)
    argv = [a.format(arr=arr, missing=tmp_path / "nope") for a in args]
    r = vraid("stride-bench", *argv, "--out", tmp_path / "o", check=False)
    text = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 1, text
    assert expect in text and "hint:" in text
    assert tree_hash(arr) == before
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------- with a mount
@requires_mount
@pytest.mark.mount
def test_refuses_a_mounted_array_and_mounts_after_save(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "8M")
    session.mount(arr, mnt)
    payload = os.urandom(2 << 20)
    with open(mnt / "disk.img", "r+b") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    before = tree_hash(arr)
    r = vraid("stride-bench", arr, "--save", "--out", tmp_path, check=False)
    assert r.returncode == 1 and "is mounted at" in r.stderr and "hint:" in r.stderr
    r = vraid("stride-bench", "--disk-model", "hdd", "--array", arr, "--save", "--out", tmp_path, check=False)
    assert r.returncode == 1 and "is mounted at" in r.stderr
    assert tree_hash(arr) == before
    assert not (tmp_path / "stride-bench.png").exists()
    session.umount(mnt)

    vraid("stride-bench", arr, "--max-stride", "8", "--span", "64K", "--repeat", "1", "--save", "--out", tmp_path)
    ct = _superblocks(arr)[0]["params"]["ct"]
    session.mount(arr, mnt, "--ct", "msc")
    spec = f"msc:sr_max={ct['sr_max']},sw_max={ct['sw_max']}"
    for key in ("sr_except", "sw_except"):
        if ct[key]:
            spec += f",{key}=" + ";".join(f"{a}-{b}" for a, b in ct[key])
    assert json.loads(vraid("status", mnt, "--json").stdout)["ct"] == spec  # the mount uses the saved limits
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(len(payload)) == payload
    session.umount(mnt)
    sbs = _superblocks(arr)
    assert all(s["params"]["ct"] == ct and s["clean"] for s in sbs)


def test_buffered_fallback_when_o_direct_is_missing(tmp_path, monkeypatch):
    """Without O_DIRECT: buffered I/O, fsync per write pass; the bytes and times stay."""
    path = tmp_path / "member.img"
    content = os.urandom(1 << 20)
    path.write_bytes(content)
    os.utime(path, ns=(1_000_000_000, 2_000_000_000))
    monkeypatch.delattr(os, "O_DIRECT", raising=False)
    member = sb.Member(path, 0, 64 << 10, 1 << 20, "test member")
    result = sb.bench_member(member, max_stride=4, span=64 << 10, passes=2, repeat=1)
    assert result.timing == "fsync per batch"
    assert result.write.S == [1, 2, 3, 4] and result.write.normalized[0] == 1.0
    assert path.read_bytes() == content
    assert os.stat(path).st_mtime_ns == 2_000_000_000
    with pytest.raises(VraidError, match="do not fit"):
        sb.bench_member(member, max_stride=4, span=512 << 10, passes=2)
    assert path.read_bytes() == content
