"""PostMark for the ``vc-raid`` experiment: its three configurations, its input and its output.

Seed 002 (He & Yang, VC-RAID) sec. 4.3.4 runs PostMark [Katcher 1997] "configured in three
different ways as in [KAT 99]": small = 1000 initial files and 50000 transactions, medium =
20000 / 50000, large = 20000 / 100000, "read and block sizes set to 1KB", everything else at
PostMark's defaults (files of 500 to 10000 bytes, no subdirectories, buffered stdio). This
module holds those settings (:data:`PAPER`, and :data:`QUICK`, the scaled-down ones of
``--quick``), writes the command file Debian's ``postmark`` (1.51) reads
(:func:`command_file`) and reads its report back (:func:`parse_report`).

PostMark's own times are whole seconds (``time()``), too coarse for a run of a few seconds,
so the experiment also times the transaction phase itself: :class:`PhaseClock` watches
PostMark's unbuffered progress output ("Performing transactions....Done") and notes when the
phase starts and ends; TPS = transactions / that time, the same quantity PostMark prints as
"seconds of transactions (N per second)".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: configuration name -> (initial files, transactions), sec. 4.3.4
PAPER: dict[str, tuple[int, int]] = {"small": (1000, 50000), "medium": (20000, 50000), "large": (20000, 100000)}
#: ``--quick``: a tenth of the files; small keeps 1/25 of its transactions (it runs from memory),
#: medium and large 1/33 (they wait for the disks: see vc_raid_bench.MemoryCap; fewer leave
#: a transaction phase of a second or two, shorter than ext4's 5 s commit interval, and the
#: TPS then depends on whether a commit happens to fall inside it). The shape stays: medium
#: has 20x small's files, large twice medium's transactions
QUICK: dict[str, tuple[int, int]] = {"small": (100, 2000), "medium": (2000, 1500), "large": (2000, 3000)}
#: "The read and block sizes are set to 1KB" (sec. 4.3.4)
BLOCK = 1024
#: PostMark's seed is fixed by default (42): the same files and transactions on every array
SEED = 42


@dataclass(frozen=True)
class Setting:
    """One PostMark run: ``files`` initial files, ``transactions`` transactions."""

    name: str
    files: int
    transactions: int
    block: int = BLOCK

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "files": self.files, "transactions": self.transactions, "block": self.block}


def settings(quick: bool, scale: dict[str, tuple[int, int]] | None = None) -> list[Setting]:
    """The three configurations: the paper's, :data:`QUICK`'s, or ``scale``'s (name -> (files, transactions))."""
    table = scale or (QUICK if quick else PAPER)
    return [Setting(name, int(f), int(t)) for name, (f, t) in table.items()]


def command_file(setting: Setting, location: str) -> str:
    """The commands PostMark reads (``postmark FILE``): location, pool, block sizes, run, quit."""
    if not location or any(c in location for c in "\n\r "):
        raise ValueError(f"postmark location {location!r} must be a path without blanks")
    return "\n".join([
        f"set location {location}",
        f"set number {setting.files}",
        f"set transactions {setting.transactions}",
        f"set read {setting.block}",
        f"set write {setting.block}",
        f"set seed {SEED}",
        "run",
        "quit",
    ]) + "\n"


_TOTAL = re.compile(r"(\d+) seconds total")
_TRANS = re.compile(r"(\d+) seconds of transactions \((\d+) per second\)")
_CREATED = re.compile(r"(\d+) created \(")
_READ = re.compile(r"(\d+) read \(")
_APPENDED = re.compile(r"(\d+) appended \(")
_DELETED = re.compile(r"(\d+) deleted \(")
_MB = re.compile(r"([\d.]+) (kilobytes|megabytes|gigabytes|bytes) (read|written) \(")
_UNIT = {"bytes": 1e-6, "kilobytes": 1e-3, "megabytes": 1.0, "gigabytes": 1e3}


def parse_report(text: str) -> dict[str, Any]:
    """PostMark's report as numbers: ``seconds_total``, ``seconds_transactions``,
    ``tps_reported`` (its whole-second rate), ``created``, ``read``, ``appended``,
    ``deleted``, ``mb_read``, ``mb_written``.

    Raises:
        ValueError: when the text holds no PostMark report (it failed, or was cut off).
    """
    trans = _TRANS.search(text)
    total = _TOTAL.search(text)
    if trans is None or total is None:
        tail = text.strip().splitlines()[-3:]
        raise ValueError(f"no PostMark report in its output (last lines: {tail})")
    out: dict[str, Any] = {"seconds_total": int(total.group(1)), "seconds_transactions": int(trans.group(1)),
                           "tps_reported": int(trans.group(2))}
    for key, rx in (("created", _CREATED), ("read", _READ), ("appended", _APPENDED), ("deleted", _DELETED)):
        m = rx.search(text)
        out[key] = int(m.group(1)) if m else 0
    for value, unit, what in _MB.findall(text):
        out[f"mb_{what}"] = round(float(value) * _UNIT[unit], 3)
    return out


class PhaseClock:
    """Times PostMark's phases from its progress output as it arrives.

    Feed it every chunk of output with the time it arrived (:meth:`feed`); PostMark prints
    "Creating files...Done", "Performing transactions....Done", "Deleting files...Done"
    as it goes (with ``stdbuf -o0`` the text arrives unbuffered). :meth:`seconds` is the
    time from the transaction phase's heading to its "Done".
    """

    PHASES = ("Creating files", "Performing transactions", "Deleting files")

    def __init__(self) -> None:
        self.text = ""
        self.marks: dict[str, float] = {}

    def feed(self, chunk: str, now: float) -> None:
        self.text += chunk
        for phase in self.PHASES:
            start = self.text.find(phase)
            if start < 0:
                continue
            self.marks.setdefault(f"{phase}:start", now)
            if f"{phase}:end" not in self.marks and self.text.find("Done", start) >= 0:
                self.marks[f"{phase}:end"] = now

    def seconds(self, phase: str = "Performing transactions") -> float | None:
        """Seconds of ``phase`` (None: it has not both started and ended)."""
        a, b = self.marks.get(f"{phase}:start"), self.marks.get(f"{phase}:end")
        return None if a is None or b is None else b - a


__all__ = ["BLOCK", "PAPER", "QUICK", "SEED", "PhaseClock", "Setting", "command_file", "parse_report", "settings"]
