"""Lab ``stride``: S_w^max, S_r^max and the excluded strides by the 1.2 rule (seed 000 sec. III-D, Fig. 8/9).

The stride benchmark writes (then reads) one block every S blocks between the same two ends
and divides each turnaround by the one at S = 1: the normalized time of Fig. 9. A stride is
*slow* when its normalized time is at least 1.2; S^max is the measured stride just after the
last slow one, and the fast strides (above 1) below it are the excluded regions, where filling
the gap would cost more than skipping it. The contiguity transform then fills a gap of stride
S only when S < S^max and S is in no excluded region (eq. (8), (9)).

Seed 0 measures the paper's drive (hdd:st373454lc); other seeds deal another hdd preset and
span. The curve is measured by :func:`vraid.sim.stride_bench.bench_model` in virtual time and
the answers are :meth:`~vraid.sim.stride_bench.BenchResult.limits` and
:func:`vraid.core.stride_rule.ct_permitted`: the code ``vraid stride-bench`` runs.
"""

from __future__ import annotations

import functools

from vraid.core.stride_rule import THRESHOLD, ct_permitted
from vraid.sim.stride_bench import bench_model

from .framework import Lab, Question, rng

MAX_STRIDE = 16
#: cheap presets for the seeded variants (the paper's 15k rpm drive takes ~3 s to model)
PRESETS = ("st39175fc", "dnes-318350", "91366u4", "91020d6", "st52160n", "st32151n")


@functools.lru_cache(maxsize=8)
def measure(model: str, span: int):
    return bench_model(model, max_stride=MAX_STRIDE, span=span, passes=1)


def regions(rs) -> list[str]:
    return [f"{a}-{b}" for a, b in rs]


class StrideLab(Lab):
    def dealt(self, seed: int) -> tuple[str, int]:
        if seed == 0:
            return "hdd:st373454lc", 128 << 10
        r = rng(self, seed)
        return f"hdd:{r.choice(PRESETS)}", r.choice((128, 192, 256)) << 10

    def setting(self, seed: int) -> str:
        model, span = self.dealt(seed)
        res = measure(model, span)
        rows = "\n".join(f"  S = {s:>2}   write {w:8.4f}   read {r:8.4f}"
                         for s, w, r in zip(res.write.S, res.write.normalized, res.read.normalized))
        return (f"The stride benchmark on {model} ({span >> 10} KiB span, one pass, virtual time) measured these "
                f"normalized turnaround times (time at S / time at S = 1):\n{rows}\n"
                f"A stride is slow when its time is >= {THRESHOLD}. Write regions as a-b (inclusive), e.g. 5-6.\n"
                f"Check yourself: vraid stride-bench --disk-model {model} --max-stride {MAX_STRIDE} "
                f"--span {span >> 10}K --passes 1")

    def questions(self, seed: int) -> list[Question]:
        model, span = self.dealt(seed)
        res = measure(model, span)
        lim = res.limits()

        def why(op: str, curve) -> str:
            slow = [s for s, v in zip(curve.S, curve.normalized) if s > 1 and v >= THRESHOLD]
            if not slow:
                return f"no {op} stride is slow: S^max = 1, the transform never fills a {op} gap"
            return (f"slow {op} strides: {', '.join(map(str, slow))}; the last is {slow[-1]}, so S^max is the next "
                    f"measured stride, {lim['sw_max' if op == 'write' else 'sr_max']}")

        sw, swx = lim["sw_max"], lim["sw_except"]
        filled = [s for s in range(2, MAX_STRIDE + 1) if ct_permitted(s, sw, swx)]
        return [
            Question("q1", "S_w^max (writes)?", sw, explanation=why("write", res.write)),
            Question("q2", "S_w^except: the excluded write regions (or none)?", regions(swx), kind="set",
                     form="regions a-b, or none",
                     explanation="the fast strides (below 1.2) under S^max, grouped into runs: there the disk does not "
                                 "miss a rotation between the two requests, so filling the gap would only add transfer time."),
            Question("q3", "S_r^max (reads)?", lim["sr_max"], explanation=why("read", res.read)),
            Question("q4", "S_r^except (or none)?", regions(lim["sr_except"]), kind="set", form="regions a-b, or none",
                     explanation="the same rule on the read curve."),
            Question("q5", f"With these write limits, at which strides 2..{MAX_STRIDE} may the transform fill a write gap?",
                     filled, kind="set", form="strides, or none",
                     explanation=f"eq. (9): S < S_w^max = {sw} and S outside {', '.join(regions(swx)) or 'any region'}."),
        ]


LAB = StrideLab(name="stride", title="Stride benchmark: S_w^max, S_r^max and except regions by the 1.2 rule",
                seeds=["000"])
