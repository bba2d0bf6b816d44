"""The array lock (vraid.ondisk.lock): a refusal names who holds the array."""

from __future__ import annotations

import fcntl
import os
import threading

import pytest

from vraid.errors import MountError
from vraid.ondisk.lock import NAME, ArrayLock, holder_of


def test_a_holder_names_its_pid_as_soon_as_it_has_the_lock(tmp_path):
    with ArrayLock.acquire(tmp_path, what="fail a member of"):
        with pytest.raises(MountError, match=f"vraid process {os.getpid()} holds it"):
            ArrayLock.acquire(tmp_path)


def _refusal_while(directory, claim) -> str:
    """The refusal of a lock attempt made while ``claim`` runs 0.2 s later in another thread."""
    timer = threading.Timer(0.2, claim)
    timer.start()
    try:
        with pytest.raises(MountError) as refused:
            ArrayLock.acquire(directory)
    finally:
        timer.join()
    return str(refused.value)


def test_a_refusal_waits_for_the_claim_of_a_holder_that_has_only_just_taken_the_lock(tmp_path):
    """Two mounts started in the same instant: the second may find the lock taken and the
    file still empty; it waits for the first to write who it is, then names its mountpoint."""
    path = tmp_path / NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # another open file: a separate flock holder
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        refusal = _refusal_while(tmp_path, lambda: os.pwrite(fd, b"pid=4242\nmountpoint=/mnt/first\n", 0))
        assert "the mount at /mnt/first (daemon pid 4242) holds it" in refusal
    finally:
        os.close(fd)


def test_a_refusal_waits_while_the_holder_is_still_forking_its_daemon(tmp_path):
    """A mount claims the lock as "starting" until its daemon is forked; a refusal in that
    window waits and names the daemon, not the process that forked it."""
    lock = ArrayLock.acquire(tmp_path, mountpoint="/mnt/first", starting=True)
    try:
        assert holder_of(tmp_path)["starting"] == "yes"
        refusal = _refusal_while(tmp_path, lambda: lock.claim(4242, "/mnt/first"))
        assert "the mount at /mnt/first (daemon pid 4242) holds it" in refusal
        assert holder_of(tmp_path) == {"pid": "4242", "mountpoint": "/mnt/first"}
    finally:
        lock.release()


def test_a_holder_still_starting_after_the_wait_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setattr("vraid.ondisk.lock.CLAIM_WAIT", 0.05)
    with ArrayLock.acquire(tmp_path, mountpoint="/mnt/first", starting=True):
        with pytest.raises(MountError, match=rf"vraid process {os.getpid()} \(starting a mount at /mnt/first\)"):
            ArrayLock.acquire(tmp_path)


def test_a_claim_rewrites_the_record_whole_so_a_reader_never_finds_it_empty(tmp_path):
    lock = ArrayLock.acquire(tmp_path, mountpoint="/" + "x" * 50)
    try:
        seen = []
        stop = threading.Event()

        def read():
            while not stop.is_set():
                seen.append(holder_of(tmp_path))

        reader = threading.Thread(target=read)
        reader.start()
        try:
            for i in range(2000):
                lock.claim(1000 + i, "/m" if i % 2 else "/" + "y" * 60)
        finally:
            stop.set()
            reader.join()
        assert seen and all(h.get("pid") for h in seen)
        assert holder_of(tmp_path) == {"pid": "2999", "mountpoint": "/m"}
        long = "/" + "z" * 5000  # longer than a record: the file is cut to the new one
        lock.claim(7, long)
        assert holder_of(tmp_path) == {"pid": "7", "mountpoint": long}
        lock.claim(8, "/m")
        assert holder_of(tmp_path) == {"pid": "8", "mountpoint": "/m"}
    finally:
        lock.release()


def test_a_daemon_serving_before_its_mount_shows_is_named_from_the_lock(tmp_path):
    """A second mount that finds the first's daemon answering on the socket, but its mount
    not yet in /proc/mounts, names that mount and its daemon (read from the lock)."""
    from vraid.fuse.daemon import _already_served

    with ArrayLock.acquire(tmp_path, mountpoint="/mnt/first"):
        refusal = _already_served(tmp_path)
    assert f"the mount at /mnt/first (daemon pid {os.getpid()})" in str(refusal)
    assert "vraid umount /mnt/first" in refusal.hint
    assert "already serving" in str(_already_served(tmp_path))  # no holder: what is known
