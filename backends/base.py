"""The member store interface that every backend and wrapper implements.

A store is one member disk: a flat range of bytes. The interface is async so
that wrappers (timing models, fault injection, tracing) can take time with the
injected clock; the plain stores complete without waiting. Offsets and lengths
are in bytes and are always block aligned by the controller.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, fields


class Store(abc.ABC):
    """One member disk."""

    #: A short human name, e.g. the file path, for messages and ``vraid status``.
    name: str = "store"
    #: True when requests complete without waiting (no timing model): the
    #: member queue may then run a request inline when nothing is queued.
    instant: bool = False
    #: True when the store is a timing model that can :meth:`charge` a request
    #: without sleeping (see ``vraid.engine.members.member``: the virtual-time fast path)
    timed: bool = False
    #: commands the store accepts at once through ``begin``/``end`` (tagged command
    #: queueing, ``backends.hdd``); 1: one request at a time through ``read``/``write``
    queue_depth: int = 1
    #: True when :meth:`read` is :meth:`read_sync` and nothing more (an instant store that
    #: never waits): the engine's direct host read then calls ``read_sync`` on the trio
    #: thread instead of awaiting ``read`` (``Array._read_now``). A subclass that overrides
    #: ``read`` without saying ``sync_reads`` again gets False (see ``__init_subclass__``), so
    #: a store that injects faults or time in ``read`` is never bypassed.
    sync_reads: bool = False
    #: True when :meth:`write` is :meth:`write_now` and nothing more: a member request on
    #: such a store may run with no await at all (``Member._execute_now``); inherited only
    #: while ``write`` is, as ``sync_reads``
    sync_writes: bool = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "read" in cls.__dict__ and "sync_reads" not in cls.__dict__:
            cls.sync_reads = False
        if "write" in cls.__dict__ and "sync_writes" not in cls.__dict__:
            cls.sync_writes = False

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """:meth:`write` on the calling thread, without an await; only stores with
        :attr:`sync_writes` implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not write synchronously")

    def charge(self, op: str, offset: int, length: int) -> float:
        """Account a request starting now and return its service time (model
        seconds) without waiting; only stores with ``timed`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} is not a timing model")

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """Bytes the store holds."""

    @abc.abstractmethod
    async def read(self, offset: int, length: int) -> bytes:
        """Return ``length`` bytes at ``offset`` (zeros where never written)."""

    @abc.abstractmethod
    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` at ``offset``; never grows the store."""

    @abc.abstractmethod
    async def flush(self) -> None:
        """Return once everything written before is durable."""

    #: True when :meth:`write_durable` makes only its own bytes durable (a member file:
    #: ``pwritev`` with ``RWF_DSYNC``), without the cost of flushing everything written
    #: before it; the write-intent bitmap then skips its member flushes
    durable_writes: bool = False

    async def write_durable(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` at ``offset`` and return once it is durable. This default writes
        and then flushes the whole store; a store with :attr:`durable_writes` makes just
        this write durable."""
        await self.write(offset, data)
        await self.flush()

    def close(self) -> None:
        """Release resources; the default has none."""

    def prefetch(self, offset: int, length: int) -> None:
        """A hint that a read of this range follows soon; the default ignores it."""

    # Superblock access is synchronous: it happens at assembly and shutdown,
    # outside the data path and before/after trio runs.
    @abc.abstractmethod
    def read_sync(self, offset: int, length: int) -> bytes:
        """Blocking read, for superblocks and tools."""

    @abc.abstractmethod
    def write_sync(self, offset: int, data: bytes) -> None:
        """Blocking write + flush, for superblocks and tools."""


class StoreWrapper(Store):
    """A store that forwards to ``inner``; wrappers override what they change.

    A wrapper may take time, so it is not ``instant``; a timing model sets
    ``timed`` and implements ``charge``.
    """

    instant = False
    timed = False

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def size(self) -> int:
        return self.inner.size

    async def read(self, offset: int, length: int) -> bytes:
        return await self.inner.read(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        await self.inner.write(offset, data)

    async def flush(self) -> None:
        await self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    def read_sync(self, offset: int, length: int) -> bytes:
        return self.inner.read_sync(offset, length)

    def write_sync(self, offset: int, data: bytes) -> None:
        self.inner.write_sync(offset, data)


@dataclass(slots=True)
class ModelStats:
    """Counters every timing model keeps (model time, seconds); models add their own."""

    requests: int = 0
    reads: int = 0
    writes: int = 0
    flushes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    #: time requests were in service (arrival to completion; includes flush waits)
    busy_seconds: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class TimedStore(StoreWrapper):
    """A timing model: ``charge`` prices a request, ``read``/``write`` wait that
    long (one request at a time) and then move the data in ``inner``.

    Subclasses set ``self.clock`` and ``self._lock`` (a ``trio.Lock``) and
    implement ``charge``; the member layer may also call ``charge`` directly
    and move the data itself (the virtual-time fast path).
    """

    timed = True

    async def read(self, offset: int, length: int) -> bytes:
        lock = self._lock
        await acquire(lock)
        try:
            await self.clock.sleep(self.charge("read", offset, length))
            return await self.inner.read(offset, length)
        finally:
            lock.release()

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        lock = self._lock
        await acquire(lock)
        try:
            await self.clock.sleep(self.charge("write", offset, len(data)))
            await self.inner.write(offset, data)
        finally:
            lock.release()


async def acquire(lock) -> None:
    """Take ``lock``; uncontended, without the extra schedule point of
    ``Lock.acquire`` (the model's sleep is the request's checkpoint)."""
    import trio

    try:
        lock.acquire_nowait()
    except trio.WouldBlock:
        await lock.acquire()


def check_range(store: Store, offset: int, length: int) -> None:
    if offset < 0 or length < 0 or offset + length > store.size:
        raise ValueError(f"{store.name}: request {offset}+{length} outside 0..{store.size}")
