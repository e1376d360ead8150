"""One ZooKeeper snapshot file, streamed: header, sessions, ACL cache, nodes, seals and trailers.

The file is decompressed block by block (plain, gz, or snappy-java's own block stream) into a small
window, so a snapshot of millions of znodes never sits in memory whole; the Adler-32 of the stream is
computed as the blocks pass and the seals verified where the file puts them (docs/zookeeper-files.md
§3, §4, §6). For plain and gz files a second thread reads, inflates and checksums a few blocks ahead of the
parser (``_Prefetch``): those calls release the GIL, so on two cores parsing is all the parser does.
"""

from __future__ import annotations

import contextlib
import os
import queue
import stat
import struct
import threading
import zlib
from collections.abc import Container, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol, cast

from zlib_ng import zlib_ng

from ...errors import FilesError, JuteError
from ...text import clip
from ..base import RawNode, Stat
from .jute import (
    ACL_KEY_AND_STAT,
    FILE_HEADER,
    INT,
    LONG,
    LONG_INT,
    MAX_FIELD,
    SNAPSHOT_MAGIC,
    Acl,
    client_owner,
    read_acl_list,
    read_long,
)

CHUNK = 1 << 20  # the least the window adds when it refills
PREFETCH_BLOCK = 4 << 20  # what the reading thread hands over at a time
_PREFETCH_DEPTH = 4  # blocks read ahead at most
_INFLATE_ERROR = cast(type[Exception], zlib_ng.error)  # its stub declares an instance, not the class
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
_TERMINATOR = b"\x00\x00\x00\x01/"
_DIGEST_STAT = struct.Struct(">qqqqqiiiq")
# After the node list: seal 1, then optional payloads each followed by its own seal (§3): the 3.6+
# digest (20 bytes), the 3.9+ last processed zxid (8 bytes), or both. Longest layout first.
_TRAILER_LAYOUTS = ((20, 8), (20,), (8,), ())
_HELD_BACK = 5 + 13 + 20 + 13 + 8 + 13  # the node list's "/" and the longest trailer

# A frame of ``SnapshotFile.tree``'s stack: one open node, [path, data, fields, children so far, crc, mark].
FRAME_PATH, FRAME_DATA, FRAME_FIELDS, FRAME_CHILDREN, FRAME_CRC, FRAME_MARK = range(6)


class TreeHooks(Protocol):
    """What a reader adds to ``SnapshotFile.tree``: the nodes it takes over and what it yields for them.

    Nodes are flagged by path or by ephemeral owner, so that the check per streamed node is two set
    lookups; everything else about a flagged node is the hooks' business.
    """

    touched: Container[str]
    owners: Container[int]  # session ids (never 0)

    def enter(
        self, path: str, data: bytes | None, fields: tuple[int, ...], crc: int, stack: list[list[Any]]
    ) -> list[Any] | None:
        """A flagged node as the stream reaches it (``stack``: its ancestors' frames). Returns the frame
        to open for it, ``[path, data, fields, 0, crc, mark]`` (the node may be changed; a mark of None
        leaves its close to the tree), or None to drop it and its subtree. May mark an ancestor's frame."""
        ...

    def close(self, frame: list[Any], stack: list[list[Any]]) -> Generator[RawNode, None, int]:
        """A marked frame whose subtree has streamed: yields the nodes that stand for it, and returns how
        many of them are children of ``stack[-1]``."""
        ...


def client_stat(fields: tuple[int, ...] | list[Any], data: bytes | None, children: int) -> Stat:
    """The Stat a client reads for a node, from its persisted stat (the file's, after the ACL key) and
    its child count: ZooKeeper's ``DataNode.copyStat``."""
    return Stat(
        fields[1],
        fields[2],
        fields[3],
        fields[4],
        fields[5],
        2 * fields[6] - children,
        fields[7],
        client_owner(fields[8]),
        len(data) if data else 0,
        children,
        fields[9],
    )


def name_zxid(name: str, prefix: str) -> int | None:
    """The zxid in a ``snapshot.<hex>[.ext]`` / ``log.<hex>`` name, or None for any other file.

    ZooKeeper parses the second dotted part as hex; ``*.tmp`` files are unfinished renames."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != prefix or parts[-1] == "tmp":
        return None
    try:
        return int(parts[1], 16)
    except ValueError:
        return None


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)
# Opening a FIFO to read waits for a writer, without O_NONBLOCK; with it, open returns at once (open(2))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def _not_regular(path: str, mode: int) -> FilesError | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return FilesError(f"{path}: not a regular file ({kind})")


def open_file(path: str) -> BinaryIO:
    """``path`` (a snapshot or a log) open to read, or ``FilesError`` naming it when it is not a regular
    file: every file the files source reads is opened here. A FIFO named ``log.*`` would hang a plain
    ``open`` until some writer came, a device would be read as a file: each is refused from its ``stat``,
    unopened, and checked again on the descriptor, opened non-blocking, in case one was put in its place
    in between. ``OSError`` (missing, unreadable) is the caller's to tell."""
    refused = _not_regular(path, os.stat(path).st_mode)
    if refused is not None:
        raise refused
    fd = os.open(path, _OPEN_FLAGS)
    try:
        refused = _not_regular(path, os.fstat(fd).st_mode)
        if refused is not None:
            raise refused
        os.set_blocking(fd, True)  # no effect on a regular file's reads, but none is wanted
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def snapshot_kind(name: str) -> str:
    ext = name.rsplit(".", 1)[-1]
    return ext if ext in ("gz", "snappy") else "plain"


def cheap_check(path: str, f: BinaryIO | None = None) -> str | None:
    """ZooKeeper's quick test before loading a snapshot (§7): why it cannot be complete, or None.

    ``f``, the file already open, is read from its start; the caller then verifies it through the same
    handle, so that choosing a snapshot opens it once."""
    kind = snapshot_kind(os.path.basename(path))
    try:
        with contextlib.ExitStack() as opened:
            if f is None:
                f = opened.enter_context(open_file(path))
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(0)
            head = f.read(8)
            if kind == "plain":
                if size < 10:
                    return f"only {size} bytes"
                f.seek(size - 5)
                if f.read(5) != _TERMINATOR:
                    return "does not end with the '/' seal (still being written, or cut short)"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if kind == "gz" and head[:2] != b"\x1f\x8b":
        return "not a gzip file"
    if kind == "snappy" and head != SNAPPY_MAGIC:
        return "not a snappy-java stream"
    return None


@dataclass
class SnapshotInfo:
    """What one snapshot file holds besides its nodes; complete once its nodes have been read."""

    path: str
    zxid: int  # from the file name: where replay starts (§7.4)
    kind: str
    sessions: dict[int, int] = field(default_factory=dict)  # session id → timeout (ms)
    acls: dict[int, list[Acl]] = field(default_factory=dict)
    nodes: int = 0
    stream_bytes: int = 0
    seals_verified: int = 0
    digest: tuple[int, int, int] | None = None  # (zxid, version, digest) 3.6+
    last_processed_zxid: int | None = None  # 3.9+
    max_zxid: int = 0  # largest czxid/mzxid/pzxid the nodes read so far hold
    complete: bool = False
    damage: str | None = None  # with best effort: why the read stopped early


def _plain_chunks(f: Any, size: int) -> Iterator[bytes]:
    while chunk := f.read(size):
        yield chunk


def _gzip_chunks(f: Any, path: str, size: int) -> Iterator[bytes]:
    inflater = zlib_ng.decompressobj(31)
    try:
        while raw := f.read(size):
            out = inflater.decompress(raw, size)
            yield out
            while inflater.unconsumed_tail:
                yield inflater.decompress(inflater.unconsumed_tail, size)
            if inflater.eof:
                break
    except _INFLATE_ERROR as exc:
        raise FilesError(f"{path}: gzip data is damaged ({exc})") from None
    if not inflater.eof:
        raise FilesError(f"{path}: the gzip stream ends early (file truncated)")


def _snappy_chunks(f: Any, path: str) -> Iterator[bytes]:
    """snappy-java's SnappyOutputStream: magic, version, compatible version, then (int length, raw block)*.

    Both lengths a block states are checked before anything is allocated for them: the block's own
    against the bytes left in the file, and the inflated size its snappy preamble states against what
    that many bytes can inflate to (cramjam allocates the stated size first, and a failed allocation
    aborts the process)."""
    import cramjam

    size = os.fstat(f.fileno()).st_size
    header = f.read(16)
    if len(header) < 16 or header[:8] != SNAPPY_MAGIC:
        raise FilesError(f"{path}: not a snappy-java stream")
    offset = 16
    while head := f.read(4):
        if len(head) < 4:
            raise FilesError(f"{path}: snappy block header cut short at byte {offset}")
        (length,) = INT.unpack(head)
        if length < 0 or length > min(MAX_FIELD, size - offset - 4):
            raise FilesError(f"{path}: snappy block at byte {offset} is cut short or damaged (length {length})")
        block = f.read(length)
        stated = _snappy_inflated_size(block)
        if stated is None or stated > _SNAPPY_MAX_RATIO * length:
            raise FilesError(f"{path}: snappy block at byte {offset} is damaged (inflated size {stated})")
        try:
            yield bytes(cramjam.snappy.decompress_raw(block))
        except Exception as exc:  # cramjam raises its own DecompressionError
            raise FilesError(f"{path}: snappy block at byte {offset} is damaged ({exc})") from None
        offset += 4 + length


# A snappy element inflates at most 64 bytes from 3 (a 2-byte-offset copy; snappy's format_description.txt)
_SNAPPY_MAX_RATIO = 22


def _snappy_inflated_size(block: bytes) -> int | None:
    """The inflated size a raw snappy block states in its preamble (a little-endian varint of up to 5
    bytes), or None when the preamble is cut short."""
    value = shift = 0
    for byte in block[:5]:
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value
        shift += 7
    return None


class _Window:
    """A sliding view of the decompressed stream; with ``checksum``, keeps the running Adler-32 of what
    slid past (the streaming read leaves that to ``_Prefetch``)."""

    def __init__(self, chunks: Iterator[bytes], *, checksum: bool = True) -> None:
        self.chunks = chunks
        self.checksum = checksum
        self.buf = b""
        self.pos = 0
        self.base = 0  # stream offset of buf[0]
        self.adler = 1
        self.error: FilesError | None = None  # why the stream ended early, if it did

    def ensure(self, n: int) -> bool:
        """Make ``n`` bytes available at ``pos`` (compacting first); False at end of stream."""
        buf, pos = self.buf, self.pos
        if len(buf) - pos >= n:
            return True
        if pos:
            if self.checksum:
                self.adler = zlib_ng.adler32(memoryview(buf)[:pos], self.adler)
            self.base += pos
        pieces = [buf[pos:]]
        have = len(buf) - pos
        try:
            for chunk in self.chunks:
                pieces.append(chunk)
                have += len(chunk)
                if have >= max(n, CHUNK):
                    break
        except FilesError as exc:  # damage further on: what came before it is still readable
            self.error = exc
            self.chunks = iter(())
        self.buf = b"".join(pieces)
        self.pos = 0
        return have >= n

    def drain(self) -> None:
        """Read the stream to its end (meeting any damage there)."""
        try:
            for _ in self.chunks:
                pass
        except FilesError as exc:
            self.error = exc

    def checksum_here(self) -> int:
        return zlib_ng.adler32(memoryview(self.buf)[: self.pos], self.adler)

    @property
    def offset(self) -> int:
        return self.base + self.pos


class _Checksum:
    """The running Adler-32 of a stream but for its last ``_HELD_BACK`` bytes, where the seals and
    trailer payloads are: once the stream ends, every trailer layout can be checked against it."""

    def __init__(self, adler: int = 1, base: int = 0) -> None:
        self.adler = adler
        self.base = base  # stream offset of tail[0]
        self.tail = b""

    def add(self, chunk: bytes) -> None:
        if len(chunk) < _HELD_BACK:  # a short chunk (the last, a small snappy block)
            chunk = self.tail + chunk
        else:  # the held bytes are not the end: checksum them, without copying the chunk
            self.adler = zlib_ng.adler32(self.tail, self.adler)
            self.base += len(self.tail)
        cut = max(len(chunk) - _HELD_BACK, 0)
        self.adler = zlib_ng.adler32(memoryview(chunk)[:cut], self.adler)
        self.base += cut
        self.tail = chunk[cut:]


class _Blocks:
    """The stream as the parser takes it, checksummed as it passes (``_Checksum``)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.checksum = _Checksum()  # complete once the stream has been read to its end
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.checksum.add(chunk)
            yield chunk

    def close(self) -> None:
        pass


class _Prefetch(_Blocks):
    """The stream read, inflated and checksummed in a second thread, a few blocks ahead of the parser.

    File reads, inflation and Adler-32 release the GIL, so with two cores the thread that parses znodes
    spends no time on them. Blocks are large because a thread waiting for the GIL gets it back only
    every switch interval (5 ms) while the parser runs: each hand-off costs the reader that long, so
    snappy's 32 KiB blocks (three hand-offs each) are left to ``_Blocks``, in the parser's thread.
    """

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__(chunks)  # read by the thread only
        self.error: BaseException | None = None
        self._blocks: queue.Queue[bytes | None] = queue.Queue(maxsize=_PREFETCH_DEPTH)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zkstorm-snapshot-read", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pending: list[bytes] = []
        size = 0
        try:
            for chunk in self.chunks:
                pending.append(chunk)
                size += len(chunk)
                if size >= PREFETCH_BLOCK:
                    if not self._hand_over(pending):
                        return
                    pending, size = [], 0
        except BaseException as exc:  # handed to the parser's thread, which raises it there, after
            self.error = exc  # what was read before it
        if pending and not self._hand_over(pending):
            return
        self._put(None)

    def _hand_over(self, pieces: list[bytes]) -> bool:
        block = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.checksum.add(block)
        return self._put(block)

    def _put(self, block: bytes | None) -> bool:
        while not self._stop.is_set():
            try:
                self._blocks.put(block, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[bytes]:
        while (block := self._blocks.get()) is not None:
            yield block
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


class SnapshotFile:
    """Reads one snapshot file; ``tree()`` streams its znodes once, filling ``info`` as it goes."""

    def __init__(self, path: str, *, best_effort: bool = False, checked: SnapshotInfo | None = None) -> None:
        """``checked``: what an earlier read of this same file found. Damage that read did not meet (or
        did not accept, with best effort) means the file changed in between: always an error."""
        name = os.path.basename(path)
        zxid = name_zxid(name, "snapshot")
        if zxid is None:
            raise FilesError(f"{path}: not a snapshot file name (snapshot.<hex zxid>[.gz|.snappy])")
        self.path = path
        self.best_effort = best_effort or checked is not None
        self.checked = checked
        self.info = SnapshotInfo(path=path, zxid=zxid, kind=snapshot_kind(name))

    def _chunks(self, f: Any) -> Iterator[bytes]:
        size = PREFETCH_BLOCK
        if self.info.kind == "gz":
            return _gzip_chunks(f, self.path, size)
        if self.info.kind == "snappy":
            return _snappy_chunks(f, self.path)
        return _plain_chunks(f, size)

    def _damaged(self, what: str, w: _Window) -> None:
        """Damage met at the window's position (or, first, the damage that ended the stream early)."""
        self._damaged_at(str(w.error) if w.error else f"{self.path}: {what} at stream byte {w.offset}")

    def verify(self, f: BinaryIO | None = None) -> None:
        """Check every seal of the file without reading its nodes: ZooKeeper's full-load check at the
        speed of zlib-ng's Adler-32 (6x zlib's), so that opening a data directory costs one pass of C
        code, not one of Python per znode.

        The head (sessions, ACL cache) is read as usual; the rest of the stream is checksummed chunk by
        chunk, holding back its last bytes, which must be one of the four trailer layouts (§3) whose
        seals match. The streaming read that follows still parses every node and checks the seals
        again as it goes, so a file that changes in between is an error there.
        Raises ``FilesError`` on damage; with best effort, records it in ``info.damage`` instead.
        ``f``, the file already open (by the cheap check), is read from its start.
        """
        info = self.info
        try:
            with contextlib.ExitStack() as opened:
                if f is None:
                    f = opened.enter_context(open_file(self.path))
                f.seek(0)
                w = _Window(self._chunks(f))
                try:
                    self._read_head(w)
                except JuteError as exc:
                    self._damaged(f"bad header ({exc})", w)
                    return
                checksum = _Checksum(w.checksum_here(), w.offset)
                checksum.add(w.buf[w.pos :])
                for chunk in w.chunks:  # a damaged gz or snappy stream raises FilesError here
                    checksum.add(chunk)
                if w.error is not None:  # the head's own read already met the damage
                    raise w.error
        except OSError as exc:
            raise FilesError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        except FilesError as exc:
            if not self.best_effort:
                raise
            info.damage = str(exc)
            return
        problem = self._check_trailer(checksum.tail, checksum.adler, checksum.base)
        if problem is not None:
            self._damaged_at(f"{self.path}: {problem}")

    def _check_trailer(self, tail: bytes, adler: int, base: int, nodes_end: int | None = None) -> str | None:
        """Match the stream's last bytes against the trailer layouts; None when one verifies, filling
        ``info``, else why none did. ``adler`` is the checksum of the stream before ``tail``, which
        starts at stream byte ``base``. ``nodes_end``, when the node list was read, is where in ``tail``
        its "/" terminator starts: the trailer must follow it directly."""
        mismatch = None
        for payloads in _TRAILER_LAYOUTS:
            size = 13 + sum(n + 13 for n in payloads)
            start = len(tail) - size  # seal 1, right after the node list's own "/" terminator
            if start < 5 or tail[start - 5 : start] != _TERMINATOR or nodes_end not in (None, start - 5):
                continue
            seals, at, fields = [], start, []
            for n in (0, *payloads):
                fields.append(tail[at : at + n])
                seals.append(at + n)
                at += n + 13
            if any(tail[p + 8 : p + 13] != _TERMINATOR for p in seals):
                continue
            for p in seals:
                stored = LONG.unpack_from(tail, p)[0]
                computed = zlib_ng.adler32(memoryview(tail)[:p], adler)
                if stored != computed:
                    mismatch = mismatch or (
                        f"checksum mismatch at stream byte {base + p} (stored {stored:#x}, computed {computed:#x}): "
                        "the file is damaged"
                    )
                    break
            else:
                info = self.info
                for payload in fields[1:]:
                    if len(payload) == 20:
                        zxid, version = LONG_INT.unpack_from(payload, 0)
                        info.digest = (zxid, version, LONG.unpack_from(payload, 12)[0])
                    else:
                        info.last_processed_zxid = LONG.unpack_from(payload, 0)[0]
                info.seals_verified = len(seals)
                info.stream_bytes = base + len(tail)
                info.complete = True
                return None
        return mismatch or "does not end with its checksum seals (cut short or damaged)"

    def _damaged_at(self, message: str) -> None:
        if self.checked is not None and message != self.checked.damage:
            # A silently shorter tree is the one outcome worse than an error.
            if self._changed_since_checked():
                raise FilesError(f"{message} (the file read whole moments ago: was it changed or replaced?)")
            raise FilesError(message)  # sealed as written, but not a node list ZooKeeper could load
        if not self.best_effort:
            raise FilesError(message)
        self.info.damage = message

    def _changed_since_checked(self) -> bool:
        """Whether the file no longer verifies as it did (damage the check did not see, then, is the
        file's own: seals computed over bytes that are not a node list)."""
        again = SnapshotFile(self.path, best_effort=True)
        try:
            again.verify()
        except FilesError:
            return True
        checked = self.checked
        return checked is None or (again.info.damage, again.info.stream_bytes) != (checked.damage, checked.stream_bytes)

    def tree(
        self, hooks: TreeHooks | None = None, *, digest: bool = False
    ) -> Generator[RawNode, None, tuple[int, int]]:
        """The file's znodes as a client would read them: each ``RawNode`` after its subtree (when its
        child count is known), in file order otherwise; the root's path is ``"/"``. Returns how many it
        yielded itself and the sum of their contributions to ZooKeeper's tree digest (§5; 0 unless
        ``digest``). The seals are checked when the node list ends, as ``verify`` checks them.

        ``hooks`` take over the nodes they flag (see ``TreeHooks``); memory holds the current node's
        ancestors, never the tree. Parsing and assembly are one loop: a generator boundary between the
        two cost more per znode than the assembly itself (bench/bench_files.py).
        """
        try:
            f = open_file(self.path)  # closed in the finally below
        except OSError as exc:
            raise FilesError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        info = self.info
        prefetch = (_Blocks if self.info.kind == "snappy" else _Prefetch)(self._chunks(f))
        w = _Window(iter(prefetch), checksum=False)
        tuple_new = tuple.__new__  # RawNode and Stat built as tuples: NamedTuple.__new__ is a Python call
        count = dropped = total = top = 0  # top: the largest zxid in the content (fuzzy if above the name's)
        skip = None  # "path/" of a node the hooks dropped: its subtree is skipped
        # Frames [path, data, fields, children, crc, mark]; stack[i] is the open node at depth i, so a
        # node at depth d closes every frame above d. (Sealed files are in tree order; a damaged one
        # that is not ends as damage, not as a wrong tree.)
        stack: list[list[Any]] = []
        try:
            try:
                self._read_head(w)
            except (JuteError, FilesError) as exc:
                self._damaged(f"bad header ({exc})", w)
                return 0, 0
            touched: Container[str] = hooks.touched if hooks else ()
            owners: Container[int] = hooks.owners if hooks else ()
            unpack_int = INT.unpack_from
            unpack_stat = ACL_KEY_AND_STAT.unpack_from
            crc32 = zlib.crc32
            buf, pos = w.buf, w.pos
            end = len(buf)
            view = memoryview(buf)
            crc = 0
            try:
                while True:
                    if end - pos < 8:
                        w.pos = pos
                        if not w.ensure(8):
                            raise JuteError("truncated node list (no end-of-tree marker)")
                        buf, pos, end = w.buf, 0, len(w.buf)
                        view = memoryview(buf)
                    (plen,) = unpack_int(buf, pos)
                    if plen == 1 and buf[pos + 4] == 0x2F:  # the "/" terminator (the root itself is "")
                        w.pos = pos
                        break
                    if plen < 0 or plen > MAX_FIELD:
                        raise JuteError(f"bad path length {plen}")
                    data_at = pos + 4 + plen
                    if end - data_at < 4:
                        w.pos = pos
                        if not w.ensure(8 + plen):
                            raise JuteError("truncated node")
                        buf, pos, end = w.buf, 0, len(w.buf)
                        view = memoryview(buf)
                        continue
                    (dlen,) = unpack_int(buf, data_at)
                    if dlen < -1 or dlen > MAX_FIELD:
                        raise JuteError(f"bad data length {dlen}")
                    stat_at = data_at + 4 + (dlen if dlen > 0 else 0)
                    if end - stat_at < 68:
                        w.pos = pos
                        if not w.ensure(stat_at - pos + 68):
                            raise JuteError("truncated node")
                        buf, pos, end = w.buf, 0, len(w.buf)
                        view = memoryview(buf)
                        continue
                    count += 1
                    start, pos = pos, stat_at + 68
                    fields = unpack_stat(buf, stat_at)
                    if fields[1] > top or fields[2] > top or fields[9] > top:  # rarer than a max() per node
                        top = max(top, fields[1], fields[2], fields[9])
                    if plen:
                        path = buf[start + 4 : data_at].decode("utf-8", "surrogateescape")
                        if skip is not None:
                            if path.startswith(skip):
                                dropped += 1
                                continue
                            skip = None
                        depth = path.count("/")
                        if not depth:  # (would close the root)
                            dropped += 1
                            where = f"at stream byte {w.base + start}"
                            raise JuteError(f"node {clip(path)} {where} is not an absolute path")
                        while len(stack) > depth:
                            frame = stack.pop()
                            if frame[5] is not None:
                                dropped += 1
                                stack[-1][3] += yield from hooks.close(frame, stack)  # type: ignore[union-attr]
                                continue
                            # client_stat inlined: this runs once per znode
                            node_path, node_data, node_fields, children, node_crc, _ = frame
                            _, czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid = node_fields
                            total += node_crc
                            stat = (
                                czxid,
                                mzxid,
                                ctime,
                                mtime,
                                version,
                                2 * cversion - children,
                                aversion,
                                owner if owner >= 0 else client_owner(owner),
                                len(node_data) if node_data else 0,
                                children,
                                pzxid,
                            )
                            yield tuple_new(RawNode, (node_path, tuple_new(Stat, stat), node_data))
                            stack[-1][3] += 1
                        if len(stack) != depth:
                            # ZooKeeper's DataTree.deserialize: "Invalid Datatree, unable to find parent"
                            dropped += 1
                            raise JuteError(f"node {clip(path)} at stream byte {w.base + start} is out of tree order")
                    elif count == 1:
                        path = "/"
                    else:
                        dropped += 1
                        raise JuteError(f"a second root node at stream byte {w.base + start}")
                    if digest:
                        # CRC32 of path, data, then the stat in digest order: czxid mzxid | pzxid | ctime … owner
                        crc = (
                            crc32(
                                view[stat_at + 24 : stat_at + 60],
                                crc32(
                                    view[stat_at + 60 : pos],
                                    crc32(
                                        view[stat_at + 8 : stat_at + 24],
                                        crc32(view[data_at + 4 : stat_at], crc32(view[start + 4 : data_at])),
                                    ),
                                ),
                            )
                            if not path.startswith("/zookeeper/")
                            else 0
                        )
                    data = buf[data_at + 4 : stat_at] if dlen >= 0 else None
                    if path in touched or (fields[8] and fields[8] in owners):
                        opened = hooks.enter(path, data, fields, crc, stack)  # type: ignore[union-attr]
                        if opened is None:
                            dropped += 1
                            skip = path + "/"
                            continue
                        stack.append(opened)
                    else:
                        stack.append([path, data, fields, 0, crc, None])
            except JuteError as exc:
                w.pos = pos
                self._damaged(str(exc), w)
            else:
                w.drain()  # the rest of the stream: its trailer, and nothing after it
                checksum = prefetch.checksum
                problem = self._check_trailer(
                    checksum.tail, checksum.adler, checksum.base, nodes_end=w.offset - checksum.base
                )
                if problem is not None:  # the problem names its own stream byte
                    self._damaged_at(str(w.error) if w.error else f"{self.path}: {problem}")
            finally:
                info.nodes = count
                info.max_zxid = max(info.max_zxid, top)
            while stack:  # the open nodes: at the end of the list, or (best effort) where damage stopped it
                frame = stack.pop()
                if frame[5] is not None:
                    dropped += 1
                    added = yield from hooks.close(frame, stack)  # type: ignore[union-attr]
                else:
                    total += frame[4]
                    yield RawNode(frame[0], client_stat(frame[2], frame[1], frame[3]), frame[1])
                    added = 1
                if stack:
                    stack[-1][3] += added
        except OSError as exc:
            raise FilesError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        finally:
            prefetch.close()
            f.close()
        return count - dropped, total

    def _read_head(self, w: _Window) -> None:
        info = self.info
        if not w.ensure(FILE_HEADER.size + 4):
            raise JuteError("shorter than a header")
        magic, version, _dbid = FILE_HEADER.unpack_from(w.buf, w.pos)
        if magic != SNAPSHOT_MAGIC:
            raise JuteError(f"magic {magic:#x} is not ZKSN")
        if version != 2:
            raise JuteError(f"unknown snapshot version {version}")
        w.pos += FILE_HEADER.size
        (count,) = INT.unpack_from(w.buf, w.pos)
        w.pos += 4
        if count < 0 or count > MAX_FIELD:
            raise JuteError(f"bad session count {count}")
        for _ in range(count):
            if not w.ensure(12):
                raise JuteError("truncated session table")
            session, timeout = LONG_INT.unpack_from(w.buf, w.pos)
            info.sessions[session] = timeout
            w.pos += 12
        if not w.ensure(4):
            raise JuteError("truncated ACL cache")
        (count,) = INT.unpack_from(w.buf, w.pos)
        w.pos += 4
        if count < 0 or count > MAX_FIELD:
            raise JuteError(f"bad ACL cache size {count}")
        for _ in range(count):
            w.ensure(1 << 16)  # an ACL list is small; read_acl_list checks the bounds it needs
            key, pos = read_long(w.buf, w.pos)
            info.acls[key], w.pos = read_acl_list(w.buf, pos)


def content_digest(path: str, data: bytes | None, fields: tuple[int, ...] | list[Any]) -> int:
    """One node's contribution to ZooKeeper's tree digest (§5): CRC32 of path, data and the stat in
    digest order; ``/zookeeper/…`` nodes contribute nothing."""
    if path.startswith("/zookeeper/"):
        return 0
    _acl, czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid = fields[:10]
    crc = zlib.crc32(b"" if path == "/" else path.encode("utf-8", "surrogateescape"))
    if data:
        crc = zlib.crc32(data, crc)
    return zlib.crc32(_DIGEST_STAT.pack(czxid, mzxid, pzxid, ctime, mtime, version, cversion, aversion, owner), crc)
