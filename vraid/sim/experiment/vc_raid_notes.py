"""The prose of the ``vc-raid`` report: the set-up line and the causes, from the run's own numbers."""

from __future__ import annotations

from typing import Any


def setup(detail: dict[str, Any]) -> list[str]:
    runs = detail.get("runs", [])
    spec = runs[0]["spec"] if runs else {}
    tree = next((r.get("tree") for r in runs if r.get("tree")), {}) or {}
    creates = "; ".join(f"`{r['spec']['config']}`: `vraid create DIR {' '.join(r['spec']['create'])}`" for r in runs)
    pm = ", ".join(f"{s['name']} {s['files']} files / {s['transactions']} transactions"
                   for s in spec.get("postmark", []))
    return [
        f"Real mounts on this machine, one configuration after another: {creates}. Each is mounted with "
        f"`vraid mount --disk-model {detail.get('disk_model', '?')} --time real:{detail.get('time_scale', '?')}` "
        "(every member and cache disk behind the paper's DNES-318350 timing model, every modelled "
        f"millisecond taking {detail.get('time_scale', '?')} ms), attached to a loop device, `mkfs.ext4 -b 4096`, "
        "mounted with `noinit_itable` (no background inode-table zeroing during the measurements).",
        "",
        f"PostMark 1.51 (Debian), 1 KiB read/write blocks, seed 42, other settings default: {pm}. TPS = "
        "transactions / the transaction phase's wall time, timed from PostMark's progress output.",
        "",
        f"untar / copy / remove: `tar xf`, `cp -r`, `rm -rf` of {tree.get('source', '?')}: {tree.get('files', '?')} "
        f"files in {tree.get('dirs', '?')} directories, {tree.get('mb', '?')} MB ({tree.get('mean_kb', '?')} KB per "
        "file on average; the paper's tree: 12322 files in 952 directories, 122 MB, 9.9 KB), with ext4 remounted "
        "`-o sync` (the paper's synchronous mode).",
    ]


def notes(res: dict[str, Any], detail: dict[str, Any]) -> list[str]:
    out: list[str] = []
    runs = {r["config"]: r for r in detail.get("runs", []) if r.get("available", True) and r.get("postmark")}
    for name, r in runs.items():
        parts = []
        for size, p in r["postmark"].items():
            parts.append(f"{size}: {p['tps']:.0f} TPS, {p['ms_per_transaction']:.2f} ms per transaction, "
                         f"creation {p['create_seconds']:.1f} s, deletion {p['delete_seconds']:.1f} s")
        out.append(f"- {name}: " + "; ".join(parts))
    return out
