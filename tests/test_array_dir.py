"""The array directory as a place (hardening issue 33, items 3 and 5): a create checks room
for every file first and leaves nothing behind when it fails; the directory is made 0700
whatever the umask; a mount warns when others may write in it; a log file of another size
than the superblocks record is named as such (truncated?), and ``vraid mount --force`` drops
it saying what is lost (the mount itself: tests/test_e2e_log_size.py)."""

from __future__ import annotations

import os

import pytest

from vraid.backends.file import FileStore
from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.ondisk import create as creating, room
from vraid.ondisk.assemble import assemble as assemble_array
from vraid.ondisk.create import create


def geometry(ndisks: int = 3, disk_size: int = 4 << 20) -> Geometry:
    return Geometry.for_disk_size(level=5, ndisks=ndisks, disk_size=disk_size, strip_size=64 << 10,
                                  layout="left-symmetric")


def test_a_create_larger_than_the_free_space_is_refused_before_anything_exists(tmp_path):
    free = room.free_bytes(tmp_path)
    target = tmp_path / "big"
    with pytest.raises(VraidError, match="the array needs .* free"):
        room.check_new_array(target, 3, free, 0, None, 0)
    with pytest.raises(VraidError, match=r"log0.img is 1\d*T"):
        create(target, geometry(), 4 << 20, log="scd", log_size=(free // (1 << 40) + 1) << 40)
    assert not target.exists()


def test_a_file_larger_than_ulimit_f_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(room.resource, "getrlimit", lambda what: (1 << 20, 1 << 20))
    with pytest.raises(VraidError, match=r"disk0.img would be 4M, larger than this process may write \(1M"):
        room.check_new_array(tmp_path / "x", 3, 4 << 20, 0, None, 0)


def test_a_create_that_fails_half_way_leaves_nothing_behind(tmp_path, monkeypatch):
    real = FileStore.create
    made = []

    def failing(path, size):
        if len(made) == 2:
            raise OSError(28, "No space left on device")
        made.append(path)
        return real(path, size)

    monkeypatch.setattr(creating.FileStore, "create", staticmethod(failing))
    target = tmp_path / "half"
    with pytest.raises(VraidError, match="cannot create the array in .*: No space left on device"):
        create(target, geometry(), 4 << 20)
    assert len(made) == 2 and not target.exists()
    existing = tmp_path / "mine"
    existing.mkdir()
    (existing / "notes.txt").write_text("keep")
    made.clear()
    with pytest.raises(VraidError):
        create(existing, geometry(), 4 << 20)
    assert sorted(os.listdir(existing)) == ["notes.txt"]  # what was there stays, the rest is gone


def test_the_array_directory_is_made_0700_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        create(tmp_path / "a", geometry(), 4 << 20)
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o700
    assert room.open_to_others(tmp_path / "a") == ""
    os.chmod(tmp_path / "a", 0o775)
    warning = room.open_to_others(tmp_path / "a")
    assert "its group may write in" in warning and "mode 0775" in warning and "chmod 700" in warning
    os.chmod(tmp_path / "a", 0o777)
    assert "its group and every user may write" in room.open_to_others(tmp_path / "a")


@pytest.mark.parametrize("size, expect", [(4 << 20, "log0.img is 4M, the array's log is 8M: truncated?"),
                                          (16 << 20, "log0.img is 16M, the array's log is 8M: not this array's")])
def test_a_log_file_of_the_wrong_size_is_named(tmp_path, size, expect):
    create(tmp_path / "a", geometry(), 4 << 20, log="scd", log_size=8 << 20)
    os.truncate(tmp_path / "a" / "log0.img", size)
    asm = assemble_array(tmp_path / "a")
    assert asm.log_problem == expect or asm.log_problem.startswith(expect)
