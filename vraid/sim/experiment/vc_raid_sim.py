"""The ``vc-raid`` experiment in virtual time (``--set sim=true``): PostMark-like runs in the simulator.

Beside the real mount, not instead of it: the ``postmark`` workload
(:mod:`vraid.sim.workload.postmark`: the pool and the create/delete + read/append transactions
as the block I/O of a simple filesystem, no page cache) on the same four
``hdd:dnes-318350`` members, in virtual time, for each of the three PostMark configurations.
TPS = transactions / the virtual time of the transaction phase (``phase=transactions``: the
pool is allocated but its creation is not replayed). untar / copy / remove need a filesystem
and are not simulated ("not available" in sim mode). scd and mcd need the simulator's log disk
(a ``log`` field of :class:`~vraid.sim.simulator.SimConfig`, as ``vraid sim --log``); when it
is not there they are "not available" with that reason.
"""

from __future__ import annotations

from typing import Any

#: configuration -> (RAID level, log spec or None)
SIM_CONFIGS: dict[str, tuple[int, str | None]] = {"raid0": (0, None), "raid5": (5, None), "scd": (5, "scd"),
                                                   "mcd": (5, "mcd:2")}


def log_supported() -> bool:
    from vraid.sim.simulator import SimConfig

    return "log" in SimConfig.__dataclass_fields__


def create_arg(create: list[str], flag: str) -> str | None:
    """The value ``vraid create`` is given for ``flag`` in an argument list, or None."""
    return create[create.index(flag) + 1] if flag in create else None


def sim_config(config: str, create: list[str], disk_model: str, workload: str, **extra: Any):
    """The :class:`~vraid.sim.simulator.SimConfig` of configuration ``config`` as its mount creates
    it (``create``: its ``vraid create`` arguments: the level, members, disk size and the log's size,
    the paper's 200 MB), driven by ``workload`` to its end; ``extra``: more SimConfig fields."""
    from vraid.core.units import parse_size
    from vraid.sim.simulator import SimConfig

    level, log = SIM_CONFIGS[config]
    if log is not None:
        extra = {"log": log, **({"log_size": size} if (size := create_arg(create, "--log-size")) else {}), **extra}
    return SimConfig(level=level, disks=4, disk_size=parse_size(create_arg(create, "--disk-size"), "disk size"),
                     disk_model=disk_model, workload=workload, requests=10**9, policies={}, **extra)


def run_sim_config(spec: dict[str, Any]) -> dict[str, Any]:
    """One configuration in the simulator: the three PostMark settings."""
    from vraid.sim.simulator import run_sim

    _, log = SIM_CONFIGS[spec["config"]]
    out: dict[str, Any] = {"config": spec["config"], "mode": "sim", "available": True}
    if log is not None and not log_supported():
        return {**out, "available": False,
                "reason": f"the simulator has no log disk yet (SimConfig has no `log`; `vraid sim --log {log}`)"}
    out["postmark"] = {}
    for s in spec["postmark"]:
        workload = f"postmark:files={s['files']},transactions={s['transactions']},phase=transactions"
        m = run_sim(sim_config(spec["config"], spec["create"], spec["disk_model"], workload)).metrics
        secs = m["virtual_seconds"]
        out["postmark"][s["name"]] = {**s, "tps": round(s["transactions"] / secs, 2) if secs else float("nan"),
                                      "ms_per_transaction": round(1000 * secs / s["transactions"], 3),
                                      "transaction_seconds": round(secs, 3), "create_seconds": 0.0,
                                      "delete_seconds": 0.0, "disk_write_requests": m.get("disk_write_requests"),
                                      "disk_read_requests": m.get("disk_read_requests")}
    return out


__all__ = ["SIM_CONFIGS", "create_arg", "log_supported", "run_sim_config", "sim_config"]
