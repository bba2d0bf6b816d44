"""CLI commands of the simulation side: ``models``, ``sim``, ``experiment``.

All three run in virtual time (or not at all): nothing here mounts anything. Errors a user
can act on are :class:`~vraid.errors.VraidError`; ``vraid.cli.main.main`` prints them and exits 1.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from vraid.errors import VraidError


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the simulation subcommands on the ``vraid`` parser."""
    from vraid.cli.main import _geometry_args, _size
    from vraid.sim.workload import workloads_help

    p = sub.add_parser("models", help="list the disk timing models (--disk-model presets)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser(
        "sim", help="simulate the array under a workload in virtual time (no mount, no real waiting)",
        description="Run the controller over in-memory members behind a disk timing model, driven by a "
                    "workload, in virtual time. Same settings, same output, byte for byte.",
        epilog="workloads (--workload NAME[:key=value,...]):\n" + workloads_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _geometry_args(p, disk_size=False)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=_size("disk size"), help="size of each member (default 64M)")
    size.add_argument("--capacity", type=_size("capacity"), help="array capacity instead (rounded up to whole stripes)")
    p.add_argument("--disk-model", default="hdd:st373454lc",
                   help="member timing model: none, hdd[:PRESET][,key=value...], ssd[:...] (see `vraid models`; "
                        "default hdd:st373454lc)")
    p.add_argument("--workload", default="random-write", help="NAME[:key=value,...] (listed below; default random-write)")
    p.add_argument("--requests", "--count", dest="requests", type=int, default=10_000,
                   help="host requests to issue (default 10000; finite workloads may end sooner)")
    p.add_argument("--seed", type=int, default=0, help="seed of the workload and the write data (default 0)")
    p.add_argument("--max-in-flight", type=int, default=4096,
                   help="open loop: requests running at once before arrivals wait (default 4096)")
    p.add_argument("--json", action="store_true", help='print {"config": ..., "metrics": ...} as JSON')
    p.add_argument("--fault", action="append", default=[], metavar="DISK:KEY=VALUE[,...]",
                   help="inject failures into a member (repeatable; as on vraid mount, docs/crash-and-scrub.md); "
                        "failed host requests count as host_errors")
    p.add_argument("--bitmap-chunk", metavar="SIZE|none", default=None,
                   help="run the write-intent bitmap on the members, SIZE of data per bit as `vraid create` takes "
                        "it (default none: no bitmap, as before; docs/simulator.md)")
    g = p.add_argument_group("write cache (docs/cache.md)")
    g.add_argument("--cache", choices=("none", "pbg", "stripe"), help="none (write-through, default), pbg or stripe")
    g.add_argument("--cache-size", metavar="SIZE", help="write cache size (default 64M)")
    g.add_argument("--destage", metavar="NAME[:k=v,...]", help="hlwm (default), adaptive, lt, pi, idle, or pkg.mod:Class")
    g.add_argument("--destage-order", choices=("lrw", "lru", "fifo", "cscan"), help="default lrw")
    g.add_argument("--ct", metavar="SPEC", help="contiguity transform: none (default) or "
                   "msc[:sr_max=N,sw_max=N,sr_except=a-b;c-d,sw_except=a-b] (seed 000 Fig. 10; limits default "
                   "to the disk model's preset, docs/ct.md)")
    g.add_argument("--nvram", metavar="FILE", help="the cache journals every dirty block into this NVRAM file, as a "
                   "mount's --nvram does (made anew; costs no virtual time; docs/simulator.md)")
    p.set_defaults(func=cmd_sim)

    from vraid.sim.experiment import names

    p = sub.add_parser(
        "experiment", help="reproduce a figure of the seed papers (`vraid experiment list`)",
        description="Run an experiment's independent runs in parallel processes and write "
                    "DIR/results.json, DIR/results.md and DIR/*.png.",
    )
    p.add_argument("name", metavar="NAME", help=f"experiment to run, or `list` ({', '.join(names())})")
    p.add_argument("--out", type=Path, help="output directory (default results/NAME)")
    p.add_argument("--quick", action="store_true", help="a smaller run of the same shape (under a minute)")
    p.add_argument("--jobs", type=int, help="worker processes (default: CPUs available)")
    p.set_defaults(func=cmd_experiment)


def _console():
    from vraid.cli.main import console

    return console


# -- models -----------------------------------------------------------------------
def cmd_models(args) -> int:
    from vraid.backends.models import describe_presets, format_models_table

    if args.json:
        print(json.dumps(describe_presets(), indent=2))
    else:
        _console().print(format_models_table())
    return 0


# -- sim --------------------------------------------------------------------------
def _policies(args) -> dict[str, str]:
    """The policy flags given on the command line, as SimConfig.policies."""
    flags = {"cache": args.cache, "cache_size": args.cache_size, "destage": args.destage, "destage_order": args.destage_order,
             "ct": args.ct}
    return {k: v for k, v in flags.items() if v is not None}


def sim_config(args):
    """The SimConfig of `vraid sim`'s parsed arguments (also what `vraid top --sim` runs)."""
    from vraid.sim.simulator import SimConfig

    if args.requests < 0:
        raise VraidError(f"--requests {args.requests} is negative", "ask for zero or more requests")
    return SimConfig(level=args.level, disks=args.disks, strip=args.strip, block=args.block, layout=args.layout,
                     disk_size=args.disk_size, capacity=args.capacity, disk_model=args.disk_model,
                     workload=args.workload, requests=args.requests, seed=args.seed,
                     max_in_flight=args.max_in_flight, policies=_policies(args), faults=tuple(args.fault),
                     nvram=args.nvram, bitmap_chunk=args.bitmap_chunk)


def cmd_sim(args) -> int:
    from vraid.sim.simulator import run_sim

    result = run_sim(sim_config(args))
    if args.json:
        print(result.to_json())
        return 0
    for table in sim_tables(result.to_dict(), result.wall_seconds):
        _console().print(table)
    return 0


#: (key, label, unit/format) of the text output, in groups
_GROUPS: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("host", [("host_reads", "reads", "d"), ("host_writes", "writes", "d"), ("host_flushes", "flushes", "d"),
              ("host_bytes", "bytes", "size"), ("virtual_seconds", "virtual time", "s"),
              ("throughput_mb_s", "throughput", "MB/s"), ("iops", "requests/s", "f1"),
              ("mean_response_ms", "mean response", "ms"), ("p99_response_ms", "p99 response", "ms"),
              ("max_response_ms", "max response", "ms"), ("max_outstanding", "most requests in flight", "d"),
              ("throttled", "arrivals delayed (in-flight limit)", "d"),
              ("host_errors", "requests failed (injected faults)", "d")]),
    ("cache", [("read_hit_ratio", "read hit ratio (no cache yet)", "f3"),
               ("overwrite_ratio", "overwrite ratio (no cache yet)", "f3")]),
    ("members", [("disk_read_requests", "read requests", "d"), ("disk_write_requests", "write requests", "d"),
                 ("disk_read_blocks", "blocks read", "d"), ("disk_write_blocks", "blocks written", "d"),
                 ("disk_requests_per_host_request", "member requests per host request", "f2"),
                 ("pbg_rmw", "PBGs by read-modify-write", "d"), ("pbg_rcw", "PBGs by reconstruct-write", "d"),
                 ("pbg_full", "PBGs full-stripe", "d")]),
    ("disk model", [("seeks", "seeks", "d"), ("mean_seek_ms", "mean seek", "ms"),
                    ("rotation_waits", "rotational waits", "d"), ("missed_rotations", "missed rotations", "d"),
                    ("disk_cache_hits", "on-board cache hits", "d")]),
]


def _fmt(value: Any, kind: str) -> str:
    from vraid.core.units import format_size

    if isinstance(value, list):
        return " ".join(_fmt(v, kind) for v in value)
    if kind == "d":
        return f"{value:,}"
    if kind == "size":
        return f"{value:,} ({format_size(value)})" if value else "0"
    if kind == "s":
        return f"{value:.6g} s"
    if kind == "ms":
        return f"{value:.3f} ms"
    if kind == "MB/s":
        return f"{value:.3f} MB/s"
    return f"{value:.{kind[1:]}f}"


def sim_tables(result: dict[str, Any], wall_seconds: float | None = None) -> list:
    """Rich tables of one ``vraid sim`` result (``SimResult.to_dict()``)."""
    from rich.table import Table

    from vraid.sim.simulator import SimConfig, describe_config

    cfg = result["config"]
    m = result["metrics"]
    known = {f for f in SimConfig.__dataclass_fields__}
    title = describe_config(SimConfig(**{k: v for k, v in cfg.items() if k in known}))
    t = Table(title=f"vraid sim: {title}", title_justify="left", show_header=False)
    t.add_column("group", style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for group, rows in _GROUPS:
        first = True
        for key, label, kind in rows:
            if key not in m:
                continue
            t.add_row(group if first else "", label, _fmt(m[key], kind))
            first = False
        t.add_section()
    caption = f"workload {cfg['workload']}, {cfg['requests']:,} requests, seed {cfg['seed']}"
    if wall_seconds:
        caption += f"; {wall_seconds:.2f} s wall time"
    t.caption = caption
    d = Table(title="per member", title_justify="left")
    for col in ("disk", "busy", "requests", "max queue", "missed rotations"):
        d.add_column(col, justify="right")
    missed = m.get("disk_missed_rotations", ["-"] * len(m["disk_busy"]))
    for i, (busy, reqs, q, mr) in enumerate(zip(m["disk_busy"], m["disk_requests"], m["disk_max_queue"], missed)):
        d.add_row(str(i), f"{busy:.1%}", f"{reqs:,}", str(q), str(mr))
    return [t, d]


# -- experiment -------------------------------------------------------------------
def cmd_experiment(args) -> int:
    from vraid.sim.experiment import get, names

    console = _console()
    if args.name == "list":
        from rich.table import Table

        t = Table(title="experiments (vraid experiment NAME)", title_justify="left")
        t.add_column("name")
        t.add_column("reproduces")
        for name in names():
            t.add_row(name, get(name).describe())
        console.print(t)
        return 0
    module = get(args.name)  # unknown name: VraidError before anything runs
    from vraid.sim.experiment.runner import run_experiment

    out = args.out if args.out is not None else Path("results") / args.name
    done = run_experiment(args.name, out, quick=args.quick, jobs=args.jobs)
    summary = getattr(module, "summary", None)
    if summary is not None:
        console.print(summary(done.results))
    console.print(f"{args.name}: {len(done.files)} files in {out} ({done.wall_seconds:.1f} s): "
                  + ", ".join(f.name for f in done.files), highlight=False)
    return 0
