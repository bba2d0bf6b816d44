"""``vraid mount``: assemble an array and serve it as a FUSE image.

Everything that can be checked is checked before anything changes: the
mountpoint (it must exist, be empty unless ``--nonempty``, and not be a
mount, dead or alive), the array, the options, and that no other mount serves
it. Then ``vraid mount`` takes the array's lock (``DIR/vraid.lock``,
:mod:`vraid.ondisk.lock`), which the daemon inherits and holds for its life,
so a second mount of the array is refused even when both start together.
Then the process forks (unless ``--foreground``); the daemon opens the trace,
binds the control socket and mounts FUSE, and only then marks the array
dirty: a refused mount leaves the superblocks byte-identical. It reports
"ready" over a pipe, so ``vraid mount`` returns only once the image can be
opened, or fails with the daemon's reason.

Shutdown: the FUSE unmount (``vraid umount`` runs ``fusermount3 -u``; SIGTERM
makes the daemon do it) ends ``pyfuse3.main()``; the daemon then flushes the
members, marks the array clean and exits. An unmount is refused while a loop
device holds the image (FUSE-NOTES item 7). A daemon that dies any other way
leaves the array marked dirty; the next mount says so and, before serving,
replays NVRAM and resyncs the stripes the write-intent bitmap names
(``vraid.engine.recovery``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyfuse3
import trio

from . import control, mountinfo
from vraid.ondisk.lock import ArrayLock, describe, holder_of
from vraid.engine.array import Array
from vraid.engine.build import Engine, EngineConfig, build_engine
from vraid.ondisk.assemble import Assembled, assemble
from vraid.errors import MountError, VraidError
from vraid.fuse.image import ImageFS

log = logging.getLogger(__name__)
PR_SET_IO_FLUSHER = 57


@dataclass
class MountOptions:
    foreground: bool = False
    debug_fuse: bool = False
    trace: Path | None = None
    #: a timing model for every member (``backends.models.parse_model`` syntax)
    disk_model: str | None = None
    #: "real" (modelled time passes), "real:F" (scaled by F), "none" (model ignored)
    time: str = "real"
    #: write cache; None = the array's vraid.toml default
    cache: str | None = None
    cache_size: str | None = None
    destage: str | None = None
    destage_order: str | None = None
    nvram: Path | None = None
    #: contiguity transform spec (``vraid.policies.ct``); None = the vraid.toml default
    ct: str | None = None
    #: injected faults, ``backends.faulty`` spec syntax (``--fault disk2:eio=1000-1010``)
    faults: tuple[str, ...] = ()
    #: start a dirty and degraded array anyway (md's start_dirty_degraded)
    force: bool = False
    #: rebuild rate limit, MB/s of the new member (None: no limit)
    rebuild_rate: float | None = None
    #: mount onto a directory that is not empty (its files are hidden while mounted)
    nonempty: bool = False
    #: specs of policy families that have no field above (vraid.policies.registry), key -> spec
    policies: dict[str, str] = field(default_factory=dict)

    def policy(self, key: str) -> str | None:
        """The spec given for family ``key`` (None: the vraid.toml default)."""
        value = getattr(self, key, None) if key in _POLICY_FIELDS else None
        return value if value is not None else self.policies.get(key)


_POLICY_FIELDS = ("cache", "destage", "destage_order", "ct")


def parse_time(text: str) -> float | None:
    """``real`` -> 1.0, ``real:0.1`` -> 0.1, ``none`` -> None (no model time).

    Raises:
        MountError: for anything else.
    """
    if text == "none":
        return None
    if text == "real":
        return 1.0
    if text.startswith("real:"):
        try:
            scale = float(text[5:])
        except ValueError:
            scale = -1.0
        if scale > 0:
            return scale
    raise MountError(f"--time {text!r} is not a time mode", "use real, real:FACTOR (e.g. real:0.1) or none")


def check_mountpoint(mountpoint: Path, *, nonempty: bool = False) -> Path:
    mountinfo.refuse_dead(mountpoint)
    if not mountpoint.exists():
        raise MountError(f"mountpoint {mountpoint} does not exist", f"create it with `mkdir -p {mountpoint}`")
    if not mountpoint.is_dir():
        raise MountError(f"mountpoint {mountpoint} is not a directory", "give an empty directory")
    if mountinfo.is_mountpoint(mountpoint):
        raise MountError(f"{mountpoint} is already a mountpoint", "unmount it first, or choose another directory")
    try:
        busy = not nonempty and any(os.scandir(mountpoint))
    except OSError as exc:
        raise MountError(f"cannot read the mountpoint {mountpoint}: {exc.strerror}", "give a directory you can read") from exc
    if busy:
        raise MountError(f"mountpoint {mountpoint} is not empty: the mount would hide its files",
                         "give an empty directory, or add --nonempty to mount over them anyway")
    return mountpoint.resolve()


def prepare(directory: Path, mountpoint: Path, opts: "MountOptions | None" = None) -> Assembled:
    """All checks of ``vraid mount``; nothing is modified."""
    mountpoint = check_mountpoint(mountpoint, nonempty=bool(opts and opts.nonempty))
    if opts is not None:
        from .failure_ctl import check_rate

        parse_time(opts.time)
        check_rate(opts.rebuild_rate, "--rebuild-rate")
        if opts.trace is not None:
            _check_new_file(opts.trace, "--trace")
        if opts.disk_model:
            from vraid.backends.models import parse_model

            parse_model(opts.disk_model)
    asm = assemble(directory)
    if opts is not None:
        check_engine(asm, opts)  # a bad policy name fails here, before anything changes
        if asm.degraded and not asm.was_clean and not opts.force:
            missing = ", ".join(f"{r} ({why})" for r, why in sorted(asm.failed.items()))
            raise MountError(
                f"{directory} was not shut down cleanly and is degraded (member {missing}): the parity of "
                "stripes being written at the crash may be stale, and the missing member's blocks are "
                "reconstructed from that parity, so they may come back wrong (the RAID-5 write hole)",
                "mount with --force to start it anyway and check the filesystem (e2fsck) before trusting it, "
                "or put the missing member back first",
            )
        if asm.log_problem and not opts.force:
            from vraid.ondisk.logfiles import loss_message

            raise MountError(
                f"{directory}'s log disk ({asm.log.describe()}) cannot be used: {asm.log_problem}. The log holds "
                "acknowledged writes the data disks may lack, so the array is not started",
                "put the log file(s) back into the directory; or mount with --force to drop the log: "
                + loss_message(asm.log, asm.was_clean),
            )
    existing = mountinfo.mount_of_array(directory)
    if existing is not None:
        if mountinfo.is_dead(existing.mountpoint):
            raise MountError(f"{directory} is still mounted at {existing.mountpoint}, but that mount is dead: its daemon is gone",
                             f"run `vraid umount {existing.mountpoint}` (or `fusermount3 -u {existing.mountpoint}`), "
                             "then mount again: the mount resyncs what the crash left")
        raise MountError(f"{directory} is already mounted at {existing.mountpoint}", f"use that mount, or `vraid umount {existing.mountpoint}`")
    sock = control.socket_path(asm.directory, asm.uuid)
    if control.alive(sock):
        raise _already_served(asm.directory)
    if os.path.lexists(sock) and not sock.is_socket():
        control.bind(sock)  # raises: names what is in the way
    if opts is not None and opts.nvram is not None:
        _check_new_file(opts.nvram, "--nvram", may_exist=True)
    return asm


def _already_served(directory: Path) -> MountError:
    """The refusal when a daemon answers on the array's socket but its mount is not in
    /proc/mounts yet (one started an instant before this one): it names that mount from
    the array lock, which every daemon writes as soon as it holds it."""
    holder = holder_of(directory) or {}
    where = holder.get("mountpoint")
    return MountError(f"a vraid daemon is already serving {directory}: {describe(holder)}",
                      f"use that mount, or `vraid umount {where}` first" if where else "unmount it first")


def _check_new_file(path: Path, flag: str, *, may_exist: bool = False) -> None:
    """A file the mount will create (or, ``may_exist``, reuse): its directory must exist and be writable."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise MountError(f"{flag} {path} is a directory", f"give a file path, e.g. {path / 'file.bin'}")
    if path.exists() and not may_exist and not path.is_file():
        raise MountError(f"{flag} {path} exists and is not a regular file", "give a new file path")
    if not parent.is_dir():
        raise MountError(f"{flag} {path}: the directory {parent} does not exist", f"create it with `mkdir -p {parent}`, or give another path")
    if not os.access(parent, os.W_OK | os.X_OK) and not (may_exist and os.access(path, os.R_OK | os.W_OK)):
        raise MountError(f"{flag} {path}: the directory {parent} is not writable", "give a path in a directory you can write")


def mount(directory: Path, mountpoint: Path, opts: MountOptions) -> str:
    """Mount; return the message to show. Raises MountError/VraidError before any change."""
    asm = prepare(directory, mountpoint, opts)
    mountpoint = mountpoint.resolve()
    # held by the daemon for its life (inherited over the fork); "starting" until the daemon's pid is known
    lock = ArrayLock.acquire(asm.directory, mountpoint=mountpoint, starting=not opts.foreground)
    if opts.foreground:
        _configure_logging(opts.debug_fuse)
        try:
            serve(asm, mountpoint, opts, ready=lambda msg: print(msg, file=sys.stderr, flush=True))
        finally:
            lock.release()
        return ""
    log_path = asm.directory / "vraid.log"
    try:
        logfd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        lock.release()
        raise MountError(f"cannot write the daemon's log {log_path}: {exc.strerror}",
                         f"fix its permissions or remove it (`rm {log_path}`), then mount again") from exc
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the daemon
        code = 1
        try:
            os.close(read_fd)
            lock.claim(os.getpid(), mountpoint)
            code = _daemon_child(asm, mountpoint, opts, write_fd, logfd)
        finally:
            os._exit(code)
    lock.claim(pid, mountpoint)  # at once: a mount refused meanwhile names the daemon, not this process
    os.close(write_fd)
    os.close(logfd)
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            message = pipe.read().decode(errors="replace")
    finally:
        lock.release()  # the daemon's inherited hold stays
    if message.startswith("ready"):
        return message[len("ready") :].strip()
    os.waitpid(pid, 0)
    raise _daemon_error(message, log_path)


def _daemon_error(message: str, log_path: Path) -> MountError:
    """The daemon's report of why it did not start (JSON ``{"message", "hint"}``) as a MountError."""
    import json

    try:
        report = json.loads(message)
        return MountError(str(report["message"]), str(report.get("hint") or f"see {log_path}"))
    except (ValueError, KeyError, TypeError):
        return MountError(message.strip() or "the daemon exited before the mount was ready", f"see {log_path}")


def _daemon_child(asm: Assembled, mountpoint: Path, opts: MountOptions, write_fd: int, logfd: int) -> int:
    import json

    reported = False

    def report(text: str) -> None:
        nonlocal reported
        if not reported:
            reported = True
            try:
                os.write(write_fd, text.encode())
                os.close(write_fd)
            except OSError:
                pass

    def ready(msg: str) -> None:
        report(f"ready {msg}")

    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(logfd, 1)
        os.dup2(logfd, 2)
        _configure_logging(opts.debug_fuse)
        serve(asm, mountpoint, opts, ready=ready)
        return 0
    except BaseException as exc:  # noqa: BLE001 - report, then exit non-zero
        if isinstance(exc, VraidError):
            log.error("vraid daemon: %s", exc)
            report(json.dumps({"message": exc.message, "hint": exc.hint}))
        else:
            log.exception("vraid daemon failed")
            report(json.dumps({"message": f"the daemon failed: {type(exc).__name__}: {exc}",
                               "hint": f"see {asm.directory / 'vraid.log'} for the traceback"}))
        return 1


def _configure_logging(debug: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )


def _set_io_flusher() -> None:
    """FUSE-NOTES item 10: the daemon behind a loop device must not block on reclaim."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0:
            log.debug("PR_SET_IO_FLUSHER not set (errno %d)", ctypes.get_errno())
    except OSError:
        pass


def serve(asm: Assembled, mountpoint: Path, opts: MountOptions, ready) -> None:
    """Run the mount until it is unmounted; marks the array dirty, then clean."""
    _set_io_flusher()
    if asm.log_problem and opts.force:
        from vraid.ondisk.logfiles import drop_log, loss_message

        log.warning("dropping the log disk (%s): %s", asm.log_problem, loss_message(asm.log, asm.was_clean))
        drop_log(asm.directory, asm.log, asm.geometry, asm.uuid, [p for p in asm.paths if p is not None])
        asm.log_problem = ""
    asm.open_stores()
    warning = "\n".join(asm.notes)
    if not asm.was_clean:
        warning = (warning + "\n" if warning else "") + "warning: the array was not shut down cleanly"
    if warning:
        log.warning(warning)
    engine = build_engine(engine_config(asm, opts))  # opens NVRAM, reads the bitmap; changes nothing
    if opts.disk_model and engine.config.time_scale is not None:
        log.info("members run under the disk model %s, time scale %s", opts.disk_model, engine.config.time_scale)
    for disk, spec in sorted(_faults(asm, opts).items()):
        log.warning("fault injection on member %d: %s", disk, spec.describe())
    array = engine.array
    if array.cache is not None:
        array.cache.serve_a_mount()  # cheaper for a live mount, unlike the papers' model
    params = dict(asm.ref.params)
    if engine.nvram is not None:
        params["nvram"] = str(engine.nvram.path)
    else:
        params.pop("nvram", None)
    params.update(_bitmap_param(asm))
    from vraid.ondisk.failures import attach

    attach(asm, array)  # failures and finished rebuilds update the superblocks
    # everything that can refuse the mount comes before the array is marked dirty
    trace = listener = None
    sock = control.socket_path(asm.directory, asm.uuid)
    try:
        if opts.trace is not None:
            from vraid.sim.trace import TraceWriter

            try:
                trace = TraceWriter(opts.trace, capacity=asm.geometry.capacity, block=asm.geometry.block_size)
            except OSError as exc:
                raise MountError(f"cannot write the trace {opts.trace}: {exc.strerror}", "give a path in a writable directory") from exc
        listener = control.bind(sock)
        check_mountpoint(mountpoint, nonempty=opts.nonempty)
        fs = ImageFS(array, asm.config.image, trace=trace)
        options = set(pyfuse3.default_options) | {f"fsname=vraid:{fuse_escape(str(asm.directory.resolve()))}", "subtype=vraid"}
        if opts.debug_fuse:
            options.add("debug")
        try:
            pyfuse3.init(fs, str(mountpoint), options)
        except RuntimeError as exc:
            raise MountError(f"cannot mount at {mountpoint}: {exc}", "is /dev/fuse available, and are you root?") from exc
    except BaseException:
        if listener is not None:
            listener.close()
            sock.unlink(missing_ok=True)
        if trace is not None:
            trace.close()
        engine.close()
        asm.close()
        raise
    asm.mark(clean=False, params=params)  # the mount is certain to start: the array is in use
    unmounted = False
    try:
        trio.run(_main, asm, engine, fs, mountpoint, sock, ready, warning, listener)
        unmounted = True
    finally:
        pyfuse3.close(unmount=not unmounted)
        if trace is not None:
            trace.close()
        engine.close()
    asm.mark(clean=True)
    asm.close()
    log.info("unmounted %s; array marked clean", mountpoint)


def fuse_escape(value: str) -> str:
    """A FUSE ``-o`` option value with its commas and backslashes escaped (libfuse splits
    options at unescaped commas: an array path with a comma broke the mount)."""
    return value.replace("\\", "\\\\").replace(",", "\\,")


def engine_config(asm: Assembled, opts: MountOptions, *, opened: bool = True) -> EngineConfig:
    """The engine this mount runs (``vraid.engine.build``): mount options over vraid.toml's
    defaults, the NVRAM and bitmap the superblocks record. Nothing is opened or checked here;
    ``opened=False`` (before the member files are opened) leaves the stores out, for checks."""
    from vraid.core.units import parse_size

    cfg = asm.config
    from vraid.policies.registry import FAMILIES

    # every family: the mount option over vraid.toml's default
    policies = {key: opts.policy(key) or cfg.policy(key) for key in FAMILIES}
    policies["placement"] = _placement(asm, opts)
    cached = policies["cache"] != "none"
    # after a crash the NVRAM in use then is used again (with a cache) without being named,
    # or only replayed (without one)
    recorded = _recorded_nvram(asm)
    nvram = opts.nvram or (recorded if cached else None)
    chunk, kept = _bitmap_settings(asm)
    logrec = asm.log
    if logrec is not None and (nvram is not None or recorded is not None):
        raise MountError("this array has a log disk; --nvram would be a second journal", "mount without --nvram")
    return EngineConfig(
        asm.geometry,
        stores=tuple(asm.stores) if opened else None,
        spares=tuple(asm.spare_stores) if opened else (),
        policies=policies,
        cache_size=parse_size(opts.cache_size or cfg.cache_size, "cache size"),
        read_cache_size=parse_size(opts.policies.get("read_cache_size") or cfg.policy("read_cache_size"), "read cache size"),
        nvram=Path(nvram).resolve() if nvram else None,
        replay_nvram=recorded if nvram is None else None,
        uuid=asm.uuid,
        bitmap_chunk=chunk,
        bitmap_recorded=kept,
        faults=tuple(opts.faults),
        disk_model=opts.disk_model,
        time_scale=parse_time(opts.time),
        rebuild_rate=opts.rebuild_rate,
        failed=tuple(sorted(asm.failed)),
        was_clean=asm.was_clean,
        params=dict(asm.ref.params),
        log=logrec.spec if logrec is not None else None,
        log_size=logrec.size if logrec is not None else EngineConfig.log_size,
        log_stores=(tuple(asm.log_stores) if opened and logrec.kind != "per-disk" else None) if logrec is not None else None,
        force_recovery=opts.force,
    )


def _placement(asm: Assembled, opts: MountOptions) -> str:
    """The placement the superblocks record (seed 004; chosen at create): a mount may give
    other parameters of the same policy (``buffer``, ``order``), never another policy."""
    from vraid.ondisk.directory_area import PARAM
    from vraid.policies import registry

    recorded = (asm.ref.params.get(PARAM) or {}).get("spec", "static")
    given = opts.policy("placement")
    if given is None:
        return recorded
    if registry.parse("placement", given).name != registry.parse("placement", recorded).name:
        raise MountError(f"--placement {given}: this array was created with placement {recorded}",
                         "the placement is chosen at `vraid create`; mount without --placement")
    return given


def check_engine(asm: Assembled, opts: MountOptions) -> None:
    """Every engine setting of the mount checked (a bad policy name fails here, before anything changes).

    Raises:
        MountError: for the mistakes only a mount can make; VraidError for the rest.
    """
    config = engine_config(asm, opts, opened=False)
    if opts.nvram is not None and config.spec("cache") == "none":
        raise MountError("--nvram needs a write-back cache", "add --cache stripe (or pbg)")
    if config.spec("cache") != "none" and config.cache_size < asm.geometry.stripe_data_bytes:
        raise MountError(
            f"cache size {config.cache_size} bytes is smaller than one stripe ({asm.geometry.stripe_data_bytes} bytes)",
            "use a --cache-size of at least a few stripes, e.g. 64M",
        )
    config.check()


def _faults(asm: Assembled, opts: MountOptions) -> dict:
    from vraid.backends.faulty import parse_faults

    return parse_faults(opts.faults, asm.geometry.ndisks)


def _bitmap_settings(asm: Assembled) -> tuple[int, bool]:
    """Stripes per write-intent bitmap bit (0: none), and whether the members hold that
    bitmap (False: an array made before the bitmap existed gets one now; after a crash
    it resyncs everything)."""
    from vraid.ondisk.bitmap import PARAM, default_chunk

    params = asm.ref.params
    if PARAM in params:
        return int(params[PARAM]), True
    return default_chunk(asm.geometry), False


def _bitmap_param(asm: Assembled) -> dict:
    """The superblock parameter recording the bitmap (added to an array that had none)."""
    from vraid.ondisk.bitmap import PARAM

    chunk, kept = _bitmap_settings(asm)
    if not kept:
        log.info("no write-intent bitmap recorded; adding one (%d stripes per bit)", chunk)
    return {PARAM: chunk}


def _recorded_nvram(asm: Assembled) -> Path | None:
    """The NVRAM file the last mount used, if the array was not shut down cleanly:
    its dirty blocks must be replayed, so it is used again without being named."""
    recorded = asm.ref.params.get("nvram")
    if recorded and not asm.was_clean and Path(str(recorded)).exists():
        return Path(str(recorded))
    return None


async def _main(asm, engine: Engine, fs: ImageFS, mountpoint: Path, sock: Path, ready, warning: str,
                listener=None) -> None:
    from .failure_ctl import control_handlers as failure_handlers

    array = engine.array
    handlers = _handlers(asm, array, fs, mountpoint)
    handlers |= failure_handlers(asm, array, engine.wrap_timing)  # fail, add, rebuild-rate
    server = control.ControlServer(sock, handlers, listener)
    array.started_at = array.clock.now()
    async with trio.open_nursery() as nursery:
        await nursery.start(array.serve)
        report = await engine.recover()  # NVRAM replay and bitmap resync, before anything is served
        if report.message():
            warning = (warning + "\n" if warning else "") + report.message()
        asm.resync = report.to_dict()  # type: ignore[attr-defined]
        from vraid.engine.scrub import control_handlers

        server.handlers.update(control_handlers(array, nursery))
        await nursery.start(server.serve)
        nursery.start_soon(_watch_signals, asm, mountpoint)
        nursery.start_soon(array.watch_members)  # a member file deleted or truncated under the mount
        msg = f"mounted {asm.summary()} at {mountpoint}/{asm.config.image} (daemon pid {os.getpid()})"
        ready(msg + (f"\n{warning}" if warning else ""))
        log.info(msg)
        await pyfuse3.main()
        log.info("FUSE session ended; destaging and flushing members")
        await array.shutdown()
        nursery.cancel_scope.cancel()


def _handlers(asm: Assembled, array: Array, fs: ImageFS, mountpoint: Path):
    from vraid.core.schema import takes

    @takes()
    async def ping(_req):
        return {}

    @takes()
    async def status(_req):
        return {
            "status": array.status()
            | {
                "pid": os.getpid(),
                "directory": str(asm.directory.resolve()),
                "mountpoint": str(mountpoint),
                "image": asm.config.image,
                "uuid": asm.uuid,
                "state": "active",
                "was_clean": asm.was_clean,
                "resync": getattr(asm, "resync", None),
                "uptime": array.clock.now() - array.started_at,
                "open_handles": fs.open_handles,
                "internal_errors": fs.internal_errors,
            }
        }

    from vraid.engine.live import LiveState
    from vraid.policies.ct import default_limits

    # vraid top and vraid ctl: snapshot, pause, step, resume, ctl_get, ctl_set
    live = LiveState(array, source=f"{mountpoint}/{asm.config.image}",
                     ct_defaults=lambda: default_limits(asm.ref.params))
    return {"ping": ping, "status": status} | live.handlers()


async def _watch_signals(asm: Assembled, mountpoint: Path) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("signal %s: unmounting", signal.Signals(signum).name)
            try:
                await request_unmount(mountpoint, asm.config.image)
            except MountError as exc:
                log.error("%s", exc)


async def request_unmount(mountpoint: Path, image: str) -> None:
    # mountpoint was resolved before mounting; never stat anything inside it here
    holders = mountinfo.loop_devices_of(mountpoint / image, resolve=False)
    if holders:
        raise MountError(
            f"refusing to unmount {mountpoint}: {image} is still attached to {', '.join(holders)}",
            f"unmount the filesystem on it, run `losetup -d {holders[0]}`, then try again",
        )
    result = await trio.run_process(["fusermount3", "-u", str(mountpoint)], check=False, capture_stderr=True)
    if result.returncode != 0:
        raise MountError(f"fusermount3 -u {mountpoint} failed: {result.stderr.decode().strip()}", "is a process still using the image?")
