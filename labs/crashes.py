"""Lab ``crashes``: what survives a crash (kill -9, power cut) with a volatile cache, NVRAM, and the bitmap.

Three writes are acknowledged: the first is followed by an fsync, the other two are not, and the
destager is paused so they stay in the write cache. Then the engine is dropped without a
shutdown, as kill -9 or a power cut would, and mounted again on the same members. A volatile
cache loses what it held (only what an fsync forced out survives); an NVRAM cache (emulated
battery-backed memory, ``--nvram``) replays it; a write-through array wrote everything before
acknowledging it. After an unclean stop the array resyncs parity: the whole array without a
write-intent bitmap, only the chunks whose bits are set with one (bits are cleared lazily, so a
stripe written shortly before the crash is resynced although it was already consistent).

Every answer is what virtual-time :class:`~vraid.testing.session.Session` runs did: the same
in-memory members are reopened (``was_clean=False``) and read back, and the recovery report
(:class:`vraid.engine.host.recovery.ResyncReport`) is the one a mount prints.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096
NAMES = ("a", "b", "c")


def crash(g: Geometry, writes: dict[str, int], cache: str, *, nvram: Path | None, bitmap: int) -> tuple[set[str], Any]:
    """(the writes that read back after the crash, the recovery report)."""
    stores = [MemoryStore(g.member_size, name=f"disk{i}") for i in range(g.ndisks)]
    data = {name: os.urandom(BLOCK) for name in writes}
    kw = {"nvram": nvram} if nvram is not None else {}
    base = dict(stores=stores, policies={"cache": cache}, cache_size=1 << 20, bitmap_chunk=bitmap)
    s = Session(EngineConfig(g, nvram_fresh=nvram is not None, **base, **kw))
    try:
        if cache != "none":
            s.pause()
        for i, (name, block) in enumerate(writes.items()):
            s.write(block * BLOCK, data[name])
            if i == 0:   # fsync after the first write (the destager must run for it)
                if cache != "none":
                    s.resume()
                s.flush()
                if cache != "none":
                    s.pause()
    finally:
        s.close()    # dropped: no shutdown, no flush
    with Session(EngineConfig(g, was_clean=False, **base, **kw)) as again:
        kept = {name for name, block in writes.items() if again.read(block * BLOCK, BLOCK) == data[name]}
        return kept, again.engine.report


class CrashesLab(Lab):
    def dealt(self, seed: int) -> tuple[Geometry, dict[str, int]]:
        r = rng(self, seed)
        ndisks = r.choice((4, 5))
        g = Geometry.for_disk_size(level=5, ndisks=ndisks, disk_size=r.choice((3, 4)) << 20, strip_size=16 << 10)
        per = g.data_disks * g.u
        stripes = r.sample(range(g.stripes), 3)
        return g, {name: s * per + r.randrange(per) for name, s in zip(NAMES, stripes)}

    def setting(self, seed: int) -> str:
        g, writes = self.dealt(seed)
        where = ", ".join(f"{n} = block {b} (stripe {g.locate(b).stripe})" for n, b in writes.items())
        return (f"RAID-5, {g.ndisks} disks, {g.stripes} stripes, a stripe write cache whose destager is paused. "
                f"Three 4 KiB writes, each acknowledged: {where}. After a, an fsync (it returns once a is on the "
                "members); after b and c none. Then kill -9 (the engine is dropped, no shutdown) and a new mount on "
                "the same members. Answer sets of the names a, b, c (or none).")

    def questions(self, seed: int) -> list[Question]:
        g, writes = self.dealt(seed)
        with tempfile.TemporaryDirectory(prefix="vraid-lab-crash-") as tmp:
            volatile, vrep = crash(g, writes, "stripe", nvram=None, bitmap=1)
            nv, nrep = crash(g, writes, "stripe", nvram=Path(tmp) / "nvram", bitmap=1)
        through, _ = crash(g, writes, "none", nvram=None, bitmap=1)
        _, whole = crash(g, writes, "stripe", nvram=None, bitmap=0)
        return [
            Question("q1", "Volatile cache: which writes read back after the crash?", sorted(volatile), kind="set",
                     form="names, or none",
                     explanation="acknowledged but only in volatile memory: lost with the process; the fsync had "
                                 "forced a out. Applications that need durability fsync."),
            Question("q2", "NVRAM cache (--nvram): which writes read back?", sorted(nv), kind="set", form="names",
                     explanation="every acknowledged write was journalled in NVRAM first; the new mount replays them."),
            Question("q3", "NVRAM: how many blocks does the mount replay?", nrep.replayed_blocks,
                     explanation=("every block still dirty in the cache is in the journal; with NVRAM an fsync only "
                                  "makes the journal durable (fdatasync), it does not wait for a destage, so a is usually "
                                  f"among them. The mount said: {nrep.message()}.")),
            Question("q4", "No write cache (write-through): which writes read back?", sorted(through), kind="set",
                     form="names", explanation="each write reached the members before it was acknowledged."),
            Question("q5", "Volatile cache: stripes resynced after the crash without a bitmap, then with a bitmap "
                           "of one stripe per bit?", [whole.stripes, vrep.stripes], kind="list", form="without,with",
                     explanation=(f"without a bitmap nothing says which stripes were being written: all {g.stripes} "
                                  f"({whole.reason}). With it: {vrep.reason}; bits are cleared lazily after the "
                                  "writes settle, so a stripe written just before the crash is resynced anyway.")),
        ]


LAB = CrashesLab(name="crashes", title="Crashes: what survives kill -9 with a volatile cache, NVRAM, and the bitmap",
                 seeds=["000", "003"])
