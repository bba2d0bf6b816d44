"""Crash consistency against a model: power cuts mid-write, reassembly, resync from the bitmap.

A sibling of the machines in :mod:`vraid.testing.machines` (tests/test_crash_model.py runs it;
``vraid fuzz --with-crashes`` runs it with a student's policy). The array runs on
real member files, assembled from its directory as a mount does, behind a
fault-injecting wrapper that shares one :class:`PowerCut` across the members.
The ``crash`` rule arms the cut a random number of member requests ahead and
writes (write-through) or destages (a cache with NVRAM): the request that
crosses the limit is torn (only a prefix of its blocks lands) and every
member fails from then on. Then all in-memory state is dropped, the array
is reassembled from the member files, and the recovery a mount runs
(``vraid.engine.host.recovery.recover``: NVRAM replay, resync of the chunks the
write-intent bitmap has set) brings it back. Invariants:

* the stripe the torn member write belonged to is covered by a bit of the
  bitmap found on disk (the bit was durable before the first member write);
* every acknowledged write reads back (write-through: acknowledged means on
  the members; NVRAM: in NVRAM or on the members), and each block of the
  interrupted write holds either its old or its new contents;
* after the resync, scrub finds 0 mismatches.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import trio
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from vraid.backends.faulty import FaultyStore, PowerCut
from vraid.testing.inline_files import inline_syncs
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.clock import TrioClock
from vraid.engine.raid.scrub import scrub_array
from vraid.engine.build import EngineConfig, EngineOptions
from vraid.ondisk.assemble import assemble
from vraid.core.redundancy import for_level
from vraid.ondisk.create import create
from vraid.testing.session import Session

K = 1024
NEVER = 1 << 60
CHUNK = 2  # stripes per bitmap bit: small, so the bitmap matters


def seeded_bytes(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def behind_power_cut(asm, g: Geometry, *, seed: int) -> PowerCut:
    """Open ``asm``'s member stores behind one power cut (not armed: ``after`` is set later)."""
    asm.open_stores()
    power = PowerCut(NEVER, seed=seed)
    asm.stores = [FaultyStore(s, clock=TrioClock(), block_size=g.block_size, data_offset=g.data_offset, power=power)
                  for s in inline_syncs(asm.stores)]  # syncs on the engine's thread: an example replays exactly
    return power


def assert_scrub_clean(portal) -> None:
    result = portal.call(scrub_array, portal.array.raid)
    assert result.mismatches == 0, f"scrub found {result.mismatches} mismatches in stripes {result.stripes}"


class CrashMachine(RuleBasedStateMachine):
    def __init__(self, mode: str, workdir: Path, *, options: dict | None = None, level: int = 5,
                 ndisks: int | None = None) -> None:
        """``level``, ``ndisks``: the array's (one member more than the level needs unless told:
        RAID-5 4, RAID-6 5)."""
        super().__init__()
        self.mode = mode
        #: EngineConfig keywords over the mount's (``vraid fuzz``: policies, on_policy_fault)
        self.options = dict(options or {})
        self.dir = Path(tempfile.mkdtemp(dir=workdir))
        disk_size = RESERVED + 24 * 8 * K
        if ndisks is None:
            ndisks = for_level(level).min_disks + 1
        g = Geometry.for_disk_size(level=level, ndisks=ndisks, disk_size=disk_size, strip_size=8 * K)
        create(self.dir / "arr", g, disk_size, bitmap_chunk=CHUNK)
        self.g = g
        self.capacity = g.capacity
        self.model = bytearray(self.capacity)
        self.nvram_path = self.dir / "nvram.bin" if mode == "nvram" else None
        self.crashes = 0
        self._mount()

    # -- mounting, as the daemon does ---------------------------------------------------
    def _mount(self) -> None:
        """What the daemon does: assemble, build the engine from the mount's EngineConfig
        (``vraid.engine.build``: NVRAM opened and replayed, the bitmap's set chunks loaded,
        recovery run), with the members behind one power cut."""
        asm = assemble(self.dir / "arr")
        was_clean = asm.was_clean
        self.power = behind_power_cut(asm, self.g, seed=self.crashes)
        opts = EngineOptions()
        if self.nvram_path is not None:
            opts = EngineOptions(cache="stripe", cache_size=str(3 * self.g.stripe_data_bytes),
                                destage="hlwm:high=0.9,low=0.6", nvram=self.nvram_path)
        config = EngineConfig.from_assembled(asm, opts)
        assert config.bitmap_chunk == CHUNK and config.bitmap_recorded
        if self.options:
            extra = dict(self.options)
            config = replace(config, policies={**config.policies, **extra.pop("policies", {})}, **extra)
        asm.mark(clean=False)
        self.asm = asm
        self.portal = Session(config)
        self.found_chunks = self.portal.engine.bitmap_chunks
        self.report = self.portal.engine.report
        note(f"mounted ({'clean' if was_clean else 'dirty'}): {self.report.message() or 'nothing to recover'}")

    def _unmount(self) -> None:
        self.portal.call(self.portal.array.shutdown)
        self.portal.close()
        self.asm.mark(clean=True)
        self._close()

    def _close(self) -> None:
        self.asm.close()

    # -- checks --------------------------------------------------------------------
    def _scrub(self) -> None:
        assert_scrub_clean(self.portal)

    def _adopt(self, uncertain: dict[int, tuple[bytes, bytes]]) -> None:
        """Read everything back; blocks of an interrupted write may be old or new."""
        bs = self.g.block_size
        got = self.portal.read(0, self.capacity)
        for b in range(self.capacity // bs):
            have = got[b * bs : (b + 1) * bs]
            if b in uncertain:
                old, new = uncertain[b]
                assert have in (old, new), f"block {b} of the interrupted write is neither old nor new"
                self.model[b * bs : (b + 1) * bs] = have
            else:
                want = bytes(self.model[b * bs : (b + 1) * bs])
                assert have == want, f"block {b} (stripe {self.g.locate(b).stripe}) lost an acknowledged write"

    # -- rules ---------------------------------------------------------------------
    def _draw_write(self, data) -> tuple[int, bytes]:
        offset = data.draw(st.integers(0, self.capacity - 1), label="offset")
        n = data.draw(st.integers(1, min(2 * self.g.stripe_data_bytes + 5000, self.capacity - offset)), label="length")
        return offset, seeded_bytes(data.draw(st.integers(0, 2**32 - 1), label="seed"), n)

    @rule(data=st.data())
    def write(self, data) -> None:
        offset, payload = self._draw_write(data)
        note(f"write offset={offset} length={len(payload)}")
        self.portal.write(offset, payload)
        self.model[offset : offset + len(payload)] = payload

    @rule()
    def flush(self) -> None:
        note("flush")
        self.portal.flush()

    @precondition(lambda self: self.nvram_path is not None)
    @rule()
    def destage(self) -> None:
        note("destage one unit")
        self.portal.call(self.portal.array.cache.destage_one)

    @rule()
    def remount(self) -> None:
        note("clean unmount and mount")
        self._unmount()
        self._mount()
        assert self.report.stripes == 0, "a clean array was resynced"
        assert self.found_chunks == set(), "a clean shutdown left bits set"

    @rule(data=st.data())
    def crash(self, data) -> None:
        """Cut the power a few member requests ahead, mid-write; reassemble and recover."""
        after = data.draw(st.integers(0, 24), label="member requests before the cut")
        offset, payload = self._draw_write(data)
        bs = self.g.block_size
        first, last = offset // bs, (offset + len(payload) - 1) // bs
        old = bytes(self.model[first * bs : (last + 1) * bs])
        new_model = bytearray(self.model)
        new_model[offset : offset + len(payload)] = payload
        new = bytes(new_model[first * bs : (last + 1) * bs])
        self.power.after = self.power.requests + after
        note(f"crash: power cut after {after} more member requests, during a write at {offset}+{len(payload)}")
        uncertain: dict[int, tuple[bytes, bytes]] = {}
        try:
            self.portal.write(offset, payload)
            acknowledged = True
        except Exception as exc:  # noqa: BLE001 - MemberIOError, possibly in an ExceptionGroup
            note(f"  the write failed: {exc!r}")
            acknowledged = False
        if acknowledged:
            self.model[:] = new_model
            if self.nvram_path is not None:  # with a cache the members see the write at a destage
                self.portal.call(_destage_until_cut, self.portal.array, self.power)
        else:
            for i, b in enumerate(range(first, last + 1)):
                uncertain[b] = (old[i * bs : (i + 1) * bs], new[i * bs : (i + 1) * bs])
        torn = self.power.torn
        note(f"  torn: {torn}")
        # drop everything in memory: no shutdown, no flush
        self.portal.close()
        self._close()
        self.crashes += 1
        self._mount()
        if torn is not None and torn[1] >= self.g.data_offset:
            stripe = (torn[1] - self.g.data_offset) // (self.g.strip_size * self.g.depth)  # a stripe's strips of a member
            assert stripe // CHUNK in self.found_chunks, f"stripe {stripe} was torn but its bitmap bit was not set"
        self._adopt(uncertain)
        self._scrub()

    def teardown(self) -> None:
        try:
            self._adopt({})
            self._scrub()
            self._unmount()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


async def _destage_until_cut(array, power: PowerCut) -> None:
    """Destage units until the power is cut (or nothing is dirty); stop right there."""
    async with trio.open_nursery() as nursery:
        done = trio.Event()

        async def go() -> None:
            while await array.cache.destage_one():
                if power.dead:
                    break
            done.set()

        nursery.start_soon(go)
        while not done.is_set() and not power.dead:
            await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
