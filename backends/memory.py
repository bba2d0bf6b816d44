"""``memory`` store: the member's bytes in memory. For tests, the simulator and labs.

The bytes live in an anonymous mmap: the kernel hands out zeroed pages only when they are
first written, so making a 64 MiB member costs nothing until it is used (a bytearray would
zero all of it up front, which was a visible part of a short simulation's wall time).

:class:`NullStore` holds nothing at all: the metadata-only simulation (``vraid sim
--no-data``) runs the same plans and timing over members that only check ranges.
"""

from __future__ import annotations

import mmap

from .base import Store, check_range


class MemoryStore(Store):
    instant = True
    sync_reads = sync_writes = True

    def __init__(self, size: int, name: str = "memory") -> None:
        self._data = mmap.mmap(-1, size) if size > 0 else bytearray(0)
        self.name = name

    @property
    def size(self) -> int:
        return len(self._data)

    async def read(self, offset: int, length: int) -> bytes:
        return self.read_sync(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.write_now(offset, data)

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        end = offset + len(data)
        if offset < 0 or end > len(self._data):
            check_range(self, offset, len(data))  # raises
        self._data[offset:end] = data

    async def flush(self) -> None:
        return None

    def read_sync(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > len(self._data):
            check_range(self, offset, length)  # raises
        return bytes(self._data[offset : offset + length])

    def write_sync(self, offset: int, data: bytes) -> None:
        check_range(self, offset, len(data))
        self._data[offset : offset + len(data)] = data


class NullStore(Store):
    """A member that stores nothing: writes are dropped, reads return zeros.

    For the metadata-only simulation: every request is still range-checked, timed by the
    model above and counted, so plans, timing and metrics are those of a
    :class:`MemoryStore`; only the bytes are gone (no memory per member)."""

    instant = True
    sync_reads = sync_writes = True

    def __init__(self, size: int, name: str = "null") -> None:
        self._size = size
        self.name = name

    @property
    def size(self) -> int:
        return self._size

    async def read(self, offset: int, length: int) -> bytes:
        return self.read_sync(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        self.write_now(offset, data)

    def write_now(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        check_range(self, offset, len(data))

    async def flush(self) -> None:
        return None

    def read_sync(self, offset: int, length: int) -> bytes:
        check_range(self, offset, length)
        return bytes(length)

    def write_sync(self, offset: int, data: bytes) -> None:
        check_range(self, offset, len(data))
