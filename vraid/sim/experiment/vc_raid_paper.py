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
