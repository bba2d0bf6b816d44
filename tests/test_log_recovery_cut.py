"""A power cut at every request of a log-disk recovery, under a write-back cache.

Issue 33, item 1: on ``--log scd`` mounted with ``--cache stripe`` a file fsynced at
200,000 bytes came back at 131,072 after a crash, and several remounts replayed nothing
from the log. The reproduction in virtual time: :class:`vraid.testing.log_machine.LogCrashMachine`
with the write cache above the log and volatile stores (a power cut loses what was not
flushed). Fsynced blocks sit in the log; the power fails; the next mount's recovery is
cut at its k-th request, for every k; the mount after that must still find every fsynced
block. Before the fix the log's level-2 task, running as soon as the array served, saw an
empty log (the replay is the recovery's, not the log cache's) and wrote a new durable tail
past the segments being replayed while the replay's writes to the members were not yet
flushed: a cut there lost them, and the next mount had nothing left to replay.

The same cut with stores that keep every write (``kill -9``: the member files' page cache
outlives the daemon) lost fsynced blocks too before the fix: the tail had moved past
segments whose blocks the replay had not yet written at all. That is the issue's own report
(kill -9, ``--log scd`` under ``--cache stripe``, remounts that "replayed nothing" and a
fsynced file cut short): both variants fail at the commit before the fix (dbea3e4^, checked
2026-11-28 by setting ``replay_pending`` to False: 6 of 6 cases lose block 0) and pass after.
"""

from __future__ import annotations

import shutil

import pytest

from vraid.testing.log_machine import LogCrashMachine, _bytes

K = 1024


@pytest.mark.parametrize("volatile", [True, False], ids=["power-cut", "kill-9"])
@pytest.mark.parametrize("cache,step", [(None, 9), ("stripe", 9), pytest.param("stripe", 1, marks=pytest.mark.slow)])
def test_a_cut_anywhere_in_the_recovery_loses_nothing_fsynced(tmp_path, cache, step, volatile):
    m = LogCrashMachine("scd", tmp_path, cache=cache, volatile=volatile)
    try:
        for i, offset in enumerate(range(0, m.capacity // 2, 40 * K)):
            payload = _bytes(i, 24 * K + 100)
            m.portal.write(offset, payload)
            m._written(offset, payload)
        m.portal.flush()
        m._fsynced()
        assert m.portal.array.log.head > m.portal.array.log.tail, "the fsynced blocks should be in the log"
        m._drop()  # the power fails: the log holds the fsynced blocks, the members may not
        snapshot = tmp_path / "after-crash"
        shutil.copytree(m.dir / "arr", snapshot)
        replayed = []
        cuts = 0
        for k in range(0, 1000, step):
            shutil.rmtree(m.dir / "arr")
            shutil.copytree(snapshot, m.dir / "arr")
            m._mount(k)  # recovery cut at its k-th request, then recovered again
            cut = m.recovery_cut
            cuts += cut
            m._check_after_crash()
            replayed.append(m.report.replayed_blocks)
            m._drop()
            if not cut:
                break  # the recovery finished before the cut: every later k is the same
        assert cuts > 3, "the cuts should land inside the recovery"
        assert replayed[0] > 0, "a recovery cut at its start leaves the whole log to replay"
    finally:
        shutil.rmtree(m.dir, ignore_errors=True)
