"""The placement family: where a written block goes (seed 004, Hua, Vu & Hu).

A placement decides, for every host write, whether blocks are written in place (RAID-5
small writes, ``static``) or gathered in write buffers and written as whole new stripes
into free stripes of a :class:`~vraid.core.directory.StripeDirectory` (``multibuffer``,
section 2; ``dpsr``, the baseline of section 1). It decides only: it returns *steps* as
plain data and never does I/O, never changes the directory and never holds data bytes
(the engine keeps the buffered bytes, keyed by logical strip).

Units: a *strip* (``u`` blocks, the directory's unit; the paper's "block" with ``u = 1``).

How the engine calls a placement (:mod:`vraid.engine.placement.writes` on a mounted or simulated
array; the ``multibuffer`` experiment and lab drive the same objects directly):

1. at create/open: ``directory = placement.make_directory(geometry, logical_stripes)``
   (or the recovered one, :func:`vraid.core.directory_format.recover`), then
   ``placement.attach(directory)``; the directory becomes the engine's ``Mapping``.
   A placement that keeps buffers rebuilds their index after a crash with
   ``placement.restore(strips)`` from the NVRAM's replayed blocks, in order.
2. a host read of strips ``R``: ``hits = placement.read(R)``: the strips served from the
   write buffers (the buffer is a read cache too); the rest are read through the
   directory's ``locate``.
3. a host write, strip by strip: ``steps = placement.write(L)``; for each step in order
   the engine checks it against the directory, performs its I/O (below), queues its
   journal record (:func:`vraid.core.directory_format.encode_step`; committed in groups,
   :mod:`vraid.engine.placement.directory_store`), then calls ``directory.apply(step)``; then it
   stores L's bytes in the buffer and acknowledges. Every returned step must be applied
   before the next call.
4. fsync / unmount: ``placement.flush()`` returns the steps of one more stripe write
   out of the buffers; the engine performs and applies them and calls it again until it
   returns ``[]``.
5. background (destage priority, yielding to host I/O): ``placement.clean()`` returns
   cleaner steps that prepare a free stripe ahead of need (may be empty).

What each step costs in the paper (vraid's costs, which keep parity over the physical
content of free slots too, are in :mod:`vraid.engine.placement.writes` and docs/multibuffer.md):

* :class:`~vraid.core.directory.Dirty` ``(L)``: none (the record alone).
* :class:`~vraid.core.directory.StripeWrite` ``LW``: write the strips (bytes from the
  buffer) and the parity computed from them, no reads; ``PW``: read the parity, XOR the
  new strips into it (free slots count as zero), write strips and parity.
* :class:`~vraid.core.directory.Swap` ``(v, m, p)``: read the live strip at (v, m),
  read the dirty strip at (p, m) and p's parity, write the strip at (p, m) and the
  patched parity. (The paper's "no I/O in the hot region" needs stripes that are not
  physical rows; vraid keeps stripes physical, so a swap always moves data.)
* :class:`~vraid.core.directory.Release` ``(s)``: read s's dirty strips and its
  parity, write the parity with them XORed out (they become free: zeros).
* :class:`InPlace` ``(L,)``: a RAID-5 small write of L at its current slot (read-modify-
  write or reconstruct-write, as today's planner does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from vraid.core.directory import Step, StripeDirectory


@dataclass(frozen=True)
class InPlace:
    """RAID-5 small writes of ``strips`` at their current slots; the directory does not change."""

    strips: tuple[int, ...]


class Placement:
    """Base of every placement policy (see the package docstring for how it is called)."""

    name = "base"
    summary = ""
    source = ""
    params: dict[str, Any] = {}
    #: whether blocks move: written through a stripe directory kept on the members, by the
    #: engine's placement layer (:mod:`vraid.engine.placement`). False (``static``): every block
    #: stays at the layout's place, no directory is made and no placement layer runs.
    remaps = True

    directory: StripeDirectory

    def make_directory(self, geometry: Any, logical_stripes: int) -> StripeDirectory:
        """The directory of a new array holding ``logical_stripes`` stripes of data."""
        return StripeDirectory.fresh(geometry, logical_stripes)

    def attach(self, directory: StripeDirectory) -> None:
        self.directory = directory

    def read(self, strips: Sequence[int]) -> set[int]:
        """The strips of ``strips`` the buffers hold (read hits)."""
        return set()

    def write(self, strip: int) -> list[Any]:
        """The steps to perform before ``strip``'s new data is accepted."""
        raise NotImplementedError

    def flush(self) -> list[Any]:
        """The steps of one more stripe write out of the buffers ([] when they are empty)."""
        return []

    def clean(self) -> list[Step]:
        """Background cleaner steps (none by default)."""
        return []

    def restore(self, strips: Iterable[int]) -> None:
        """Rebuild the buffer index after a crash: ``strips`` buffered, oldest first."""

    def buffered(self) -> dict[int, int]:
        """member -> strips buffered for it (``vraid status``, the TUI)."""
        return {}

    @property
    def spec(self) -> str:
        from vraid.policies.registry import format_spec, schema

        values = {k: getattr(self, k) for k in self.params}
        return format_spec(self.name, values, schema(type(self)))


def fallback_spec(failed: Any, ctx: Any) -> str:
    """The built-in that takes over from a failed placement over the stripe directory
    ``ctx.directory`` (the placement row's ``fallback``; the policy guard asks through
    :func:`vraid.policies.registry.fallback`): ``dpsr`` on a directory made for
    migration, ``multibuffer`` otherwise, with the failed policy's buffer size when it has a
    sane one (it takes over every buffered strip)."""
    size = getattr(failed, "buffer", None)
    size = size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else 100
    return f"{'dpsr' if getattr(ctx.directory, 'migrate', False) else 'multibuffer'}:buffer={size}"


def needs_directory(spec: Any) -> bool:
    """Whether the placement ``spec`` names (text or a checked spec; None: the family's
    default) needs a stripe directory: the one question create, the builder, the simulator
    and ``vraid fuzz`` ask of a placement before running it (:attr:`Placement.remaps`)."""
    from vraid.policies import registry

    cls = registry.policy_class(registry.parse("placement", spec))
    return bool(getattr(cls, "remaps", True))


__all__ = ["InPlace", "Placement", "fallback_spec", "needs_directory"]
