"""The stripe directory: dynamic placement of logical strips (seed 004, Hua, Vu & Hu, section 2.1).

A :class:`StripeDirectory` is a :class:`~vraid.core.mapping.Mapping` whose answers come
from a table instead of the geometry's arithmetic. Its unit is one *strip* (``u``
blocks on one member; the paper's "block" with ``u = 1``): logical strip ``L`` holds
logical blocks ``L*u .. L*u+u-1`` and lives in one *slot*, a (physical stripe,
member) pair. Stripes stay physical (the mapping contract): stripe ``s`` is row ``s``
of strips on every member; the directory moves strips between stripes, never a stripe.

Every slot is in one of four states:

* ``LIVE``: holds the current data of the logical strip :meth:`owner` names;
* ``DIRTY``: holds an old copy (the block was updated elsewhere, or sits updated in a
  write buffer); its content still counts in the stripe's parity;
* ``FREE``: holds nothing; it counts as zeros in the parity (the paper recalculates
  the parity when the dirty blocks of a stripe are freed, section 2.2 step 3);
* ``PARITY``: the stripe's parity member.

A stripe is *free* when every data slot is free (its parity member is then chosen
anew by the next large write: parity rotates per new stripe), *partially free* (a PFS)
when some are, *full* otherwise. The last ``hot`` stripes form the *hot region*
(section 2.2); the rest is cold.

The directory changes only through :meth:`apply` of one of the steps below (plain
frozen data that the placement policies return and the journal stores, see
:mod:`vraid.core.directory_format`):

* :class:`Dirty` ``(strip)``: the on-disk copy of ``strip`` is stale (multibuffering
  marks it when the update enters the buffer); :meth:`locate` still names it until the
  cleaner recycles that slot; from then on the strip's only copy is in the buffer (its
  location is ``NOWHERE`` and :meth:`locate` raises LookupError) until a stripe write
  places it again;
* :class:`StripeWrite` ``(kind, stripe, parity, slots)``: a large write (``LW``, into a
  free stripe, ``parity`` chosen) or a partial write (``PW``, into free slots of a PFS,
  ``parity`` its own); each written strip's previous slot becomes DIRTY (if LIVE);
* :class:`Swap` ``(stripe, member, partner)``: the free-stripe generator moves the
  strip at (``stripe``, ``member``) into the DIRTY slot (``partner``, ``member``); the
  victim's slot becomes DIRTY;
* :class:`Release` ``(stripe)``: the stripe's DIRTY slots become FREE (a free stripe
  when none stays LIVE);
* :class:`Forget` ``(stripe, member)``: the DIRTY slot's stale copy is given up (its
  strip's only copy is in a buffer, location ``NOWHERE``); the slot stays DIRTY. The
  engine's own step, never a policy's: it journals it before overwriting such a slot, so
  that a directory recovered after a crash never names a slot whose content is gone
  (:mod:`vraid.engine.placement.directory_store`).

A slot a strip may move to is always on the same member (its *home*) unless the
directory was made with ``migrate=True`` (DPSR, where blocks move between disks).

A fresh directory (:meth:`fresh`) is the static layout of the geometry for the first
``logical_stripes`` stripes, the remaining ``spare`` stripes free: with no spare it
answers every question as :class:`~vraid.core.mapping.StaticMapping` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

from .geometry import BlockAddress, Extent, Geometry

#: slot states
FREE, PARITY, LIVE, DIRTY = 0, 1, 2, 3
STATE_NAMES = {FREE: "free", PARITY: "parity", LIVE: "live", DIRTY: "dirty"}
#: kinds of stripe write
LW, PW = "LW", "PW"
#: the location of a strip whose only current copy is in a write buffer
NOWHERE = (-1, -1)


@dataclass(frozen=True)
class Dirty:
    strip: int


@dataclass(frozen=True)
class StripeWrite:
    kind: str  # LW or PW
    stripe: int
    parity: int
    slots: tuple[tuple[int, int], ...]  # (member, logical strip)

    @property
    def size(self) -> int:
        """S of the paper's Table 1: data strips written."""
        return len(self.slots)


@dataclass(frozen=True)
class Swap:
    stripe: int
    member: int
    partner: int


@dataclass(frozen=True)
class Release:
    stripe: int


@dataclass(frozen=True)
class Forget:
    stripe: int
    member: int


Step = Union[Dirty, StripeWrite, Swap, Release, Forget]


class DirectoryError(ValueError):
    """A step that does not fit the directory's state (a bug in the caller, never a user's)."""


class StripeDirectory:
    """Logical strip -> slot, each stripe's parity member and slot states (module docstring)."""

    def __init__(self, geometry: Geometry, strips: int, *, hot: int = 0, migrate: bool = False) -> None:
        if geometry.redundancy.parity_columns != 1:
            raise DirectoryError("a stripe directory needs one parity column per stripe (RAID-5)")
        if not 0 < strips <= geometry.stripes * geometry.data_disks:
            raise DirectoryError(f"{strips} logical strips do not fit {geometry.stripes} stripes")
        self.geometry = geometry
        self.redundancy = geometry.redundancy
        self.strips = strips
        self.migrate = migrate
        self.hot = max(0, min(hot, geometry.stripes))
        self._hot_from = geometry.stripes - self.hot
        n, s = geometry.ndisks, geometry.stripes
        #: logical strip -> (stripe, member)
        self.loc: list[tuple[int, int]] = [NOWHERE] * strips
        #: logical strip -> the member it belongs to (multibuffering never moves it off)
        self.homes: list[int] = [-1] * strips
        #: per stripe: member -> state / owner (the strip whose copy it holds, -1 none)
        self.parity: list[int] = [geometry.parity_disk(i) or 0 for i in range(s)]
        self.state: list[list[int]] = [[PARITY if m == self.parity[i] else FREE for m in range(n)] for i in range(s)]
        self.owner: list[list[int]] = [[-1] * n for _ in range(s)]
        #: the member the next large write puts its parity on (round robin, section 2.1)
        self.next_parity = 0
        #: steps applied since the directory was made or loaded (the journal's sequence)
        self.seq = 0
        #: parity member -> its stripe's data members in column order, as the geometry's layout
        #: orders them (a fresh directory answers as the static layout)
        self._order: dict[int, tuple[int, ...]] = {}
        for t in range(n):
            self._order.setdefault(geometry.parity_disk(t) or 0, geometry.data_disks_of(t))
        self._kof = {p: {m: k for k, m in enumerate(order)} for p, order in self._order.items()}
        self._index()

    def _index(self) -> None:
        """The derived indexes (counts, free stripes, dirty slots per member) from ``state``."""
        n = self.geometry.ndisks
        self.live_count = [row.count(LIVE) for row in self.state]
        self.free_count = [row.count(FREE) for row in self.state]
        #: stripes with every data slot free
        self.free_stripes = {s for s, c in enumerate(self.free_count) if c == n - 1}
        #: member -> stripes with a DIRTY slot on it (the cleaner's partners)
        self.dirty_on: list[set[int]] = [set() for _ in range(n)]
        #: the same, hot region only (the cleaner looks there first)
        self.dirty_hot: list[set[int]] = [set() for _ in range(n)]
        for s, row in enumerate(self.state):
            for m, st in enumerate(row):
                if st == DIRTY:
                    self.dirty_on[m].add(s)
                    if self.is_hot(s):
                        self.dirty_hot[m].add(s)
        #: member -> stripes whose parity it holds (a member's data slots are the rest)
        self.parity_count = [self.parity.count(m) for m in range(n)]
        #: live count -> the stripes (not free) with that many LIVE slots (the cleaner's victims)
        self.by_live: list[set[int]] = [set() for _ in range(n)]
        for s, c in enumerate(self.live_count):
            if s not in self.free_stripes:
                self.by_live[c].add(s)

    def _set(self, s: int, m: int, new: int) -> None:
        """Slot (s, m) becomes ``new``, the indexes follow."""
        old = self.state[s][m]
        if old == new:
            return
        self.state[s][m] = new
        self.by_live[self.live_count[s]].discard(s)
        self.live_count[s] += (new == LIVE) - (old == LIVE)
        self.free_count[s] += (new == FREE) - (old == FREE)
        if old == DIRTY:
            self.dirty_on[m].discard(s)
            self.dirty_hot[m].discard(s)
        elif new == DIRTY:
            self.dirty_on[m].add(s)
            if s >= self._hot_from:
                self.dirty_hot[m].add(s)
        if self.free_count[s] == self.geometry.ndisks - 1:
            self.free_stripes.add(s)
        else:
            self.free_stripes.discard(s)
            self.by_live[self.live_count[s]].add(s)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def fresh(cls, geometry: Geometry, logical_stripes: int, *, hot: int = 0, migrate: bool = False) -> "StripeDirectory":
        """The static layout over the first ``logical_stripes`` stripes, the rest free."""
        d = cls(geometry, logical_stripes * geometry.data_disks, hot=hot, migrate=migrate)
        for L in range(d.strips):
            s, k = divmod(L, geometry.data_disks)
            m = geometry.data_disk(s, k)
            d.state[s][m], d.owner[s][m], d.loc[L], d.homes[L] = LIVE, L, (s, m), m
        d._index()
        d.next_parity = logical_stripes % geometry.ndisks
        return d

    def _put(self, s: int, m: int, L: int) -> None:
        self._set(s, m, LIVE)
        self.owner[s][m] = L
        self.loc[L] = (s, m)
        self.homes[L] = m

    def _drop_copy(self, s: int, m: int) -> None:
        """Slot (s, m) is overwritten or freed: a strip whose stale copy it was is now only in a buffer."""
        L = self.owner[s][m]
        if L >= 0 and self.loc[L] == (s, m):
            self.loc[L] = NOWHERE
        self.owner[s][m] = -1

    # -- the mapping contract ------------------------------------------------------------
    @property
    def stripes(self) -> int:
        return self.geometry.stripes

    @property
    def capacity(self) -> int:
        return self.strips * self.geometry.strip_size

    def columns(self, stripe: int) -> tuple[int, ...]:
        p = self.parity[stripe]
        return self._order[p] + (p,)

    def data_disk(self, stripe: int, k: int) -> int:
        return self._order[self.parity[stripe]][k]

    def parity_disks(self, stripe: int) -> tuple[int, ...]:
        return (self.parity[stripe],)

    def member_offset(self, stripe: int, row: int = 0) -> int:
        return self.geometry.member_offset(stripe, row)

    def column_offset(self, stripe: int, column: int, row: int = 0) -> int:
        """Every column at :meth:`member_offset`: a directory runs on one parity column (RAID-5),
        whose stripes hold one strip of each member (one lane)."""
        return self.geometry.member_offset(stripe, row)

    def lanes(self, stripe: int) -> tuple[int, ...]:
        return (0,) * self.geometry.ndisks

    def locate(self, block: int) -> BlockAddress:
        u = self.geometry.u
        L, row = divmod(block, u)
        s, m = self.loc[L]
        if s < 0:
            raise LookupError(f"logical block {block} is only in the write buffer (its old copy was recycled)")
        return BlockAddress(s, self._kof[self.parity[s]][m], row, m, s * u + row)

    def block_of(self, stripe: int, k: int, row: int) -> int:
        """The logical block at (stripe, data strip k, row).

        Raises:
            LookupError: the slot holds no logical strip's current copy (free, or an old copy).
        """
        m = self.data_disk(stripe, k)
        L = self.owner[stripe][m]
        if L < 0 or self.loc[L] != (stripe, m):
            raise LookupError(f"stripe {stripe} member {m} holds no logical block ({STATE_NAMES[self.state[stripe][m]]})")
        return L * self.geometry.u + row

    def extents(self, offset: int, length: int) -> Iterator[Extent]:
        """Host range -> pieces, one per run of logical strips contiguous in one stripe's data."""
        strip = self.geometry.strip_size
        pos, end = offset, offset + length
        cur: list[int] | None = None  # [stripe, start, length, host_offset]
        while pos < end:
            L, within = divmod(pos, strip)
            n = min(strip - within, end - pos)
            a = self.locate(L * self.geometry.u)
            start = a.strip * strip + within
            if cur is not None and cur[0] == a.stripe and cur[1] + cur[2] == start:
                cur[2] += n
            else:
                if cur is not None:
                    yield Extent(*cur)
                cur = [a.stripe, start, n, pos - offset]
            pos += n
        if cur is not None:
            yield Extent(*cur)

    # -- questions the policies ask -------------------------------------------------------
    def home(self, strip: int) -> int:
        """The member logical ``strip`` lives on (fixed unless ``migrate``)."""
        return self.homes[strip]

    def is_hot(self, stripe: int) -> bool:
        return stripe >= self._hot_from

    def is_free(self, stripe: int) -> bool:
        return stripe in self.free_stripes

    def free_members(self, stripe: int) -> list[int]:
        st = self.state[stripe]
        return [m for m in range(self.geometry.ndisks) if st[m] == FREE]

    def dirty_members(self, stripe: int) -> list[int]:
        st = self.state[stripe]
        return [m for m in range(self.geometry.ndisks) if st[m] == DIRTY]

    def live_members(self, stripe: int) -> list[int]:
        st = self.state[stripe]
        return [m for m in range(self.geometry.ndisks) if st[m] == LIVE]

    def named(self, stripe: int, member: int) -> int:
        """The strip whose stale copy DIRTY slot (``stripe``, ``member``) is, still named by
        :meth:`locate` (its update sits in a buffer); -1 when none."""
        if self.state[stripe][member] != DIRTY:
            return -1
        L = self.owner[stripe][member]
        return L if L >= 0 and self.loc[L] == (stripe, member) else -1

    def is_dirty(self, strip: int) -> bool:
        s, m = self.loc[strip]
        return s < 0 or self.state[s][m] == DIRTY

    def snapshot(self) -> tuple:
        """Everything a replay must reproduce (equality of two directories)."""
        return (tuple(self.loc), tuple(self.homes), tuple(map(tuple, self.state)), tuple(self.parity), self.next_parity,
                self.hot, self.strips, self.migrate)

    def check(self) -> None:
        """The invariants (tests): every strip in one slot, counts and states agree."""
        n = self.geometry.ndisks
        for L, (s, m) in enumerate(self.loc):
            if s < 0:
                continue
            assert self.owner[s][m] == L and self.state[s][m] in (LIVE, DIRTY), (L, s, m)
        for s in range(self.stripes):
            st = self.state[s]
            assert st.count(PARITY) == 1 and st[self.parity[s]] == PARITY, s
            assert self.parity_count[self.parity[s]] == self.parity.count(self.parity[s]), s
            assert self.live_count[s] == st.count(LIVE) and self.free_count[s] == st.count(FREE), s
            assert (s in self.free_stripes) == (st.count(FREE) == n - 1), s
            for m in range(n):
                assert (s in self.dirty_on[m]) == (st[m] == DIRTY), (s, m)
                assert (s in self.dirty_hot[m]) == (st[m] == DIRTY and self.is_hot(s)), (s, m)
            for c in range(n):
                assert (s in self.by_live[c]) == (c == self.live_count[s] and s not in self.free_stripes), (s, c)
            for m in range(n):
                if st[m] == LIVE:
                    assert self.loc[self.owner[s][m]] == (s, m)

    # -- changes ---------------------------------------------------------------------------
    def apply(self, step: Step) -> None:
        """Make ``step`` (the engine calls this after the step's I/O is done).

        Raises:
            DirectoryError: a step that does not fit the state (nothing changed then).
        """
        self.check_step(step)
        if isinstance(step, Dirty):
            s, m = self.loc[step.strip]
            if s >= 0 and self.state[s][m] == LIVE:
                self._set(s, m, DIRTY)
        elif isinstance(step, StripeWrite):
            self._write(step)
        elif isinstance(step, Swap):
            self._swap(step)
        elif isinstance(step, Release):
            self._release(step.stripe)
        elif isinstance(step, Forget):
            self._drop_copy(step.stripe, step.member)
        self.seq += 1

    def check_step(self, step: Step) -> None:
        """Raise :class:`DirectoryError` if ``step`` does not fit the state; change nothing.

        The engine asks before it does a step's I/O, so a wrong step never overwrites a slot.
        """
        if isinstance(step, Dirty):
            if not 0 <= step.strip < self.strips:
                raise DirectoryError(f"{step}: strip {step.strip} is not a logical strip")
        elif isinstance(step, StripeWrite):
            self._check_write(step)
        elif isinstance(step, Swap):
            v, p, m = step.stripe, step.partner, step.member
            if not (0 <= v < self.stripes and 0 <= p < self.stripes and 0 <= m < self.geometry.ndisks):
                raise DirectoryError(f"{step}: no such stripe or member")
            if self.state[v][m] != LIVE or self.state[p][m] != DIRTY or v == p:
                raise DirectoryError(f"{step}: moves a live slot into a dirty slot of another stripe")
        elif isinstance(step, Release):
            if not 0 <= step.stripe < self.stripes:
                raise DirectoryError(f"{step}: no such stripe")
        elif isinstance(step, Forget):
            s, m = step.stripe, step.member
            if not (0 <= s < self.stripes and 0 <= m < self.geometry.ndisks) or self.state[s][m] != DIRTY:
                raise DirectoryError(f"{step}: forgets the copy of a slot that is not dirty")
        else:
            raise DirectoryError(f"unknown step {step!r}")

    def _check_write(self, w: StripeWrite) -> None:
        n = self.geometry.ndisks
        if not 0 <= w.stripe < self.stripes:
            raise DirectoryError(f"{w}: no such stripe")
        st = self.state[w.stripe]
        members = [m for m, _ in w.slots]
        if len(set(members)) != len(members) or not members or w.parity in members or not 0 <= w.parity < n:
            raise DirectoryError(f"{w}: members must be distinct and not the parity member")
        if w.kind == LW:
            if not self.is_free(w.stripe):
                raise DirectoryError(f"{w}: a large write needs a free stripe")
        elif w.kind == PW:
            if w.parity != self.parity[w.stripe] or any(st[m] != FREE for m in members):
                raise DirectoryError(f"{w}: a partial write fills free slots of the stripe, keeping its parity")
        else:
            raise DirectoryError(f"{w}: kind is LW or PW")
        for m, L in w.slots:
            if not 0 <= L < self.strips:
                raise DirectoryError(f"{w}: strip {L} is not a logical strip")
            if not self.migrate and self.homes[L] != m:
                raise DirectoryError(f"{w}: strip {L} lives on member {self.homes[L]}, not {m}")
        if len({L for _, L in w.slots}) != len(w.slots):
            raise DirectoryError(f"{w}: a strip written twice")

    def _write(self, w: StripeWrite) -> None:
        n = self.geometry.ndisks
        if w.kind == LW:
            old = self.parity[w.stripe]
            self._set(w.stripe, old, FREE)
            self._set(w.stripe, w.parity, PARITY)
            self.parity_count[old] -= 1
            self.parity_count[w.parity] += 1
            self.parity[w.stripe] = w.parity
            self.next_parity = (w.parity + 1) % n
        for m, L in w.slots:
            s0, m0 = self.loc[L]
            if s0 >= 0 and self.state[s0][m0] == LIVE:
                self._set(s0, m0, DIRTY)
            self._put(w.stripe, m, L)

    def _swap(self, sw: Swap) -> None:
        v, p, m = sw.stripe, sw.partner, sw.member
        L = self.owner[v][m]
        self._set(v, m, DIRTY)
        self._drop_copy(p, m)
        self._put(p, m, L)

    def _release(self, s: int) -> None:
        st = self.state[s]
        for m in range(self.geometry.ndisks):
            if st[m] == DIRTY:
                self._drop_copy(s, m)
                self._set(s, m, FREE)

    def __repr__(self) -> str:
        free = sum(self.is_free(s) for s in range(self.stripes))
        return f"StripeDirectory({self.strips} strips, {self.stripes} stripes, {free} free, hot {self.hot})"
