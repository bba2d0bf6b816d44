"""Sizes by name: ``quick``, ``default`` and ``paper`` (issue 36, item 3).

* ``quick``: ``runs(True)``, the same shape in under a minute (``--quick``);
* ``default``: ``runs(False)``, the size results/NAME/ was recorded at (a fraction of the
  paper's where the paper's takes hours here; each experiment's docstring says which);
* ``paper``: ``runs(False, **PAPER[NAME])``, each paper's own scale:

  - ``prefetch`` (seed 001 sec. 5.1): IOzone's 8 GB aggregate, 1..64 streams;
  - ``msc-ct`` (seed 000 sec. IV-A, Fig. 11): ``scale`` 1, the 512 MiB driver cache, the
    workspaces of Fig. 11 (1..8 GB) and the fixed 160k writes as the paper has them;
  - ``stride`` (seed 000 Fig. 9, Fig. 1): the default already measures every disk over every
    stride distance of the figures; the paper gives no span, so paper = default;
  - ``adaptive-hlwm`` (seed 003 sec. 4.1): the paper's N_W = 4096 entries (the default);
  - ``vc-raid`` (seed 002 sec. 4.3.4): PostMark 1,000/50,000, 20,000/50,000 and
    20,000/100,000 (the default's too) and the paper's tree of sec. 4.2.4, 952 directories,
    12,322 files, 122 MB, synthesized (the default's is the 14 MB standard library);
  - ``multibuffer`` (seed 004 sec. 3): 10,000 blocks on 9 disks, a 100-block buffer (every
    size) and the paper's 120,000 requests of which 70,000 warm-up (default: 40,000/20,000);
  - ``levels`` (OSTEP Fig. 38.8): the book's table has no scale; paper = default.

``--set KEY=VALUE`` options are laid over the size's own (an option given wins).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from vraid.errors import VraidError

SIZES = ("quick", "default", "paper")

#: experiment -> the runs() options of its paper's scale (beyond the default size)
PAPER: dict[str, dict[str, Any]] = {
    "prefetch": {"total": 8 << 30, "streams": [1, 2, 4, 8, 16, 32, 64]},
    "msc-ct": {"scale": 1},
    "stride": {},
    "adaptive-hlwm": {"nw": 4096},
    "vc-raid": {"postmark": {"small": [1000, 50000], "medium": [20000, 50000], "large": [20000, 100000]},
                "tree": "paper"},
    "multibuffer": {"requests": 120_000, "warmup": 70_000},
    "levels": {},
}


def check_size(size: str) -> str:
    """``size`` if it is a known size name.

    Raises:
        VraidError: for any other name.
    """
    if size not in SIZES:
        raise VraidError(f"unknown size {size!r}", f"choose one of: {', '.join(SIZES)}")
    return size


def size_options(name: str, size: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The runs() options of experiment ``name`` at ``size``, with ``options`` laid over them."""
    check_size(size)
    base = dict(PAPER.get(name, {})) if size == "paper" else {}
    return {**base, **(options or {})}


def specs_for(module: ModuleType, name: str, size: str, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The run specs of experiment ``name`` (``module``) at ``size``.

    Raises:
        VraidError: for an unknown size, or options the experiment's runs() does not take.
    """
    opts = size_options(name, size, options)
    try:
        return module.runs(size == "quick", **opts)
    except TypeError as exc:
        raise VraidError(f"experiment {name} does not take options {sorted(opts)}: {exc}",
                         "see the experiment's runs() in vraid/sim/experiment/ for the options it takes") from exc


__all__ = ["PAPER", "SIZES", "check_size", "size_options", "specs_for"]
