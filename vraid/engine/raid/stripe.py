"""A stripe in memory, and the execution of a :class:`~vraid.core.rxw.Plan` on it.

The data is a numpy array of shape (data strips, rows, block) in rxw-matrix
column order (data strips in logical order; the check columns, an array of
(parity columns, rows, block), come last: P, then Q where a scheme has one),
so a run of rows in one column is one contiguous slice: a member request
reads into it or writes from it with no copy, and the data
flattened is the stripe's data in logical order. Parity is computed by the
array's redundancy scheme (:mod:`vraid.core.redundancy`) on whole runs of
rows at once (FUSE-NOTES: numpy over whole strips, never block by block);
which member and offset a column's rows are at is the mapping's
(:mod:`vraid.core.mapping`).

Execution follows the matrix: all reads (``r`` into the buffer, ``t`` into a
temporary buffer), then the parity per row (RCW: every check column generated
from all data blocks; RMW: every check column updated with the old and new
data of the dirty blocks), then all writes. How many check columns a plan has
is ``plan.checks`` (:class:`~vraid.core.rxw.Plan`), the redundancy's count.
"""

from __future__ import annotations

import functools

import numpy as np

from vraid.core.geometry import Geometry
from vraid.core.mapping import Mapping, mapping_of
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Request
from vraid.core.rxw import Plan


class StripeBuffer:
    """Blocks of one stripe (or of rows ``row0 .. row0+rows-1`` of it) in memory.

    ``data`` has shape (data strips, rows, block): a cache unit hands its own
    buffer in, so a destage reads into and writes from the cache itself.
    ``checks`` has shape (parity columns, rows, block), None without parity;
    ``parity`` is its first column, (rows, block) (RAID-5's only one).
    ``layout`` is the array's mapping (a bare geometry means its static one).
    """

    def __init__(self, layout: Geometry | Mapping, stripe: int, *, row0: int = 0, rows: int | None = None, data: np.ndarray | None = None,
                 checks: np.ndarray | None = None) -> None:
        self.mapping = mapping = mapping_of(layout)
        g = self.geometry = mapping.geometry
        self.redundancy = mapping.redundancy
        self.stripe = stripe
        self.row0 = row0
        self.rows = g.u if rows is None else rows
        self.columns = mapping.columns(stripe)
        #: the weight order of the data in the checks (RAID-6's syndrome slots; None: logical)
        self.slots = g.slots(stripe)
        self.nd = g.data_disks
        self.data = data if data is not None else np.empty((self.nd, self.rows, g.block_size), dtype=np.uint8)
        pc = self.redundancy.parity_columns
        if checks is None and pc:
            checks = np.empty((pc, self.rows, g.block_size), dtype=np.uint8)
        self.checks = checks if pc else None
        self.parity = self.checks[0] if self.checks is not None else None
        self.temp: np.ndarray | None = None
        #: the memory ``temp`` takes when a plan needs it (a pooled buffer's own; None: new)
        self._temp_store: np.ndarray | None = None
        #: byte views of data and checks when both are C-contiguous (() when not; None: not made yet)
        self._flat: tuple[memoryview, ...] | None = None
        self._tflat: tuple[np.ndarray, tuple[memoryview, ...]] | None = None  # the same for temp

    @property
    def flat(self) -> np.ndarray:
        """The data strips flattened: the bytes of these rows in logical order
        when they are a whole stripe (a view)."""
        return self.data.reshape(-1)

    def column(self, j: int) -> np.ndarray:
        return self.data[j] if j < self.nd else self.checks[j - self.nd]  # type: ignore[index]

    def view(self, column: int, first_row: int, rows: int, *, temp: bool = False) -> memoryview:
        if not temp:
            flat = self._flat
            if flat is None:
                flat = self._flat = _flat_views(self.data, self.checks)
            if flat:  # contiguous buffers: a slice of one byte view, no numpy object per request
                nd = self.nd
                source = self.data if column < nd else self.checks
                col_rows, block = source.shape[1], source.shape[2]  # type: ignore[union-attr]
                if 0 <= first_row and first_row + rows <= col_rows:
                    start = ((column if column < nd else column - nd) * col_rows + first_row) * block
                    return flat[column >= nd][start : start + rows * block]
        else:
            tmp = self._temp()
            tflat = self._tflat
            if tflat is None or tflat[0] is not tmp:
                tflat = self._tflat = (tmp, _flat_views(tmp, None))
            if tflat[1] and 0 <= first_row and first_row + rows <= tmp.shape[1]:
                block = tmp.shape[2]
                start = (column * tmp.shape[1] + first_row) * block
                return tflat[1][0][start : start + rows * block]
        target = self._temp()[column] if temp else self.column(column)
        return memoryview(target[first_row : first_row + rows]).cast("B")

    def _temp(self) -> np.ndarray:
        if self.temp is None:
            store = self._temp_store
            self.temp = store if store is not None else np.empty_like(self.data)
        return self.temp

    def request(self, column: int, op: str, first_row: int, rows: int, *, temp: bool = False, priority: int = 0) -> Request:
        return Request(self.columns[column], op, self.mapping.column_offset(self.stripe, column, self.row0 + first_row),
                       rows * self.geometry.block_size, self.view(column, first_row, rows, temp=temp), priority)


class BufferPool:
    """Whole-stripe buffers (data, checks and the temporary ``t`` memory) that write-through
    writes reuse, so that a small write does not allocate and fault in a stripe's worth of
    fresh memory (about 320 KiB with 64 KiB strips on five disks) each time.

    :meth:`take` hands out a :class:`StripeBuffer` of a whole stripe; :meth:`give` takes it
    back once nothing can touch its memory any more: only after every member request that
    points into it has finished (a write that failed or was cancelled keeps its buffer,
    which is then simply dropped). At most ``limit`` free buffers are kept."""

    __slots__ = ("mapping", "limit", "_free")

    def __init__(self, mapping: Mapping, limit: int = 8) -> None:
        self.mapping = mapping
        self.limit = limit
        self._free: list[tuple] = []  # (data, checks, temp, flat views, temp's flat views)

    def take(self, stripe: int) -> StripeBuffer:
        if not self._free:
            buf = StripeBuffer(self.mapping, stripe)
            buf._temp_store = np.empty_like(buf.data)
            return buf
        data, checks, temp, flat, tflat = self._free.pop()
        buf = StripeBuffer(self.mapping, stripe, data=data, checks=checks)
        buf._temp_store = temp
        buf._flat = flat
        buf._tflat = tflat
        return buf

    def give(self, buf: StripeBuffer) -> None:
        if len(self._free) < self.limit and buf._temp_store is not None:
            self._free.append((buf.data, buf.checks, buf._temp_store, buf._flat, buf._tflat))


def _flat_views(data: np.ndarray, checks: np.ndarray | None) -> tuple[memoryview, ...]:
    """(data, checks) as flat byte views, or () if either is not C-contiguous."""
    try:
        flat = memoryview(data).cast("B")
        return (flat, memoryview(checks).cast("B") if checks is not None else flat[:0])
    except TypeError:  # not C-contiguous (or empty): views made per request instead
        return ()


async def execute(plan: Plan, buf: StripeBuffer, members: Members, *, priority: int = 0) -> None:
    """Run ``plan.transformed`` on ``buf``: reads, parity, writes (seed 000 Fig. 7(e))."""
    m = plan.transformed
    spec = _spec(plan)
    reads: list[Request] = []
    scatter: list[tuple[int, int, int, memoryview]] = []
    for column, first_row, rows, kind in spec.reads:
        if kind is not None:  # all r (into the cache) or all t (into temp)
            reads.append(buf.request(column, "read", first_row, rows, temp=kind, priority=priority))
        else:  # a CT-merged run of r and t: read once, then scatter per row
            scratch = memoryview(bytearray(rows * buf.geometry.block_size))
            offset = buf.mapping.column_offset(buf.stripe, column, buf.row0 + first_row)
            r = Request(buf.columns[column], "read", offset, len(scratch), scratch, priority)
            reads.append(r)
            scatter.append((column, first_row, rows, scratch))
    await members.run(reads)
    for column, first_row, rows, scratch in scatter:
        _scatter(buf, m, column, first_row, rows, scratch)
    if plan.checks and not members.no_data:  # metadata-only simulation: no bytes to XOR
        _parity(spec, buf)
    buf.temp = None  # t's temporary memory is released once the parity is done (seed 000 III-C) ...
    if buf._temp_store is None:  # ... unless it is a pooled buffer's own (kept, with its views)
        buf._tflat = None
    writes = [buf.request(column, "write", first_row, rows, priority=priority) for column, first_row, rows in spec.writes]
    await members.run(writes)


class _Spec:
    """What :func:`execute` derives from a plan's matrix and requests, worked out once per
    matrix: the reads (column, first row, rows, into temp? or None: scatter), the writes,
    and the parity rows (RCW rows as a slice or list, RMW rows with their dirty columns)."""

    __slots__ = ("matrix", "requests", "reads", "writes", "rcw", "rmw", "one_column", "full")

    def __init__(self, plan: Plan, nd: int) -> None:
        m = self.matrix = plan.transformed
        self.requests = plan.requests
        self.reads: list[tuple[int, int, int, bool | None]] = []
        self.writes: list[tuple[int, int, int]] = []
        for req in plan.requests:
            if req.op != "read":
                self.writes.append((req.column, req.first_row, req.rows))
                continue
            cells = [m[i][req.column] for i in range(req.first_row, req.first_row + req.rows)]
            kinds = {"t" in c for c in cells}
            self.reads.append((req.column, req.first_row, req.rows, kinds.pop() if len(kinds) == 1 else None))
        rcw_rows, rmw_rows = [], []
        checks = plan.checks
        if checks:
            for i, row in enumerate(m):
                kind = _row_kind(row, nd)
                if kind is None:
                    continue
                (rcw_rows if kind == () else rmw_rows).append((i, kind))
        self.rcw = _rows([i for i, _ in rcw_rows]) if rcw_rows else None
        self.rmw = [(i, list(dirty), dirty) for i, dirty in rmw_rows]
        self.one_column = _one_column(self, nd) if checks == 1 else None
        rows = len(m)
        width = nd + checks
        full = not self.reads and sorted(self.writes) == [(j, 0, rows) for j in range(width)]
        if checks:
            full = full and self.rcw == slice(0, rows) and not self.rmw
        self.full = tuple(j for j, _, _ in self.writes) if full else None


def _one_column(spec: _Spec, nd: int) -> tuple[int, int, int, bool, bool] | None:
    """``(k, first_row, rows, parity read first, parity written first)`` when the plan is the
    read-modify-write of consecutive rows of one data column ``k`` and nothing else (seed 000
    II-A's small write: read the old data into t and the old parity, then write both; one
    parity column); None for any other plan."""
    if spec.rcw is not None or not spec.rmw:
        return None
    columns = {tuple(cols) for _, cols, _ in spec.rmw}  # the data columns each RMW row XORs out
    if len(columns) != 1 or len(next(iter(columns))) != 1:
        return None
    ((k,),) = columns
    rows = [i for i, _, _ in spec.rmw]
    first, n = rows[0], len(rows)
    if rows != list(range(first, first + n)):
        return None
    if len(spec.reads) != 2 or set(spec.reads) != {(k, first, n, True), (nd, first, n, False)}:
        return None
    if len(spec.writes) != 2 or set(spec.writes) != {(k, first, n), (nd, first, n)}:
        return None
    return k, first, n, spec.reads[0][0] == nd, spec.writes[0][0] == nd


def full_stripe_writes(plan: Plan) -> tuple[int, ...] | None:
    """The columns ``plan`` writes, in its order, when it reads nothing and writes every
    row of every column (a full-stripe write: seed 000 II-A, parity generated from the new
    data alone); None for any other plan (worked out once per matrix)."""
    return _spec(plan).full


def one_column_rmw(plan: Plan) -> tuple[int, int, int, bool, bool] | None:
    """What :func:`_one_column` says of ``plan`` (worked out once per matrix)."""
    return _spec(plan).one_column


#: id(plan.transformed) -> its _Spec; an entry holds its matrix, so the id stays its own
_SPECS: dict[int, _Spec] = {}
_SPECS_MAX = 4096


def _spec(plan: Plan, nd: int | None = None) -> _Spec:
    m = plan.transformed
    spec = _SPECS.get(id(m))
    if spec is not None and spec.matrix is m and spec.requests is plan.requests:
        return spec
    if len(_SPECS) >= _SPECS_MAX:
        _SPECS.clear()
    spec = _SPECS[id(m)] = _Spec(plan, _data_columns(plan) if nd is None else nd)
    return spec


def _data_columns(plan: Plan) -> int:
    """Data columns of the matrix: all but the ``plan.checks`` check columns."""
    width = len(plan.transformed[0]) if plan.transformed else len(plan.columns)
    return width - plan.checks


def _scatter(buf: StripeBuffer, m, column: int, first_row: int, rows: int, scratch: memoryview) -> None:
    block = buf.geometry.block_size
    src = np.frombuffer(scratch, dtype=np.uint8).reshape(rows, block)
    for n in range(rows):
        i = first_row + n
        cell = m[i][column]
        if "t" in cell:
            buf._temp()[column, i] = src[n]
        elif "r" in cell:
            buf.column(column)[i] = src[n]


def writes_of(plan: Plan) -> bool:
    """Whether executing ``plan`` writes to any member (worked out once per matrix)."""
    return bool(_spec(plan).writes)


def compute_parity(plan: Plan, buf: StripeBuffer) -> None:
    """The parity step of every row: RCW rows generate parity, RMW rows update it."""
    _parity(_spec(plan, buf.nd), buf)


def _parity(spec: _Spec, buf: StripeBuffer) -> None:
    data, checks, scheme, slots = buf.data, buf.checks, buf.redundancy, buf.slots
    assert checks is not None
    sel = spec.rcw
    if sel is not None:
        if isinstance(sel, slice):
            scheme.generate(data[:, sel], out=checks[:, sel], slots=slots)  # a view: in place
        else:
            checks[:, sel] = scheme.generate(data[:, sel], slots=slots)
    if spec.rmw:
        temp = buf._temp()
        for i, cols, dirty in spec.rmw:
            if len(cols) == 1:  # one dirty block in the row: views, no fancy-index copies
                k = cols[0]
                scheme.update(checks[:, i], temp[k : k + 1, i], data[k : k + 1, i], dirty, slots=slots)
            else:
                scheme.update(checks[:, i], temp[cols, i], data[cols, i], dirty, slots=slots)


@functools.lru_cache(maxsize=4096)
def _row_kind(row: tuple, nd: int) -> tuple[int, ...] | None:
    """None: no parity update; (): RCW (the checks generated from the data);
    otherwise RMW, with the columns whose old data is XORed out (``xx``).
    Any check column (``nd`` on) holding ``_`` makes a row RCW: a degraded plan
    leaves a missing check's cell empty."""
    dirty = tuple(j for j in range(nd) if "xx" in row[j])
    if dirty:
        return dirty
    return () if any("_" in c for c in row[nd:]) else None


def _rows(rows: list[int]) -> slice | list[int]:
    """A slice when the rows are one run (a view, no copy), else the list."""
    if rows[-1] - rows[0] + 1 == len(rows):
        return slice(rows[0], rows[-1] + 1)
    return rows
