"""Where a remapped array keeps its stripe directory on the members (seed 004, section 2.1).

An array made with ``vraid create --placement multibuffer`` (or ``dpsr``) moves blocks
between stripes, so it cannot be read without its stripe directory
(:class:`vraid.core.directory.StripeDirectory`). The directory lives in a region of every
member past its data area (the members' reserved area at the end, as a per-disk log's
region does), the same bytes on each member, so any member that survives holds it:

========== =====================================================================
slot A     a checkpoint (:func:`vraid.core.directory_format.encode_checkpoint`)
slot B     the other checkpoint: they alternate, the newer whole one is used
journal    the records of the steps since the newer checkpoint, appended
========== =====================================================================

Each part starts on a block boundary. A checkpoint is written into the slot not holding
the newest one, made durable, and only then the journal restarts at its beginning, so a
power cut at any point leaves one whole checkpoint and a journal that continues it
(:func:`vraid.core.directory_format.recover` skips the records a checkpoint covers).

The superblock of every member records the placement and this region
(``params["placement"]``: ``{"spec", "offset", "checkpoint", "journal"}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vraid.core.directory_format import checkpoint_size, encode_checkpoint
from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.core.units import format_size

#: the superblock params key
PARAM = "placement"
#: the journal part's size: room for about 20,000 stripe-write records between checkpoints
JOURNAL_BYTES = 1 << 20


def _round(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class DirectoryArea:
    """The directory region of every member: ``offset`` (bytes from the member's start) and
    the sizes of its parts (each a whole number of blocks)."""

    offset: int
    checkpoint: int
    journal: int

    @property
    def size(self) -> int:
        return 2 * self.checkpoint + self.journal

    def slot(self, i: int) -> int:
        """Member offset of checkpoint slot ``i`` (0 = A, 1 = B)."""
        return self.offset + i * self.checkpoint

    @property
    def journal_offset(self) -> int:
        return self.offset + 2 * self.checkpoint

    @classmethod
    def for_geometry(cls, geometry: Geometry, strips: int, journal: int = JOURNAL_BYTES) -> "DirectoryArea":
        """The region right after the data area of ``geometry`` for ``strips`` logical strips."""
        bs = geometry.block_size
        return cls(_round(geometry.member_size, bs), _round(checkpoint_size(geometry, strips), bs), _round(journal, bs))

    def to_param(self, spec: str) -> dict[str, Any]:
        return {"spec": spec, "offset": self.offset, "checkpoint": self.checkpoint, "journal": self.journal}

    @classmethod
    def from_param(cls, param: Any) -> "DirectoryArea":
        try:
            return cls(int(param["offset"]), int(param["checkpoint"]), int(param["journal"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise VraidError(f"the superblock's placement record is damaged ({param!r})",
                             "the array cannot be read without its directory; restore the member files from a copy") from exc


def logical_stripes(stripes: int, spare: float) -> int:
    """Stripes of data when ``spare`` (a fraction of the data stripes) are kept free; at
    least one stripe stays free (a large write needs one)."""
    return max(1, min(stripes - 1, int(stripes / (1.0 + spare))))


def spare_of(policy: Any) -> float:
    return float(getattr(policy, "spare", 0.0) or 0.0)


def remapped_geometry(*, disk_size: int, policy: Any, **shape: Any) -> tuple[Geometry, DirectoryArea, int]:
    """``(geometry, area, logical stripes)`` of a remapped array on members of ``disk_size``:
    as many stripes as leave room for the directory region after the data area.

    Raises:
        GeometryError / VraidError: members too small for a stripe and the directory.
    """
    g = Geometry.for_disk_size(disk_size=disk_size, **shape)
    if g.redundancy.parity_columns != 1:
        raise VraidError(f"placement {policy.name} needs RAID-5 (one parity strip per stripe)", "add --level 5")
    stripes = g.stripes
    while stripes >= 2:
        cand = Geometry(g.level, g.ndisks, stripes, g.block_size, g.strip_size, g.layout, g.data_offset)
        data = logical_stripes(stripes, spare_of(policy))
        area = DirectoryArea.for_geometry(cand, data * cand.data_disks)
        if area.offset + area.size <= disk_size and data < stripes:
            return cand, area, data
        over = area.offset + area.size - disk_size
        stripes -= max(1, -(-over // g.strip_size)) if over > 0 else 1
    raise VraidError(f"members of {format_size(disk_size)} have no room for free stripes and a stripe directory",
                     "give a larger --disk-size (e.g. 64M) or a smaller spare fraction")


def format_members(stores: Any, area: DirectoryArea, directory: Any) -> None:
    """A new array's region on every store: the directory as checkpoint A; slot B and the
    journal zeroed."""
    cp = encode_checkpoint(directory)
    for store in stores:
        store.write_sync(area.slot(0), cp + bytes(area.checkpoint - len(cp)))
        store.write_sync(area.slot(1), bytes(area.checkpoint))
        store.write_sync(area.journal_offset, bytes(area.journal))


def check_create_time(given: str, recorded: str) -> None:
    """Refuse a mount's ``--placement`` that changes a parameter fixed at create (the policy
    class's ``create_time``, e.g. ``spare``, which sized the stripe directory).

    Raises:
        MountError: naming the parameter, the array's value and what a mount may change.
    """
    from vraid.errors import MountError
    from vraid.policies import registry
    from vraid.policies.params import schema

    made = registry.parse("placement", recorded)
    cls = registry.policy_class(made)
    fixed = getattr(cls, "create_time", ())
    values = {p.name: p.default for p in schema(cls)} | dict(made.params)
    for key, value in registry.parse("placement", given).params:
        if key in fixed and value != values.get(key):
            raise MountError(f"--placement {given}: {key} is chosen when the array is created (this array's is "
                             f"{values.get(key)})", f"drop {key}= from --placement; the mount may change only "
                             + ", ".join(p.name for p in schema(cls) if p.name not in fixed))
