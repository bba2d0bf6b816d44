"""Power cuts on a remapped array (seed 004: ``multibuffer``, ``dpsr``) against a model.

The sibling of :mod:`vraid.testing.crash_machine` for a placement: the array is made as
``vraid create --placement`` makes it (a stripe directory in every member's region, with a
small journal here so that full journals and checkpoints happen too), mounted as the
daemon mounts it, its members behind one :class:`~vraid.backends.faulty.PowerCut`. The
``crash`` rule arms the cut a random number of member requests ahead and then writes,
flushes (stripe writes and a directory commit) or runs the cleaner (swaps, releases):
the request that crosses the limit is torn (a prefix of its blocks lands) and every
member fails from then on. Then everything in memory is dropped, the array is assembled
again and mounted: the directory is loaded (the newest whole checkpoint and its journal
up to the first torn record, from whichever member got furthest), strips whose buffered
copy the cut took are placed again, the bitmap's chunks are resynced. Invariants, per
block, as a disk promises them:

* a block not written since the last flush that returned reads back exactly;
* a block written since reads back as its flushed content, one of the versions written
  since, or zeros when its whole strip was written since (the write buffers are volatile:
  docs/multibuffer.md); never as anything else;
* after recovery, scrub finds 0 parity mismatches;
* a clean unmount and mount keep everything.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from vraid.backends.faulty import FaultyStore, PowerCut
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.clock import TrioClock
from vraid.engine.scrub import scrub_array
from vraid.fuse.daemon import MountOptions, engine_config
from vraid.ondisk.assemble import assemble, create
from vraid.ondisk.directory_area import DirectoryArea, logical_stripes, spare_of
from vraid.policies import registry
from vraid.testing.session import Session

K = 1024
NEVER = 1 << 60
CHUNK = 2  # stripes per bitmap bit
STRIPES = 24
#: a journal of a few blocks: it fills within a run, so checkpoints are cut too
JOURNAL = 4 * 4 * K


def _bytes(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


class PlacedCrashMachine(RuleBasedStateMachine):
    def __init__(self, spec: str, workdir: Path, *, options: dict | None = None) -> None:
        super().__init__()
        #: EngineConfig keywords over the mount's (``vraid fuzz``: on_policy_fault); the
        #: placement is the array's own (recorded by create), never taken from here
        self.options = {k: v for k, v in (options or {}).items() if k != "policies"}
        self.dir = Path(tempfile.mkdtemp(dir=workdir))
        policy = registry.create("placement", spec, registry.Context())
        self.spec = registry.parse("placement", spec).text
        probe = Geometry.for_disk_size(level=5, ndisks=4, disk_size=RESERVED + STRIPES * 4 * K, strip_size=4 * K)
        g = Geometry(5, 4, STRIPES, probe.block_size, 4 * K, probe.layout, probe.data_offset)
        logical = logical_stripes(STRIPES, spare_of(policy))
        area = DirectoryArea.for_geometry(g, logical * g.data_disks, journal=JOURNAL)
        disk_size = area.offset + area.size
        create(self.dir / "arr", g, disk_size, bitmap_chunk=CHUNK,
               placement=(self.spec, area, policy.make_directory(g, logical)))
        self.g = g
        self.capacity = logical * g.stripe_data_bytes
        self.model = bytearray(self.capacity)
        self.crashes = 0
        self._flushed()
        self._mount()

    # -- the model ----------------------------------------------------------------------
    def _flushed(self) -> None:
        """What a crash must keep from now on: the model as it is."""
        self.flushed_model = bytes(self.model)
        #: block -> its contents written since the last flush (each version)
        self.versions: dict[int, set[bytes]] = {}

    def _written(self, offset: int, payload: bytes) -> None:
        self.model[offset : offset + len(payload)] = payload
        bs = self.g.block_size
        for b in range(offset // bs, (offset + len(payload) - 1) // bs + 1):
            self.versions.setdefault(b, set()).add(bytes(self.model[b * bs : (b + 1) * bs]))

    # -- mounting, as the daemon does ---------------------------------------------------
    def _mount(self) -> None:
        asm = assemble(self.dir / "arr")
        asm.open_stores()
        was_clean = asm.was_clean
        self.power = PowerCut(NEVER, seed=self.crashes)
        asm.stores = [FaultyStore(s, clock=TrioClock(), block_size=self.g.block_size, data_offset=self.g.data_offset,
                                  power=self.power) for s in asm.stores]
        config = engine_config(asm, MountOptions())
        assert config.policies.get("placement") == self.spec, config.policies
        if self.options:
            config = replace(config, **self.options)
        asm.mark(clean=False)
        self.asm = asm
        self.portal = Session(config)
        self.portal.array.placed.idle = float("inf")  # the `clean` rule runs the cleaner: repeatable
        note(f"mounted ({'clean' if was_clean else 'dirty'}): {self.portal.engine.report.message() or 'nothing to recover'}")

    def _unmount(self) -> None:
        self.portal.call(self.portal.array.shutdown)
        self.portal.close()
        self.asm.mark(clean=True)
        self.asm.close()

    # -- checks ---------------------------------------------------------------------------
    def _scrub(self) -> None:
        result = self.portal.call(scrub_array, self.portal.array)
        assert result.mismatches == 0, f"scrub found {result.mismatches} mismatches in stripes {result.stripes}"

    def _check_after_crash(self) -> None:
        bs, S = self.g.block_size, self.g.strip_size
        per_strip = S // bs
        got = self.portal.read(0, self.capacity)
        zeros = bytes(bs)
        for b in range(self.capacity // bs):
            now, flushed = got[b * bs : (b + 1) * bs], self.flushed_model[b * bs : (b + 1) * bs]
            written = self.versions.get(b)
            if written is None:
                assert now == flushed, f"block {b}, not written since the last flush, changed in the crash"
                continue
            L = b // per_strip
            whole = all(c in self.versions for c in range(L * per_strip, (L + 1) * per_strip))
            assert now == flushed or now in written or (whole and now == zeros), \
                f"block {b} (strip {L}) reads back as none of its versions since the last flush"
        self.model = bytearray(got)
        self._flushed()

    # -- rules ----------------------------------------------------------------------------
    def _draw_write(self, data) -> tuple[int, bytes]:
        S = self.g.strip_size
        shape = data.draw(st.sampled_from(["strips", "any"]), label="shape")
        if shape == "strips":  # whole strips: what goes through the write buffers
            first = data.draw(st.integers(0, self.capacity // S - 1), label="first strip")
            count = data.draw(st.integers(1, min(6, self.capacity // S - first)), label="strips")
            offset, n = first * S, count * S
        else:
            offset = data.draw(st.integers(0, self.capacity - 1), label="offset")
            n = data.draw(st.integers(1, min(3 * S + 100, self.capacity - offset)), label="length")
        return offset, _bytes(data.draw(st.integers(0, 2**32 - 1), label="seed"), n)

    @rule(data=st.data())
    def write(self, data) -> None:
        offset, payload = self._draw_write(data)
        note(f"write offset={offset} length={len(payload)}")
        self.portal.write(offset, payload)
        self._written(offset, payload)

    @rule()
    def flush(self) -> None:
        note("flush")
        self.portal.flush()
        self._flushed()

    @rule()
    def clean(self) -> None:
        note("the cleaner runs")
        self.portal.call(self.portal.array.placed.clean_once)

    @rule()
    def remount(self) -> None:
        note("clean unmount and mount")
        self._unmount()
        self._mount()
        assert self.portal.read(0, self.capacity) == bytes(self.model), "a clean remount changed the data"
        self._flushed()

    @rule(data=st.data(), then=st.sampled_from(["write", "flush", "clean"]))
    def crash(self, data, then: str) -> None:
        """Cut the power a few member requests ahead, during a write, a flush or a cleaning."""
        after = data.draw(st.integers(0, 30), label="member requests before the cut")
        offset, payload = self._draw_write(data)
        note(f"crash after {after} more member requests: write {offset}+{len(payload)}, then {then}")
        self.power.after = self.power.requests + after
        self._written(offset, payload)  # acknowledged or not, its blocks may read back either way
        try:
            self.portal.write(offset, payload)
            if then == "flush":
                self.portal.flush()
                self._flushed()
            elif then == "clean":
                while not self.power.dead and self.portal.call(self.portal.array.placed.clean_once):
                    pass
        except Exception as exc:  # noqa: BLE001 - the cut: MemberIOError, possibly in an ExceptionGroup
            note(f"  failed: {exc!r}")
        note(f"  torn: {self.power.torn}")
        self.portal.close()  # everything in memory dropped: no shutdown, no flush
        self.asm.close()
        self.crashes += 1
        self._mount()
        self._check_after_crash()
        self._scrub()

    def teardown(self) -> None:
        try:
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a full read differs from the model"
            self._scrub()
            self._unmount()
            self._mount()
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a clean remount changed the data"
            self._unmount()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
