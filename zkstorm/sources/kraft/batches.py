"""Kafka's record batches (log format v2, ``DefaultRecordBatch``/``DefaultRecord``), as the metadata log's
segments (``*.log``) and snapshots (``*.checkpoint``) hold them, read without Kafka.

A batch: base offset (int64), length (int32, of what follows), partition leader epoch (int32), magic (int8,
2), CRC32C (uint32, over everything after it), attributes (int16: compression in bits 0-2, transactional 4,
control 5), last offset delta (int32), base and max timestamps (int64), producer id (int64), producer epoch
(int16), base sequence (int32), record count (int32), then the records. A record: its length (varint),
attributes (int8), timestamp delta (varlong), offset delta (varint), key and value (varint length, -1 for
null), headers (varint count; each a key and value).

What can go wrong, each a ``BatchProblem`` with the file and offset, and what the reader does:

- a batch whose length runs past the end of the file (``torn_batch``): the server was writing it when the
  file was copied, or died mid-write; the read stops before it, as Kafka's own log recovery truncates it.
- a CRC32C that does not match (``crc_mismatch``), a magic other than 2, a length too small for a header
  or over 512 MiB (``bad_batch``): damage; nothing after it in that file is read (Kafka's recovery
  truncates the segment there too).
- records that do not fit the batch, a record count the bytes cannot hold, a compression this reader does
  not inflate (``bad_records``, ``unsupported_compression``): the batch is skipped whole, the read goes on.

Every length is checked against the bytes it must fit in before anything is read or allocated for it. The
file is read through ``mmap`` (a zero-length file is no batches), so a large segment costs pages, not a copy.
"""

from __future__ import annotations

import gzip
import mmap
import os
import stat
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import google_crc32c

from ...errors import FilesError
from .messages import MessageError, read_varint, read_varlong

HEADER = struct.Struct(">qiibIhiqqqhii")  # base offset .. record count: 61 bytes
HEADER_SIZE = HEADER.size
LENGTH_OFFSET = 12  # base offset and length come before what the length counts
CRC_START = 21  # the CRC covers attributes onwards
MAX_BATCH = 512 << 20  # no real batch is near this (Kafka's own message.max.bytes cap is 1 MiB by default)
MAX_INFLATED = 512 << 20

COMPRESSION = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@dataclass(slots=True)
class Record:
    """One record of a batch: its absolute offset, timestamp (ms), key and value (None when null)."""

    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None


@dataclass(slots=True)
class Batch:
    base_offset: int
    last_offset: int
    leader_epoch: int  # the partition leader epoch: the raft epoch of the leader that wrote it
    control: bool
    transactional: bool
    compression: str
    base_timestamp_ms: int
    max_timestamp_ms: int
    position: int  # in the file
    size: int  # bytes, header included
    records: list[Record]


@dataclass(frozen=True, slots=True)
class BatchProblem:
    """What could not be read: ``kind`` (``torn_batch``, ``crc_mismatch``, ``bad_batch``, ``bad_records``,
    ``unsupported_compression``), the file, the byte position and the batch's base offset when known."""

    kind: str
    path: str
    position: int
    base_offset: int | None
    reason: str

    @property
    def stops(self) -> bool:
        """Whether nothing after it in its file can be read (damage, or the torn end)."""
        return self.kind in ("torn_batch", "crc_mismatch", "bad_batch")

    def line(self) -> str:
        at = f"offset {self.base_offset}, " if self.base_offset is not None else ""
        return f"{self.path}: {at}byte {self.position}: {self.kind}: {self.reason}"


def open_segment(path: str) -> tuple[int, mmap.mmap | bytes]:
    """(size, bytes) of a segment or snapshot file, mapped; a FIFO, device or folder is refused unopened
    (from its ``stat``, then ``fstat`` once opened without blocking), as ZooKeeper's files are."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise FilesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise FilesError(f"{path}: not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FilesError(f"{path}: not a regular file")
        size = os.fstat(fd).st_size
        if size == 0:
            return 0, b""
        return size, mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def _inflate(codec: str, data: bytes) -> bytes:
    if codec == "gzip":
        out = gzip.decompress(data)
    elif codec == "zstd":
        import zstandard

        out = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    elif codec == "lz4":
        import cramjam

        out = bytes(cramjam.lz4.decompress(data))
    else:
        raise MessageError(f"{codec} compression is not read here", "unsupported_compression")
    if len(out) > MAX_INFLATED:
        raise MessageError(f"inflates past {MAX_INFLATED} bytes", "bad_records")
    return out


def _records(buf: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int) -> list[Record]:
    """``count`` records from ``buf[pos:end]``; each must fit in its own length, and all in the batch."""
    if count < 0 or count > end - pos:  # a record takes 7 bytes at least: a count past the bytes is a lie
        raise MessageError(f"record count {count} for {end - pos} bytes", "bad_records")
    out = []
    for _ in range(count):
        length, pos = read_varint(buf, pos, end)
        stop = pos + length
        if length < 1 or stop > end:
            raise MessageError(f"a record of {length} bytes where {end - pos} are left", "bad_records")
        pos += 1  # attributes: unused
        ts_delta, pos = read_varlong(buf, pos, stop)
        offset_delta, pos = read_varint(buf, pos, stop)
        key_length, pos = read_varint(buf, pos, stop)
        key = None
        if key_length >= 0:
            if pos + key_length > stop:
                raise MessageError(f"a key of {key_length} bytes past its record", "bad_records")
            key = bytes(buf[pos : pos + key_length])
            pos += key_length
        value_length, pos = read_varint(buf, pos, stop)
        value = None
        if value_length >= 0:
            if pos + value_length > stop:
                raise MessageError(f"a value of {value_length} bytes past its record", "bad_records")
            value = bytes(buf[pos : pos + value_length])
            pos += value_length
        headers, pos = read_varint(buf, pos, stop)
        for _ in range(max(headers, 0)):  # metadata records carry none; skipped by their lengths
            n, pos = read_varint(buf, pos, stop)
            pos += max(n, 0)
            n, pos = read_varint(buf, pos, stop)
            pos += max(n, 0)
        if pos > stop:
            raise MessageError("a record's headers run past it", "bad_records")
        out.append(Record(base_offset + offset_delta, base_ts + ts_delta, key, value))
        pos = stop
    return out


def read_batches(
    path: str, *, verify: bool = True, wanted: Callable[[int, bool], bool] | None = None
) -> Iterator[Batch | BatchProblem]:
    """Every batch of one file in order, and a ``BatchProblem`` where one cannot be read; after a problem
    that ``stops`` nothing more of the file is read. ``wanted(last_offset, control)`` says whether a
    batch's records are read (None: all of them); the others come with their header only (their CRC still
    checked with ``verify``): what a replay that starts at a snapshot needs of the log before it."""
    size, buf = open_segment(path)
    pos = 0
    try:
        while pos < size:
            left = size - pos
            if left < HEADER_SIZE:
                if any(buf[pos:size]):
                    yield BatchProblem("torn_batch", path, pos, None, f"{left} bytes, less than a batch header")
                return  # zeros to the end: preallocated space, the log's end
            (
                base_offset,
                length,
                leader_epoch,
                magic,
                crc,
                attributes,
                last_delta,
                base_ts,
                max_ts,
                _pid,
                _pe,
                _seq,
                count,
            ) = HEADER.unpack_from(buf, pos)
            if length == 0 and base_offset == 0 and not any(buf[pos : min(size, pos + 4096)]):
                return  # zeros: the end of what was written
            total = LENGTH_OFFSET + length
            if length < HEADER_SIZE - LENGTH_OFFSET or length > MAX_BATCH:
                yield BatchProblem("bad_batch", path, pos, base_offset, f"batch length {length}")
                return
            if magic != 2:
                yield BatchProblem("bad_batch", path, pos, base_offset, f"magic {magic}, not 2 (log format v2)")
                return
            if total > left:
                yield BatchProblem(
                    "torn_batch", path, pos, base_offset, f"a batch of {total} bytes where {left} are left"
                )
                return
            if verify:
                actual = google_crc32c.value(bytes(buf[pos + CRC_START : pos + total]))
                if actual != crc:
                    yield BatchProblem(
                        "crc_mismatch", path, pos, base_offset, f"CRC32C {actual:#010x}, the batch says {crc:#010x}"
                    )
                    return
            codec = COMPRESSION.get(attributes & 7, f"codec {attributes & 7}")
            control = bool(attributes & 0x20)
            batch = Batch(
                base_offset=base_offset,
                last_offset=base_offset + last_delta,
                leader_epoch=leader_epoch,
                control=control,
                transactional=bool(attributes & 0x10),
                compression=codec,
                base_timestamp_ms=base_ts,
                max_timestamp_ms=max_ts,
                position=pos,
                size=total,
                records=[],
            )
            if wanted is None or wanted(batch.last_offset, control):
                try:
                    if codec == "none":
                        batch.records = _records(buf, pos + HEADER_SIZE, pos + total, count, base_offset, base_ts)  # type: ignore[arg-type]
                    else:
                        inner = _inflate(codec, bytes(buf[pos + HEADER_SIZE : pos + total]))
                        batch.records = _records(inner, 0, len(inner), count, base_offset, base_ts)
                except MessageError as exc:
                    yield BatchProblem(
                        exc.kind if exc.kind != "record_truncated" else "bad_records", path, pos, base_offset, str(exc)
                    )
                    pos += total
                    continue
                except (OSError, ValueError, EOFError) as exc:  # a broken compressed stream
                    yield BatchProblem("bad_records", path, pos, base_offset, f"{codec}: {exc}")
                    pos += total
                    continue
            yield batch
            pos += total
    finally:
        if isinstance(buf, mmap.mmap):
            buf.close()
