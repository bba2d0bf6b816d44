"""What a mount does after an unclean shutdown, before it serves anything.

1. Journal replay (if the last mount had a cache with a journal, e.g. NVRAM,
   :mod:`vraid.engine.cache.journal`, or a log disk, :mod:`vraid.engine.log.cache`: its
   segments from the tail in sequence order, up to the first torn or stale one):
   every dirty block it held is written through to the members, newest copy last.
2. Resync (with parity: RAID-5): the parity of every (physical) stripe that may have been mid-write
   at the crash is recomputed from its data (``Array.resync``). Which ones:
   the stripes of the chunks the write-intent bitmap has set (plus those the
   replay touched); with no bitmap recorded in the superblocks (an array
   made before the bitmap existed, or created with ``--bitmap-chunk none``)
   every stripe of the array.
3. The members are flushed, the journal is emptied, and the bitmap's bits
   are cleared.

Like md's resync after an unclean shutdown (md reads its bitmap and resyncs
only the dirty chunks; without one it resyncs everything), except that md
resyncs in the background while serving and vraid finishes first: simpler to
reason about, and the arrays are small. The data of a write that was not
acknowledged may be old or new per block; parity then matches whatever data
is there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from vraid.engine.cache.journal import as_journal

if TYPE_CHECKING:
    from vraid.engine.host.array import Array
    from vraid.engine.cache.journal import Journal

log = logging.getLogger(__name__)


@dataclass
class ResyncReport:
    """How many stripes were resynced at mount, and why."""

    stripes: int = 0
    reason: str = ""
    replayed_blocks: int = 0
    bitmap_chunks: int = 0
    #: where the replayed blocks came from ("NVRAM", or the log disk's stores and segments)
    source: str = "NVRAM"
    #: what a forced replay gave up (a log damaged in the middle, ``vraid mount --force``)
    lost: str = ""

    def message(self) -> str:
        parts = []
        if self.replayed_blocks:
            parts.append(f"replayed {self.replayed_blocks} dirty blocks from {self.source}")
        elif self.source.startswith("the log disk"):
            parts.append(f"nothing to replay from {self.source}")
        if self.lost:
            parts.append(self.lost)
        if self.stripes or self.reason:
            parts.append(f"resynced {self.stripes} stripe{'s' if self.stripes != 1 else ''} ({self.reason})")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


async def recover(
    array: "Array",
    *,
    was_clean: bool,
    bitmap_chunks: set[int] | None,
    replay: Sequence[tuple[int, bytes]] | None = None,
    journal: "Journal | None" = None,
    nvram=None,
    source: str | None = None,
    lost: str = "",
) -> ResyncReport:
    """Replay, resync and settle (see the module docstring).

    ``bitmap_chunks``: the chunks the on-disk bitmap had set (``None``: the array
    has no bitmap). A clean array with no bit set and nothing to replay is left
    alone. ``replay``: the journal's blocks, if read already (default: ask
    ``journal``). ``nvram``: an NVRAM file, shorthand for ``journal=NvramJournal(nvram)``.
    """
    journal = as_journal(journal, nvram)
    if replay is None:
        replay = journal.replay() if journal is not None else []
    g = array.geometry
    report = ResyncReport(replayed_blocks=len(replay))
    if journal is not None and getattr(journal, "name", "") == "logdisk":
        report.source = source or "the log disk"
    report.lost = lost
    if lost:
        log.warning("%s", lost)
    bs = g.block_size
    for block, data in replay:
        await array.raid.write(block * bs, data)
    touched = {array.mapping.locate(block).stripe for block, _ in replay}
    bitmap = array.raid.intent
    if bitmap_chunks is None:
        if was_clean:
            stripes: list[int] = sorted(touched)
            report.reason = f"replay from {report.source}" if touched else ""
        else:
            stripes = list(range(array.mapping.stripes))
            report.reason = "no write-intent bitmap: the whole array"
    else:
        stripes = sorted(set(bitmap.stripes_of(bitmap_chunks) if bitmap is not None else ()) | touched)
        report.bitmap_chunks = len(bitmap_chunks)
        why = []
        if bitmap_chunks or not was_clean:
            chunk = bitmap.chunk if bitmap is not None else 0
            why.append(f"write-intent bitmap: {len(bitmap_chunks)} dirty chunk{'s' if len(bitmap_chunks) != 1 else ''}"
                       f" of {chunk} stripes")
        if touched:
            why.append(f"{len(touched)} stripes touched by the replay from {report.source}")
        report.reason = ", ".join(why)
    has_parity = array.redundancy.parity_columns > 0
    if has_parity and stripes:
        log.info("resyncing %d stripes (%s)", len(stripes), report.reason)
        report.stripes = await array.raid.resync(stripes)
    elif not has_parity and report.reason:
        report.reason += "; RAID-0 has no parity, nothing to recompute"
    await array.members.flush()
    if journal is not None:
        await journal.reset()
    if array.cache is not None and replay:
        array.cache.metrics.nvram_replayed = len(replay)
    if bitmap is not None:
        await bitmap.clean()
    if report.message():
        log.info("%s", report.message())
    return report
