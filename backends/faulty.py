"""``faulty``: a store wrapper that injects failures, for labs and crash tests.

A fault spec names a member and what goes wrong on it (``--fault``, repeatable)::

    disk2:eio=1000-1010          reads and writes touching member blocks 1000..1010 fail (EIO)
    disk2:eio=7,eio=20-29        several ranges (or several --fault options for one disk)
    disk1:fail-after=5000        requests 1..5000 succeed, every later one fails: a dead disk
    disk0:latency=50ms,every=100 every 100th request waits 50 ms longer
    disk0:latency=20ms,p=0.01,seed=7
                                 each request, with probability 0.01, waits 20 ms longer
    disk3:torn-after=300         the first write after 300 requests lands only partly (a
                                 prefix of its blocks), then the disk fails everything:
                                 power lost in the middle of a write
    disk1:volatile               writes are durable only once the member is flushed; the
                                 rest dies with the process (``backends/volatile.py``)
    all:volatile                 the same on every member (``all:`` works for any fault)

Member blocks are counted in the member's data area, block_size each, as
``vraid layout`` and ``Geometry.locate(...).member_block`` number them;
requests are reads and writes (flushes are not counted). A failure raises
``OSError(EIO)``, the error a real disk gives; the controller turns it into
a ``MemberIOError`` and the FUSE layer into EIO for the host. Latency is
spent on the injected clock (virtual in ``vraid sim``).

:class:`PowerCut` is the torn write across a whole array at once, for tests
that crash an array: every member's wrapper shares one request counter, the
write that crosses the limit is torn and every member fails from then on (with
``flushes``, flushes are counted too and the cut may fall on one).
"""

from __future__ import annotations

import errno
import random
import re
from dataclasses import dataclass, field

from ..errors import VraidError
from .base import Store, StoreWrapper

_HINT = ("write DISK:KEY=VALUE[,KEY=VALUE...], e.g. disk2:eio=1000-1010, disk1:fail-after=5000, "
         "disk0:latency=50ms,every=100, disk0:latency=20ms,p=0.01,seed=7, disk3:torn-after=300, all:volatile")
_TIME = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(s|ms|us)?\s*$")
_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, None: 1e-3}


@dataclass
class FaultSpec:
    """What goes wrong on one member."""

    eio: list[tuple[int, int]] = field(default_factory=list)  # inclusive member-block ranges
    fail_after: int | None = None
    latency: float = 0.0  # seconds added to a spiking request
    every: int | None = None
    probability: float | None = None
    seed: int = 0
    torn_after: int | None = None
    volatile: bool = False  # writes are durable only once flushed (backends.volatile)

    def merge(self, other: "FaultSpec") -> "FaultSpec":
        """Both specs' faults (the second's scalars win where it sets them)."""
        return FaultSpec(
            eio=self.eio + other.eio,
            fail_after=other.fail_after if other.fail_after is not None else self.fail_after,
            latency=other.latency or self.latency,
            every=other.every if other.every is not None else self.every,
            probability=other.probability if other.probability is not None else self.probability,
            seed=other.seed or self.seed,
            torn_after=other.torn_after if other.torn_after is not None else self.torn_after,
            volatile=self.volatile or other.volatile,
        )

    def describe(self) -> str:
        parts = [f"eio={a}-{b}" if a != b else f"eio={a}" for a, b in self.eio]
        if self.fail_after is not None:
            parts.append(f"fail-after={self.fail_after}")
        if self.latency:
            how = f"every={self.every}" if self.every else f"p={self.probability},seed={self.seed}"
            parts.append(f"latency={self.latency * 1e3:g}ms,{how}")
        if self.torn_after is not None:
            parts.append(f"torn-after={self.torn_after}")
        if self.volatile:
            parts.append("volatile")
        return ",".join(parts)


def _bad(spec: str, why: str) -> VraidError:
    return VraidError(f"fault {spec!r}: {why}", _HINT)


def _count(spec: str, key: str, value: str, minimum: int = 0) -> int:
    if not re.fullmatch(r"\d+", value.strip()):
        raise _bad(spec, f"{key}={value!r} is not a whole number")
    n = int(value)
    if n < minimum:
        raise _bad(spec, f"{key} must be at least {minimum}")
    return n


def parse_fault(spec: str, ndisks: int | None = None) -> tuple[int | None, FaultSpec]:
    """Parse one ``--fault`` spec into (member index, FaultSpec); the index is
    None for ``all:`` (every member).

    Raises:
        VraidError: naming the bad part, with the grammar as a hint.
    """
    disk_text, colon, rest = spec.partition(":")
    m = re.fullmatch(r"\s*(?:disk)?(\d+)\s*|\s*(all)\s*", disk_text, re.IGNORECASE)
    if not colon or m is None:
        raise _bad(spec, "it does not start with a member such as disk2: (or all:)")
    disk = int(m.group(1)) if m.group(1) is not None else None
    if ndisks is not None and disk is not None and disk >= ndisks:
        raise _bad(spec, f"the array has members disk0..disk{ndisks - 1}, not disk{disk}")
    fs = FaultSpec()
    items = [i.strip() for i in rest.split(",") if i.strip()]
    if not items:
        raise _bad(spec, "no fault given after the member")
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip().lower().replace("_", "-")
        if key == "volatile":
            if eq:
                raise _bad(spec, "volatile takes no value (write disk1:volatile)")
            fs.volatile = True
            continue
        if not eq:
            raise _bad(spec, f"{item!r} is not KEY=VALUE")
        if key == "eio":
            r = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", value)
            if r is None:
                raise _bad(spec, f"eio={value!r} is not a block or a range FIRST-LAST")
            a, b = int(r.group(1)), int(r.group(2) or r.group(1))
            if b < a:
                raise _bad(spec, f"eio range {a}-{b} ends before it starts")
            fs.eio.append((a, b))
        elif key == "fail-after":
            fs.fail_after = _count(spec, key, value)
        elif key == "torn-after":
            fs.torn_after = _count(spec, key, value)
        elif key == "latency":
            t = _TIME.match(value)
            if t is None:
                raise _bad(spec, f"latency={value!r} is not a time such as 50ms")
            fs.latency = float(t.group(1)) * _SCALE[t.group(2)]
        elif key == "every":
            fs.every = _count(spec, key, value, 1)
        elif key == "p":
            try:
                fs.probability = float(value)
            except ValueError:
                raise _bad(spec, f"p={value!r} is not a number") from None
            if not 0 <= fs.probability <= 1:
                raise _bad(spec, f"p={value} is not a probability between 0 and 1")
        elif key == "seed":
            fs.seed = _count(spec, key, value)
        else:
            raise _bad(spec, f"unknown fault {key!r} (known: eio, fail-after, latency with every or p and seed, torn-after, volatile)")
    if fs.latency and fs.every is None and fs.probability is None:
        raise _bad(spec, "latency needs every=N or p=PROBABILITY")
    if (fs.every is not None or fs.probability is not None) and not fs.latency:
        raise _bad(spec, "every and p go with latency=TIME")
    if fs.every is not None and fs.probability is not None:
        raise _bad(spec, "give every=N or p=PROBABILITY, not both")
    return disk, fs


def parse_faults(specs, ndisks: int | None = None) -> dict[int, FaultSpec]:
    """Every ``--fault`` option, merged per member (``all:`` needs ``ndisks``)."""
    out: dict[int, FaultSpec] = {}
    for spec in specs or ():
        disk, fs = parse_fault(spec, ndisks)
        if disk is None and ndisks is None:
            raise _bad(spec, "all: needs the number of members")
        for d in range(ndisks) if disk is None else (disk,):  # type: ignore[arg-type]
            out[d] = out[d].merge(fs) if d in out else fs
    return out


class PowerCut:
    """A power cut shared by the members of one array: after ``after`` requests in
    total, the next write is torn (a random prefix of its blocks lands) and every
    member fails from then on. With ``flushes`` a flush counts as a request too, and
    the power may fail at one (it fails and nothing more lands): between the flushes
    of two stores, say, which a cut counted in reads and writes alone never hits."""

    def __init__(self, after: int, seed: int = 0, *, flushes: bool = False) -> None:
        self.after = after
        self.requests = 0
        self.dead = False
        self.flushes = flushes
        self.rng = random.Random(seed)
        self.torn: tuple[str, int, int, int] | None = None  # (store, offset, length, bytes landed)


def _eio(store: str, what: str) -> OSError:
    return OSError(errno.EIO, f"injected fault on {store}: {what}")


class FaultyStore(StoreWrapper):
    """``inner`` with the faults of ``spec`` (see the module docstring)."""

    def __init__(self, inner: Store, spec: FaultSpec | None = None, *, clock=None, block_size: int = 4096,
                 data_offset: int = 0, power: PowerCut | None = None) -> None:
        super().__init__(inner)
        self.spec = spec or FaultSpec()
        self.clock = clock
        self.block_size = block_size
        self.data_offset = data_offset
        self.power = power if power is not None else (
            PowerCut(self.spec.torn_after, self.spec.seed) if self.spec.torn_after is not None else None)
        self.requests = 0
        self.failed = False
        self.injected = {"eio": 0, "failed": 0, "latency": 0, "torn": 0}
        self._rng = random.Random(self.spec.seed)
        # a store with only block or count faults takes no time: keep the inline fast path
        self.instant = inner.instant and not self.spec.latency

    # -- the checks -----------------------------------------------------------------
    def _before(self, op: str, offset: int, length: int) -> None:
        self.requests += 1
        s = self.spec
        if self.power is not None:
            self.power.requests += 1
            if self.power.dead:
                self.injected["failed"] += 1
                raise _eio(self.name, "power lost")
        if self.failed or (s.fail_after is not None and self.requests > s.fail_after):
            self.failed = True
            self.injected["failed"] += 1
            raise _eio(self.name, f"the disk failed after {s.fail_after} requests")
        if s.eio and offset + length > self.data_offset:
            first = max(0, offset - self.data_offset) // self.block_size
            last = (offset + length - 1 - self.data_offset) // self.block_size
            for a, b in s.eio:
                if first <= b and a <= last:
                    self.injected["eio"] += 1
                    raise _eio(self.name, f"{op} of member blocks {first}-{last} touches bad blocks {a}-{b}")

    async def _delay(self) -> None:
        s = self.spec
        if not s.latency:
            return
        spike = (s.every is not None and self.requests % s.every == 0) or (
            s.probability is not None and self._rng.random() < s.probability)
        if spike:
            self.injected["latency"] += 1
            await self.clock.sleep(s.latency)

    async def read(self, offset: int, length: int) -> bytes:
        self._before("read", offset, length)
        await self._delay()
        return await self.inner.read(offset, length)

    @property
    def durable_writes(self) -> bool:  # type: ignore[override]
        return self.inner.durable_writes

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        await self._write(offset, data, durable=False)

    async def write_durable(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """A write with the faults of :meth:`write` (a torn one lands its part volatile),
        then durable in the inner store."""
        await self._write(offset, data, durable=True)

    async def _write(self, offset: int, data: bytes | bytearray | memoryview, durable: bool) -> None:
        self._before("write", offset, len(data))
        power = self.power
        if power is not None and power.requests > power.after:
            view = memoryview(data)
            blocks = max(1, len(view) // self.block_size)
            landed = power.rng.randrange(blocks) * self.block_size  # never the whole write
            if landed:
                await self.inner.write(offset, view[:landed])
            power.dead = True
            power.torn = (self.name, offset, len(view), landed)
            self.injected["torn"] += 1
            raise _eio(self.name, f"power lost: only {landed} of {len(view)} bytes at {offset} were written")
        await self._delay()
        if durable:
            await self.inner.write_durable(offset, data)
        else:
            await self.inner.write(offset, data)

    def prefetch(self, offset: int, length: int) -> None:
        self.inner.prefetch(offset, length)

    async def flush(self) -> None:
        power = self.power
        if power is not None and power.flushes and not power.dead:
            power.requests += 1
            if power.requests > power.after:  # the power fails at this flush
                power.dead = True
                power.torn = (self.name, 0, 0, 0)
                self.injected["torn"] += 1
                raise _eio(self.name, "power lost at a flush")
        if self.failed or (power is not None and power.dead):
            raise _eio(self.name, "flush of a failed disk")
        await self.inner.flush()

    def status(self) -> dict[str, object]:
        out = {"faults": self.spec.describe(), "requests": self.requests, "failed": self.failed} | self.injected
        if hasattr(self.inner, "dirty_blocks"):  # a volatile member under the faults
            out["volatile"] = self.inner.status()
        return out


def wrap_faults(stores: list[Store], faults: dict[int, FaultSpec], *, clock, block_size: int, data_offset: int) -> list[Store]:
    """``stores`` with the members named in ``faults`` behind a :class:`FaultyStore`; a
    ``volatile`` member's writes go through a :class:`~backends.volatile.VolatileStore`
    below the faults (the faults are the disk's, the layer is its write cache)."""
    from .volatile import VolatileStore

    out: list[Store] = []
    for i, s in enumerate(stores):
        if i in faults:
            inner = VolatileStore(s, block_size=block_size) if faults[i].volatile else s
            s = FaultyStore(inner, faults[i], clock=clock, block_size=block_size, data_offset=data_offset)
        out.append(s)
    return out
