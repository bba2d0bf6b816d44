"""A throwaway experiment for tests/test_experiment_mount_order.py: two runs for the pool and
one that "mounts" (spec ``"mount": True``); each output says which process ran it and when."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

NAME = "fake-mount"


def describe() -> str:
    return "test fixture: runs that mount go last, in the main process"


def runs(quick: bool) -> list[dict]:
    return [{"id": "pool-a"}, {"id": "mounts", "mount": True}, {"id": "pool-b"}]


def run(spec: dict) -> dict:
    time.sleep(0.05)
    return {"pid": os.getpid(), "at": time.monotonic_ns()}


def collect(results: list) -> dict:
    return {spec["id"]: out for spec, out in results}


def report(results: dict, out_dir: Path) -> list[Path]:
    md = Path(out_dir) / "results.md"
    md.write_text(json.dumps(results))
    return [md]
