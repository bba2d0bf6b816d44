"""``vraid sim``'s text output explains the run (issue 35 item 3): a line naming every policy
that ran, the write cache's, the log disk's and the placement's counters, and the drain time
with what it means; all of it within 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _sim(*args: str) -> str:
    env = dict(os.environ, COLUMNS="80")
    out = subprocess.run([sys.executable, "-m", "vraid", "sim", *args], capture_output=True, text=True,
                         env=env, check=True)
    return out.stdout


def _flat(text: str) -> str:
    """The words of ``text``, table borders left out."""
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize("args, policies, rows", [
    (("--requests", "300"), "policies: write cache none (write-through), ct none, queue fifo, prefetch none, "
                            "placement static", []),
    (("--requests", "600", "--cache", "stripe", "--cache-size", "1M", "--destage", "lt"),
     "policies: write cache stripe 1M (destage lt, order lrw)",
     ["blocks written into the cache", "writes that waited for room (misses)", "destages"]),
    (("--requests", "600", "--log", "scd"), "policies: log disk scd (its RAM is the write cache; paper 002)",
     ["level-2 destages (to the array)", "log segments written"]),
    (("--requests", "300", "--strip", "4K", "--placement", "multibuffer"), "placement multibuffer",
     ["stripe writes LW / PW", "swaps / cleanings"]),
    (("--requests", "300", "--prefetch", "msp", "--workload", "random-read"),
     "prefetch msp (read cache 8M)", []),
], ids=["write-through", "cache", "log", "placement", "prefetch"])
def test_the_header_names_the_policies_and_the_metrics_are_shown(args, policies, rows):
    out = _sim(*args)
    flat = _flat(out)
    assert policies in flat
    for row in rows:
        assert row in flat, row
    assert "no cache yet" not in out
    wide = [line for line in out.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)


def test_a_run_that_only_drains_says_why_its_time_is_zero():
    flat = _flat(_sim("--requests", "1000", "--log", "scd"))
    assert "virtual time 0 s" in flat
    assert "drain after the last request" in flat
    assert "after the last host request the write cache (or log) was destaged to the members; virtual time, " \
           "throughput and member busy % cover the host requests only" in flat
