"""The logged txns of a window, each op with the state of its znode just before it and just after.

Three passes, none of which holds the tree or the day's txns:

1. ``scan``: the logs once, in zxid order, checked for damage and gaps as the files source checks them:
   which paths the txns touch (path → the last zxid that touches it), which sessions close without
   listing their ephemerals (closeSession before 3.6, or ``closeSessionTxn.enabled=false``), a sparse
   (zxid, time) index to place a window given in time, and the names near the top of the tree that
   say where Storm and Kafka roots are.
2. ``state``: the tree just before the window, read by the files source (``FileSource`` replayed to that
   zxid, the snapshot streamed once), keeping only the znodes the window touches and the few the
   change kinds read besides (broker registrations, nimbus leader latches, supervisors, worker
   heartbeats' times: ``CONTEXT``).
3. ``txns``: the logs again from the state's zxid on; each op is applied to the kept states and handed
   to the caller as a ``Step`` (before, after), txn by txn.

Most of a busy log is the same few znodes rewritten (worker heartbeats, supervisors' registrations), and
the two passes over the logs are most of the time a read takes. Pass 1 reads a plain setData as a head
(``LogFile.heads``: its layout checked, its path as bytes, its data not even sliced) and notes the path;
logs holding enough data are read two at a time by forked helpers (``_scan_log`` each, merged in order;
a log whose helper's read would not be the one read after the logs before it, damaged or not following
on, is read again here, so the merge is the read one by one). Pass 3 reads the records again in one loop
of its own (``_fast_txns``): it finds each where pass 1 found it (a record not there is ``FilesError``:
the file changed in between), leaves the checksums and the logs' ends to pass 1, decodes each path once,
parses the data only of the znodes whose data a change reads, and hands a rewrite (a setData of a
znode whose handler only times or counts it, as the caller says: ``Engine.is_rewrite``) over as a
``Rewrite`` without a step, its state brought up to date in place. ``fast=False`` reads every txn whole
(``LogFile.txns``) and makes a step of each, as the records' reference (``tests/test_changes.py``).

A snapshot is fuzzy: written while txns went on, so a znode in it may hold a state from after the zxid
in the snapshot's name (ZooKeeper replays the logs over it to make it right). Replayed to a point inside
that range, a znode the dump reached late may hold a state from after that point. A step tells it by
the stat: a state before it whose ``mzxid`` is not below the txn's own zxid is from after the txn (the
step's ``known`` is False: its before is not what ZooKeeper had), and so is a znode that a txn deletes
or writes while it is absent from the state.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from ..errors import FilesError, JuteError, UsageError
from ..layout import ROOT_SEARCH_DEPTH
from ..sources.base import RawNode, Stat
from ..sources.files.jute import FILE_HEADER, INT, MAX_FIELD, TXN_HEADER, decode_text
from ..sources.files.snapfile import SnapshotFile, name_zxid, open_file
from ..sources.files.source import FileSource, data_files
from ..sources.files.txnlog import (
    ERROR,
    FRAMED_SET,
    SET_DATA,
    CloseSession,
    Create,
    CreateSession,
    Delete,
    LogFile,
    Multi,
    SetAcl,
    SetData,
    Txn,
    record_body,
)
from ..units import LONG_MAX
from .forked import can_fork, forked

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INDEX_EVERY = 1024  # one (zxid, time) pair kept per this many txns, to place a window given in time
_INDEX_MASK = _INDEX_EVERY - 1  # (a power of two)

# What pass 3 does with a setData head, by its path (``ChangeReader._route``): nothing (a znode neither
# kept nor touched), the whole op (parsed, applied, a step), or a rewrite (the state updated in place,
# with the data when a change reads it, without it when none does).
_SKIP, _WHOLE, _REWRITE_KEEP, _REWRITE_LIGHT = range(4)
_RUN = 4096  # rewrites handed over at most at once
_PARALLEL_BYTES = 16 << 20  # logs holding less are scanned here, one by one: a helper process costs more
_REREAD_CHUNK = 1 << 20  # what pass 3 reads of a log at a time
_CHANGED = "the file changed since it was read (pass 1 found another record there): read the files again"

# Znodes a change kind reads besides the one a txn touches, kept from the state before the window: a
# partition is offline when its leader is not registered (brokers/ids), the nimbus leader is the lowest
# leader latch, a worker that writes nothing in the window still goes stale, a supervisor that leaves
# names its host. Matched as path suffixes ("*" is one segment) under any root, as layout's secret
# subtrees are, since the roots are found by the same pass that keeps them.
CONTEXT: tuple[tuple[str, ...], ...] = (
    ("brokers", "ids", "*"),
    ("leader-lock", "*"),
    ("supervisors", "*"),
    ("workerbeats", "*", "*"),
)


def in_context(path: str) -> bool:
    segments = path.split("/")
    for pattern in CONTEXT:
        n = len(pattern)
        if len(segments) > n and all(p == "*" or p == s for p, s in zip(pattern, segments[-n:], strict=True)):
            return True
    return False


def time_of(time_ms: int) -> datetime:
    """A txn's time as a UTC datetime, to the millisecond (no float rounding; whole seconds and
    microseconds, positional: a third of the time of ``timedelta(milliseconds=...)``)."""
    return EPOCH + timedelta(0, time_ms // 1000, time_ms % 1000 * 1000)


class NodeState:
    """One znode as the window sees it: data and the stat fields a decoder or a change reads.
    ``decoded`` caches what the change kinds made of it (its records), so each state is decoded once."""

    __slots__ = ("aversion", "ctime", "czxid", "data", "decoded", "mtime", "mzxid", "owner", "version")

    def __init__(
        self,
        data: bytes | None,
        czxid: int,
        mzxid: int,
        ctime: int,
        mtime: int,
        version: int,
        aversion: int,
        owner: int,
    ) -> None:
        self.data = data
        self.czxid = czxid
        self.mzxid = mzxid
        self.ctime = ctime
        self.mtime = mtime
        self.version = version
        self.aversion = aversion
        self.owner = owner
        self.decoded: Any = None

    def raw(self, path: str) -> RawNode:
        """What a source would yield for this state (child counts are not tracked: 0)."""
        stat = Stat(
            self.czxid,
            self.mzxid,
            self.ctime,
            self.mtime,
            self.version,
            0,
            self.aversion,
            self.owner,
            len(self.data) if self.data else 0,
            0,
            self.mzxid,
        )
        return RawNode(path, stat, self.data)


class Rewrite(NamedTuple):
    """A setData pass 3 hands over without a step (see the module docstring): the txn's identity, with the
    attribute names of ``Txn``'s, and the znode's path."""

    zxid: int
    session: int
    cxid: int
    time_ms: int
    path: str


class Step(NamedTuple):
    """One op of a txn on one znode: ``op`` is create, delete, set (data) or acl; ``how`` says what
    deleted it (deleted, expired, closed); ``known`` is False when the state before is not ZooKeeper's
    (see the module docstring)."""

    txn: Txn
    op: str
    path: str
    before: NodeState | None
    after: NodeState | None
    known: bool
    how: str


@dataclass(frozen=True)
class Bound:
    """One end of a window: a zxid, a time (epoch ms), or a span back from the last logged txn."""

    zxid: int | None = None
    time_ms: int | None = None
    back_ms: int | None = None

    @staticmethod
    def of(value: int | datetime | timedelta | None) -> Bound | None:
        if value is None:
            return None
        if isinstance(value, bool):
            raise TypeError("a window bound is a zxid, a datetime or a timedelta")
        if isinstance(value, int):
            if not 0 <= value <= LONG_MAX:
                raise UsageError(f"window bound {value:#x} is not a zxid (0 to {LONG_MAX:#x})")
            return Bound(zxid=value)
        if isinstance(value, datetime):
            moment = value if value.tzinfo else value.replace(tzinfo=UTC)
            return Bound(time_ms=(moment - EPOCH) // timedelta(milliseconds=1))
        if isinstance(value, timedelta):
            if value < timedelta(0):
                raise UsageError(f"window bound {value} back from the last txn is negative: a span back is not")
            return Bound(back_ms=value // timedelta(milliseconds=1))
        raise TypeError(f"a window bound is a zxid, a datetime or a timedelta, not {type(value).__name__}")


def _in_order(since: Bound | None, until: Bound | None) -> None:
    """``UsageError`` for a window whose end comes before its start, where both are of one kind (two zxids,
    two times, two spans back); bounds of two kinds are compared once placed in the logs (``_resolve``)."""
    if since is None or until is None:
        return
    for kind, later_is_larger in (("zxid", True), ("time_ms", True), ("back_ms", False)):
        start, end = getattr(since, kind), getattr(until, kind)
        if start is not None and end is not None and (end < start if later_is_larger else end > start):
            raise UsageError("--until is before --since: the window is empty")


@dataclass
class ReadStats:
    """What the read went through, for the summary and ``--out``'s manifest."""

    logs: list[str] = field(default_factory=list)
    snapshot: str | None = None
    txns_scanned: int = 0
    txns: int = 0  # in the window
    ops: int = 0  # in the window
    first_zxid: int | None = None  # of the window
    last_zxid: int | None = None
    first_time_ms: int | None = None
    last_time_ms: int | None = None
    logs_first_zxid: int | None = None  # what the logs hold
    logs_last_zxid: int | None = None
    logs_last_time_ms: int | None = None
    sessions_opened: int = 0
    sessions_expired: int = 0
    sessions_closed: int = 0
    failed_txns: int = 0  # error txns and failed multis: nothing changed
    unknown_before: int = 0  # steps whose state before is not ZooKeeper's (fuzzy snapshot)


def _replayable(snapshot_zxid: int, first_logged: int) -> bool:
    """Whether logs whose first txn is ``first_logged`` go on from a snapshot at ``snapshot_zxid``: they
    start at or before its next zxid, or with the first txn of a later epoch (a new leader's zxids start
    again at 1, as ``FileSource`` accepts between logs)."""
    if first_logged <= snapshot_zxid + 1:
        return True
    return first_logged >> 32 > snapshot_zxid >> 32 and first_logged & 0xFFFFFFFF <= 1


def _settled_zxid(path: str) -> int | None:
    """The zxid a snapshot's dump had reached when it ended (3.6+: its digest's, 3.9+: its last processed
    zxid; the name's when it has neither), from its trailer: one pass of zlib-ng's Adler-32 over the
    file, as the files source checks it. None when it cannot be read whole (the files source decides)."""
    snapshot = SnapshotFile(path, best_effort=True)
    try:
        snapshot.verify()
    except FilesError:
        return None
    info = snapshot.info
    if info.damage is not None:
        return None
    return max(info.zxid, info.digest[0] if info.digest else 0, info.last_processed_zxid or 0)


class _Mark(NamedTuple):
    """A txn pass 1 read, as far as the window needs it."""

    zxid: int
    time_ms: int


@dataclass(frozen=True)
class _ScanJob:
    """What ``_scan_log`` needs to read one log: the bounds of the window, and where the logs before it
    left off (the last txn read, whether touches are being noted, how many txns were read)."""

    path: str
    after: int  # records at or below this zxid are the logs' before it (read by then)
    fast: bool
    best_effort: bool
    since_time: int | None
    record_from: int
    until_zxid: int
    until_time: int
    snapshot_zxids: frozenset[int]
    last: _Mark | None = None
    recording: bool = True
    finished: bool = False
    count: int = 0


@dataclass
class _LogScan:
    """What pass 1 found in one log (``_scan_log``), merged in log order by ``ChangeReader.scan``."""

    raw_touch: dict[bytes, int] = field(default_factory=dict)  # setData heads' paths, as bytes → last zxid
    last_touch: dict[str, int] = field(default_factory=dict)  # every other op's path → last zxid
    closing: dict[int, int] = field(default_factory=dict)  # session → zxid of its last close without paths
    names: dict[str, set[str]] = field(default_factory=dict)  # child names near the top, created here
    index: list[tuple[int, int]] = field(default_factory=list)
    snapshot_times: dict[int, int] = field(default_factory=dict)
    since_zxid: int | None = None
    first: _Mark | None = None
    last: _Mark | None = None
    count: int = 0
    recording: bool = True
    finished: bool = False
    end_offset: int = 0
    gap: str | None = None  # txns missing, where the read of this log (and of the logs) ended
    damage: str | None = None  # best effort: the damage the log ends in
    error: str | None = None  # a ``FilesError`` the read ended in
    ordered: bool = True  # every zxid above the one before it (a read after ``job.after`` skips the rest)

    def stands_after(self, last: _Mark | None) -> bool:
        """Whether this log, read alone by a helper, reads as it would after the logs before it, whose
        last txn was ``last``: nothing went wrong in it (a failure is told as one read tells it) and
        its first txn is the one after ``last`` (else some are missing, told by a read after ``last``, or
        the records up to ``last`` were not to be read)."""
        if self.error is not None or self.gap is not None or self.damage is not None or not self.ordered:
            return False
        if last is None or self.first is None:
            return True
        first = self.first.zxid  # the next txn, or the first of a later epoch (else: missing, or read twice)
        return first == last.zxid + 1 or (first > last.zxid and first >> 32 != last.zxid >> 32)


def _parallel(logs: list[str]) -> int:
    """How many helpers pass 1 is worth: two where two CPUs are there and the logs hold enough data
    (their allocated blocks: a log is preallocated sparse, FilePadding.java) to pay for the processes,
    and where this process runs no other thread (a fork copies none of them, and their locks as they are)."""
    if threading.active_count() > 1:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    if cpus < 2 or len(logs) < 2:
        return 1
    try:
        held = sum(os.stat(p).st_blocks * 512 for p in logs)
    except (OSError, AttributeError):
        return 1
    return 2 if held >= _PARALLEL_BYTES else 1


def _scan_log(job: _ScanJob) -> _LogScan:
    """Pass 1 over one log (``ChangeReader.scan``): its txns in order after ``job.after``, checked for
    damage and for txns missing (from ``job.last`` on, when known), the paths they touch, the sessions
    that close without listing their ephemerals, the names they create near the top of the tree."""
    found = _LogScan(recording=job.recording, finished=job.finished)
    raw_touch, last_touch, closing, names, index = (
        found.raw_touch, found.last_touch, found.closing, found.names, found.index
    )  # fmt: skip
    since_time, record_from, until_zxid, until_time = job.since_time, job.record_from, job.until_zxid, job.until_time
    snapshot_zxids = job.snapshot_zxids
    recording, finished = job.recording, job.finished
    near_top = ROOT_SEARCH_DEPTH + 1
    count = job.count
    known = job.last is not None  # a txn before this one (the logs' before, or this log's)
    last_zxid, last_time = (job.last.zxid, job.last.time_ms) if job.last is not None else (-1, 0)
    first: _Mark | None = None
    path = job.path
    reader = LogFile(path, best_effort=job.best_effort)
    txns: Iterator[Any] = reader.heads(after=job.after) if job.fast else reader.txns(after=job.after)
    try:
        for txn in txns:
            zxid, time_ms = txn[0], txn[3]
            if zxid != last_zxid + 1:  # (one test for the usual case: the next txn)
                if known and zxid >> 32 == last_zxid >> 32:
                    found.gap = f"{path}: txns {last_zxid + 1:#x}..{zxid - 1:#x} are missing from the logs"
                    break
                if first is not None and zxid <= last_zxid:
                    found.ordered = False
            if first is None:
                first, known = _Mark(zxid, time_ms), True
            if not count & _INDEX_MASK:
                index.append((zxid, time_ms))
            if zxid in snapshot_zxids:
                found.snapshot_times[zxid] = time_ms
            count += 1
            last_zxid, last_time = zxid, time_ms
            if not recording and not finished and since_time is not None and time_ms >= since_time:
                recording = True
                found.since_zxid = zxid
            if recording and (zxid > until_zxid or time_ms > until_time):
                recording, finished = False, True
            body = txn[5]
            if body is None:  # a setData head: its path, as bytes
                if recording and zxid >= record_from:
                    raw_touch[txn[6]] = zxid
                continue
            noted = recording and zxid >= record_from
            kind = type(body)
            if kind is SetData:  # most of a log: no name to note, no session to end
                if noted:
                    last_touch[body.path] = zxid
                continue
            ops = body.ops if kind is Multi and not body.failed else ((0, body),)
            for _, op in ops:  # names near the top, wherever they are: they say where the roots are
                if type(op) is Create and op.path.count("/") <= near_top:
                    parent, _, name = op.path.rpartition("/")
                    names.setdefault(parent or "/", set()).add(name)
            if kind is CloseSession:
                if body.paths is None:
                    closing[txn[1]] = zxid  # whenever it is: the state may be read from before it
                elif noted:
                    for deleted in body.paths:
                        last_touch[deleted] = zxid
                continue
            if noted:
                for _, op in ops:
                    op_kind = type(op)
                    if op_kind is Create or op_kind is Delete or op_kind is SetData or op_kind is SetAcl:
                        last_touch[op.path] = zxid
    except FilesError as exc:
        found.error = str(exc)
    found.first = first
    found.last = _Mark(last_zxid, last_time) if first is not None else None
    found.count = count - job.count
    found.recording, found.finished = recording, finished
    found.end_offset = reader.end_offset
    found.damage = reader.damage
    return found


class _Scan:
    """What pass 1 found (``ChangeReader.scan``)."""

    def __init__(self) -> None:
        self.last_touch: dict[str, int] = {}
        self.raw_touch: dict[bytes, int] = {}  # the same, for paths read as bytes (setData heads)
        self.closing: dict[int, int] = {}  # session → zxid of its last close that listed no paths
        self.index: list[tuple[int, int]] = []  # (zxid, time_ms) every _INDEX_EVERY txns
        self.names: dict[str, set[str]] = {}  # child names of the znodes near the top, created in the logs
        self.first: _Mark | None = None
        self.last: _Mark | None = None
        self.since_zxid: int | None = None  # the first txn at or after an absolute --since time
        self.snapshot_times: dict[int, int] = {}  # snapshot zxid → the time of the txn of that zxid
        self.count = 0


class ChangeReader:
    """The txns of ``paths`` (a data directory, or snapshot and log files) between ``since`` and
    ``until``: a zxid, a time, or a span back from the last logged txn; by default all the logs hold
    after the oldest snapshot they can be replayed from. Call ``open`` (passes 1 and 2), then iterate
    ``txns`` (pass 3). ``light(path)`` names the znodes whose data no change reads (heartbeats): their
    states keep no bytes. ``fast=False`` parses every txn whole (see the module docstring); ``workers``
    sets how many processes pass 1 reads the logs with (default: two where it pays, ``scan``)."""

    def __init__(
        self,
        paths: list[str] | tuple[str, ...],
        *,
        since: int | datetime | timedelta | None = None,
        until: int | datetime | timedelta | None = None,
        best_effort: bool = False,
        light: Callable[[str], bool] | None = None,
        fast: bool = True,
        workers: int | None = None,
    ) -> None:
        self.paths = list(paths)
        self.fast = fast
        self.workers = workers  # pass 1's helper processes (None: as ``_parallel`` judges, 1: none)
        self.helped = 0  # logs pass 1 took as its helpers read them
        self.since = Bound.of(since)
        self.until = Bound.of(until)
        _in_order(self.since, self.until)
        self.best_effort = best_effort
        self._is_light = light or (lambda path: False)
        self._light: dict[str, bool] = {}
        self._in_context: dict[str, bool] = {}
        self.problems: list[str] = []
        self.stats = ReadStats()
        self.states: dict[str, NodeState] = {}
        self.names: dict[str, set[str]] = {}  # child names near the top, for root discovery
        self._logs: list[str] = []
        self._snapshots: list[str] = []
        self._scan = _Scan()
        self._touched: set[str] = set()
        self._state_zxid = 0  # the state is as of this zxid
        self._start_zxid = 0  # the window's first txn is the first at or after it …
        self._start_time: int | None = None  # … stamped at or after this
        self._until_zxid: int | None = None
        self._until_time: int | None = None
        self._end_zxid = 0  # the last txn pass 1 read whole
        self._closing: dict[int, set[str]] = {}  # session → its ephemerals, for closes without paths
        self._log_ends: dict[str, int] = {}  # log → where pass 1 found its records end (``LogFile.end_offset``)
        self.empty = False  # the window holds no txn

    def _context(self, path: str) -> bool:
        """Whether ``path`` is a znode the change kinds read besides the one a txn touches (asked once)."""
        found = self._in_context.get(path)
        if found is None:
            found = self._in_context[path] = in_context(path)
        return found

    def light(self, path: str) -> bool:
        """Whether no change reads ``path``'s data (asked once per path)."""
        found = self._light.get(path)
        if found is None:
            found = self._light[path] = self._is_light(path)
        return found

    # pass 1 -----------------------------------------------------------------------------------------

    def open(self) -> None:
        self._snapshots, self._logs = data_files(self.paths)
        if not self._snapshots:
            raise FilesError(f"no snapshot file in {', '.join(self.paths)}")
        if not self._logs:
            raise FilesError(f"no transaction log in {', '.join(self.paths)}: changes are read from the logs")
        self.scan()
        self._resolve()
        if not self.empty:
            self._read_state()

    def _problem(self, message: str) -> None:
        if not self.best_effort:
            raise FilesError(message)
        self.problems.append(message)

    def scan(self) -> None:
        """Pass 1 (see the module docstring). A damaged log or missing txns end it with ``FilesError``
        (with best effort: a problem, and the window ends there). Each log is read by ``_scan_log``, in
        order; logs big enough to be worth a process (``_parallel``) are read two at a time by forked
        helpers when the window is bounded by zxids only, and merged in order as if read one by one."""
        scan = self._scan
        since, until = self.since, self.until
        job = _ScanJob(
            path="",
            after=-1,
            fast=self.fast,
            best_effort=self.best_effort,
            since_time=since.time_ms if since is not None else None,
            record_from=since.zxid if since is not None and since.zxid is not None else -1,
            until_zxid=until.zxid if until is not None and until.zxid is not None else 1 << 64,
            until_time=until.time_ms if until is not None and until.time_ms is not None else 1 << 64,
            snapshot_zxids=frozenset(name_zxid(os.path.basename(p), "snapshot") or 0 for p in self._snapshots),
        )
        recording = job.since_time is None  # touches are noted from the window's start to its end
        finished = False
        count = 0
        last: _Mark | None = None
        with self._helpers(job) as found:
            for path in self._logs:
                sequential = replace(
                    job, path=path, after=last.zxid if last else -1, last=last, recording=recording, finished=finished,
                    count=count,
                )  # fmt: skip
                one = next(found) if found is not None else None
                if one is None or not one.stands_after(last):
                    one = _scan_log(sequential)  # the log as read one by one: exact whatever it holds
                else:
                    self.helped += 1
                if one.error is not None:
                    raise FilesError(one.error)
                scan.raw_touch.update(one.raw_touch)  # a later log's zxids are the larger
                scan.last_touch.update(one.last_touch)
                scan.closing.update(one.closing)
                for parent, names in one.names.items():
                    scan.names.setdefault(parent, set()).update(names)
                scan.index += one.index
                scan.snapshot_times.update(one.snapshot_times)
                if scan.since_zxid is None:
                    scan.since_zxid = one.since_zxid
                if scan.first is None:
                    scan.first = one.first
                count += one.count
                last = one.last or last
                recording, finished = one.recording, one.finished
                if one.gap is not None:
                    self._problem(one.gap)
                    self._end_scan(scan, last, count)
                    return
                self.stats.logs.append(path)
                self._log_ends[path] = one.end_offset
                if one.damage:
                    self.problems.append(one.damage)
                    break
        self._end_scan(scan, last, count)

    @contextmanager
    def _helpers(self, job: _ScanJob) -> Iterator[Iterator[_LogScan | None] | None]:
        """What forked helpers read of each log (in order; None for a log they did not read), or None
        when the logs are read here, one by one: a window with a time bound (whose touches depend on the
        times of the logs before), one log, one CPU, or logs too small to be worth a process."""
        workers = self.workers if self.workers is not None else _parallel(self._logs)
        timed = job.since_time is not None or job.until_time != 1 << 64
        if workers < 2 or len(self._logs) < 2 or timed or not can_fork():  # (spawn-only, a pool's worker)
            yield None
            return
        # each log alone (nothing before it known): recording from its first txn, never finished by a
        # time, its index sampled from its own first txn (an index serves time windows only); a helper
        # that ends without its result is a None (``forked``), read here
        with forked(_scan_log, [replace(job, path=path, recording=True) for path in self._logs], workers) as found:
            yield found

    def _end_scan(self, scan: _Scan, last: _Mark | None, count: int) -> None:
        last_touch = scan.last_touch
        for raw, zxid in scan.raw_touch.items():  # each path once, decoded as the txns reader decodes it
            path = decode_text(raw)
            if zxid > last_touch.get(path, -1):
                last_touch[path] = zxid
        scan.raw_touch = {}
        scan.last = last
        scan.count = count
        stats = self.stats
        stats.txns_scanned = count
        if scan.first is not None and last is not None:
            stats.logs_first_zxid, stats.logs_last_zxid = scan.first.zxid, last.zxid
            stats.logs_last_time_ms = last.time_ms
            self._end_zxid = last.zxid

    # the window -------------------------------------------------------------------------------------

    def _resolve(self) -> None:
        """Place the window in the logs and choose the state it starts from: the zxid just before the
        window, or (by default) the oldest snapshot the logs can be replayed from."""
        scan = self._scan
        if scan.first is None or scan.last is None:
            self.empty = True
            return
        first, last = scan.first, scan.last
        snapshots = sorted(name_zxid(os.path.basename(p), "snapshot") or 0 for p in self._snapshots)
        usable = [z for z in snapshots if _replayable(z, first.zxid) and z <= last.zxid]
        since, until = self.since, self.until
        start_time: int | None = None
        if since is None:
            if not usable:
                raise FilesError(self._no_state_message(first.zxid))
            start = usable[0] + 1
        elif since.zxid is not None:
            start = since.zxid
        elif since.time_ms is not None:
            start = scan.since_zxid if scan.since_zxid is not None else last.zxid + 1
        else:
            assert since.back_ms is not None
            start_time = last.time_ms - since.back_ms
            start = first.zxid
            for zxid, time_ms in scan.index:  # the last sampled txn before that time: the window is after it
                if time_ms >= start_time:
                    break
                start = zxid
            oldest = usable[0] if usable else None
            if oldest is not None and start <= oldest and scan.snapshot_times.get(oldest, start_time) < start_time:
                start = oldest + 1  # the window begins after the oldest snapshot: its exact start, by time
        if until is not None:
            if until.zxid is not None:
                self._until_zxid = until.zxid
            else:
                self._until_time = until.time_ms if until.time_ms is not None else last.time_ms - (until.back_ms or 0)
            if since is not None and (
                (self._until_zxid is not None and self._until_zxid < start)
                or (self._until_time is not None and start_time is not None and self._until_time < start_time)
            ):
                raise UsageError("--until is before --since: the window is empty")
        if not [z for z in usable if z < start]:
            if not usable:
                raise FilesError(self._no_state_message(first.zxid))
            message = (
                f"the files hold no state before zxid {start:#x} (the oldest snapshot the logs can be replayed "
                f"from is at {usable[0]:#x}): changes start after it"
            )
            self._problem(message)
            start, start_time = usable[0] + 1, None
        if start > last.zxid:
            self.empty = True
            return
        self._start_zxid, self._start_time = start, start_time
        self._state_zxid = self._choose_snapshot(start - 1, [z for z in usable if z < start])
        self._touched = {p for p, z in scan.last_touch.items() if z >= start}
        self._closing = {s: set() for s, z in scan.closing.items() if z > self._state_zxid}
        scan.last_touch = {}  # what it held is in _touched now
        self.names = scan.names

    def _choose_snapshot(self, before: int, usable: list[int]) -> int:
        """The snapshot the state is read from, as its zxid: of those the logs can be replayed from, at or
        before ``before`` (the zxid just before the window), the newest that was settled by then. A
        snapshot is fuzzy: its dump ended at the zxid its digest or last processed zxid names, and a
        znode the dump reached late holds a state from after the window's start. None settled by then:
        the newest (the steps of its late znodes say their state before is not known). The txns from the
        snapshot to the window are replayed on the kept znodes as the window's are (``txns``), streamed."""
        by_zxid = {name_zxid(os.path.basename(p), "snapshot") or 0: p for p in self._snapshots}
        candidates = sorted(usable, reverse=True)
        for zxid in candidates:
            settled = _settled_zxid(by_zxid[zxid])
            if settled is None or settled <= before:
                return zxid
        return candidates[0]

    def _state_files(self) -> list[str]:
        """The snapshot of the state and the older ones (for the files source to fall back on, as
        ZooKeeper does, when it turns out damaged), and the logs."""
        older = [p for p in self._snapshots if (name_zxid(os.path.basename(p), "snapshot") or 0) <= self._state_zxid]
        return older + self._logs

    def _no_state_message(self, first_zxid: int) -> str:
        names = ", ".join(os.path.basename(p) for p in self._snapshots)
        return (
            f"no snapshot the logs can be replayed from: they start at zxid {first_zxid:#x}, the snapshots are {names}"
        )

    # pass 2 -----------------------------------------------------------------------------------------

    def _read_state(self) -> None:
        """The znodes the window touches, and the context ones, as they were at ``_state_zxid``."""
        source = FileSource(self._state_files(), at_zxid=self._state_zxid, best_effort=self.best_effort)
        touched, states, closing, light = self._touched, self.states, self._closing, self.light
        names = self.names
        near_top = ROOT_SEARCH_DEPTH + 1
        with source:
            plan = source.plan
            assert plan is not None
            self.stats.snapshot = plan.snapshot
            for raw in source.walk("/"):
                path = raw.path
                if path.count("/") <= near_top and path != "/":
                    parent, _, name = path.rpartition("/")
                    names.setdefault(parent or "/", set()).add(name)
                s = raw.stat
                owner = s.ephemeralOwner
                if path in touched or (owner and owner in closing) or in_context(path):
                    data = None if light(path) else raw.data
                    states[path] = NodeState(data, s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.aversion, owner)
                    if owner in closing:
                        closing[owner].add(path)
            for problem in plan.problems:
                if problem not in self.problems:
                    self.problems.append(problem)
            if plan.zxid < self._state_zxid:  # best effort: the replay stopped at damage
                self._state_zxid = plan.zxid

    # pass 3 -----------------------------------------------------------------------------------------

    def txns(
        self, rewrite: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[Txn | list[Rewrite], list[Step] | None, bool]]:
        """(txn, its steps, whether it is in the window) for every txn after the state's zxid, to the end
        of the window; txns before the window come too (``False``), so that what the caller tracks over
        time (heartbeats) is right when the window opens. With the fast path, the setData txns of kept
        znodes that ``rewrite`` names come in runs, in order, as (a list of ``Rewrite``, None, whether they
        are in the window) (see the module docstring): the states are those after the run's last txn (its
        rewriters read none), but for the first txn, which comes alone, whatever it is (the caller sets
        up what it tracks from the states after it: ``Engine.start``)."""
        if self.empty:
            return
        if self.fast:
            yield from self._fast_txns(rewrite)
            return
        start, start_time, until_zxid, until_time, end = self._bounds()
        last = self._state_zxid
        opened = False
        for path in self._logs_from(last + 1):
            for txn in LogFile(path, best_effort=True).txns(after=last):  # what pass 1 accepted, read again
                zxid, time_ms = txn.zxid, txn.time_ms
                if zxid > end:
                    return
                if zxid != last + 1 and zxid >> 32 == last >> 32:
                    raise FilesError(f"{path}: txns {last + 1:#x}..{zxid - 1:#x} are missing from the logs")
                last = zxid
                if not opened and zxid >= start and (start_time is None or time_ms >= start_time):
                    opened = True
                    self.stats.first_zxid, self.stats.first_time_ms = zxid, time_ms
                if opened and (zxid > until_zxid or time_ms > until_time):
                    return
                yield txn, self._stepped(txn, opened), opened

    def _bounds(self) -> tuple[int, int | None, int, int, int]:
        """The window's first zxid and time (the first txn at or after both opens it), the zxid and time
        past which it ends (no bound: past any), and the last txn pass 1 read."""
        until_zxid = self._until_zxid if self._until_zxid is not None else 1 << 64
        until_time = self._until_time if self._until_time is not None else 1 << 64
        return self._start_zxid, self._start_time, until_zxid, until_time, self._end_zxid

    def _stepped(self, txn: Txn, in_window: bool) -> list[Step]:
        """The steps of a whole txn, applied, and counted into ``stats`` if in the window."""
        steps = self._apply(txn)
        if in_window:
            stats = self.stats
            stats.txns += 1
            stats.ops += len(steps)
            for step in steps:
                stats.unknown_before += not step.known
            stats.last_zxid, stats.last_time_ms = txn.zxid, txn.time_ms
            self._count(txn)
        return steps

    def _fast_txns(
        self, rewrite: Callable[[str], bool] | None
    ) -> Iterator[tuple[Txn | list[Rewrite], list[Step] | None, bool]]:
        """``txns`` on the fast path: the logs read again in one loop of this function's own, a record at a
        time, with nothing made of a rewrite but its ``Rewrite`` (most of a busy log: see the module
        docstring). Pass 1 read these records whole and checked them (framing, checksums, bodies, the
        logs' damage and ends: ``LogFile._read``, after ZooKeeper's FileTxnLog.java), so this loop only
        finds them again; a record that is not where or what pass
        1 found (the files changed in between) is a ``FilesError``, never a guess."""
        start, start_time, until_zxid, until_time, end = self._bounds()
        stats, states = self.stats, self.states
        last = self._state_zxid
        routes: dict[bytes, tuple[str, int]] = {}  # a setData head's path → (path, what is done with it)
        tuple_new = tuple.__new__
        unpack_set, unpack_int = FRAMED_SET.unpack_from, INT.unpack_from
        framed_set, header, max_field, chunk = FRAMED_SET.size, TXN_HEADER.size, MAX_FIELD, _REREAD_CHUNK
        set_path = header + 4  # a setData's path, after the txn header and its length
        keep = _REWRITE_KEEP
        run: list[Rewrite] = []  # rewrites not handed over yet, all before the window or all in it
        unknown = 0  # of them, those whose state before was not known
        most = 1  # the first txn alone: the caller sets up what it tracks from the states after it
        opened = done = False
        for path in self._logs_from(last + 1):
            try:
                f = open_file(path)
            except OSError as exc:
                raise FilesError(f"{path}: cannot read: {exc.strerror or exc}") from None
            with f:
                f.seek(FILE_HEADER.size)  # pass 1 checked the header
                log_end = self._log_ends.get(path, MAX_FIELD << 32)  # (pass 1 stopped inside it: no end known)
                buf, pos, base, size, eof = b"", 0, FILE_HEADER.size, 0, False  # size: len(buf) without padding
                while True:
                    if last >= end:  # the last txn pass 1 read: what follows it is not the window's
                        done = True
                        break
                    if base + pos >= log_end:
                        break  # where pass 1 found this log's records end (zeros, a torn record, damage)
                    if size - pos < framed_set:
                        if not eof:
                            more = f.read(chunk)
                            eof = len(more) < chunk
                            buf, pos, base = buf[pos:size] + more, 0, base + pos
                            size = len(buf)
                        if size - pos < 12:
                            break  # the end of this log, as pass 1 found it (zeros or nothing follow)
                        if len(buf) - pos < framed_set:  # a short last record: zeros to unpack a frame from
                            buf += bytes(framed_set)
                    _, length, session, cxid, zxid, time_ms, kind, path_size = unpack_set(buf, pos)
                    if not header <= length <= max_field:
                        break  # the preallocated zeros: the end of this log
                    marker = pos + 12 + length  # the record's "B"
                    if marker >= size and not eof:
                        more = f.read(length + 1 + chunk)
                        eof = len(more) < length + 1 + chunk
                        buf, marker, base = buf[pos:size] + more, marker - pos, base + pos
                        pos, size = 0, len(buf)
                    if marker >= size or buf[marker] != 0x42:
                        raise FilesError(f"{path}: no record at byte {base + pos}: {_CHANGED}")
                    record, pos = pos + 12, marker + 1
                    if zxid != last + 1:  # (one test for the usual case: the next txn)
                        if zxid <= last:
                            continue  # in the state already
                        if zxid > end:
                            done = True
                            break
                        if zxid >> 32 == last >> 32:
                            if run:
                                yield self._counted(run, unknown, opened), None, opened
                            raise FilesError(f"{path}: txns {last + 1:#x}..{zxid - 1:#x} are missing from the logs")
                    last = zxid
                    if not opened and zxid >= start and (start_time is None or time_ms >= start_time):
                        if run:  # what was rewritten before the window: timed, not counted
                            yield run, None, False
                            run, unknown = [], 0
                        opened = True
                        stats.first_zxid, stats.first_time_ms = zxid, time_ms
                    if opened and (zxid > until_zxid or time_ms > until_time):
                        done = True
                        break
                    body: Any = None
                    if kind == SET_DATA and 0 <= path_size <= length - set_path - 4:
                        # a plain setData as pass 1's heads read it (``LogFile._read``): a path and a data
                        # buffer that are not null, a version, then nothing or a digest
                        at = record + set_path + path_size  # the data's length
                        (data_size,) = unpack_int(buf, at)
                        if 0 <= data_size <= marker - at - 8:
                            done_at = at + 8 + data_size
                            if done_at == marker or done_at + 12 == marker:
                                raw = buf[at - path_size : at]
                                route = routes.get(raw)
                                if route is None:
                                    route = routes[raw] = self._route(raw, rewrite)
                                name, how = route
                                if how >= keep and (state := states.get(name)) is not None:
                                    unknown += state.mzxid >= zxid  # as _set has it, and its state after
                                    (state.version,) = unpack_int(buf, done_at - 4)
                                    state.mzxid, state.mtime, state.decoded = zxid, time_ms, None
                                    if how == keep:
                                        state.data = buf[at + 4 : at + 4 + data_size]
                                    run.append(tuple_new(Rewrite, (zxid, session, cxid, time_ms, name)))
                                    if len(run) >= most:
                                        yield self._counted(run, unknown, opened), None, opened
                                        run, unknown, most = [], 0, _RUN
                                    continue
                                (version,) = unpack_int(buf, done_at - 4)
                                data = buf[at + 4 : at + 4 + data_size] if how != _SKIP else None
                                body = SetData(name, data, version)
                    if body is None:
                        try:
                            body, _ = record_body(kind, buf[record:marker])
                        except JuteError:
                            raise FilesError(
                                f"{path}: the record at byte {base + record - 12} cannot be read: {_CHANGED}"
                            ) from None
                    txn = tuple_new(Txn, (zxid, session, cxid, time_ms, kind, body, None))
                    if run:
                        yield self._counted(run, unknown, opened), None, opened
                        run, unknown = [], 0
                    most = _RUN
                    yield txn, self._stepped(txn, opened), opened
            if done:
                break
        if run:
            yield self._counted(run, unknown, opened), None, opened
        if not done:  # the logs ended before the last txn pass 1 read
            raise FilesError(f"{self._logs[-1]}: the logs end at zxid {last:#x}: {_CHANGED}")

    def _counted(self, run: list[Rewrite], unknown: int, in_window: bool) -> list[Rewrite]:
        """A run of rewrites counted into ``stats`` (as ``txns`` counts a txn of one step) if in the window."""
        if in_window:
            stats = self.stats
            stats.txns += len(run)
            stats.ops += len(run)
            stats.unknown_before += unknown
            stats.last_zxid, stats.last_time_ms = run[-1].zxid, run[-1].time_ms
        return run

    def _route(self, raw: bytes, rewrite: Callable[[str], bool] | None) -> tuple[str, int]:
        """What pass 3 does with a setData head of ``raw`` (the path as the log holds it), decided once: a
        rewrite of a kept znode that ``rewrite`` names; nothing for a znode neither kept nor touched nor
        read besides (``_op``'s test: one that is not kept the first time it is written never will be,
        since only ops on kept, touched or context znodes create states); else the whole op."""
        path = decode_text(raw)
        kept = path in self._touched or path in self.states or self._context(path)
        if not kept:
            return path, _SKIP
        if rewrite is not None and rewrite(path):
            return path, _REWRITE_LIGHT if self.light(path) else _REWRITE_KEEP
        return path, _WHOLE

    def _logs_from(self, zxid: int) -> list[str]:
        """The logs holding ``zxid`` and after: from the last that starts at or before it."""
        logs = self.stats.logs or self._logs
        start = 0
        for i, path in enumerate(logs):
            if (name_zxid(os.path.basename(path), "log") or 0) <= zxid:
                start = i
        return logs[start:]

    def _count(self, txn: Txn) -> None:
        kind = type(txn.body)
        stats = self.stats
        if kind is CreateSession:
            stats.sessions_opened += 1
        elif kind is CloseSession:
            if txn.cxid == 0:
                stats.sessions_expired += 1
            else:
                stats.sessions_closed += 1
        elif (kind is Multi and txn.body.failed) or txn.type == ERROR:
            stats.failed_txns += 1

    def _apply(self, txn: Txn) -> list[Step]:
        """The steps of one txn, applied to the states in order (a multi's ops see each other). Ops on a
        znode neither kept nor touched in the window (before it opens) are no one's business: skipped."""
        body = txn.body
        kind = type(body)
        if kind is Multi:
            if body.failed:
                return []
            steps = []
            for _, op in body.ops:
                step = self._op(txn, op)
                if step is not None:
                    steps.append(step)
            return steps
        if kind is CloseSession:
            return self._close(txn, body)
        step = self._op(txn, body)
        return [] if step is None else [step]

    def _op(self, txn: Txn, op: Any) -> Step | None:
        kind = type(op)
        if kind is not SetData and kind is not Create and kind is not Delete and kind is not SetAcl:
            return None  # a check, a session's create, a failed txn: nothing changed
        path = op.path
        if path not in self._touched and path not in self.states and not self._context(path):
            return None
        if kind is SetData:
            return self._set(txn, op)
        if kind is Create:
            return self._create(txn, op)
        if kind is Delete:
            return self._delete(txn, path, "deleted")
        return self._acl(txn, op)

    def _set(self, txn: Txn, op: SetData) -> Step:
        path = op.path
        before = self.states.get(path)
        zxid = txn.zxid
        if before is not None:
            known = before.mzxid < zxid
            after = NodeState(
                None if self.light(path) else op.data,
                before.czxid,
                zxid,
                before.ctime,
                txn.time_ms,
                op.version,
                before.aversion,
                before.owner,
            )
        else:
            known = False
            after = NodeState(None if self.light(path) else op.data, 0, zxid, 0, txn.time_ms, op.version, 0, 0)
        self.states[path] = after
        return Step(txn, "set", path, before, after, known, "")

    def _create(self, txn: Txn, op: Create) -> Step:
        path = op.path
        zxid, time_ms = txn.zxid, txn.time_ms
        owner = txn.session if op.kind == "ephemeral" else 0
        after = NodeState(None if self.light(path) else op.data, zxid, zxid, time_ms, time_ms, 0, 0, owner)
        self.states[path] = after
        if owner and owner in self._closing:
            self._closing[owner].add(path)
        return Step(txn, "create", path, None, after, True, "")  # a logged create succeeded: it was absent

    def _delete(self, txn: Txn, path: str, how: str) -> Step:
        before = self.states.pop(path, None)
        known = before is not None and before.mzxid < txn.zxid
        if before is not None and before.owner in self._closing:
            self._closing[before.owner].discard(path)
        return Step(txn, "delete", path, before, None, known, how)

    def _acl(self, txn: Txn, op: SetAcl) -> Step:
        path = op.path
        before = self.states.get(path)
        after = None
        if before is not None:
            after = NodeState(
                before.data,
                before.czxid,
                before.mzxid,
                before.ctime,
                before.mtime,
                before.version,
                op.version,
                before.owner,
            )
            after.decoded = before.decoded
            self.states[path] = after
        return Step(txn, "acl", path, before, after, before is not None, "")

    def _close(self, txn: Txn, body: CloseSession) -> list[Step]:
        """A session's end deletes its ephemerals: the paths the txn lists (3.6+), else the ones it owns.
        ZooKeeperServer.expire (and close(sessionId) for a session the server ends) submits the
        closeSession with cxid 0; a client's own close carries its xid, which the Java client
        (ClientCnxn.getXid) and kazoo start at 1 and never set to 0."""
        how = "expired" if txn.cxid == 0 else "closed"
        if body.paths is not None:
            paths = [p for p in body.paths if p != "/"]
        else:  # every ephemeral of a session that closes so is indexed (pass 2 and the creates since)
            paths = sorted(self._closing.pop(txn.session, ()))
        return [self._delete(txn, path, how) for path in paths]
