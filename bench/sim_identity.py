"""Is ``vraid sim --json`` byte-identical to another commit's on a fixed set of settings?

A refactor of the engine must not change what a simulation does: same plans, same order of
tasks, same metrics. This runs ``vraid sim --json`` for every setting in :data:`SETTINGS` in
this tree and in a checkout of ``--ref`` (a ``git worktree`` made in a temporary folder and
removed afterwards), and prints one line per setting: ``same`` or ``DIFFERS`` with the first
differing JSON path. Exit status 1 when any setting differs.

    .venv/bin/python bench/sim_identity.py --ref 5e6a29a          # every setting
    .venv/bin/python bench/sim_identity.py --ref HEAD~3 -k log    # settings whose name has "log"

The reference runs with this tree's ``.venv`` but its own source (``PYTHONPATH`` set to the
checkout's folders as they install), so nothing is installed for it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: name -> arguments of ``vraid sim`` (each small: the set runs in about a minute per tree)
SETTINGS: dict[str, list[str]] = {
    "wt-hdd": ["--requests", "1500"],
    "wt-none": ["--disk-model", "none", "--requests", "3000"],
    "wt-ssd": ["--disk-model", "ssd", "--requests", "2000"],
    "wt-3disks": ["--disks", "3", "--requests", "1500"],
    "wt-6disks-threads": ["--disks", "6", "--requests", "1500", "--workload", "random-write:threads=4"],
    "wt-raid0": ["--level", "0", "--requests", "1500"],
    "wt-open-loop": ["--requests", "1500", "--workload", "random-write:iat=2ms"],
    "wt-no-data": ["--requests", "2000", "--no-data"],
    "wt-seq-1m": ["--requests", "300", "--workload", "sequential:op=write,size=1M,streams=2"],
    "wt-page-cache": ["--requests", "1500", "--workload", "page-cache:of=random-write:size=4K,dirty=1M"],
    "reads": ["--requests", "1500", "--workload", "random-read"],
    "reads-none": ["--disk-model", "none", "--requests", "3000", "--workload", "random-read:size=16K"],
    "fault": ["--requests", "1500", "--fault", "disk2:eio=2000-2100"],
    "fault-reads": ["--requests", "1500", "--workload", "random-read", "--fault", "disk1:eio=0-100000"],
    "bitmap": ["--requests", "1500", "--bitmap-chunk", "1M"],
    "clook": ["--requests", "1500", "--queue-order", "clook", "--workload", "random-write:outstanding=8"],
    "pbg-hlwm": ["--requests", "3000", "--cache", "pbg", "--cache-size", "4M"],
    "stripe-adaptive": ["--requests", "3000", "--cache", "stripe", "--cache-size", "4M", "--destage", "adaptive"],
    "stripe-cscan-lt": ["--requests", "3000", "--cache", "stripe", "--cache-size", "4M", "--destage-order", "cscan",
                        "--destage", "lt"],
    "stripe-msc": ["--requests", "3000", "--cache", "stripe", "--cache-size", "4M", "--ct", "msc"],
    "pbg-msc-none": ["--disk-model", "none", "--requests", "3000", "--cache", "pbg", "--cache-size", "2M", "--ct", "msc"],
    "stripe-stride": ["--requests", "400", "--cache", "stripe", "--workload", "stride:stride=3"],
    "stripe-nvram": ["--requests", "2000", "--cache", "stripe", "--cache-size", "4M", "--nvram", "{tmp}/nv"],
    "cache-reads": ["--requests", "2000", "--cache", "stripe", "--cache-size", "4M", "--workload", "random-read"],
    "msc-wt": ["--requests", "1500", "--ct", "msc"],
    "prefetch-msp": ["--requests", "1500", "--workload", "sequential:streams=2", "--prefetch", "msp",
                     "--read-cache-size", "8M"],
    "readahead": ["--requests", "600", "--workload", "readers:streams=2", "--host-readahead", "saseqp"],
    "log-scd": ["--requests", "2000", "--log", "scd"],
    "log-mcd": ["--requests", "2000", "--log", "mcd:2"],
    "log-mirrored-cache": ["--requests", "2000", "--log", "mirrored", "--cache", "stripe", "--cache-size", "4M"],
    "log-per-disk": ["--requests", "2000", "--log", "per-disk"],
    "multibuffer": ["--requests", "2000", "--strip", "4K", "--placement", "multibuffer"],
    "dpsr": ["--requests", "2000", "--strip", "4K", "--placement", "dpsr"],
    "multibuffer-none": ["--disk-model", "none", "--requests", "3000", "--strip", "4K", "--placement", "multibuffer"],
}


def run_all(python: str, env: dict[str, str], names: list[str], tmp: str) -> dict[str, str]:
    """name -> stdout of ``vraid sim --json`` (or ``ERROR: ...`` with the exit status and stderr's end)."""

    def one(name: str) -> tuple[str, str]:
        args = [a.replace("{tmp}", f"{tmp}/{name}") for a in SETTINGS[name]]
        os.makedirs(f"{tmp}/{name}", exist_ok=True)
        proc = subprocess.run([python, "-m", "vraid", "sim", "--json", *args], capture_output=True, text=True, env=env,
                              cwd=tmp)  # not the repository: its vraid/ folder would come first
        if proc.returncode:
            return name, f"ERROR: exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
        return name, proc.stdout

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, names))


def first_difference(a, b, path: str = "") -> str:
    """The first JSON path where ``a`` and ``b`` differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'this tree' if key in a else 'the reference'}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path or '.'}: {str(a)[:80]} (this tree) vs {str(b)[:80]} (reference)"


def source_path(tree: Path, shim: Path) -> str:
    """A PYTHONPATH folder that imports ``tree``'s source as vraid installs it (pyproject's
    package-dir: ``backends``, ``policies`` and ``labs`` become ``vraid.backends`` ...): a
    ``vraid`` folder of symbolic links. It comes before the editable install's finder."""
    pkg = shim / "vraid"
    pkg.mkdir(parents=True)
    for entry in (tree / "vraid").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for folder in ("backends", "policies", "labs"):
        (pkg / folder).symlink_to(tree / folder)
    return str(shim)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="the commit to compare with (e.g. main, HEAD~1, a hash)")
    ap.add_argument("-k", default="", help="only settings whose name contains this")
    args = ap.parse_args(argv)
    names = [n for n in SETTINGS if args.k in n]
    python = str(REPO / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="sim-identity-") as tmp:
        ref = Path(tmp) / "ref"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(ref), args.ref], check=True)
        try:
            here = run_all(python, dict(os.environ), names, f"{tmp}/files")
            env = dict(os.environ, PYTHONPATH=source_path(ref, Path(tmp) / "shim"))
            there = run_all(python, env, names, f"{tmp}/files")  # the same paths: they are in the output
            probe = subprocess.run([python, "-c", "import os, vraid.engine; print(os.path.realpath(vraid.engine.__file__))"],
                                   capture_output=True, text=True, env=env, cwd=tmp)
            if not probe.stdout.startswith(str(ref)):
                raise SystemExit(f"the reference did not import its own source: {probe.stdout or probe.stderr}")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(ref)], check=False)
    differs = 0
    for name in names:
        a, b = here[name], there[name]
        if a.startswith("ERROR") or b.startswith("ERROR"):
            differs += 1
            print(f"ERROR    {name}: this tree: {a[:300] if a.startswith('ERROR') else 'ran'}; "
                  f"reference: {b[:300] if b.startswith('ERROR') else 'ran'}")
            continue
        if a == b:
            print(f"same     {name}")
            continue
        differs += 1
        try:
            where = first_difference(json.loads(a), json.loads(b))
        except ValueError:
            where = f"{a[:200]!r} vs {b[:200]!r}"
        print(f"DIFFERS  {name}: {where}")
    print(f"{len(names) - differs} of {len(names)} settings byte-identical to {args.ref}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
