"""Lab ``small-write``: member requests per host write, RAID-0 vs RAID-5, by write size.

RAID basics (Patterson, Gibson and Katz's small-write problem; seed 000 sec. II-A for the
cycles). RAID-0 writes each block once. RAID-5 must keep parity: a small write reads before it
writes (RCW reads the blocks it does not overwrite, RMW the old data and parity), one strip
costs a cycle per row, and only a write of a whole stripe (a full-stripe write) reads nothing.

The predictions come from a virtual-time :class:`~vraid.testing.session.Session` without a write
cache (write-through), counting its members' requests. With a mount (``--mount DIR``, and in
``--batch`` when run as root) the lab then creates a RAID-5 array, mounts it with vraid's own
mount code, writes through ``disk.img`` and reads the same counters from ``vraid status``
(the daemon's), which must agree. Everything it mounted is unmounted again, whatever happens.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

from .framework import Lab, Question, rng

BLOCK = 4096
DISK_SIZE = 24 << 20


def member_requests(g: Geometry, writes) -> list[tuple[int, int, int, int]]:
    """Per write-through host write (offset, length) in turn, on one array whose cache holds
    nothing: (member reads, member writes, bytes read, bytes written)."""
    def totals(s: Session) -> tuple[int, ...]:
        ms = s.status()["members"]
        return tuple(sum(m[k] for m in ms) for k in ("reads", "writes", "read_bytes", "write_bytes"))

    out = []
    with Session(EngineConfig(g)) as s:
        for offset, length in writes:
            before = totals(s)
            s.write(offset, os.urandom(length))
            out.append(tuple(a - b for a, b in zip(totals(s), before)))
    return out


class SmallWriteLab(Lab):
    def dealt(self, seed: int) -> tuple[int, int, int]:
        """(disks, strip blocks u, the block of the small write inside stripe 1)."""
        r = rng(self, seed)
        ndisks, u = r.choice((4, 5, 6)), r.choice((4, 16))
        return ndisks, u, r.randrange((ndisks - 1) * u)

    def geometry(self, seed: int, level: int) -> Geometry:
        ndisks, u, _ = self.dealt(seed)
        return Geometry.for_disk_size(level=level, ndisks=ndisks, disk_size=DISK_SIZE, strip_size=u * BLOCK)

    def writes(self, seed: int) -> dict[str, tuple[int, int]]:
        """Question key -> (offset, length) of the RAID-5 writes the mount part repeats."""
        g = self.geometry(seed, 5)
        _, u, block = self.dealt(seed)
        stripe = g.stripe_data_bytes
        return {"q2": (stripe + block * BLOCK, BLOCK), "q3": (2 * stripe, u * BLOCK), "q4": (3 * stripe, stripe)}

    def setting(self, seed: int) -> str:
        ndisks, u, block = self.dealt(seed)
        g = self.geometry(seed, 5)
        return (f"{ndisks} disks, strip {u * 4} KiB ({u} blocks of 4 KiB), no write cache (every host write goes "
                f"to the members at once), nothing cached. RAID-5 holds {g.data_disks * u} data blocks per stripe "
                f"({g.stripe_data_bytes >> 10} KiB). Count one member request per contiguous run a member reads or "
                "writes. On a mount the lab checks the RAID-5 answers against `vraid status` counters.")

    def questions(self, seed: int) -> list[Question]:
        ndisks, u, block = self.dealt(seed)
        r0, r5 = self.geometry(seed, 0), self.geometry(seed, 5)
        w = self.writes(seed)
        (small0,) = member_requests(r0, [w["q2"]])
        small, strip, full = member_requests(r5, [w[k] for k in ("q2", "q3", "q4")])
        row = ("rmw" if ndisks > 4 else "rcw")
        moved = (small[2] + small[3]) / BLOCK
        return [
            Question("q1", "RAID-0: member reads and writes for one 4 KiB write?", list(small0[:2]), kind="list",
                     form="reads,writes", explanation="RAID-0 has no parity: the block is written once where it lives."),
            Question("q2", f"RAID-5: member reads and writes for one 4 KiB write (block {block} of stripe 1)?",
                     list(small[:2]), kind="list", form="reads,writes",
                     explanation=(f"one dirty block (d = 1) and no clean one (c = 0) in its row of N = {ndisks} disks: "
                                  f"N - c = {ndisks} vs 2(1 + d) = 4, so "
                                  f"{row}: " + ("read old data and old parity, write both (2 + 2)" if row == "rmw" else
                                               f"read the {ndisks - 2} other data blocks, write data and parity")
                                  + ". The small-write penalty.")),
            Question("q3", f"RAID-5: member reads and writes for one whole strip ({u * 4} KiB, strip 0 of stripe 2)?",
                     list(strip[:2]), kind="list", form="reads,writes",
                     explanation=(f"{u} rows with one dirty block each, the same cycle in every row; consecutive rows "
                                  "of a column merge into one request, so the strip costs about what one block does, "
                                  "each request just longer.")),
            Question("q4", f"RAID-5: member reads and writes for one whole stripe ({r5.stripe_data_bytes >> 10} KiB, aligned)?",
                     list(full[:2]), kind="list", form="reads,writes",
                     explanation=f"a full-stripe write: parity from the new data alone, nothing to read; {ndisks} writes."),
            Question("q5", "RAID-5, the 4 KiB write: blocks moved to or from members per block written by the host?",
                     moved, kind="float", tolerance=0.01,
                     explanation=(f"{small[2] // BLOCK} blocks read + {small[3] // BLOCK} written for 1. The full stripe "
                                  f"moves {full[3] / r5.stripe_data_bytes:.3g} per host block ({ndisks}/{ndisks - 1}).")),
        ]

    def live(self, seed: int, workdir: Path, say: Callable[[str], None]) -> dict[str, Any]:
        """Create, mount, write through disk.img and read the daemon's counters; unmount always."""
        from contextlib import ExitStack

        from vraid.cli.status import gather
        from vraid.cli.umount import unmount
        from vraid.fuse.daemon import MountOptions, mount
        from vraid.ondisk.create import create

        array, mnt = workdir / "array", workdir / "mnt"
        mnt.mkdir(parents=True, exist_ok=True)
        g = self.geometry(seed, 5)
        create(array, g, DISK_SIZE, force=True, bitmap_chunk=0)
        say(f"$ vraid create {array} --disks {g.ndisks} --disk-size 24M --strip {g.strip_size >> 10}K --bitmap-chunk none")
        seen: dict[str, Any] = {}
        with ExitStack() as stack:
            say(f"$ vraid mount {array} {mnt} --cache none")
            mount(array, mnt, MountOptions(cache="none"))
            stack.callback(lambda: say(unmount(mnt)))
            image = mnt / "disk.img"
            for key, (offset, length) in self.writes(seed).items():
                before = gather(mnt)["members"]
                fd = os.open(image, os.O_WRONLY)
                try:
                    os.pwrite(fd, os.urandom(length), offset)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                after = gather(mnt)["members"]
                reads = sum(a["reads"] - b["reads"] for a, b in zip(after, before))
                writes = sum(a["writes"] - b["writes"] for a, b in zip(after, before))
                say(f"$ {dd_command(image, offset, length)}")  # pastes and runs: the same write
                say(f"  vraid status: {reads} member reads, {writes} member writes")
                seen[key] = [reads, writes]
        return seen


def dd_command(image: Any, offset: int, length: int) -> str:
    """The shell command that makes the write the lab made: ``length`` random bytes at byte
    ``offset`` of ``image``, in place (``conv=notrunc``: the image keeps its size) and synced."""
    if offset % length == 0:
        seek = f"seek={offset // length}"
    else:
        seek = f"seek={offset} oflag=seek_bytes"
    return f"dd if=/dev/urandom of={image} bs={length} count=1 {seek} conv=notrunc,fsync status=none"


LAB = SmallWriteLab(name="small-write", title="Small-write penalty: member requests per write, RAID-0 vs RAID-5",
                    seeds=[], mount=True)
