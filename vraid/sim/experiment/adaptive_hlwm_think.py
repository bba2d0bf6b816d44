"""The ``adaptive-hlwm`` think-factor ablation: what vraid's think factor sets, measured.

W_synth runs as five processes in a closed loop whose think times are ``THINK`` = 2.5 x Table
1's inter-arrival times (vraid's choice: with Table 1's own our disks come near saturation;
:mod:`.adaptive_hlwm`). Several rows name the factor as a cause: it sets the reference rate
i_B (seed 003 sec. 4.2.1: 70.09 entries/s for W_synth^1, 104.00 for W_synth^2), and in the
closed loop it decides how far the arrival rate rises from T1 to T4 (the paper's T4 marks
imply about 1.22x). The ablation runs W_synth^1's and W_synth^2's T1-T4 with Table 1's
own think times (``ABLATION_THINK`` = 1.0; tau scales with it, so a period holds as many
fills and drains) and reports each number beside the full run's.
``by``: run id -> the output of :func:`.adaptive_hlwm_sim.simulate`.
"""

from __future__ import annotations

from typing import Any

from .adaptive_hlwm_paper import ABLATION_THINK, THINK
from .adaptive_hlwm_rates import rates

#: the ablation's run ids (:func:`.adaptive_hlwm.runs`)
SYNTH1 = f"ablation-think{ABLATION_THINK:g}-adaptive"
SYNTH2 = f"ablation-think{ABLATION_THINK:g}-synth2-adaptive"


def think(by: dict[str, dict[str, Any]]) -> dict[str, float] | None:
    """The ablation's numbers beside the full runs' (``{"base_...": ..., "think_...": ...}``):
    W_synth^1's i_B, delta_B and their ratio, the host's requests T4 over T1, T4's HWM and
    LWM medians (per cent) and delta(t)/delta_B; W_synth^2's i_B (``s2_``) and the ratio of the
    two i_B. None without the W_synth^1 runs."""
    abl, base = by.get(SYNTH1), by.get("adaptive")
    if abl is None or base is None:
        return None
    out: dict[str, float] = {}
    for tag, run in (("base", base), ("think", abl)):
        i_b, d_b = rates(run)
        p = {r["name"]: r for r in run["periods"]}
        out |= {f"{tag}_i_b": i_b, f"{tag}_delta_b": d_b, f"{tag}_ratio": i_b / d_b if d_b else float("nan"),
                f"{tag}_busy": 100 * p["T1"].get("disk_busy", float("nan"))}
        if "T4" in p and p["T1"].get("requests"):
            out |= {f"{tag}_rise": p["T4"]["requests"] / p["T1"]["requests"],
                    f"{tag}_t4_hwm": 100 * p["T4"]["hwm_median"], f"{tag}_t4_lwm": 100 * p["T4"]["lwm_median"],
                    f"{tag}_t4_delta": _num(p["T4"].get("delta_ratio"))}
    abl2, base2 = by.get(SYNTH2), by.get("synth2-adaptive")
    if abl2 is not None and base2 is not None:
        for tag, run, one in (("base", base2, base), ("think", abl2, abl)):
            out[f"{tag}_s2_i_b"] = i2 = rates(run)[0]
            i1 = rates(one)[0]
            out[f"{tag}_s2_over_s1"] = i2 / i1 if i1 else float("nan")
    return out


def _g(v: float) -> str:
    """A number of the ablation as the rows print it; "not learned" for a rate the run never learned."""
    return "not learned" if v != v else f"{v:.3g}"


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


def think_text(a: dict[str, float] | None, *keys: str) -> str:
    """What the ablation measured for a row: each of ``keys`` (``i_b``, ``ratio``, ``rise``,
    ``t4_hwm``, ``t4_lwm``, ``t4_delta``, ``s2_i_b``, ``s2_over_s1``) as the full run's ->
    the ablation's; "" without the ablation or the keys."""
    if a is None:
        return ""
    label = {"i_b": "i_B", "delta_b": "delta_B", "ratio": "i_B/delta_B", "busy": "disks busy in T1 (%)",
             "rise": "host requests T4 over T1", "t4_hwm": "T4 HWM median (%)", "t4_lwm": "T4 LWM median (%)",
             "t4_delta": "T4 delta(t)/delta_B", "s2_i_b": "W_synth^2 i_B", "s2_over_s1": "W_synth^2 over W_synth^1 i_B"}
    parts = [f"{label[k]} {_g(a[f'base_{k}'])} -> {_g(a[f'think_{k}'])}" for k in keys
             if f"base_{k}" in a and f"think_{k}" in a]
    if not parts:
        return ""
    return (f"; ablation (think factor {ABLATION_THINK:g}: Table 1's inter-arrival times as the think times, "
            f"against vraid's {THINK}; "
            f"W_synth^1's disks busy in T1 {a['base_busy']:.0f} % -> {a['think_busy']:.0f} %): " + ", ".join(parts))


__all__ = ["SYNTH1", "SYNTH2", "think", "think_text"]
