"""bench/fuse_floor.py's ``vraid-null`` target is vraid's CLI with the engine taken out: host
writes are dropped and reads return zeros, and everything else is handed to vraid's CLI.
The benchmark's figures are measurements (docs/performance.md), not asserted here."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

CHECK = """
import sys, trio
sys.path.insert(0, {bench!r})
import fuse_floor
import vraid.cli.main as cli
from vraid.engine.array import Array

def fake_main(argv):
    assert argv == ["mount", "ARRAY", "MNT", "--foreground"], argv
    async def both():
        assert await Array.write(None, 4096, b"x" * 4096) is None
        assert await Array.read(None, 4096, 5000) == bytes(5000)
    trio.run(both)
    return 7

cli.main = fake_main
sys.exit(fuse_floor.as_vraid(["mount", "ARRAY", "MNT", "--foreground"]))
"""


def test_the_null_target_takes_the_engine_out_and_hands_over_to_the_cli():
    out = subprocess.run([sys.executable, "-c", CHECK.format(bench=str(BENCH))], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 7, out.stderr  # fake_main ran, with the engine patched and the arguments as given


def test_the_null_target_is_the_real_cli():
    out = subprocess.run([sys.executable, str(BENCH / "fuse_floor.py"), "--as-vraid", "--version"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("vraid"), (out.stdout, out.stderr)
