"""What changed in a Kafka cluster, and when, from its KRaft metadata log (``changes --from-kraft DIR``):
the same change records ZooKeeper's transaction logs give (``records.CHANGE_TYPES``), made by the same
engine and handlers (``kinds.Engine``, ``kafka.py``), so a cluster reads the same way before and after it
moved off ZooKeeper.

How: the log is replayed as ``--from-kraft`` replays it (``sources.kraft``: the newest snapshot the
window can start from, then the records after it), and its image is seen as the znodes ZooKeeper-mode
Kafka kept (``image.Tree``, root ``kraft:``). Each unit of the log (a record batch, or a metadata
transaction, ``BeginTransactionRecord`` .. ``EndTransactionRecord``, across batches: what the controller
made visible at once) is one "txn": the znodes its records touch are read before and after it, and each
that differs is a step (``reader.Step``) for the engine. So a ``PartitionChangeRecord`` that moves a
leader is a write of ``brokers/topics/t/partitions/p/state`` (leader moved, ISR shrunk), a
``RemoveTopicRecord`` the deletion of ``brokers/topics/t``, a ``PartitionChangeRecord`` with adding
replicas the start of a KIP-455 reassignment, as Kafka itself wrote them to ZooKeeper.

The txn's identity, in the fields every change record has: ``zxid`` is the log offset of the unit's last
record (``--from-kraft --at-offset`` that offset shows the state after it), ``time_ms`` its batch's
append time, ``session_id`` the raft epoch of the controller that wrote it (the leader's epoch is the
writer's identity, as a session was in ZooKeeper).

Two znodes mean something else over KRaft, and have their own handlers here (``KRAFT_HANDLERS``):

- ``brokers/ids/{id}``: in ZooKeeper an ephemeral, there while the broker's session lives. In KRaft the
  registration stays when the broker stops; what ends is its lease: the controller fences it
  (``BrokerHeartbeatManager``: no heartbeat within ``broker.session.timeout.ms``, or a clean shutdown's
  end). So a broker is registered, as the ZooKeeper logs say it, while it is unfenced: unfenced is
  ``KafkaBrokerRegistered`` (``session_id``: the broker epoch, the registration's offset), fenced is
  ``KafkaBrokerGone`` (``how``: ``fenced``, ``controlled_shutdown`` when it was in controlled shutdown
  first, ``unregistered``, ``registered_again`` when a new registration replaced it). A new registration,
  which Kafka makes fenced (every broker's start), is ``KafkaBrokerRegisteredFenced``: fenced at
  registration, where ``KafkaBrokerGone`` is fenced after serving. ``InControlledShutdown`` turning 1
  (``BrokerRegistrationChangeRecord`` v1+) is ``KafkaBrokerControlledShutdown``, the shutdown's start.
- ``controller``: ZooKeeper deletes and creates it at each election; KRaft's raft leader changes by a
  ``LeaderChangeMessage`` control record: a new leader or epoch is ``KafkaControllerElected``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..errors import FilesError
from ..records import (
    KafkaBroker,
    KafkaBrokerControlledShutdown,
    KafkaBrokerGone,
    KafkaBrokerRegistered,
    KafkaBrokerRegisteredFenced,
    KafkaController,
    KafkaControllerElected,
)
from ..sources.files.txnlog import Txn
from ..sources.kraft.batches import BatchProblem, read_batches
from ..sources.kraft.image import Image, Replayer, Tree
from ..sources.kraft.messages import MessageError
from ..sources.kraft.source import ROOT, KraftPlan, KraftSource, control_name, folder_files, schemas
from .handlers import HANDLERS
from .kinds import Engine, Handler, Place
from .reader import Bound, NodeState, ReadStats, Step, _in_order, time_of

log = logging.getLogger(__name__)

MULTI = 14  # ZooKeeper's multi txn type (ZooDefs.OpCode.multi): a unit is one, whatever it holds


@dataclass
class KraftReadStats(ReadStats):
    """``ReadStats`` of a metadata log: ``logs`` are its segments, ``snapshot`` the checkpoint the state
    before the window came from, the zxids are log offsets (``position`` says so)."""

    position: str = "offset"


@dataclass
class _Record:
    name: str
    version: int
    value: dict[str, Any]
    offset: int
    time_ms: int
    epoch: int


class KraftChangeReader:
    """The units of a metadata folder's log between ``since`` and ``until`` (an offset, a time, or a span
    back from the last record), as ``ChangeReader`` gives ZooKeeper's txns: ``open``, then ``txns``."""

    def __init__(
        self,
        folder: str,
        *,
        since: int | datetime | timedelta | None = None,
        until: int | datetime | timedelta | None = None,
        best_effort: bool = False,
    ) -> None:
        self.source = KraftSource(folder, best_effort=best_effort)
        self.folder = self.source.folder
        self.since = Bound.of(since)
        self.until = Bound.of(until)
        _in_order(self.since, self.until)
        self.best_effort = best_effort
        self.stats = KraftReadStats()
        self.problems: list[str] = []
        self.states: dict[str, NodeState] = {}
        self.names: dict[str, set[str]] = {}  # no root to discover: the one root is kraft:
        self._segments: list[tuple[int, str]] = []
        self._replayer = Replayer()
        self._start = 0
        self._opened = False

    # passes 1 and 2 ------------------------------------------------------------------------------------

    def open(self) -> None:
        """The files, the window's ends placed, and the snapshot the replay starts from loaded."""
        if self._opened:
            return
        self._opened = True
        snapshots, segments = folder_files(self.folder)
        if not segments:
            raise FilesError(f"{self.folder}: no metadata log segment (*.log): a snapshot alone holds no changes")
        self._segments = segments
        self.source.cluster_id = self.source.read_cluster_id()
        if any(b is not None and b.back_ms is not None for b in (self.since, self.until)):
            last_ms = self._last_time(segments)
            if last_ms is None:
                raise FilesError(f"{self.folder}: no record to count a span back from")
            self.since, self.until = _placed(self.since, last_ms), _placed(self.until, last_ms)
            _in_order(self.since, self.until)
        # the newest snapshot at or before the window (the log's first offset when the window has no
        # offset to start at: its records before a time window are replayed, not read as changes)
        target = self.since.zxid - 1 if self.since is not None and self.since.zxid is not None else segments[0][0] - 1
        plan = KraftPlan(folder=self.folder)
        if target < 0:
            self._start = 0
        else:
            self._start = self.source.load_snapshot(snapshots, segments, target, self._replayer, plan)
        self.problems += plan.problems
        self.stats.snapshot = plan.snapshot
        self.stats.logs = [path for _, path in segments]
        self.stats.logs_first_zxid = segments[0][0]

    def _last_time(self, segments: list[tuple[int, str]]) -> int | None:
        """The append time of the log's last batch (a window given as a span back counts from it)."""
        last = None
        for item in read_batches(segments[-1][1], wanted=lambda _o, _c: False):
            if isinstance(item, BatchProblem):
                break
            last = item.max_timestamp_ms
        return last

    # pass 3 --------------------------------------------------------------------------------------------

    def _units(self) -> Iterator[tuple[list[_Record], list[tuple[int, int, int]], int]]:
        """(metadata records, leader changes (leader, epoch, offset), time) of each unit, in log order;
        records before the replay's start are skipped. Damage ends the read (``FilesError``) or, with best
        effort, is a problem and the end of what is read, as for ``--from-kraft``."""
        kinds = schemas()
        held: list[_Record] = []
        leaders: list[tuple[int, int, int]] = []
        in_txn = False
        for index, (_, path) in enumerate(self._segments):
            last_file = index == len(self._segments) - 1
            for item in read_batches(path, wanted=lambda last, control: control or last >= self._start):
                if isinstance(item, BatchProblem):
                    if item.kind == "torn_batch" and last_file:
                        log.info("the log ends in a torn batch: %s", item.line())
                        return
                    if item.stops and not self.best_effort:
                        raise FilesError(item.line())
                    self.problems.append(item.line())
                    if item.stops:
                        return
                    continue
                self.stats.logs_last_zxid = item.last_offset
                self.stats.logs_last_time_ms = item.max_timestamp_ms
                time_ms = item.max_timestamp_ms
                for record in item.records:
                    value = record.value or b""
                    if item.control:
                        if control_name(record.key) == "LeaderChangeMessage":
                            try:
                                _, message = kinds.read_control("LeaderChangeMessage", value, 0, len(value))
                            except MessageError as exc:
                                self.problems.append(f"{path}: offset {record.offset}: LeaderChangeMessage: {exc}")
                                continue
                            leaders.append((message["LeaderId"], item.leader_epoch, record.offset))
                        continue
                    if record.offset < self._start:
                        continue
                    try:
                        name, version, message = kinds.read_metadata(value, 0, len(value))
                    except MessageError as exc:
                        self.problems.append(f"{path}: offset {record.offset}: {exc.kind}: {exc}")
                        continue
                    if name == "BeginTransactionRecord":
                        in_txn = True
                    elif name in ("EndTransactionRecord", "AbortTransactionRecord"):
                        in_txn = False
                    held.append(_Record(name, version, message, record.offset, record.timestamp_ms, item.leader_epoch))
                if not in_txn and (held or leaders):
                    yield held, leaders, time_ms
                    held, leaders = [], []
        if held and not in_txn:
            yield held, leaders, held[-1].time_ms
        elif in_txn:  # still open at the log's end: Kafka applies none of it, nor does this
            self.problems.append(f"{self.folder}: a metadata transaction is still open at the log's end")

    def _in_window(self, offset: int, time_ms: int) -> tuple[bool, bool]:
        """(started, ended): whether a unit ending at ``offset``/``time_ms`` is at or after the window's
        start, and whether it is past its end."""
        since, until = self.since, self.until
        started = since is None or (
            (since.zxid is None or offset >= since.zxid) and (since.time_ms is None or time_ms >= since.time_ms)
        )
        ended = until is not None and (
            (until.zxid is not None and offset > until.zxid) or (until.time_ms is not None and time_ms > until.time_ms)
        )
        return started, ended

    def txns(self, rewrite: Any = None) -> Iterator[tuple[Txn, list[Step], bool]]:
        """Each unit of the window as a txn and its steps (the znodes it changed, before and after);
        units before the window are applied to the image, not handed over."""
        replayer = self._replayer
        image = replayer.image
        started = False
        for records, leaders, time_ms in self._units():
            offset = max([r.offset for r in records] + [o for _, _, o in leaders])
            in_window, ended = self._in_window(offset, time_ms)
            if ended:
                break
            if not in_window:
                self._apply(replayer, records, leaders, time_ms)
                continue
            if not started:
                started = True
                self._context(image)
            touched = self._touched(image, records, leaders)
            before = self._nodes(image, touched)
            self._apply(replayer, records, leaders, time_ms)
            after = self._nodes(image, touched)
            epoch = records[-1].epoch if records else leaders[-1][1]
            txn = Txn(zxid=offset, session=epoch, cxid=0, time_ms=time_ms, type=MULTI, body=None, digest=None)
            steps: list[Step] = []
            fenced: list[Step] = []
            for rel in touched:
                old, new = before.get(rel), after.get(rel)
                if (old is None and new is None) or (old is not None and new is not None and old.data == new.data):
                    continue
                op = "create" if old is None else "delete" if new is None else "set"
                path = f"{ROOT}/{rel}"
                step = Step(txn, op, path, old, new, True, "deleted")
                # a broker fenced or unregistered goes after what its fencing moved (its leaderships, its
                # ISR places), as the controller's writes came after a broker's znode went in ZooKeeper
                gone = rel.startswith("brokers/ids/") and (new is None or b'"fenced":true' in (new.data or b""))
                (fenced if gone else steps).append(step)
                if not rel.startswith("brokers/ids/"):  # registrations: only those of the window's start
                    if new is None:
                        self.states.pop(path, None)
                    else:
                        self.states[path] = new
            steps += fenced
            stats = self.stats
            if stats.first_zxid is None:
                stats.first_zxid, stats.first_time_ms = offset, time_ms
            stats.last_zxid, stats.last_time_ms = offset, time_ms
            stats.txns += 1
            stats.ops += len(steps)
            yield txn, steps, True

    def _apply(
        self, replayer: Replayer, records: list[_Record], leaders: list[tuple[int, int, int]], time_ms: int
    ) -> None:
        for leader, epoch, offset in leaders:
            replayer.leader_change(leader, epoch, offset, time_ms)
        for r in records:
            replayer.apply(r.name, r.version, r.value, r.offset, r.time_ms, r.epoch)

    def _context(self, image: Image) -> None:
        """The states the engine starts from: the brokers registered (unfenced: see the module docstring)
        and the controller, as of the window's start."""
        tree = Tree(image, self.source.cluster_id)
        for broker in image.brokers.values():
            if not broker.fenced:
                rel = f"brokers/ids/{broker.broker_id}"
                self.states[f"{ROOT}/{rel}"] = _state(tree.node(rel), image, rel)
        found = tree.node("controller")
        if found is not None:
            self.states[f"{ROOT}/controller"] = _state(found, image, "controller")

    def _touched(self, image: Image, records: list[_Record], leaders: list[Any]) -> list[str]:
        """The znodes (relative to the root) a unit's records can change, in the order the engine is to
        see them: a topic before its partitions, a registration before what it leads. A topic's or a
        broker's config is its own znode; other configs and ACLs are every such znode (a quota or a SCRAM
        user lands in a shared user node; an ACL in its resource's). Nothing here costs more than the
        records do: a log that creates 10,000 topics must not look at every topic for each."""
        out: dict[str, None] = {}
        names: dict[str, str] = {}  # topics created in this unit: id -> name
        entities: set[str] = set()  # config/topics/… and config/brokers/… znodes the unit touches
        configs = acls = False
        if leaders:
            out["controller"] = None
        for r in records:
            v = r.value
            name = r.name
            if name in ("RegisterBrokerRecord", "UnregisterBrokerRecord", "BrokerRegistrationChangeRecord"):
                out[f"brokers/ids/{v['BrokerId']}"] = None
            elif name in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
                out[f"brokers/ids/{v['Id']}"] = None
            elif name == "TopicRecord":
                names[v["TopicId"]] = v["Name"]
                out[f"brokers/topics/{v['Name']}"] = None
                entities.add(f"config/topics/{v['Name']}")
            elif name == "RemoveTopicRecord":
                topic = image.topics.get(v["TopicId"])
                if topic is not None:
                    out[f"brokers/topics/{topic.name}"] = None
                    for p in sorted(topic.partitions):
                        out[f"brokers/topics/{topic.name}/partitions/{p}/state"] = None
                    entities.add(f"config/topics/{topic.name}")
            elif name in ("PartitionRecord", "PartitionChangeRecord"):
                topic_name = names.get(v["TopicId"])
                if topic_name is None:
                    known = image.topics.get(v["TopicId"])
                    topic_name = known.name if known is not None else None
                if topic_name is not None:
                    out[f"brokers/topics/{topic_name}"] = None
                    out[f"brokers/topics/{topic_name}/partitions/{v['PartitionId']}/state"] = None
            elif name == "ClearElrRecord":
                chosen = [v["TopicName"]] if v["TopicName"] else list(image.names)
                for topic_name in chosen:
                    topic = image.topics.get(image.names.get(topic_name, ""))
                    for p in sorted(topic.partitions) if topic is not None else ():
                        out[f"brokers/topics/{topic_name}/partitions/{p}/state"] = None
            elif name == "ConfigRecord" and v["ResourceType"] in (2, 4):  # ConfigResource.Type TOPIC, BROKER
                kind = "topics" if v["ResourceType"] == 2 else "brokers"
                entity = "<default>" if kind == "brokers" and v["ResourceName"] == "" else v["ResourceName"]
                entities.add(f"config/{kind}/{entity}")
            elif name in ("ConfigRecord", "ClientQuotaRecord", "UserScramCredentialRecord",
                          "RemoveUserScramCredentialRecord"):  # fmt: skip
                configs = True
            elif name in ("AccessControlEntryRecord", "RemoveAccessControlEntryRecord"):
                acls = True
            elif name == "FeatureLevelRecord":
                out["feature"] = None
            elif name == "ProducerIdsRecord":
                out["latest_producer_id_block"] = None
            elif name in ("DelegationTokenRecord", "RemoveDelegationTokenRecord"):
                out[f"delegation_token/tokens/{v['TokenId']}"] = None
        # the partitions of a topic created in this unit come after it, in order
        ordered = sorted(out, key=lambda rel: (rel.startswith("brokers/topics/") and "/partitions/" in rel, 0))
        found = dict.fromkeys(ordered)
        if configs:  # every config znode, those above among them
            found["__configs__"] = None
        else:
            found.update(dict.fromkeys(sorted(entities)))
        if acls:
            found["__acls__"] = None
        return list(found)

    def _nodes(self, image: Image, touched: list[str]) -> dict[str, NodeState]:
        """The states of ``touched`` now (absent: no such znode); the markers ``__configs__`` and
        ``__acls__`` stand for every config and ACL znode, and grow ``touched`` with new ones."""
        tree = Tree(image, self.source.cluster_id)
        out: dict[str, NodeState] = {}
        for rel in list(touched):
            if rel == "__configs__":
                extra = _config_paths(image, self.source.cluster_id)
            elif rel == "__acls__":
                extra = _acl_paths(tree)
            else:
                extra = [rel]
            for one in extra:
                if one not in touched:
                    touched.append(one)
                found = tree.node(one)
                if found is not None and found[1] is not None:
                    out[one] = _state(found, image, one)
        return out


def _placed(bound: Bound | None, last_ms: int) -> Bound | None:
    """A span back from the log's last record as the time it names."""
    if bound is None or bound.back_ms is None:
        return bound
    return Bound(time_ms=last_ms - bound.back_ms)


def _state(node: Any, image: Image, rel: str) -> NodeState:
    """A tree node as the engine's state. A registration read from a snapshot has the snapshot's time,
    not its own (a snapshot keeps no record's time): its ctime is then 0, not known (a broker epoch is the
    offset of its ``RegisterBrokerRecord``, so a registration replayed from the log has that offset)."""
    stat, data = node
    ctime = stat.ctime
    if rel.startswith("brokers/ids/"):
        broker = image.brokers.get(int(rel.rsplit("/", 1)[1]))
        if broker is not None and broker.stamp.created_offset != broker.epoch:
            ctime = 0
    return NodeState(data, stat.czxid, stat.mzxid, ctime, stat.mtime, stat.version, stat.aversion, 0)


def _config_paths(image: Image, cluster_id: str | None) -> list[str]:
    """Every ``config/…`` znode that holds settings, as the tree names them (``Tree._config_entities``)."""
    entities = Tree(image, cluster_id)._config_entities()
    out = []
    for kind, named in entities.items():
        for name in named:
            out.append(f"config/users/{name}" if kind == "users/clients" else f"config/{kind}/{name}")
    return sorted(out)


def _acl_paths(tree: Tree) -> list[str]:
    out = []
    for pattern, kind, name in tree._acl_groups():
        out.append(f"kafka-acl/{kind}/{name}" if pattern == "LITERAL" else f"kafka-acl-extended/prefixed/{kind}/{name}")
    return sorted(out)


# --- the handlers of what means something else over KRaft ------------------------------------------------


def _broker_of(engine: Engine, path: str, state: NodeState | None) -> KafkaBroker | None:
    found = engine.records_of(path, state, KafkaBroker)
    return found[0] if found else None


def broker(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``brokers/ids/{id}`` over KRaft: registered when it turns unfenced, gone when it is fenced or
    unregistered (see the module docstring); a new registration, which Kafka makes fenced, is
    ``KafkaBrokerRegisteredFenced`` (fenced at registration, not after it served), and the start of a
    controlled shutdown ``KafkaBrokerControlledShutdown``. A change of none of these (a log dir, say) is
    left to the generic records."""
    name = step.path.rsplit("/", 1)[1]
    if not name.isdigit():
        return None
    broker_id, root = int(name), where.root or ROOT
    before = _broker_of(engine, step.path, step.before)
    after = _broker_of(engine, step.path, step.after)
    live_before = before is not None and not before.fenced
    live_after = after is not None and not after.fenced
    # a registration is new when its broker epoch (the offset of its RegisterBrokerRecord: the czxid) changed
    registered = (
        after is not None and step.after is not None and (step.before is None or step.before.czxid != step.after.czxid)
    )
    out: list[Any] = []
    # what every record of the broker as it is now says: the moment, its registration (the broker epoch,
    # the offset of its RegisterBrokerRecord, stands for the session) and where it listens
    now: dict[str, Any] = {}
    if after is not None and step.after is not None:
        now = {**engine.common(step), "session_id": step.after.czxid, "broker_id": broker_id, "root": root}
        now.update(host=after.host, port=after.port)
    listeners: dict[str, Any] = {"rack": after.rack, "endpoints": after.endpoints} if after is not None else {}
    if (
        not registered
        and before is not None
        and after is not None
        and after.in_controlled_shutdown
        and not before.in_controlled_shutdown
    ):
        out.append(KafkaBrokerControlledShutdown(**now, fenced=bool(after.fenced)))
    if live_before and not live_after:
        assert before is not None
        out.append(_gone(engine, step, broker_id, root, before, after, registered))
    if registered and not live_after:
        out.append(KafkaBrokerRegisteredFenced(**now, **listeners, replaced=live_before))
    if live_after and not live_before:
        engine.registered.setdefault(root, set()).add(broker_id)
        out.append(KafkaBrokerRegistered(**now, **listeners))
    return out or None


def _gone(
    engine: Engine,
    step: Step,
    broker_id: int,
    root: str,
    before: KafkaBroker,
    after: KafkaBroker | None,
    registered: bool,
) -> KafkaBrokerGone:
    """A broker that served and serves no more: unregistered, replaced by a new (fenced) registration,
    fenced at the end of its controlled shutdown, or fenced (its lease lapsed, or the controller fenced it)."""
    assert step.before is not None
    engine.registered.setdefault(root, set()).discard(broker_id)
    if after is None:
        how = "unregistered"
    elif registered:
        how = "registered_again"
    elif before.in_controlled_shutdown or after.in_controlled_shutdown:
        how = "controlled_shutdown"
    else:
        how = "fenced"
    return KafkaBrokerGone(
        **{**engine.common(step), "session_id": step.before.czxid},
        broker_id=broker_id,
        host=before.host,
        port=before.port,
        how=how,
        registered_at=time_of(step.before.ctime) if step.before.ctime else None,
        root=root,
    )


def controller(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``controller`` over KRaft: a ``LeaderChangeMessage`` naming a new leader or epoch is an election."""
    root = where.root or ROOT
    found = engine.records_of(step.path, step.after, KafkaController)
    if not found:
        return None
    record = found[0]
    previous = engine.records_of(step.path, step.before, KafkaController) if step.before is not None else None
    elected = KafkaControllerElected(
        **engine.common(step),
        broker_id=record.broker_id,
        epoch=record.kraft_controller_epoch,
        previous_broker_id=previous[0].broker_id if previous else engine.controllers.get(root),
        root=root,
    )
    engine.controllers[root] = record.broker_id
    return [elected]


KRAFT_HANDLERS: dict[str, Handler] = {**HANDLERS, "kafka_broker": broker, "kafka_controller": controller}
