"""Control-socket commands of a running mount for failures: ``fail``, ``add``, ``rebuild-rate``.

Each runs inside the daemon, between host requests, so the array and the
superblocks change together: ``fail`` fails a member as a real failure would
(superblocks updated, a spare starts rebuilding), ``add`` makes a file a
spare (and starts a rebuild when a member is failed), ``rebuild-rate`` sets
the rebuild's rate limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from vraid.core.schema import BadRequest, Bool, IntOrStr, Num, Str, takes
from vraid.ondisk import failures as failure
from vraid.errors import VraidError

#: the slowest rebuild rate limit, MB/s (0 means no limit); below it a rebuild would
#: effectively stop while `vraid status` shows it running
MIN_RATE = 0.1
#: the largest rate limit accepted, MB/s
MAX_RATE = 1e6


def check_rate(rate: float | None, flag: str = "rate") -> float | None:
    """A rebuild rate limit in MB/s: None or 0 (no limit), else MIN_RATE..MAX_RATE.

    Raises:
        VraidError: for anything else (negative, NaN, infinite, or so small the rebuild would stall).
    """
    import math

    if rate is None or rate == 0:
        return None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate):
        raise BadRequest(f"{flag} {rate!r} is not a number of MB/s", "give 0 (no limit) or a rate such as 50")
    if rate < 0:
        raise BadRequest(f"{flag} {rate:g} is negative", "give 0 (no limit) or a rate such as 50")
    if rate < MIN_RATE:
        raise BadRequest(f"{flag} {rate:g} MB/s is too slow: the rebuild would all but stop",
                         f"give 0 (no limit) or at least {MIN_RATE} MB/s")
    if rate > MAX_RATE:
        raise BadRequest(f"{flag} {rate:g} MB/s is more than any member can write", "give 0 for no limit")
    return float(rate)


def control_handlers(asm, array, wrap: Callable) -> dict[str, Callable]:
    """The handlers to add to the daemon's control server; ``wrap`` puts a new
    spare's store under the mount's timing model."""

    @takes(disk=IntOrStr(4096, "member index or file name"), force=Bool())
    async def fail(req: dict[str, Any]) -> dict[str, Any]:
        if "disk" not in req:
            raise BadRequest("fail: which member? the field disk is missing", 'e.g. {"cmd": "fail", "disk": 2}')
        role = failure.resolve_disk(asm, req["disk"])
        failure.check_can_fail(asm, role, force=bool(req.get("force")), missing=array.health.missing_roles)
        name = array.members[role].store.name
        array.raid.fail_member(role, f"failed by `vraid fail` ({name})")
        return {"disk": role, "store": name, "status": array.status()}

    @takes(file=Str(4096, "path of the spare file"))
    async def add(req: dict[str, Any]) -> dict[str, Any]:
        if not asm.geometry.redundancy.tolerates:
            raise VraidError("RAID-0 has no redundancy: a spare would never be used", "spares are for the levels with redundancy (1, 4, 5, 6, 10)")
        if not req.get("file"):
            raise BadRequest("add: the field file (the spare's path) is missing", 'e.g. {"cmd": "add", "file": "/arr/spare9.img"}')
        path = failure.add_spare(asm, Path(req["file"]))
        array.raid.add_spare(wrap(asm.spare_stores[-1]))
        return {"path": str(path), "status": array.status()}

    @takes(rate=Num(0, MAX_RATE, nullable=True, what="MB/s, 0 for no limit"))
    async def rebuild_rate(req: dict[str, Any]) -> dict[str, Any]:
        rate = check_rate(req.get("rate"))
        array.raid.set_rebuild_rate(rate * 1e6 if rate else None)
        return {"rate_mb_s": rate}

    return {"fail": fail, "add": add, "rebuild-rate": rebuild_rate}
