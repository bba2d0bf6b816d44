"""``vraid experiment NAME --quick`` without --out writes to a scratch directory, never over the
committed ``results/NAME`` of the full run (issue 35 item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_quick_without_out_writes_to_scratch_not_results(tmp_path: Path):
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), COLUMNS="100")
    (tmp_path / "tmp").mkdir()
    run = subprocess.run([sys.executable, "-m", "vraid", "experiment", "stride", "--quick", "--jobs", "1"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "results").exists()
    scratch = tmp_path / "tmp" / "vraid-quick-stride"
    assert (scratch / "results.json").is_file()
    assert "vraid-quick-stride" in "".join(run.stdout.split())  # the message says where it went
