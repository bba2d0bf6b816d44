"""The ``stride`` experiment against seed 000's own words: one row per claim, with a verdict.

Seed 000 (Baek & Park, MSC-CT) prints few numbers for its stride measurements: Fig. 1 and
Fig. 9 are drawn, and our text of the paper has their captions and prose only. So most rows
compare a claim of the prose (a shape, an inequality, "all disks", "some disks") with what our
curves show; the rows with numbers are the ST373454LC figures of sec. I-C and the CT limits
of sec. IV-F. The verdicts are the one rule's (:mod:`.verdict`, whose constants and tolerance
this module uses):

* ``reproduced``: the claim holds on our curves (a number within 25 % of the paper's);
* ``direction``: the same direction or shape, not the magnitude or not on every disk;
* ``not reproduced``: it does not hold; the row's ``why`` names the physical reason in the model;
* ``input``: a number the disk preset takes from the paper (revolution time, seek time): listed,
  not judged.

:func:`paper_vs_vraid` builds the rows (``results.json`` keeps them as ``paper_vs_vraid``, a list
of ``{"item", "paper", "vraid", "verdict"}`` plus ``why``); :func:`markdown` prints them.
"""

from __future__ import annotations

from typing import Any

from .verdict import DIRECTION, INPUT, NOT_REPRODUCED as NOT, REPRODUCED, TOLERANCE, judge, rule_text


def _within(ours: float, paper: float) -> bool:
    return judge(paper, ours) == REPRODUCED


def paper_vs_vraid(disks: dict[str, Any], fig1: dict[str, Any], fig15: dict[str, Any],
                   facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows. ``disks``: results.json's Fig. 9 entries; ``fig1``: preset -> {"mean",
    "normalized"}; ``fig15``: op -> {"limit", "normalized", "fastest"}; ``facts``: per preset
    the model's revolution and average write seek, blocks per outer track, and the S = 1 and
    S = 2 write points (seconds, requests, missed rotations)."""
    rows: list[dict[str, Any]] = []

    def row(item: str, paper: str, vraid: str, verdict: str, why: str = "") -> None:
        rows.append({"item": item, "paper": paper, "vraid": vraid, "verdict": verdict, "why": why})

    st = facts.get("st373454lc", {})
    if st:
        rev = st["revolution"] * 1e3
        row("ST373454LC revolution time (sec. I-C)", "4 ms", f"{rev:.2f} ms",
            INPUT, "an input of the preset (15,000 rpm), not a reproduction")
        ws = st["avg_write_seek"] * 1e3
        row("ST373454LC average write seek (sec. I-C)", "4.1 ms", f"{ws:.2f} ms",
            INPUT, "an input: the seek curve is calibrated to it, not a reproduction")
    if "st373454lc" in disks:
        d = disks["st373454lc"]
        w2 = _value(d["write"], 2)
        row("ST373454LC: small write strides are slow (Fig. 9(a), S_w^max > 1)",
            "S_w^max drawn in Fig. 9(a), no number in our text", f"S_w^max = {d['sw_max']} (S = 2: {w2:.2f})",
            REPRODUCED if d["sw_max"] > 1 else NOT,
            "" if d["sw_max"] > 1 else "no stride misses a sector in the model")
        r2 = _value(d["read"], 2)
        row("ST373454LC: small read strides are slow too, no read-ahead (sec. I-C, Fig. 9(a))",
            "S_r^max drawn in Fig. 9(a), no number in our text", f"S_r^max = {d['sr_max']} (S = 2: {r2:.2f})",
            REPRODUCED if d["sr_max"] > 1 else NOT, "")
    slow = [p for p, d in disks.items() if d["sw_max"] > 1]
    if disks:
        why = ""
        if len(slow) < len(disks):
            fast = [p for p in disks if p not in slow]
            why = (", ".join(fast) + ": with the commands queued, only the drive's setup of the next transfer "
                   "(its command overhead) falls between two blocks, and on these disks the one-block gap of "
                   "S = 2 is at least as long as that setup, so no sector is missed")
        row("Fig. 9: every disk has a threshold below which fragmented writes are slow",
            "all disks of Fig. 9", f"{len(slow)} of {len(disks)} presets (S_w^max > 1)",
            REPRODUCED if len(slow) == len(disks) else DIRECTION if slow else NOT, why)
        sr1 = [p for p, d in disks.items() if d["sr_max"] == 1]
        row("Figs. 9(b), 9(c): some disks have S_r^max = 1", "2 of the 4 disks of Fig. 9",
            f"{len(sr1)} of {len(disks)}" + (f" ({', '.join(sr1)})" if sr1 else ""),
            REPRODUCED if sr1 else NOT, "" if sr1 else "every preset's reads miss at small strides")
        exc = [p for p, d in disks.items() if d["sw_except"] or d["sr_except"]]
        row("Fig. 9(d): a disk with an excluded region below S^max", "1 of the 4 disks of Fig. 9",
            f"{len(exc)} of {len(disks)}" + (f" ({', '.join(exc)})" if exc else ""),
            REPRODUCED if exc else NOT,
            "" if exc else "in the model a stride below the threshold always loses time to missed sectors "
            "and none above it does, so the curves have no fast stride below S^max")
        low = min(min(d["read"]["normalized"]) for d in disks.values())
        row("Fig. 9: reads are never below one", "no read below 1", f"smallest normalized read {low:.2f}",
            REPRODUCED if low >= 1.0 - 0.02 else NOT,
            "" if low >= 0.98 else "once a stride skips more than a track, or the queue holds blocks of several "
            "tracks of a cylinder, the drive writes them without passing over every skipped sector (head "
            "switches, SPTF across surfaces), so the fragmented pass takes less time than the contiguous one")
    if "st373454lc" in fig1:
        c = fig1["st373454lc"]
        frag = [v for m, v in zip(c["mean"], c["normalized"]) if m > 1]
        row("Fig. 1 (ST373454LC): fragmented writes always slower than contiguous",
            "every normalized time > 1", f"{min(frag):.2f} .. {max(frag):.2f}",
            REPRODUCED if min(frag) > 1.0 else DIRECTION if max(frag) > 1.2 else NOT,
            "" if min(frag) > 1.0 else "long strides skip tracks (see the read row above)")
        row("Fig. 1 (ST373454LC): the smaller the stride distance, the slower",
            "falls as the mean stride grows", f"{max(frag):.2f} at the peak, {frag[-1]:.2f} at mean {c['mean'][-1]:g}",
            REPRODUCED if frag[-1] < max(frag) else NOT, "")
    if st and st.get("s2_requests"):
        per = st["s2_missed"] / st["s2_requests"]
        row("Fig. 2: stride 2 with queued commands misses a revolution every other block",
            "0.5 missed revolutions per block", f"{per:.2f} per block (SPTF, {st['depth']} outstanding)",
            REPRODUCED if _within(per, 0.5) else DIRECTION if per > 0 else NOT,
            "" if _within(per, 0.5) else "the drive serves other queued blocks while a missed sector comes "
            "round (SPTF), so a missed sector costs part of a revolution, rarely all of it")
        t_c, t_d = st["s1_seconds"], st["s2_seconds"]
        pred = t_c + st["revolution"] * st["s2_missed"]
        row("Eq. (1), t_d = t_c + t_r N_r (ST373454LC, S = 2 writes)", "t_d / (t_c + t_r N_r) = 1",
            f"{t_d / pred:.2f} ({t_d * 1e3:.1f} ms vs {pred * 1e3:.1f} ms)",
            REPRODUCED if _within(t_d / pred, 1.0) else NOT,
            "" if _within(t_d / pred, 1.0) else "the queue, measured (msc-ct's eq. (1) rows): one command at a "
            "time the same passes miss a revolution per block and eq. (1) holds (1.00); with 32 queued the drive "
            "takes the next block it can reach, so t_d - t_c is partial rotational waits, none over 7/8 of a "
            "revolution, which the N_r counter does not count")
    for op, key, name in (("write", "sw_max", "S_w^max"), ("read", "sr_max", "S_r^max")):
        f = fig15.get(op)
        if not f or "st373454lc" not in disks:
            continue
        smax = disks["st373454lc"][key]
        best = f["fastest"]
        verdict = REPRODUCED if abs(best - smax) <= max(1, TOLERANCE * smax) else DIRECTION if best > 1 else NOT
        gain = 1.0 / min(f["normalized"])
        row(f"Sec. IV-F, Fig. 15 ({op}s): the fastest CT limit equals the stride benchmark's {name}",
            "the same value", f"fastest L = {best}, {name} = {smax} ({gain:.2f}x faster than no CT)", verdict,
            "" if verdict == REPRODUCED else "in the model a filled gap costs no time the head would not "
            "spend anyway (the skipped sectors pass under it) and the bus and memory are never busy, so "
            "filling wider gaps keeps paying (the curve is nearly flat past S^max); the paper's 1.2 margin is "
            "for the bus and memory cost of the added I/O, which the model does not charge")
    return rows


def _value(curve: dict[str, list], s: int) -> float:
    return curve["normalized"][curve["S"].index(s)] if s in curve["S"] else float("nan")


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as a markdown table (the reason in the last column), after the rule."""
    out = [rule_text(), "", "| item | paper | vraid | verdict | why |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['item']} | {r['paper']} | {r['vraid']} | {r['verdict']} | {r.get('why', '')} |")
    return out
