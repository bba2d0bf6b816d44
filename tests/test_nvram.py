"""The emulated NVRAM (``backends/nvram.py``): format, replay, torn records,
kill -9 of a writer process, power loss emulated entry by entry, and a
hypothesis model of put / clear / sync / crash / power loss / reset."""

from __future__ import annotations

import itertools
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from vraid.backends.nvram import Nvram
from vraid.backends.nvram_format import (
    ENTRY_SIZE,
    HEADER_CRC_AT,
    HEADER_SIZE,
    MAGIC,
    RECORD,
    VERSION,
    NvramError,
    default_spare,
    layout,
)
from vraid.errors import VraidError

BS = 512

# A tmpfs directory for tests that open many small files: sync there costs
# nothing, and durability is emulated from file images anyway.
FAST_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def payload(tag: int, block: int, bs: int = BS) -> bytes:
    """Block contents that say which put wrote them."""
    return (struct.pack("<QQ", tag, block) * (bs // 16 + 1))[:bs]


def decode(data: bytes) -> tuple[int, int]:
    return struct.unpack_from("<QQ", data)


def expected(model: dict[int, tuple[int, int, bytes]]) -> list[tuple[int, bytes]]:
    """What replay must return for ``model`` = {slot: (tag, block, data)}; tags grow with every put."""
    best: dict[int, tuple[int, bytes]] = {}
    for tag, block, data in model.values():
        if block not in best or best[block][0] < tag:
            best[block] = (tag, data)
    return [(block, data) for block, (tag, data) in sorted(best.items(), key=lambda kv: kv[1][0])]


def kill(nv: Nvram) -> None:
    """What kill -9 does to the NVRAM: the mapping goes away, nothing is synced or cleaned up
    (the stores made are in the page cache, i.e. in the file)."""
    nv._detach()


def torn_put(nv: Nvram, slot: int, block: int, data: bytes, cut: int, entry: bool) -> bool:
    """The first steps of a put, then a kill: ``cut`` bytes of the data copied into the
    frame the put would use, and the entry written too if ``entry``. True if that amounts
    to the whole put after all (the frame already held the bytes past ``cut``)."""
    f = nv._free[-1]
    bs = nv.block_size
    with open(nv.path, "r+b") as fh:
        fh.seek(nv._data_off + f * bs)
        fh.write(data[:cut])
        fh.seek(nv._data_off + f * bs)
        whole = fh.read(bs) == data
        if entry:
            seq = nv._seq + 1
            key = struct.pack("<QQIH", seq, block, slot, RECORD)
            fh.seek(nv._table_off + f * ENTRY_SIZE)
            fh.write(struct.pack("<QQIIH6x", seq, block, slot, zlib.crc32(data, zlib.crc32(key)), RECORD))
    kill(nv)
    return whole and entry


@pytest.fixture
def uid() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "array.nvram"


def make(path: Path, uid: str, slots: int = 8, bs: int = BS, spare: int | None = None) -> Nvram:
    return Nvram.create(path, slots=slots, block_size=bs, array_uuid=uid, spare=spare)


# -- format ---------------------------------------------------------------------------
def test_create_sizes_the_file_exactly_and_writes_the_documented_header(path, uid):
    nv = make(path, uid, slots=100, bs=4096, spare=28)
    frames = 128
    table_len = -(-frames * ENTRY_SIZE // 4096) * 4096
    size = HEADER_SIZE + table_len + frames * 4096
    assert (nv.slots, nv.frames, nv.block_size, nv.size) == (100, frames, 4096, size)
    assert os.path.getsize(path) == size == layout(4096, frames)[2]
    assert nv.used() == 0 and nv.replay() == []
    nv.close()
    raw = path.read_bytes()
    f = struct.unpack_from("<8sHHI16sIIIIQQQd", raw)
    assert f[0] == MAGIC and f[1] == VERSION and f[2] == ENTRY_SIZE
    assert uuid.UUID(bytes=f[4]) == uuid.UUID(uid)
    assert f[5:9] == (4096, 100, frames, 0)
    assert f[9:12] == (HEADER_SIZE, HEADER_SIZE + table_len, size)
    assert struct.unpack_from("<I", raw, HEADER_CRC_AT)[0] == zlib.crc32(raw[:HEADER_CRC_AT])
    assert not any(raw[HEADER_CRC_AT + 4 :])  # the rest is zeros: an empty table, zeroed data


def test_default_spare(path, uid):
    with make(path, uid, slots=1000) as nv:
        assert nv.frames == 1000 + default_spare(1000) == 1125
    assert default_spare(3) == 8


def test_create_refuses_an_existing_file_unless_forced(path, uid):
    nv = make(path, uid)
    nv.put(0, 1, payload(1, 1))
    nv.close()
    with pytest.raises(NvramError, match="already exists") as exc:
        make(path, uid)
    assert exc.value.hint
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert [b for b, _ in nv.replay()] == [1]  # untouched
    with Nvram.create(path, slots=4, block_size=BS, array_uuid=uid, force=True) as nv:
        assert nv.replay() == [] and nv.slots == 4
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "kwargs",
    [dict(slots=0), dict(block_size=0), dict(spare=0), dict(slots=True), dict(array_uuid="not-a-uuid")],
)
def test_create_rejects_impossible_parameters(path, uid, kwargs):
    args = dict(slots=4, block_size=BS, array_uuid=uid) | kwargs
    with pytest.raises(NvramError):
        Nvram.create(path, **args)
    assert not path.exists()


# -- slots ---------------------------------------------------------------------------
def test_round_trip_through_close_and_open(path, uid):
    nv = make(path, uid)
    rows = np.arange(4 * BS, dtype=np.uint32).astype(np.uint8).reshape(4, BS)
    nv.put(0, 10, payload(1, 10))
    nv.put(1, 11, bytearray(payload(2, 11)))
    nv.put(2, 12, memoryview(payload(3, 12)))
    nv.put(3, 13, rows[2])  # the cache puts numpy rows of its unit buffers
    assert nv.used() == 4
    want = [(10, payload(1, 10)), (11, payload(2, 11)), (12, payload(3, 12)), (13, rows[2].tobytes())]
    assert nv.replay() == want
    nv.close()
    nv.close()  # idempotent
    with Nvram.open(path, array_uuid=uid.upper(), block_size=BS) as nv:
        assert nv.replay() == want and nv.used() == 4
        assert all(isinstance(d, bytes) for _, d in nv.replay())


def test_replay_keeps_the_newest_record_per_block_in_sequence_order(path, uid):
    nv = make(path, uid)
    nv.put(0, 7, payload(1, 7))
    nv.put(1, 3, payload(2, 3))
    nv.put(2, 9, payload(3, 9))
    nv.put(0, 7, payload(4, 7))  # rewrite in the same slot
    nv.put(3, 3, payload(5, 3))  # the same block in a second slot (a unit's shadow), newer
    want = [(9, payload(3, 9)), (7, payload(4, 7)), (3, payload(5, 3))]
    assert nv.replay() == want
    kill(nv)
    nv = Nvram.open(path, array_uuid=uid, block_size=BS)
    assert nv.replay() == want
    nv.clear(3)  # the shadow's slot goes: the older record of block 3 counts again
    assert nv.replay() == [(3, payload(2, 3)), (9, payload(3, 9)), (7, payload(4, 7))]
    nv.close()


def test_clear(path, uid):
    nv = make(path, uid, slots=4)
    for s in range(4):
        nv.put(s, 100 + s, payload(s + 1, 100 + s))
    nv.sync()
    nv.clear(1)  # anchored by the sync: leaves a tombstone
    nv.clear(2)
    nv.put(2, 7, payload(9, 7))  # the slot reused for another block
    nv.put(0, 100, payload(10, 100))
    nv.clear(0)  # anchored and rewritten since
    nv.clear(1)  # clearing an empty slot does nothing
    assert nv.used() == 2 and nv.where(1) is None and nv.where(0) is None
    want = [(103, payload(4, 103)), (7, payload(9, 7))]
    assert nv.replay() == want
    kill(nv)
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == want and nv.used() == 2
        nv.reset()
        assert nv.replay() == [] and nv.used() == 0
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == []
        for s in range(4):  # every frame is free again
            nv.put(s, s, payload(s, s))
        assert len(nv._free) == nv.frames - 4


def test_where_points_at_the_block_in_the_file(path, uid):
    with make(path, uid) as nv:
        nv.put(5, 42, payload(1, 42))
        entry, data = nv.where(5)
        nv.sync()
        raw = path.read_bytes()
        assert raw[data : data + BS] == payload(1, 42)
        seq, block, slot, _crc, kind = struct.unpack_from("<QQIIH", raw, entry)
        assert (block, slot, kind) == (42, 5, RECORD) and seq > 0
        assert nv.where(4) is None


def test_put_rejects_bad_arguments_without_losing_a_frame(path, uid):
    with make(path, uid, slots=2, spare=1) as nv:
        nv.put(0, 1, payload(1, 1))
        with pytest.raises(ValueError, match="512 bytes"):
            nv.put(1, 2, b"short")
        with pytest.raises(ValueError):
            nv.put(1, 2, np.zeros((BS, 2), np.uint8)[:, 0])  # not contiguous
        with pytest.raises(IndexError):
            nv.put(2, 2, payload(1, 2))
        with pytest.raises(IndexError):
            nv.clear(-1)
        with pytest.raises(ValueError):
            nv.put(1, -1, payload(1, 2))
        assert len(nv._free) == nv.frames - 1
        assert nv.replay() == [(1, payload(1, 1))]
    with pytest.raises(ValueError, match="closed"):
        nv.put(0, 1, payload(1, 1))
    with pytest.raises(ValueError, match="closed"):
        nv.sync()


def test_put_many_is_puts_in_fewer_writes(path, uid):
    """put_many records what the same puts record, in consecutive frames, and survives a
    reopen; bad input changes nothing; too many records for the free frames fall back to
    puts (which sync by themselves)."""
    with make(path, uid, slots=8, spare=2) as nv:
        nv.put(0, 10, payload(1, 10))
        first = nv._free[-1]
        nv.put_many([(1, 11, payload(2, 11)), (2, 12, payload(3, 12)), (0, 10, payload(4, 10))])
        assert sorted(nv._held[s][-1] for s in (1, 2, 0)) == [first, first + 1, first + 2]
        assert nv.replay() == [(11, payload(2, 11)), (12, payload(3, 12)), (10, payload(4, 10))]
        free = len(nv._free)
        with pytest.raises(ValueError, match="512 bytes"):
            nv.put_many([(3, 13, payload(5, 13)), (4, 14, b"short")])
        with pytest.raises(IndexError):
            nv.put_many([(3, 13, payload(5, 13)), (9, 14, payload(5, 14))])
        assert len(nv._free) == free and nv.used() == 3
        nv.put_many([(s, 20 + s, payload(6 + s, 20 + s)) for s in range(3, 8)])
        nv.sync()  # every slot's record is an anchor now: a rewrite needs a frame of its own
        syncs = nv.syncs
        nv.put_many([(s, 30 + s, payload(40 + s, 30 + s)) for s in range(8)])
        assert nv.syncs > syncs  # more records than free frames: put by put, syncing on the way
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == [(30 + s, payload(40 + s, 30 + s)) for s in range(8)]


def test_a_put_syncs_by_itself_when_the_spare_frames_run_out(path, uid):
    with make(path, uid, slots=2, spare=1) as nv:
        nv.put(0, 1, payload(1, 1))
        nv.put(1, 2, payload(2, 2))
        nv.sync()
        nv.put(0, 1, payload(3, 1))  # the anchor of slot 0 stays: 3 frames in use
        assert nv.forced_syncs == 0
        nv.put(0, 1, payload(4, 1))  # no free frame: sync first, which frees the old anchor
        assert nv.forced_syncs == 1
        assert nv.replay() == [(2, payload(2, 2)), (1, payload(4, 1))]


# -- torn and damaged records ----------------------------------------------------------------
def test_a_damaged_record_is_ignored_and_the_others_kept(path, uid):
    nv = make(path, uid)
    for s in range(4):
        nv.put(s, s, payload(s + 1, s))
    entry2, data2 = nv.where(2)
    entry3, _ = nv.where(3)
    nv.close()
    with open(path, "r+b") as fh:
        fh.seek(data2 + 100)
        fh.write(b"\xff")  # a flipped data byte
        fh.seek(entry3 + 8)
        fh.write(struct.pack("<Q", 99))  # the entry says another block
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == [(0, payload(1, 0)), (1, payload(2, 1))]
        assert nv.used() == 2
        assert not any(path.read_bytes()[entry2 : entry2 + ENTRY_SIZE])  # dropped at open


@pytest.mark.parametrize(
    "cut, entry",
    [(BS // 2, False), (BS, False), (0, True), (BS // 2, True), (BS - 1, True)],
    ids=["half-data", "all-data-no-entry", "entry-no-data", "half-data-entry", "data-short-by-1"],
)
def test_a_torn_rewrite_leaves_the_previous_version(path, uid, cut, entry):
    nv = make(path, uid)
    nv.put(0, 5, payload(1, 5))
    nv.put(1, 6, payload(2, 6))
    assert not torn_put(nv, 0, 5, payload(3, 5)[:-1] + b"\x01", cut, entry)
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == [(5, payload(1, 5)), (6, payload(2, 6))]


def test_a_completed_put_killed_before_its_bookkeeping_counts(path, uid):
    nv = make(path, uid)
    nv.put(0, 5, payload(1, 5))
    assert torn_put(nv, 0, 5, payload(2, 5), BS, True)
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == [(5, payload(2, 5))]
        assert nv.used() == 1 and len(nv._free) == nv.frames - 1  # the older record was dropped at open


def test_an_unsynced_rewrite_that_never_reached_the_disk_leaves_the_synced_version(path, uid):
    nv = make(path, uid)
    nv.put(0, 5, payload(1, 5))
    nv.sync()
    nv.put(0, 5, payload(2, 5))
    nv.put(0, 5, payload(3, 5))  # an in-place design would have overwritten version 1 by now
    _, data = nv.where(0)
    kill(nv)
    with open(path, "r+b") as fh:  # the power went before the newest data page was written back
        fh.seek(data)
        fh.write(bytes(BS))
    with Nvram.open(path, array_uuid=uid, block_size=BS) as nv:
        assert nv.replay() == [(5, payload(1, 5))]


# -- power loss, emulated -----------------------------------------------------------------------
def units(nv: Nvram, grain: int = 512) -> list[tuple[int, int]]:
    """The pieces of the file a device writes atomically, at the finest grain the design may
    rely on: each 32-byte table entry, each ``grain`` bytes (a sector) of data (the header is
    never rewritten)."""
    out = [(nv._table_off + f * ENTRY_SIZE, nv._table_off + (f + 1) * ENTRY_SIZE) for f in range(nv.frames)]
    step = min(nv.block_size, grain)
    out += [(o, min(o + step, nv.size)) for o in range(nv._data_off, nv.size, step)]
    return out


def mix(images: list[bytes], pieces: list[tuple[int, int]], choice: list[int]) -> bytes:
    """The disk after a power loss: each piece as one of the images had it (images[0] is what
    the last sync made durable; the others are what the memory held at later moments)."""
    out = bytearray(images[0])
    for (a, b), i in zip(pieces, choice):
        out[a:b] = images[i][a:b]
    return bytes(out)


class DurableImages:
    """Emulates what the disk holds: at every sync, the synced pages (whole pages, as the
    kernel writes them) become durable; between syncs the file is recorded after every
    operation, as the moments whose contents the kernel may have written back meanwhile."""

    def __init__(self, nv: Nvram) -> None:
        self.attach(nv)

    def attach(self, nv: Nvram) -> None:
        """Start from ``nv`` as it is (create and open end with a sync of everything)."""
        self.nv = nv
        self.disk = self.read()
        self.images = [self.disk]
        orig = nv._persist

        def spy(start: int, end: int) -> None:
            orig(start, end)
            page = mmap.PAGESIZE
            a, b = start - start % page, min(-(-end // page) * page, nv.size)
            self.disk = self.disk[:a] + self.read()[a:b] + self.disk[b:]
            self.images = [self.disk]

        nv._persist = spy

    def read(self) -> bytes:
        return self.nv.path.read_bytes()  # the page cache, which the mapping shares

    def moment(self) -> None:
        self.images.append(self.read())


def every_power_loss(images: list[bytes], nv: Nvram):
    """Every disk a power loss can leave, piece by piece (only pieces that changed vary)."""
    pieces = [u for u in units(nv) if len({img[u[0] : u[1]] for img in images}) > 1]
    for choice in itertools.product(range(len(images)), repeat=len(pieces)):
        yield mix(images, pieces, list(choice))


def check_after_power_loss(got, synced, changed, allowed):
    """``got``: replay of the recovered file; ``synced``: {slot: (tag, block)} at the last
    sync; ``changed``: slots cleared or given another block since; ``allowed``: tags that may
    appear (those synced and those put since)."""
    seen = {}
    for block, data in got:
        tag, b = decode(data)
        assert b == block and data == payload(tag, block, len(data)), "garbage replayed"
        assert tag in allowed, f"record {tag} of block {block} is older than the last sync"
        seen[block] = tag
    for slot, (tag, block) in synced.items():
        if slot not in changed:
            assert seen.get(block, -1) >= tag, f"synced block {block} (record {tag}) lost"


def recover(d: Path, image: bytes, uid: str, bs: int = BS) -> list[tuple[int, bytes]]:
    """Mount a disk image: what replay returns."""
    q = d / "recovered"
    q.write_bytes(image)
    try:
        with Nvram.open(q, array_uuid=uid, block_size=bs) as r:
            return r.replay()
    finally:
        q.unlink()


@pytest.fixture
def fast_dir():
    d = Path(tempfile.mkdtemp(dir=FAST_DIR))
    yield d
    shutil.rmtree(d)


def test_power_loss_after_rewrites_and_a_clear(fast_dir, uid):
    nv = make(fast_dir / "nv", uid, slots=3, spare=2)
    rec = DurableImages(nv)
    nv.put(0, 5, payload(1, 5))
    nv.put(1, 6, payload(2, 6))
    nv.put(2, 7, payload(3, 7))
    nv.sync()
    rec.moment()
    for op in (
        lambda: nv.put(0, 5, payload(4, 5)),
        lambda: nv.put(0, 5, payload(5, 5)),  # rewritten twice: in place, version 1 would be gone
        lambda: nv.clear(1),
        lambda: nv.put(1, 8, payload(6, 8)),
    ):
        op()
        rec.moment()
    n = 0
    for image in every_power_loss(rec.images, nv):
        check_after_power_loss(recover(fast_dir, image, uid), {0: (1, 5), 1: (2, 6), 2: (3, 7)}, {1}, {1, 2, 3, 4, 5, 6})
        n += 1
    assert n >= 3**4
    nv.close()


def test_power_loss_never_brings_back_a_record_older_than_the_last_sync(fast_dir, uid):
    nv = make(fast_dir / "nv", uid, slots=2, spare=2)
    rec = DurableImages(nv)
    nv.put(0, 5, payload(1, 5))
    nv.sync()
    nv.put(0, 5, payload(2, 5))
    nv.sync()  # record 1 is given back after this sync: the disk still holds it, valid
    rec.moment()
    nv.clear(0)  # must outrank record 1 in one store (a tombstone), not just zero record 2
    rec.moment()
    nv.put(1, 6, payload(3, 6))
    rec.moment()
    n = 0
    for image in every_power_loss(rec.images, nv):
        check_after_power_loss(recover(fast_dir, image, uid), {0: (2, 5)}, {0}, {2, 3})
        n += 1
    assert n >= 9
    nv.close()


# -- kill -9 of a writer process -------------------------------------------------------------
OPS = r'''
import random, struct

def payload(tag, block, bs):
    return (struct.pack("<QQ", tag, block) * (bs // 16 + 1))[:bs]

def ops(seed, n, slots, blocks):
    """A workload like the cache's: mostly rewrites of a slot's block, some clears and syncs."""
    rng = random.Random(seed)
    owner = {}
    for i in range(n):
        r, slot = rng.random(), rng.randrange(slots)
        if r < 0.12:
            owner.pop(slot, None)
            yield ("clear", slot, -1)
        elif r < 0.15:
            yield ("sync", -1, -1)
        else:
            block = owner[slot] if slot in owner and rng.random() < 0.8 else rng.randrange(blocks)
            owner[slot] = block
            yield ("put", slot, block)
'''

CHILD = OPS + r'''
import os, sys, time
from vraid.backends.nvram import Nvram

path, uid, bs, seed, n, slots, blocks = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
nv = Nvram.open(path, array_uuid=uid, block_size=bs)
for i, (op, slot, block) in enumerate(ops(seed, n, slots, blocks)):
    if op == "put":
        nv.put(slot, block, payload(i, block, bs))
    elif op == "clear":
        nv.clear(slot)
    else:
        nv.sync()
    os.write(1, b"%d\n" % i)  # op i has returned
os.write(1, b"done\n")
time.sleep(600)
'''

_ops_ns: dict = {}
exec(OPS, _ops_ns)


@pytest.mark.parametrize(
    "bs, slots, spare, kill_after, seed",
    [(4096, 6, 2, 20, 1), (4096, 6, 2, 300, 2), (4096, 6, 2, 2000, 3), (1 << 20, 4, 1, 3, 4), (1 << 20, 4, 1, 25, 5), (1 << 20, 4, 1, 60, 6)],
)
def test_kill9_loses_no_put_that_returned(tmp_path, uid, bs, slots, spare, kill_after, seed):
    p = tmp_path / "nv"
    Nvram.create(p, slots=slots, block_size=bs, array_uuid=uid, spare=spare).close()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    n_ops, blocks = 100_000, slots + 3
    proc = subprocess.Popen(
        [sys.executable, str(script), str(p), uid, str(bs), str(seed), str(n_ops), str(slots), str(blocks)],
        stdout=subprocess.PIPE,
    )
    try:
        reported = 0
        while reported < kill_after:
            line = proc.stdout.readline()
            assert line and line != b"done\n", "the child ended early"
            reported += 1
        time.sleep(random.Random(seed).random() * 0.002)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    reported += sum(1 for line in proc.stdout.read().splitlines() if line.isdigit())
    proc.stdout.close()
    # ops 0..reported-1 returned; op `reported` may have run, partly or wholly
    model: dict[int, tuple[int, int, bytes]] = {}
    states = []
    for i, (op, slot, block) in enumerate(_ops_ns["ops"](seed, reported + 1, slots, blocks)):
        if i == reported:
            states.append(expected(model))
        if op == "put":
            model[slot] = (i, block, _ops_ns["payload"](i, block, bs))
        elif op == "clear":
            model.pop(slot, None)
    states.append(expected(model))
    with Nvram.open(p, array_uuid=uid, block_size=bs) as nv:
        got = nv.replay()
    assert got in states, f"after {reported} ops the replay matches neither state"


# -- a sync thread next to the writer ---------------------------------------------------------------
def test_sync_in_another_thread_while_putting(path, uid):
    nv = make(path, uid, slots=16, bs=4096, spare=4)
    stop = threading.Event()
    errors = []

    def syncer():
        try:
            while not stop.is_set():
                nv.sync()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    th = threading.Thread(target=syncer)
    th.start()
    rng = random.Random(7)
    model: dict[int, tuple[int, int, bytes]] = {}
    try:
        for tag in range(1, 20_000):
            slot = rng.randrange(16)
            if rng.random() < 0.1:
                nv.clear(slot)
                model.pop(slot, None)
            else:
                block = model[slot][1] if slot in model else rng.randrange(40)
                data = payload(tag, block, 4096)
                nv.put(slot, block, data)
                model[slot] = (tag, block, data)
    finally:
        stop.set()
        th.join()
    assert not errors and nv.syncs > 10
    assert nv.replay() == expected(model)
    nv.sync()
    assert len(nv._free) == nv.frames - len(model)  # one frame per used slot once all is synced
    kill(nv)
    with Nvram.open(path, array_uuid=uid, block_size=4096) as nv:
        assert nv.replay() == expected(model)


# -- files that must be refused ------------------------------------------------------------------
def test_an_nvram_file_of_another_array_is_refused(path, uid):
    make(path, uid).close()
    other = str(uuid.uuid4())
    with pytest.raises(VraidError) as exc:
        Nvram.open(path, array_uuid=other, block_size=BS)
    text = str(exc.value)
    assert uid in text and other in text and "belongs to array" in text
    assert "mount that array" in exc.value.hint and "--nvram" in exc.value.hint


def test_another_block_size_is_refused(path, uid):
    make(path, uid).close()
    with pytest.raises(VraidError, match="512-byte blocks, but the array uses 4096-byte") as exc:
        Nvram.open(path, array_uuid=uid, block_size=4096)
    assert exc.value.hint


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p, raw: p.write_bytes(b"\x00" * len(raw)), "not a vraid NVRAM file"),
        (lambda p, raw: p.write_bytes(b""), "not a vraid NVRAM file"),
        (lambda p, raw: p.write_bytes(b"hello world\n" * 1000), "not a vraid NVRAM file"),
        (lambda p, raw: p.write_bytes(raw[:-1]), "truncated"),
        (lambda p, raw: p.write_bytes(raw[: len(raw) // 2]), "truncated"),
        (lambda p, raw: p.write_bytes(raw[:100]), "truncated"),
        (lambda p, raw: p.write_bytes(raw + bytes(4096)), "longer"),
        (lambda p, raw: p.write_bytes(raw[:40] + b"\x09" + raw[41:]), "checksum"),
        (lambda p, raw: p.write_bytes(raw[:HEADER_CRC_AT] + b"\0\0\0\0" + raw[HEADER_CRC_AT + 4 :]), "checksum"),
    ],
    ids=["zeros", "empty", "text", "short-by-1", "half", "header-only-part", "extended", "header-byte", "header-crc"],
)
def test_a_damaged_file_is_refused(path, uid, damage, message):
    nv = make(path, uid)
    nv.put(0, 1, payload(1, 1))
    nv.close()
    damage(path, path.read_bytes())
    with pytest.raises(VraidError, match=message) as exc:
        Nvram.open(path, array_uuid=uid, block_size=BS)
    assert exc.value.hint


def test_a_version_from_the_future_is_refused(path, uid):
    make(path, uid).close()
    raw = bytearray(path.read_bytes())
    raw[8:10] = struct.pack("<H", VERSION + 1)
    raw[HEADER_CRC_AT : HEADER_CRC_AT + 4] = struct.pack("<I", zlib.crc32(raw[:HEADER_CRC_AT]))
    path.write_bytes(raw)
    with pytest.raises(VraidError, match="version"):
        Nvram.open(path, array_uuid=uid, block_size=BS)


def test_missing_file_and_file_in_use_are_refused(path, uid):
    with pytest.raises(VraidError, match="does not exist"):
        Nvram.open(path, array_uuid=uid, block_size=BS)
    with make(path, uid):
        with pytest.raises(VraidError, match="in use") as exc:
            Nvram.open(path, array_uuid=uid, block_size=BS)
        assert "unmount" in exc.value.hint
    Nvram.open(path, array_uuid=uid, block_size=BS).close()  # closing unlocks


# -- the model ------------------------------------------------------------------------------------
class NvramMachine(RuleBasedStateMachine):
    """put / clear / sync / kill / torn put / power loss / reset against a dict model.

    4 slots and 2 spare frames, so puts also run out of frames and sync by
    themselves; one frame per page, so a sync that misses a frame shows.
    What each sync writes is recorded as the disk, and the file after every
    step as what the memory held then; a power loss recovers a file made of
    table entries and data pages each taken from one of those moments."""

    SLOTS, SPARE, BLOCKS, BS = 4, 2, 6, 4096

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="nvram-model-", dir=FAST_DIR))
        self.path = self.dir / "nv"
        self.uid = str(uuid.uuid4())
        self.model: dict[int, tuple[int, int, bytes]] = {}
        self.tag = 0
        self.nv = Nvram.create(self.path, slots=self.SLOTS, block_size=self.BS, array_uuid=self.uid, spare=self.SPARE)
        self.rec = DurableImages(self.nv)
        self.synced_at(self.model)

    def teardown(self) -> None:
        self.nv.close()
        shutil.rmtree(self.dir)

    def synced_at(self, model) -> None:
        """The last sync saw ``model``."""
        self.synced = {s: (t, b) for s, (t, b, _) in model.items()}
        self.allowed = {t for t, _ in self.synced.values()}
        self.changed: set[int] = set()
        self.syncs = self.nv.syncs

    def reopen(self) -> None:
        self.nv = Nvram.open(self.path, array_uuid=self.uid, block_size=self.BS)
        self.rec.attach(self.nv)  # open syncs, then drops tombstones that made needless: close enough
        assert self.nv.replay() == expected(self.model)
        self.synced_at(self.model)

    @rule(slot=st.integers(0, SLOTS - 1), block=st.integers(0, BLOCKS - 1), rewrite=st.booleans())
    def put(self, slot, block, rewrite):
        if slot in self.model and rewrite:
            block = self.model[slot][1]
        before = dict(self.model)
        self.tag += 1
        data = payload(self.tag, block, self.BS)
        self.nv.put(slot, block, data)
        if self.nv.syncs != self.syncs:  # it ran out of frames and synced before writing anything
            self.synced_at(before)
        if slot in self.model and self.model[slot][1] != block:
            self.changed.add(slot)
        self.model[slot] = (self.tag, block, data)
        self.allowed.add(self.tag)
        self.rec.moment()

    @rule(slots=st.lists(st.integers(0, SLOTS - 1), min_size=2, max_size=SLOTS, unique=True),
          blocks=st.lists(st.integers(0, BLOCKS - 1), min_size=SLOTS, max_size=SLOTS))
    def put_many(self, slots, blocks):
        before = dict(self.model)
        items = []
        for slot, block in zip(slots, blocks):
            if any(b == block and s != slot for s, (_, b, _) in self.model.items()) or \
                    any(b == block for _, b, _ in items):
                continue  # one block in two slots: the cache never does that outside a destage
            self.tag += 1
            items.append((slot, block, payload(self.tag, block, self.BS)))
        syncs = self.nv.syncs
        self.nv.put_many(items)
        if self.nv.syncs != syncs:  # fell back to puts, which ran out of frames and synced
            self.synced_at(before)
        for slot, block, data in items:
            if slot in self.model and self.model[slot][1] != block:
                self.changed.add(slot)
            self.model[slot] = (decode(data)[0], block, data)
            self.allowed.add(decode(data)[0])
        self.rec.moment()

    @rule(slot=st.integers(0, SLOTS - 1))
    def clear(self, slot):
        self.nv.clear(slot)
        self.model.pop(slot, None)
        self.changed.add(slot)
        self.rec.moment()

    @rule()
    def sync(self):
        self.nv.sync()
        self.synced_at(self.model)
        self.rec.moment()
        assert recover(self.dir, self.rec.disk, self.uid, self.BS) == expected(self.model)  # the disk alone has it all

    @rule()
    def kill_and_reopen(self):
        kill(self.nv)
        self.reopen()

    @precondition(lambda self: self.nv._free)
    @rule(slot=st.integers(0, SLOTS - 1), block=st.integers(0, BLOCKS - 1), cut=st.integers(0, BS), entry=st.booleans())
    def torn_put_and_reopen(self, slot, block, cut, entry):
        self.tag += 1
        data = payload(self.tag, block, self.BS)
        if torn_put(self.nv, slot, block, data, cut, entry):  # all of it got written: only the bookkeeping was missing
            self.model[slot] = (self.tag, block, data)
        self.reopen()

    @rule(data=st.data())
    def power_loss(self, data):
        images = self.rec.images
        pieces = units(self.nv, grain=4096)
        choice = [data.draw(st.integers(0, len(images) - 1)) if len({i[a:b] for i in images}) > 1 else 0 for a, b in pieces]
        got = recover(self.dir, mix(images, pieces, choice), self.uid, self.BS)
        check_after_power_loss(got, self.synced, self.changed, self.allowed)

    @rule()
    def reset(self):
        self.nv.reset()
        self.model.clear()
        self.synced_at(self.model)
        self.rec.moment()

    @invariant()
    def agrees_with_the_model(self):
        nv = self.nv
        assert nv.used() == len(self.model)
        assert nv.replay() == expected(self.model)
        held = [f for h in nv._held for f in h]
        assert len(set(held) | set(nv._free)) == len(held) + len(nv._free) == nv.frames  # no frame lost or shared


TestNvramModel = NvramMachine.TestCase
TestNvramModel.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=30))
@settings(max_examples=50, deadline=None)
def test_replay_is_the_newest_record_per_block_for_any_puts(puts):
    d = tempfile.mkdtemp(dir=FAST_DIR)
    try:
        model = {}
        with Nvram.create(Path(d) / "nv", slots=4, block_size=32, array_uuid=str(uuid.uuid4()), spare=1) as nv:
            for tag, (slot, block) in enumerate(puts, 1):
                nv.put(slot, block, payload(tag, block, 32))
                model[slot] = (tag, block, payload(tag, block, 32))
            assert nv.replay() == expected(model)
    finally:
        shutil.rmtree(d)


# -- speed ------------------------------------------------------------------------------------------
def test_microbenchmark(tmp_path, uid, capsys):
    """Not asserted: prints the cost of put / clear / sync on this machine."""
    slots = 8192
    nv = Nvram.create(tmp_path / "nv", slots=slots, block_size=4096, array_uuid=uid)
    rows = np.random.default_rng(1).integers(0, 256, (64, 4096), dtype=np.uint8)
    lines = []

    def bench(name, n, fn):
        t = time.perf_counter()
        for i in range(n):
            fn(i)
        lines.append(f"{name}: {(time.perf_counter() - t) / n * 1e6:.2f} us")

    for w in (64, 4096):  # the working set: 64 hot blocks, or 4096 blocks (16 MiB)
        bench(f"put 4 KiB numpy row, {w} slots round robin", 20_000, lambda i: nv.put(i % w, i % w, rows[i % 64]))
        nv.sync()
    data = bytes(rows[0])
    bench("put 4 KiB bytes, 64 slots", 20_000, lambda i: nv.put(i % 64, i % 64, data))
    bench("put + clear", 10_000, lambda i: (nv.put(5000, 1, data), nv.clear(5000)))
    nv.sync()

    def timed_sync(i, k):
        for j in range(k):
            nv.put((i * k + j) % 4096, j, rows[j % 64])
        t = time.perf_counter()
        nv.sync()
        return time.perf_counter() - t

    for k in (1, 16, 256):
        t = sorted(timed_sync(i, k) for i in range(30 if k < 256 else 10))
        lines.append(f"sync after {k} puts: median {t[len(t) // 2] * 1e6:.0f} us")
    t = []
    for i in range(30):
        nv.put(i % 64, i, data)
        s = time.perf_counter()
        nv._persist(0, nv.size)  # the whole file instead of the changed range
        t.append(time.perf_counter() - s)
        nv._lo, nv._hi = nv.frames, -1
    t.sort()
    lines.append(f"whole-file sync ({nv.size >> 20} MiB) after 1 put: median {t[len(t) // 2] * 1e6:.0f} us")
    nv.close()
    with capsys.disabled():
        print("\nNVRAM microbenchmark (" + str(tmp_path) + "):\n  " + "\n  ".join(lines))
