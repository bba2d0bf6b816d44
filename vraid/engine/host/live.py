"""The live state of a running engine, for ``vraid top`` and ``vraid ctl``.

:class:`LiveState` listens to an :class:`~vraid.engine.host.array.Array`'s event bus (the latest
destage plan, policy changes) and answers the control commands of a mount, or of a
simulation the TUI runs in-process (the same calls):

==========  ===============================  ===============================================
command     request fields                   answer fields (besides ``"ok": true``)
==========  ===============================  ===============================================
snapshot    ``buckets`` (int, optional),     ``snapshot``: everything one frame of the TUI
            ``window`` (seconds, optional)   shows (see :meth:`LiveState.snapshot`)
pause       -                                ``paused``: true
step        ``count`` (int 1..64, def. 1)    ``destaged``, ``plans`` (each a plan dict),
                                             ``destages_finished``, ``paused``
resume      -                                ``paused``: false
ctl_get     -                                ``policies`` (key -> spec), ``keys`` (key -> help)
ctl_set     ``key``, ``value`` (strings)     ``key``, ``old``, ``new``
==========  ===============================  ===============================================

Each handler declares its fields (:func:`vraid.core.schema.takes`); the control server
checks them before the handler runs, and the handlers check them again when called
in-process. A request a user got wrong (a bad type, an unknown key, a spec that does not load) is
answered ``{"ok": false, "error": ..., "hint": ...}`` and changes nothing. Policies are
swapped between two awaits of the trio loop, so between destages: a destage in flight
finishes under the policy it started with. Every change is published as a
:class:`~vraid.engine.events.PolicyEvent` (``key``, ``old``, ``new``), which the TUI shows.

The step mode: ``pause`` stops the destager from starting destages (host writes keep
filling the cache until it is full, then wait); ``step`` destages exactly the next unit of
the destage order now and keeps its plan on screen; ``resume`` hands control back to the
scheduler. ``step`` pauses first if destaging was running.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from vraid.core.schema import BadRequest, Int, Num, Str, takes
from vraid.errors import VraidError
from vraid.engine.events import DestageEvent, PlanEvent, PolicyEvent

if TYPE_CHECKING:
    from vraid.engine.host.array import Array

def _ctl_keys() -> dict[str, str]:
    from vraid.policies.registry import FAMILIES, flag_help

    return {key: flag_help(key) for key, fam in FAMILIES.items() if fam.runtime}


#: keys of ``vraid ctl``: what each changes (the families vraid.policies.registry marks runtime)
CTL_KEYS: dict[str, str] = _ctl_keys()
#: the largest ``step`` count one request may ask for
MAX_STEP = 64
PERCENTILES = (50.0, 90.0, 99.0)
#: response-time percentiles of a snapshot are over this many newest host requests
RECENT_RESPONSES = 1 << 16


def plan_dict(event: "PlanEvent", time: float) -> dict[str, Any]:
    """A plan event as JSON-ready values (what the matrix panel draws); ``destage`` says
    whether any destage level planned it, ``cause`` names the cause."""
    covers = event.plan.covers  # a mirror's: which data column each check column copies (the panel's labels)
    return event.plan.to_dict() | {"row0": event.row0, "destage": event.cause.is_destage, "cause": event.cause.value,
                                   "time": time, "parity": event.plan.parity,
                                   "checks": event.plan.checks} | ({"covers": [list(c) for c in covers]} if covers else {})


class LiveState:
    """Collects from the event bus what a status does not hold, and runs the control commands.

    Args:
        array: the running array.
        source: one line naming what runs (a mount, a simulation), for the header.
    """

    def __init__(self, array: "Array", *, source: str = "", ct_defaults: Callable[[], Any] | None = None) -> None:
        self.array = array
        self.source = source
        self.ct_defaults = ct_defaults
        self._plan: tuple["PlanEvent", float] | None = None
        self.frozen: list[dict[str, Any]] = []
        self.policy_log: deque[dict[str, Any]] = deque(maxlen=8)
        self._capture: tuple[int, int] | None = None
        self._captured: tuple["PlanEvent", float] | None = None
        #: clock times of destage starts (plans) and ends, for the chart's destage marks
        self.destage_times: deque[float] = deque(maxlen=50_000)
        self.unsubscribe = array.events.subscribe(self._on_event)

    # -- events ---------------------------------------------------------------------
    def _on_event(self, event) -> None:
        if isinstance(event, PlanEvent):
            destage = event.cause.is_destage
            if destage:
                self.destage_times.append(event.time)
            if destage or self.array.cache is None:
                self._plan = (event, event.time)
                if self._capture == (event.plan.stripe, event.row0):
                    self._captured = (event, event.time)
        elif isinstance(event, DestageEvent):
            self.destage_times.append(event.time)
        elif isinstance(event, PolicyEvent):
            self.policy_log.append({"time": event.time} | event.change())

    # -- the snapshot -----------------------------------------------------------------
    def policies(self) -> dict[str, str]:
        """The policies now in force (what ``vraid ctl get`` shows)."""
        from vraid.policies.running import current

        return current(self.array)

    def snapshot(self, *, buckets: int = 120, window: float = 60.0) -> dict[str, Any]:
        """One frame's worth of state, JSON-ready.

        Keys: ``time`` (the engine's clock), ``uptime``, ``source``, ``geometry``, ``cache``
        (``WriteBackCache.status().as_dict()``, or ``{"organisation": "none"}``), ``metrics`` (with
        ``response_ms`` percentiles of the newest :data:`RECENT_RESPONSES` host requests), ``members`` (``status()["members"]``), ``policies``,
        ``policy_log`` (recent changes), ``plan`` (the latest destage plan or None), ``step``
        (the plans frozen by step mode, empty when not stepping), ``paused``, ``history``
        (``buckets`` samples of the cache over the last ``window`` seconds, see
        :func:`history_buckets`), and whatever the status holds beyond these (e.g. rebuild,
        prefetch, log disk) unchanged.
        """
        a = self.array
        now = a.clock.now()
        status = a.status()
        metrics = dict(status.get("metrics", {}))
        values = a.metrics.response.percentiles(PERCENTILES, recent=RECENT_RESPONSES)
        metrics["response_ms"] = {f"p{p:g}": v * 1000 for p, v in zip(PERCENTILES, values)}
        metrics["max_response_ms"] = a.metrics.response.max * 1000
        cache = a.cache
        snap = dict(status) | {
            "time": now,
            "uptime": now - a.started_at,
            "source": self.source,
            "metrics": metrics,
            "policies": self.policies(),
            "policy_log": list(self.policy_log),
            "plan": plan_dict(*self._plan) if self._plan is not None else None,
            "step": list(self.frozen),
            "paused": bool(cache is not None and cache.paused),
            "history": (history_buckets(cache.metrics.history, now, window, buckets, self.destage_times)
                        if cache is not None else []),
            "window": window,
        }
        return snap

    # -- step mode ------------------------------------------------------------------------
    def _cache(self, what: str):
        if self.array.cache is None:
            raise VraidError(f"cannot {what}: this array runs without a write cache (--cache none)",
                             "mount with --cache stripe or --cache pbg to have destages to control")
        return self.array.cache

    def pause(self) -> None:
        self._cache("pause destaging").pause()

    def resume(self) -> None:
        self._cache("resume destaging").resume()
        self.frozen = []

    async def step(self, count: int = 1) -> list[dict[str, Any]]:
        """Pause, then destage the next ``count`` units one after the other; their plans."""
        cache = self._cache("step")
        cache.pause()
        plans: list[dict[str, Any]] = []
        for _ in range(count):
            key = cache.order.next()
            if key is None:
                break
            span = cache.units[key].span
            self._capture, self._captured = (span.stripe, span.row0), None
            try:
                if not await cache.destage_one():
                    break
            finally:
                self._capture = None
            if self._captured is not None:
                plans.append(plan_dict(*self._captured) | {"unit": key})
        self.frozen = plans or self.frozen
        return plans

    # -- run-time policies ------------------------------------------------------------------
    def set_policy(self, key: Any, value: Any) -> dict[str, str]:
        """Swap one policy (a :data:`CTL_KEYS` key) for the one ``value`` names; publishes it.

        Raises:
            VraidError: for an unknown key or a value that does not load; nothing changes.
        """
        if not isinstance(key, str) or not isinstance(value, str):
            raise BadRequest("ctl_set needs string fields key and value", 'send {"cmd": "ctl_set", "key": K, "value": V}')
        if key not in CTL_KEYS:
            raise VraidError(f"unknown policy key {key!r}", "keys: " + ", ".join(CTL_KEYS))
        from vraid.policies.registry import Context
        from vraid.policies.running import install, sources

        value = value.strip()
        old = self.policies().get(key, "none")
        new = install(key, self.array, value, Context(geometry=self.array.geometry, params=self._params()))
        event = PolicyEvent(time=self.array.clock.now(), key=key, old=old, new=new)
        self.array.events.publish(event)
        source = sources(self.array).get(key)
        return event.change() | ({"source": source} if source else {})

    def _params(self) -> dict[str, Any]:
        """Parameters for a policy built at run time: CT limits a spec leaves out come from
        the transform in force (running.install hands it over), else from what the mount or
        simulation says (``ct_defaults``: superblock, disk model preset)."""
        if self.ct_defaults is None:
            return {}
        return {"ct": self.ct_defaults().to_params()}

    # -- the control commands ---------------------------------------------------------------
    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]]:
        """The control commands above, for :class:`vraid.fuse.control.ControlServer`."""

        def refusing(fn):
            async def handler(request: dict[str, Any]) -> dict[str, Any]:
                try:
                    return await fn(request)
                except VraidError as exc:
                    return {"ok": False, "error": exc.message, "hint": exc.hint}

            handler.schema = fn.schema
            return handler

        @takes(buckets=Int(1, 2000), window=Num(1e-3, 86400, what="seconds"))
        async def snapshot(req):
            buckets = _int_field(req, "buckets", 120, 1, 2000)
            window = req.get("window", 60.0)
            if isinstance(window, bool) or not isinstance(window, (int, float)) or not 1e-3 <= window <= 86400:
                raise BadRequest("snapshot: window must be a number of seconds from 0.001 to 86400", "e.g. 60")
            return {"snapshot": self.snapshot(buckets=buckets, window=float(window))}

        @takes()
        async def pause(_req):
            self.pause()
            return {"paused": True}

        @takes()
        async def resume(_req):
            self.resume()
            return {"paused": False}

        @takes(count=Int(1, MAX_STEP))
        async def step(req):
            count = _int_field(req, "count", 1, 1, MAX_STEP)
            plans = await self.step(count)
            cache = self.array.cache
            return {"destaged": len(plans), "plans": plans, "paused": cache.paused,
                    "destages_finished": cache.metrics.destages_finished}

        @takes()
        async def ctl_get(_req):
            from vraid.policies.running import sources

            return {"policies": self.policies(), "keys": dict(CTL_KEYS), "faults": self.array.guard.status(),
                    "sources": sources(self.array)}

        @takes(key=Str(64), value=Str(1024))
        async def ctl_set(req):
            return self.set_policy(req.get("key"), req.get("value"))

        return {name: refusing(fn) for name, fn in
                {"snapshot": snapshot, "pause": pause, "resume": resume, "step": step,
                 "ctl_get": ctl_get, "ctl_set": ctl_set}.items()}


def _int_field(req: dict[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = req.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise BadRequest(f"{req.get('cmd', 'request')}: {name} must be a whole number from {lo} to {hi}",
                         f"got {value!r}")
    return value


def history_buckets(history: list[tuple[float, float, float | None, float | None, int]], now: float,
                    window: float, n: int, destages: "Sequence[float]" = ()) -> list[list[Any] | None]:
    """The cache's samples ``(time, occupancy, hwm, lwm, destaging)`` over the last ``window``
    seconds, as ``n`` equal time buckets, oldest first.

    Each bucket is ``[peak occupancy, last occupancy, hwm, lwm, destaging]`` (destaging: 1
    if a sample saw destages in flight, or a destage started or ended (``destages``: sorted
    clock times) during the bucket, else 0), or None before the first sample. A sample
    holds until the next one, so a bucket without samples repeats the one before.
    """
    marks = list(destages)
    if n <= 0:
        return []
    start = now - window
    width = window / n
    times = [h[0] for h in history[-20000:]]
    recent = history[-len(times):] if times else []
    out: list[list[Any] | None] = []
    i = bisect.bisect_right(times, start) - 1  # the sample in force at the window's start
    for b in range(n):
        t1 = start + (b + 1) * width
        j = bisect.bisect_right(times, t1) - 1  # last sample in force at the bucket's end
        if j < 0:
            out.append(None)
            i = j
            continue
        lo = max(i, 0)
        samples = recent[lo : j + 1]
        peak = max(s[1] for s in samples)
        t0 = t1 - width
        k = bisect.bisect_right(marks, t0)
        busy = int(any(s[4] for s in samples) or (k < len(marks) and marks[k] <= t1))
        last = recent[j]
        out.append([peak, last[1], last[2], last[3], busy])
        i = j
    return out


def derive_rates(prev: dict[str, Any] | None, cur: dict[str, Any]) -> dict[str, Any]:
    """Rates between two snapshots of the same engine: host MB/s and requests/s, and per
    member requests/s and busy fraction. Empty when there is no earlier snapshot."""
    if prev is None:
        return {}
    dt = cur["time"] - prev["time"]
    if dt <= 0:
        return prev.get("rates", {})
    m0, m1 = prev.get("metrics", {}), cur.get("metrics", {})

    def delta(a: dict, b: dict, key: str) -> float:
        return float(b.get(key, 0) or 0) - float(a.get(key, 0) or 0)

    host_bytes = delta(m0, m1, "host_read_bytes") + delta(m0, m1, "host_write_bytes")
    host_reqs = delta(m0, m1, "host_reads") + delta(m0, m1, "host_writes")
    members = []
    before = {d["disk"]: d for d in prev.get("members", [])}
    for d in cur.get("members", []):
        p = before.get(d["disk"], {})
        reqs = delta(p, d, "reads") + delta(p, d, "writes")
        members.append({"disk": d["disk"], "requests_per_s": reqs / dt,
                        "busy": max(0.0, min(1.0, delta(p, d, "busy_seconds") / dt))})
    c0, c1 = prev.get("cache", {}), cur.get("cache", {})
    return {"seconds": dt, "host_mb_s": host_bytes / 1e6 / dt, "host_iops": host_reqs / dt,
            "destages_per_s": delta(c0, c1, "destages_finished") / dt, "members": members}
