"""The array lock (vraid.ondisk.lock): a refusal names who holds the array."""

from __future__ import annotations

import fcntl
import os
import threading

import pytest

from vraid.errors import MountError
from vraid.ondisk.lock import NAME, ArrayLock


def test_a_holder_names_its_pid_as_soon_as_it_has_the_lock(tmp_path):
    with ArrayLock.acquire(tmp_path, what="fail a member of"):
        with pytest.raises(MountError, match=f"vraid process {os.getpid()} holds it"):
            ArrayLock.acquire(tmp_path)


def test_a_refusal_waits_for_the_claim_of_a_holder_that_has_only_just_taken_the_lock(tmp_path):
    """Two mounts started in the same instant: the second may find the lock taken and the
    file still empty; it waits for the first to write who it is, then names its mountpoint."""
    path = tmp_path / NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # another open file: a separate flock holder
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        timer = threading.Timer(0.2, lambda: os.pwrite(fd, b"pid=4242\nmountpoint=/mnt/first\n", 0))
        timer.start()
        try:
            with pytest.raises(MountError) as refused:
                ArrayLock.acquire(tmp_path)
        finally:
            timer.join()
        assert "the mount at /mnt/first (daemon pid 4242) holds it" in str(refused.value)
    finally:
        os.close(fd)
