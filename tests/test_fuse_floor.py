"""bench/fuse_floor.py's ``vraid-bare`` target is vraid's CLI with the engine replaced by the
passthrough's work: a host write is one ``pwrite`` and a read one ``pread`` on the backing
file named by ``$VRAID_BARE_BACKING``, and everything else is handed to vraid's CLI. The
benchmark's figures are measurements (docs/performance.md), not asserted here."""

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

CHECK = """
import sys, trio
sys.path.insert(0, {bench!r})
import fuse_floor
import vraid.cli.main as cli
from vraid.engine.host.array import Array

def fake_main(argv):
    assert argv == ["mount", "ARRAY", "MNT", "--foreground"], argv
    async def both():
        await Array.write(None, 4096, b"x" * 4096)
        assert await Array.read(None, 4096, 5000) == b"x" * 4096 + bytes(904)
    trio.run(both)
    return 7

cli.main = fake_main
sys.exit(fuse_floor.as_vraid(["mount", "ARRAY", "MNT", "--foreground"]))
"""


def test_the_bare_target_does_the_passthroughs_work_and_hands_over_to_the_cli(tmp_path):
    backing = tmp_path / "backing.img"
    with open(backing, "wb") as f:
        f.truncate(1 << 20)
    out = subprocess.run([sys.executable, "-c", CHECK.format(bench=str(BENCH))], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "VRAID_BARE_BACKING": str(backing)})
    assert out.returncode == 7, out.stderr  # fake_main ran, with the engine patched and the arguments as given
    data = backing.read_bytes()
    assert data[4096:8192] == b"x" * 4096 and not data[:4096].strip(b"\0") and len(data) == 1 << 20


def test_the_bare_target_is_the_real_cli(tmp_path):
    backing = tmp_path / "backing.img"
    backing.write_bytes(b"")
    out = subprocess.run([sys.executable, str(BENCH / "fuse_floor.py"), "--as-vraid", "--version"],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "VRAID_BARE_BACKING": str(backing)})
    assert out.returncode == 0 and out.stdout.startswith("vraid"), (out.stdout, out.stderr)
