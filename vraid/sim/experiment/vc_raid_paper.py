"""Seed 002's numbers the ``vc-raid`` experiment compares with (He & Yang, VC-RAID, section 4:
Table 2 and Fig. 7), kept apart so the report and its prose both read them without importing
each other."""

from __future__ import annotations

import math
from typing import Any

#: Table 2: size -> config -> TPS
TABLE2: dict[str, dict[str, float]] = {"small": {"raid0": 1111, "scd": 941, "raid5": 561},
                                       "medium": {"raid0": 68, "scd": 63, "raid5": 30},
                                       "large": {"raid0": 31, "scd": 28, "raid5": 16}}
#: Fig. 7, synchronous mode: (config, program) -> RAID-5 time / config time
FIG7_SYNC: dict[tuple[str, str], float] = {("mcd", "untar"): 5.0, ("mcd", "remove"): 16.0, ("mcd", "copy"): 4.2,
                                           ("scd", "untar"): 2.8, ("scd", "remove"): 3.9, ("scd", "copy"): 2.3}
PROGRAMS = ("untar", "copy", "remove")


def number(value: Any) -> float | None:
    """A measured value as a float, None when it was not measured (missing, text or NaN)."""
    return float(value) if isinstance(value, (int, float)) and not math.isnan(value) else None

#: Fig. 7, asynchronous mode (sec. 4.3.2): "The performance improvements range from a factor of
#: 2.5 (Figure 7c) to 7.9 (Figure 7b)", program -> RAID-5 time / VC-RAID time; the text gives the
#: two ends of the range only, without the configuration: vraid judges them on the better of scd and mcd
FIG7_ASYNC: dict[str, float] = {"copy": 2.5, "remove": 7.9}
#: Fig. 8a (sec. 4.3.3), Bonnie block write: "The performance gains of scd and mcd over RAID5 are 2.4
#: and 3.65"; "the performance of mcd [is] comparable to that of RAID0"
BONNIE_WRITE: dict[str, float] = {"scd": 2.4, "mcd": 3.65}
#: Fig. 8b, Bonnie random seeks: "the performance of RAID5, VC-RAID and RAID0 are very close" (no
#: number printed: judged as a ratio of 1 with the tolerance band)
BONNIE_SEEK_CLOSE = 1.0
#: Bonnie's data set in the paper: "The size of the data set is 100M bytes"
BONNIE_MB = 100
#: the claims of sec. 4.3.1 (ServerBench 4.1, Figs. 4-6), which vraid does not run: (item, paper, unit)
SERVERBENCH: tuple[tuple[str, float, str], ...] = (
    ("ServerBench TPS: VC-RAID over RAID-5, up to (Fig. 4; sec. 1 'up to a factor of 3'; sec. 4.3.1: mcd "
     "'more than tripled' at write ratio 0.9)", 3.0, "x"),
    ("ServerBench TPS, write ratio 0.1: VC-RAID, RAID-0 and RAID-5 'very close' (Fig. 4a)", 1.0, "x"),
    ("ServerBench TPS, write ratio 0.5: mcd / RAID-5 (Fig. 4b, 'doubled')", 2.0, "x"),
    ("ServerBench, 1 KB requests: mcd ahead of scd (Figs. 4b, 4c)", 1.0, "yes/no"),
    ("ServerBench TPS, write ratio 0.5: mcd / RAID-0 (Fig. 4b, 'about 80 %')", 0.8, "x"),
    ("ServerBench TPS, write ratio 0.9: mcd / RAID-0 (Fig. 4c, 'over 90 %')", 0.9, "x"),
    ("ServerBench, 0.5 KB requests: the scd-mcd gap is smaller than at 1 KB (Fig. 5)", 1.0, "yes/no"),
    ("ServerBench TPS: the best RAM buffer size (Fig. 6, '4 MB RAM buffer gives optimal performance')", 4.0, "MB"),
)
SERVERBENCH_REASON = ("ServerBench 4.1 (ZD Inc., 2000) is a discontinued client/server benchmark whose "
                      "clients ran on Windows 98 PCs over a network; it is not available and vraid has no stand-in "
                      "for its transaction mix")
