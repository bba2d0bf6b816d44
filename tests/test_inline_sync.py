"""The rule that lets a short sync wait on the trio thread (vraid.engine.members.inline_sync)."""

from __future__ import annotations

import pytest

from vraid.engine.members import inline_sync
from vraid.engine.members.inline_sync import INLINE_SYNC_BYTES, INLINE_SYNC_PROBE, INLINE_SYNC_SECONDS, InlineSyncRule
from vraid.engine.build import EngineConfig

from support import running


class StepClock:
    """A clock whose every sync takes ``took`` seconds."""

    def __init__(self) -> None:
        self.t = 0.0
        self.took = 0.0

    def now(self) -> float:
        return self.t

    def sync(self) -> str:
        self.t += self.took
        return "synced"


def test_only_a_known_small_amount_may_sync_inline():
    rule = InlineSyncRule(None)
    assert rule.inline(0) and rule.inline(INLINE_SYNC_BYTES)
    assert not rule.inline(INLINE_SYNC_BYTES + 1)
    assert not rule.inline(None)  # a store that cannot tell what it would write out
    assert rule.thread_syncs == 2


def test_slow_inline_syncs_send_the_next_small_ones_to_threads_and_a_probe_measures_again():
    clock = StepClock()
    rule = InlineSyncRule(clock)
    clock.took = 0.0005
    assert rule.inline(4096) and rule.run(clock.sync) == "synced"
    assert rule.mean == pytest.approx(0.0005)  # the first sync sets the mean
    clock.took = 0.05  # the disk slowed down: each sync now waits 50 ms
    assert rule.inline(4096)
    rule.run(clock.sync)
    assert rule.mean == pytest.approx(0.0005 + (0.05 - 0.0005) / 8) and rule.mean > INLINE_SYNC_SECONDS
    sent = [rule.inline(4096) for _ in range(INLINE_SYNC_PROBE)]
    assert not any(sent) and rule.deferred == INLINE_SYNC_PROBE and rule.thread_syncs == INLINE_SYNC_PROBE
    assert rule.inline(4096)  # the probe
    clock.took = 0.0001  # fast again: each probe pulls the mean down
    probes = 0
    while rule.mean > INLINE_SYNC_SECONDS:
        rule.run(clock.sync)
        probes += 1
        if rule.mean > INLINE_SYNC_SECONDS:
            assert not rule.inline(4096)
            rule.deferred = INLINE_SYNC_PROBE  # skip ahead to the next probe
            assert rule.inline(4096)
    assert 1 <= probes < 20 and rule.inline(4096)  # inline again without waiting for a probe
    assert rule.inline_syncs == 2 + probes


def test_a_sync_that_raises_is_timed_too():
    clock = StepClock()
    rule = InlineSyncRule(clock)

    def failing():
        clock.t += 0.01
        raise OSError(5, "Input/output error")

    with pytest.raises(OSError):
        rule.run(failing)
    assert rule.mean == pytest.approx(0.01) and rule.inline_syncs == 1


def test_members_on_slow_disks_are_flushed_in_threads(tmp_path, monkeypatch):
    """Through Members.flush on real member files: syncs slower than the limit move the
    next small flushes into worker threads."""
    import os
    import threading
    import time

    import trio

    from vraid.backends.file import FileStore
    from vraid.core.geometry import Geometry

    bs = 4096
    g = Geometry(5, 4, 8, bs, 4 * bs, data_offset=4 * bs)
    stores = [FileStore.create(tmp_path / f"m{i}", g.member_size) for i in range(4)]
    main, on_main = threading.get_ident(), []
    real = os.fdatasync

    def slow(fd: int) -> None:
        on_main.append(threading.get_ident() == main)
        time.sleep(0.003)  # above INLINE_SYNC_SECONDS even for one member
        real(fd)

    async def go():
        async with running(EngineConfig(g, stores)) as array:
            await array.flush()  # the first flush: in threads (unknown amounts)
            monkeypatch.setattr(os, "fdatasync", slow)
            on_main.clear()
            await array.write(0, b"a" * bs)
            await array.flush()  # small, and no inline flush measured yet: inline
            assert on_main and all(on_main)
            assert array.members.inline_flush.mean >= 0.003 * len(on_main)
            on_main.clear()
            await array.write(0, b"b" * bs)
            await array.flush()  # small, but the disks are slow: threads
            assert on_main and not any(on_main)
            monkeypatch.setattr(inline_sync, "INLINE_SYNC_PROBE", 1)
            on_main.clear()
            await array.write(0, b"c" * bs)
            await array.flush()  # one small flush was deferred: this one probes inline
            assert on_main and all(on_main)

    try:
        trio.run(go)
        assert stores[g.data_disk(0, 0)].read_sync(g.data_offset, bs) == b"c" * bs
    finally:
        for s in stores:
            s.close()
