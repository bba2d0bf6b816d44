"""The superblock at the start of every member (first 4 KiB), like md's v1.2.

It says which array the member belongs to, the geometry, the member's role
(its position in the layout), an event counter that grows on every state
change (so a stale member can be told from a current one), and whether the
array was shut down cleanly. A CRC-32 over the whole 4 KiB catches corruption.
``params`` holds small named settings later issues store per array (e.g. the
CT limits the stride benchmark measured), as JSON.
"""

from __future__ import annotations

import json
import struct
import uuid as uuidlib
import zlib
from dataclasses import asdict, dataclass, field, replace

from vraid.errors import SuperblockError
from vraid.core.geometry import Geometry
from vraid.core.redundancy import LAYOUT_NAMES

MAGIC = b"VRAIDSB\x00"
VERSION = 1
SIZE = 4096
_HEAD = struct.Struct("<8sHH16sBBhHHIIQQQdd")
_PARAMS_LEN = struct.Struct("<I")
_CRC = struct.Struct("<I")
_FLAG_CLEAN = 1
SPARE = -1


@dataclass(frozen=True)
class Superblock:
    array_uuid: str
    level: int
    layout: str
    ndisks: int
    block_size: int
    strip_size: int
    data_offset: int
    stripes: int
    role: int  # member index in the layout; SPARE (-1) for a spare
    events: int = 0
    clean: bool = True
    ctime: float = 0.0
    utime: float = 0.0
    params: dict[str, object] = field(default_factory=dict)
    version: int = VERSION

    # -- geometry -----------------------------------------------------------
    @classmethod
    def for_member(cls, geometry: Geometry, array_uuid: str, role: int, now: float) -> "Superblock":
        return cls(
            array_uuid=array_uuid,
            level=geometry.level,
            layout=geometry.layout,
            ndisks=geometry.ndisks,
            block_size=geometry.block_size,
            strip_size=geometry.strip_size,
            data_offset=geometry.data_offset,
            stripes=geometry.stripes,
            role=role,
            ctime=now,
            utime=now,
        )

    def geometry(self) -> Geometry:
        return Geometry(
            level=self.level,
            ndisks=self.ndisks,
            stripes=self.stripes,
            block_size=self.block_size,
            strip_size=self.strip_size,
            layout=self.layout,
            data_offset=self.data_offset,
        )

    def evolve(self, **changes: object) -> "Superblock":
        return replace(self, **changes)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    # -- encoding -----------------------------------------------------------
    def pack(self) -> bytes:
        head = _HEAD.pack(
            MAGIC,
            self.version,
            _FLAG_CLEAN if self.clean else 0,
            uuidlib.UUID(self.array_uuid).bytes,
            self.level,
            LAYOUT_NAMES.index(self.layout),
            self.role,
            self.ndisks,
            0,
            self.block_size,
            self.strip_size,
            self.data_offset,
            self.stripes,
            self.events,
            self.ctime,
            self.utime,
        )
        params = json.dumps(self.params, sort_keys=True, separators=(",", ":")).encode()
        body = head + _PARAMS_LEN.pack(len(params)) + params
        if len(body) > SIZE - _CRC.size:
            raise SuperblockError("superblock parameters do not fit in 4 KiB", "store fewer parameters")
        body = body.ljust(SIZE - _CRC.size, b"\0")
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def unpack(cls, raw: bytes, where: str = "member") -> "Superblock":
        """Decode a superblock.

        Raises:
            SuperblockError: no vraid magic, bad checksum, or unknown version.
        """
        if len(raw) < SIZE or raw[:8] != MAGIC:
            raise NotAMember(f"{where} has no vraid superblock", "is it a member file of a vraid array?")
        body, (crc,) = raw[: SIZE - _CRC.size], _CRC.unpack(raw[SIZE - _CRC.size : SIZE])
        if zlib.crc32(body) != crc:
            raise SuperblockError(
                f"{where}: superblock checksum mismatch (the superblock is corrupted)",
                "restore the member from a backup, or with RAID-5 remove it and let the array run degraded",
            )
        f = _HEAD.unpack_from(body)
        version = f[1]
        if version != VERSION:
            raise SuperblockError(f"{where}: superblock version {version} is not supported", "use a matching vraid")
        (plen,) = _PARAMS_LEN.unpack_from(body, _HEAD.size)
        start = _HEAD.size + _PARAMS_LEN.size
        try:
            params = json.loads(body[start : start + plen] or b"{}")
            layout = LAYOUT_NAMES[f[5]]  # (append-only: every scheme's names)
        except (ValueError, IndexError) as exc:
            raise SuperblockError(f"{where}: superblock fields are invalid ({exc})", "restore the member") from exc
        return cls(
            array_uuid=str(uuidlib.UUID(bytes=f[3])),
            level=f[4],
            layout=layout,
            role=f[6],
            ndisks=f[7],
            block_size=f[9],
            strip_size=f[10],
            data_offset=f[11],
            stripes=f[12],
            events=f[13],
            ctime=f[14],
            utime=f[15],
            clean=bool(f[2] & _FLAG_CLEAN),
            params=params,
            version=version,
        )


class NotAMember(SuperblockError):
    """The file carries no vraid magic at all."""
