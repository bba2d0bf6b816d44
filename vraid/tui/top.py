"""``vraid top``: the live view of a mount or of an in-process simulation.

Two sources of snapshots, one viewer:

* :class:`MountSource` asks a running mount over its control socket (``snapshot``,
  ``pause``, ``step``, ``resume``, ``ctl_*``; see :mod:`vraid.engine.host.live`);
* :class:`SimSource` runs the simulator's engine (built from the same
  :class:`~vraid.engine.config.EngineConfig` as ``vraid sim``, faults included) in a
  :class:`~vraid.testing.session.Session` whose clock is ``trio.testing.MockClock(rate=R)``:
  virtual time passes R times as fast as real time, so a run is watchable; ``+``/``-`` change R and space stops time (R = 0). The same
  :class:`~vraid.engine.host.live.LiveState` answers the same commands in-process.

The viewer (:func:`run_view`) polls a few times per second and draws
:func:`vraid.tui.panels.frame` with rich's Live. Keys are read one at a time from the terminal
in cbreak mode on a thread (:class:`KeyReader`), which restores the terminal on exit, also
after an error. Without a terminal on stdin there are no keys; ``--once`` prints one frame.
"""

from __future__ import annotations

import os
import queue
import select
import sys
import termios
import threading
import time
import tty
from collections import deque
from pathlib import Path
from typing import Any, Callable

import trio
import trio.testing

from vraid.fuse import control
from vraid.errors import MountError, VraidError
from vraid.engine.host.live import LiveState, derive_rates
from .panels import frame

#: simulation speed steps (virtual seconds per real second)
RATES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
DEFAULT_RATE = 0.05
#: rates are averaged over about this many seconds of real time
RATE_SECONDS = 1.0


# ------------------------------------------------------------------------- sources
class MountSource:
    """A running mount, reached over its control socket."""

    sim = False

    def __init__(self, mountpoint: Path) -> None:
        from vraid.fuse import mountinfo
        from vraid.ondisk.assemble import assemble

        mountinfo.refuse_dead(Path(mountpoint))
        m = mountinfo.mount_of_mountpoint(Path(mountpoint)) if Path(mountpoint).exists() else None
        if m is None:
            raise MountError(f"{mountpoint} is not a vraid mount",
                             "give the mountpoint of `vraid mount`, or use `vraid top --sim` for a simulation")
        asm = assemble(m.source)
        self.sock = control.socket_path(asm.directory, asm.uuid)
        self.command("ping")

    def command(self, cmd: str, **args: Any) -> dict[str, Any]:
        return control.request(self.sock, cmd, **args)

    def snapshot(self, buckets: int) -> dict[str, Any]:
        return self.command("snapshot", buckets=buckets)["snapshot"]

    def speed(self) -> str:
        return ""

    def close(self) -> None:
        pass


class SimSource:
    """The simulator's engine in a :class:`~vraid.testing.session.Session` paced by ``MockClock(rate)``,
    with the workload driven by a background task of the session."""

    sim = True

    def __init__(self, config, rate: float = DEFAULT_RATE) -> None:
        from vraid.sim.simulator import check_policies
        from vraid.sim.workload import parse_workload
        from vraid.testing.session import Session

        check_policies(config.policies)
        self.config = config
        self.geometry = config.geometry()
        self._rate = rate
        self._time_rate = rate  # 0 while time is stopped
        self.finished = False
        self.workload = parse_workload(config.workload)
        self.session = Session(config.engine_config(self.geometry), rate=rate)
        self.live: LiveState = self.session.call_sync(_live, self.session.array, config)
        self.session.start_soon(self._drive)

    @property
    def error(self) -> BaseException | None:
        """What stopped the simulation (None while it runs)."""
        return self.session.error

    async def _drive(self) -> None:
        from vraid.sim.driver import Pattern, Recorder, run_workload

        config, g = self.config, self.geometry
        requests = self.workload.requests(self.session.array.capacity, g.block_size, config.requests, config.seed)
        await run_workload(self.session.array, self.workload, requests, Pattern(config.seed), Recorder(),
                           config.max_in_flight)
        self.finished = True
        self.live.source += "  [workload done]"

    # -- calls from the viewer ------------------------------------------------------
    def _stopped(self) -> VraidError:
        error = self.error
        return VraidError(f"the simulation stopped: {type(error).__name__}: {error}")

    def _call(self, fn: Callable, *args: Any) -> Any:
        from vraid.testing.session import SessionError

        try:
            return self.session.call(fn, *args)
        except SessionError:
            raise self._stopped() from None

    def _call_sync(self, fn: Callable, *args: Any) -> Any:
        from vraid.testing.session import SessionError

        try:
            return self.session.call_sync(fn, *args)
        except SessionError:
            raise self._stopped() from None

    def snapshot(self, buckets: int) -> dict[str, Any]:
        window = max(1.0, 60.0 * max(self._rate, 0.001))
        return self._call_sync(lambda: self.live.snapshot(buckets=buckets, window=window))

    def command(self, cmd: str, **args: Any) -> dict[str, Any]:
        handler = self.live.handlers()[cmd]
        if cmd == "step" and self._time_rate == 0:
            # time is stopped: let it run while the stripe is written, then stop it again
            self._set_clock_rate(self._rate)
            try:
                answer = self._call(handler, {"cmd": cmd, **args})
            finally:
                self._set_clock_rate(0.0)
        else:
            answer = self._call(handler, {"cmd": cmd, **args})
        answer = {"ok": True} | answer
        if not answer.get("ok"):
            raise VraidError(answer.get("error", "refused"), answer.get("hint", ""))
        return answer

    def _set_clock_rate(self, rate: float) -> None:
        from vraid.testing.session import SessionError

        try:
            self.session.set_rate(rate)
        except SessionError:
            raise self._stopped() from None

    def faster(self) -> None:
        self._rate = next((r for r in RATES if r > self._rate), self._rate)
        if self._time_rate:
            self._time_rate = self._rate
            self._set_clock_rate(self._rate)

    def slower(self) -> None:
        self._rate = next((r for r in reversed(RATES) if r < self._rate), self._rate)
        if self._time_rate:
            self._time_rate = self._rate
            self._set_clock_rate(self._rate)

    def toggle_time(self) -> None:
        self._time_rate = 0.0 if self._time_rate else self._rate
        self._set_clock_rate(self._time_rate)

    def speed(self) -> str:
        if not self._time_rate:
            return "TIME STOPPED"
        return f"speed x{self._rate:g}"

    def close(self) -> None:
        from vraid.testing.session import SessionError

        try:
            self.session.close()
        except SessionError:
            pass  # the viewer has shown why it stopped


def _live(array, config) -> LiveState:
    from vraid.backends.models import disk_preset
    from vraid.policies.ct import default_limits
    from vraid.sim.simulator import describe_config

    return LiveState(array, source=f"sim: {describe_config(config)}",
                     ct_defaults=lambda: default_limits(disk_preset=disk_preset(config.disk_model)))


def sim_snapshots(config) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run ``config``'s whole workload in virtual time (deterministically, as ``vraid sim``)
    and return snapshots at its start and at its end (before the final drain)."""
    from vraid.engine.build import open_engine
    from vraid.sim.driver import Pattern, Recorder, deterministic_trio, run_workload
    from vraid.sim.simulator import check_policies, host_capacity
    from vraid.sim.workload import parse_workload

    check_policies(config.policies)
    geometry = config.geometry()
    engine_config = config.engine_config(geometry)
    engine_config.check()
    workload = parse_workload(config.workload)
    requests = workload.requests(host_capacity(config, geometry), geometry.block_size, config.requests, config.seed)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with open_engine(engine_config) as engine:
            live = _live(engine.array, config)
            t0 = trio.current_time()
            first = live.snapshot()
            await run_workload(engine.array, workload, requests, Pattern(config.seed), Recorder(), config.max_in_flight)
            window = max(1e-3, trio.current_time() - t0)
            return first, live.snapshot(window=window)

    with deterministic_trio(config.seed):
        return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# ------------------------------------------------------------------------- keys
class KeyReader:
    """Single keys from the terminal (cbreak mode) on a thread; restores the terminal on exit.

    ``get(timeout)`` returns a key or None. Without a terminal on stdin it reads nothing.
    """

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdin
        self.keys: queue.Queue[str] = queue.Queue()
        self.active = False
        self._saved = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "KeyReader":
        try:
            fd = self.stream.fileno()
        except (AttributeError, ValueError, OSError):
            return self
        if not os.isatty(fd):
            return self
        self._fd = fd
        self._saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        self.active = True
        self._thread = threading.Thread(target=self._read, name="vraid-top-keys", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._fd], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self._fd, 16)
            except OSError:
                return
            if not data:
                return
            for ch in data.decode(errors="ignore"):
                self.keys.put(ch)

    def get(self, timeout: float) -> str | None:
        if not self.active:
            time.sleep(max(0.0, timeout))
            return None
        try:
            return self.keys.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None


# ------------------------------------------------------------------------- the viewer
class Viewer:
    """Polls a source, keeps the previous snapshot for rates, and acts on keys."""

    def __init__(self, source, *, keys: bool = True) -> None:
        self.source = source
        self.recent: deque[tuple[float, dict[str, Any]]] = deque()
        self.snap: dict[str, Any] | None = None
        self.message = ""
        self.keys = keys

    def poll(self, buckets: int) -> dict[str, Any]:
        snap = self.source.snapshot(buckets)
        now = time.monotonic()
        # rates over about the last second of real time (smoother than between two polls)
        while len(self.recent) > 1 and now - self.recent[1][0] >= RATE_SECONDS:
            self.recent.popleft()
        prev = self.recent[0][1] if self.recent else None
        snap["rates"] = derive_rates(prev, snap)
        self.recent.append((now, snap))
        self.snap = snap
        return snap

    def key(self, ch: str) -> bool:
        """Act on one key; False to quit."""
        src = self.source
        try:
            if ch in ("q", "Q"):
                return False
            if ch == "p":
                src.command("pause")
                self.message = "destaging paused: writes fill the cache, then wait (s: step one stripe, r: resume)"
            elif ch == "s":
                answer = src.command("step")
                if answer["destaged"]:
                    plan = answer["plans"][-1]
                    self.message = (f"stepped: destaged stripe {plan['stripe']} ({len(plan['requests'])} member "
                                    f"requests); {answer['destages_finished']} destages in all")
                else:
                    self.message = "step: no dirty stripe to destage"
            elif ch == "r":
                src.command("resume")
                self.message = "destaging resumed: the scheduler decides again"
            elif src.sim and ch == "+":
                src.faster()
            elif src.sim and ch == "-":
                src.slower()
            elif src.sim and ch == " ":
                src.toggle_time()
        except VraidError as exc:
            self.message = f"{exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        return True

    def render(self, width: int, height: int | None):
        assert self.snap is not None
        return frame(self.snap, width=width, height=height, sim=self.source.sim, message=self.message,
                     speed=self.source.speed(), keys=self.keys)


def run_view(source, *, interval: float = 0.25, duration: float | None = None, console=None,
             height: int | None = None) -> int:
    """The live view until q (or ``duration`` seconds); always leaves the terminal as it was.

    Each frame is fitted to the terminal's size as it is at that moment (a resized window
    gets a refitted frame), or to ``height`` lines when given."""
    from rich.console import Console
    from rich.live import Live

    console = console or Console(emoji=False)
    end = time.monotonic() + duration if duration is not None else None
    with KeyReader() as keys:
        viewer = Viewer(source, keys=keys.active)
        viewer.poll(buckets_for(console.width))
        use_screen = console.is_terminal
        fixed_height = height

        def lines() -> int | None:
            return fixed_height if fixed_height is not None else (console.height if use_screen else None)

        with Live(viewer.render(console.width, lines()), console=console, screen=use_screen,
                  auto_refresh=False, transient=False) as live:
            running = True
            while running:
                deadline = time.monotonic() + interval
                while running:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    ch = keys.get(left)
                    if ch is not None:
                        running = viewer.key(ch)
                        if running:
                            live.update(viewer.render(console.width, lines()),
                                        refresh=True)
                if end is not None and time.monotonic() >= end:
                    running = False
                if not running:
                    break
                viewer.poll(buckets_for(console.width))
                live.update(viewer.render(console.width, lines()), refresh=True)
    return 0


def buckets_for(width: int) -> int:
    """History buckets to ask for: one per column of the chart."""
    return max(10, min(2000, width - 10))
