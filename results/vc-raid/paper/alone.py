"""Make the named runs of vc-raid's paper-size store one after another, alone (session 11).

`vraid experiment vc-raid --size paper` makes every run its store lacks for the code it runs.
When the code changes in the middle of a sweep (here: the cleanup fix of ``119b7db``, after
``1c58995`` had made 37 of the 39 runs), a checkout of the new code would remake all 39. This
script makes only the runs it is given, with the experiment's own specs (``specs_for``, the
paper size, no options), its own ``timed_run`` in the main thread, and its own ``RunStore``
under this checkout's code identity: the same key and record as the experiment's runner. The
report then reads the runs of both codes (``vraid experiment vc-raid --size paper --runs-of
1c58995,CODE``), naming which code made which runs.

Run it from the checkout whose code should make the runs, with nothing else on the machine::

    .venv/bin/python PATH/alone.py OUT_DIR raid5-fig7-8 raid0-fig7-8
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from vraid.sim.experiment import vc_raid
from vraid.sim.experiment.sizes import specs_for
from vraid.sim.experiment.store import RunStore, code_identity
from vraid.sim.experiment.task import timed_run


def main(out: Path, ids: list[str]) -> None:
    specs = {s["id"]: s for s in specs_for(vc_raid, "vc-raid", "paper", {})}
    unknown = [i for i in ids if i not in specs]
    if unknown or not ids:
        raise SystemExit(f"alone.py: no such run {unknown or '(none given)'}; the runs are {', '.join(specs)}")
    store = RunStore(out, "vc-raid", code_identity())
    print(f"alone: code {code_identity()}", flush=True)
    for run_id in ids:
        spec = specs[run_id]
        if store.load(spec) is not None:
            print(f"alone: {run_id} is stored already", flush=True)
            continue
        print(f"alone: {run_id} starts {time.strftime('%H:%M:%S')}", flush=True)
        rec = timed_run(vc_raid.__name__, spec)
        store.save(spec, rec["output"], worker=f"alone:{rec['worker']}", seconds=rec["seconds"])
        print(f"alone: {run_id} stored, {rec['seconds']:.0f} s, {time.strftime('%H:%M:%S')}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
