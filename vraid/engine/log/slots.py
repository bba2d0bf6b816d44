"""The slot table of a log cache (seed 002, VC-RAID, sec. 3.1 "In-memory Data Structure").

Pure and synchronous: no trio, no I/O. The paper's RAM buffer is a number of block-sized
*slots* and a lookup table of *slot entries*, one per cached logical block (LBA), found by
a hash table and linked into two lists: the **LRU list** of entries in use and the **free
list** of unused ones. Each entry's location state says where the newest copy of its
block is:

* ``IN_RAM_BUFFER``: in RAM slot ``slot_no`` (written by the host, not yet on the log disk);
* ``IN_CACHE_DISK``: on the log disk at ``location`` (level-1 destage done);
* ``IN_DATA_DISK``: on the data disks (level-2 destage done); the entry is kept until it
  is recycled, so the table still remembers the block;
* ``SLOT_FREE``: the entry is on the free list.

The state diagram (every edge is a method; tests/test_slots.py walks each one)::

    SLOT_FREE     --write-->     IN_RAM_BUFFER   (an entry and a RAM slot are taken)
    IN_RAM_BUFFER --write-->     IN_RAM_BUFFER   (overwrite in place, version + 1)
    IN_RAM_BUFFER --logged-->    IN_CACHE_DISK   (level 1; the RAM slot is freed)
    IN_CACHE_DISK --write-->     IN_RAM_BUFFER   (a newer copy; a RAM slot is taken)
    IN_CACHE_DISK --destaged-->  IN_DATA_DISK    (level 2)
    IN_DATA_DISK  --write-->     IN_RAM_BUFFER
    IN_DATA_DISK  --recycle-->   SLOT_FREE       (the entry goes back to the free list)
    IN_RAM_BUFFER --bypassed-->  IN_DATA_DISK    (the log disk failed: straight to the data disks)

``logged`` and ``destaged`` carry the version / location the destage copied: when the
host wrote the block again meanwhile, the entry has moved on and the call changes nothing
(the destaged copy is already stale). Where vraid differs from the paper: a Python dict is
the hash table and an ordered dict the LRU list (the paper's intrusive lists), and RAM
slots are a separate free list from entries, so entries of blocks on the log disk do not
pin RAM (the paper's entry carries a Slot-No; it does not say whether level 1 frees it).
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterator


class SlotState(enum.Enum):
    SLOT_FREE = "SLOT_FREE"
    IN_RAM_BUFFER = "IN_RAM_BUFFER"
    IN_CACHE_DISK = "IN_CACHE_DISK"
    IN_DATA_DISK = "IN_DATA_DISK"


SLOT_FREE = SlotState.SLOT_FREE
IN_RAM_BUFFER = SlotState.IN_RAM_BUFFER
IN_CACHE_DISK = SlotState.IN_CACHE_DISK
IN_DATA_DISK = SlotState.IN_DATA_DISK

#: a block's place on the log: (segment sequence number, index in the segment)
Location = tuple[int, int]


class NoSlot(Exception):
    """Every RAM slot holds a block not yet on the log disk: level 1 must run first."""


class TransitionError(Exception):
    """A call that is no edge of the state diagram (a bug in the caller)."""


@dataclass
class SlotEntry:
    """One slot entry: the LBA (hash key), the location field, the RAM slot number."""

    index: int
    lba: int = -1
    state: SlotState = SLOT_FREE
    slot_no: int = -1  # the RAM slot while IN_RAM_BUFFER
    location: Location | None = None  # on the log while IN_CACHE_DISK
    version: int = 0  # host writes to this block so far


class SlotTable:
    """Hash table, LRU list and free list over ``entries`` slot entries and ``ram_slots`` RAM slots."""

    def __init__(self, entries: int, ram_slots: int) -> None:
        if ram_slots < 1 or entries < ram_slots:
            raise ValueError(f"need at least one RAM slot and as many entries ({entries}, {ram_slots})")
        self.entries = [SlotEntry(i) for i in range(entries)]
        self.ram_slots = ram_slots
        self.hash: dict[int, SlotEntry] = {}
        #: entries in use, least recently written first (the LRU list)
        self.lru: OrderedDict[int, SlotEntry] = OrderedDict()
        self.free: list[int] = list(range(entries - 1, -1, -1))  # the free list of entries
        self.free_slots: list[int] = list(range(ram_slots - 1, -1, -1))  # unused RAM slots
        self.counts = {s: 0 for s in SlotState}
        self.counts[SLOT_FREE] = entries

    # -- lookups ------------------------------------------------------------------------
    def lookup(self, lba: int) -> SlotEntry | None:
        """The entry of ``lba`` (any state but SLOT_FREE), or None."""
        return self.hash.get(lba)

    def state(self, lba: int) -> SlotState:
        e = self.hash.get(lba)
        return e.state if e is not None else SLOT_FREE

    def in_ram(self) -> list[SlotEntry]:
        """IN_RAM_BUFFER entries, least recently written first (what level 1 takes)."""
        return [e for e in self.lru.values() if e.state is IN_RAM_BUFFER]

    def __iter__(self) -> Iterator[SlotEntry]:
        return iter(self.lru.values())

    @property
    def ram_used(self) -> int:
        return self.ram_slots - len(self.free_slots)

    # -- edges ----------------------------------------------------------------------------
    def _set(self, e: SlotEntry, state: SlotState) -> None:
        self.counts[e.state] -= 1
        self.counts[state] += 1
        e.state = state

    def write(self, lba: int) -> SlotEntry:
        """A host write of ``lba``: its entry is IN_RAM_BUFFER with a RAM slot, most recently used.

        Raises:
            NoSlot: a RAM slot is needed and none is free.
        """
        e = self.hash.get(lba)
        if e is not None and e.state is IN_RAM_BUFFER:
            e.version += 1
            self.lru.move_to_end(lba)
            return e
        if not self.free_slots:
            raise NoSlot(lba)
        if e is None:
            e = self._take_entry(lba)
        e.slot_no = self.free_slots.pop()
        e.location = None
        e.version += 1
        self._set(e, IN_RAM_BUFFER)
        self.lru.move_to_end(lba)
        return e

    def _take_entry(self, lba: int) -> SlotEntry:
        if not self.free:
            victim = next((x for x in self.lru.values() if x.state is IN_DATA_DISK), None)
            if victim is None:
                raise NoSlot(lba)
            self.recycle(victim.lba)
        e = self.entries[self.free.pop()]
        e.lba, e.version = lba, 0
        self.hash[lba] = e
        self.lru[lba] = e
        return e

    def logged(self, lba: int, version: int, location: Location) -> bool:
        """Level 1 wrote version ``version`` of ``lba`` to the log at ``location``:
        IN_RAM_BUFFER -> IN_CACHE_DISK (the RAM slot is freed), unless written again since."""
        e = self.hash.get(lba)
        if e is None or e.state is not IN_RAM_BUFFER:
            raise TransitionError(f"block {lba} logged but it is {self.state(lba).value}")
        if e.version != version:
            return False
        self.free_slots.append(e.slot_no)
        e.slot_no, e.location = -1, location
        self._set(e, IN_CACHE_DISK)
        return True

    def destaged(self, lba: int, location: Location) -> bool:
        """Level 2 wrote the copy at ``location`` to the data disks: IN_CACHE_DISK ->
        IN_DATA_DISK, unless the entry holds a newer copy than that one."""
        e = self.hash.get(lba)
        if e is None or e.state is not IN_CACHE_DISK or e.location != location:
            return False
        e.location = None
        self._set(e, IN_DATA_DISK)
        return True

    def bypassed(self, lba: int, version: int) -> bool:
        """The log has failed and version ``version`` went straight to the data disks:
        IN_RAM_BUFFER -> IN_DATA_DISK (the RAM slot is freed), unless written again since."""
        e = self.hash.get(lba)
        if e is None or e.state is not IN_RAM_BUFFER:
            raise TransitionError(f"block {lba} bypassed the log but it is {self.state(lba).value}")
        if e.version != version:
            return False
        self.free_slots.append(e.slot_no)
        e.slot_no = -1
        self._set(e, IN_DATA_DISK)
        return True

    def recycle(self, lba: int) -> None:
        """IN_DATA_DISK -> SLOT_FREE: the entry goes back to the free list."""
        e = self.hash.get(lba)
        if e is None or e.state is not IN_DATA_DISK:
            raise TransitionError(f"block {lba} recycled but it is {self.state(lba).value}")
        del self.hash[lba]
        del self.lru[lba]
        self._set(e, SLOT_FREE)
        e.lba, e.slot_no, e.location, e.version = -1, -1, None, 0
        self.free.append(e.index)

    def drop(self, lba: int) -> None:
        """Forget ``lba`` whatever its state (a log disk lost with it: its copy is gone)."""
        e = self.hash.get(lba)
        if e is None:
            return
        if e.state is IN_RAM_BUFFER:
            self.free_slots.append(e.slot_no)
        e.location = None
        self._set(e, IN_DATA_DISK)
        self.recycle(lba)

    def status(self) -> dict[str, int]:
        return {s.value: n for s, n in self.counts.items()} | {"ram_slots": self.ram_slots, "ram_used": self.ram_used}
