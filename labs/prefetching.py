"""Lab ``prefetching``: SEQP vs SASEQP request counts for a file placement, and MSP's SC sequence.

Seed 001 (Baek & Park, "Striping-aware sequential prefetching", IEEE TC 2009). Part one is
*independency loss* (sec. 3, Fig. 3/4): a file read block by block with a read-ahead window
ramping 1, 2, 4, ... blocks up to a maximum. SEQP lays windows across strip boundaries, so one
prefetch request becomes a member request on each strip it touches; SASEQP shrinks the ahead
window at the first strip boundary (Fig. 5), so each request is one member request. Seed 0 is
the paper's example: the 20-block file at B16..B35 on Fig. 1's array (strips of four blocks),
windows up to four blocks: SEQP 11 disk requests, SASEQP 7.

Part two is MSP (sec. 4, Fig. 7): the strip numbers a (semi)sequential block sequence touches,
the sequential counter SC after each strip change, and the step at which MSP starts reading
whole stripes ahead. Seed 0 is the paper's semisequential sequence (Fig. 6: data B16..B27,
metadata B0..B3). The SC values are what vraid's implementation of the pseudocode gives
(:class:`vraid.policies.prefetch.msp.MspPrefetch`); the paper prints another sequence, and the
explanation says where and why (as tests/test_prefetch_msp.py records).

Part three runs it (sec. 5, Fig. 8): N readers of their own files on the paper's RAID-0 of five
ST373454LC disks, host SEQP vs SASEQP in ``vraid sim`` (virtual time): the windows that cross a
strip, the member reads and the bandwidth, as the run's own metrics count them.

Every answer comes from vraid's code: the windows from the simulator's host read-ahead model
(:func:`readahead_windows`, the one place that names it; SEQP and SASEQP are host-side in the
paper), the member of each strip piece from
:meth:`vraid.core.geometry.Geometry.locate`, SC and the prefetched stripes from
:class:`MspPrefetch` itself, part three from :func:`vraid.sim.simulator.run_sim`.
"""

from __future__ import annotations

from dataclasses import dataclass

from vraid.core.geometry import Geometry
from vraid.core.redundancy import for_level
from vraid.policies.prefetch import HostRead, load_prefetch
from vraid.policies.prefetch.msp import MspPrefetch
from vraid.sim.host import ReadaheadSpec, file_windows

from .framework import Lab, Question, rng, show

BLOCK = 4096
#: part 3's disks: the paper's Fig. 8 drive
SIM_MODEL = "hdd:st373454lc"


def simulate(run: "SimRun", policy: str) -> dict:
    """Part 3 in the simulator (virtual time): the host read-ahead's and the array's numbers."""
    from vraid.sim.simulator import run_sim

    m = run_sim(run.config(policy)).metrics
    h = m["host_readahead"]
    return {"windows": h["windows"], "crossing": h["crossing_windows"], "shrunk": h["shrunk_windows"],
            "disk_reads": m["disk_read_requests"], "mb_s": h["file_mb_s"]}


def readahead_windows(policy: str, start: int, length: int, u: int, max_blocks: int) -> list[tuple[int, int]]:
    """Every request (first array block, blocks) ``policy`` (seqp or saseqp) makes to read the
    contiguous file of ``length`` blocks at array block ``start`` one block at a time, with a
    window ramping 1, 2, 4, ... up to ``max_blocks`` on strips of ``u`` blocks; the reader's own
    first read (the initial window of one block) is the first request.

    The paper's SEQP and SASEQP are host-side, so this is the simulator's host read-ahead model
    (:func:`vraid.sim.host.file_windows`, ``--host-readahead POLICY:max=...,init=4K``): the one
    place the lab names a model. The controller-level extension
    (:mod:`vraid.policies.prefetch.seqp`) gives the same windows for such a file (tested)."""
    spec = ReadaheadSpec(policy, max=max_blocks * BLOCK, init=BLOCK)
    return [(start + w.start, w.count)
            for w in file_windows(spec, length, 1, base_block=start, strip_pages=u, page=BLOCK)]


def controller_windows(policy: str, start: int, length: int, u: int, max_blocks: int) -> list[tuple[int, int]]:
    """The same read through the controller-level ``seqp``/``saseqp`` (an extension: block
    streams found by address), fed the file's reads; windows are cut at the file's end, which
    the controller does not know. Kept to show (and test) that both models agree here."""
    g = Geometry(0, 2, (start + length) // u + 2 * max_blocks // u + 4, BLOCK, u * BLOCK, "left-symmetric", 0)
    p = load_prefetch(f"{policy}:max_kb={max_blocks * BLOCK // 1024}", g)
    end = start + length
    windows = [(start, 1)]  # the first read: a miss of its own
    for b in range(start, end):
        for first, count in p.after_read(HostRead(b, 1, 1, 0, 0.0)):
            count = min(count, end - first)
            if count > 0:
                windows.append((first, count))
    return windows


def strips_of(first: int, count: int, u: int) -> list[int]:
    return list(range(first // u, (first + count - 1) // u + 1))


def semisequential(meta: int, data: int, length: int, every: int, u: int) -> list[int]:
    """Fig. 6's access pattern: one metadata block, then ``every`` data blocks, and again; the
    metadata blocks follow each other from ``meta`` inside its strip (wrapping at its end)."""
    base = meta - meta % u
    out: list[int] = []
    for i in range(0, length, every):
        out.append(base + (meta % u + i // every) % u)
        out += range(data + i, data + min(i + every, length))
    return out


def printed_reading(strips: list[int]) -> list[int]:
    """Fig. 7's SC lines read as the paper's printed sequence needs them: no previous strip at the
    start (SN_p = SN_pp = -1) and a decrement floored at 0 (tests/test_prefetch_msp.py checks
    this reproduces sec. 4's printed values). For the explanation only; the answers are vraid's."""
    sn_p = sn_pp = -1
    sc, out = 0, []
    for s in strips:
        if s == sn_p:
            continue
        sc = sc + 1 if s in (sn_p + 1, sn_pp) else max(0, sc - 1)
        sn_pp, sn_p = sn_p, s
        out.append(sc)
    return out


@dataclass(frozen=True)
class Dealt:
    geometry: Geometry
    start: int  # the file of part one
    length: int
    max_blocks: int
    blocks: tuple[int, ...]  # part two's accessed block sequence
    every: int
    sc_max: int
    sc_thresh: int
    sps_max: int
    sim: "SimRun"


@dataclass(frozen=True)
class SimRun:
    """Part 3: ``streams`` readers of their own contiguous files (``file_kib`` each, one after the
    other from offset 0), 4 KiB reads, on the paper's Fig. 8 array (RAID-0 of 5 ST373454LC)."""

    streams: int
    strip_kib: int
    file_kib: int
    max_kib: int

    @property
    def total(self) -> int:
        return self.streams * self.file_kib * 1024

    def config(self, policy: str):
        from vraid.sim.simulator import SimConfig

        capacity = max(self.total, 5 * self.strip_kib * 1024)
        return SimConfig(level=0, disks=5, strip=self.strip_kib * 1024, capacity=capacity, disk_model=SIM_MODEL,
                         workload=f"readers:streams={self.streams},size=4K,total={self.total}",
                         requests=self.total // BLOCK + self.streams, host_readahead=f"{policy}:max={self.max_kib}K")

    def command(self, policy: str) -> str:
        c = self.config(policy)
        return (f"vraid sim --level 0 --disks 5 --strip {self.strip_kib}K --capacity {c.capacity // 1024}K "
                f"--disk-model {SIM_MODEL} --workload {c.workload} --requests {c.requests} "
                f"--host-readahead {c.host_readahead} --json")


class PrefetchingLab(Lab):
    def dealt(self, seed: int) -> Dealt:
        if seed == 0:  # the paper: Fig. 1's array, Fig. 3/4's file, Fig. 6's semisequential read
            g = Geometry(5, 5, 16, BLOCK, 4 * BLOCK, "left-symmetric", 0)
            return Dealt(g, 16, 20, 4, tuple(semisequential(0, 16, 12, 3, 4)), 3, 5, 3, 2, SimRun(8, 128, 1000, 128))
        r = rng(self, seed)
        level = r.choice((0, 5))
        # at least 3 data disks (a window's strips are on 3 members), plus the scheme's parity columns
        ndisks = r.choice((3, 4, 5)) + for_level(level).parity_columns
        u = r.choice((4, 4, 8))
        g = Geometry(level, ndisks, 32, BLOCK, u * BLOCK, "left-symmetric", 0)
        max_blocks = min(16, r.choice((u, 2 * u, 4 * u)))
        start = r.randrange(u, 4 * u * g.data_disks)
        length = r.randrange(max(6, 3 * u), max(12, 6 * u))
        # a metadata read every `every` data blocks, `every` below u and not dividing it (as Fig. 6's 3 and 4):
        # some strip changes then come between two data blocks, which line 28 needs to prefetch
        every = r.choice([e for e in range(3, u) if u % e])
        meta = r.randrange(0, 2 * u)
        data = (meta // u + 1 + r.randrange(1, 2 * g.data_disks)) * u + r.randrange(0, u)
        blocks = semisequential(meta, data, r.randint(5, 6 if u < 8 else 5) * u - data % u, every, u)
        sc_thresh = r.randint(2, 4)
        strip_kib, streams = r.choice((32, 64, 128, 256)), r.choice((4, 16, 32))
        most = 16384 // streams  # at most 16 MiB read in all: under a second or so of wall time
        file_kib = r.randrange(min(3 * strip_kib, most // 2), min(10 * strip_kib, most), 4) + 4 * r.randint(1, 7)
        sim = SimRun(streams, strip_kib, file_kib, r.choice((128, 512)))
        return Dealt(g, start, length, max_blocks, tuple(blocks), every, sc_thresh + r.randint(1, 2), sc_thresh,
                     r.randint(1, 3), sim)

    def setting(self, seed: int) -> str:
        d = self.dealt(seed)
        g = d.geometry
        return (f"A RAID-{g.level} array of {g.ndisks} disks{f' ({g.layout})' if g.redundancy.parity_columns else ''}, strips of u = {g.u} blocks: strip s is "
                f"blocks s*{g.u} .. s*{g.u}+{g.u - 1}, a stripe holds {g.data_disks} strips ({g.data_disks * g.u} "
                "blocks).\n"
                f"Part 1 (sec. 3): a file of {d.length} blocks stored contiguously at blocks B{d.start}..B"
                f"{d.start + d.length - 1} is read one block at a time. The read-ahead window grows 1, 2, 4, ... "
                f"blocks up to {d.max_blocks} (the first read is the 1-block request; the next window is read when the "
                "reader reaches the first block of the last one read, Linux's marker). SEQP reads each window whole; SASEQP shrinks a window to end at "
                "the strip of its first block (Fig. 5), and the next window keeps SEQP's size. A request makes one "
                "member (disk) request per strip it touches.\n"
                f"Part 2 (sec. 4, Fig. 7): MSP with SC_max = {d.sc_max}, SC_thresh = {d.sc_thresh}, "
                f"SPS_max = {d.sps_max} sees the block sequence\n  {', '.join(map(str, d.blocks))}\n"
                f"(a metadata block, then {d.every} data blocks, and again, as Fig. 6). Fig. 7 starts with SN_p = SN_pp = 0, SC = 0, "
                "SPS = 0; a block in the same strip as SN_p changes nothing (line 17). The steps are the strip "
                "changes MSP counts, numbered from 1.\n"
                f"Part 3 (sec. 5, Fig. 8), in the simulator: {d.sim.streams} readers each read their own file of "
                f"{d.sim.file_kib} KiB (stored one after the other from offset 0, so most files start inside a strip) "
                f"in 4 KiB reads at once, on a RAID-0 of 5 {SIM_MODEL} disks with strips of {d.sim.strip_kib} KiB, "
                f"host read-ahead SEQP{d.sim.max_kib} vs SASEQP{d.sim.max_kib} (Linux's window ramp up to "
                f"{d.sim.max_kib} KiB). Run it: {d.sim.command('seqp')} (then saseqp); `metrics.host_readahead` "
                "has the windows.\n"
                f"The map: vraid layout --level {g.level} --disks {g.ndisks} --strip {g.u * 4}K --block 4K "
                f"--stripes {(d.start + d.length - 1) // (g.data_disks * g.u) + 1}")

    def questions(self, seed: int) -> list[Question]:
        d = self.dealt(seed)
        g, u = d.geometry, d.geometry.u
        seqp = readahead_windows("seqp", d.start, d.length, u, d.max_blocks)
        saseqp = readahead_windows("saseqp", d.start, d.length, u, d.max_blocks)

        def disk_requests(ws) -> int:
            return sum(len(strips_of(f, c, u)) for f, c in ws)

        def listing(ws) -> str:
            return " ".join(f"[B{f}..B{f + c - 1}]" if c > 1 else f"[B{f}]" for f, c in ws)

        layout = (f"vraid layout --level {g.level} --disks {g.ndisks} --strip {u * 4}K --block 4K "
                  f"--stripes {(d.start + d.length - 1) // (g.data_disks * u) + 1}")

        def draw(ws) -> str:
            return f"Draw it: {layout} --highlight " + ",".join(f"{f}-{f + c - 1}" if c > 1 else f"{f}" for f, c in ws)

        crossing = [(f, c) for f, c in seqp if len(strips_of(f, c, u)) > 1]
        first_cross = crossing[0] if crossing else None
        cross_disks = ([g.locate(s * u).disk for s in strips_of(*first_cross, u)] if first_cross else [])
        qs = [
            Question("q1", "How many member (disk) requests does SEQP make to read the whole file?", disk_requests(seqp),
                     explanation=(f"SEQP's {len(seqp)} requests: {listing(seqp)}; "
                                  f"{len(crossing)} of them cross a strip boundary and count once per strip "
                                  f"touched: {len(seqp)} + {disk_requests(seqp) - len(seqp)} = {disk_requests(seqp)}. "
                                  + draw(seqp))),
            Question("q2", "And SASEQP?", disk_requests(saseqp),
                     explanation=(f"SASEQP's {len(saseqp)} requests: {listing(saseqp)}; each stays inside one strip, "
                                  "so each is one member request. "
                                  + ("Seed 0 is Fig. 3/4: 11 and 7, as the paper counts. " if seed == 0 else "")
                                  + draw(saseqp))),
            Question("q3", "Which SEQP requests cross a strip boundary (independency loss)? Give each one's first block.",
                     [f for f, _ in crossing], kind="set", form="block numbers, or none",
                     explanation=("crossing: " + (listing(crossing) if crossing else "none") + f". Strips are {u} blocks: "
                                  "a request crosses when its first and last blocks have different block // u.")),
            Question("q4", "Which disks does the first crossing SEQP request go to (in block order)? (none if none crosses)",
                     cross_disks, kind="list", form="disk numbers, or none",
                     explanation=(f"[B{first_cross[0]}..B{sum(first_cross) - 1}] touches strips "
                                  f"{strips_of(*first_cross, u)}, which {g.layout if g.redundancy.parity_columns else 'RAID-0'} places on disks "
                                  f"{cross_disks} "
                                  "(vraid layout prints the map); two disks each make a seek for part of one request: "
                                  "with many readers that is independency loss." if first_cross else
                                  "no SEQP request crosses a strip here: the file and windows fit the strips.")),
        ]
        msp_qs, msp_on = self.msp_questions(seed, d)
        return qs + msp_qs + self.sim_questions(d) + [msp_on]

    @staticmethod
    def msp_on_question(msp: MspPrefetch, d: Dealt) -> Question:
        """Part 2 again: MSP's own count of its steps after which it was on (``msp`` has run the
        part's accesses), the counter a mount's ``vraid status`` shows (``active_changes`` of
        ``strip_changes``) and ``vraid top`` as `on`."""
        st = msp.state()
        return Question("q13", "Part 2 again: after how many of MSP's steps was it on (SC >= SC_thresh)?",
                        st["active_changes"],
                        explanation=(f"{st['active_changes']} of the {st['strip_changes']} steps (the SC list of q6 at "
                                     f"or above {d.sc_thresh}); {st['sequential_changes']} of them were sequential. On "
                                     "a mount `vraid status` counts these since the mount (`policy_state`: "
                                     "`strip_changes`, `sequential_changes`, `active_changes`) and `vraid top` shows "
                                     "the share as `on`: interleaved streams count SC down and keep it low, which is "
                                     "what SC_thresh tunes (Fig. 8f)."))

    def sim_questions(self, d: Dealt) -> list[Question]:
        a, b = simulate(d.sim, "seqp"), simulate(d.sim, "saseqp")

        def more(x: float, y: float, band: float = 0.0) -> str:
            """Which is larger; "same" when they differ by at most ``band`` of the larger."""
            if abs(x - y) <= band * max(x, y):
                return "same"
            return "seqp" if x > y else "saseqp"

        counts = (f"SEQP: {a['windows']} array reads (windows), {a['crossing']} crossing a strip, {a['disk_reads']} "
                  f"member reads, {a['mb_s']:.1f} MB/s; SASEQP: {b['windows']} windows ({b['shrunk']} shrunk), "
                  f"{b['crossing']} crossing, {b['disk_reads']} member reads, {b['mb_s']:.1f} MB/s.")
        return [
            Question("q9", "Part 3: which makes more array reads that cross a strip boundary (seqp, saseqp or same)?",
                     more(a["crossing"], b["crossing"]), kind="word",
                     explanation=(counts + " SEQP's windows start wherever the last one ended and grow in powers "
                                  "of two, so they straddle a strip boundary unless file and windows happen to fit the "
                                  "strips. SASEQP cuts every ahead "
                                  "window at its strip's end; only an initial (synchronous) window, which Fig. 5 "
                                  "leaves alone, can still cross.")),
            Question("q10", "How many cross, SEQP then SASEQP (run it)?", [a["crossing"], b["crossing"]], kind="list",
                     form="SEQP,SASEQP", explanation="`crossing_windows` in `metrics.host_readahead` of each run."),
            Question("q11", "Member (disk) read requests, SEQP then SASEQP?", [a["disk_reads"], b["disk_reads"]],
                     kind="list", form="SEQP,SASEQP",
                     explanation=(f"`disk_read_requests` in `metrics`: SASEQP makes {b['windows']} array reads to "
                                  f"SEQP's {a['windows']}, and each not crossing a strip costs one member request, "
                                  "while a crossing SEQP window costs one per strip it touches.")),
            Question("q12", "Which reads faster in aggregate MB/s (seqp, saseqp, or same: within 2 %)?",
                     more(a["mb_s"], b["mb_s"], 0.02),
                     kind="word",
                     explanation=(f"SEQP {a['mb_s']:.1f} MB/s, SASEQP {b['mb_s']:.1f} MB/s (`file_mb_s`). "
                                  + (("A tie: the member requests SASEQP saves and the extra, shorter requests it "
                                      "makes cost about the same in this run. ")
                                     if more(a["mb_s"], b["mb_s"], 0.02) == "same" else "")
                                  + "With many readers a split request makes two disks seek for one stream, which "
                                    "SASEQP avoids; with few readers, or strips much smaller than the window, "
                                    "SASEQP's shorter requests can cost more than they save (Fig. 8; Fig. 10d-f on "
                                    "file size).")),
        ]

    def msp_questions(self, seed: int, d: Dealt) -> tuple[list[Question], Question]:
        """Part 2's questions q5-q8, and q13 (asked after part 3) from the same MSP run."""
        g, u = d.geometry, d.geometry.u
        msp = MspPrefetch(g, sc_max=d.sc_max, sc_thresh=d.sc_thresh, sps_max=d.sps_max)
        steps, fired = [], None
        for b in d.blocks:
            seen = len(msp.steps)
            ranges = msp.step(b)
            if len(msp.steps) > seen:
                steps.append(msp.steps[-1])
                if ranges and fired is None:
                    fired = (len(steps), [first // (g.data_disks * u) for first, _ in ranges])
        changes = [b // u for i, b in enumerate(d.blocks) if i == 0 or b // u != d.blocks[i - 1] // u]
        sc = [s.sc for s in steps]
        printed = printed_reading([b // u for b in d.blocks])
        paper_sn = "Sec. 4 prints the sequence as (0, 4, 0, 4, 5, 0, 5, 6, 0, 6)." if seed == 0 else ""
        paper_sc = "Sec. 4 prints SC as (1, 0, 1, 2, 3, 2, 3, 4, 3, 4). " if seed == 0 else ""
        reach = next((i for i, s in enumerate(steps, 1) if s.active), 0)
        return [
            Question("q5", "Which strip numbers SN_c does MSP count, in order (the steps)?", [s.strip for s in steps],
                     kind="list", form="strip numbers",
                     explanation=(f"SN_c = block // {u}; the accesses change strip as {show(changes)}. "
                                  + ("Fig. 7 starts with SN_p = 0, so line 17 swallows the first access to strip 0: "
                                     "it is not a step. " if changes and changes[0] == 0 else "")
                                  + paper_sn).strip()),
            Question("q6", "SC after each step (Fig. 7)?", sc, kind="list", form="one value per step",
                     explanation=("+1 when the strip follows SN_p (sequential) or equals SN_pp (a metadata read between "
                                  "two reads of one data strip: semisequential), else -1 but never below 1 (line 23); "
                                  f"at most SC_max = {d.sc_max}. {paper_sc}The printed values are Fig. 7 read with no "
                                  "previous strip at the start (SN_p = -1, so a first strip 0 is a sequential step) and "
                                  "a decrement floored at 0 instead of 1; that reading gives "
                                  f"{show(printed)} here. vraid follows the pseudocode as printed "
                                  "(tests/test_prefetch_msp.py records both).")),
            Question("q7", "At which step does MSP first read whole stripes ahead (0 if never)?",
                     fired[0] if fired else 0,
                     explanation=(f"SC first reaches SC_thresh = {d.sc_thresh} at step {reach or 'none'}"
                                  + (". " if reach else " (never). ")
                                  + "A prefetch needs SC >= SC_thresh on a sequential step (the strip after SN_p, "
                                  "line 28), and SPS starts at 0 and grows only after a prefetch (line 34), so the "
                                  "first such step reads nothing; below SC_thresh SPS decays (line 27). "
                                  + (f"Per step (strip/SC/SPS after): "
                                     + ", ".join(f"{i}: {s.strip}/{s.sc}/{s.sps}{'s' if s.sequential else ''}"
                                                 for i, s in enumerate(steps, 1))
                                     + " (s: sequential)."))),
            Question("q8", "Which stripes does it read at that step (none if never)?", fired[1] if fired else [],
                     kind="list", form="stripe numbers, or none",
                     explanation=(f"SPS whole stripes from the stripe holding the current strip (strip // "
                                  f"{g.data_disks} data strips per stripe), stripe aligned: every member works for "
                                  "the one stream (no parallelism loss)."
                                  + (" The paper's SC_max 42 / SC_thresh 38 need a long read; this example's small "
                                     "thresholds let a 16-access sequence reach them." if seed == 0 else ""))),
        ], self.msp_on_question(msp, d)


LAB = PrefetchingLab(
    name="prefetching",
    title="Prefetching: SEQP vs SASEQP disk requests for a file placement (Fig. 3/4); MSP's SC sequence (Fig. 7)",
    seeds=["001"],
)
