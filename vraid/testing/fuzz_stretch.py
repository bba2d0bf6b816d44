"""A long stretch of host requests in one step, so that ``vraid fuzz`` reaches a policy's late calls.

A hypothesis step is one rule: a write, a read, a flush. With a few dozen steps per example and
a remount now and then (which builds a fresh engine and a fresh policy object), a policy that
goes wrong only after its 100th or 300th call is out of reach of the default run. The
:class:`Stretch` rule runs up to :data:`STRETCH_MAX` writes and reads in a row on the same
engine, each checked against the model. It draws only two numbers, how many requests and a
seed for their offsets, lengths and bytes, so the shrunk failing example stays short (the
shortest stretch that still fails) and its replay blob small.

Mixed into the model machines of :mod:`vraid.testing.fuzz` whose class has ``_write``,
``portal``, ``model`` and ``max_len`` (:class:`vraid.testing.machines.ArrayMatchesModel` and
its subclasses).
"""

from __future__ import annotations

import random

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import rule

#: the most host requests one ``stretch`` step makes
STRETCH_MAX = 150
#: of each ten requests of a stretch, this many are writes (the rest are reads)
WRITES_IN_TEN = 7


class Stretch:
    """Mixin: the ``stretch`` rule (see the module docstring)."""

    @rule(n=st.integers(1, STRETCH_MAX), seed=st.integers(0, 2**32 - 1))
    def stretch(self, n: int, seed: int) -> None:
        """``n`` writes and reads in a row, drawn from ``seed``: sizes up to three stripes, aligned or not."""
        note(f"a stretch of {n} host requests drawn from seed {seed}")
        rng = random.Random(seed)
        b = self.g.block_size
        for i in range(n):
            aligned = rng.random() < 0.5
            if aligned:
                first = rng.randrange(self.capacity // b)
                length = b * rng.randint(1, max(1, min(self.max_len, self.capacity - first * b) // b))
                offset = first * b
            else:
                offset = rng.randrange(self.capacity)
                length = rng.randint(1, min(self.max_len, self.capacity - offset))
            try:
                if rng.randrange(10) < WRITES_IN_TEN:
                    self._stretch_write(offset, length, rng.getrandbits(32))
                else:
                    got = self.portal.read(offset, length)
                    assert got == bytes(self.model[offset : offset + length]), (
                        f"a read of {length} bytes at {offset} differs from the model")
            except BaseException:
                note(f"request {i + 1} of the stretch failed (offset={offset} length={length})")
                raise

    def _stretch_write(self, offset: int, length: int, seed: int) -> None:
        from hypothesis.control import current_build_context

        context = current_build_context()
        quiet, context.is_final = context.is_final, False  # one note per stretch, not one per write
        try:
            self._write(offset, length, seed, "stretch")
        finally:
            context.is_final = quiet
