"""Running a sweep's independent runs on a Dask distributed cluster (``--cluster``, issue 36 item 1).

The runs of an experiment are independent (each depends on its spec alone), so a sweep too
long for one machine is handed to Dask's scheduler (``dask.distributed.Client``), which
places each run on a free worker. ``ADDRESS`` is

* ``local:N``: a ``LocalCluster`` of N worker processes on this machine (one thread each,
  no dashboard), started here and stopped at the end;
* ``tcp://HOST:PORT`` (or ``tls://``): a scheduler already running (``dask scheduler``),
  with workers (``dask worker tcp://HOST:PORT``) on the machines that take part.

Only the experiment's module name and each run's spec travel (:func:`.task.timed_run`);
every worker runs the vraid installed on it, and reports which code that was: an output of
other code than this checkout's is refused, since it could not be byte-identical.

Runs that need root and real mounts (an experiment with ``SERIAL = True``: vc-raid; a spec with
``"mount": True``: msc-ct's mount part) ask for
the worker resource ``mount`` (:data:`MOUNT`): they go only to workers started with
``--resources mount=1``, one such worker per machine, so they run one at a time there as on
one machine. A scheduler with no such worker is refused before anything runs; ``local:N``
starts a single worker with the resource. Dask is optional: ``pip install 'vraid[cluster]'``.
"""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator

from vraid.errors import VraidError

from .task import timed_run

#: the worker resource a run that mounts asks for (``dask worker ADDRESS --resources mount=1``)
MOUNT = "mount"
#: how long to wait for the scheduler to answer and for its first worker
CONNECT_SECONDS = 20
_REMOTE = re.compile(r"^(tcp|tls)://[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


@dataclass(frozen=True)
class Address:
    """A parsed ``--cluster`` value: ``workers`` > 0 for ``local:N``, else ``url``."""

    text: str
    workers: int = 0
    url: str = ""

    @property
    def local(self) -> bool:
        return self.workers > 0


def parse_address(text: str) -> Address:
    """``local:N`` or ``tcp://HOST:PORT``.

    Raises:
        VraidError: for anything else.
    """
    hint = "use --cluster local:N (N workers on this machine) or --cluster tcp://HOST:PORT (a running dask scheduler)"
    if text.startswith("local:"):
        n = text[len("local:"):]
        if not n.isdigit() or int(n) < 1:
            raise VraidError(f"--cluster {text}: {n!r} is not a positive number of workers", hint)
        return Address(text, workers=int(n))
    if not _REMOTE.match(text):
        raise VraidError(f"--cluster {text!r} is not a cluster address", hint)
    return Address(text, url=text)


def require_distributed() -> ModuleType:
    """Dask's ``distributed``, or a :class:`VraidError` saying what to install."""
    try:
        import distributed
    except ImportError as exc:
        raise VraidError("--cluster needs Dask's distributed scheduler, which is not installed",
                         "pip install 'vraid[cluster]' (or leave out --cluster: --jobs N runs on this machine)") from exc
    return distributed


@contextmanager
def client_for(address: Address, *, serial: bool) -> Iterator[Any]:
    """A ``distributed.Client`` on ``address`` (a ``LocalCluster`` started and stopped here)."""
    distributed = require_distributed()
    if address.local:
        # a run that mounts shares the machine with no other: one worker, which offers the mount
        cluster = distributed.LocalCluster(
            n_workers=1 if serial else address.workers, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR, memory_limit=0,
            resources={MOUNT: 1} if serial else None)
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(address.url, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise VraidError(f"cannot reach a dask scheduler at {address.url}: {exc}",
                         "start one (`dask scheduler`) and give its address, or use --cluster local:N") from exc
    try:
        with client:
            try:
                client.wait_for_workers(1, timeout=CONNECT_SECONDS)
            except TimeoutError as exc:
                raise VraidError(f"the dask scheduler at {address.url} has no workers",
                                 f"start one: dask worker {address.url} --nthreads 1") from exc
            yield client
    finally:
        client.close()


def _check_mount_workers(client: Any, address: Address, name: str) -> None:
    workers = client.scheduler_info().get("workers", {})
    if not any(w.get("resources", {}).get(MOUNT) for w in workers.values()):
        raise VraidError(f"{name} mounts real arrays (root, FUSE, loop devices), and no worker of {address.url} "
                         f"offers the resource {MOUNT}",
                         f"on a machine that can mount, start one worker: dask worker {address.url} --nthreads 1 "
                         f"--resources {MOUNT}=1 (or run it without --cluster)")


def run_on_cluster(address: Address, module: ModuleType, name: str, specs: list[dict[str, Any]],
                   pending: list[int], identity: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Run ``specs[i]`` for each ``i`` of ``pending`` on the cluster; yields ``(i, record)``
    (:func:`.task.timed_run`'s dict) as each finishes, in the order they finish.

    Raises:
        VraidError: the cluster cannot be reached or cannot run the experiment, or a worker
            runs other code than ``identity``.
    """
    serial = bool(getattr(module, "SERIAL", False))
    mounts = serial or any(specs[i].get("mount") for i in pending)  # msc-ct's mount part: spec "mount"
    with client_for(address, serial=mounts) as client:
        if mounts and not address.local:
            _check_mount_workers(client, address, name)
        distributed = require_distributed()

        def resources(spec: dict[str, Any]) -> dict[str, int] | None:
            return {MOUNT: 1} if serial or spec.get("mount") else None

        futures = {client.submit(timed_run, module.__name__, specs[i], pure=False, resources=resources(specs[i]),
                                 key=f"vraid-{name}-{specs[i]['id']}-{i}-{identity[:8]}"): i for i in pending}
        for future in distributed.as_completed(futures):
            record = future.result()
            if record["code"] != identity:
                raise VraidError(f"worker {record['worker']} runs vraid code {record['code']}, this is {identity}",
                                 "install the same vraid (the same commit) on every worker")
            yield futures[future], record


__all__ = ["Address", "MOUNT", "client_for", "parse_address", "require_distributed", "run_on_cluster"]
