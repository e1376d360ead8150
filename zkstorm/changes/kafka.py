"""Kafka's changes, one function per znode kind (see ``handlers.HANDLERS``): each reads the decoded record
before and after a step and says what changed, with Kafka's own meaning of the znode (ZkData.scala in
apache/kafka: ``BrokerIdZNode``, ``ControllerZNode``, ``TopicPartitionStateZNode``, ``TopicZNode``,
``ReassignPartitionsZNode``, ``ConfigEntityZNode``, ``AclEntry``, ``IsrChangeNotificationSequenceZNode``,
``LogDirEventNotificationSequenceZNode``). ``None`` leaves the step to the generic records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..decode.kafka import common_partition_state, state_summary
from ..records import (
    KafkaAcl,
    KafkaAclChanged,
    KafkaBroker,
    KafkaBrokerGone,
    KafkaBrokerRegistered,
    KafkaConfig,
    KafkaConfigChanged,
    KafkaController,
    KafkaControllerElected,
    KafkaControllerEpoch,
    KafkaControllerGone,
    KafkaIsrChange,
    KafkaIsrChangeNotified,
    KafkaLogDirEvent,
    KafkaLogDirEventNotified,
    KafkaPartitionChanged,
    KafkaPartitionsAdded,
    KafkaPartitionState,
    KafkaReassignment,
    KafkaReassignmentCompleted,
    KafkaReassignmentProgressed,
    KafkaReassignmentStarted,
    KafkaReplicaAssignment,
    KafkaReplicasChanged,
    KafkaTopic,
    KafkaTopicCreated,
    KafkaTopicDeleted,
    KafkaTopicMarkedForDeletion,
)
from .kinds import Decoded
from .reader import time_of

if TYPE_CHECKING:
    from .kinds import Engine, Place
    from .reader import NodeState, Step

REDACTED = "<redacted>"


def _one(engine: Engine, step: Step, state: Any, kind: type, path: str | None = None) -> Any | None:
    """The one record of ``kind`` a state of the step's znode (or of ``path``) decodes to (None: no
    state, or it does not decode)."""
    found = engine.records_of(path or step.path, state, kind)
    return found[0] if found else None


def _before(engine: Engine, step: Step, kind: type) -> Any | None:
    return _one(engine, step, step.before, kind) if step.known else None


def broker(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``brokers/ids/{id}``: a registration made, or gone with its session (``how``)."""
    name = step.path.rsplit("/", 1)[1]
    if not name.lstrip("-").isdigit() or step.op == "set":
        return None
    broker_id, root = int(name), where.root or "/"
    registered = engine.registered.setdefault(root, set())
    if step.op == "create":
        registered.add(broker_id)
        record = _one(engine, step, step.after, KafkaBroker)
        return [
            KafkaBrokerRegistered(
                **engine.common(step),
                broker_id=broker_id,
                host=record.host if record else None,
                port=record.port if record else None,
                rack=record.rack if record else None,
                endpoints=record.endpoints if record else (),
                root=root,
            )
        ]
    registered.discard(broker_id)
    record = _before(engine, step, KafkaBroker)
    before = step.before
    return [
        KafkaBrokerGone(
            **engine.common(step),
            broker_id=broker_id,
            host=record.host if record else None,
            port=record.port if record else None,
            how=step.how,
            registered_at=time_of(before.ctime) if before is not None and before.ctime else None,
            root=root,
        )
    ]


def controller(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``controller``: elected (created), or gone (its broker resigned or its session ended)."""
    root = where.root or "/"
    if step.op == "create":
        record = _one(engine, step, step.after, KafkaController)
        epoch_path = _sibling(step.path, "controller_epoch")
        epoch = _one(engine, step, engine.states.get(epoch_path), KafkaControllerEpoch, epoch_path)
        elected = KafkaControllerElected(
            **engine.common(step),
            broker_id=record.broker_id if record else None,
            epoch=epoch.epoch if epoch else None,
            previous_broker_id=engine.controllers.get(root),
            root=root,
        )
        engine.controllers[root] = elected.broker_id
        engine.elected[root] = elected  # the epoch the same multi writes next is this election's
        return [elected]
    if step.op == "delete":
        record = _before(engine, step, KafkaController)
        broker_id = record.broker_id if record else None
        if broker_id is not None:
            engine.controllers[root] = broker_id
        return [KafkaControllerGone(**engine.common(step), broker_id=broker_id, how=step.how, root=root)]
    return None


def controller_epoch(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``controller_epoch``: written in the same multi as the election since Kafka 2.2
    (``KafkaZkClient.registerControllerAndIncrementControllerEpoch``): the election's epoch, not a
    change of its own. Written alone (older Kafka), it is a generic data change."""
    elected = engine.elected.get(where.root or "/")
    if elected is None or step.op != "set":
        return None
    epoch = _one(engine, step, step.after, KafkaControllerEpoch)
    if epoch is None:
        return None
    elected.epoch = epoch.epoch
    return []


def _sibling(path: str, name: str) -> str:
    parent = path.rsplit("/", 1)[0]
    return f"{parent}/{name}" if parent else f"/{name}"


def partition_state(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``brokers/topics/{t}/partitions/{p}/state``: leader and ISR before and after, and whether the
    partition is offline, as ``kafka-topics --describe`` says (no leader, or a leader not registered)."""
    if step.op == "delete":
        return None
    after = _state(engine, step.path, step.after, where)
    if after is None:
        return None
    before = _state(engine, step.path, step.before, where) if step.known else None
    registered = engine.registered.get(where.root or "/", set())
    isr_before = before.isr if before is not None else None
    txn = step.txn
    return [
        KafkaPartitionChanged(  # (``Engine.common``'s fields spelt out: one change a txn of a Kafka log)
            at=time_of(txn.time_ms),
            zxid=txn.zxid,
            time_ms=txn.time_ms,
            session_id=txn.session,
            path=step.path,
            topic=after.topic,
            partition=after.partition,
            leader_before=before.leader if before is not None else None,
            leader=after.leader,
            isr_before=isr_before,
            isr=after.isr,
            isr_removed=tuple(b for b in isr_before if b not in after.isr) if isr_before is not None else (),
            isr_added=tuple(b for b in after.isr if b not in isr_before) if isr_before is not None else (),
            leader_epoch_before=before.leader_epoch if before is not None else None,
            leader_epoch=after.leader_epoch,
            controller_epoch=after.controller_epoch,
            offline_before=_offline(before.leader, registered) if before is not None else None,
            offline=_offline(after.leader, registered),
            root=after.root,
        )
    ]


def _state(engine: Engine, path: str, state: NodeState | None, where: Place) -> KafkaPartitionState | None:
    """The partition state ``state`` decodes to, as ``_one`` reads it; one in the common form is read
    straight from its bytes (``decode.kafka.common_partition_state``) and kept on the state with the
    summary the full decode gives it (``Engine.decoded`` then returns it), the rest take the full decode."""
    if state is None:
        return None
    decoded = state.decoded
    if decoded is None and where.root is not None:
        record = common_partition_state(where.root, where.relative, state.data, state.version)
        if record is not None:
            state.decoded = Decoded([record], state_summary(record), None)
            return record
    elif decoded is not None:  # what ``Engine.records_of`` reads from it
        if decoded.failure is None:
            for record in decoded.records:
                if type(record) is KafkaPartitionState:
                    return record
        return None
    found = engine.records_of(path, state, KafkaPartitionState)
    return found[0] if found else None


def _offline(leader: int, registered: set[int]) -> bool:
    """Offline as ``model.kafka_health.iter_partitions`` judges it: no leader, or one that is not registered."""
    return leader == -1 or leader not in registered


def topic(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``brokers/topics/{t}``: created, deleted, or its assignment rewritten (partitions added, KIP-455
    reassignments started, progressing and completed, replica lists changed)."""
    name = step.path.rsplit("/", 1)[1]
    root = where.root or "/"
    if step.op == "create":
        record = _one(engine, step, step.after, KafkaTopic)
        if record is None:
            return None
        created = KafkaTopicCreated(
            **engine.common(step),
            topic=name,
            topic_id=record.topic_id,
            partitions=record.partition_count,
            replication_factor=record.replication_factor,
            root=root,
        )
        return [created]
    if step.op == "delete":
        record = _before(engine, step, KafkaTopic)
        return [
            KafkaTopicDeleted(
                **engine.common(step),
                topic=name,
                topic_id=record.topic_id if record else None,
                partitions=record.partition_count if record else None,
                root=root,
            )
        ]
    before = engine.records_of(step.path, step.before, KafkaReplicaAssignment) if step.known else None
    after = engine.records_of(step.path, step.after, KafkaReplicaAssignment)
    if before is None or after is None:
        return None
    old = {a.partition: a for a in before}
    out: list[Any] = []
    added = tuple(sorted(set(a.partition for a in after) - set(old)))
    if added:
        out.append(
            KafkaPartitionsAdded(
                **engine.common(step),
                topic=name,
                partitions_before=len(old),
                partitions=len(after),
                added=added,
                root=root,
            )
        )
    for a in after:
        b = old.get(a.partition)
        if b is None or (b.replicas, b.adding_replicas, b.removing_replicas) == (
            a.replicas,
            a.adding_replicas,
            a.removing_replicas,
        ):
            continue
        moving_before = bool(b.adding_replicas or b.removing_replicas)
        moving = bool(a.adding_replicas or a.removing_replicas)
        fields = {
            **engine.common(step),
            "topic": name,
            "partition": a.partition,
            "replicas_before": b.replicas,
            "replicas": a.replicas,
            "root": root,
        }
        if not moving_before and not moving:
            out.append(KafkaReplicasChanged(**fields))
            continue
        moves = {"adding_replicas": a.adding_replicas, "removing_replicas": a.removing_replicas, "source": "kip455"}
        if moving and not moving_before:
            out.append(KafkaReassignmentStarted(**fields, **moves))
        elif moving:
            out.append(KafkaReassignmentProgressed(**fields, **moves))
        else:
            out.append(KafkaReassignmentCompleted(**fields, **moves))
    return out or None


def deletion_mark(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``admin/delete_topics/{t}`` created: the topic is marked for deletion (``TopicDeletionZNode``)."""
    if step.op != "create":
        return None
    name = step.path.rsplit("/", 1)[1]
    return [KafkaTopicMarkedForDeletion(**engine.common(step), topic=name, root=where.root or "/")]


def admin_reassignment(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``admin/reassign_partitions``: an admin reassignment (``kafka-reassign-partitions`` before KIP-455):
    the partitions it lists started moving; the controller takes each off when its move completes, and
    deletes the znode with the last."""
    before: list[Any] | None = []
    if step.op != "create":
        before = engine.records_of(step.path, step.before, KafkaReassignment) if step.known else None
    after = engine.records_of(step.path, step.after, KafkaReassignment) if step.op != "delete" else []
    if before is None or after is None:
        return None
    old = {(r.topic, r.partition): r.target_replicas for r in before}
    new = {(r.topic, r.partition): r.target_replicas for r in after}
    root = where.root or "/"
    out: list[Any] = []
    for key in sorted(old.keys() | new.keys()):
        topic_name, partition = key
        fields = {**engine.common(step), "topic": topic_name, "partition": partition, "root": root}
        fields.update(adding_replicas=(), removing_replicas=(), source="admin")
        if key not in old:
            out.append(KafkaReassignmentStarted(**fields, replicas_before=None, replicas=new[key]))
        elif key not in new:
            out.append(KafkaReassignmentCompleted(**fields, replicas_before=old[key], replicas=None))
        elif old[key] != new[key]:
            out.append(KafkaReassignmentProgressed(**fields, replicas_before=old[key], replicas=new[key]))
    return out or None


def config(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``config/{type}/{name}``: the keys set, changed and removed. Values are compared in the clear and
    shown as the views show them: a secret (``decode.kafka.is_sensitive_config``) as ``<redacted>``."""
    before = _configs(engine, step, step.before) if step.op != "create" else {}
    after = _configs(engine, step, step.after) if step.op != "delete" else {}
    if before is None or after is None:
        return None
    if step.op == "set" and not step.known:
        return None
    shown = engine.show_secrets

    def value(entry: tuple[str, bool]) -> str:
        return entry[0] if shown or not entry[1] else REDACTED

    keys_set = tuple(k for k in sorted(after) if before.get(k) != after[k])
    keys_removed = tuple(k for k in sorted(before) if k not in after)
    changes = tuple(
        f"{k}={value(before[k]) if k in before else '(unset)'}->{value(after[k])}" for k in keys_set
    ) + tuple(f"{k}={value(before[k])}->(unset)" for k in keys_removed)
    entity_type, entity_name = _entity(engine, step, where)
    return [
        KafkaConfigChanged(
            **engine.common(step),
            entity_type=entity_type,
            entity_name=entity_name,
            keys_set=keys_set,
            keys_removed=keys_removed,
            changes=changes,
            root=where.root or "/",
        )
    ]


def _configs(engine: Engine, step: Step, state: Any) -> dict[str, tuple[str, bool]] | None:
    """key → (value in the clear, sensitive) of a config znode's state; None when it does not decode."""
    found = engine.decoded(step.path, state, show_secrets=True)
    if found is None or found.failure is not None:
        return None
    return {r.key: (r.value or "", r.sensitive) for r in found.records if type(r) is KafkaConfig and r.key is not None}


def _entity(engine: Engine, step: Step, where: Place) -> tuple[str, str]:
    segments = where.relative.split("/")
    if len(segments) >= 5 and segments[-4] == "users" and segments[-2] == "clients":
        return "users/clients", f"{segments[-3]}/clients/{segments[-1]}"
    return segments[-2], segments[-1]


def acl(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``kafka-acl/{type}/{name}`` (literal) or ``kafka-acl-extended/prefixed/{type}/{name}``: the ACLs
    added and removed (``AclAuthorizer`` rewrites the whole list on every change)."""
    before = _acls(engine, step, step.before) if step.op != "create" else set()
    after = _acls(engine, step, step.after) if step.op != "delete" else set()
    if before is None or after is None or (step.op == "set" and not step.known):
        return None
    segments = where.relative.split("/")
    pattern_type = "PREFIXED" if segments[0] == "kafka-acl-extended" else "LITERAL"
    return [
        KafkaAclChanged(
            **engine.common(step),
            pattern_type=pattern_type,
            resource_type=segments[-2],
            resource_name=segments[-1],
            added=tuple(sorted(after - before)),
            removed=tuple(sorted(before - after)),
            root=where.root or "/",
        )
    ]


def _acls(engine: Engine, step: Step, state: Any) -> set[str] | None:
    found = engine.records_of(step.path, state, KafkaAcl)
    if found is None:
        return None
    return {f"{a.principal} {a.permission_type} {a.operation} from {a.host}" for a in found if a.principal}


def isr_notification(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``isr_change_notification/isr_change_N`` created: a broker changed ISRs and told the controller."""
    if step.op != "create":
        return None
    found = engine.records_of(step.path, step.after, KafkaIsrChange)
    if found is None:
        return None
    partitions = tuple(f"{r.topic}-{r.partition}" for r in found if r.topic is not None)
    return [KafkaIsrChangeNotified(**engine.common(step), partitions=partitions, root=where.root or "/")]


def log_dir_event(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``log_dir_event_notification/log_dir_event_N`` created: a broker's log directory failed."""
    if step.op != "create":
        return None
    record = _one(engine, step, step.after, KafkaLogDirEvent)
    if record is None:
        return None
    return [
        KafkaLogDirEventNotified(
            **engine.common(step), broker_id=record.broker_id, event=record.event, root=where.root or "/"
        )
    ]
