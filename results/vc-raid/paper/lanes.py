"""Make the PostMark rounds of vc-raid's paper-size store a few at a time (session 8).

`vraid experiment vc-raid` runs one run at a time (SERIAL), and its rounds at the paper's
size take about an hour each: some 24 hours in all. A PostMark round waits on the disk model
almost all the time (the floor ablation: RAID-0 with no disk time runs 2,333 TPS at medium
against 43 TPS with it, so the machine's own work is about 2 % of a transaction), so rounds of
different configurations can share the machine; bonnie++ and untar / copy / remove
(``CONFIG-fig7-8``), whose synchronous mode is the mount's own CPU, are left to the
experiment's own serial runner.

One lane is one process: it takes the first PostMark round (in the runner's order) that is
neither stored nor claimed by another lane, runs it with the experiment's own ``timed_run``
in its main thread (so SIGTERM tears the mount down as in ``vraid experiment``), and stores
it with the experiment's own ``RunStore``: the same key, the same record, the worker field
naming the lane's pid. A file ``STOP`` beside this one stops every lane before its next run.
Claims live in ``OUT_DIR/lanes.claims.json``: delete it before starting lanes afresh (a claim
of a lane that is gone blocks its run); a claim written by hand (any pid) keeps lanes off a
run, e.g. one that would not finish before the machine is needed.

Run from the checkout that made the store (its code is every record's ``code``)::

    .venv/bin/python results/vc-raid/paper/lanes.py OUT_DIR   # one lane; start N for N lanes

With ``--longest-first`` a lane takes the rounds of the configuration whose stored rounds took
longest first (the mean of its stored rounds' seconds; a configuration with none stored comes
first), so N lanes end close together (session 9: three RAID-5 rounds of 100 minutes beside
nine of 40-60).

The report is then written by ``vraid experiment vc-raid --size paper`` (which finds every
round stored and runs only the rest).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

from vraid.sim.experiment import vc_raid
from vraid.sim.experiment.sizes import specs_for
from vraid.sim.experiment.store import RunStore, code_identity
from vraid.sim.experiment.task import timed_run

HERE = Path(__file__).resolve().parent


def claim(out: Path, specs: list[dict], store: RunStore) -> dict | None:
    """The next round no lane has stored or claimed, claimed for this lane (under a lock)."""
    with open(out / "lanes.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        claims = out / "lanes.claims.json"
        taken = json.loads(claims.read_text()) if claims.exists() else {}
        for spec in specs:
            if spec.get("round") and spec["id"] not in taken and store.load(spec) is None:
                taken[spec["id"]] = os.getpid()
                claims.write_text(json.dumps(taken, indent=1) + "\n")
                return spec
    return None


def config_of(spec: dict) -> str:
    """The configuration a round belongs to: its id without the round (``raid5-r3`` -> ``raid5``)."""
    return spec["id"].rsplit("-r", 1)[0]


def longest_first(specs: list[dict], store: RunStore) -> list[dict]:
    """The specs, rounds of the slowest configuration (by its stored rounds' mean) first."""
    took: dict[str, list[float]] = {}
    for spec in specs:
        rec = store.load(spec) if spec.get("round") else None
        if rec is not None:
            took.setdefault(config_of(spec), []).append(rec["seconds"])
    mean = {c: sum(s) / len(s) for c, s in took.items()}
    return sorted(specs, key=lambda spec: -mean.get(config_of(spec), float("inf")))


def main(out: Path, order: str = "") -> None:
    specs = specs_for(vc_raid, "vc-raid", "paper", {})
    store = RunStore(out, "vc-raid", code_identity())
    if order == "--longest-first":
        specs = longest_first(specs, store)
    elif order:
        raise SystemExit(f"lanes.py: unknown option {order!r}; the only option is --longest-first")
    while not (HERE / "STOP").exists():
        spec = claim(out, specs, store)
        if spec is None:
            break
        print(f"lane {os.getpid()}: {spec['id']} starts {time.strftime('%H:%M:%S')}", flush=True)
        rec = timed_run(vc_raid.__name__, spec)
        store.save(spec, rec["output"], worker=f"lane:{rec['worker']}", seconds=rec["seconds"])
        print(f"lane {os.getpid()}: {spec['id']} stored, {rec['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
