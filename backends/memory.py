"""``memory`` store: a bytearray. For tests, the simulator and labs."""

from __future__ import annotations

from .base import Store, check_range


class MemoryStore(Store):
    instant = True

    def __init__(self, size: int, name: str = "memory") -> None:
        self._data = bytearray(size)
        self.name = name

    @property
    def size(self) -> int:
        return len(self._data)

    async def read(self, offset: int, length: int) -> bytes:
        return self.read_sync(offset, length)

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        check_range(self, offset, len(data))
        self._data[offset : offset + len(data)] = data

    async def flush(self) -> None:
        return None

    def read_sync(self, offset: int, length: int) -> bytes:
        check_range(self, offset, length)
        return bytes(self._data[offset : offset + length])

    def write_sync(self, offset: int, data: bytes) -> None:
        check_range(self, offset, len(data))
        self._data[offset : offset + len(data)] = data
