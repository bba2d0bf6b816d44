"""The log disk against a model: every configuration, power cuts at random points.

A sibling of :class:`vraid.testing.crash_machine.CrashMachine` for seed 002's log cache
(tests/test_log_model.py runs it). The array is made by ``vraid create --log KIND`` on
real files, assembled and built as a mount does (``EngineConfig.from_assembled``);
members *and* log stores sit behind one :class:`PowerCut`. Rules write (the log cache
acknowledges from RAM), fsync, run a level-1 or a level-2 destage by hand, remount
cleanly, or cut the power a random number of requests ahead during a write and an fsync
(or a destage, or idle time in which the background destages run), then drop everything
in memory, reassemble and recover (log replay up to the first torn or stale segment, then
the bitmap resync), sometimes cutting the power again inside that recovery. Two writers at
once (each on its half, writes then an fsync, with or without a cut) and reads checked
against the model run too. Options: ``cache`` puts the write-back cache above the log as
``vraid mount --cache`` does (seed 002's chained target); ``volatile`` puts every store
behind :class:`~vraid.backends.volatile.VolatileStore`, so a cut also loses what was not
flushed (a power cut, not a kill -9). The cut counts flushes as requests (it may fall between
two log stores' flushes), and the files sync on the engine's thread
(:mod:`vraid.testing.inline_files`): a worker thread's sync would let wall-clock timing
choose the order of requests, and a failing example would not replay. Invariants:

* nothing acknowledged before an fsync is lost: after a crash every block holds the
  value it had at the last completed fsync or one written after it (never an older
  one, never anything else);
* after recovery, scrub finds 0 mismatches; a clean remount replays nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import trio
from hypothesis import note as _hypothesis_note
from hypothesis.errors import InvalidArgument
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from vraid.backends.faulty import FaultyStore, PowerCut
from vraid.backends.volatile import VolatileStore
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.clock import TrioClock
from vraid.engine.raid.scrub import scrub_array
from vraid.engine.build import EngineConfig, EngineOptions
from vraid.ondisk.assemble import assemble
from vraid.ondisk.create import create
from vraid.ondisk.logfiles import geometry_disk_size
from vraid.testing.inline_files import inline_syncs
from vraid.testing.session import Session

K = 1024
NEVER = 1 << 60
LOG_SIZE = 12 * 64 * K + 4 * K  # 12 segments per store: the log fills and wraps quickly


def note(text: str) -> None:
    """Hypothesis's note inside a test run; nothing when a test drives the machine by hand."""
    try:
        _hypothesis_note(text)
    except InvalidArgument:
        pass


def _bytes(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


class LogCrashMachine(RuleBasedStateMachine):
    def __init__(self, kind: str, workdir: Path, *, ram: int = 64 * K, cache: str | None = None,
                 volatile: bool = False) -> None:
        super().__init__()
        self.kind = kind
        self.ram = ram
        self.cache = cache
        self.volatile = volatile
        self.layers: list[VolatileStore] = []
        self.dir = Path(tempfile.mkdtemp(dir=workdir))
        disk_size = RESERVED + 24 * 8 * K + (LOG_SIZE if kind == "per-disk" else 0)
        g = Geometry.for_disk_size(level=5, ndisks=4, disk_size=geometry_disk_size(kind, disk_size, LOG_SIZE),
                                   strip_size=8 * K)
        create(self.dir / "arr", g, disk_size, bitmap_chunk=2, log=kind, log_size=LOG_SIZE)
        self.g = g
        self.bs = g.block_size
        self.capacity = g.capacity
        self.blocks = self.capacity // self.bs
        self.model = bytearray(self.capacity)
        #: per block, every value it may hold after a crash (the fsynced one and later ones)
        self.allowed: list[set[bytes]] = [{bytes(self.bs)} for _ in range(self.blocks)]
        self.crashes = 0
        self._mount()

    def _layer(self, store):
        """``store`` behind a volatile write cache (a power cut loses what was not flushed)."""
        if not self.volatile:
            return store
        layer = VolatileStore(store, block_size=self.bs)
        self.layers.append(layer)
        return layer

    def _mount(self, cut: int | None = None) -> None:
        """Assemble and start (recovery runs); ``cut``: the power fails that many requests into
        the recovery, and the array is assembled and recovered again."""
        asm = assemble(self.dir / "arr")
        assert not asm.log_problem, asm.log_problem
        asm.open_stores()
        self.power = PowerCut(NEVER if cut is None else cut, seed=self.crashes, flushes=True)
        self.layers = []
        wrap = lambda s: FaultyStore(self._layer(s), clock=TrioClock(), block_size=self.bs, power=self.power)  # noqa: E731
        asm.stores = [FaultyStore(self._layer(s), clock=TrioClock(), block_size=self.bs, data_offset=self.g.data_offset,
                                  power=self.power) for s in inline_syncs(asm.stores)]
        asm.log_stores = [wrap(s) for s in inline_syncs(asm.log_stores)]
        from dataclasses import replace

        # level 1 by the rules, fsync, a full buffer or an idle log only: no timer to hide a missing one
        opts = EngineOptions(cache=self.cache, cache_size="64K") if self.cache else EngineOptions()
        config = replace(EngineConfig.from_assembled(asm, opts), log_ram=self.ram, log_timer=1e9)
        asm.mark(clean=False)
        self.asm = asm
        self.recovery_cut = False
        if cut is not None:
            try:
                Session(config).close()  # the power fails during the recovery, or right after it
            except Exception as exc:  # noqa: BLE001 - the cut
                note(f"  recovery cut short: {exc!r}")
                self.recovery_cut = True
            for layer in self.layers:
                layer.drop()
            asm.close()
            self.crashes += 1
            cut_short = self.recovery_cut
            self._mount()
            self.recovery_cut = cut_short
            return
        self.portal = Session(config)
        if self.cache:
            self.portal.call_sync(self.portal.array.cache.serve_a_mount)  # as the daemon does
        self.report = self.portal.engine.report
        note(f"mounted: {self.report.message() or 'nothing to recover'}")

    def _drop(self) -> None:
        self.portal.close()
        for layer in self.layers:  # a power cut: what the stores were not told to keep is gone
            layer.drop()
        self.asm.close()

    def _fsynced(self) -> None:
        for b in range(self.blocks):
            self.allowed[b] = {bytes(self.model[b * self.bs : (b + 1) * self.bs])}

    def _written(self, offset: int, payload: bytes) -> None:
        self.model[offset : offset + len(payload)] = payload
        bs = self.bs
        for b in range(offset // bs, (offset + len(payload) - 1) // bs + 1):
            self.allowed[b].add(bytes(self.model[b * bs : (b + 1) * bs]))

    def _check_after_crash(self) -> None:
        got = self.portal.read(0, self.capacity)
        bs = self.bs
        for b in range(self.blocks):
            have = got[b * bs : (b + 1) * bs]
            assert have in self.allowed[b], f"block {b}: not its fsynced value nor a later one (lost an fsynced write?)"
        self.model[:] = got
        self._fsynced()
        result = self.portal.call(scrub_array, self.portal.array.raid)
        assert result.mismatches == 0, f"scrub found {result.mismatches} mismatches in stripes {result.stripes}"

    # -- rules --------------------------------------------------------------------------------
    def _draw_write(self, data) -> tuple[int, bytes]:
        offset = data.draw(st.integers(0, self.capacity - 1), label="offset")
        n = data.draw(st.integers(1, min(3 * self.g.stripe_data_bytes, self.capacity - offset)), label="length")
        return offset, _bytes(data.draw(st.integers(0, 2**32 - 1), label="seed"), n)

    @rule(data=st.data())
    def write(self, data) -> None:
        offset, payload = self._draw_write(data)
        note(f"write {offset}+{len(payload)}")
        self.portal.write(offset, payload)
        self._written(offset, payload)

    @rule(data=st.data())
    def read(self, data) -> None:
        offset = data.draw(st.integers(0, self.capacity - 1), label="offset")
        n = data.draw(st.integers(1, min(3 * self.g.stripe_data_bytes, self.capacity - offset)), label="length")
        note(f"read {offset}+{n}")
        assert self.portal.read(offset, n) == bytes(self.model[offset : offset + n]), "a read returned stale bytes"

    @rule()
    def fsync(self) -> None:
        note("fsync")
        self.portal.flush()
        self._fsynced()

    @rule(data=st.data(), cut=st.booleans())
    def writers(self, data, cut: bool) -> None:
        """Two writers at once, each on its own half of the array: writes, then an fsync (as
        a file system's threads do through FUSE), the write cache's destager and the log's
        levels running under them; with ``cut``, the power fails somewhere in the middle."""
        half = self.blocks // 2 * self.bs
        plans = []
        for lo, hi in ((0, half), (half, self.capacity)):
            ops = []
            for _ in range(data.draw(st.integers(1, 4), label="writes")):
                offset = data.draw(st.integers(lo, hi - 1), label="offset")
                n = data.draw(st.integers(1, min(2 * self.g.stripe_data_bytes, hi - offset)), label="length")
                ops.append((offset, _bytes(data.draw(st.integers(0, 2**32 - 1), label="seed"), n)))
            plans.append((lo, hi, ops))
        after = data.draw(st.integers(0, 40), label="requests before the cut") if cut else None
        note(f"writers {[(lo, [(o, len(p)) for o, p in ops]) for lo, hi, ops in plans]}, cut after {after}")
        array = self.portal.array

        async def writer(lo: int, hi: int, ops) -> None:
            for offset, payload in ops:
                self._maybe(offset, payload)  # it may land in part if the power fails meanwhile
                await array.write(offset, payload)
                self._written(offset, payload)
            await array.flush()
            bs = self.bs
            for b in range(lo // bs, hi // bs):  # this half is durable now
                self.allowed[b] = {bytes(self.model[b * bs : (b + 1) * bs])}

        async def both() -> None:
            async with trio.open_nursery() as n:
                for lo, hi, ops in plans:
                    n.start_soon(writer, lo, hi, ops)

        if after is not None:
            self.power.after = self.power.requests + after
        try:
            self.portal.call(both)
        except Exception as exc:  # noqa: BLE001 - the cut, in groups
            if after is None:
                raise
            note(f"  failed: {exc!r}")
        if after is not None:
            self._drop()
            self.crashes += 1
            self._mount()
            self._check_after_crash()

    def _maybe(self, offset: int, payload: bytes) -> None:
        bs = self.bs
        new = bytearray(self.model[offset // bs * bs : -(-(offset + len(payload)) // bs) * bs])
        base = offset // bs * bs
        new[offset - base : offset - base + len(payload)] = payload
        for i in range(len(new) // bs):
            self.allowed[base // bs + i].add(bytes(new[i * bs : (i + 1) * bs]))

    @rule()
    def level1(self) -> None:
        note("level-1 destage")
        self.portal.call(self.portal.array.log.level1, "test")

    @rule()
    def level2(self) -> None:
        note("level-2 destage")
        self.portal.call(self.portal.array.log.level2_one, "test")

    @rule(seconds=st.sampled_from([0.05, 0.3, 2.0]))
    def idle(self, seconds: float) -> None:
        note(f"idle {seconds} s")
        self.portal.advance(seconds)

    @rule()
    def remount(self) -> None:
        note("clean unmount and mount")
        self.portal.call(self.portal.array.shutdown)
        self._drop()
        self.asm.mark(clean=True)
        self._mount()
        assert self.report.replayed_blocks == 0, "a clean shutdown left blocks in the log"
        assert self.portal.read(0, self.capacity) == bytes(self.model)
        self._fsynced()

    @rule(data=st.data(), then=st.sampled_from(["fsync", "level1", "level2", "idle"]))
    def crash(self, data, then: str) -> None:
        after = data.draw(st.integers(0, 30), label="requests before the cut")
        offset, payload = self._draw_write(data)
        note(f"crash after {after} requests: write {offset}+{len(payload)}, then {then}")
        self.power.after = self.power.requests + after
        try:
            self.portal.write(offset, payload)
            self._written(offset, payload)
            if then == "fsync":
                self.portal.flush()
                self._fsynced()
            elif then == "level1":
                self.portal.call(self.portal.array.log.level1, "test")
            elif then == "idle":  # the background destages (cache, level 1 by the timer, level 2) run
                self.portal.advance(data.draw(st.sampled_from([0.05, 0.3, 2.0]), label="idle seconds"))
            else:
                while self.portal.call(self.portal.array.log.level2_one, "test") and not self.power.dead:
                    pass
        except Exception as exc:  # noqa: BLE001 - the cut: MemberIOError, LogFailed, OSError, in groups
            note(f"  failed: {exc!r}")
            # an unacknowledged write may have landed in part
            bs = self.bs
            new = bytearray(self.model)
            new[offset : offset + len(payload)] = payload
            for b in range(offset // bs, (offset + len(payload) - 1) // bs + 1):
                self.allowed[b].add(bytes(new[b * bs : (b + 1) * bs]))
        self._drop()
        self.crashes += 1
        self._mount(data.draw(st.none() | st.integers(0, 40), label="requests into the recovery before a second cut"))
        self._check_after_crash()

    def teardown(self) -> None:
        try:
            self.portal.call(self.portal.array.shutdown)
            assert self.portal.read(0, self.capacity) == bytes(self.model)
            self._drop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
