"""``DIR/vraid.toml``: the short, human-editable defaults of an array.

Geometry is *not* here: it lives in the member superblocks, which assembly
trusts. This file holds what a user may change between mounts: the image name,
and one key per policy family of :mod:`vraid.policies.registry` (with the
family's plain settings such as ``cache_size``). Unknown keys are an error (a
typo would otherwise be ignored silently).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vraid.errors import VraidError
from vraid.policies import registry

NAME = "vraid.toml"

#: key -> (default, help): the image, then every family and setting of the policy registry a
#: mount may choose (the log disk is chosen at create: LOG_KEYS)
KNOWN: dict[str, tuple[str, str]] = {
    "image": ("disk.img", "name of the image file the mount exposes"),
    **registry.settings(at_create=False),
}
#: written by `vraid create --log` only, for people reading the file: the superblocks hold the log
LOG_KEYS: dict[str, str] = {
    "log": "the log disk (paper 002): scd, mcd:N, mirrored or per-disk; recorded in the superblocks, do not edit",
    "log_size": "bytes of each log store; recorded in the superblocks, do not edit",
}


def _policy_defaults() -> dict[str, str]:
    return {key: default for key, (default, _doc) in registry.settings(at_create=False).items()}


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
    """The settings of ``vraid.toml``. ``policies`` maps every family and setting key to its
    value; ``config.cache``, ``config.destage`` ... read it."""

    uuid: str
    image: str = "disk.img"
    policies: dict[str, str] = field(default_factory=_policy_defaults)
    #: the log disk as created (informational; "" when none)
    log: str = ""
    log_size: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "policies", _policy_defaults() | dict(self.policies))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("policies", "log", "log_size"):
            raise AttributeError(name)
        try:
            return self.policies[name]
        except KeyError:
            raise AttributeError(name) from None

    def policy(self, key: str) -> str:
        """The value of family or setting ``key``."""
        return self.policies[key]

    @classmethod
    def load(cls, directory: Path) -> "ArrayConfig | None":
        path = directory / NAME
        if not path.exists():
            return None
        try:
            doc = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise VraidError(f"{path} is not valid TOML: {exc}", "fix the file, or delete it to use the defaults") from exc
        unknown = sorted(set(doc) - set(KNOWN) - set(LOG_KEYS) - {"uuid"})
        if unknown:
            raise VraidError(f"{path}: unknown setting {', '.join(unknown)}", f"known settings: {', '.join(KNOWN)}")
        image = doc.get("image", "disk.img")
        if image_name_problem(image):
            raise VraidError(f"{path}: image = {image!r} is not a file name", 'use a plain name such as "disk.img"')
        values = {}
        for key, (default, _doc) in registry.settings(at_create=False).items():
            value = doc.get(key, default)
            if not isinstance(value, str) or not value:
                raise VraidError(f"{path}: {key} = {value!r} is not a name", f"write it as a quoted string, e.g. {key} = \"{default}\"")
            values[key] = value
        return cls(uuid=str(doc.get("uuid", "")), image=image, policies=values, log=str(doc.get("log", "")),
                   log_size=str(doc.get("log_size", "")))

    def render(self, summary: str) -> str:
        lines = [
            f"# vraid array: {summary}\n",
            "# The geometry lives in the member superblocks (see `vraid examine`);\n",
            "# this file holds defaults you may edit. Command-line options override them.\n",
            f'uuid = "{self.uuid}"   # ties the members to this directory; do not edit\n',
            "\n",
            f'image = "{self.image}"   # {KNOWN["image"][1]}\n',
            "\n# Default policies for `vraid mount` (its options override them; `vraid policies` lists them):\n",
        ]
        for key in registry.settings(at_create=False):
            lines.append(f'{key} = "{self.policies[key]}"   # {KNOWN[key][1]}\n')
        if self.log:
            lines.append("\n# The log disk (docs/log-disk.md):\n")
            lines.append(f'log = "{self.log}"   # {LOG_KEYS["log"]}\n')
            lines.append(f'log_size = "{self.log_size}"   # {LOG_KEYS["log_size"]}\n')
        return "".join(lines)

    def save(self, directory: Path, summary: str) -> None:
        (directory / NAME).write_text(self.render(summary))
