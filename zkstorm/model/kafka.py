"""The Kafka cluster under one chroot, as views that return records: every Kafka join lives here, once.

A view reads what it shows: ``controller()`` two znodes, ``brokers()`` the registrations and the topics'
replica lists, ``topics(topic)`` one topic; the views that judge every partition (``partitions``,
``health``, ``configs``…) share one walk of the root, taken once per ``KafkaCluster`` (``state()``).
The rules themselves (partition health, min ISR source, findings) are functions of a ``KafkaState``
(``kafka_state.py``) in ``kafka_health.py``, testable on a hand-built state without a ZooKeeper.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import cached_property
from typing import Any

from ..decode.kafka import empty_broker
from ..errors import NotFoundError, RootNotFoundError
from ..layout import KAFKA_ROOT_MARKERS, Roots, join
from ..records import (
    KafkaAcl,
    KafkaBroker,
    KafkaConfig,
    KafkaConsumerMember,
    KafkaConsumerOffset,
    KafkaConsumerOwner,
    KafkaController,
    KafkaControllerEpoch,
    KafkaFinding,
    KafkaFindingSummary,
    KafkaPartition,
    KafkaReassignment,
    KafkaReplicaAssignment,
    KafkaTopic,
)
from .kafka_health import iter_partitions, kafka_findings, summarize_findings
from .kafka_state import KafkaState, KafkaStateBuilder
from .walk import ClusterReads

# Kafka's top-level znodes (ZkData.scala; docs/kafka-layout.md §2). A Kafka cluster at "/" shares the ensemble
# with other systems, so a walk of the root visits these and nothing else.
KAFKA_TOP_LEVEL = (
    "brokers",
    "controller",
    "controller_epoch",
    "admin",
    "config",
    "cluster",
    "consumers",
    "kafka-acl",
    "kafka-acl-changes",
    "kafka-acl-extended",
    "kafka-acl-extended-changes",
    "isr_change_notification",
    "log_dir_event_notification",
    "latest_producer_id_block",
    "feature",
    "migration",
    "delegation_token",
)

_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}
OFFSETS_TOPIC = "__consumer_offsets"  # where the Java consumer's groups commit (Kafka 0.9+), not ZooKeeper


# --- joins on records (no I/O): shared by the views and the snapshot ---------------------------------


def all_brokers(
    brokers: Iterable[KafkaBroker], registered: set[int], assignments: Iterable[KafkaReplicaAssignment], root: str
) -> list[KafkaBroker]:
    """Registered brokers, plus the ones replica lists still name without a registration (dead or
    decommissioned: ``alive`` false), plus registered ones whose registration could not be decoded
    (``alive`` true, nothing else known), by broker id."""
    rows = list(brokers)
    return sorted([*rows, *missing_brokers(rows, registered, assignments, root)], key=lambda b: b.broker_id)


def missing_brokers(
    brokers: Iterable[KafkaBroker], registered: set[int], assignments: Iterable[KafkaReplicaAssignment], root: str
) -> list[KafkaBroker]:
    """The rows ``all_brokers`` adds to the decoded registrations of the Kafka cluster at ``root``:
    brokers known only by their id."""
    known = {b.broker_id for b in brokers}
    named = {b for a in assignments for b in a.replicas}
    return [unknown_broker(i, alive=i in registered, root=root) for i in sorted((named | registered) - known)]


def unknown_broker(broker_id: int, *, alive: bool, root: str) -> KafkaBroker:
    """A broker known only by its id: named in a replica list, or registered with undecodable data."""
    return empty_broker(broker_id, alive=alive, root=root)


def with_deletions(topics: Iterable[KafkaTopic], deletions: Iterable[str]) -> list[KafkaTopic]:
    """The topics, each marked ``pending_deletion`` when ``admin/delete_topics`` names it (by topic name)."""
    marked = set(deletions)
    return [replace(t, pending_deletion=True) if t.topic in marked else t for t in topics]


def sort_findings(findings: list[KafkaFinding]) -> list[KafkaFinding]:
    """Errors first, then warnings, then information; within a level by kind, topic and partition."""
    return sorted(findings, key=lambda f: (_LEVEL_ORDER.get(f.level, 3), f.finding, f.topic or "", f.partition or 0))


# --- the views ------------------------------------------------------------------------------------------


class KafkaHealth:
    """``kafka health`` from one walk of the root: the explained ``findings`` (errors first), judged when
    the report is made, and what else a reader may ask of the same walk, computed when first asked: the
    ``summary`` by rule a terminal leads with, and the ``partitions`` and ``brokers`` Prometheus counts."""

    def __init__(self, view: KafkaCluster, default_min_isr: int | None) -> None:
        self.root = view.root
        self._view = view
        self._default_min_isr = default_min_isr
        self.findings = view.health(default_min_isr=default_min_isr)

    @cached_property
    def summary(self) -> list[KafkaFindingSummary]:
        """Per rule: count, most affected topics, brokers, one explanation (``summarize_findings``)."""
        return summarize_findings(self.findings)

    @cached_property
    def partitions(self) -> list[KafkaPartition]:
        return self._view.partitions(default_min_isr=self._default_min_isr)

    @cached_property
    def brokers(self) -> list[KafkaBroker]:
        """Registered brokers and the unregistered ones replica lists name (``all_brokers``)."""
        state = self._view.state()
        return all_brokers(state.brokers, state.registered, state.assignments, state.root)


class KafkaCluster:
    """The Kafka cluster whose chroot is ``root``, on a ``Cluster``'s source."""

    def __init__(self, cluster: ClusterReads, root: str) -> None:
        self.cluster = cluster
        self.root = root
        self.roots = Roots(storm=(), kafka=(root,))  # what its reads decode under: its own root only
        self._state: KafkaState | None = None
        self._state_has_other = False  # whether the walk kept ACLs and consumer groups (``state(other=True)``)
        self._present = False

    def _path(self, sub: str) -> str:
        return join(self.root, sub)

    def require(self) -> None:
        """Raise ``RootNotFoundError`` unless the root holds a Kafka cluster: ``brokers/ids`` or
        ``brokers/topics``, as root discovery has it (``layout.KAFKA_ROOT_MARKERS``). A mistyped
        ``--kafka-root`` must not read as a healthy cluster with nothing in it; a cluster that exists with
        no broker registered is a finding of ``health`` instead. Every view asks first (one listing)."""
        if self._present:
            return
        if not KAFKA_ROOT_MARKERS & set(self.cluster.children(self._path("brokers"))):
            why = (
                "it holds neither brokers/ids nor brokers/topics" if self.cluster.exists(self.root) else "no such znode"
            )
            raise RootNotFoundError(f"no Kafka cluster at {self.root}: {why} (zkstorm kafka roots lists them)")
        self._present = True

    def state(self, *, other: bool = False) -> KafkaState:
        """One walk of the root's Kafka subtrees, sorted into a ``KafkaState`` (taken once). ``other``: keep
        the records no health rule reads too (ACLs, old consumer groups' offsets, members and owners) in
        ``state.other``; the views that judge partitions leave them out, since old consumer groups may
        commit an offset znode per partition they read, as many again as the partitions themselves. A
        view that needs them after a walk without them walks again."""
        self.require()
        if self._state is None or (other and not self._state_has_other):
            builder = KafkaStateBuilder(self.root, keep_other=other)
            for top in KAFKA_TOP_LEVEL:
                for path, records in self.cluster.decoded(self._path(top), roots=self.roots):
                    builder.add(path, records)
            self._state, self._state_has_other = builder.state, other
        return self._state

    # read what they show ------------------------------------------------------------------------------

    def controller(self) -> tuple[KafkaController, KafkaControllerEpoch | None]:
        """The active controller and the controller epoch: two znodes."""
        self.require()
        controller = next(
            (
                r
                for r in self.cluster.records(self._path("controller"), depth=0, roots=self.roots)
                if isinstance(r, KafkaController)
            ),
            None,
        )
        if controller is None:
            raise NotFoundError("no /controller znode: an election is in progress, or no broker is alive")
        epoch = next(
            (
                r
                for r in self.cluster.records(self._path("controller_epoch"), depth=0, roots=self.roots)
                if isinstance(r, KafkaControllerEpoch)
            ),
            None,
        )
        return controller, epoch

    def brokers(self) -> list[KafkaBroker]:
        """Registered brokers, and unregistered ones still named in replica lists (``alive`` false): the
        registrations and the topics' replica assignments, not the partitions under them."""
        self.require()
        brokers: list[KafkaBroker] = []
        registered: set[int] = set()
        for path, records in self.cluster.decoded(self._path("brokers/ids"), depth=1, roots=self.roots):
            name = path.rsplit("/", 1)[1]
            if path != self._path("brokers/ids") and name.lstrip("-").isdigit():
                registered.add(int(name))  # a live session, decodable or not
            brokers += [r for r in records if isinstance(r, KafkaBroker)]
        assignments = [
            r
            for r in self.cluster.records(self._path("brokers/topics"), depth=1, roots=self.roots)
            if isinstance(r, KafkaReplicaAssignment)
        ]
        return all_brokers(brokers, registered, assignments, self.root)

    def topics(self, topic: str | None = None) -> list[KafkaTopic]:
        """Every topic (or one): partitions, replication factor, topic id, reassignments in flight, and
        whether it is marked for deletion (``with_deletions``)."""
        self.require()
        if topic is None:
            state = self.state()
            return sorted(with_deletions(state.topics, state.deletions), key=lambda t: t.topic)
        path = self._path(f"brokers/topics/{topic}")
        rows = [r for r in self.cluster.records(path, depth=0, roots=self.roots) if isinstance(r, KafkaTopic)]
        if not rows and not self.cluster.exists(path):
            raise NotFoundError(f"no topic {topic!r} under {self.root}")
        marked = self.cluster.exists(self._path(f"admin/delete_topics/{topic}"))
        return with_deletions(rows, [topic] if marked else [])

    # one walk of the root -----------------------------------------------------------------------------

    def partitions(
        self,
        *,
        topic: str | None = None,
        offline: bool = False,
        under_replicated: bool = False,
        under_min_isr: bool = False,
        default_min_isr: int | None = None,
    ) -> list[KafkaPartition]:
        """Partitions with leader, ISR and health as ``kafka-topics.sh --describe`` would judge them. Filtered
        as they are judged, so ``--offline`` of a million partitions holds the offline ones only."""
        return [
            p
            for p in iter_partitions(self.state(), default_min_isr)
            if (topic is None or p.topic == topic)
            and (not offline or p.offline)
            and (not under_replicated or p.under_replicated)
            and (not under_min_isr or p.under_min_isr)
        ]

    def health_report(self, *, default_min_isr: int | None = None) -> KafkaHealth:
        """The findings, and from the same walk their summary by rule, the partitions and the brokers
        (``KafkaHealth``): what ``kafka health`` shows in every format."""
        return KafkaHealth(self, default_min_isr)

    def health(self, *, default_min_isr: int | None = None) -> list[KafkaFinding]:
        """Explained findings, errors first."""
        state = self.state()
        return sort_findings(kafka_findings(state, int(self.cluster.now() * 1000), default_min_isr))

    def configs(self, *, entity_type: str | None = None, entity_name: str | None = None) -> list[KafkaConfig]:
        """Dynamic configs and overrides (secrets redacted unless the cluster shows them)."""
        return [
            c
            for c in self.state().configs
            if (entity_type is None or c.entity_type == entity_type)
            and (entity_name is None or c.entity_name == entity_name)
        ]

    def _other(self, kind: type) -> list[Any]:
        return [r for r in self.state(other=True).other if isinstance(r, kind)]

    def acls(self) -> list[KafkaAcl]:
        """Every ACL, literal and prefixed."""
        return sorted(self._other(KafkaAcl), key=lambda a: (a.resource_type, a.resource_name, a.principal, a.operation))

    def reassignments(self) -> list[KafkaReassignment]:
        """Partitions being moved (KIP-455 in the topic znodes, or the legacy admin znode)."""
        return sorted(self.state().reassignments, key=lambda r: (r.topic, r.partition))

    def consumer_offsets(self) -> list[KafkaConsumerOffset]:
        """Old (ZooKeeper-based) consumer groups' committed offsets."""
        return sorted(self._other(KafkaConsumerOffset), key=lambda o: (o.group, o.topic, o.partition))

    def consumer_members(self) -> list[KafkaConsumerMember]:
        return self._other(KafkaConsumerMember)

    def consumer_owners(self) -> list[KafkaConsumerOwner]:
        return self._other(KafkaConsumerOwner)

    def consumer_groups_note(self) -> str:
        """Where the Java consumer's groups are, which this cluster's ZooKeeper does not hold: since Kafka
        0.9 a group commits its offsets to the ``__consumer_offsets`` topic through its group coordinator
        (``GroupMetadataManager``), and only the old Scala consumer, removed in 2.0, wrote
        ``consumers/<group>``. A view of ZooKeeper alone cannot list them, so it says where they are rather
        than let an empty list read as "no consumer groups" (a real cluster's groups: tests/real)."""
        offsets = self._path(f"brokers/topics/{OFFSETS_TOPIC}")
        used = (
            f"this cluster has {OFFSETS_TOPIC} ({len(self.cluster.children(join(offsets, 'partitions')))} partitions)"
            if self.cluster.exists(offsets)
            else f"this cluster has no {OFFSETS_TOPIC} topic yet (no group has committed)"
        )
        return (
            f"consumer groups of the Java consumer (Kafka 0.9+) keep their offsets in the {OFFSETS_TOPIC} "
            f"topic, not in ZooKeeper, and are not listed here; {used}: kafka-consumer-groups.sh "
            "--bootstrap-server BROKER --list shows them"
        )

    def consumers(self) -> list[KafkaConsumerMember | KafkaConsumerOwner | KafkaConsumerOffset]:
        """Old (ZooKeeper-based) consumer groups whole: their live members, partition owners and committed
        offsets, in that order (a table shows the offsets; the machine formats every row)."""
        return [*self.consumer_members(), *self.consumer_owners(), *self.consumer_offsets()]
