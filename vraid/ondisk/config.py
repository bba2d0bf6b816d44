"""``DIR/vraid.toml``: the short, human-editable defaults of an array.

Geometry is *not* here: it lives in the member superblocks, which assembly
trusts. This file holds what a user may change between mounts. Unknown keys
are an error (a typo would otherwise be ignored silently).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from vraid.errors import VraidError

NAME = "vraid.toml"

#: key -> (default, help). Policies join here as their issues land.
KNOWN: dict[str, tuple[str, str]] = {
    "image": ("disk.img", "name of the image file the mount exposes"),
    "cache": ("none", "write cache organisation: none (write-through), pbg or stripe"),
    "cache_size": ("64M", "write cache size"),
    "destage": ("hlwm", "destage scheduler, NAME[:k=v,...] (hlwm, adaptive, lt, pi, idle)"),
    "destage_order": ("lrw", "which dirty unit goes first: lrw, lru, fifo or cscan"),
    "ct": ("none", "contiguity transform: none or msc[:sr_max=N,sw_max=N,...] (docs/ct.md)"),
}


def image_name_problem(name: object) -> str:
    """Why ``name`` cannot be the image's file name ("" when it can): the mount exposes
    ``MOUNTPOINT/NAME``, so it must be one plain path component."""
    if not isinstance(name, str) or not name:
        return "is empty" if name == "" else "is not a string"
    if "/" in name or name in (".", ".."):
        return "is not a plain file name (no / and not . or ..)"
    if "\0" in name or any(ord(c) < 32 for c in name):
        return "holds control characters"
    if len(name.encode()) > 255:
        return "is longer than 255 bytes"
    return ""


@dataclass(frozen=True)
class ArrayConfig:
    uuid: str
    image: str = "disk.img"
    cache: str = "none"
    cache_size: str = "64M"
    destage: str = "hlwm"
    destage_order: str = "lrw"
    ct: str = "none"

    @classmethod
    def load(cls, directory: Path) -> "ArrayConfig | None":
        path = directory / NAME
        if not path.exists():
            return None
        try:
            doc = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise VraidError(f"{path} is not valid TOML: {exc}", "fix the file, or delete it to use the defaults") from exc
        unknown = sorted(set(doc) - set(KNOWN) - {"uuid"})
        if unknown:
            raise VraidError(f"{path}: unknown setting {', '.join(unknown)}", f"known settings: {', '.join(KNOWN)}")
        image = doc.get("image", "disk.img")
        if image_name_problem(image):
            raise VraidError(f"{path}: image = {image!r} is not a file name", 'use a plain name such as "disk.img"')
        values = {}
        for key in ("cache", "cache_size", "destage", "destage_order", "ct"):
            value = doc.get(key, KNOWN[key][0])
            if not isinstance(value, str) or not value:
                raise VraidError(f"{path}: {key} = {value!r} is not a name", f"write it as a quoted string, e.g. {key} = \"{KNOWN[key][0]}\"")
            values[key] = value
        return cls(uuid=str(doc.get("uuid", "")), image=image, **values)

    def render(self, summary: str) -> str:
        return (
            f"# vraid array: {summary}\n"
            "# The geometry lives in the member superblocks (see `vraid examine`);\n"
            "# this file holds defaults you may edit. Command-line options override them.\n"
            f'uuid = "{self.uuid}"   # ties the members to this directory; do not edit\n'
            "\n"
            f'image = "{self.image}"   # {KNOWN["image"][1]}\n'
            "\n# Default policies for `vraid mount` (its options override them):\n"
            f'cache = "{self.cache}"   # {KNOWN["cache"][1]}\n'
            f'cache_size = "{self.cache_size}"   # {KNOWN["cache_size"][1]}\n'
            f'destage = "{self.destage}"   # {KNOWN["destage"][1]}\n'
            f'destage_order = "{self.destage_order}"   # {KNOWN["destage_order"][1]}\n'
            f'ct = "{self.ct}"   # {KNOWN["ct"][1]}\n'
        )

    def save(self, directory: Path, summary: str) -> None:
        (directory / NAME).write_text(self.render(summary))
