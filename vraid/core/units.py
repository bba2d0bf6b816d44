"""Parse and print sizes the way storage people write them: 4K, 64K, 256M, 1G."""

from __future__ import annotations

import re

from vraid.errors import VraidError

_SUFFIX = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(text: str | int, what: str = "size") -> int:
    """Return the byte count of ``text`` ("64K", "256M", "4096"); binary units.

    Raises:
        VraidError: naming ``what`` when the text is not a size.
    """
    if isinstance(text, int):
        return text
    m = _SIZE.match(text)
    if not m:
        raise VraidError(
            f"{what} {text!r} is not a size",
            "write a whole number of bytes with an optional K, M, G or T suffix (binary units), e.g. 64K or 256M",
        )
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


def format_size(n: int) -> str:
    """The shortest exact binary-unit spelling of ``n`` bytes (65536 -> "64K")."""
    for suffix in ("T", "G", "M", "K"):
        unit = _SUFFIX[suffix]
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return f"{n}B" if n else "0"
