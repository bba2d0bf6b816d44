"""What ``vraid policies [FAMILY] [--json]`` shows: every policy of a family of the registry
(:mod:`vraid.policies.registry`), built-ins and installed plugins, with its one-line summary,
its source (the paper and section) and its parameter schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vraid.errors import VraidError

from . import loader, registry
from .params import Param, schema


@dataclass(frozen=True)
class PolicyInfo:
    """What ``vraid policies`` shows of one policy."""

    name: str
    target: str | None
    summary: str
    source: str
    origin: str
    params: tuple[Param, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "target": self.target, "summary": self.summary, "source": self.source,
                "origin": self.origin, "params": [p.to_dict() for p in self.params]}


def _summary(cls: type) -> str:
    text = getattr(cls, "summary", "") or (cls.__doc__ or "").strip().split("\n")[0]
    return str(text)


def describe(key: str) -> list[PolicyInfo]:
    """Every built-in and installed policy of family ``key`` (imports them)."""
    fam = registry.family(key)
    out = []
    for name, target in fam.builtins.items():
        if target is None:
            out.append(PolicyInfo(name, None, fam.none_doc, "", "built-in", ()))
            continue
        cls = loader.resolve(target)
        out.append(PolicyInfo(name, target, _summary(cls), str(getattr(cls, "source", "")), "built-in", schema(cls)))
    for name, ep in loader.entry_points(key).items():
        if name in fam.builtins:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None)
        try:
            cls = loader.load_entry_point(ep, fam.base_class(), f"{fam.title} {name}")
        except VraidError as exc:
            out.append(PolicyInfo(name, ep.value, f"(does not load: {exc.message})", "", "entry point", ()))
            continue
        out.append(PolicyInfo(name, ep.value, _summary(cls), str(getattr(cls, "source", "")),
                              f"entry point ({dist})" if dist else "entry point", schema(cls)))
    return out


def describe_all(keys: "list[str] | None" = None) -> dict[str, Any]:
    """The JSON of ``vraid policies --json``."""
    return {"families": [
        {"key": fam.key, "title": fam.title, "doc": fam.doc, "default": fam.default, "runtime": fam.runtime,
         "flag": fam.flag, "package": fam.package, "base": fam.base, "at_create": fam.at_create,
         "settings": [{"key": s.key, "default": s.default, "doc": s.doc} for s in fam.settings],
         "policies": [p.to_dict() for p in describe(fam.key)]}
        for fam in (registry.family(k) for k in (keys or registry.FAMILIES))
    ]}
