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

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.build import EngineConfig
from vraid.ondisk.assemble import assemble
from vraid.ondisk.create import create
from vraid.ondisk.directory_area import DirectoryArea, logical_stripes, spare_of
from vraid.policies import registry
from vraid.testing.crash_machine import CHUNK, K, seeded_bytes, assert_scrub_clean, behind_power_cut
from vraid.testing.session import Session
from vraid.testing.since_flush import SinceFlush

STRIPES = 24
#: a journal of a few blocks: it fills within a run, so checkpoints are cut too
JOURNAL = 4 * 4 * K


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
        self.since = SinceFlush(g.block_size, g.strip_size, self.model)
        self.crashes = 0
        self._mount()

    def _written(self, offset: int, payload: bytes) -> None:
        self.model[offset : offset + len(payload)] = payload
        self.since.written(offset, len(payload), self.model)

    # -- mounting, as the daemon does ---------------------------------------------------
    def _mount(self) -> None:
        asm = assemble(self.dir / "arr")
        was_clean = asm.was_clean
        self.power = behind_power_cut(asm, self.g, seed=self.crashes)
        config = EngineConfig.from_assembled(asm)
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
        return offset, seeded_bytes(data.draw(st.integers(0, 2**32 - 1), label="seed"), n)

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
        self.since.flushed(self.model)

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
        self.since.flushed(self.model)

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
                self.since.flushed(self.model)
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
        got = self.portal.read(0, self.capacity)
        self.since.check(got)
        self.model = bytearray(got)
        self.since.flushed(self.model)
        assert_scrub_clean(self.portal)

    def teardown(self) -> None:
        try:
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a full read differs from the model"
            assert_scrub_clean(self.portal)
            self._unmount()
            self._mount()
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a clean remount changed the data"
            self._unmount()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
