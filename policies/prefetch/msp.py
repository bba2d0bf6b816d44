"""MSP, massive stripe prefetching: whole stripes ahead of one long (semi)sequential read.

Seed 001 (Baek & Park, "Striping-Aware Sequential Prefetching ...", IEEE TC 2009), section 4
and Fig. 7. MSP lives in the RAID controller and sees only block addresses. It watches the
sequence of *strip numbers* the host reads touch (``SN_c = block // blocks per strip``),
skipping repeats of the same strip (line 17), and keeps a sequential counter ``SC``:

* +1 (at most ``SC_max``) when the strip follows the previous one (``SN_p + 1``, line 18),
  which also marks the access *sequential*;
* +1 when it equals the strip before the previous one (``SN_pp``, line 21): a metadata read
  between two reads of the same data strip, the "semisequential" read of Fig. 6;
* -1 (never below 1) otherwise (line 23).

While ``SC < SC_thresh`` the stripe prefetch size ``SPS`` decays (line 27) and nothing is read
ahead. Once ``SC >= SC_thresh``, each sequential strip change prefetches ``SPS`` whole stripes
from the stripe of the current strip on (lines 29-33), and ``SPS`` grows by one up to
``SPS_max`` (line 34): the prefetch is stripe aligned and a multiple of the stripe, so every
member works for the one stream (no parallelism loss). Many concurrent streams interleave
their strip numbers, ``SC`` stays low and MSP switches itself off, leaving the field to the
host's (SA)SEQP: that is the paper's point.

The state is one detector for the whole array, as in the paper (global ``SN_p``, ``SN_pp``,
``SC``, ``SPS``), not one per stream: a small number of streams is what ``SC_thresh`` tunes for
(Fig. 8f).

Where vraid differs from Fig. 7, deliberately:

* Line 27 prints ``SPS <- min(SPS - 1, 0)``, which would drive SPS below zero for ever; vraid
  reads it as ``max(SPS - 1, 0)`` (decay to zero).
* Lines 30-32 index "the (SN_c + i)-th stripe" with a *strip* number; vraid prefetches stripe
  ``SN_c // data_disks + i`` (the stripe holding strip SN_c, then the following ones), which is
  what "aligned in the stripe ... multiple of the stripe size" (section 4) describes.
* The paper calls MSP once per accessed block; vraid gets one call per host read of possibly
  many blocks and feeds the detector the first block of every strip the read touches, in order
  (a read inside one strip is one step, as line 17 makes it anyway). The call comes as the
  host read arrives, before its member reads, as in the paper's driver: MSP sees the reads in
  arrival order, not in the order they complete.
* Fig. 7 prefetches from the stripe of the current strip on, so its first stripe includes the
  blocks the host read is asking for; the read path leaves those out of the prefetch (the host
  read fetches them itself at HOST priority) and prefetches the rest of that stripe.
* "Except for blocks that are clean or under reading or prefetching" (lines 31-32) is done by
  the read path (:mod:`vraid.engine.read.readpath`): it leaves out what the write cache or read
  cache holds and what a fetch is already reading, so the policy stays pure.

The SC sequence the pseudocode gives for the Fig. 6 block sequence differs from the one the
paper prints; ``tests/test_prefetch_msp.py`` records both and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from vraid.errors import VraidError

from .base import BlockRange, HostRead, PrefetchPolicy


@dataclass(frozen=True, slots=True)
class MspState:
    """The detector after one step: what the ``prefetch`` event and ``vraid status`` show."""

    strip: int  # SN_c, the strip number just seen
    sc: int  # the sequential counter
    sps: int  # the stripe prefetch size (stripes) for the next sequential step
    sequential: bool  # this step followed the previous strip
    active: bool  # SC >= SC_thresh: MSP is prefetching


class MspPrefetch(PrefetchPolicy):
    """Massive stripe prefetching (seed 001 sec. 4, Fig. 7)."""

    name = "msp"
    summary = "massive stripe prefetching: whole stripes ahead once the strip sequence counter SC reaches SC_thresh"
    source = "paper 001 sec. 4, Fig. 7 (SC_max 42, SC_thresh 38, SPS_max 8)"
    params = {
        "sc_max": (int, 42, "ceiling of the sequential counter SC", (1, 1 << 16)),
        "sc_thresh": (int, 38, "SC at which MSP starts prefetching whole stripes", (1, 1 << 16)),
        "sps_max": (int, 8, "stripes prefetched ahead at most (SPS_max)", (1, 1024)),
    }

    def __init__(self, geometry: Any = None, sc_max: int = 42, sc_thresh: int = 38, sps_max: int = 8) -> None:
        super().__init__(geometry)
        if sc_thresh > sc_max:
            raise VraidError(f"msp: sc_thresh={sc_thresh} is above sc_max={sc_max}, so SC never reaches it",
                             "e.g. msp:sc_max=42,sc_thresh=38")
        self.sc_max, self.sc_thresh, self.sps_max = sc_max, sc_thresh, sps_max
        self.sn_p = 0  # SN_p: the previous strip number (Fig. 7 starts it at 0)
        self.sn_pp = 0  # SN_pp: the one before
        self.sc = 0  # SC
        self.sps = 0  # SPS
        #: the detector's state after each strip change of the last host read (events, tests)
        self.steps: list[MspState] = []
        #: counters over the whole run: strip changes seen, those that were sequential, and
        #: those after which SC stood at or above SC_thresh (MSP on)
        self.changes = self.sequential_changes = self.active_changes = 0

    # -- Fig. 7 ------------------------------------------------------------------------
    def step(self, block: int) -> list[BlockRange]:
        """Lines 14-34 for one accessed block: the stripes to read ahead (block ranges)."""
        u = self.geometry.u
        sn_c = block // u  # line 16
        if sn_c == self.sn_p:  # line 17
            return []
        sequential = False
        if self.sn_p + 1 == sn_c:  # line 18
            self.sc = min(self.sc_max, self.sc + 1)
            sequential = True
        elif self.sn_pp == sn_c:  # line 21
            self.sc = min(self.sc_max, self.sc + 1)
        else:  # line 23
            self.sc = max(1, self.sc - 1)
        self.sn_pp, self.sn_p = self.sn_p, sn_c  # lines 24-25
        out: list[BlockRange] = []
        if self.sc < self.sc_thresh:  # line 26
            self.sps = max(self.sps - 1, 0)  # line 27 (printed as min: see the module docstring)
        elif sequential:  # line 28
            out = self._stripes(sn_c)
            self.sps = min(self.sps_max, self.sps + 1)  # line 34
        active = self.sc >= self.sc_thresh
        self.changes += 1
        self.sequential_changes += sequential
        self.active_changes += active
        self.steps.append(MspState(sn_c, self.sc, self.sps, sequential, active))
        return out

    def _stripes(self, strip: int) -> list[BlockRange]:
        """Lines 29-33: SPS whole stripes from the one holding ``strip`` (inside the array)."""
        g = self.geometry
        per_stripe = g.data_disks * g.u
        stripes = g.capacity // g.block_size // per_stripe
        first = strip // g.data_disks
        return [((first + i) * per_stripe, per_stripe) for i in range(self.sps) if first + i < stripes]

    # -- the prefetch interface ----------------------------------------------------------
    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        self.steps = []
        u = self.geometry.u
        out: list[BlockRange] = []
        block, end = read.first, read.first + max(read.count, 1)
        while block < end:
            out += self.step(block)
            block = (block // u + 1) * u
        return out

    def state(self) -> dict[str, Any]:
        """The detector now (``vraid status``)."""
        return {"sc": self.sc, "sps": self.sps, "sn_p": self.sn_p, "sn_pp": self.sn_pp,
                "active": self.sc >= self.sc_thresh, "strip_changes": self.changes,
                "sequential_changes": self.sequential_changes, "active_changes": self.active_changes}

    def describe(self) -> str:
        return f"msp:sc_max={self.sc_max},sc_thresh={self.sc_thresh},sps_max={self.sps_max}"
