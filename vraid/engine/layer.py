"""The layer protocol: what every layer of the data path offers the layer above it.

The chain (:mod:`vraid.engine.chain`) is, from the top: the read path, the write-back cache,
the log cache (seed 002) or the placement (seed 004), and the RAID layer. Each layer knows
only its *target*, the layer below, through this protocol; none knows the layer above or
imports the host API. A layer

* takes host writes (:meth:`Layer.write`) and destaged units (:meth:`Layer.write_unit`: a
  :class:`~vraid.engine.raid.stripe.StripeBuffer` and its cache-state matrix Z, seed 000
  eq. 2). A buffering layer (the log cache) answers once the blocks are in its own buffer
  and returns no filled cells; the RAID layer plans and writes them and returns the E cells
  its plan read (``r``), which hold the members' clean data now;
* serves :meth:`Layer.read` and :meth:`Layer.read_blocks` from its own buffer where it holds
  a newer copy, from its target otherwise, so a read below a cache never sees an older copy
  than the chain holds; :meth:`Layer.read_now` is the same read made with no await where the
  mechanism allows it (None otherwise: the caller awaits ``read``);
* makes :meth:`Layer.flush` durable in its own medium (NVRAM, the log disk, the stripe
  directory) or by flushing through to its target;
* on :meth:`Layer.shutdown` empties itself into its target and shuts the target down;
* runs its background work in :meth:`Layer.run` (started with ``nursery.start``);
* reports its state as a typed, frozen record (:meth:`Layer.status`, a
  :class:`~vraid.engine.status.StatusRecord` defined beside the layer); the host API builds
  ``vraid status``'s dict from the records' ``as_dict()``;
* passes ``geometry``, ``mapping``, ``clock`` and ``events`` of its target through, so every
  layer publishes on one bus under one clock.

``tests/test_target.py`` builds a buffering layer over a recording one and runs the cache on
it; :class:`vraid.engine.log.cache.LogCache` is the real one (docs/log-disk.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from vraid.engine.members.request import Priority

if TYPE_CHECKING:
    from vraid.core.geometry import Geometry
    from vraid.core.mapping import Mapping
    from vraid.engine.clock import Clock
    from vraid.engine.events import EventBus
    from vraid.engine.raid.stripe import StripeBuffer
    from vraid.engine.status import StatusRecord

Z = Sequence[Sequence[str]]
#: (column, row) of a block in a StripeBuffer: data strip k, row relative to the buffer's row0
Cell = tuple[int, int]


class Layer(Protocol):
    """One layer of the data path, as the layer above it sees it."""

    geometry: "Geometry"
    #: logical-to-physical translation (vraid.core.mapping): cache units and journal block numbers use it
    mapping: "Mapping"
    clock: "Clock"
    events: "EventBus"

    async def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Take a host write of ``data`` at ``offset`` (any alignment)."""
        ...

    async def write_unit(self, buf: "StripeBuffer", z: Z, *, priority: Priority = Priority.DESTAGE,
                         cause: Any = None) -> frozenset[Cell]:
        """Take the rows of ``buf`` whose states ``z`` gives (D blocks are written). Returns
        the E cells of ``buf`` filled with the current (clean) data while doing so."""
        ...

    async def read_blocks(self, buf: "StripeBuffer", cells: Iterable[Cell], *, priority: Priority = Priority.HOST) -> None:
        """Read data blocks ``cells`` of ``buf`` into it (partial-block fills)."""
        ...

    async def read(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes:
        """``length`` bytes of the image at ``offset`` as the layer holds them."""
        ...

    def read_now(self, offset: int, length: int, *, priority: Priority = Priority.HOST) -> bytes | None:
        """:meth:`read` made on the caller's thread with no await, by at most one member
        request, when the layer can (the RAID layer: one strip of a healthy array on an idle
        member that reads synchronously); None when it cannot, and the caller awaits
        :meth:`read`. A layer that holds data of its own answers None."""
        ...

    async def flush(self) -> None:
        """Return once everything taken before the call is durable."""
        ...

    async def shutdown(self) -> None:
        """Unmount: write out everything the layer holds to its target, then shut the target
        down (so one call at the top empties the chain, top to bottom)."""
        ...

    async def run(self, *, task_status: Any = ...) -> None:
        """The layer's background work, until cancelled."""
        ...

    def status(self) -> "StatusRecord":
        """The layer's state now, as a frozen record; ``as_dict()`` gives the JSON form."""
        ...
