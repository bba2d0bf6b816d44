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

from vraid.ondisk import failures as failure
from vraid.errors import VraidError


def control_handlers(asm, array, wrap: Callable) -> dict[str, Callable]:
    """The handlers to add to the daemon's control server; ``wrap`` puts a new
    spare's store under the mount's timing model."""

    async def fail(req: dict[str, Any]) -> dict[str, Any]:
        role = failure.resolve_disk(asm, req.get("disk", ""))
        failure.check_can_fail(asm, role, force=bool(req.get("force")), missing=array.health.missing_roles)
        name = array.members[role].store.name
        array.fail_member(role, f"failed by `vraid fail` ({name})")
        return {"disk": role, "store": name, "status": array.status()}

    async def add(req: dict[str, Any]) -> dict[str, Any]:
        if not asm.geometry.redundancy.tolerates:
            raise VraidError("RAID-0 has no redundancy: a spare would never be used", "spares are for RAID-5")
        path = failure.add_spare(asm, Path(str(req.get("file", ""))))
        array.add_spare(wrap(asm.spare_stores[-1]))
        return {"path": str(path), "status": array.status()}

    async def rebuild_rate(req: dict[str, Any]) -> dict[str, Any]:
        rate = req.get("rate")
        if rate is not None and (not isinstance(rate, (int, float)) or rate < 0):
            raise VraidError(f"rebuild rate {rate!r} is not a number of MB/s", "give 0 (no limit) or more")
        array.set_rebuild_rate(float(rate) * 1e6 if rate else None)
        return {"rate_mb_s": rate or None}

    return {"fail": fail, "add": add, "rebuild-rate": rebuild_rate}
