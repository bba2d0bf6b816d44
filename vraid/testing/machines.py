"""The model state machines: the array against the dumbest correct model, one bytearray.

Moved here from ``tests/`` so that the tests and ``vraid fuzz`` (:mod:`vraid.testing.fuzz`)
run the same machines. :class:`ArrayMatchesModel` writes (aligned, unaligned, sub-block,
across strips and stripes, past the end), reads (also past the end), flushes and remounts,
and after every flush (and at the end) looks at the member stores *directly*:

* every logical block sits on the member and at the offset the geometry says,
  holding the model's bytes;
* RAID-4/5: every parity block group XORs to zero, i.e. each parity block is
  the XOR of the data blocks of its PBG;
* RAID-6: every strip of every member is what md's layout, P and Q make of the
  model (:mod:`vraid.testing.raid6_oracle`, a slow reference of its own);
* RAID-1/10: every copy holds the same bytes as the data strip it mirrors.

:class:`CachedArrayMatchesModel` is the same with a write-back cache (any organisation,
destage order and scheduler): reads return exactly what the model holds whatever the
destager does, and after a drain the members are checked as above; with NVRAM, a crash (the
process state dropped without a shutdown) followed by a replay loses nothing acknowledged.
The read-cache and prefetch variant is in :mod:`vraid.testing.read_machines`, the contiguity
transform's in :mod:`vraid.testing.ct_machines`, power cuts in :mod:`vraid.testing.crash_machine`.

The array runs in a trio loop on a helper thread (:mod:`vraid.testing.portal`): stateful
hypothesis tests cannot run async rules. Every machine takes ``options``: the
:class:`~vraid.engine.config.EngineConfig` keywords of each engine it opens (policies,
``on_policy_fault``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from vraid.backends.file import FileStore
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.chain import CacheConfig
from vraid.errors import OutOfRange
from vraid.testing.portal import ArrayPortal
from vraid.testing.raid6_oracle import expected_areas

K = 1024


@dataclass(frozen=True)
class Config:
    level: int
    ndisks: int
    strip: int
    block: int
    stripes: int
    layout: str = "left-symmetric"
    data_offset: int = 4 * K

    def geometry(self) -> Geometry:
        return Geometry(self.level, self.ndisks, self.stripes, self.block, self.strip, self.layout, self.data_offset)

    @property
    def id(self) -> str:
        lay = {"left-symmetric": "ls", "left-asymmetric": "la", "right-symmetric": "rs", "right-asymmetric": "ra",
               "parity-last": "pl", "parity-first": "pf", "mirror": "m", "near-2": "n2"}
        tail = f"-{lay[self.layout]}" if self.geometry().redundancy.parity_columns else ""  # the layout
        return f"raid{self.level}-{self.ndisks}d-s{self.strip // K}K-b{self.block}-x{self.stripes}{tail}"


CONFIGS = [
    Config(5, 3, 4 * K, 4 * K, 64),
    Config(5, 4, 8 * K, 512, 16),
    Config(5, 5, 64 * K, 4 * K, 4, data_offset=RESERVED),
    Config(5, 7, 8 * K, 4 * K, 12, "left-asymmetric"),
    Config(5, 5, 4 * K, 512, 32, "right-symmetric", data_offset=8 * K),
    Config(5, 4, 4 * K, 4 * K, 24, "right-asymmetric"),
    Config(0, 3, 4 * K, 4 * K, 32),
    Config(0, 4, 64 * K, 512, 3, data_offset=64 * K),
    Config(0, 7, 8 * K, 4 * K, 8),
    Config(6, 4, 4 * K, 4 * K, 24),
    Config(6, 5, 8 * K, 512, 10, "left-asymmetric"),
    Config(6, 6, 4 * K, 4 * K, 12, "right-symmetric"),
    Config(4, 4, 8 * K, 512, 16, "parity-last"),
    Config(4, 3, 4 * K, 4 * K, 24, "parity-first"),
    Config(4, 6, 4 * K, 4 * K, 12, "parity-last"),
    Config(1, 2, 4 * K, 4 * K, 32, "mirror"),
    Config(1, 3, 8 * K, 512, 16, "mirror"),
    Config(10, 4, 4 * K, 4 * K, 24, "near-2"),
    Config(10, 6, 8 * K, 512, 8, "near-2"),
]


def _bytes(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


class ArrayMatchesModel(RuleBasedStateMachine):
    def __init__(self, config: Config, backend: str, workdir: Path, *, options: dict | None = None) -> None:
        super().__init__()
        #: EngineConfig keywords of every engine this machine opens (``vraid fuzz``: policies,
        #: on_policy_fault="stop"); subclasses that set it before calling here keep theirs
        self.options = dict(options or getattr(self, "options", None) or {})
        self.g = config.geometry()
        self.backend = backend
        self.capacity = self.g.capacity
        self.model = bytearray(self.capacity)
        self.dir = Path(tempfile.mkdtemp(dir=workdir)) if backend == "file" else None
        self.paths: list[Path] = []
        if backend == "file":
            self.paths = [self.dir / f"member{i}.img" for i in range(self.g.ndisks)]
            self.stores = [FileStore.create(p, self.g.member_size) for p in self.paths]
        else:
            self.stores = [MemoryStore(self.g.member_size, f"mem{i}") for i in range(self.g.ndisks)]
        self.portal = self._open()

    def _open(self) -> ArrayPortal:
        return ArrayPortal(self.g, self.stores, **self.options)

    # -- helpers ---------------------------------------------------------------------
    @property
    def max_len(self) -> int:
        return 3 * self.g.stripe_data_bytes

    def _write(self, offset: int, length: int, seed: int, what: str) -> None:
        data = _bytes(seed, length)
        note(f"write[{what}] offset={offset} length={length} seed={seed}")
        self.portal.write(offset, data)
        self.model[offset : offset + length] = data

    def _raw(self, disk: int) -> bytes:
        g = self.g
        length = g.member_data_bytes
        if self.backend == "file":
            with open(self.paths[disk], "rb") as f:  # the file itself, not the store
                return os.pread(f.fileno(), length, g.data_offset)
        return self.stores[disk].read_sync(g.data_offset, length)

    def check_members(self) -> None:
        """Data where the geometry puts it, and parity = XOR of data, from the raw members."""
        g = self.g
        lanes = np.stack(  # (member, stripe, lane, row, block): a lane is one of a member's strips of a stripe
            [np.frombuffer(self._raw(d), dtype=np.uint8).reshape(g.stripes, g.depth, g.u, g.block_size)
             for d in range(g.ndisks)]
        )
        areas = lanes[:, :, 0]  # every level but RAID-10 on an odd count: one strip a member per stripe
        image = np.empty((g.stripes, g.data_disks, g.u, g.block_size), dtype=np.uint8)
        for s in range(g.stripes):
            for k in range(g.data_disks):
                image[s, k] = lanes[g.data_disk(s, k), s, g.lane(s, k)]
        flat = image.reshape(-1)
        model = np.frombuffer(self.model, dtype=np.uint8)
        if not np.array_equal(flat, model):
            at = int(np.flatnonzero(flat != model)[0])
            a = g.locate(at // g.block_size)
            raise AssertionError(
                f"member data differs from the model at logical byte {at} "
                f"(stripe {a.stripe}, strip {a.strip}, row {a.row}, member {a.disk})"
            )
        copies = [(k, j) for k in range(g.data_disks) for j in g.redundancy.copies(k)]
        for s in range(g.stripes) if copies else ():  # RAID-1/10: each copy is its data strip's bytes
            cols, at = g.columns(s), g.lanes(s)
            for k, j in copies:
                c = g.data_disks + j
                if not np.array_equal(lanes[cols[c], s, at[c]], lanes[cols[k], s, at[k]]):
                    raise AssertionError(f"stripe {s}: member {cols[g.data_disks + j]} is not a copy of member {cols[k]}")
        if g.redundancy.parity_columns == 2 and not copies:  # RAID-6: every member byte for byte as md's P and Q make it
            want = expected_areas(g.layout, g.ndisks, g.stripes, g.strip_size, bytes(self.model))
            got = areas.reshape(g.ndisks, g.stripes, g.strip_size)
            bad = [(d, s) for d in range(g.ndisks) for s in range(g.stripes) if not np.array_equal(got[d, s], want[d, s])]
            if bad:
                d, s = bad[0]
                raise AssertionError(f"{len(bad)} strip(s) differ from md's RAID-6; first: member {d} stripe {s} "
                                     f"(P on {g.parity_disks(s)[0]}, Q on {g.parity_disks(s)[1]})")
        elif g.redundancy.parity_columns and not copies:  # RAID-4/5
            pbg = np.bitwise_xor.reduce(areas, axis=0)  # (stripes, u, block): zero where parity is right
            bad = np.flatnonzero(pbg.reshape(g.stripes * g.u, -1).any(axis=1))
            if bad.size:
                s, row = divmod(int(bad[0]), g.u)
                raise AssertionError(
                    f"{bad.size} PBG(s) with wrong parity; first: stripe {s} row {row} "
                    f"(parity on member {g.parity_disk(s)})"
                )

    # -- writes ------------------------------------------------------------------------
    @rule(data=st.data())
    def write_aligned(self, data) -> None:
        b = self.g.block_size
        first = data.draw(st.integers(0, self.capacity // b - 1), label="first block")
        room = min(self.max_len, self.capacity - first * b) // b
        n = data.draw(st.integers(1, room), label="blocks")
        self._write(first * b, n * b, data.draw(st.integers(0, 2**32 - 1), label="seed"), "aligned")

    @rule(data=st.data())
    def write_unaligned(self, data) -> None:
        offset = data.draw(st.integers(0, self.capacity - 1), label="offset")
        n = data.draw(st.integers(1, min(self.max_len, self.capacity - offset)), label="length")
        self._write(offset, n, data.draw(st.integers(0, 2**32 - 1), label="seed"), "unaligned")

    @rule(data=st.data())
    def write_sub_block(self, data) -> None:
        b = self.g.block_size
        block = data.draw(st.integers(0, self.capacity // b - 1), label="block")
        start = data.draw(st.integers(0, b - 1), label="start in block")
        n = data.draw(st.integers(1, b - start), label="length")
        self._write(block * b + start, n, data.draw(st.integers(0, 2**32 - 1), label="seed"), "sub-block")

    @rule(data=st.data(), unit=st.sampled_from(["strip", "stripe"]))
    def write_across_boundary(self, data, unit: str) -> None:
        """Straddle a strip or stripe boundary by a few bytes to a couple of blocks on each side."""
        g = self.g
        size = g.strip_size if unit == "strip" else g.stripe_data_bytes
        count = self.capacity // size
        if count < 2:
            return
        edge = data.draw(st.integers(1, count - 1), label=f"{unit} boundary") * size
        before = data.draw(st.integers(1, min(edge, 2 * g.block_size + 7)), label="bytes before")
        after = data.draw(st.integers(1, min(self.capacity - edge, 2 * g.block_size + 7)), label="bytes after")
        self._write(edge - before, before + after, data.draw(st.integers(0, 2**32 - 1), label="seed"), f"across {unit}")

    @rule(data=st.data())
    def write_whole_stripes(self, data) -> None:
        g = self.g
        per = g.stripe_data_bytes
        stripes = self.capacity // per  # the geometry's, or fewer with free stripes kept (seed 004)
        first = data.draw(st.integers(0, stripes - 1), label="stripe")
        n = data.draw(st.integers(1, min(3, stripes - first)), label="stripes")
        self._write(first * per, n * per, data.draw(st.integers(0, 2**32 - 1), label="seed"), "full stripes")

    @rule(data=st.data())
    def write_past_the_end(self, data) -> None:
        offset = data.draw(st.integers(max(0, self.capacity - 2 * self.g.block_size), self.capacity + 10), label="offset")
        n = data.draw(st.integers(max(1, self.capacity - offset + 1), self.capacity - offset + 3 * self.g.block_size), label="length")
        note(f"write past the end offset={offset} length={n}")
        try:
            self.portal.write(offset, b"\xee" * n)
        except OutOfRange:
            pass
        else:
            raise AssertionError(f"a write of {n} bytes at {offset} past the end of the array ({self.capacity}) did not fail")
        # nothing was written: the model is unchanged, checked at the next flush

    # -- reads ----------------------------------------------------------------------------
    @rule(data=st.data())
    def read(self, data) -> None:
        offset = data.draw(st.integers(0, self.capacity + self.g.block_size), label="offset")
        n = data.draw(st.integers(0, self.max_len), label="length")
        note(f"read offset={offset} length={n}")
        got = self.portal.read(offset, n)
        want = bytes(self.model[offset : offset + n])  # short past the end, empty beyond it
        assert len(got) == len(want) == max(0, min(n, self.capacity - offset))
        assert got == want

    @rule()
    def read_tail(self) -> None:
        b = self.g.block_size
        note("read the last block and beyond")
        assert self.portal.read(self.capacity - b - 1, 10 * b) == bytes(self.model[self.capacity - b - 1 :])
        assert self.portal.read(self.capacity, 1) == b""

    # -- flush and remount ------------------------------------------------------------------
    @rule()
    def flush(self) -> None:
        note("flush")
        self.portal.flush()
        self.check_members()

    @rule()
    def remount(self) -> None:
        note("remount")
        self.portal.close()
        if self.backend == "file":
            for s in self.stores:
                s.close()
            self.stores = [FileStore(p) for p in self.paths]
        self.portal = self._open()

    def teardown(self) -> None:
        try:
            whole = self.portal.read(0, self.capacity)
            assert whole == bytes(self.model), "a full read differs from the model"
            self.portal.flush()
        finally:
            self.portal.close()
        try:
            self.check_members()
        finally:
            for s in self.stores:
                s.close()
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)


class CachedArrayMatchesModel(ArrayMatchesModel):
    #: the cache settings the mount daemon makes (coalesced destages, no fill on a read
    #: miss, quiet overwrites, whole stripes around the cache), not the papers' cache
    as_mounted = False

    def __init__(self, cache: CacheConfig, backend: str, workdir: Path, nvram: bool = False, *,
                 options: dict | None = None, geometry: "Config | None" = None, as_mounted: bool = False) -> None:
        self.cache = cache
        self.as_mounted = as_mounted
        self.options = dict(options or {})
        self.nvram_path = workdir / f"nvram-{id(self)}" if nvram else None
        self.nvram = None
        super().__init__(geometry or GEOMETRY, backend, workdir)

    def _open(self, *, was_clean: bool = True) -> ArrayPortal:
        """The engine over the members, as a mount builds it: with NVRAM, what the file
        holds is replayed (``vraid.engine.host.recovery``) before the portal returns."""
        portal = ArrayPortal(self.g, self.stores, cache=self.cache, nvram=self.nvram_path, uuid=UUID, was_clean=was_clean,
                             **self.options)
        self.nvram = portal.engine.nvram
        if self.as_mounted:
            portal.array.cache.serve_a_mount()
        return portal

    def _drain(self) -> None:
        self.portal.call(self.portal.array.shutdown)

    @rule()
    def flush(self) -> None:
        note("flush, then drain the cache and check the members")
        self.portal.flush()
        self._drain()
        self.check_members()

    @rule()
    def destage_one(self) -> None:
        note("destage one unit now")
        self.portal.call(self.portal.array.cache.destage_one)

    @rule()
    def remount(self) -> None:
        note("remount (clean: drain first)")
        self._drain()
        super().remount()

    @precondition(lambda self: self.nvram_path is not None)
    @rule()
    def crash(self) -> None:
        """kill -9: drop the cache without a drain; the next mount replays what NVRAM holds
        and resyncs (the array has no bitmap: every stripe), as the daemon does."""
        note("crash and replay NVRAM")
        self.portal.close()
        self.portal = self._open(was_clean=False)
        report = self.portal.engine.report
        note(f"  {report.message()}")
        assert report.stripes == self.g.stripes, "an unclean array without a bitmap resyncs every stripe"
        assert self.nvram.used() == 0, "NVRAM still holds blocks after the replay"

    def teardown(self) -> None:
        try:
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a full read differs from the model"
            self._drain()
        finally:
            self.portal.close()
        try:
            self.check_members()
        finally:
            for s in self.stores:
                s.close()


UUID = "00000000-0000-4000-8000-000000000001"
ORGS = ("pbg", "stripe")
ORDERS = ("lrw", "lru", "fifo", "cscan")
SCHEDULERS = ("hlwm:high=0.6,low=0.3", "adaptive:period=0.05", "lt", "pi:target=0.4", "idle:idle=0.001,high=0.8")
GEOMETRY = Config(5, 4, 8 * K, 4 * K, 12)
#: the RAID-6 array of the cache machines (``vraid fuzz``, tests/test_cache_model.py): md's
#: asymmetric syndrome order, so Q's weights are not the logical order
RAID6 = Config(6, 5, 8 * K, 4 * K, 10, "left-asymmetric")
#: an array of every level beyond RAID-5 for the cache machines (tests/test_cache_model.py,
#: ``vraid fuzz``): the mirrors' writes touch only the copies of what they write
LEVEL_CONFIGS = {
    1: Config(1, 3, 8 * K, 4 * K, 12, "mirror"),
    4: Config(4, 4, 8 * K, 4 * K, 12, "parity-last"),
    6: RAID6,
    10: Config(10, 4, 8 * K, 4 * K, 12, "near-2"),
}
#: RAID-10 near-2 on an odd member count (md's period of two chunk rows a stripe, two strips of
#: every member) for the cache machines beside LEVEL_CONFIGS[10]
RAID10_ODD = Config(10, 5, 8 * K, 4 * K, 10, "near-2")
