"""``--from-kraft``: a KRaft controller's or broker's ``__cluster_metadata-0`` folder as a tree source.

Opening it reads what Kafka itself reads when it loads its metadata (``KafkaRaftClient``, ``MetadataLoader``):
the newest snapshot (``<end offset>-<epoch>.checkpoint``) at or before the offset asked for whose batches
all check (CRC32C) and that ends with its footer, then every record of the log segments (``*.log``) after
it, in offset order; the raft leader from the ``LeaderChangeMessage`` control records (the epoch of each
batch is its ``partitionLeaderEpoch``) and, at the end of the log, from ``quorum-state``. A damaged newer
snapshot is passed over for an older one, or for the log from its start. ``--at-offset N`` stops after
the record at offset N, ``--at TIME`` after the last record appended at or before TIME. The replayed
image (``image.Image``) is then served as the znodes ZooKeeper-mode Kafka kept (``image.Tree``) under the
root ``kraft:``: ``kraft:/brokers/ids/1``, ``kraft:/brokers/topics/orders/partitions/0/state``.

Damage is handled as for ZooKeeper's files (``sources.files``): a batch whose CRC32C fails, or whose
header is not a batch, in a segment ends the read with ``FilesError`` (exit 7) naming the file and offset,
or with ``best_effort`` keeps what precedes it and names it in ``problems()``; a batch torn at the end of
the last segment (the controller was writing it) is the log's end, said in ``describe()``. A record of a
type or version this reader does not know, or whose bytes are not its schema, is skipped and named in
``problems()`` (``--strict``: exit 5); the read goes on.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...errors import FilesError, NotFoundError, UsageError
from ...layout import Roots
from ..base import RawNode, WalkStats
from .batches import Batch, BatchProblem, read_batches
from .image import Image, Leader, Replayer, Tree
from .messages import MessageError, Schemas

log = logging.getLogger(__name__)

ROOT = "kraft:"  # the Kafka root a KRaft folder's records are read under: no ZooKeeper path looks like it
SEGMENT = re.compile(r"^(\d{20})\.log$")
SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# ControlRecordType (clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java)
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LeaderChangeMessage",
    3: "SnapshotHeaderRecord",
    4: "SnapshotFooterRecord",
    5: "KRaftVersionRecord",
    6: "VotersRecord",
}

_SCHEMAS: list[Schemas] = []


def schemas() -> Schemas:
    """The packaged schemas, read once per process."""
    if not _SCHEMAS:
        _SCHEMAS.append(Schemas.packaged())
    return _SCHEMAS[0]


@dataclass
class KraftPlan:
    """What a read used and what it gave: recorded in snapshot manifests as the source."""

    folder: str
    snapshot: str | None = None
    snapshot_end_offset: int | None = None
    segments: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file: why", newest first
    offset: int = -1  # the last record applied
    time_ms: int | None = None
    records_read: int = 0
    log_end_offset: int | None = None  # the last offset the segments hold (whatever was asked)
    torn_tail: str | None = None  # a batch torn at the log's end: its end, not damage
    open_transaction: bool = False
    records_by_type: dict[str, int] = field(default_factory=dict)  # "Name vN" -> count
    problems: list[str] = field(default_factory=list)

    def problem(self, message: str) -> None:
        log.info("%s", message)
        self.problems.append(message)

    def describe(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "files": {"snapshot": self.snapshot, "segments": self.segments, "skipped": self.skipped},
            "snapshot_end_offset": self.snapshot_end_offset,
            "offset_reached": self.offset,
            "log_end_offset": self.log_end_offset,
            "records_read": self.records_read,
            "records_by_type": dict(sorted(self.records_by_type.items())),
            "torn_tail": self.torn_tail,
            "open_transaction": self.open_transaction,
            "problems": self.problems,
        }


def folder_files(folder: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, str]]]:
    """The snapshots ((end offset, epoch, path), newest first) and segments ((base offset, path), in
    order) of a metadata folder; ``*.deleted``, ``*.part`` and ``*.cleaned`` files are not Kafka's data."""
    if not os.path.isdir(folder):
        if not os.path.exists(folder):
            raise FilesError(f"{folder}: no such file or directory")
        raise UsageError(f"{folder}: not a folder (give the __cluster_metadata-0 folder of a controller or broker)")
    snapshots, segments = [], []
    for name in os.listdir(folder):
        m = SNAPSHOT.match(name)
        if m:
            snapshots.append((int(m[1]), int(m[2]), os.path.join(folder, name)))
            continue
        m = SEGMENT.match(name)
        if m:
            segments.append((int(m[1]), os.path.join(folder, name)))
    snapshots.sort(reverse=True)
    segments.sort()
    return snapshots, segments


def metadata_folder(path: str) -> str:
    """``path`` itself when it holds metadata segments or snapshots, else its ``__cluster_metadata-0``
    (a controller's ``metadata.log.dir``)."""
    inner = os.path.join(path, "__cluster_metadata-0")
    if (
        os.path.isdir(path)
        and not any(SEGMENT.match(n) or SNAPSHOT.match(n) for n in os.listdir(path))
        and os.path.isdir(inner)
    ):
        return inner
    return path


def read_properties(path: str) -> dict[str, str]:
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith(("#", "!")) and "=" in line:
                    key, _, value = line.partition("=")
                    out[key.strip()] = value.strip()
    except OSError:
        pass
    return out


class KraftSource:
    """A read-only tree from a KRaft metadata folder; the methods of ``sources.base.Source``."""

    def __init__(
        self,
        folder: str,
        *,
        at_offset: int | None = None,
        at_time_ms: int | None = None,
        best_effort: bool = False,
        use_snapshots: bool = True,
    ) -> None:
        if at_offset is not None and at_time_ms is not None:
            raise UsageError("--at and --at-offset each choose the state read: give one of them")
        if at_offset is not None and at_offset < 0:
            raise UsageError(f"--at-offset {at_offset}: offsets start at 0")
        self.folder = metadata_folder(folder)
        self.at_offset = at_offset
        self.at_time_ms = at_time_ms
        self.best_effort = best_effort
        self.use_snapshots = use_snapshots  # False: the log alone, from its start (to check one against the other)
        self.target = f"kraft:{self.folder}"
        self.plan: KraftPlan | None = None
        self.image: Image | None = None
        self.tree: Tree | None = None
        self.cluster_id: str | None = None
        self.quorum: dict[str, Any] = {}
        self.voters: list[Any] = []

    # lifecycle --------------------------------------------------------------------------------------

    def connect(self) -> None:
        if self.tree is not None:
            return
        snapshots, segments = folder_files(self.folder)
        if not snapshots and not segments:
            raise FilesError(f"{self.folder}: no metadata log segment (*.log) or snapshot (*.checkpoint)")
        plan = KraftPlan(folder=self.folder)
        self.cluster_id = self.read_cluster_id()
        self.quorum = self._quorum_state()
        if self.at_time_ms is not None:
            self.at_offset = self._offset_at_time(segments, self.at_time_ms)
        target = self.at_offset
        replayer = Replayer()
        start = self.load_snapshot(snapshots if self.use_snapshots else [], segments, target, replayer, plan)
        self._replay_log(segments, start, target, replayer, plan)
        image = replayer.image
        if replayer.in_transaction:
            plan.open_transaction = True  # its records are not applied, as Kafka applies none until it ends
        if replayer.unknown:
            for name, count in sorted(replayer.unknown.items()):
                plan.problem(f"{self.folder}: {count} {name} records: no rule replays them into the image")
        self._settle_leader(image, target, plan)
        plan.offset, plan.time_ms = image.offset, image.time_ms
        self.plan, self.image = plan, image
        self.tree = Tree(image, self.cluster_id)

    def close(self) -> None:
        pass

    def read_cluster_id(self) -> str | None:
        """``cluster.id`` of the ``meta.properties`` beside the folder (its log dir's), or in it."""
        for candidate in (os.path.join(os.path.dirname(self.folder), "meta.properties"),
                          os.path.join(self.folder, "meta.properties")):  # fmt: skip
            found = read_properties(candidate).get("cluster.id")
            if found:
                return found
        return None

    def _quorum_state(self) -> dict[str, Any]:
        """``quorum-state`` (raft's ``QuorumStateData``, JSON): the leader and epoch this node last knew."""
        try:
            with open(os.path.join(self.folder, "quorum-state"), encoding="utf-8") as f:
                found = json.load(f)
            return found if isinstance(found, dict) else {}
        except (OSError, ValueError):
            return {}

    # reading ------------------------------------------------------------------------------------------

    def _stop_or_note(self, problem: BatchProblem, plan: KraftPlan, last_file: bool) -> None:
        """A segment's problem: a torn last batch of the last segment is the log's end; any other damage
        ends the read (exit 7) or, with best effort, is named and the read keeps what precedes it."""
        if problem.kind == "torn_batch" and last_file:
            plan.torn_tail = problem.line()
            log.info("the log ends in a torn batch (the controller was writing it): %s", problem.line())
            return
        if problem.stops and not self.best_effort:
            raise FilesError(problem.line())
        plan.problem(problem.line())

    def _offset_at_time(self, segments: list[tuple[int, str]], time_ms: int) -> int:
        """The offset of the last record appended at or before ``time_ms`` (its batch's create time)."""
        last: int | None = None
        first: int | None = None
        for _, path in segments:
            for item in read_batches(path, wanted=lambda _o, _c: True):
                if isinstance(item, BatchProblem):
                    break
                for record in item.records:
                    if first is None:
                        first = record.timestamp_ms
                    if record.timestamp_ms > time_ms:
                        if last is None:
                            raise FilesError(
                                f"the log starts at {_iso_ms(first)}, after --at {_iso_ms(time_ms)}: "
                                "no record is that early"
                            )
                        return last
                    last = record.offset
        if last is None:
            raise FilesError(f"{self.folder}: no record to place --at by")
        return last

    def load_snapshot(
        self,
        snapshots: list[tuple[int, int, str]],
        segments: list[tuple[int, str]],
        target: int | None,
        replayer: Replayer,
        plan: KraftPlan,
    ) -> int:
        """Load the newest usable snapshot at or before ``target`` into ``replayer``; the first log offset
        still to replay (0 when none is used: the log from its start)."""
        log_start = segments[0][0] if segments else None
        for end, epoch, path in snapshots:
            name = os.path.basename(path)
            if target is not None and end > target + 1:
                plan.skipped.append(f"{name}: newer than --at-offset {target}")
                continue
            if end == 0 and log_start == 0:
                continue  # the bootstrap snapshot: its records open the log too
            try:
                loaded = self._read_snapshot(path, end, epoch)
            except FilesError as exc:
                why = str(exc).removeprefix(f"{path}: ")
                plan.skipped.append(f"{name}: {why}")
                log.warning("skipped snapshot %s: %s", path, why)
                continue
            for item in loaded:
                replayer.apply(*item)
            replayer.image.epoch = max(replayer.image.epoch, epoch)
            plan.snapshot, plan.snapshot_end_offset = path, end
            plan.records_read += len(loaded)
            return end
        if log_start is not None and log_start > 0:
            message = f"{self.folder}: no usable snapshot, and the log starts at offset {log_start}, not 0"
            if not self.best_effort:
                raise FilesError(message + ("; " + "; ".join(plan.skipped) if plan.skipped else ""))
            plan.problem(message)
            return log_start
        return 0

    def _read_snapshot(self, path: str, end: int, epoch: int) -> list[tuple[str, int, dict[str, Any], int, int, int]]:
        """Every metadata record of a snapshot, checked whole first: each batch's CRC32C, a header first and
        a footer last (``RecordsSnapshotReader``); any record it cannot read makes it unusable."""
        out = []
        header = footer = False
        kinds = schemas()
        time_ms = 0
        for item in read_batches(path):
            if isinstance(item, BatchProblem):
                raise FilesError(item.line())
            if footer:
                raise FilesError(f"{path}: batches after the snapshot's footer")
            for record in item.records:
                if item.control:
                    name = control_name(record.key)
                    if name == "SnapshotHeaderRecord":
                        header = True
                        _, value = kinds.read_control(name, record.value or b"", 0, len(record.value or b""))
                        time_ms = value.get("LastContainedLogTimestamp") or 0
                    elif name == "SnapshotFooterRecord":
                        footer = True
                    elif name == "VotersRecord":
                        self.voters = _voters(kinds, record.value)
                    continue
                if not header:
                    raise FilesError(f"{path}: records before the snapshot's header")
                try:
                    name, version, value = kinds.read_metadata(record.value or b"", 0, len(record.value or b""))
                except MessageError as exc:
                    raise FilesError(f"{path}: record {record.offset}: {exc.kind}: {exc}") from None
                out.append((name, version, value, end - 1, time_ms, epoch))
        if not header or not footer:
            raise FilesError(f"{path}: no snapshot {'header' if not header else 'footer'}: incomplete")
        return out

    def _replay_log(
        self, segments: list[tuple[int, str]], start: int, target: int | None, replayer: Replayer, plan: KraftPlan
    ) -> None:
        kinds = schemas()
        counts = plan.records_by_type
        leaders: list[tuple[int, int, int, int]] = []  # (offset, leader, epoch, time) of each LeaderChangeMessage

        def wanted(last_offset: int, control: bool) -> bool:
            return control or last_offset >= start

        for index, (base, path) in enumerate(segments):
            last_file = index == len(segments) - 1
            if target is not None and base > target:
                break
            plan.segments.append(path)
            for item in read_batches(path, wanted=wanted):
                if isinstance(item, BatchProblem):
                    self._stop_or_note(item, plan, last_file)
                    if item.stops:
                        self._note_end(plan, target)
                        self._leaders = leaders
                        return
                    continue
                plan.log_end_offset = item.last_offset
                self._batch(item, start, target, replayer, plan, kinds, counts, leaders)
        self._note_end(plan, target)
        self._leaders = leaders

    def _note_end(self, plan: KraftPlan, target: int | None) -> None:
        end = plan.log_end_offset
        if target is not None and (end is None or end < target):
            message = f"{self.folder}: the log ends at offset {end}, before --at-offset {target}"
            if not self.best_effort and not plan.problems:
                raise FilesError(message)
            plan.problem(message)

    def _batch(
        self,
        batch: Batch,
        start: int,
        target: int | None,
        replayer: Replayer,
        plan: KraftPlan,
        kinds: Schemas,
        counts: dict[str, int],
        leaders: list[tuple[int, int, int, int]],
    ) -> None:
        for record in batch.records:
            if target is not None and record.offset > target:
                return
            value = record.value or b""
            if batch.control:
                name = control_name(record.key)
                if name == "LeaderChangeMessage":
                    try:
                        _, message = kinds.read_control(name, value, 0, len(value))
                    except MessageError as exc:
                        plan.problem(f"{batch_where(plan, record.offset)}: LeaderChangeMessage: {exc.kind}: {exc}")
                        continue
                    leaders.append((record.offset, message["LeaderId"], batch.leader_epoch, record.timestamp_ms))
                elif name == "VotersRecord":
                    self.voters = _voters(kinds, value)
                continue
            if record.offset < start:
                continue
            try:
                name, version, message = kinds.read_metadata(value, 0, len(value))
            except MessageError as exc:
                plan.problem(f"{batch_where(plan, record.offset)}: {exc.kind}: {exc}")
                continue
            key = f"{name} v{version}"
            counts[key] = counts.get(key, 0) + 1
            plan.records_read += 1
            replayer.apply(name, version, message, record.offset, record.timestamp_ms, batch.leader_epoch)

    def _settle_leader(self, image: Image, target: int | None, plan: KraftPlan) -> None:
        """The active controller as of the state read: the last ``LeaderChangeMessage`` at or before it;
        at the log's end, ``quorum-state`` when it names a later epoch (an election whose message this
        node has not got)."""
        leaders = getattr(self, "_leaders", [])
        chosen = next((item for item in reversed(leaders) if target is None or item[0] <= target), None)
        if chosen is not None:
            offset, leader, epoch, time_ms = chosen
            image.leader = Leader(leader, epoch, time_ms, offset)
            image.epoch = max(image.epoch, epoch)
        quorum_epoch = self.quorum.get("leaderEpoch")
        quorum_leader = self.quorum.get("leaderId")
        if (
            target is None
            and isinstance(quorum_epoch, int)
            and isinstance(quorum_leader, int)
            and quorum_epoch > (image.leader.epoch if image.leader is not None else -1)
        ):
            image.leader = Leader(quorum_leader, quorum_epoch, None, None)
            image.epoch = max(image.epoch, quorum_epoch)

    # the contract -------------------------------------------------------------------------------------

    @property
    def cheap_listings(self) -> bool:
        return True  # the image is in memory

    @property
    def declared_roots(self) -> Roots:
        """The one root a KRaft folder holds: no discovery (its tree has no ZooKeeper path to search)."""
        return Roots(storm=(), kafka=(ROOT,))

    def _require(self) -> Tree:
        if self.tree is None:
            self.connect()
        assert self.tree is not None
        return self.tree

    @staticmethod
    def _relative(path: str) -> str:
        """``kraft:/a/b`` → ``a/b``; ``kraft:`` → ``""``; NotFoundError for a path outside the root."""
        if path == ROOT or path == ROOT + "/":
            return ""
        if path.startswith(ROOT + "/"):
            return path[len(ROOT) + 1 :].rstrip("/")
        raise NotFoundError(f"no znode at {path}: a KRaft folder's tree is under {ROOT} ({ROOT}/brokers/ids …)")

    def _raw(self, rel: str, node: Any) -> RawNode:
        stat, data = node
        return RawNode(f"{ROOT}/{rel}" if rel else ROOT, stat, data)

    def get(self, path: str) -> RawNode:
        tree = self._require()
        rel = self._relative(path)
        node = tree.node(rel)
        if node is None:
            raise NotFoundError(f"no znode at {path}")
        return self._raw(rel, node)

    def get_children(self, path: str) -> list[str]:
        tree = self._require()
        names = tree.children(self._relative(path))
        if names is None:
            raise NotFoundError(f"no znode at {path}")
        return names

    def exists(self, path: str) -> bool:
        try:
            return self._require().node(self._relative(path)) is not None
        except NotFoundError:
            return False

    def walk(
        self, path: str = "/", *, max_depth: int | None = None, stats: WalkStats | None = None, **_: Any
    ) -> Iterator[RawNode]:
        """Every node at or under ``path`` (``/`` stands for the whole tree, the root ``kraft:``), each
        after its subtree, children in name order; NotFoundError when there is no such node."""
        tree = self._require()
        rel = "" if path in ("/", "") else self._relative(path)
        if tree.node(rel) is None:
            raise NotFoundError(f"no znode at {path}")
        count = 0
        try:
            for node_rel, node in tree.walk(rel, max_depth):
                count += 1
                yield self._raw(node_rel, node)
        finally:
            if stats is not None:
                stats.znodes += count

    def as_of(self) -> float:
        """When the state read was current: the append time of the last record applied."""
        self._require()
        assert self.image is not None
        if self.image.time_ms:
            return self.image.time_ms / 1000
        return os.path.getmtime(self.folder)

    def describe(self) -> dict[str, Any]:
        self._require()
        assert self.plan is not None and self.image is not None
        leader = self.image.leader
        return {
            "zk": "kraft",
            "kraft": {
                **self.plan.describe(),
                "cluster_id": self.cluster_id,
                "leader": None if leader is None else {"node_id": leader.node_id, "epoch": leader.epoch},
                "quorum_state": self.quorum,
                "metadata_version_level": self.image.features.get("metadata.version"),
                "migration_state": self.image.migration_state,
                "controllers": sorted(self.image.controllers),
            },
        }

    def records_after(self, offset: int, until: int | None = None) -> dict[str, int]:
        """Record type → how many metadata records the log holds after ``offset`` (up to ``until``,
        inclusive: the end of what was read): a migration's ``/migration`` names the last offset written to
        ZooKeeper, and what comes after it is not there yet. Read from the segments, headers first: only the
        batches past ``offset`` are decoded."""
        kinds = schemas()
        counts: dict[str, int] = {}
        for _, path in folder_files(self.folder)[1]:
            for item in read_batches(path, wanted=lambda last, control: not control and last > offset):
                if isinstance(item, BatchProblem):
                    if item.stops:
                        break
                    continue
                for record in item.records:
                    if item.control or record.offset <= offset or (until is not None and record.offset > until):
                        continue
                    try:
                        name, _, _ = kinds.read_metadata(record.value or b"", 0, len(record.value or b""))
                    except MessageError:
                        name = "unreadable"
                    counts[name] = counts.get(name, 0) + 1
        return counts

    def default_cluster_name(self) -> str:
        """This host: a nightly job of a KRaft folder runs on the controller that keeps it."""
        return socket.gethostname()

    def problems(self) -> list[str]:
        return list(self.plan.problems) if self.plan is not None else []


def batch_where(plan: KraftPlan, offset: int) -> str:
    return f"{plan.segments[-1] if plan.segments else plan.folder}: offset {offset}"


def control_name(key: bytes | None) -> str | None:
    """The control record type its key names (``ControlRecordType.parse``: int16 version, int16 type)."""
    if key is None or len(key) < 4:
        return None
    kind = int.from_bytes(key[2:4], "big", signed=True)
    return CONTROL_TYPES.get(kind)


def _voters(kinds: Schemas, value: bytes | None) -> list[Any]:
    try:
        _, message = kinds.read_control("VotersRecord", value or b"", 0, len(value or b""))
    except MessageError:
        return []
    return [v.get("VoterId") for v in message.get("Voters", [])]


def _iso_ms(time_ms: int | None) -> str:
    from datetime import UTC, datetime, timedelta

    if time_ms is None:
        return "?"
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=time_ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
