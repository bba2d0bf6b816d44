"""`vraid create --log`, `vraid examine` and `vraid status` of an unmounted array with a log (no mount needed)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from vraid.cli.main import main
from vraid.ondisk.assemble import assemble


@pytest.fixture
def vraid(capsys):
    """``vraid ARGS`` in this process (faster than a subprocess): returncode, stdout, stderr."""

    def run(*args, check: bool = True):
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        assert code == 0 or not check, err
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


@pytest.mark.parametrize("kind,files", [("scd", ["log0.img"]), ("mcd:2", ["log0.img", "log1.img"]),
                                        ("mirrored", ["log0.img", "log1.img"]), ("per-disk", [])])
def test_create_records_the_log_everywhere(tmp_path, kind, files, vraid):
    arr = tmp_path / "arr"
    out = vraid("create", arr, "--disks", "4", "--disk-size", "8M", "--strip", "16K", "--log", kind, "--log-size", "1M").stdout
    assert f"log disk: {kind} log, 1M per store" in " ".join(out.split())
    assert sorted(p.name for p in arr.glob("log*.img")) == files
    toml = (arr / "vraid.toml").read_text()
    assert f'log = "{kind}"' in toml and 'log_size = "1M"' in toml
    asm = assemble(arr)
    assert asm.log.spec == kind and asm.log_problem == "" and [p.name for p in asm.log_paths] == files
    if kind == "per-disk":  # the geometry leaves the log region at the end of each member
        assert asm.log.offset == asm.geometry.member_size and asm.geometry.member_size + (1 << 20) <= 8 << 20
    examined = json.loads(vraid("examine", arr, "--json").stdout)
    for e in examined:
        if e["path"].endswith(tuple(files)) and files:
            assert e["superblock"] is None and e["problem"].startswith("log store")
        elif e["superblock"]:
            assert e["superblock"]["params"]["log"]["spec"] == kind
    status = json.loads(vraid("status", arr, "--json").stdout)
    assert status["log"]["spec"] == kind and status["log"]["problem"] == ""
    assert "log disk" in vraid("status", arr).stdout


def test_create_refuses_bad_log_settings(tmp_path, vraid):
    r = vraid("create", tmp_path / "a", "--disk-size", "8M", "--log-size", "1M", check=False)
    assert r.returncode != 0 and "--log-size without --log" in " ".join(r.stderr.split())
    r = vraid("create", tmp_path / "b", "--disk-size", "8M", "--log", "mcd:1", check=False)
    assert r.returncode != 0 and "log disk mcd: disks=1 is below 2" in " ".join(r.stderr.split())
    r = vraid("create", tmp_path / "b", "--disk-size", "8M", "--log", "scd", "--log-size", "0", check=False)
    assert r.returncode != 0 and "--log-size 0 is below 132K" in " ".join(r.stderr.split())
    r = vraid("create", tmp_path / "c", "--disk-size", "8M", "--log", "scd", "--log-size", "64K", check=False)
    assert r.returncode != 0 and "--log-size 64K is below 132K" in " ".join(r.stderr.split())
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())


def test_mcd_without_n_says_its_default_and_records_it(tmp_path, vraid):
    from vraid.ondisk.logfiles import LogRecord

    arr = tmp_path / "arr"
    out = " ".join(vraid("create", arr, "--disks", "4", "--disk-size", "8M", "--strip", "16K", "--log", "mcd",
                         "--log-size", "1M").stdout.split())
    assert "log disk: mcd:2 log, 1M per store" in out and "(--log mcd is mcd:2: disks: number of cache disks" in out
    assert "2..256, default 2" in out and assemble(arr).log.spec == "mcd:2"
    # an array whose superblocks recorded the bare spelling (before the log family) still reads
    assert LogRecord("mcd", 1 << 20, ("log0.img", "log1.img")).kind == "mcd"


def test_status_names_a_missing_log_file(tmp_path, vraid):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "4", "--disk-size", "8M", "--strip", "16K", "--log", "scd", "--log-size", "1M")
    (arr / "log0.img").unlink()
    status = json.loads(vraid("status", arr, "--json").stdout)
    assert "log0.img is missing" in status["log"]["problem"]
