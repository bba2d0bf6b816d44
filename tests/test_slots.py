"""The slot table of seed 002 (sec. 3.1): every edge of the state diagram in vraid.engine.log.slots."""

from __future__ import annotations

import pytest

from vraid.engine.log.slots import (IN_CACHE_DISK, IN_DATA_DISK, IN_RAM_BUFFER, SLOT_FREE, NoSlot, SlotTable,
                                TransitionError)


def test_free_to_ram_takes_an_entry_and_a_slot():
    t = SlotTable(entries=4, ram_slots=2)
    assert t.state(7) is SLOT_FREE and t.lookup(7) is None
    e = t.write(7)
    assert t.state(7) is IN_RAM_BUFFER and t.lookup(7) is e and e.slot_no >= 0 and e.version == 1
    assert t.ram_used == 1 and t.counts[IN_RAM_BUFFER] == 1 and t.counts[SLOT_FREE] == 3


def test_ram_overwrite_stays_in_place_and_moves_to_the_lru_end():
    t = SlotTable(entries=4, ram_slots=2)
    a = t.write(1)
    t.write(2)
    again = t.write(1)
    assert again is a and a.version == 2 and t.ram_used == 2
    assert [e.lba for e in t] == [2, 1]  # least recently written first


def test_ram_to_cache_disk_frees_the_slot():
    t = SlotTable(entries=4, ram_slots=1)
    e = t.write(5)
    assert t.logged(5, e.version, (3, 0))
    assert t.state(5) is IN_CACHE_DISK and e.location == (3, 0) and e.slot_no == -1 and t.ram_used == 0


def test_logged_after_a_newer_write_changes_nothing():
    t = SlotTable(entries=4, ram_slots=1)
    v = t.write(5).version
    t.write(5)
    assert not t.logged(5, v, (3, 0))
    assert t.state(5) is IN_RAM_BUFFER


def test_cache_disk_to_ram_on_a_new_write():
    t = SlotTable(entries=4, ram_slots=1)
    t.logged(5, t.write(5).version, (3, 0))
    e = t.write(5)
    assert t.state(5) is IN_RAM_BUFFER and e.location is None and e.version == 2


def test_cache_disk_to_data_disk_and_a_stale_location_is_ignored():
    t = SlotTable(entries=4, ram_slots=1)
    t.logged(5, t.write(5).version, (3, 0))
    assert not t.destaged(5, (2, 4))  # an older copy reached the data disks: the entry is newer
    assert t.state(5) is IN_CACHE_DISK
    assert t.destaged(5, (3, 0))
    assert t.state(5) is IN_DATA_DISK


def test_data_disk_to_ram_and_to_free():
    t = SlotTable(entries=4, ram_slots=1)
    t.logged(5, t.write(5).version, (3, 0))
    t.destaged(5, (3, 0))
    t.write(5)
    assert t.state(5) is IN_RAM_BUFFER
    t.logged(5, t.lookup(5).version, (4, 1))
    t.destaged(5, (4, 1))
    t.recycle(5)
    assert t.state(5) is SLOT_FREE and t.lookup(5) is None and t.counts[SLOT_FREE] == 4


def test_ram_to_data_disk_when_the_log_failed():
    t = SlotTable(entries=4, ram_slots=1)
    e = t.write(9)
    assert t.bypassed(9, e.version)
    assert t.state(9) is IN_DATA_DISK and t.ram_used == 0


def test_no_free_ram_slot_raises_noslot():
    t = SlotTable(entries=4, ram_slots=1)
    t.write(1)
    with pytest.raises(NoSlot):
        t.write(2)
    t.write(1)  # an overwrite needs no new slot


def test_a_full_entry_table_recycles_the_least_recent_data_disk_entry():
    t = SlotTable(entries=2, ram_slots=1)
    for lba in (1, 2):
        t.logged(lba, t.write(lba).version, (lba, 0))
    t.destaged(1, (1, 0))
    t.write(3)  # no free entry: block 1's (on the data disks) is recycled
    assert t.state(1) is SLOT_FREE and t.state(3) is IN_RAM_BUFFER and t.state(2) is IN_CACHE_DISK


def test_edges_not_in_the_diagram_are_refused():
    t = SlotTable(entries=2, ram_slots=1)
    with pytest.raises(TransitionError):
        t.logged(1, 1, (0, 0))  # SLOT_FREE cannot be logged
    t.write(1)
    with pytest.raises(TransitionError):
        t.recycle(1)  # IN_RAM_BUFFER cannot be freed: it is the only copy
    assert not t.destaged(1, (0, 0))  # IN_RAM_BUFFER is not destaged from the log


def test_drop_forgets_a_block_whatever_its_state():
    t = SlotTable(entries=3, ram_slots=2)
    t.write(1)
    t.logged(2, t.write(2).version, (0, 0))
    t.drop(1)
    t.drop(2)
    assert t.state(1) is SLOT_FREE and t.state(2) is SLOT_FREE and t.ram_used == 0 and t.counts[SLOT_FREE] == 3
