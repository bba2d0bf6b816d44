"""CLI commands of the simulation side: ``models``, ``sim``, ``experiment``.

All three run in virtual time (or not at all): nothing here mounts anything. Errors a user
can act on are :class:`~vraid.errors.VraidError`; ``vraid.cli.main.main`` prints them and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from vraid.errors import VraidError
from vraid.policies import registry

from .common import add_geometry_args, layout_of, size_type, add_policy_flags, console, policy_args


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the simulation subcommands on the ``vraid`` parser."""
    p = sub.add_parser("models", help="list the disk timing models (--disk-model presets)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("sim", **_SIM_PARSER)
    add_sim_arguments(p)
    p.set_defaults(func=cmd_sim)

    from vraid.sim.experiment import names

    p = sub.add_parser(
        "experiment", help="reproduce a figure of the seed papers (`vraid experiment list`)",
        description="Run an experiment's independent runs (here, in parallel processes, or on a Dask cluster) and "
                    "write DIR/results.json, DIR/results.md and DIR/*.png. Every finished run is kept under "
                    "DIR/runs/: the same command run again skips them and runs only the rest (docs/experiments.md).",
    )
    p.add_argument("name", metavar="NAME", help=f"experiment to run, or `list` ({', '.join(names())})")
    p.add_argument("--out", type=Path, help="output directory (default results/NAME, results/NAME/paper for "
                                            "--size paper where the paper's scale is not the default's; with --quick a scratch directory, vraid-quick-NAME in the "
                                            "temporary directory, so the committed full run is never overwritten)")
    p.add_argument("--size", metavar="quick|default|paper", default=None,
                   help="quick: a smaller run of the same shape (under a minute); default: the size results/NAME was "
                        "recorded at; paper: each paper's own scale (hours; see --estimate)")
    p.add_argument("--quick", action="store_true", help="the same as --size quick")
    p.add_argument("--jobs", type=int, help="worker processes on this machine (default: CPUs available)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run on Dask instead: local:N (a LocalCluster of N workers here) or tcp://HOST:PORT (a running "
                        "`dask scheduler`); needs pip install 'vraid[cluster]'")
    p.add_argument("--fresh", action="store_true", help="forget the runs finished by earlier sessions and start over")
    p.add_argument("--runs-of", metavar="COMMIT[,COMMIT...]",
                   help="a re-analysis: run nothing, and write the report with this code from the runs that "
                        "COMMIT's code stored under DIR/runs/ (every run of the sweep must be there); several commits, "
                        "comma-separated: each run from the first that stored it (a sweep made partly by one code, "
                        "partly by a later one); results.md and meta.json name every commit and the runs each made")
    p.add_argument("--fill", action="store_true",
                   help="with --runs-of: make the runs COMMIT did not store with this code, once it has remade the "
                        "stored run most like them with every number the same (refused for runs on a mount); results.md "
                        "names the runs made so")
    p.add_argument("--estimate", action="store_true",
                   help="run nothing: time a short calibration run here and print how long each size would take")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="options",
                   help="an option of the experiment's runs(), e.g. --set nw=1024 (adaptive-hlwm), "
                        "--set scale=32 (msc-ct), --set parts=fig11,more,mount (msc-ct on a real mount, root), "
                        "--set repeats=5 (vc-raid); numbers are read as numbers")
    p.set_defaults(func=cmd_experiment)


_SIM_PARSER = dict(
    help="simulate the array under a workload in virtual time (no mount, no real waiting)",
    description="Run the controller over in-memory members behind a disk timing model, driven by a "
                "workload, in virtual time. Same settings, same output, byte for byte.",
    formatter_class=argparse.RawDescriptionHelpFormatter,
)


def add_sim_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``vraid sim`` (also parsed by ``vraid top --sim``)."""
    from vraid.sim.workload import workloads_help

    p.epilog = "workloads (--workload NAME[:key=value,...]):\n" + workloads_help()
    add_geometry_args(p, disk_size=False)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=size_type("disk size"), help="size of each member (default 64M)")
    size.add_argument("--capacity", type=size_type("capacity"), help="array capacity instead (rounded up to whole stripes)")
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
    add_policy_flags(p.add_argument_group("policies (docs/cache.md, docs/ct.md; `vraid policies` lists them)"))
    p.add_argument("--bitmap-chunk", metavar="SIZE|none", default=None,
                   help="run the write-intent bitmap on the members, SIZE of data per bit as `vraid create` takes "
                        "it (default none: no bitmap, as before; docs/simulator.md)")
    p.add_argument("--nvram", metavar="FILE", help="the cache journals every dirty block into this NVRAM file, as a "
                   "mount's --nvram does (made anew; costs no virtual time; docs/simulator.md)")
    p.add_argument("--log-destage", metavar="NAME[:k=v,...]", default=None,
                   help="destage scheduler of level 2, log to array (default idle; `vraid policies` lists them)")
    p.add_argument("--on-policy-fault", choices=("stop", "fallback"), default="stop",
                   help="a policy that raises, answers out of its rules or stalls: stop the run with an error "
                        "(default), or go on with the family's default as a mount does (docs/policies.md)")
    p.add_argument("--host-readahead", metavar="none|seqp|saseqp[:max=SIZE,init=SIZE,antic=on|off|TIME]", default=None,
                   help="model the host's file read-ahead and page cache in front of each stream (paper 001, SASEQP/MSP): seqp = "
                        "Linux's read-ahead, saseqp = its windows cut at strip boundaries; max = largest window "
                        "(default 128K), init = first window (default Linux's rule), antic = the host's "
                        "anticipatory scheduler (on: Linux 2.6's 6 ms; default off); default none: requests go "
                        "straight to the array (docs/prefetch.md)")
    p.add_argument("--no-data", action="store_true",
                   help="metadata only: members store no bytes and no parity is computed; same plans, timing and "
                        "metrics, faster and with no memory per member (docs/simulator.md)")
    p.add_argument("--debug", action="store_true", help="print the traceback of a failing policy")
    p.set_defaults(func=cmd_sim)


def sim_parser() -> argparse.ArgumentParser:
    """A parser of ``vraid sim``'s options alone."""
    p = argparse.ArgumentParser(prog="vraid sim", **{k: v for k, v in _SIM_PARSER.items() if k != "help"})
    add_sim_arguments(p)
    return p


def _console():
    return console


# -- models -----------------------------------------------------------------------
def cmd_models(args) -> int:
    from vraid.backends.models import describe_presets

    if args.json:
        print(json.dumps(describe_presets(), indent=2))
    else:
        from vraid.tui.render import models_sources_table, models_table

        _console().print(models_table(describe_presets()))
        _console().print(models_sources_table(describe_presets()))
    return 0


# -- sim --------------------------------------------------------------------------
def _policies(args) -> dict[str, str]:
    """The policy flags given on the command line, as SimConfig.policies."""
    return {k: v for k, v in policy_args(args).items() if k in registry.settings(at_create=False)}


#: the most host requests one `vraid sim` run issues (one core simulates a few thousand a second)
MAX_REQUESTS = 1_000_000_000
#: runs of at least this many requests show a progress bar on a terminal
PROGRESS_FROM = 50_000


def check_sizes(config) -> None:
    """Refuse, before anything is allocated, a run that cannot fit or cannot finish: more
    requests than :data:`MAX_REQUESTS`, members (held in memory) larger than the memory
    available, or a write cache smaller than one stripe.

    Raises:
        VraidError: naming what the run would need.
    """
    from vraid.core.units import parse_size

    if config.requests < 0:
        raise VraidError(f"--requests {config.requests} is negative", "ask for zero or more requests")
    if config.requests > MAX_REQUESTS:
        days = config.requests / 3000 / 86400
        raise VraidError(f"--requests {config.requests:,} is more than one run simulates (at most {MAX_REQUESTS:,}): "
                         f"at the few thousand requests a second one core simulates it would run for about {days:,.0f} days",
                         "ask for fewer requests, e.g. --requests 100000")
    g = config.geometry()
    members = 0 if getattr(config, "no_data", False) else g.ndisks * g.member_size
    policies = config.policies
    cache = parse_size(policies["cache_size"], "cache size") if "cache_size" in policies else 0
    organisation = policies.get("cache", "none")
    if organisation != "none" and "cache_size" in policies and cache < g.stripe_data_bytes:
        raise VraidError(f"--cache-size {policies['cache_size']} is smaller than one stripe ({g.stripe_data_bytes:,} bytes): "
                         f"a {organisation} cache could not hold a single stripe",
                         "use a --cache-size of at least a few stripes, e.g. 64M (or --cache none for write-through)")
    need = members + (cache if organisation != "none" else 0)
    available = _available_memory()
    if available is not None and need > available * 0.8:
        raise VraidError(
            f"this run needs about {_human(need)} of memory ({g.ndisks} in-memory members of "
            f"{_human(g.member_size)}" + (f", a {_human(cache)} cache" if organisation != "none" else "")
            + f"), and {_human(available)} is available",
            "simulate a smaller array: --capacity or --disk-size of a few GB at most (e.g. --capacity 1G)",
        )


def _human(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.1f} MB"


def _available_memory() -> int | None:
    """MemAvailable of /proc/meminfo, bytes (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class _Progress:
    """A rich progress bar over host requests, fed from the running array's counters by a
    polling thread (the simulation runs in virtual time; the bar shows wall time)."""

    def __init__(self, total: int) -> None:
        import threading

        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.total = total
        self.array = None
        self.stop = threading.Event()
        self.bar = Progress(TextColumn("[bold]simulating"), BarColumn(), MofNCompleteColumn(), TextColumn("requests"),
                            TimeRemainingColumn(), console=_console(), transient=True)
        self.task = self.bar.add_task("sim", total=total)
        self.thread = threading.Thread(target=self._poll, name="vraid-sim-progress", daemon=True)

    def observe(self, array) -> None:
        self.array = array

    def _poll(self) -> None:
        while not self.stop.wait(0.2):
            a = self.array
            if a is not None:
                self.bar.update(self.task, completed=min(self.total, a.metrics.host_reads + a.metrics.host_writes))

    def __enter__(self) -> "_Progress":
        self.bar.start()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self.bar.stop()


def sim_config(args):
    """The SimConfig of `vraid sim`'s parsed arguments (also what `vraid top --sim` runs)."""
    from vraid.sim.simulator import SimConfig

    if args.requests < 0:
        raise VraidError(f"--requests {args.requests} is negative", "ask for zero or more requests")
    config = SimConfig(level=args.level, disks=args.disks, strip=args.strip, block=args.block, layout=layout_of(args),
                       disk_size=args.disk_size, capacity=args.capacity, disk_model=args.disk_model,
                       workload=args.workload, requests=args.requests, seed=args.seed,
                       max_in_flight=args.max_in_flight, policies=_policies(args), faults=tuple(args.fault),
                       nvram=args.nvram, bitmap_chunk=args.bitmap_chunk,
                       on_policy_fault=getattr(args, "on_policy_fault", "stop"),
                       host_readahead=_host_readahead(getattr(args, "host_readahead", None)),
                       no_data=getattr(args, "no_data", False), log=_log(getattr(args, "log", None)),
                       log_size=getattr(args, "log_size", None), log_destage=getattr(args, "log_destage", None))
    check_sizes(config)
    return config


def _log(text: str | None) -> str | None:
    """``--log`` checked now by the registry's log family (``none``: None, no log disk)."""
    return None if text is None or registry.parse("log", text).target is None else text


def _host_readahead(text: str | None) -> str | None:
    """``--host-readahead`` checked now (``none``: None, no host model)."""
    from vraid.sim.host import parse_readahead

    return None if parse_readahead(text) is None else text


def cmd_sim(args) -> int:
    from vraid.sim.simulator import run_sim

    from vraid.engine.guard import PolicyFault

    config = sim_config(args)
    seen: list = []  # the array the run used: its write cache's counters for the text output

    def keep(array) -> None:
        seen.append(array)

    try:
        if not args.json and config.requests >= PROGRESS_FROM and _console().is_terminal:
            with _Progress(config.requests) as progress:
                result = run_sim(config, observe=lambda array: (keep(array), progress.observe(array)))
        else:
            result = run_sim(config, observe=None if args.json else keep)
    except PolicyFault as exc:
        if getattr(args, "debug", False):
            print(exc.traceback, end="", file=sys.stderr)
        raise
    if args.json:
        print(result.to_json())
        return 0
    for table in sim_tables(result.to_dict(), result.wall_seconds, array=seen[0] if seen else None):
        _console().print(table)
    for fault in result.metrics.get("policy_faults", ()):
        _console().print("[bold yellow]policy fault:[/] " + escape(
            f"{fault['family']} {fault['policy']} failed in {fault['call']} at {fault['time']:.6g} s: "
            f"{fault['error']}; the run went on with {fault['fallback']}"), highlight=False)
    return 0


#: (key, label, unit/format) of the text output, in groups
_GROUPS: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("host", [("host_reads", "reads", "d"), ("host_writes", "writes", "d"), ("host_flushes", "flushes", "d"),
              ("host_bytes", "bytes", "size"), ("virtual_seconds", "virtual time", "s"),
              ("throughput_mb_s", "throughput", "MB/s"), ("iops", "requests/s", "f1"),
              ("mean_response_ms", "mean response", "ms"), ("p99_response_ms", "p99 response", "ms"),
              ("max_response_ms", "max response", "ms"), ("max_outstanding", "most requests in flight", "d"),
              ("throttled", "arrivals delayed (limit)", "d"),
              ("host_errors", "requests failed (injected faults)", "d")]),
    ("host read-ahead", [("host_readahead.label", "policy", "str"), ("host_readahead.file_read_bytes", "file bytes read", "size"),
                         ("host_readahead.file_mb_s", "file throughput", "MB/s"),
                         ("host_readahead.windows", "read-ahead windows", "d"),
                         ("host_readahead.crossing_windows", "windows crossing a strip", "d"),
                         ("host_readahead.shrunk_windows", "windows cut at a strip (SASEQP)", "d"),
                         ("host_readahead.wait_pages", "pages waited for (in flight)", "d")]),
    ("write cache", [("read_hit_ratio", "read hit ratio", "f3"),
                     ("overwrite_ratio", "overwrite ratio (blocks)", "f3")]),
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
    if kind == "str":
        return str(value)
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


def sim_tables(result: dict[str, Any], wall_seconds: float | None = None, *, array: Any = None) -> list:
    """Rich tables of one ``vraid sim`` result (``SimResult.to_dict()``); with the ``array`` the
    run used, its write cache's counters too (:mod:`vraid.cli.sim_report`)."""
    from rich.table import Table

    from vraid.sim.simulator import SimConfig, describe_config

    from .sim_report import drain_note, log_rows, placement_rows, policy_line, write_cache_rows

    cfg = result["config"]
    m = result["metrics"]
    known = {f for f in SimConfig.__dataclass_fields__}
    title = describe_config(SimConfig(**{k: v for k, v in cfg.items() if k in known}))
    t = Table(title=f"vraid sim: {title}\n{policy_line(cfg)}", title_justify="left", show_header=False)
    t.add_column("group", style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    cached = cfg.get("policies", {}).get("cache", "none") != "none"
    for group, rows in _GROUPS:
        if group == "write cache":
            extra = write_cache_rows(array)
            if extra:
                for i, (label, value) in enumerate(extra):
                    t.add_row(group if i == 0 else "", label, value)
                t.add_section()
                continue
            if not cached:
                continue
        first = True
        for key, label, kind in rows:
            head, _, sub = key.partition(".")
            value = m.get(head) if not sub else (m.get(head) or {}).get(sub)
            if value is None:
                continue
            t.add_row(group if first else "", label, _fmt(value, kind))
            first = False
        t.add_section()
    for group, extra in (("log disk", log_rows(m.get("log"))), ("placement", placement_rows(m.get("placement")))):
        for i, (label, value) in enumerate(extra):
            t.add_row(group if i == 0 else "", label, value)
        if extra:
            t.add_section()
    buffered = cached or bool(cfg.get("log"))  # write-through: the members' queues only, nothing to explain
    if buffered and m.get("drain_seconds"):
        t.add_row("drain", "after the last request", _fmt(m["drain_seconds"], "s"))
    caption = f"workload {cfg['workload']}, {cfg['requests']:,} requests, seed {cfg['seed']}"
    if wall_seconds:
        caption += f"; {wall_seconds:.2f} s wall time"
    note = drain_note(m) if buffered else ""
    t.caption = caption + (f"\n{note}" if note else "")
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
    from vraid.sim.experiment.sizes import check_size

    if args.quick and args.size not in (None, "quick"):
        raise VraidError(f"--quick and --size {args.size} both given", "--quick is --size quick: give one of them")
    size = check_size("quick" if args.quick else (args.size or "default"))
    from .sweep import default_out, paper_is_default, parse_set

    options = parse_set(getattr(args, "options", []))
    if args.estimate:
        from .sweep import print_estimate

        return print_estimate(args.name, options, jobs=args.jobs, cluster=args.cluster)
    if args.out is None and size == "paper" and paper_is_default(module, args.name):
        size_out = "default"  # the recorded results/NAME are the paper's scale already
    else:
        size_out = size
    out = args.out if args.out is not None else default_out(args.name, size_out)
    from .sweep import progress_bar

    try:
        with progress_bar(args.name) as progress:
            done = run_experiment(args.name, out, size=size, jobs=args.jobs, progress=progress, options=options,
                                  cluster=args.cluster, fresh=args.fresh, runs_of=args.runs_of,
                                  fill=args.fill)
    except KeyboardInterrupt:
        print(f"{args.name}: interrupted; the finished runs are kept in {out}/runs, and the same command "
              "continues with the rest", file=sys.stderr)
        return 130
    summary = getattr(module, "summary", None)
    if summary is not None:
        from vraid.tui.render import rich_table

        console.print(rich_table(summary(done.results)))
    resumed = f"; {done.resumed} of {done.resumed + done.ran} runs from an earlier session" if done.resumed else ""
    console.print(f"{args.name}: {len(done.files)} files in {out} ({done.wall_seconds:.1f} s{resumed}): "
                  + ", ".join(f.name for f in done.files), highlight=False)
    return 0
