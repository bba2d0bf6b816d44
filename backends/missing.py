"""``missing`` store: the place of a member that is not there (failed, absent, stale).

A degraded array keeps one store per role so that member indices stay roles;
the missing role gets this one. The controller never sends it a request
(the member is failed); if anything does, it fails like a dead disk.
"""

from __future__ import annotations

import errno

from .base import Store


class MissingStore(Store):
    instant = True

    def __init__(self, size: int, name: str = "(missing)") -> None:
        self._size = size
        self.name = name

    @property
    def size(self) -> int:
        return self._size

    def _gone(self) -> OSError:
        return OSError(errno.ENODEV, f"{self.name}: member is missing")

    async def read(self, offset: int, length: int) -> bytes:
        raise self._gone()

    async def write(self, offset: int, data) -> None:
        raise self._gone()

    async def flush(self) -> None:
        return None

    def read_sync(self, offset: int, length: int) -> bytes:
        raise self._gone()

    def write_sync(self, offset: int, data: bytes) -> None:
        raise self._gone()
