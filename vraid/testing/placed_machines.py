"""The model state machine of a remapped array (seed 004: ``multibuffer``, ``dpsr``).

:class:`PlacedArrayMatchesModel` runs the same writes and reads as
:class:`~vraid.testing.machines.ArrayMatchesModel` over an engine whose placement moves
strips through a stripe directory (:mod:`vraid.engine.placement.writes`), and checks:

* every read equals the bytearray model (buffered strips, moved strips, partial strips);
* after a flush, straight from the raw members: each logical strip sits in the slot the
  directory names, holding the model's bytes, and every parity block group XORs to zero
  (vraid keeps parity over the physical content of every slot, free ones included);
* the directory loaded afresh from the members (:class:`~vraid.engine.placement.directory_store.DirectoryStore`)
  equals the one in memory after a flush: the journal and checkpoints hold everything;
* a clean remount (unmount = drain + checkpoint) gives back the model;
* the background cleaner (a rule of its own, so runs repeat exactly) never changes what reads return;
* a crash (the engine dropped, no flush), checked per block as a disk's contract asks
  (:class:`~vraid.testing.since_flush.SinceFlush`: a block not written since the last
  flush reads back exactly, one written since as one of its versions, or zeros when its
  whole strip was); the array goes on from what it reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from hypothesis import note
from hypothesis.stateful import rule

from vraid.backends.memory import MemoryStore
from vraid.core.directory import NOWHERE
from vraid.engine.placement.directory_store import DirectoryStore
from vraid.ondisk.directory_area import PARAM, DirectoryArea, logical_stripes, spare_of
from vraid.policies import registry
from vraid.testing.machines import ArrayMatchesModel, Config
from vraid.testing.portal import ArrayPortal
from vraid.testing.since_flush import SinceFlush

UUID = "00000000-0000-4000-8000-000000000004"


class PlacedArrayMatchesModel(ArrayMatchesModel):
    def __init__(self, config: Config, spec: str, workdir: Path, *, options: dict | None = None) -> None:
        self.spec = spec
        g = config.geometry()
        policy = registry.create("placement", spec, registry.Context(geometry=g))
        logical = logical_stripes(g.stripes, spare_of(policy))
        self.area = DirectoryArea.for_geometry(g, logical * g.data_disks)
        self.options = {"policies": {"placement": spec}, "params": {PARAM: self.area.to_param(spec)},
                        "uuid": UUID, **(options or {})}
        self._size = self.area.offset + self.area.size
        self._fresh = policy.make_directory(g, logical)
        super().__init__(config, "memory", workdir, options=self.options)
        self.capacity = logical * g.stripe_data_bytes
        self.model = bytearray(self.capacity)
        self.since = SinceFlush(g.block_size, g.strip_size, self.model)

    def _open(self, *, was_clean: bool = True) -> ArrayPortal:
        if not hasattr(self, "_formatted"):
            self.stores = [MemoryStore(self._size, f"mem{i}") for i in range(self.g.ndisks)]
            DirectoryStore.format_sync(self.stores, self.area, self._fresh)
            self._formatted = True
        portal = ArrayPortal(self.g, self.stores, was_clean=was_clean, **self.options)
        portal.array.placed.idle = float("inf")  # the machine's `clean` rule runs the cleaner: repeatable
        return portal

    def _write(self, offset: int, length: int, seed: int, what: str) -> None:
        super()._write(offset, length, seed, what)
        self.since.written(offset, length, self.model)

    # -- checks ---------------------------------------------------------------------------
    def check_members(self) -> None:
        g = self.g
        directory = self.portal.array.mapping
        areas = np.stack([np.frombuffer(self.stores[d].read_sync(g.data_offset, g.stripes * g.strip_size),
                                        dtype=np.uint8).reshape(g.stripes, g.strip_size) for d in range(g.ndisks)])
        S = g.strip_size
        for L in range(self.capacity // S):
            s, m = directory.loc[L]
            assert (s, m) != NOWHERE, f"strip {L} has no slot after a flush"
            if areas[m, s].tobytes() != bytes(self.model[L * S : (L + 1) * S]):
                raise AssertionError(f"strip {L} at stripe {s} member {m} differs from the model")
        pbg = np.bitwise_xor.reduce(areas.reshape(g.ndisks, g.stripes * g.u, g.block_size), axis=0)
        bad = np.flatnonzero(pbg.any(axis=1))
        assert not bad.size, f"{bad.size} PBG(s) with wrong parity; first: stripe {int(bad[0]) // g.u}"
        loaded = DirectoryStore.load_sync(self.stores, self.area, g).directory
        assert loaded.snapshot() == directory.snapshot(), "the directory on the members differs from memory"
        directory.check()

    # -- rules ----------------------------------------------------------------------------
    @rule()
    def flush(self) -> None:
        note("flush")
        self.portal.flush()
        self.since.flushed(self.model)
        self.check_members()

    @rule()
    def remount(self) -> None:
        note("remount (clean: unmount drains the buffers and checkpoints)")
        self.portal.shutdown()
        self.portal.close()
        self.since.flushed(self.model)
        self.portal = self._open()

    @rule()
    def clean(self) -> None:
        note("the background cleaner runs (the array is idle)")
        self.portal.call(self.portal.array.placed.clean_once)

    @rule()
    def crash(self) -> None:
        note(f"crash with strips {self.since.strips()} written since the last flush")
        self.portal.close()
        self.portal = self._open(was_clean=False)
        got = self.portal.read(0, self.capacity)
        self.since.check(got)
        self.model = bytearray(got)  # the written blocks: whatever version survived
        self.since.flushed(self.model)

    def teardown(self) -> None:
        try:
            whole = self.portal.read(0, self.capacity)
            assert whole == bytes(self.model), "a full read differs from the model"
            self.portal.flush()
            self.check_members()
        finally:
            self.portal.close()
            for s in self.stores:
                s.close()
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)


#: (geometry, placement spec) pairs the tests run: small buffers and few spare stripes, so
#: that stripe writes, the cleaner and (DPSR) the RAID-5 fallback all happen within a few rules
CASES = [
    (Config(5, 5, 4096, 4096, 24), "multibuffer:buffer=8,order=lrw,hot=0.25,spare=0.2"),
    (Config(5, 4, 8192, 4096, 16), "multibuffer:buffer=5,order=fifo,hot=0.1,spare=0.15"),
    (Config(5, 3, 4096, 512, 32), "multibuffer:buffer=3,order=lrw,hot=0,spare=0.1"),
    (Config(5, 5, 4096, 4096, 24), "dpsr:buffer=8,spare=0.2"),
    (Config(5, 4, 8192, 4096, 16), "dpsr:buffer=3,spare=0.1"),
]
