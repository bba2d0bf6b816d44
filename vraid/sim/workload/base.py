"""The pieces every workload shares: :class:`HostRequest`, :class:`Param`, :class:`Workload`.

Random draws come from ``numpy.random.Generator(PCG64(seed))`` only, in chunks of
:data:`CHUNK`: the same seed gives the same sequence, and a shorter run is a prefix of a
longer one because the chunk size never depends on ``count``.
"""

from __future__ import annotations

import re
from itertools import chain, islice
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import numpy as np

from vraid.errors import VraidError
from vraid.core.units import format_size, parse_size
from ..request import HostRequest

CHUNK = 4096  # random draws per numpy call; fixed so shorter runs are prefixes of longer ones


_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*(ns|us|µs|ms|s|min|h)?\s*$", re.I)
_TIME_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str | float, what: str = "time") -> float:
    """Seconds in ``text``: "10us", "1ms", "2s", "5min" or a bare number of seconds.

    Raises:
        VraidError: naming ``what`` when the text is not a duration.
    """
    if isinstance(text, (int, float)):
        return float(text)
    m = _TIME.match(text)
    if not m:
        raise VraidError(f"{what} {text!r} is not a duration",
                         "write a number with an optional unit ns, us, ms, s, min or h, e.g. 20ms")
    return float(m.group(1)) * _TIME_UNIT[(m.group(2) or "s").lower()]


@dataclass(frozen=True, slots=True)
class Param:
    """A workload parameter: ``kind`` is size|time|float|int|path, or "a|b|c" for a choice."""

    kind: str
    default: Any
    help: str

    def convert(self, key: str, value: Any) -> Any:
        """``value`` (a spec string or an already typed value) as this parameter's type."""
        if value is None:
            return None
        what = f"parameter {key}"
        try:
            if self.kind == "size":
                return parse_size(value, what)
            if self.kind == "time":
                return parse_duration(value, what)
            if self.kind == "float":
                return float(value)
            if self.kind == "int":
                return int(value)
        except ValueError:
            kind = {"int": "whole number", "float": "number"}.get(self.kind, self.kind)
            raise VraidError(f"{what}={value!r} is not a {kind}", f"e.g. {key}={self.show()}") from None
        if self.kind == "path":
            return str(value)
        choices = self.kind.split("|")
        if value not in choices:
            raise VraidError(f"{what}={value!r} is not one of {', '.join(choices)}", f"e.g. {key}={choices[0]}")
        return value

    def show(self, value: Any = ...) -> str:
        """``value`` (default: the default) as it is written in a spec."""
        value = self.default if value is ... else value
        if value is None:
            return "-"
        return format_size(value) if self.kind == "size" else str(value)


def need(ok: bool, message: str, hint: str) -> None:
    """Raise VraidError(message, hint) unless ``ok``."""
    if not ok:
        raise VraidError(message, hint)


def make_rng(seed: int) -> np.random.Generator:
    """The only source of randomness: PCG64 seeded with a non-negative integer."""
    need(isinstance(seed, (int, np.integer)) and seed >= 0, f"seed {seed!r} is not a non-negative integer",
         "pass --seed N")
    return np.random.Generator(np.random.PCG64(int(seed)))


def cdf_of(pmf: np.ndarray) -> np.ndarray:
    """Cumulative distribution of a (not necessarily normalised) probability vector."""
    cdf = np.cumsum(pmf)
    return cdf / cdf[-1]


def draw(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices 0..len(cdf)-1 drawn by inverse transform of uniform ``u``."""
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(cdf) - 1)


def arrivals(rng: np.random.Generator, params: dict[str, Any], t: float) -> tuple[list, float]:
    """One chunk of arrival times after ``t`` (Poisson with mean ``iat``, or evenly spaced)
    and the last of them; all None for a closed-loop workload (no ``iat``)."""
    iat = params.get("iat")
    if iat is None:
        return [None] * CHUNK, t
    gaps = rng.exponential(iat, CHUNK) if params["arrival"] == "poisson" else np.full(CHUNK, iat)
    times = t + np.cumsum(gaps)
    return times.tolist(), float(times[-1])


OPEN_OR_CLOSED = {
    "iat": Param("time", None, "mean inter-arrival time: open loop (default: closed loop)"),
    "arrival": Param("poisson|fixed", "poisson", "inter-arrival distribution when iat is set"),
    "outstanding": Param("int", None, "closed loop: requests kept outstanding (default 1 per stream)"),
}


class Workload:
    """Base of every workload: validated ``params`` and a ``requests`` generator.

    Subclasses set ``name``, ``summary`` (one line), ``source`` (paper, section, figure) and
    ``PARAMS``, and implement ``_generate`` as an endless (or naturally finite) generator. A
    workload whose spec may carry one bare value (``replay:FILE``) names it in ``positional``.
    ``uses_seed`` is False for the fixed patterns, which ignore the seed.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    source: ClassVar[str]
    PARAMS: ClassVar[dict[str, Param]] = {}
    positional: ClassVar[str | None] = None
    uses_seed: ClassVar[bool] = True

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.PARAMS))
        need(not unknown, f"workload {self.name!r} has no parameter {', '.join(unknown)}",
             f"valid parameters of {self.name}: {', '.join(self.PARAMS) or '(none)'}")
        self.params: dict[str, Any] = {k: p.convert(k, params.get(k, p.default)) for k, p in self.PARAMS.items()}
        self._check(self.params)

    def _check(self, p: dict[str, Any]) -> None:
        """Raise VraidError for parameter values that make no sense (subclasses extend it)."""
        for key in ("iat", "outstanding", "size"):
            if p.get(key) is not None:
                need(p[key] > 0, f"{self.name}: {key} must be positive", f"give {key} a value above 0")

    @property
    def closed_loop(self) -> int | None:
        """Requests to keep outstanding (closed loop), or None when requests carry ``at``."""
        if self.params.get("iat") is not None:
            return None
        return int(self.params.get("outstanding") or 1)

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this workload with :func:`vraid.sim.workload.parse_workload`."""
        items = [f"{k}={self.PARAMS[k].show(v)}" for k, v in self.params.items() if v is not None]
        return self.name + (":" + ",".join(items) if items else "")

    def __repr__(self) -> str:
        return f"<workload {self.spec}>"

    def requests(self, capacity: int, block_size: int, count: int, seed: int) -> Iterator[HostRequest]:
        """Yield up to ``count`` requests for an array of ``capacity`` bytes in ``block_size`` blocks.

        Raises:
            VraidError: when the parameters do not fit this array (checked before the first request).
        """
        need(count >= 0, f"count {count} is negative", "ask for zero or more requests")
        need(block_size > 0 and capacity >= block_size, f"capacity {capacity} is smaller than a block",
             "use a larger array")
        gen = self._generate(capacity, block_size, seed)
        try:
            first = next(gen)    # runs the generator's checks now, not at the consumer's first next()
        except StopIteration:
            return iter(())
        return islice(chain((first,), gen), count)

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        raise NotImplementedError

    def _fit(self, what: str, nbytes: int, capacity: int, block: int) -> None:
        need(0 < nbytes <= capacity, f"{self.name}: {what} {format_size(nbytes)} does not fit the "
             f"{format_size(capacity)} array", f"make {what} smaller or the array larger")
        need(nbytes % block == 0, f"{self.name}: {what} {nbytes} is not a multiple of the "
             f"{block}-byte block", f"round {what} to whole blocks")
