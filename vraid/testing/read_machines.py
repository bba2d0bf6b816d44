"""The model machines with a read cache and a prefetch policy (tests and ``vraid fuzz --prefetch``).

:func:`read_cached` turns a machine of :mod:`vraid.testing.machines` (write-through or with a
write-back cache) into one whose engine has a clean-block read cache and the prefetch policy
``prefetch`` (any spec, a student's class included), over members that take 0 to 2 ms per
request (:class:`JitterStore`, seeded), so prefetches stay in flight across host requests.
Besides the model's own checks: reads always return the model, sequential strip reads
(what a prefetcher is for) too, and the read cache never holds a stale block (:func:`fresh`).
"""

from __future__ import annotations

import random
from pathlib import Path

import trio
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from vraid.backends.base import StoreWrapper
from vraid.testing.machines import GEOMETRY, ArrayMatchesModel, CachedArrayMatchesModel
from vraid.testing.portal import ArrayPortal


def fresh(array, model: bytes | bytearray) -> None:
    """Every block the read cache holds has the model's (the host's newest) bytes."""
    rc = array.reads.read_cache
    bs = array.geometry.block_size
    for block, data in list(rc._blocks.items()):
        if data != bytes(model[block * bs : (block + 1) * bs]):
            raise AssertionError(f"the read cache holds a stale block {block}")


class JitterStore(StoreWrapper):
    """Each request takes 0 to 2 ms (seeded): prefetches stay in flight across host requests."""

    def __init__(self, inner, seed: int) -> None:
        super().__init__(inner)
        self.rng = random.Random(seed)

    async def read(self, offset, length):
        await trio.sleep(self.rng.choice((0, 0, 0.0005, 0.002)))
        return await self.inner.read(offset, length)

    async def write(self, offset, data):
        await trio.sleep(self.rng.choice((0, 0, 0.0005, 0.002)))
        await self.inner.write(offset, data)


def read_cached(base, prefetch: str, counts: dict[str, int] | None = None):
    class ReadCachedModel(base):
        """Reads always return the model, and the read cache never holds a stale block."""

        def _open(self) -> ArrayPortal:
            stores = [JitterStore(s, i) for i, s in enumerate(self.stores)]
            kw = {"cache": self.cache} if base is CachedArrayMatchesModel else {}
            options = dict(self.options)
            policies = {**options.pop("policies", {}), "prefetch": prefetch}  # a student's policy, by spec
            return ArrayPortal(self.g, stores, read_cache_size=6 * self.g.block_size * self.g.u,
                               policies=policies, **kw, **options)

        def teardown(self) -> None:
            if counts is not None and self.portal.alive:
                rc = self.portal.array.reads.read_cache
                counts[prefetch] = counts.get(prefetch, 0) + rc.metrics.prefetched
            super().teardown()

        @rule()
        def read_cache_is_fresh(self) -> None:
            note("check the read cache against the model")
            self.portal.call(trio.sleep, 0.005)  # let prefetches in flight land first
            fresh(self.portal.array, self.model)

        @initialize(data=st.data())
        def a_stream(self, data) -> None:
            """Every run starts with one stream of four strips read a block at a time, which
            every prefetch policy acts on (MSP's counter reaches its threshold, SASEQP's
            reads reach its marker inside a strip): random draws alone did not always."""
            strips = self.capacity // self.g.strip_size
            self._walk(data.draw(st.integers(0, strips - 4), label="stream strip"), 4, self.g.block_size)

        @rule(data=st.data())
        def read_sequential(self, data) -> None:
            """Strip after strip, in reads of a strip or of a block: what NextStrip prefetches
            is then read, and SASEQP (whose window a strip-sized read at a strip's start
            never passes) sees reads inside a strip reach its marker."""
            g = self.g
            first = data.draw(st.integers(0, self.capacity // g.strip_size - 1), label="strip")
            n = data.draw(st.integers(1, 4), label="strips")
            self._walk(first, n, data.draw(st.sampled_from([g.strip_size, g.block_size]), label="read size"))

        def _walk(self, first: int, n: int, size: int) -> None:
            """Read strips first..first+n-1 (as many as the array has) in reads of ``size``."""
            g = self.g
            end = min(first + n, self.capacity // g.strip_size) * g.strip_size
            for at in range(first * g.strip_size, end, size):
                got = self.portal.read(at, size)
                assert got == bytes(self.model[at : at + size])

    ReadCachedModel.__name__ = f"ReadCached{base.__name__}"
    return ReadCachedModel


class WriteThroughModel(ArrayMatchesModel):
    """The write-through machine on the cache machine's geometry (``cache`` is None)."""

    def __init__(self, cache, backend: str, workdir: Path, *, options: dict | None = None) -> None:
        self.cache = cache
        super().__init__(GEOMETRY, backend, workdir, options=options)
