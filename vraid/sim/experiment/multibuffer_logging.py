"""Data Logging and Parity Logging, counted as seed 004's simulator counts (Hua, Vu & Hu, sec. 1).

Seed 004 compares multibuffering with the two log-based answers to RAID-5's small-write
problem in words only (sec. 1 and 5): they "can do no more than floor((n+1)/2) blocks
simultaneously" where multibuffering's large write puts n-1, and DPSR is "twice more
efficient than the log-based approach". These are counting models of the two schemes as
seed 004's section 1 describes them, run on the same workload and counted by the same rule
as :mod:`.multibuffer_sim` (a request costs as many concurrent accesses as its busiest
member has blocks to read, plus as many as its busiest member has blocks to write; one
block per member per access). They are not engine policies: nothing here places data.

* **Data Logging** (Gabber & Korth, ICDE 1998, as sec. 1 says): a block not yet in the log
  costs a read of its old value, then a write in place and a write of its old and new
  values to the log (3 I/Os); a block with a log entry costs the write in place and the
  write of its new value to its entry (2 concurrent writes). With the log full, a block
  without an entry takes the RAID-5 small write (sec. 1: "graceful" degradation). Parity
  is brought up to date from the log when it is full: the *cleaning*, counted apart
  (``background``): read each touched stripe's parity and the log's entries, write the
  parity.
* **Parity Logging** (Stodolsky & Gibson, ISCA 1993, as sec. 1 says): a write reads the
  block's old value and writes the new one in place (the parity-update image, old XOR new,
  goes to a fault-tolerant buffer, free); each time the buffer holds ``buffer`` images,
  they are appended to the log. When the log is full it is cleaned (counted apart): read
  the touched stripes' parity and the whole log, write the parity. Updates wait during
  the cleaning (sec. 1); in a count without time that costs nothing more.

Where vraid chooses (the paper gives no numbers for either scheme), and why:

* the log is distributed over all the members (sec. 1, of Parity Logging: "the log and
  parity areas may be distributed across all disks to balance the load"), for both
  schemes: a log write goes to the member, other than the block's own, with the fewest
  writes so far in the request (ties: the next member round-robin), the placement most
  favourable to the logging schemes. A dedicated log disk would serialise every logged
  write (ablation ``log_disk``);
* the log holds ``log_blocks`` blocks, by default the space multibuffering gets for its
  spare stripes (5 %, about 500 blocks), and Parity Logging's buffer is multibuffering's
  100 blocks of NVRAM: the same extra space and memory for every scheme;
* a Data Logging entry (old and new values) is one record on one member, written and read
  as one I/O, as sec. 1 counts it ("three I/O operations"); it takes two blocks of the log's
  space. An append of ``k`` Parity Logging images costs the log's members ``k`` block
  writes spread evenly (the one-block-per-member rule);
* the cleaning reads only the stripes the log touched (the paper's Parity Logging reads a
  whole region's parity), again the cheaper choice for the logging schemes.
"""

from __future__ import annotations

from typing import Any

#: the schemes of this module, as :func:`.multibuffer_sim.run_scheme` names them
LOGGING = ("data-logging", "parity-logging")


def small_write_io(d: Any, strips: list[int], n: int, reads: list[int], writes: list[int]) -> None:
    """Add RAID-5 small writes of ``strips`` (at their current slots) to the per-member
    ``reads`` and ``writes``: per stripe, read-modify-write or reconstruct-write,
    whichever does fewer I/Os."""
    by_stripe: dict[int, list[int]] = {}
    for L in strips:
        s, m = d.loc[L]
        by_stripe.setdefault(s, []).append(m)
    for s, ms in by_stripe.items():
        p = d.parity[s]
        if 2 * (len(ms) + 1) <= n:  # read-modify-write: old data and parity, then both written
            for m in ms + [p]:
                reads[m] += 1
                writes[m] += 1
        else:  # reconstruct-write: the other data, then data and parity
            for m in d.columns(s)[:-1]:
                if m not in ms:
                    reads[m] += 1
            for m in ms + [p]:
                writes[m] += 1


class _Log:
    """The log's members and fill, shared by both schemes."""

    def __init__(self, d: Any, n: int, log_blocks: int, log_disk: bool) -> None:
        self.d, self.n = d, n
        self.capacity = max(2, log_blocks)
        self.used = 0
        self.log_disk = log_disk  # ablation: one more member holds the whole log
        self.next = 0
        self.cleanings = 0

    def member(self, writes: list[int], home: int) -> int:
        """Where a log write goes: a dedicated log member, or the least-written other member."""
        if self.log_disk:
            return self.n
        best = None
        for k in range(self.n):
            m = (self.next + k) % self.n
            if m != home and (best is None or writes[m] < writes[best]):
                best = m
        self.next = (best + 1) % self.n
        return best

    def spread(self, writes: list[int], blocks: int) -> None:
        """``blocks`` log blocks written evenly over the log's members."""
        if self.log_disk:
            writes[self.n] += blocks
            return
        for k in range(blocks):
            writes[(self.next + k) % self.n] += 1
        self.next = (self.next + blocks) % self.n

    def clean(self, stripes: set[int], log_read: int) -> int:
        """Accesses of a cleaning: read each stripe's parity and ``log_read`` log blocks,
        then write the parity."""
        reads, writes = [0] * (self.n + 1), [0] * (self.n + 1)
        for s in stripes:
            reads[self.d.parity[s]] += 1
            writes[self.d.parity[s]] += 1
        self.spread(reads, log_read)
        self.used = 0
        self.cleanings += 1
        return max(reads) + max(writes)


class DataLogging:
    """Seed 004 sec. 1's Data Logging, counted (see the module's docstring)."""

    def __init__(self, d: Any, n: int, *, log_blocks: int, log_disk: bool = False) -> None:
        self.log = _Log(d, n, log_blocks, log_disk)
        self.d, self.n = d, n
        self.entries: set[int] = set()  # blocks with a log entry (old and new values)
        self.fallbacks = 0  # blocks written by the RAID-5 small write (log full)

    def write(self, strips: list[int]) -> tuple[int, int]:
        """One write request: ``(accesses, background accesses)``."""
        n, log = self.n, self.log
        reads, writes = [0] * (n + 1), [0] * (n + 1)
        full: list[int] = []
        for L in strips:
            home = self.d.loc[L][1]
            if L in self.entries:  # write in place and the new value into its entry, at once
                writes[home] += 1
                writes[log.member(writes, home)] += 1
            elif log.used + 2 <= log.capacity:  # read the old value; write it in place, old + new to the log
                self.entries.add(L)
                log.used += 2
                reads[home] += 1
                writes[home] += 1
                writes[log.member(writes, home)] += 1  # old + new: one record, one I/O (sec. 1)
            else:
                full.append(L)
        if full:  # the log is full: RAID-5's small write for blocks without an entry
            self.fallbacks += len(full)
            small_write_io(self.d, full, n, reads, writes)
        cost = max(reads) + max(writes)
        background = 0
        if log.used + 2 > log.capacity:  # full: bring the parity up to date, empty the log
            background = log.clean({self.d.loc[L][0] for L in self.entries}, len(self.entries))
            self.entries.clear()
        return cost, background


class ParityLogging:
    """Seed 004 sec. 1's Parity Logging, counted (see the module's docstring)."""

    def __init__(self, d: Any, n: int, *, log_blocks: int, buffer: int, log_disk: bool = False) -> None:
        self.log = _Log(d, n, log_blocks, log_disk)
        self.d, self.n = d, n
        self.buffer = max(1, buffer)
        self.buffered: list[int] = []  # the stripe of each parity-update image in the fault-tolerant buffer
        self.stripes: set[int] = set()  # stripes with updates in the log

    def write(self, strips: list[int]) -> tuple[int, int]:
        """One write request: ``(accesses, background accesses)``."""
        n, log = self.n, self.log
        reads, writes = [0] * (n + 1), [0] * (n + 1)
        for L in strips:  # read the old value, write the new one in place; the image to the buffer
            s, home = self.d.loc[L]
            reads[home] += 1
            writes[home] += 1
            self.buffered.append(s)
        background = 0
        while len(self.buffered) >= self.buffer:  # a buffer's worth of images appended to the log
            log.spread(writes, self.buffer)
            log.used += self.buffer
            self.stripes.update(self.buffered[:self.buffer])
            del self.buffered[:self.buffer]
            if log.used + self.buffer > log.capacity:  # no room for the next append: clean
                background += log.clean(self.stripes, log.used)
                self.stripes.clear()
        return max(reads) + max(writes), background


def make(scheme: str, d: Any, n: int, *, log_blocks: int, buffer: int, log_disk: bool = False) -> Any:
    """The counting model of ``scheme`` (one of :data:`LOGGING`) over directory ``d``."""
    if scheme == "data-logging":
        return DataLogging(d, n, log_blocks=log_blocks, log_disk=log_disk)
    return ParityLogging(d, n, log_blocks=log_blocks, buffer=buffer, log_disk=log_disk)


__all__ = ["DataLogging", "LOGGING", "ParityLogging", "make", "small_write_io"]
