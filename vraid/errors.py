"""Domain errors. errno appears only at the FUSE boundary (vraid.fuse.image).

Every error a user can cause carries a message that names the problem and a
hint that says what to do about it; the CLI prints both and exits non-zero.
"""

from __future__ import annotations


class VraidError(Exception):
    """An error a user can act on: ``message`` says what, ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class GeometryError(VraidError):
    """An impossible array geometry (disk count, strip size, disk size)."""


class SuperblockError(VraidError):
    """A member's superblock is missing, corrupted or from another array."""


class AssemblyError(VraidError):
    """The members found do not make up one complete array."""


class MountError(VraidError):
    """The mountpoint or the daemon is not in a state to mount or unmount."""


class OutOfRange(VraidError):
    """A host request reaches past the end of the array."""


class MemberIOError(VraidError):
    """A member store failed a request (the failures issue turns this into degraded mode)."""

    def __init__(self, member: int, message: str) -> None:
        super().__init__(f"member {member}: {message}")
        self.member = member
        #: every member that failed in the batch, and whether it was a "read" or "write" batch
        self.disks = [member]
        self.op = ""


class LostData(MemberIOError):
    """A RAID-5 request needs blocks of two missing members: the data is gone (EIO)."""


#: What student code (a policy at import, construction or any call) may raise that vraid
#: contains as a policy fault: every Exception, and SystemExit and GeneratorExit, which would
#: otherwise end the daemon or the command (hardening issue 33, item 4). KeyboardInterrupt
#: (Ctrl-C) is not among them: it still ends the command. Use as ``except POLICY_ERRORS``.
POLICY_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit, GeneratorExit)
