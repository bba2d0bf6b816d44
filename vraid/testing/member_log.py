"""Which member I/Os a host request made: in-memory members that log every request.

The ``raid-levels`` lab (OSTEP ch. 38's ``raid.py`` homework, forward and reverse mode) asks
which members and member blocks a logical read or write touches. Its answers come from the
engine itself: a :class:`~vraid.testing.session.Session` over members made by
:func:`logging_members`, each a :class:`~vraid.backends.memory.MemoryStore` that appends one
:class:`MemberIO` per request the engine issued to it (a contiguous run of blocks is one
request, as ``vraid status`` counts them)::

    log = MemberLog()
    with Session(EngineConfig(g, store_factory=log.factory)) as s:
        with log.capture() as ios:
            s.write(offset, data)
        ios   # [MemberIO(disk=2, op="r", offset=..., length=...), ...]
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, NamedTuple

from vraid.backends.memory import MemoryStore


class MemberIO(NamedTuple):
    """One request the engine made of one member: ``op`` is ``r`` or ``w``; bytes of the member."""

    disk: int
    op: str
    offset: int
    length: int


class LoggedStore(MemoryStore):
    """A memory member that logs its requests into its :class:`MemberLog` (reads and writes
    keep MemoryStore's synchronous paths, so the engine runs as it does on plain memory)."""

    def __init__(self, size: int, role: int, log: "MemberLog") -> None:
        super().__init__(size, name=f"disk{role}")
        self.role = role
        self.log = log

    def read_sync(self, offset: int, length: int) -> bytes:
        self.log.record(MemberIO(self.role, "r", offset, length))
        return super().read_sync(offset, length)

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.log.record(MemberIO(self.role, "w", offset, len(data)))
        super().write_now(offset, data)

    def write_sync(self, offset: int, data: bytes) -> None:
        self.log.record(MemberIO(self.role, "w", offset, len(data)))
        super().write_sync(offset, data)


class MemberLog:
    """The members' requests while a :meth:`capture` is open (nothing is kept outside one:
    the superblock and bitmap traffic of opening the array is not a host request's)."""

    def __init__(self) -> None:
        self._open: list[MemberIO] | None = None

    def factory(self, role: int, size: int) -> LoggedStore:
        """An ``EngineConfig.store_factory``: member ``role`` of ``size`` bytes, logging here."""
        return LoggedStore(size, role, self)

    def record(self, io: MemberIO) -> None:
        if self._open is not None:
            self._open.append(io)

    @contextmanager
    def capture(self) -> Iterator[list[MemberIO]]:
        """The list the members' requests go into until the block ends."""
        self._open = ios = []
        try:
            yield ios
        finally:
            self._open = None
