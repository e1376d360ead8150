"""ZooKeeper transaction logs: records, their Adler32 checksums, every txn type (FileTxnLog.java;
docs/zookeeper-files.md §11–12).

A log is a header and ``(long checksum, int length, payload, 'B')`` records, then zeros up to its
preallocated size. The end of data is a zero length, a short tail or a record without its ``B`` (a log
the server is still appending to), when nothing but zeros or that record's own bytes follow; a whole
record after it, or a complete record with a wrong checksum, is corruption.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

from zlib_ng import zlib_ng

from ...errors import FilesError, JuteError
from .jute import (
    FILE_HEADER,
    INT,
    LOG_MAGIC,
    MAX_FIELD,
    TXN_HEADER,
    Acl,
    decode_text,
    read_acl_list,
    read_buffer,
    read_int,
    read_long,
    read_string,
)
from .snapfile import name_zxid, open_file

_CHUNK = 1 << 20
_SKIP_READ = 1 << 12  # after seeking over a record: enough for the next header (records before the
# snapshot's zxid can be large multis, which are seeked over, not read)
_FRAME = struct.Struct(">qi")  # checksum, length
_FRAMED_HEADER = 12 + TXN_HEADER.size  # a record's frame and txn header: what says whether one starts here
_FRAMED = struct.Struct(_FRAME.format + TXN_HEADER.format.lstrip(">"))  # both, in one unpack
FRAMED_SET = struct.Struct(_FRAMED.format + "i")  # and the int after them: a setData's path length
_TYPE_AT = _FRAMED_HEADER - INT.size  # the txn type, the header's last field
_ZERO_BLOCK = bytes(1 << 12)
_DIGEST = struct.Struct(">iq")  # TxnDigest: version, tree digest

# OpCodes that reach the log (ZooDefs.OpCode)
CREATE, DELETE, SET_DATA, SET_ACL, CHECK, MULTI = 1, 2, 5, 7, 13, 14
CREATE2, RECONFIG, CREATE_CONTAINER, DELETE_CONTAINER, CREATE_TTL = 15, 16, 19, 20, 21
CREATE_SESSION, CLOSE_SESSION, ERROR = -10, -11, -1

OP_NAMES = {
    CREATE: "create",
    DELETE: "delete",
    SET_DATA: "setData",
    SET_ACL: "setACL",
    CHECK: "check",
    MULTI: "multi",
    CREATE2: "create2",
    RECONFIG: "reconfig",
    CREATE_CONTAINER: "createContainer",
    DELETE_CONTAINER: "deleteContainer",
    CREATE_TTL: "createTTL",
    CREATE_SESSION: "createSession",
    CLOSE_SESSION: "closeSession",
    ERROR: "error",
}


class Create(NamedTuple):
    path: str
    data: bytes | None
    acl: list[Acl]
    kind: str  # persistent | ephemeral | container | ttl
    parent_cversion: int  # −1: parent's cversion + 1
    ttl: int = 0


class Delete(NamedTuple):
    path: str


class SetData(NamedTuple):
    path: str
    data: bytes | None
    version: int


class SetAcl(NamedTuple):
    path: str
    acl: list[Acl]
    version: int


class Check(NamedTuple):
    path: str
    version: int


class CreateSession(NamedTuple):
    timeout_ms: int


class CloseSession(NamedTuple):
    paths: list[str] | None  # 3.6+: the session's ephemerals at close; None before


class Failed(NamedTuple):
    err: int  # KeeperException code (−110 NODEEXISTS, −101 NONODE, −103 BADVERSION, −2 …)


class Multi(NamedTuple):
    ops: list[tuple[int, Any]]  # (type, body) per sub-txn

    @property
    def failed(self) -> bool:
        return any(op == ERROR for op, _ in self.ops)


class Txn(NamedTuple):
    zxid: int
    session: int
    cxid: int
    time_ms: int
    type: int
    body: Any
    digest: tuple[int, int] | None  # (version, tree digest after this txn), 3.6+

    @property
    def op(self) -> str:
        return OP_NAMES.get(self.type, str(self.type))


class Head(NamedTuple):
    """A record as ``LogFile.heads`` reads it: the txn header, and either its parsed ``body`` (every txn
    but a plain setData, whose ``body`` is None) or a setData's ``path`` as its raw bytes, its ``version``
    and where its data is in ``buf``, the chunk the reader read it in (``data`` slices it out), none of
    them decoded. No digest is read. A head keeps its chunk alive: for reading, not for keeping."""

    zxid: int
    session: int
    cxid: int
    time_ms: int
    type: int
    body: Any
    path: bytes | None = None
    version: int = 0
    buf: bytes = b""
    data_at: int = 0
    data_size: int = 0

    @property
    def data(self) -> bytes:
        """A setData head's data (a non-null buffer: a null one is read whole, as a ``SetData`` body)."""
        return self.buf[self.data_at : self.data_at + self.data_size]


def _set_data(buf: bytes, pos: int, end: int) -> tuple[SetData, int] | None:
    """The common case of a production log (partition states, offsets, heartbeats) in straight-line
    code, about half the cost of the general readers; None when the bytes need their checks and
    error messages (a null or bad length)."""
    (size,) = INT.unpack_from(buf, pos)
    if 0 <= size <= end - pos - 8:
        path = buf[pos + 4 : pos + 4 + size]
        pos += 4 + size
        (size,) = INT.unpack_from(buf, pos)
        if 0 <= size <= end - pos - 8:
            data = buf[pos + 4 : pos + 4 + size]
            pos += 4 + size
            (version,) = INT.unpack_from(buf, pos)
            return tuple.__new__(SetData, (decode_text(path), data, version)), pos + 4
    return None


def _body(kind: int, buf: bytes, pos: int, end: int) -> tuple[Any, int]:
    """Parse one txn body of ``kind`` from ``buf[pos:end]``; returns (body, position after it)."""
    if kind == SET_DATA and end - pos >= 12 and (parsed := _set_data(buf, pos, end)) is not None:
        return parsed
    if kind in (CREATE, CREATE2):
        path, pos = read_string(buf, pos)
        data, pos = read_buffer(buf, pos)
        acl, pos = read_acl_list(buf, pos)
        if pos >= end:
            raise JuteError("truncated create")
        ephemeral = buf[pos] != 0
        pos += 1
        left = end - pos
        if left in (0, 12):  # CreateTxnV0 (no parentCVersion), with or without a TxnDigest
            parent_cversion = -1
        else:
            parent_cversion, pos = read_int(buf, pos)
        return Create(path or "", data, acl, "ephemeral" if ephemeral else "persistent", parent_cversion), pos
    if kind in (CREATE_CONTAINER, CREATE_TTL):
        path, pos = read_string(buf, pos)
        data, pos = read_buffer(buf, pos)
        acl, pos = read_acl_list(buf, pos)
        parent_cversion, pos = read_int(buf, pos)
        if kind == CREATE_TTL:
            ttl, pos = read_long(buf, pos)
            return Create(path or "", data, acl, "ttl", parent_cversion, ttl), pos
        return Create(path or "", data, acl, "container", parent_cversion), pos
    if kind in (DELETE, DELETE_CONTAINER):
        path, pos = read_string(buf, pos)
        return Delete(path or ""), pos
    if kind in (SET_DATA, RECONFIG):
        path, pos = read_string(buf, pos)
        data, pos = read_buffer(buf, pos)
        version, pos = read_int(buf, pos)
        return SetData(path or "", data, version), pos
    if kind == SET_ACL:
        path, pos = read_string(buf, pos)
        acl, pos = read_acl_list(buf, pos)
        version, pos = read_int(buf, pos)
        return SetAcl(path or "", acl, version), pos
    if kind == CHECK:
        path, pos = read_string(buf, pos)
        version, pos = read_int(buf, pos)
        return Check(path or "", version), pos
    if kind == MULTI:
        count, pos = read_int(buf, pos)
        if count < 0 or count > (end - pos) // 8:  # each sub-txn takes 8 bytes at least
            raise JuteError(f"bad multi size {count}")
        ops = []
        for _ in range(count):
            sub_kind, pos = read_int(buf, pos)
            if sub_kind == MULTI:  # ZooKeeper's MultiTxn never nests: refused, not followed down
                raise JuteError("a multi inside a multi")
            raw, pos = read_buffer(buf, pos)
            raw = raw or b""
            body, end_of_sub = _body(sub_kind, raw, 0, len(raw))
            if end_of_sub != len(raw):
                raise JuteError(f"{len(raw) - end_of_sub} unexpected bytes after a multi's sub-txn")
            ops.append((sub_kind, body))
        return Multi(ops), pos
    if kind == CREATE_SESSION:
        timeout, pos = read_int(buf, pos)
        return CreateSession(timeout), pos
    if kind == CLOSE_SESSION:
        return _close_session(buf, pos, end)
    if kind == ERROR:
        err, pos = read_int(buf, pos)
        return Failed(err), pos
    raise JuteError(f"unknown txn type {kind}")


def record_body(kind: int, payload: bytes) -> tuple[Any, tuple[int, int] | None]:
    """A record's body (``payload`` is the txn header and what follows it, up to its ``B``) and its
    TxnDigest if it carries one; ``JuteError`` when the bytes are not a body of ``kind`` and nothing else."""
    length = len(payload)
    body, at = _body(kind, payload, TXN_HEADER.size, length)
    digest = None
    if length - at == 12:
        digest, at = _DIGEST.unpack_from(payload, at), at + 12
    if at != length:
        raise JuteError(f"{length - at} unexpected bytes after the body")
    return body, digest


def _close_session(buf: bytes, pos: int, end: int) -> tuple[CloseSession, int]:
    """3.6+ logs carry the paths to delete; older ones (and closeSessionTxn.enabled=false) nothing.
    The body is accepted only if it is a vector of absolute paths that ends where a body can end."""
    if end - pos in (0, 12):
        try:
            paths, after = _path_vector(buf, pos, end)
            if after == end:
                return CloseSession(paths), after
        except JuteError:
            pass
        return CloseSession(None), pos
    paths, pos = _path_vector(buf, pos, end)
    return CloseSession(paths), pos


def _path_vector(buf: bytes, pos: int, end: int) -> tuple[list[str], int]:
    buf = buf[:end]  # the readers bound-check against len(buf); cut once, not per path
    count, pos = read_int(buf, pos)
    if count < 0 or count > (end - pos) // 4:  # each path takes 4 bytes at least
        raise JuteError(f"bad path count {count}")
    paths = []
    for _ in range(count):
        path, pos = read_string(buf, pos)
        if not path or not path.startswith("/"):
            raise JuteError("not a path")
        paths.append(path)
    return paths, pos


def _first_nonzero(buf: bytes, pos: int) -> int:
    """The position of the first byte at or after ``pos`` that is not zero (``len(buf)`` if none): a
    block at a time against a block of zeros (a memcmp), so 64 MiB of preallocated zeros cost little."""
    end, step = len(buf), len(_ZERO_BLOCK)
    while pos < end:
        block = buf[pos : pos + step]
        if block != _ZERO_BLOCK[: len(block)]:
            return pos + len(block) - len(block.lstrip(b"\0"))
        pos += step
    return end


def _record_at(fd: int, offset: int, size: int) -> bool:
    """Whether a whole record starts at ``offset`` of the log open as ``fd`` (``size`` bytes): a length
    a txn fits in, a txn type ZooKeeper logs, its ``B`` where the length says and its checksum right."""
    head = os.pread(fd, _FRAMED_HEADER, offset)
    if len(head) < _FRAMED_HEADER:
        return False
    checksum, length = _FRAME.unpack_from(head)
    if not TXN_HEADER.size <= length <= MAX_FIELD or offset + 12 + length >= size:
        return False
    if INT.unpack_from(head, _TYPE_AT)[0] not in OP_NAMES or os.pread(fd, 1, offset + 12 + length) != b"B":
        return False
    value, at, left = zlib_ng.adler32(b""), offset + 12, length  # checksummed a chunk at a time: a
    while left:  # garbage length allocates nothing
        data = os.pread(fd, min(left, _CHUNK), at)
        if not data:
            return False
        value, at, left = zlib_ng.adler32(data, value), at + len(data), left - len(data)
    return value == checksum


def _next_record(fd: int, start: int, size: int) -> int | None:
    """The offset of the first whole record (``_record_at``) at or after ``start`` in the log open as
    ``fd`` (``size`` bytes), or None: what tells a log's end from a hole in it.

    Each record's checksum is an Adler-32 in a long: it starts with four zero bytes, so only the places
    where four zeros start are tried (``bytes.find``). Inside zeros a frame is all zero and no record can
    start before the 11 bytes ahead of the next non-zero byte, so runs of zeros are passed over whole, and
    the holes of a sparse file (ZooKeeper preallocates a log by writing its last byte, FilePadding.java)
    without reading them (``SEEK_DATA``)."""
    seek_data = getattr(os, "SEEK_DATA", None)  # (it moves the descriptor's offset: called once the read is over)
    pos = start
    while pos + _FRAMED_HEADER < size:
        if seek_data is not None:
            try:
                pos = max(pos, os.lseek(fd, pos, seek_data) - 11)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nothing but a hole from here to the end
                    return None
        chunk = os.pread(fd, _CHUNK + _FRAMED_HEADER, pos)
        limit = min(_CHUNK, len(chunk) - _FRAMED_HEADER)  # a record needs its framed header and a "B"
        at = 0
        while True:
            at = chunk.find(b"\0\0\0\0", at)
            if at < 0 or at >= limit:
                break
            checksum, length = _FRAME.unpack_from(chunk, at)
            if checksum == 0 and length == 0:
                at = max(at + 1, _first_nonzero(chunk, at + 12) - 11)
                continue
            if (
                TXN_HEADER.size <= length <= MAX_FIELD
                and INT.unpack_from(chunk, at + _TYPE_AT)[0] in OP_NAMES
                and _record_at(fd, pos + at, size)
            ):
                return pos + at
            at += 1
        if len(chunk) < _CHUNK + _FRAMED_HEADER:
            return None
        pos += _CHUNK
    return None


class LogFile:
    """One transaction log; ``txns()`` yields its records in order."""

    def __init__(self, path: str, *, best_effort: bool = False) -> None:
        start = name_zxid(os.path.basename(path), "log")
        if start is None:
            raise FilesError(f"{path}: not a transaction log name (log.<hex zxid>)")
        self.path = path
        self.start_zxid = start
        self.best_effort = best_effort
        self.end_offset = 0  # where the data ended (zeros, or a partial record, follow)
        self.partial_tail = False  # the last record was cut short: a log still being written
        self.damage: str | None = None

    def _damaged(self, message: str) -> None:
        if not self.best_effort:
            raise FilesError(message)
        self.damage = message

    def txns(self, after: int = -1) -> Iterator[Txn]:
        """The records with a zxid above ``after``; earlier ones are checksummed but not parsed."""
        try:
            with open_file(self.path) as f:
                yield from self._read(f, after)
        except OSError as exc:
            raise FilesError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def heads(self, after: int = -1, *, verify: bool = True) -> Iterator[Head]:
        """The records ``txns`` yields, read by the same loop (the same checks, the same damage and end),
        as ``Head`` values: a plain setData, most of a busy log (heartbeats, partition states), has its
        layout checked but its path, data and digest left as bytes, for a reader that needs only some
        of them (``zkstorm changes``: where each is, which ones it reads whole). ``verify=False`` leaves
        the checksums to a pass that has checked them already."""
        try:
            with open_file(self.path) as f:
                yield from self._read(f, after, heads=True, verify=verify)
        except OSError as exc:
            raise FilesError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def _end(self, f: Any, size: int, length: int) -> None:
        """The data seems to end at the record at ``end_offset``, whose frame says ``length``: a zero length
        (the preallocated zeros) or a record without its ``B`` (the last one, cut short). ZooKeeper's own
        reader ends the log there either way (FileTxnLog.java, ``FileTxnIterator.next``: an empty record is
        EOF; Util.java, ``readTxnBytes``: "Last transaction was partial"), and so does this one when only
        zeros or that record's own bytes follow. A whole record after it makes it a hole, not the end:
        damage, saying where the records go on. (The record at ``end_offset`` whole by the time the rest
        was searched is a server appending while the log is read: the end, as it was when read.)"""
        offset = self.end_offset
        found = _next_record(f.fileno(), offset + 1, size)
        if found is not None and not _record_at(f.fileno(), offset, size):
            self.partial_tail = False
            what = "a zero record length" if length == 0 else f"a record of length {length} without its B"
            self._damaged(
                f"{self.path}: {what} at byte {offset}, but whole records follow from byte {found}: the log is damaged"
            )

    def _bad_checksum(self, offset: int) -> None:
        self._damaged(f"{self.path}: checksum mismatch in the record at byte {offset}: the log is damaged")

    def _read(self, f: Any, after: int, *, heads: bool = False, verify: bool = True) -> Iterator[Any]:
        """Records are read from a buffer refilled a chunk at a time (three small reads per record cost
        more than parsing it); records at or below ``after`` are seeked over, not read. ``heads``: a
        plain setData whose layout checks out (a path and a data buffer that are not null, a version,
        perhaps a digest, and nothing else) is yielded as a ``Head`` without being parsed, everything
        else parsed and wrapped in one (``LogFile.heads``)."""
        head = f.read(FILE_HEADER.size)
        if len(head) < FILE_HEADER.size:
            self._damaged(f"{self.path}: shorter than a log header")
            return
        magic, version, _dbid = FILE_HEADER.unpack(head)
        if magic != LOG_MAGIC or version != 2:
            self._damaged(f"{self.path}: not a ZooKeeper transaction log (magic {magic:#x}, version {version})")
            return
        header_size, max_field = TXN_HEADER.size, MAX_FIELD
        framed = 12 + header_size  # a record's frame and txn header, read before the rest of it
        size = os.fstat(f.fileno()).st_size  # a record's length is checked against it before it is read
        unpack_frame, unpack_framed, unpack_int = _FRAME.unpack_from, _FRAMED.unpack_from, INT.unpack_from
        unpack_set = FRAMED_SET.unpack_from
        tuple_new, adler32 = tuple.__new__, zlib_ng.adler32  # zlib-ng's: 3.6x zlib's on a 1.3 KiB record
        set_path = header_size + 4  # a setData's path, after the header and its length
        head_kind = SET_DATA if heads else None  # the txn type read as a head
        buf, pos, base = b"", 0, FILE_HEADER.size  # base: the file offset of buf[0]
        end = 0  # len(buf)
        while True:
            self.end_offset = base + pos
            if end - pos < FRAMED_SET.size:
                buf, pos, base = buf[pos:] + f.read(max(_CHUNK, FRAMED_SET.size)), 0, base + pos
                end = len(buf)
                if end < 12:
                    self.partial_tail = bool(buf.strip(b"\0"))
                    return
            if end - pos >= FRAMED_SET.size:  # and a setData's path length: read, whatever the type
                checksum, length, session, cxid, zxid, time_ms, kind, path_size = unpack_set(buf, pos)
            elif end - pos >= framed:
                (checksum, length, session, cxid, zxid, time_ms, kind), path_size = unpack_framed(buf, pos), -1
            else:  # the file ends inside this record's frame and header: cut short (below), unless zeros
                (checksum, length), session, cxid, zxid, time_ms, kind = unpack_frame(buf, pos), 0, 0, 0, 0, 0
                path_size = -1
            if not header_size <= length <= max_field:
                if length == 0:  # the preallocated zeros, unless whole records follow
                    self._end(f, size, 0)
                    return
                self._damaged(f"{self.path}: bad record length {length} at byte {base + pos}")
                return
            if end - pos < framed:
                self.partial_tail = True
                return
            record, marker = pos + 12, pos + 12 + length  # the record's own end: its "B"
            if base + marker >= size:
                # Past the end of the file: a torn tail, as ZooKeeper reads it (EOF inside the record).
                # Known without reading it, so a garbage length allocates nothing.
                self.partial_tail = True
                self._end(f, size, length)
                return
            if marker >= end:
                if zxid <= after:  # already in the snapshot: skip it unread (no checksum needed for that)
                    f.seek(base + marker)
                    buf, pos, base = f.read(_SKIP_READ), 0, base + marker
                    end = len(buf)
                    if buf[:1] != b"B":
                        self.partial_tail = True
                        self._end(f, size, length)
                        return
                    pos = 1
                    continue
                buf, record, marker, base = buf[pos:] + f.read(length + 1 + _CHUNK), 12, 12 + length, base + pos
                end = len(buf)
                if marker >= end:
                    self.partial_tail = True
                    self._end(f, size, length)
                    return
            if buf[marker] != 0x42:
                self.partial_tail = True  # ZooKeeper: "Last transaction was partial"
                self._end(f, size, length)
                return
            pos = marker + 1
            if zxid <= after:
                continue
            if kind == head_kind and 0 <= path_size <= length - set_path - 4:
                # the layout _set_data reads and _read checks after it (a version, then nothing or a digest),
                # read in place: nothing is sliced but the path
                if verify and adler32(buf[record:marker]) != checksum:
                    self._bad_checksum(base + record - 12)
                    return
                at = record + set_path + path_size  # the data's length
                (data_size,) = unpack_int(buf, at)
                if 0 <= data_size <= marker - at - 8:
                    (version,) = unpack_int(buf, at + 4 + data_size)
                    done = at + 8 + data_size
                    if done == marker or done + 12 == marker:
                        path = buf[at - path_size : at]
                        yield tuple_new(
                            Head, (zxid, session, cxid, time_ms, kind, None, path, version, buf, at + 4, data_size)
                        )
                        continue
            offset = base + record - 12
            payload = buf[record:marker]
            if verify and adler32(payload) != checksum:
                self._bad_checksum(offset)
                return
            try:
                body, digest = record_body(kind, payload)
            except JuteError as exc:
                self._damaged(f"{self.path}: txn {zxid:#x} at byte {offset} cannot be read ({exc})")
                return
            if heads:
                yield tuple_new(Head, (zxid, session, cxid, time_ms, kind, body, None, 0, b"", 0, 0))
            else:
                yield tuple_new(Txn, (zxid, session, cxid, time_ms, kind, body, digest))
