"""One Kafka root's records sorted by kind (``KafkaState``), as a walk of it yields them
(``KafkaStateBuilder``): what the views that judge every partition and the health rules read, and what
a snapshot builds per Kafka root it walks. Plain records, no ZooKeeper: a test builds one by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class KafkaState:
    """Everything one walk of a Kafka root produced, sorted by kind, for the health rules."""

    root: str
    brokers: list[KafkaBroker] = field(default_factory=list)
    registered: set[int] = field(default_factory=set)  # children of brokers/ids, decodable or not
    assignments: list[KafkaReplicaAssignment] = field(default_factory=list)
    states: dict[tuple[str, int], KafkaPartitionState] = field(default_factory=dict)
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
                    state.unreadable_states[(parts[2], int(parts[4]))] = record.failure_type
            elif self.keep_other:
                state.other.append(record)
