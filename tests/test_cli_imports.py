"""Every ``vraid`` command, the mount daemon among them, builds the whole argument parser at
start. Building it must not import the test tools (hypothesis, pytest): they cost about a
second of start-up per command and 12 MiB of the daemon's memory (docs/performance.md)."""

import subprocess
import sys

HEAVY = ("hypothesis", "pytest")


def test_building_the_parser_imports_no_test_tools():
    code = (
        "import sys\n"
        "from vraid.cli.main import build_parser\n"
        "build_parser()\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_fuzz_help_still_shows_the_defaults():
    from vraid.testing.fuzz import DEFAULT_EXAMPLES, DEFAULT_STEPS

    out = subprocess.run([sys.executable, "-m", "vraid", "fuzz", "--help"], capture_output=True, text=True, check=True)
    text = " ".join(out.stdout.split())
    assert f"(default {DEFAULT_EXAMPLES})" in text
    assert f"(default {DEFAULT_STEPS})" in text
