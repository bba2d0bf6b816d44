"""Print the tables docs/performance.md records from a ``bench/run.py`` JSON file.

    .venv/bin/python bench/to_markdown.py bench/results.json

One table per vraid configuration (MB/s and IOPS of the passthrough and of
the configuration, the ratio, for a cache configuration also the ratio to
write-through, the target and the verdict), the daemons' CPU per request and
their memory, and the simulator's speed against the heapq floor, all as
``bench/run.py`` measured them in that one run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LABELS = {"seq-write": "seq write 1 MiB", "seq-read": "seq read 1 MiB", "rand-write": "rand write 4 KiB (48 MiB)",
          "rand-read": "rand read 4 KiB", "rand-write-4j": "rand write 4 KiB, 4 jobs", "rand-read-4j": "rand read 4 KiB, 4 jobs",
          "rand-write-qd16": "rand write 4 KiB, depth 16", "rand-read-qd16": "rand read 4 KiB, depth 16",
          "dbench": "dbench, 4 clients (MB/s)"}


def figure(row: dict, target: str, job: str) -> str:
    mb = row.get(f"{target}_mb_s")
    if mb is None:
        return "-"
    if job.startswith(("seq", "dbench")):
        return f"{mb:,.1f} MB/s"
    return f"{row.get(f'{target}_iops', 0):,.0f} IOPS"


def main(path: str) -> None:
    doc = json.loads(Path(path).read_text())
    rows = doc["comparison"]
    configs = [t for t in doc["settings"]["targets"] if t != "passthrough"]
    for target in configs:
        args = " ".join(doc["settings"].get("configs", {}).get(target, [])) or "write-through (--cache none)"
        cached = target != "vraid"
        print(f"\n{target}: `{args}`\n")
        head = "| route | job | passthrough | " + target + " | /pt |" + (" /wt |" if cached else "") + " target | verdict |"
        print(head)
        print("|---|---|--:|--:|--:|" + ("--:|" if cached else "") + "---|---|")
        for row in rows:
            r = row["ratios"].get(target)
            if r is None:
                continue
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
            wt = "" if not cached else (" - |" if r["to_write_through"] is None else f" {r['to_write_through']:.2f} |")
            want = f">= {r['target_ratio']}" if r["target_ratio"] else ""
            print(f"| {row['route']} | {LABELS.get(row['job'], row['job'])} | {figure(row, 'passthrough', row['job'])} | "
                  f"{figure(row, target, row['job'])} | {ratio} |{wt} {want} | {r['verdict']} |")
    print("\nDaemon CPU per request (us), median run:\n")
    series = doc["series"]
    targets = doc["settings"]["targets"]
    print("| route | job | " + " | ".join(targets) + " |")
    print("|---|---|" + "--:|" * len(targets))
    for row in rows:
        cells = []
        for t in targets:
            s = next((x for x in series if x["target"] == t and x["route"] == row["route"] and x["job"] == row["job"]), None)
            m = s["median"] if s else None
            if not m or not m.get("cpu_s") or not m["runtime_ms"] or not m["iops"]:
                cells.append("-")
                continue
            cells.append(f"{m['cpu_s'] / (m['iops'] * m['runtime_ms'] / 1000) * 1e6:,.0f}")
        if any(c != "-" for c in cells):
            print(f"| {row['route']} | {LABELS.get(row['job'], row['job'])} | " + " | ".join(cells) + " |")
    memory = doc.get("memory_kib") or {}
    if memory:
        print("\n| daemon | peak RSS (VmHWM) | RSS at the end | anonymous | file pages |")
        print("|---|--:|--:|--:|--:|")
        for t, m in memory.items():
            print(f"| {t} | {m.get('VmHWM', 0) / 1024:.0f} MiB | {m.get('VmRSS', 0) / 1024:.0f} MiB | "
                  f"{m.get('RssAnon', 0) / 1024:.0f} MiB | {m.get('RssFile', 0) / 1024:.0f} MiB |")
    sim = doc.get("sim_speed") or {}
    paired = [r for r in sim.get("rows", []) if "ratio_to_floor" in r]
    if paired:
        target = sim.get("floor_target", 0.1)
        print(f"\n`vraid sim` against the heapq floor (closed loop, one outstanding, {paired[0]['requests']:,} writes a run, "
              f"median of {len(paired[0]['rates'])} paired runs):\n")
        print("| `--disk-model` | vraid writes/s | floor writes/s | vraid/floor | target | verdict |")
        print("|---|--:|--:|--:|---|---|")
        for r in paired:
            name = r["model"] + (" `--no-data`" if r["no_data"] else "")
            ratio = r["ratio_to_floor"]
            counted = r["model"].startswith("hdd") and not r["no_data"]
            verdict = ("PASS" if ratio >= target else "MISS") if counted else "-"
            floor = sorted(r["floor_rates"])[len(r["floor_rates"]) // 2]
            print(f"| {name} | {r['requests_per_s']:,} | {floor:,} | {ratio:.4f} = 1/{1 / ratio:.0f} | "
                  f"{'>= ' + str(target) if counted else ''} | {verdict} |")
        alone = sim.get("model_alone")
        if alone:  # (runs of bench/sim_speed.py since 2026-11-26 late morning)
            ratio = alone["ratio_to_floor"]
            print(f"| {alone['model']} model alone (its member requests replayed, no engine) | "
                  f"{round(alone['requests_per_s']):,} |  | {ratio:.4f} = 1/{1 / ratio:.1f} |  | - |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parent / "results.json"))
