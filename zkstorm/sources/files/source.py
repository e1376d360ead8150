"""``--from-files``: a ZooKeeper data directory as a tree source that reads like a live session.

``FileSource`` picks the snapshot ZooKeeper itself would load, replays the logs after it (to the end, or
to ``--at-zxid``), and yields the same ``RawNode`` values (path, client-visible stat, bytes) as the live
walker, so every decoder, health rule and the Parquet writer work unchanged. Opening checks the
snapshot's seals at zlib-ng's speed (one open of the file, the cheap check included) and indexes the
logged txns. A whole-tree walk (``tree /``, ``snapshot``) then reads the snapshot once, resolving replay
node by node as it streams: nodes come in file order, each after its subtree (that is when its child
count is known), so memory holds the current node's ancestors and the txns, never the tree. Any other
read (``get``, children, a subtree: the views ask for several) is served from an index of the whole tree
that the first such read builds in one pass, so a command reads the snapshot once however many reads it
makes, at the cost of holding the tree in memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Container, Generator, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, BinaryIO

from ...errors import FilesError, NotFoundError, UnusableSnapshotError, UsageError
from ..base import RawNode, WalkStats
from .replay import ALWAYS, DATA, OWNER, Overlay, Replay, Timeline
from .snapfile import (
    FRAME_CHILDREN,
    FRAME_DATA,
    FRAME_FIELDS,
    FRAME_MARK,
    FRAME_PATH,
    SnapshotFile,
    SnapshotInfo,
    cheap_check,
    client_stat,
    content_digest,
    name_zxid,
    open_file,
)
from .txnlog import LogFile, Txn

log = logging.getLogger(__name__)


@dataclass
class FilePlan:
    """The files a read uses and what they gave: recorded in snapshot manifests as the source."""

    snapshot: str
    snapshot_zxid: int
    logs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file: why", newest first
    zxid: int = 0  # the state reached
    time_ms: int | None = None  # of the last txn applied
    txns_applied: int = 0
    fuzzy: bool | None = None  # None until a whole-tree read has seen the content (unless the digest says)
    digest_verified: bool | None = None
    problems: list[str] = field(default_factory=list)  # best effort: what was not read

    def problem(self, message: str) -> None:
        log.info("%s", message)  # the command line reports these when it finishes
        self.problems.append(message)

    def describe(self) -> dict[str, Any]:
        return {
            "files": {"snapshot": self.snapshot, "logs": self.logs, "skipped": self.skipped},
            "snapshot_zxid": self.snapshot_zxid,
            "zxid_reached": self.zxid,
            "txns_applied": self.txns_applied,
            "fuzzy_snapshot": self.fuzzy,
            "digest_verified": self.digest_verified,
            "problems": self.problems,
        }


def _list_dir(folder: str) -> tuple[list[str], list[str]]:
    if os.path.isdir(os.path.join(folder, "version-2")):
        folder = os.path.join(folder, "version-2")
    names = os.listdir(folder)
    snaps = [os.path.join(folder, n) for n in names if name_zxid(n, "snapshot") is not None]
    logs = [os.path.join(folder, n) for n in names if name_zxid(n, "log") is not None]
    return snaps, logs


def data_files(paths: list[str] | tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The snapshots (newest first) and logs (oldest first) that ``paths`` name: data directories (or
    their ``version-2``), snapshot files and log files, as ``--from-files`` takes them."""
    snapshots: list[str] = []
    logs: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            snaps, found = _list_dir(path)
            snapshots += snaps
            logs += found
        elif not os.path.exists(path):
            raise FilesError(f"{path}: no such file or directory")
        elif name_zxid(os.path.basename(path), "snapshot") is not None:
            snapshots.append(path)
        elif name_zxid(os.path.basename(path), "log") is not None:
            logs.append(path)
        else:
            raise UsageError(f"{path}: not a data directory, snapshot.<zxid> or log.<zxid> file")
    snapshots.sort(key=lambda p: name_zxid(os.path.basename(p), "snapshot") or 0, reverse=True)
    logs.sort(key=lambda p: name_zxid(os.path.basename(p), "log") or 0)
    return snapshots, logs


def zxid_at_time(logs: list[str], time_ms: int, *, best_effort: bool = False) -> int:
    """The zxid of the last logged txn at or before ``time_ms`` (epoch ms, the txn header's time): the
    one before the first txn stamped later (the leader's clock is the only one a log has; a new leader's
    clock may stand a little behind, and a state "as of 03:12" must not include a txn stamped later).
    The logs are read in order, to that first later txn. ``FilesError`` when no txn is that early."""
    last: int | None = None
    first_time: int | None = None
    for path in logs:
        reader = LogFile(path, best_effort=best_effort)
        for txn in reader.txns(after=last if last is not None else -1):
            if first_time is None:
                first_time = txn.time_ms
            if txn.time_ms > time_ms:
                if last is None:
                    raise FilesError(
                        f"the logs start at {_iso_ms(first_time)}, after --at {_iso_ms(time_ms)}: "
                        "no logged txn is that early"
                    )
                return last
            last = txn.zxid
        if reader.damage:
            break
    if last is None:
        raise FilesError("no logged txn to place --at by: " + (", ".join(logs) or "no log files"))
    return last


def _iso_ms(time_ms: int) -> str:
    from datetime import datetime, timedelta

    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=time_ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Open:
    """The mark of a frame the hooks resolve when it closes: its touched children's snapshot states
    (path → (data, fields)) and, once a descendant needed it, its ``Timeline``."""

    __slots__ = ("children", "timeline")

    def __init__(self, timeline: Timeline | None = None) -> None:
        self.children: dict[str, tuple[bytes | None, Any]] = {}
        self.timeline = timeline


class _ReplayHooks:
    """``SnapshotFile.tree`` hooks that resolve replay node by node as the snapshot streams.

    A node whose ops only set its data or ACL (most of a production log) is settled as the stream
    enters it (``Replay.settle``) and then closed by the tree like any other. Any other node replay
    touches is resolved when its subtree has streamed (``Replay.resolve``), from its own and its touched
    children's snapshot states and its parent's ``Timeline``; a frame's mark (``_Open``) holds those
    children. A node that replay deletes is checked as the stream enters it (its own timeline), and its
    subtree dropped. Nodes replay creates (absent from the snapshot) are yielded when their parent
    closes, each after the ones it creates under it.

    Nothing here recurses or copies the ancestors: a timeline is computed once per frame, from its
    parent's, so the cost does not grow with depth (a path 1,500 levels deep that only the log holds
    reads like a flat one), and a node's created children are walked with an explicit stack.
    """

    def __init__(self, replay: Replay, *, digest: bool) -> None:
        self.replay = replay
        self.touched: Container[str] = replay.touched
        self.owners: Container[int] = replay.closing
        self.check = digest
        self.digest = 0  # of what these hooks yield
        self.yielded = 0

    def enter(
        self, path: str, data: bytes | None, fields: tuple[int, ...], crc: int, stack: list[list[Any]]
    ) -> list[Any] | None:
        if stack:
            # The parent, when resolved, knows this child's snapshot state. It is resolved anyway when an
            # op creates or deletes one of its children (it is touched itself, and marked); else only
            # a session close can change it, by deleting this ephemeral child.
            parent = stack[-1]
            if parent[FRAME_MARK] is None and fields[OWNER] in self.owners:
                parent[FRAME_MARK] = _Open()
            if parent[FRAME_MARK] is not None:
                parent[FRAME_MARK].children[path] = (data, fields)
        replay = self.replay
        settled = replay.settle(path, data, fields)
        if settled is not None:  # its own ops set its data, nothing else touches it: settled here, and
            # closed by the tree like any unchanged node (unless a child's session close marks it)
            fields = tuple(settled[:DATA])
            data = settled[DATA]
            return [path, data, fields, 0, content_digest(path, data, fields) if self.check else 0, None]
        timeline = None
        if replay.may_vanish(path, fields[OWNER]):
            timeline = replay.timeline(path, fields, self._parent_timeline(path, stack))
            if not timeline.final:
                return None
        return [path, data, fields, 0, crc, _Open(timeline)]

    def _parent_timeline(self, path: str, stack: list[list[Any]]) -> Timeline:
        """The timeline of ``stack[-1]``, the parent of ``path``, when ``path``'s own depends on it."""
        return self._timeline(stack, len(stack) - 1) if stack and self.replay.creates(path) else ALWAYS

    def _timeline(self, stack: list[list[Any]], i: int) -> Timeline:
        """The timeline of ``stack[i]``, computed from the nearest ancestor whose timeline is known (or
        does not depend on its parent's) downwards, and kept in each marked frame: every frame's is
        computed once, so the cost is O(depth) once per path, not per node."""
        pending = []
        known = ALWAYS
        creates = self.replay.creates
        while i >= 0:
            frame = stack[i]
            mark = frame[FRAME_MARK]
            if mark is None:  # untouched, or settled: no op creates or deletes it
                break
            if mark.timeline is not None:
                known = mark.timeline
                break
            pending.append(frame)
            if not creates(frame[FRAME_PATH]):
                break
            i -= 1
        for frame in reversed(pending):
            known = self.replay.timeline(frame[FRAME_PATH], frame[FRAME_FIELDS], known)
            frame[FRAME_MARK].timeline = known
        return known

    def close(self, frame: list[Any], stack: list[list[Any]]) -> Generator[RawNode, None, int]:
        node_path, data, fields, children, mark = (
            frame[FRAME_PATH],
            frame[FRAME_DATA],
            frame[FRAME_FIELDS],
            frame[FRAME_CHILDREN],
            frame[FRAME_MARK],
        )
        replay = self.replay
        # (a node settled as it was entered is replayed again here from that state: its own ops set
        # absolute values, so applying them twice gives the same node)
        parent = self._parent_timeline(node_path, stack)
        overlay = replay.resolve(node_path, parent, mark.children, (data, fields))
        state = overlay.nodes.get(node_path)
        if state is None:
            return 0  # unreachable: a node replay deletes is dropped as the stream enters it
        created = [
            child
            for child in sorted(replay.created.get(node_path, ()))
            if child not in mark.children and overlay.nodes.get(child) is not None
        ]
        if created:
            if mark.timeline is None:
                mark.timeline = replay.timeline(node_path, fields, parent)
            children += yield from self._created(created, mark.timeline, overlay)
        yield self._node(node_path, state[DATA], state, children)
        return 1

    def _created(self, paths: list[str], parent: Timeline, replayed: Overlay) -> Generator[RawNode, None, int]:
        """Nodes replay creates under one parent (``paths``, sorted, each existing in ``replayed``, the
        parent's resolved overlay; ``parent``: its timeline), each after the ones it creates under it,
        depth first with an explicit stack; returns how many there are. A node that nothing but its
        creates and deletes names is final in its parent's overlay; any other is resolved once, O(its
        ops) (``Replay.resolve``)."""
        replay = self.replay
        # Frames [path, timeline, state after replay, children still to visit, children yielded,
        # overlay]; the bottom one stands for the parent, which the caller yields.
        stack: list[list[Any]] = [[None, parent, None, iter(paths), 0, replayed]]
        while True:
            top = stack[-1]
            child = next(top[3], None)
            if child is not None:
                if replay.settled_by_parent(child):
                    state = top[5].nodes[child]
                    yield self._node(child, state[DATA], state, 0)
                    top[4] += 1
                    continue
                overlay = replay.resolve(child, top[1], {}, None)
                state = overlay.nodes.get(child)
                if state is None:
                    continue
                kids = [k for k in sorted(replay.created.get(child, ())) if overlay.nodes.get(k) is not None]
                timeline = replay.timeline(child, None, top[1]) if kids else ALWAYS
                stack.append([child, timeline, state, iter(kids), 0, overlay])
                continue
            stack.pop()
            if not stack:
                return int(top[4])
            yield self._node(top[0], top[2][DATA], top[2], top[4])
            stack[-1][4] += 1

    def _node(self, path: str, data: bytes | None, fields: list[Any], children: int) -> RawNode:
        if self.check:
            self.digest += content_digest(path, data, fields)
        self.yielded += 1
        return RawNode(path, client_stat(fields, data, children), data)


class FileSource:
    """A read-only tree from ZooKeeper's files; the same methods as ``ReadOnlySession``."""

    def __init__(
        self,
        paths: list[str] | tuple[str, ...],
        *,
        at_zxid: int | None = None,
        at_time_ms: int | None = None,
        best_effort: bool = False,
        verify_digest: bool = False,
    ):
        if at_zxid is not None and at_time_ms is not None:
            raise UsageError("--at and --at-zxid each choose the state read: give one of them")
        self.paths = list(paths)
        self.verify_digest = verify_digest  # a whole-tree read checks itself against the server's digest
        self.at_zxid = at_zxid
        self.at_time_ms = at_time_ms  # resolved to ``at_zxid`` (the last txn at or before it) on connect
        self.best_effort = best_effort
        self.target = "files:" + ",".join(self.paths)
        self.plan: FilePlan | None = None
        self._replay: Replay | None = None
        self._checked: SnapshotInfo | None = None  # what the check of the chosen snapshot found
        self._snapshots: list[str] = []
        self._logs: list[str] = []
        # Every node after replay, in file order, and each node's children: filled by the reads that are
        # not one whole-tree walk, from one pass over the snapshot that is paused as soon as the subtree
        # asked for is complete and resumed when a later read needs more, so that a command's many small
        # reads (get, children, subtrees) cost one pass at most, and less when they are early in the file.
        self._index: dict[str, RawNode] | None = None
        self._children: dict[str, list[str]] = {}
        self._pass: Generator[RawNode, None, None] | None = None  # paused; None before it starts and at its end
        self._indexed_all = False

    # lifecycle ----------------------------------------------------------------------------------------

    def __enter__(self) -> FileSource:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop a paused pass over the snapshot (its file and its reading thread)."""
        if self._pass is not None:
            self._pass.close()
            self._pass = None

    def connect(self) -> None:
        """Choose the files and replay the logs; the tree itself is streamed later, per walk."""
        self._snapshots, self._logs = data_files(self.paths)
        if not self._snapshots:
            raise FilesError(f"no snapshot file in {', '.join(self.paths)}")
        if self.at_time_ms is not None:
            self.at_zxid = zxid_at_time(self._logs, self.at_time_ms, best_effort=self.best_effort)
        skipped: list[str] = []
        damaged: dict[str, str] = {}  # snapshot → why it cannot be used whole
        in_range = []
        for candidate in self._snapshots:
            zxid = name_zxid(os.path.basename(candidate), "snapshot") or 0
            if self.at_zxid is not None and zxid > self.at_zxid:
                skipped.append(f"{os.path.basename(candidate)}: newer than {self._asked()}")
                continue
            in_range.append(candidate)
            try:
                with open_file(candidate) as f:  # checked through one handle: one open per candidate
                    why = cheap_check(candidate, f)
                    if why is None:
                        self._prepare(candidate, skipped, partial=False, f=f)
                        self._warn(damaged)
                        return
            except UnusableSnapshotError as exc:  # damaged: ZooKeeper too would load the next older one
                why = str(exc).removeprefix(f"{candidate}: ")
            except OSError as exc:
                why = f"cannot read: {exc.strerror or exc}"
            damaged[candidate] = why
            skipped.append(f"{os.path.basename(candidate)}: {why}")
        if self.best_effort and in_range:  # no whole snapshot: what the newest one holds up to its damage
            self._prepare(in_range[0], skipped, partial=True)  # its damage is one of the plan's problems
            self._warn({path: why for path, why in damaged.items() if path != in_range[0]})
            return
        if len(in_range) == 1:
            raise FilesError(f"{in_range[0]}: {damaged[in_range[0]]}")
        raise FilesError("no usable snapshot: " + "; ".join(skipped))

    def _asked(self) -> str:
        """The option that chose the state read, for messages: ``--at TIME`` resolves to a zxid."""
        if self.at_time_ms is not None:
            return f"--at {_iso_ms(self.at_time_ms)} (zxid {self.at_zxid:#x})"
        return "--at-zxid"

    @staticmethod
    def _warn(damaged: dict[str, str]) -> None:
        """Name the newer snapshots passed over, once an older one is in use (when none is, the error
        that ends the command names them all)."""
        for path, why in damaged.items():
            log.warning("skipped snapshot %s: %s", path, why)

    def _prepare(self, snapshot: str, skipped: list[str], *, partial: bool, f: BinaryIO | None = None) -> None:
        """Check ``snapshot`` (through ``f`` when it is open already) and index the logged txns after it;
        ``partial`` accepts a damaged one up to its damage. The tree itself is read later, with replay
        resolved as it streams: once by a whole-tree walk, or once into the index of smaller reads."""
        snap = SnapshotFile(snapshot, best_effort=partial)
        plan = FilePlan(snapshot=snapshot, snapshot_zxid=snap.info.zxid, skipped=list(skipped))
        try:
            snap.verify(f)  # every seal, as ZooKeeper checks a snapshot before it loads it
        except FilesError as exc:
            raise UnusableSnapshotError(str(exc)) from None
        info = snap.info
        txns, plan.logs = self._txns_after(info.zxid, plan)  # read once the snapshot is known to be usable
        if info.damage is not None:  # only with best effort: read it up to its damage the way the walk
            # will, so that the walk can tell that damage from a change underneath
            scan = SnapshotFile(snapshot, best_effort=True)
            for _ in scan.tree():
                pass
            info.damage, info.max_zxid = scan.info.damage, scan.info.max_zxid
        if info.damage:
            plan.problem(info.damage)
        # Changes made after the dump started are in it: a zxid above the name's, in the digest or (known
        # once a whole-tree read has seen it) in the content.
        plan.fuzzy = True if max(info.max_zxid, (info.digest or (0, 0, 0))[0]) > info.zxid else None
        replay = Replay(txns, info.sessions)
        plan.zxid = replay.last_zxid if replay.last_zxid is not None else info.zxid
        plan.time_ms = replay.last_time_ms
        plan.txns_applied = replay.applied
        self.plan, self._replay = plan, replay
        self._checked = info

    def _txns_after(self, zxid: int, plan: FilePlan) -> tuple[list[Txn], list[str]]:
        """Every logged txn after ``zxid`` (up to ``--at-zxid``), from the last log that starts at or
        before it onwards (ZooKeeper's ``getLogFiles``); a gap in the zxids is an error."""
        logs = self._logs
        start = 0
        for i, path in enumerate(logs):
            if (name_zxid(os.path.basename(path), "log") or 0) <= zxid:
                start = i
        used = logs[start:]
        txns: list[Txn] = []
        last = zxid
        for path in used:
            reader = LogFile(path, best_effort=self.best_effort)
            for txn in reader.txns(after=last):
                if self.at_zxid is not None and txn.zxid > self.at_zxid:
                    break
                if txn.zxid >> 32 == last >> 32 and txn.zxid != last + 1:
                    message = f"{path}: txns {last + 1:#x}..{txn.zxid - 1:#x} are missing from the logs"
                    if not self.best_effort:
                        raise FilesError(message)
                    plan.problem(message)
                    return txns, used
                txns.append(txn)
                last = txn.zxid
            if reader.damage:
                plan.problem(reader.damage)
                return txns, used
        if self.at_zxid is not None and last < self.at_zxid:
            message = f"the logs end at zxid {last:#x}, before --at-zxid {self.at_zxid:#x}"
            if not self.best_effort:
                raise FilesError(message)
            plan.problem(message)
        return txns, used

    def as_of(self) -> float:
        """When the state read was current: the last replayed txn, else when the snapshot was written."""
        plan, _ = self._require()
        return plan.time_ms / 1000 if plan.time_ms is not None else os.path.getmtime(plan.snapshot)

    # reads --------------------------------------------------------------------------------------------

    def _require(self) -> tuple[FilePlan, Replay]:
        if self.plan is None or self._replay is None:
            raise FilesError("the files have not been opened")
        return self.plan, self._replay

    def nodes(
        self, path: str = "/", max_depth: int | None = None, *, stats: WalkStats | None = None, must_exist: bool = False
    ) -> Iterator[RawNode]:
        """Every node at or under ``path`` (to ``max_depth``) after replay, each after its subtree.

        One pass over the snapshot (``SnapshotFile.tree``), with the nodes replay touches resolved as it
        streams (``_ReplayHooks``). A read of less than the whole tree stops once its top node, which
        comes after its subtree, has been yielded.
        ``stats`` counts what is yielded (a whole-tree read counts once it has finished: the tree returns
        its count, which saves a Python step per znode); ``must_exist`` raises ``NotFoundError`` when that
        is nothing.
        """
        plan, replay = self._require()
        if not path.startswith("/"):
            raise UsageError(f"znode paths start with '/': {path!r}")
        start = path.rstrip("/") or "/"
        whole = start == "/" and max_depth is None
        if not whole or self._index is not None:
            yield from self._indexed(start, max_depth, stats=stats, must_exist=must_exist)
            return
        check = whole and self.verify_digest
        snap = SnapshotFile(plan.snapshot, checked=self._checked)
        hooks = _ReplayHooks(replay, digest=check)
        yielded = 0
        try:
            if whole:
                yielded, digest = yield from snap.tree(hooks, digest=check)
                yielded += hooks.yielded
                if not plan.fuzzy:
                    plan.fuzzy = snap.info.max_zxid > snap.info.zxid
                if check:
                    self._check_digest(digest + hooks.digest, snap)
            else:
                scope = "/" if start == "/" else start + "/"  # every path under start begins with it
                deepest = None if max_depth is None else (0 if start == "/" else start.count("/")) + max_depth
                tree = snap.tree(hooks)
                for raw in tree:
                    node_path = raw.path
                    if node_path != start and not node_path.startswith(scope):
                        continue
                    if deepest is None or (0 if node_path == "/" else node_path.count("/")) <= deepest:
                        yielded += 1
                        yield raw
                    if node_path == start:  # the top node comes after its subtree: the read is complete
                        tree.close()
                        break
        finally:
            if stats is not None:
                stats.znodes += yielded
        if must_exist and not yielded:
            raise self._not_found(path)

    def _not_found(self, path: str) -> NotFoundError | FilesError:
        """No znode at ``path``; when a best-effort read stopped at damage, that damage is the answer
        (the node may be beyond it: "not found" would send the reader looking elsewhere)."""
        if self.plan is not None and self.plan.problems:
            return FilesError(f"no znode at {path} in what precedes the damage: {self.plan.problems[0]}")
        return NotFoundError(f"no znode at {path}")

    def _indexed(
        self, start: str, max_depth: int | None, *, stats: WalkStats | None, must_exist: bool
    ) -> Iterator[RawNode]:
        """A subtree from the index, each node after its subtree, as the streaming read yields them."""
        index = self._index_through(start)
        top = index.get(start)
        if top is None:
            if must_exist:
                raise self._not_found(start)
            return
        yielded = 0
        children = self._children
        # Post-order, iteratively: a stack of (path, depth, expanded)
        pending: list[tuple[str, int, bool]] = [(start, 0, False)]
        try:
            while pending:
                node_path, depth, expanded = pending.pop()
                if expanded or (max_depth is not None and depth >= max_depth):
                    yielded += 1
                    yield index[node_path]
                    continue
                pending.append((node_path, depth, True))
                prefix = node_path if node_path == "/" else node_path + "/"
                for name in reversed(children.get(node_path, ())):
                    pending.append((prefix + name, depth + 1, False))
        finally:
            if stats is not None:
                stats.znodes += yielded

    def _index_through(self, start: str) -> dict[str, RawNode]:
        """The index, holding at least the whole subtree of ``start`` if it exists: the pass goes on
        until ``start`` itself has been read (a node comes after its subtree) or the file ends."""
        if self._index is None:
            self._index = {}
            self._pass = self._stream_whole()
        index, children = self._index, self._children
        if start in index or self._pass is None:
            return index
        for raw in self._pass:
            path = raw.path
            index[path] = raw
            if path != "/":
                parent, _, name = path.rpartition("/")
                children.setdefault(parent or "/", []).append(name)
            kids = children.get(path)
            if kids is not None:
                kids.sort()  # the node comes after its subtree: its children are all listed now
            if path == start:
                return index
        self._pass = None
        self._indexed_all = True
        return index

    def _stream_whole(self) -> Generator[RawNode, None, None]:
        """One pass over the snapshot with replay resolved as it streams (no digest check: that is the
        snapshot command's whole-tree walk)."""
        plan, replay = self._require()
        snap = SnapshotFile(plan.snapshot, checked=self._checked)
        hooks = _ReplayHooks(replay, digest=False)
        yield from snap.tree(hooks, digest=False)
        if not plan.fuzzy:
            plan.fuzzy = snap.info.max_zxid > snap.info.zxid

    def _check_digest(self, digest: int, snap: SnapshotFile) -> None:
        """Compare the yielded tree's digest with the one the server logged for the state reached."""
        plan, replay = self._require()
        digest = (digest + (1 << 63)) % (1 << 64) - (1 << 63)  # as Java's signed long
        expected = replay.last_digest
        if replay.applied == 0 and snap.info.digest is not None and snap.info.digest[0] == snap.info.zxid:
            expected = snap.info.digest[2]
        if expected is None or plan.problems:
            return  # pre-3.6 files, digests off, or a best-effort read that is incomplete anyway
        plan.digest_verified = digest == expected
        if not plan.digest_verified:
            message = (
                f"the tree read from {os.path.basename(plan.snapshot)} + {len(plan.logs)} logs has digest "
                f"{digest:#x}, the server logged {expected:#x} at zxid {plan.zxid:#x}"
            )
            plan.problem(message)

    def walk(
        self, path: str = "/", *, max_depth: int | None = None, stats: WalkStats | None = None, **_: Any
    ) -> Iterator[RawNode]:
        """``ReadOnlySession.walk`` over the files: the same values, in file order (children unsorted)."""
        return self.nodes(path, max_depth, stats=stats, must_exist=True)

    @property
    def cheap_listings(self) -> bool:
        """A listing is served from the index, which one whole pass builds: cheap once it is complete."""
        return self._indexed_all

    def describe(self) -> dict[str, Any]:
        """The files read and what they gave, for a snapshot's manifest."""
        plan, _ = self._require()
        return {"zk": "files", "zookeeper_files": plan.describe()}

    def default_cluster_name(self) -> str:
        """This host: the nightly job of a files source runs on the ZooKeeper server that wrote them."""
        import socket

        return socket.gethostname()

    def problems(self) -> list[str]:
        """What a best-effort read left out (a damaged file, txns missing), one line each; none before the
        files are opened."""
        return list(self.plan.problems) if self.plan is not None else []

    def get(self, path: str) -> RawNode:
        for raw in self.nodes(path, 0):
            return raw
        raise NotFoundError(f"no znode at {path}")

    def get_children(self, path: str) -> list[str]:
        start = path.rstrip("/") or "/"
        children, found = [], False
        for raw in self.nodes(start, 1):  # one pass: the node itself comes last, after its children
            if raw.path == start:
                found = True
            else:
                children.append(raw.path.rsplit("/", 1)[1])
        if not found:
            raise NotFoundError(f"no znode at {path}")
        return sorted(children)

    def exists(self, path: str) -> bool:
        return any(True for _ in self.nodes(path, 0))
