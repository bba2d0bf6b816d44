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
(``vraid.engine.host.recovery``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from . import control, mountinfo
from vraid.ondisk.lock import ArrayLock, describe, holder_of
from vraid.engine.host.array import Array
from vraid.engine.build import Engine, EngineConfig, EngineOptions, build_engine, parse_time
from vraid.ondisk.assemble import Assembled, assemble
from vraid.errors import MountError, VraidError
from vraid.fuse.fuselib import pyfuse3

if TYPE_CHECKING:
    from vraid.fuse.image import ImageFS

log = logging.getLogger(__name__)
PR_SET_IO_FLUSHER = 57


@dataclass
class MountOptions(EngineOptions):
    """``vraid mount``'s options: the engine's (:class:`vraid.engine.build.EngineOptions`)
    and the mount's own."""

    foreground: bool = False
    debug_fuse: bool = False
    trace: Path | None = None
    #: mount onto a directory that is not empty (its files are hidden while mounted)
    nonempty: bool = False


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
                f"{directory}'s log disk ({asm.log.describe()}) cannot be used: {asm.log_problem}; the log holds "
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
    pyfuse3()  # the extra vraid[mount]: said before anything is checked or changed
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

        drop_log(asm.directory, asm.log, asm.geometry, asm.uuid, [p for p in asm.paths if p is not None])
        asm.notes.append(f"warning: dropped the log disk ({asm.log_problem}): {loss_message(asm.log, asm.was_clean)}")
        asm.log_problem = ""
    asm.open_stores()
    from vraid.ondisk.room import open_to_others

    warning = "\n".join([*asm.notes, *filter(None, [open_to_others(asm.directory)])])
    if not asm.was_clean:
        warning = (warning + "\n" if warning else "") + "warning: the array was not shut down cleanly"
    if warning:
        log.warning(warning)
    engine = build_engine(EngineConfig.from_assembled(asm, opts))  # opens NVRAM, reads the bitmap; changes nothing
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
        from vraid.fuse.image import ImageFS

        fs = ImageFS(array, asm.config.image, trace=trace)
        options = set(pyfuse3().default_options) | {f"fsname=vraid:{fuse_escape(str(asm.directory.resolve()))}", "subtype=vraid"}
        if opts.debug_fuse:
            options.add("debug")
        try:
            pyfuse3().init(fs, str(mountpoint), options)
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
        pyfuse3().close(unmount=not unmounted)
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


def check_engine(asm: Assembled, opts: MountOptions) -> None:
    """Every engine setting of the mount checked (a bad policy name fails here, before anything changes).

    Raises:
        MountError: for the mistakes only a mount can make; VraidError for the rest.
    """
    config = EngineConfig.from_assembled(asm, opts, opened=False)
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


def _bitmap_param(asm: Assembled) -> dict:
    """The superblock parameter recording the bitmap (added to an array that had none)."""
    from vraid.engine.assembled import bitmap_settings
    from vraid.ondisk.bitmap import PARAM

    chunk, kept = bitmap_settings(asm)
    if not kept:
        log.info("no write-intent bitmap recorded; adding one (%d stripes per bit)", chunk)
    return {PARAM: chunk}


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
        from vraid.engine.raid.scrub import control_handlers

        server.handlers.update(control_handlers(array.raid, nursery))
        await nursery.start(server.serve)
        nursery.start_soon(_watch_signals, asm, mountpoint)
        nursery.start_soon(array.raid.watch_members)  # a member file deleted or truncated under the mount
        msg = f"mounted {asm.summary()} at {mountpoint}/{asm.config.image} (daemon pid {os.getpid()})"
        ready(msg + (f"\n{warning}" if warning else ""))
        log.info(msg)
        await pyfuse3().main()
        log.info("FUSE session ended; destaging and flushing members")
        await array.shutdown()
        nursery.cancel_scope.cancel()


def _handlers(asm: Assembled, array: Array, fs: ImageFS, mountpoint: Path):
    from vraid.core.schema import takes
    from vraid.policies.running import sources as policy_sources

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
                "policy_sources": policy_sources(array),  # which version of a policy file runs
            }
        }

    from vraid.engine.host.live import LiveState
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
