"""What a crash must keep of a remapped array (seed 004), block by block, as a disk promises.

:class:`SinceFlush` follows a model bytearray between flushes: the content as of the last
flush that returned, and every version each block was given since. After a crash,
:meth:`SinceFlush.check` asks of what the array reads back:

* a block not written since the flush: exactly its flushed content, even when a write
  since changed another part of its strip;
* a block written since: its flushed content, one of the versions written since, or
  zeros when its whole strip was written since (the write buffers are volatile: a strip
  whose only copy was in one, its old slot recycled, reads as zeros; docs/multibuffer.md).

The model machine (:mod:`vraid.testing.placed_machines`) and the power-cut machine
(:mod:`vraid.testing.placed_crash_machine`) both keep one.
"""

from __future__ import annotations


class SinceFlush:
    def __init__(self, block_size: int, strip_size: int, model: bytes | bytearray) -> None:
        self.block_size = block_size
        self.per_strip = strip_size // block_size
        self.flushed(model)

    def flushed(self, model: bytes | bytearray) -> None:
        """A flush returned (or the array was mounted): ``model`` is what a crash must keep."""
        self.content = bytes(model)
        #: block -> its contents written since the last flush (each version)
        self.versions: dict[int, set[bytes]] = {}

    def written(self, offset: int, length: int, model: bytes | bytearray) -> None:
        """``length`` bytes at ``offset`` were written; ``model`` holds them already."""
        bs = self.block_size
        for b in range(offset // bs, (offset + length - 1) // bs + 1):
            self.versions.setdefault(b, set()).add(bytes(model[b * bs : (b + 1) * bs]))

    def strips(self) -> list[int]:
        """The strips written since the flush (for notes)."""
        return sorted({b // self.per_strip for b in self.versions})

    def check(self, got: bytes) -> None:
        """Raise AssertionError naming the first block ``got`` (the whole array read back
        after a crash) holds that the module docstring does not allow."""
        bs, per_strip, zeros = self.block_size, self.per_strip, bytes(self.block_size)
        for b in range(len(got) // bs):
            now, flushed = got[b * bs : (b + 1) * bs], self.content[b * bs : (b + 1) * bs]
            L = b // per_strip
            written = self.versions.get(b)
            if written is None:
                assert now == flushed, f"block {b} (strip {L}), not written since the last flush, changed in the crash"
                continue
            whole = all(c in self.versions for c in range(L * per_strip, (L + 1) * per_strip))
            assert now == flushed or now in written or (whole and now == zeros), \
                f"block {b} (strip {L}) reads back as none of its versions since the last flush" + \
                ("" if whole else " (and its strip was not all written since, so zeros are not allowed)")
