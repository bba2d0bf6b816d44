"""pyfuse3, the one optional dependency: only a mount needs it.

pyfuse3 builds against libfuse3 and a mount needs /dev/fuse and (here) root, so it is the
extra ``vraid[mount]`` (``pip install 'vraid[mount]'``; ``setup.sh`` installs it). Everything
that needs no mount (the labs, ``vraid sim``, ``vraid rxw``, ``vraid layout``,
``vraid top --sim``, ``vraid fuzz``, the simulated experiments) runs without it.
:func:`pyfuse3` is how mounting code gets the module: without it, a one-line
:class:`~vraid.errors.MountError` says what to install instead of an ImportError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from vraid.errors import MountError

#: what to run to get pyfuse3 (shown by every command that would mount)
INSTALL_HINT = ("install the mount extra: pip install 'vraid[mount]' (it builds pyfuse3, which needs libfuse3 "
                "and its headers: apt install fuse3 libfuse3-dev pkg-config; on Debian `bash setup.sh` does both); "
                "everything that needs no mount (labs, sim, rxw, top --sim, fuzz) works without it")


def available() -> bool:
    """Whether pyfuse3 can be imported."""
    try:
        pyfuse3()
    except MountError:
        return False
    return True


def pyfuse3() -> ModuleType:
    """The pyfuse3 module, or a MountError naming the extra to install."""
    try:
        return importlib.import_module("pyfuse3")
    except ImportError as exc:
        raise MountError(f"mounting needs pyfuse3, which is not installed ({exc})", INSTALL_HINT) from None
