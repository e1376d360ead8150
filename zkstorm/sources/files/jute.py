"""Jute, ZooKeeper's big-endian binary encoding: the few records the snapshot and log files use.

Every reader takes ``(buf, pos)`` and returns ``(value, new_pos)``; they raise ``JuteError`` (a plain
``ValueError``) on a short or absurd buffer, and the file readers turn that into a ``FilesError`` that
names the file and the offset.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ...errors import JuteError

INT = struct.Struct(">i")
LONG = struct.Struct(">q")
FILE_HEADER = struct.Struct(">iiq")
TXN_HEADER = struct.Struct(">qiqqi")  # clientId, cxid, zxid, time, type
ACL_KEY_AND_STAT = struct.Struct(">qqqqqiiiqq")  # aclKey, then StatPersisted (60 bytes)
LONG_INT = struct.Struct(">qi")

# Sanity limit for one buffer or string: far above ZooKeeper's default jute.maxbuffer (1 MiB), because
# a server started with a larger jute.maxbuffer stores larger znodes; it only stops garbage lengths.
MAX_FIELD = 512 << 20

SNAPSHOT_MAGIC = 0x5A4B534E  # "ZKSN"
LOG_MAGIC = 0x5A4B4C47  # "ZKLG"
CONTAINER_OWNER = -(1 << 63)  # Long.MIN_VALUE
TTL_PREFIX = -1 << 56  # ephemeralOwner 0xFF00000000000000 | ttl (3.5.4+)


class Acl(NamedTuple):
    perms: int
    scheme: str
    id: str


def read_int(buf: bytes, pos: int) -> tuple[int, int]:
    if pos + 4 > len(buf):
        raise JuteError("truncated int")
    return INT.unpack_from(buf, pos)[0], pos + 4


def read_long(buf: bytes, pos: int) -> tuple[int, int]:
    if pos + 8 > len(buf):
        raise JuteError("truncated long")
    return LONG.unpack_from(buf, pos)[0], pos + 8


def read_buffer(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    """A jute buffer: length −1 is null (distinct from empty)."""
    length, pos = read_int(buf, pos)
    if length == -1:
        return None, pos
    if length < -1 or length > MAX_FIELD or pos + length > len(buf):
        raise JuteError(f"bad buffer length {length}")
    return bytes(buf[pos : pos + length]), pos + length


def decode_text(raw: bytes) -> str:
    """A jute ustring: UTF-8 for every path ZooKeeper accepts; CESU-8 surrogates kept, not fatal."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def read_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    raw, pos = read_buffer(buf, pos)
    return (None if raw is None else decode_text(raw)), pos


def read_acl_list(buf: bytes, pos: int) -> tuple[list[Acl], int]:
    count, pos = read_int(buf, pos)
    if count < -1 or count > MAX_FIELD // 12:
        raise JuteError(f"bad ACL count {count}")
    acls = []
    for _ in range(max(count, 0)):
        perms, pos = read_int(buf, pos)
        scheme, pos = read_string(buf, pos)
        ident, pos = read_string(buf, pos)
        acls.append(Acl(perms, scheme or "", ident or ""))
    return acls, pos


def client_owner(owner: int) -> int:
    """The ephemeralOwner a client sees: containers and TTL nodes show 0 (DataNode.copyStat)."""
    if owner < 0 and (owner == CONTAINER_OWNER or owner >> 56 == -1):
        return 0
    return owner


def ephemeral_type(owner: int) -> str:
    if owner == 0:
        return "none"
    if owner == CONTAINER_OWNER:
        return "container"
    if owner < 0 and owner >> 56 == -1:
        return "ttl"
    return "ephemeral"
