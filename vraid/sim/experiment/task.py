"""One run of a sweep, wherever it runs: this process, a worker process of ``--jobs``, or a
Dask worker of ``--cluster``.

:func:`timed_run` imports the experiment's module by name (so only the name and the spec
travel to a worker, and the worker runs its own installed vraid), runs the spec, and
returns the output with where it ran, how long it took, and the code that ran it
(:func:`vraid.sim.experiment.store.code_identity`: the runner refuses an output of other code).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from typing import Any

from .store import code_identity


def worker_name() -> str:
    """This process as a worker: the Dask worker's address inside one, else host and pid."""
    distributed = sys.modules.get("distributed")  # imported in a Dask worker; never imported here
    if distributed is not None:
        try:
            return distributed.get_worker().address
        except ValueError:  # distributed is loaded, but this is not one of its workers
            pass
    return f"{socket.gethostname()}:{os.getpid()}"


def timed_run(module_path: str, spec: dict[str, Any], worker: str | None = None) -> dict[str, Any]:
    """``{"output": module.run(spec), "worker", "seconds", "code"}``."""
    module = importlib.import_module(module_path)
    started = time.perf_counter()
    output = module.run(spec)
    return {"output": output, "worker": worker or worker_name(), "seconds": time.perf_counter() - started,
            "code": code_identity()}


__all__ = ["timed_run", "worker_name"]
