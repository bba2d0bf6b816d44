"""A stripe directory journal damaged on every member (issue 33, item 2; seed 004).

The journal on each member's directory region (vraid.engine.placement.directory_store) used to be
replayed up to its first bad record, and the map so recovered served as if complete:
damage on every member mounted silently and served other strips' bytes. Now a journal that
stops at a bad record although valid, later-numbered records follow it is damage: the
mount refuses, naming the records and the stripes whose strips may be misplaced; forced, it
serves the map and says which stripes may be wrong. Damage on one member is recovered
from another member's copy.
"""

from __future__ import annotations

import pytest

from vraid.core.directory_format import decode_journal
from vraid.engine.build import EngineConfig, EngineOptions, build_engine
from vraid.engine.placement.directory_store import DirectoryDamaged
from vraid.ondisk.assemble import assemble
from vraid.ondisk.directory_area import PARAM, DirectoryArea
import vraid.testing.placed_crash_machine as pcm


def _crashed_with_records(tmp_path, monkeypatch):
    """A multibuffer array whose directory journal holds several commits, left dirty."""
    monkeypatch.setattr(pcm, "note", lambda text: None)
    m = pcm.PlacedCrashMachine("multibuffer", tmp_path)
    S = m.g.strip_size
    for i in range(6):  # a strip rewritten and flushed, again and again: journal records
        m.portal.write((i % 3) * S, bytes([i + 1]) * S)
        m.portal.flush()
    m.portal.close()  # a crash: no checkpoint at unmount
    m.asm.close()
    return m


def _journal(arr, disk):
    asm = assemble(arr)
    area = DirectoryArea.from_param(asm.ref.params[PARAM])
    path = arr / f"disk{disk}.img"
    raw = path.read_bytes()[area.journal_offset : area.journal_offset + area.journal]
    return path, area, raw


def _flip_first_record(arr, disk):
    path, area, raw = _journal(arr, disk)
    records, end, _ = decode_journal(raw)
    assert len(records) >= 3, f"the journal should hold several records: {len(records)}"
    with open(path, "r+b") as f:
        f.seek(area.journal_offset + 12)  # inside the first record: its CRC fails
        f.write(bytes(b ^ 0xFF for b in raw[12:28]))


def _build(arr, force=False):
    asm = assemble(arr)
    asm.open_stores()
    try:
        engine = build_engine(EngineConfig.from_assembled(asm, EngineOptions(force=force)))
        engine.close()
    finally:
        asm.close()


def test_damage_on_every_member_is_refused_and_force_names_the_stripes(tmp_path, monkeypatch, caplog):
    m = _crashed_with_records(tmp_path, monkeypatch)
    arr = m.dir / "arr"
    for disk in range(4):
        _flip_first_record(arr, disk)
    with pytest.raises(DirectoryDamaged) as exc:
        _build(arr)
    text = str(exc.value)
    assert "damaged on every member" in text and "were committed after it" in text and "may be misplaced" in text
    assert "--force" in exc.value.hint
    _build(arr, force=True)
    assert "served as it is" in caplog.text and "may be misplaced" in caplog.text


def test_damage_on_one_member_is_recovered_from_another(tmp_path, monkeypatch):
    m = _crashed_with_records(tmp_path, monkeypatch)
    arr = m.dir / "arr"
    _flip_first_record(arr, 1)
    _build(arr)  # the other members' journals are whole: no refusal
