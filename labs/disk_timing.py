"""Lab ``disk-timing``: a request sequence under FIFO and C-LOOK on the hdd model (OSTEP's disk.py, vraid's disk).

Every request is waiting at time 0 on one member (queue depth 1: the disk serves one command at
a time, the order is the queue's). FIFO serves them in arrival order; C-LOOK (seed 003 sec. 3.1)
serves the lowest offset at or above the head, and when none is left above wraps to the lowest
waiting. A request's time is seek + rotational latency + transfer (+ overhead), as the hdd model
computes them from its preset's seek curve, rpm and zones.

The order is :class:`policies.queue.clook.ClookOrder`'s; the times are what
:mod:`vraid.backends.hdd` (through :func:`vraid.backends.models.parse_model`) takes in virtual
time for exactly those reads, one after the other, on a member spread over the whole disk
(``stroke=full``): the member's 64 MiB stand for the full stroke, so block numbers are
positions across the platter.
"""

from __future__ import annotations

import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.backends.models import parse_model
from vraid.engine.clock import TrioClock
from vraid.policies.queue.clook import ClookOrder

from .framework import Lab, Question, rng

BLOCK = 4096
MEMBER = 64 << 20
PRESETS = ("st39175fc", "dnes-318350", "st373454lc")


class _Req:
    def __init__(self, block: int) -> None:
        self.block = block
        self.offset = block * BLOCK


def clook_order(blocks, start: int) -> list[int]:
    """The order C-LOOK serves ``blocks`` (all waiting; the head just past block ``start``)."""
    q = ClookOrder()
    for b in blocks:
        q.add(_Req(b))
    head, out = (start + 1) * BLOCK, []
    while q:
        r = q.pop(head)
        out.append(r.block)
        head = r.offset + BLOCK
    return out


def serve(model: str, start: int, order) -> list[float]:
    """Each read's service time (ms) when served in ``order`` on a fresh disk whose head has
    just read block ``start`` (that read is not counted)."""
    spec = parse_model(model)

    async def main() -> list[float]:
        disk = spec.wrap(MemoryStore(MEMBER, name="lab"), TrioClock())
        times = []
        await disk.read(start * BLOCK, BLOCK)
        for b in order:
            t0 = trio.current_time()
            await disk.read(b * BLOCK, BLOCK)
            times.append((trio.current_time() - t0) * 1000)
        return times

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def distance(start: int, order) -> int:
    pos, total = start + 1, 0
    for b in order:
        total += abs(b - pos)
        pos = b + 1
    return total


class DiskTimingLab(Lab):
    def dealt(self, seed: int) -> tuple[str, int, list[int]]:
        r = rng(self, seed)
        model = f"hdd:{PRESETS[seed % len(PRESETS)]}"
        n = r.choice((5, 6, 7))
        blocks = r.sample(range(MEMBER // BLOCK), n + 1)
        return model, blocks[0], blocks[1:]

    def setting(self, seed: int) -> str:
        model, start, blocks = self.dealt(seed)
        return (f"Disk model {model} (`vraid models`), one member of {MEMBER >> 20} MiB spread over the whole disk. "
                f"Reads of one 4 KiB block, all waiting at time 0, arrived in this order:\n  {', '.join(map(str, blocks))}\n"
                f"The head has just read block {start} (it is at {start + 1}). Seek distance: the sum of |next block - where the head is| in blocks "
                "(after a read the head is just past the block it read).")

    def questions(self, seed: int) -> list[Question]:
        model, start, blocks = self.dealt(seed)
        order = clook_order(blocks, start)
        fifo_t, clook_t = serve(model, start, blocks), serve(model, start, order)
        wraps = sum(1 for a, b in zip(order, order[1:]) if b < a)
        tf, tc = sum(fifo_t), sum(clook_t)
        faster = "clook" if tc < tf else "fifo" if tf < tc else "same"

        def table(order_, times) -> str:
            return ", ".join(f"{b}: {t:.2f}" for b, t in zip(order_, times))

        return [
            Question("q1", "The order C-LOOK serves the reads?", order, kind="list", form="block numbers",
                     explanation=(f"from the head at {start + 1} C-LOOK sweeps up through the blocks above it, "
                                  + ("then wraps to the lowest waiting block and sweeps up again." if wraps else
                                     "and every block is above it: no wrap."))),
            Question("q2", "Total seek distance in blocks, FIFO then C-LOOK?", [distance(start, blocks), distance(start, order)],
                     kind="list", form="FIFO,C-LOOK",
                     explanation="C-LOOK moves one way (plus one jump back when it wraps); FIFO goes back and forth."),
            Question("q3", "Which order finishes all reads first (fifo, clook or same)?", faster, kind="word",
                     explanation=(f"FIFO takes {tf:.2f} ms, C-LOOK {tc:.2f} ms. Shorter seeks usually win, but "
                                  "rotational latency is part of every read and the order changes where on the track "
                                  "the head arrives.")),
            Question("q4", "FIFO's total time in ms (within 10 %)?", round(tf, 3), kind="float", tolerance=round(tf * 0.1, 3),
                     explanation="per read (block: ms): " + table(blocks, fifo_t)),
            Question("q5", "C-LOOK's total time in ms (within 10 %)?", round(tc, 3), kind="float", tolerance=round(tc * 0.1, 3),
                     explanation="per read (block: ms): " + table(order, clook_t)
                                 + f". `vraid models` lists {model}'s seek times and rpm."),
        ]


LAB = DiskTimingLab(name="disk-timing", title="Disk timing: a request sequence under FIFO and C-LOOK on the hdd model",
                    seeds=["003"])
