"""Sizes a setting may have on this array and this machine (hardening issue 33, item 5).

A cache lives in the daemon's memory: a cache larger than the machine's memory cannot be
filled, and a read cache larger than the array has nothing more to hold. Both are refused
before anything is opened, with the size that would do.
"""

from __future__ import annotations

import os

from vraid.core.geometry import Geometry
from vraid.core.units import format_size
from vraid.errors import VraidError


def approx_size(n: int) -> str:
    """``n`` bytes rounded for a message: ``100T``, ``77.8G``, ``512K``."""
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f}{unit}" if value >= 100 or value == int(value) else f"{value:.1f}{unit}"
    return f"{n} bytes"


def memory_bytes() -> int | None:
    """The machine's physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_cache_sizes(g: Geometry, write_cache: int, read_cache: int) -> None:
    """Refuse a read cache larger than the array, and a cache larger than the machine's
    memory (the caches live in it; hardening issue 33, item 5)."""
    if read_cache > g.capacity:
        raise VraidError(f"read cache size {format_size(read_cache)} is larger than the array "
                         f"({format_size(g.capacity)}): there is nothing more to cache",
                         f"give at most {format_size(g.capacity)}, e.g. 16M")
    memory = memory_bytes()
    if memory is None:
        return
    for what, size in (("cache size", write_cache), ("read cache size", read_cache)):
        if size and size > memory:
            raise VraidError(f"{what} {format_size(size)} is more than this machine's memory ({approx_size(memory)})",
                             "give a size well below the memory, e.g. 64M")
