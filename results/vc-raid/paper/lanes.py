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


def main(out: Path) -> None:
    specs = specs_for(vc_raid, "vc-raid", "paper", {})
    store = RunStore(out, "vc-raid", code_identity())
    while not (HERE / "STOP").exists():
        spec = claim(out, specs, store)
        if spec is None:
            break
        print(f"lane {os.getpid()}: {spec['id']} starts {time.strftime('%H:%M:%S')}", flush=True)
        rec = timed_run(vc_raid.__name__, spec)
        store.save(spec, rec["output"], worker=f"lane:{rec['worker']}", seconds=rec["seconds"])
        print(f"lane {os.getpid()}: {spec['id']} stored, {rec['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
