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
the two passes over the logs are most of the time a read takes, so both read a plain setData as a head
(``LogFile.heads``: its layout checked, its path as bytes, its data not even sliced): pass 1 notes the
path, and pass 3 decodes each path once, parses the data only of the znodes whose data a change reads,
and hands a rewrite (a setData of a znode whose handler only times or counts it, as the caller says:
``Engine.is_rewrite``) over as a ``Rewrite`` without a step, its state brought up to date in place.
Pass 3 leaves the checksums to pass 1, which checked every record it handed on. ``fast=False`` reads
every txn whole and makes a step of each, as the records' reference (``tests/test_changes.py``).

A snapshot is fuzzy: written while txns went on, so a znode in it may hold a state from after the zxid
in the snapshot's name (ZooKeeper replays the logs over it to make it right). Replayed to a point inside
that range, a znode the dump reached late may hold a state from after that point. A step tells it by
the stat: a state before it whose ``mzxid`` is not below the txn's own zxid is from after the txn (the
step's ``known`` is False: its before is not what ZooKeeper had), and so is a znode that a txn deletes
or writes while it is absent from the state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from ..errors import FilesError, UsageError
from ..layout import ROOT_SEARCH_DEPTH
from ..sources.base import RawNode, Stat
from ..sources.files.jute import decode_text
from ..sources.files.snapfile import SnapshotFile, name_zxid
from ..sources.files.source import FileSource, data_files
from ..sources.files.txnlog import (
    ERROR,
    CloseSession,
    Create,
    CreateSession,
    Delete,
    Head,
    LogFile,
    Multi,
    SetAcl,
    SetData,
    Txn,
)
from ..units import LONG_MAX

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INDEX_EVERY = 1024  # one (zxid, time) pair kept per this many txns, to place a window given in time
_INDEX_MASK = _INDEX_EVERY - 1  # (a power of two)

# What pass 3 does with a setData head, by its path (``ChangeReader._route``): nothing (a znode neither
# kept nor touched), the whole op (parsed, applied, a step), or a rewrite (the state updated in place,
# with the data when a change reads it, without it when none does).
_SKIP, _WHOLE, _REWRITE_KEEP, _REWRITE_LIGHT = range(4)
_RUN = 4096  # rewrites handed over at most at once

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
    """A txn's time as a UTC datetime, to the millisecond (no float rounding)."""
    return EPOCH + timedelta(milliseconds=time_ms)


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


def _kept(txn: Any) -> Any:
    """A txn or head to keep past its read: a head without the chunk it was read in."""
    return txn._replace(buf=b"") if type(txn) is Head else txn


class _Scan:
    """What pass 1 found (``ChangeReader.scan``)."""

    def __init__(self) -> None:
        self.last_touch: dict[str, int] = {}
        self.raw_touch: dict[bytes, int] = {}  # the same, for paths read as bytes (setData heads)
        self.closing: dict[int, int] = {}  # session → zxid of its last close that listed no paths
        self.index: list[tuple[int, int]] = []  # (zxid, time_ms) every _INDEX_EVERY txns
        self.names: dict[str, set[str]] = {}  # child names of the znodes near the top, created in the logs
        self.first: Txn | Head | None = None
        self.last: Txn | Head | None = None
        self.since_zxid: int | None = None  # the first txn at or after an absolute --since time
        self.snapshot_times: dict[int, int] = {}  # snapshot zxid → the time of the txn of that zxid
        self.count = 0


class ChangeReader:
    """The txns of ``paths`` (a data directory, or snapshot and log files) between ``since`` and
    ``until``: a zxid, a time, or a span back from the last logged txn; by default all the logs hold
    after the oldest snapshot they can be replayed from. Call ``open`` (passes 1 and 2), then iterate
    ``txns`` (pass 3). ``light(path)`` names the znodes whose data no change reads (heartbeats): their
    states keep no bytes. ``fast=False`` parses every txn whole (see the module docstring)."""

    def __init__(
        self,
        paths: list[str] | tuple[str, ...],
        *,
        since: int | datetime | timedelta | None = None,
        until: int | datetime | timedelta | None = None,
        best_effort: bool = False,
        light: Callable[[str], bool] | None = None,
        fast: bool = True,
    ) -> None:
        self.paths = list(paths)
        self.fast = fast
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
        (with best effort: a problem, and the window ends there)."""
        scan = self._scan
        since, until = self.since, self.until
        since_time = since.time_ms if since is not None else None
        record_from = since.zxid if since is not None and since.zxid is not None else -1
        until_zxid = until.zxid if until is not None and until.zxid is not None else 1 << 64
        until_time = until.time_ms if until is not None and until.time_ms is not None else 1 << 64
        recording = since_time is None  # touches are noted from the window's start to its end
        finished = False
        last_touch, closing, index, names = scan.last_touch, scan.closing, scan.index, scan.names
        raw_touch = scan.raw_touch
        snapshot_zxids = {name_zxid(os.path.basename(p), "snapshot") for p in self._snapshots}
        near_top = ROOT_SEARCH_DEPTH + 1
        count = 0
        last: Txn | Head | None = None
        last_zxid = -1
        for path in self._logs:
            reader = LogFile(path, best_effort=self.best_effort)
            txns: Iterator[Any] = reader.heads(after=last_zxid) if self.fast else reader.txns(after=last_zxid)
            for txn in txns:
                zxid, time_ms = txn[0], txn[3]
                if zxid != last_zxid + 1 and last is not None and zxid >> 32 == last_zxid >> 32:
                    self._problem(f"{path}: txns {last_zxid + 1:#x}..{zxid - 1:#x} are missing from the logs")
                    self._end_scan(scan, last, count)
                    return
                if last is None:
                    scan.first = _kept(txn)
                if not count & _INDEX_MASK:
                    index.append((zxid, time_ms))
                if zxid in snapshot_zxids:
                    scan.snapshot_times[zxid] = time_ms
                count += 1
                last, last_zxid = txn, zxid
                if not recording and not finished and since_time is not None and time_ms >= since_time:
                    recording = True
                    scan.since_zxid = zxid
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
                        closing[txn.session] = zxid  # whenever it is: the state may be read from before it
                    elif noted:
                        for deleted in body.paths:
                            last_touch[deleted] = zxid
                    continue
                if noted:
                    for _, op in ops:
                        op_kind = type(op)
                        if op_kind is Create or op_kind is Delete or op_kind is SetData or op_kind is SetAcl:
                            last_touch[op.path] = zxid
            self.stats.logs.append(path)
            if reader.damage:
                self.problems.append(reader.damage)
                break
        self._end_scan(scan, last, count)

    def _end_scan(self, scan: _Scan, last: Txn | Head | None, count: int) -> None:
        last_touch = scan.last_touch
        for raw, zxid in scan.raw_touch.items():  # each path once, decoded as the txns reader decodes it
            path = decode_text(raw)
            if zxid > last_touch.get(path, -1):
                last_touch[path] = zxid
        scan.raw_touch = {}
        scan.last = _kept(last)
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
        stats = self.stats
        start, start_time = self._start_zxid, self._start_time
        until_zxid = self._until_zxid if self._until_zxid is not None else 1 << 64
        until_time = self._until_time if self._until_time is not None else 1 << 64
        end = self._end_zxid
        opened = False
        last = self._state_zxid
        fast, states = self.fast, self.states
        routes: dict[bytes, tuple[str, int]] = {}  # a setData head's path → (path, what is done with it)
        tuple_new = tuple.__new__
        run: list[Rewrite] = []  # rewrites not handed over yet, all before the window or all in it
        unknown = 0  # of them, those whose state before was not known
        most = 1  # the first txn alone: the caller sets up what it tracks from the states after it
        done = False
        for path in self._logs_from(self._state_zxid + 1):
            reader = LogFile(path, best_effort=True)  # pass 1 read these: what it accepted is read again
            records: Iterator[Any] = reader.heads(after=last, verify=False) if fast else reader.txns(after=last)
            for record in records:
                zxid, time_ms = record[0], record[3]
                if zxid > end:
                    done = True
                    break
                if zxid != last + 1 and zxid >> 32 == last >> 32:
                    # pass 1 saw none: the files changed in between
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
                txn: Txn
                if not fast:
                    txn = record
                else:
                    _, session, cxid, _, kind, body, raw, version, buf, data_at, data_size = record
                    if body is None:  # a setData head
                        route = routes.get(raw)
                        if route is None:
                            route = routes[raw] = self._route(raw, rewrite)
                        name, how = route
                        if how >= _REWRITE_KEEP and (state := states.get(name)) is not None:
                            unknown += state.mzxid >= zxid  # as _set has it, and its state after
                            state.mzxid, state.mtime, state.version, state.decoded = zxid, time_ms, version, None
                            if how == _REWRITE_KEEP:
                                state.data = buf[data_at : data_at + data_size]
                            run.append(tuple_new(Rewrite, (zxid, session, cxid, time_ms, name)))
                            if len(run) >= most:
                                yield self._counted(run, unknown, opened), None, opened
                                run, unknown, most = [], 0, _RUN
                            continue
                        data = buf[data_at : data_at + data_size] if how != _SKIP else None
                        body = SetData(name, data, version)
                    txn = tuple_new(Txn, (zxid, session, cxid, time_ms, kind, body, None))
                if run:
                    yield self._counted(run, unknown, opened), None, opened
                    run, unknown = [], 0
                most = _RUN
                steps = self._apply(txn)
                if opened:
                    stats.txns += 1
                    stats.ops += len(steps)
                    stats.unknown_before += sum(not step.known for step in steps)
                    stats.last_zxid, stats.last_time_ms = zxid, time_ms
                    self._count(txn)
                yield txn, steps, opened
            if done:
                break
        if run:
            yield self._counted(run, unknown, opened), None, opened

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
