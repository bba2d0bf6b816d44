"""Lab ``log-disk``: the slot states of a VC-RAID log cache, its two destage levels, and what a
power cut leaves (seed 002, He & Yang, section 3).

A RAM buffer and an append-only log on a cache disk act as one non-volatile write cache in
front of a RAID-5. A host write lands in RAM (``IN_RAM_BUFFER``) and is acknowledged; an
fsync (or a full buffer, or a timer) appends everything in RAM to the log as segments of up to
64 KiB (*level 1*: ``IN_CACHE_DISK``); in idle time the log drains into the array through the
RAID planner (*level 2*: ``IN_DATA_DISK``, the entry then recycled). After a power cut the
next mount replays the log; what was only in RAM is gone.

Every answer is what vraid's engine does: the dealt operations run on a virtual-time
:class:`~vraid.testing.session.Session` over in-memory members and an in-memory ``scd`` log
(:mod:`vraid.engine.log.cache`), paused so that only the dealt fsync and the one dealt level-2
destage move blocks (no timer, no idle-time level 1 or level 2); the power cut drops the
session without shutting anything down and a new one recovers from the same stores.
"""

from __future__ import annotations

from typing import Any

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.engine.log.slots import IN_CACHE_DISK, IN_RAM_BUFFER
from vraid.ondisk.logsegment import segment_data_blocks
from vraid.testing.session import Session

from .framework import Lab, Question, rng

K = 1024
BLOCK = 4 * K
G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=(1 << 20) + 48 * 16 * K, strip_size=16 * K)
LOG = 640 * K + 4 * K  # ten 64 KiB segments
SPAN = 192  # blocks the dealt writes touch
WORDS = {IN_RAM_BUFFER: "ram", IN_CACHE_DISK: "log"}  # anything else: the data disks


def dealt(lab: Lab, seed: int) -> dict[str, Any]:
    """first: blocks written before the fsync; second: blocks written after it (never fsynced);
    named: three blocks the questions ask about."""
    r = rng(lab, seed)
    seg = segment_data_blocks(BLOCK)
    n1 = 6 if seed == 0 else r.randrange(3, 2 * seg + 4)
    first = tuple(r.randrange(SPAN) for _ in range(n1))
    n2 = 3 if seed == 0 else r.randrange(2, 7)
    second = tuple(r.choice(first) if r.random() < 0.5 else r.randrange(SPAN) for _ in range(n2))
    pool = sorted(set(first) | set(second))
    named = tuple(sorted(r.sample(pool, 3)))
    return {"first": first, "second": second, "named": named}


def _config(members, logs, **kw) -> EngineConfig:
    return EngineConfig(G, stores=members, log="scd", log_size=LOG, log_stores=logs, bitmap_chunk=4,
                        log_timer=1e9, log_destage="idle:idle=100000s,high=1.0", **kw)


def _value(i: int) -> bytes:
    """The bytes of the i-th write (every write distinct, so the newest is recognisable)."""
    return (i + 1).to_bytes(4, "little") * (BLOCK // 4)


def play(d: dict[str, Any]) -> dict[str, Any]:
    members = [MemoryStore(G.member_size, name=f"disk{i}") for i in range(G.ndisks)]
    logs = [MemoryStore(LOG, name="log0")]
    out: dict[str, Any] = {}
    newest: dict[int, bytes] = {}
    s = Session(_config(members, logs, log_fresh=True))
    try:
        lc = s.array.log
        s.call_sync(lc.pause)  # no level 1 or level 2 of its own: only the dealt fsync and destage
        writes = 0
        for b in d["first"]:
            newest[b] = _value(writes)
            s.write(b * BLOCK, newest[b])
            writes += 1
        s.flush()  # the fsync: level 1 of everything in RAM
        out["level1"] = (lc.metrics.level1_segments, lc.metrics.level1_blocks)
        out["level2_blocks"] = s.call(lc.level2_one, "lab")  # the oldest segment to the data disks
        for b in d["second"]:
            newest[b] = _value(writes)
            s.write(b * BLOCK, newest[b])
            writes += 1
        out["states"] = [WORDS.get(lc.table.state(b), "data") for b in d["named"]]
    finally:
        s.close()  # the power cut: nothing shut down, the RAM buffer is lost
    s = Session(_config(members, logs, was_clean=False))
    try:
        out["replayed"] = s.engine.report.replayed_blocks
        out["survivors"] = [b for b in d["named"] if s.read(b * BLOCK, BLOCK) == newest[b]]
    finally:
        s.shutdown()
        s.close()
    return out


class LogDiskLab(Lab):
    def setting(self, seed: int) -> str:
        d = dealt(self, seed)
        seg = segment_data_blocks(BLOCK)
        return (f"VC-RAID: RAID-5 of 4 disks (16 KiB strips, 4 KiB blocks) behind a log cache with one cache disk "
                f"(scd): a RAM buffer, and a log of 64 KiB segments (a header block and {seg} data blocks each). The "
                "timer and idle-time level 2 are off: only what the operations say moves blocks.\n"
                f"1. write blocks <{', '.join(map(str, d['first']))}> (one 4 KiB write each, in order);\n"
                "2. fsync;\n"
                "3. one level-2 destage (the oldest log segment to the data disks);\n"
                f"4. write blocks <{', '.join(map(str, d['second']))}>;\n"
                "5. the power fails; the array is mounted again.\n"
                f"Questions about blocks {', '.join(map(str, d['named']))} ask in that order.")

    def questions(self, seed: int) -> list[Question]:
        d = dealt(self, seed)
        run = play(d)
        seg = segment_data_blocks(BLOCK)
        distinct1 = len(set(d["first"]))
        named = d["named"]
        return [
            Question("q1", "The fsync (step 2): how many log segments does level 1 append, holding how many blocks?",
                     list(run["level1"]), kind="list", form="segments,blocks",
                     explanation=(f"level 1 appends every block in RAM once, so {distinct1} distinct block(s) (a "
                                  f"rewrite in RAM overwrites its slot in place), {seg} per 64 KiB segment.")),
            Question("q2", "How many blocks does the level-2 destage (step 3) write to the data disks?",
                     run["level2_blocks"], kind="int",
                     explanation=(f"the oldest segment's live blocks: level 1 sorts the RAM buffer by block address "
                                  f"and cuts it into segments of {seg}, so the first segment holds the {seg} "
                                  "lowest-numbered blocks of the fsync (all of them if fewer); level 2 writes them "
                                  "through the RAID planner.")),
            Question("q3", f"Before the power fails, where is the newest copy of blocks {', '.join(map(str, named))}?",
                     run["states"], kind="list", form="ram, log or data for each",
                     explanation="written after the fsync: ram (IN_RAM_BUFFER); appended at the fsync and not yet "
                                 "destaged: log (IN_CACHE_DISK); destaged by step 3 (IN_DATA_DISK, entry recycled), "
                                 "or never written: data."),
            Question("q4", "After the power cut and the mount, which of those blocks hold their newest value?",
                     run["survivors"], kind="set", form="block numbers",
                     explanation="the log and the data disks survive; the RAM buffer does not. A block whose newest "
                                 "copy was only in RAM reads back its older copy (from the log or the data disks): "
                                 "acknowledged but never fsynced."),
            Question("q5", "How many blocks does the mount replay from the log?", run["replayed"], kind="int",
                     explanation="every block in the log from its durable tail on (the newest copy per block). The "
                                 "tail is made durable (a checkpoint in the log superblock) when the log has drained "
                                 "completely, or when level 1 needs the space: so when level 2 emptied the log nothing "
                                 "is replayed, and when segments remain, the one level 2 already destaged is replayed "
                                 "again with them (harmless: the same copies)."),
        ]


LAB = LogDiskLab(name="log-disk", title="Log disk (VC-RAID): slot states, level-1 and level-2 destages, a power cut",
                 seeds=["002"])
