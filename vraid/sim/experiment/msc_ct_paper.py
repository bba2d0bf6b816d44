"""Seed 000 Fig. 11's set-up and statements for experiment ``msc-ct`` (sec. IV-A, IV-B), and the
gains computed from a run, kept apart so the experiment and its report
(:mod:`vraid.sim.experiment.msc_ct_report`) both read them without importing each other."""

from __future__ import annotations

from typing import Any

BLOCK = 4096
GIB = 1 << 30
#: the paper's set-up (sec. IV-A, IV-B)
PAPER_CACHE = 512 << 20
PAPER_WRITES = 160_000
PAPER_DIRTY = int(0.4 * (GIB - PAPER_CACHE))  # host page cache dirty limit, see module doc
PAPER_WORKSPACES_GB = (1, 2, 4, 8)
DISK_MODEL = "hdd:st373454lc"
DISKS = 5
#: seed 000 does not print the strip size of Fig. 11; 64 KiB is the md default chunk of its
#: Linux 2.6.11 (Fig. 13(b) varies it from 8 to 256 KiB)
STRIP = 64 << 10
QUEUE = 64
#: the paper's PBGC is md's (sec. IV-A): rows destaged together and merged per member by the block
#: layer's elevator (``pbg:merge=true``); ``pbgc_rows`` is vraid's row-by-row PBGC, an ablation
POLICIES = {"pbgc": ("pbg:merge=true", "none"), "sc": ("stripe", "none"), "msc_ct": ("stripe", "msc"),
            "pbgc_rows": ("pbg", "none")}
#: the three the paper compares (``pbgc_rows`` is vraid's ablation)
PAPER_POLICIES = ("pbgc", "sc", "msc_ct")
NAMES = {"pbgc": "PBGC", "sc": "SC", "msc_ct": "MSC-CT", "pbgc_rows": "PBGC row by row"}
HOSTS = ("page-cache", "direct")
#: the paper's Fig. 11 statements, as gains (1.70 = +170 %)
PAPER = {"msc_ct_over_sc_1gb": 1.70, "msc_ct_over_pbgc_1gb": 2.20, "msc_ct_over_sc_8gb": 1.08,
         "sc_over_pbgc_8gb": 0.10}
#: the same as throughput ratios, with the two the statements imply (SC over PBGC at 1 GB is
#: 3.20 / 2.70; MSC-CT over PBGC at 8 GB is 2.08 x 1.10): (ratio key, workspace GB, paper ratio)
PAPER_RATIOS = (("msc_ct_over_sc", 1, 2.70), ("msc_ct_over_pbgc", 1, 3.20), ("sc_over_pbgc", 1, 3.20 / 2.70),
                ("msc_ct_over_sc", 8, 2.08), ("msc_ct_over_pbgc", 8, 2.08 * 1.10), ("sc_over_pbgc", 8, 1.10))
LABEL = {"msc_ct_over_sc": "MSC-CT over SC (the CT gain)", "msc_ct_over_pbgc": "MSC-CT over PBGC",
          "sc_over_pbgc": "SC over PBGC (the stripe cache's gain)"}

#: a run of the same experiment one command at a time (``tcq=off``) kept beside the headline run
#: (``--out results/msc-ct/one-command --set disk_model=hdd:st373454lc,tcq=off ...``)
ONE_COMMAND = "one-command"


def gains(results: dict[str, Any], host: str | None = None) -> dict[str, list[float]]:
    """Relative gains per workspace: msc_ct over sc, msc_ct over pbgc, sc over pbgc (0.5 = +50 %)."""
    s = results if host in (None, results.get("host")) else results[host]

    def g(a: str, b: str) -> list[float]:
        return [round(x / y - 1, 4) if y else 0.0 for x, y in zip(s[a], s[b])]

    return {"msc_ct_over_sc": g("msc_ct", "sc"), "msc_ct_over_pbgc": g("msc_ct", "pbgc"), "sc_over_pbgc": g("sc", "pbgc")}
