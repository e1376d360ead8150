"""One Kafka root's records sorted by kind (``KafkaState``), as a walk of it yields them
(``KafkaStateBuilder``): what the views that judge every partition and the health rules read, and what
a snapshot builds per Kafka root it walks. Plain records, no ZooKeeper: a test builds one by hand."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..decode.kafka import partition_number
from ..layout import relative_to
from ..records import (
    DecodeFailure,
    DecodeWarning,
    KafkaBroker,
    KafkaConfig,
    KafkaController,
    KafkaControllerEpoch,
    KafkaIsrChange,
    KafkaLogDirEvent,
    KafkaMigration,
    KafkaPartitionState,
    KafkaReassignment,
    KafkaReplicaAssignment,
    KafkaTopic,
    KafkaTopicDeletion,
    Unreadable,
)

_NONE = -(1 << 63)  # an int field that is None (a state's ``version``, ``zk_version``)
_ABSENT = _NONE + 1  # a partition of the topic with no state
_PACKED = 6  # ints per partition: leader, leader_epoch, controller_epoch, version, leader_recovery_state, zk_version


class PartitionStates(MutableMapping[tuple[str, int], KafkaPartitionState]):
    """Partition states by (topic, partition), packed per topic: each partition's six numbers in one
    ``array`` of 64-bit ints and its ISR (a tuple shared with every partition of the same ISR,
    ``decode.kafka.shared_ids``) in a list, the records made again when asked for. A dict of records
    keyed by the pair cost 220 bytes a partition (a record, its key and slot); this costs 56, for the
    million partitions the views and the snapshot hold. A state that does not fit (another root than
    its topic's, a partition number negative or far past the others, a value that is not a state) is
    kept whole beside them."""

    def __init__(self, states: Mapping[tuple[str, int], KafkaPartitionState] | None = None) -> None:
        self._topics: dict[str, tuple[str, array[int], list[tuple[int, ...] | None]]] = {}
        self._other: dict[tuple[str, int], KafkaPartitionState] = {}
        self._count = 0
        for key, value in (states or {}).items():
            self[key] = value

    def _packed(self, key: tuple[str, int]) -> tuple[str, array[int], list[Any], int] | None:
        topic, partition = key
        held = self._topics.get(topic)
        if held is None or not 0 <= partition < len(held[2]) or held[1][partition * _PACKED] == _ABSENT:
            return None
        return (*held, partition * _PACKED)

    def __getitem__(self, key: tuple[str, int]) -> KafkaPartitionState:
        found = self._packed(key)
        if found is None:
            return self._other[key]
        root, ints, isrs, at = found
        leader, leader_epoch, controller_epoch, version, recovery, zk_version = ints[at : at + _PACKED]
        return KafkaPartitionState(
            root=root,
            topic=key[0],
            partition=key[1],
            leader=leader,
            leader_epoch=leader_epoch,
            isr=isrs[key[1]],
            controller_epoch=controller_epoch,
            version=None if version == _NONE else version,
            leader_recovery_state=recovery,
            zk_version=None if zk_version == _NONE else zk_version,
        )

    def __setitem__(self, key: tuple[str, int], value: KafkaPartitionState) -> None:
        if key in self:
            del self[key]
        self._count += 1
        topic, partition = key
        held = self._topics.get(topic)
        if (
            type(value) is not KafkaPartitionState
            or value.topic != topic
            or value.partition != partition
            or value.eligible_leader_replicas is not None  # KRaft's ELRs (KIP-966): kept whole
            or value.last_known_elr is not None
        ):
            self._other[key] = value
            return
        if held is None:
            held = self._topics[topic] = (value.root, array("q"), [])
        root, ints, isrs = held
        numbers = (value.leader, value.leader_epoch, value.controller_epoch, value.version, value.leader_recovery_state)
        nullable = (value.version, value.zk_version)  # the two read back as None
        if (
            root != value.root
            or not 0 <= partition <= len(isrs) + 1024
            or not all(_fits(n) and n is not None for n in numbers[:3] + numbers[4:])
            or not all(_fits(n) for n in nullable)
        ):
            self._other[key] = value
            return
        if partition >= len(isrs):
            ints.extend([_ABSENT] * (_PACKED * (partition + 1 - len(isrs))))
            isrs.extend([None] * (partition + 1 - len(isrs)))
        zk_version = value.zk_version
        ints[partition * _PACKED : (partition + 1) * _PACKED] = array(
            "q", [*(_NONE if n is None else n for n in numbers), _NONE if zk_version is None else zk_version]
        )
        isrs[partition] = value.isr

    def __delitem__(self, key: tuple[str, int]) -> None:
        found = self._packed(key)
        if found is None:
            del self._other[key]
        else:
            _, ints, isrs, at = found
            ints[at] = _ABSENT
            isrs[key[1]] = None
        self._count -= 1

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and (self._packed(key) is not None or key in self._other)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for topic, (_, ints, isrs) in self._topics.items():
            yield from ((topic, p) for p in range(len(isrs)) if ints[p * _PACKED] != _ABSENT)
        yield from self._other

    def __len__(self) -> int:
        return self._count


def _fits(number: int | None) -> bool:
    return number is None or (type(number) is int and _ABSENT < number < 1 << 63)


class ReplicaAssignments:
    """The replica assignments of a Kafka root, kept by topic: for each partition its replica set (a tuple
    shared with every partition of the same set, ``decode.kafka.shared_ids``), or its whole record when it
    has replicas being added or removed. A record per partition cost 88 bytes, a third of what the views
    and the snapshot held per partition of a million; the records are made again as they are iterated,
    in (topic, partition) order. A record that comes out of a topic's partition order (a hand-built
    state) is kept whole beside them."""

    def __init__(self, records: Iterable[KafkaReplicaAssignment] = ()) -> None:
        self._topics: dict[str, tuple[str, list[Any]]] = {}  # topic -> (root, per partition: replicas or record)
        self._other: list[KafkaReplicaAssignment] = []
        for record in records:
            self.append(record)

    def append(self, record: KafkaReplicaAssignment) -> None:
        held = self._topics.get(record.topic)
        if held is None:
            held = self._topics[record.topic] = (record.root, [])
        root, partitions = held
        if record.partition != len(partitions) or record.root != root:
            self._other.append(record)
        elif record.adding_replicas or record.removing_replicas:
            partitions.append(record)
        else:
            partitions.append(record.replicas)

    def __iter__(self) -> Iterator[KafkaReplicaAssignment]:
        if self._other:
            yield from sorted([*self._held(), *self._other], key=lambda a: (a.topic, a.partition))
        else:
            yield from self._held()

    def _held(self) -> Iterator[KafkaReplicaAssignment]:
        for topic in sorted(self._topics):
            root, partitions = self._topics[topic]
            for partition, held in enumerate(partitions):
                if type(held) is tuple:
                    yield KafkaReplicaAssignment(
                        root=root,
                        topic=topic,
                        partition=partition,
                        replicas=held,
                        adding_replicas=(),
                        removing_replicas=(),
                    )
                else:
                    yield held

    def __len__(self) -> int:
        return sum(len(partitions) for _, partitions in self._topics.values()) + len(self._other)


@dataclass
class KafkaState:
    """Everything one walk of a Kafka root produced, sorted by kind, for the health rules."""

    root: str
    brokers: list[KafkaBroker] = field(default_factory=list)
    registered: set[int] = field(default_factory=set)  # children of brokers/ids, decodable or not
    assignments: ReplicaAssignments | list[KafkaReplicaAssignment] = field(default_factory=ReplicaAssignments)
    states: MutableMapping[tuple[str, int], KafkaPartitionState] = field(default_factory=PartitionStates)
    # states with a decode failure, by failure type: absent from ``states`` when nothing could be read, there
    # too when a rule of Kafka's refused one whose fields read (``decode.kafka``)
    unreadable_states: dict[tuple[str, int], str] = field(default_factory=dict)
    configs: list[KafkaConfig] = field(default_factory=list)
    deletions: dict[str, KafkaTopicDeletion] = field(default_factory=dict)
    controller: KafkaController | None = None
    controller_epoch: KafkaControllerEpoch | None = None
    migration: KafkaMigration | None = None
    reassignments: list[KafkaReassignment] = field(default_factory=list)
    log_dir_events: list[KafkaLogDirEvent] = field(default_factory=list)
    isr_changes: list[KafkaIsrChange] = field(default_factory=list)
    topics: list[KafkaTopic] = field(default_factory=list)
    other: list[Any] = field(default_factory=list)
    problems: list[Any] = field(default_factory=list)


class KafkaStateBuilder:
    """Sorts the records of one Kafka root into a ``KafkaState``, znode by znode, as a walk yields them."""

    def __init__(self, root: str, *, keep_other: bool = True) -> None:
        self.root = root
        self.keep_other = keep_other  # the views want ACLs, consumers…; a snapshot streams those instead
        self.state = state = KafkaState(root=root)
        self._sinks: dict[type, Any] = {
            KafkaBroker: state.brokers.append,
            KafkaReplicaAssignment: state.assignments.append,
            KafkaPartitionState: lambda r: state.states.__setitem__((r.topic, r.partition), r),
            KafkaConfig: state.configs.append,
            KafkaTopicDeletion: lambda r: state.deletions.__setitem__(r.topic, r),
            KafkaReassignment: state.reassignments.append,
            KafkaLogDirEvent: state.log_dir_events.append,
            KafkaIsrChange: state.isr_changes.append,
            KafkaTopic: state.topics.append,
        }

    def add(self, path: str, records: list[Any]) -> None:
        state = self.state
        parts = (relative_to(path, self.root) or "").split("/")
        if len(parts) == 3 and parts[:2] == ["brokers", "ids"] and parts[2].lstrip("-").isdigit():
            state.registered.add(int(parts[2]))  # a live session, decodable or not
        for record in records:
            kind = type(record)
            if kind is KafkaBroker and record.fenced:  # a KRaft registration outlives its broker: a fenced
                state.registered.discard(record.broker_id)  # one is not alive (ZooKeeper's would be gone)
            if kind in self._sinks:
                self._sinks[kind](record)
            elif kind is KafkaController:
                state.controller = record
            elif kind is KafkaControllerEpoch:
                state.controller_epoch = record
            elif kind is KafkaMigration:
                state.migration = record
            elif kind in (DecodeFailure, DecodeWarning, Unreadable):
                state.problems.append(record)
                if kind is DecodeFailure and record.record_kind == "kafka_partition_state":
                    state.unreadable_states[(parts[2], partition_number(parts[4]))] = record.failure_type
            elif self.keep_other:
                state.other.append(record)
