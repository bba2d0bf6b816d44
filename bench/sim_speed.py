"""How fast does the simulator run? Simulated host requests per wall-clock second.

The case that matters (issue 3): random 4 KiB writes on a 5-disk RAID-5 (64 KiB strips)
with the hdd model (``hdd:st373454lc``), target >= 20,000 requests/s; the same with
``--disk-model none`` is the baseline measured in the same run, so the ratio isolates what
the timing model and virtual-time scheduling cost on top of the engine. Every case is one
``vraid.sim.simulator.run_sim`` call (wall time includes building the members).

    .venv/bin/python bench/sim_speed.py                     # 20,000 requests per case
    .venv/bin/python bench/sim_speed.py --requests 5000 --repeat 3
    .venv/bin/python bench/sim_speed.py --profile 25        # cProfile of the hdd case, top 25
    .venv/bin/python bench/sim_speed.py --json out.json

Cases: closed loop with 1 and 8 outstanding (``random-write`` / ``random-write:threads=8``)
and open loop (Poisson arrivals every 10 ms on average, a load the hdd array sustains).

The floor (issue 17): ``bench/heapq_floor.py``, a minimal heapq discrete-event simulation
of the same RAID-5 small writes (closed loop, one outstanding, seek + rotation + transfer
per member, no data), runs in the same process just before and just after every
closed-loop, one-outstanding vraid run; each such run gives the ratio vraid / (mean of its
two floor runs), and the median of these paired ratios is reported (target: the hdd model
>= 0.1 of the floor). The machine's load drifts by several times within minutes; pairing
keeps the drift out of the ratio, use ``--repeat 3`` or more. ``--no-data`` runs vraid's metadata-only mode
(``vraid sim --no-data``) as extra rows.

Where the hdd ratio goes: the ``none`` row is the engine without a timing model, and the
last ratio printed is the hdd model without the engine (:func:`model_alone`: the member
requests of one run replayed on fresh models, paired with the floor in the same way). The
costs add up: 1/ratio(hdd) is about 1/ratio(none) + 1/ratio(model alone).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heapq_floor import run_floor  # noqa: E402
from vraid.backends.memory import NullStore  # noqa: E402
from vraid.backends.models import parse_model  # noqa: E402
from vraid.sim.simulator import SimConfig, run_sim  # noqa: E402

TARGET = 20_000
#: issue 17: vraid sim (hdd model, closed loop, 1 outstanding) against the heapq floor
FLOOR_TARGET = 0.1
CASES = [
    ("closed loop, 1 outstanding", "random-write"),
    ("closed loop, 8 outstanding", "random-write:threads=8"),
    ("open loop, iat 10 ms", "random-write:iat=10ms"),
]
MODELS = ("hdd:st373454lc", "none")


def measure(model: str, workload: str, requests: int, repeat: int, seed: int, no_data: bool = False,
            floor_requests: int = 0) -> dict:
    """``repeat`` runs of one case; with ``floor_requests``, each run sits between two floor
    runs and gives a paired ratio vraid/floor (the machine's drift hits both alike)."""
    rates, floors, virtual = [], [], 0.0
    for _ in range(repeat):
        before = floor_rate(floor_requests, seed) if floor_requests else 0.0
        extra = {"no_data": True} if no_data else {}  # (so that this script also runs older commits)
        r = run_sim(SimConfig(disk_model=model, workload=workload, requests=requests, seed=seed, **extra))
        rates.append(requests / r.wall_seconds)
        if floor_requests:
            floors.append((before + floor_rate(floor_requests, seed)) / 2)
        virtual = r.metrics["virtual_seconds"]
    row = {"model": model, "workload": workload, "requests": requests, "rates": [round(x) for x in rates],
           "requests_per_s": round(statistics.median(rates)), "virtual_seconds": virtual, "no_data": no_data}
    if floors:
        row["floor_rates"] = [round(x) for x in floors]
        row["ratio_to_floor"] = statistics.median(r / f for r, f in zip(rates, floors))
    return row


def floor_rate(requests: int, seed: int) -> float:
    """Host writes per wall second of one heapq-floor run."""
    _virtual, wall = run_floor(requests, seed=seed)
    return requests / wall


class _ReplayClock:
    """The clock a replayed model reads: the virtual time each request arrived at."""

    scale = 1.0

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def model_alone(model: str, requests: int, seed: int) -> dict:
    """What the disk model alone costs per host request: one ``vraid sim`` run records every
    member request its members' models charge (member, arrival time, op, offset, length);
    they are then replayed on fresh models of the same members, with nothing else, and timed.
    The replay must reproduce every charged time (checked), so it is the same model work;
    requests/replay seconds is what vraid sim would reach with an engine that cost nothing."""
    log: list[tuple[int, float, str, int, int, float]] = []
    sizes: list[int] = []

    def observe(array) -> None:
        for d in array.members.disks:
            store = d.store
            sizes.append(store.size)
            charge = store.charge

            def recorded(op, offset, length, i=d.index, store=store, charge=charge):
                dt = charge(op, offset, length)
                log.append((i, store.clock.now(), op, offset, length, dt))
                return dt

            store.charge = recorded

    run_sim(SimConfig(disk_model=model, workload=CASES[0][1], requests=requests, seed=seed, no_data=True), observe=observe)
    spec = parse_model(model)
    clock = _ReplayClock()
    fresh = [spec.wrap(NullStore(size, name=f"disk{i}"), clock) for i, size in enumerate(sizes)]
    charges = [(fresh[i].charge, t, op, offset, length) for i, t, op, offset, length, _ in log]
    got = []
    started = time.perf_counter()
    for charge, t, op, offset, length in charges:
        clock.t = t
        got.append(charge(op, offset, length))
    wall = time.perf_counter() - started
    if got != [dt for *_, dt in log]:
        raise RuntimeError("the replayed model charged other times than in the run")
    return {"model": model, "requests": requests, "member_requests": len(log), "requests_per_s": requests / wall}


def profile(model: str, workload: str, requests: int, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    run_sim(SimConfig(disk_model=model, workload=workload, requests=requests))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=20_000, help="host requests per case (default 20000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the median is reported (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", type=int, metavar="TOP", default=0,
                    help="also profile the hdd closed-loop case and print the TOP functions")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    ap.add_argument("--floor-requests", type=int, default=100_000,
                    help="host writes of each heapq-floor run; one runs just before and one just after every "
                         "closed-loop, one-outstanding vraid run (default 100000)")
    ap.add_argument("--no-data", action="store_true", help="also run the cases in metadata-only mode")
    ap.add_argument("--only-floor-case", action="store_true",
                    help="run only the closed-loop, one-outstanding case (the one compared with the floor)")
    args = ap.parse_args(argv)
    cases = CASES[:1] if args.only_floor_case else CASES
    variants = [False, True] if args.no_data else [False]

    run_sim(SimConfig(requests=50))  # warm up imports and caches (seek-curve fit)
    run_floor(1000)
    rows = []
    print(f"vraid sim speed: random 4 KiB writes, RAID-5 5 disks, strip 64K; {args.requests:,} requests per case")
    print(f"{'case':30} {'model':24} {'req/s':>9} {'virtual s':>10} {'floor/s':>9} {'vraid/floor':>12}")
    for label, workload in cases:
        for no_data in variants:
            for model in MODELS:
                paired = args.floor_requests if workload == CASES[0][1] else 0
                row = measure(model, workload, args.requests, args.repeat, args.seed, no_data, paired) | {"case": label}
                rows.append(row)
                name = model + (" no-data" if no_data else "")
                extra = ""
                if paired:
                    ratio = row["ratio_to_floor"]
                    extra = f" {round(statistics.median(row['floor_rates'])):>9,} {ratio:>8.4f} = 1/{1 / ratio:.0f}"
                print(f"{label:30} {name:24} {row['requests_per_s']:>9,} {row['virtual_seconds']:>10.3f}{extra}")
    print()
    ratios = {}
    for row in rows:
        if "ratio_to_floor" in row:
            name = row["model"] + (" no-data" if row["no_data"] else "")
            ratios[name] = row["ratio_to_floor"]
            verdict = ""
            if row["model"] == MODELS[0]:
                verdict = f"  (target >= {FLOOR_TARGET}: {'PASS' if ratios[name] >= FLOOR_TARGET else 'MISS'})"
            print(f"vraid/floor, {name:24} {ratios[name]:.4f}  = 1/{1 / ratios[name]:.0f}{verdict}")
    # where the hdd ratio goes: the model's own share, measured paired with the floor as above
    alone_ratios = []
    for _ in range(args.repeat):
        before = floor_rate(args.floor_requests, args.seed)
        alone = model_alone(MODELS[0], args.requests, args.seed)
        alone_ratios.append(alone["requests_per_s"] / ((before + floor_rate(args.floor_requests, args.seed)) / 2))
    alone["ratio_to_floor"] = statistics.median(alone_ratios)
    ratio = alone["ratio_to_floor"]
    print(f"{MODELS[0]} model alone (its member requests replayed, no engine) / floor: {ratio:.4f} = 1/{1 / ratio:.1f}")
    print()
    for label, _ in cases:
        hdd, none = (next(r for r in rows if r["case"] == label and r["model"] == m and not r["no_data"])
                     for m in MODELS)
        ratio = hdd["requests_per_s"] / none["requests_per_s"]
        verdict = "PASS" if hdd["requests_per_s"] >= TARGET else "MISS"
        print(f"{label:30} hdd/none {ratio:.2f}; hdd vs target {TARGET:,}/s: "
              f"{hdd['requests_per_s'] / TARGET:.2f} {verdict}")
    report = {"schema": 1, "python": platform.python_version(), "machine": platform.machine(),
              "target_requests_per_s": TARGET, "rows": rows, "floor_requests": args.floor_requests,
              "ratio_to_floor": ratios, "floor_target": FLOOR_TARGET, "model_alone": alone}
    if args.profile:
        text = profile(MODELS[0], CASES[0][1], args.requests, args.profile)
        print("\n" + text)
        report["profile"] = text
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
