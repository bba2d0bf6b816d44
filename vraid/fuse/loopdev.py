"""Loop devices over an image: attach, and detach waiting until it is really gone.

Teardown order matters (FUSE-NOTES item 7): the loop device must be fully
detached before the FUSE mount under it is unmounted.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from vraid.errors import VraidError


def attach(image: Path) -> str:
    """``losetup -f --show image``; returns the device path."""
    result = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if result.returncode != 0:
        raise VraidError(f"losetup could not attach {image}: {result.stderr.strip()}", "are you root, with loop devices available?")
    return result.stdout.strip()


def detach(device: str, timeout: float = 30.0) -> None:
    """``losetup -d`` and wait until the kernel has let go of the backing file."""
    subprocess.run(["losetup", "-d", device], capture_output=True)
    backing = Path("/sys/block") / Path(device).name / "loop" / "backing_file"
    deadline = time.monotonic() + timeout
    while backing.exists():
        if time.monotonic() > deadline:
            raise VraidError(f"{device} is still attached after {timeout:.0f} s", f"check `losetup -a`, then `losetup -d {device}`")
        time.sleep(0.05)
