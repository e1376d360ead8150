"""Kafka's health rules: partition health as ``kafka-topics.sh --describe`` judges it, and the explained
findings, on a ``KafkaState`` against a point in time; nothing here reads ZooKeeper."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from ..errors import FailureType
from ..layout import join
from ..records import (
    KafkaFinding,
    KafkaFindingSummary,
    KafkaPartition,
    KafkaReplicaAssignment,
)
from ..units import duration_text, plural
from .kafka_state import KafkaState, ReplicaAssignments

# --- the rules of kafka-topics.sh --describe (TopicCommand.scala's PartitionDescription), from ZooKeeper alone

# What a partition whose state znode cannot be read has none of (its health is "unknown")
_UNJUDGED: dict[str, Any] = dict.fromkeys(
    (
        "leader",
        "leader_epoch",
        "controller_epoch",
        "zk_version",
        "leader_recovery_state",
        "offline",
        "under_replicated",
        "under_min_isr",
        "at_min_isr",
        "preferred_leader",
    )
)
ASSUMED_MIN_ISR = 1  # Kafka's default; a server.properties value is invisible in ZooKeeper
RECOVERING = 1  # LeaderRecoveryState.RECOVERING (apache/kafka metadata/.../LeaderRecoveryState.java)


def min_isr_resolver(state: KafkaState, stated_default: int | None) -> Any:
    """topic → (min.insync.replicas, source): topic override, dynamic cluster default, stated, assumed."""
    overrides = {
        c.entity_name: c.value for c in state.configs if c.entity_type == "topics" and c.key == "min.insync.replicas"
    }
    cluster = next(
        (
            c.value
            for c in state.configs
            if c.entity_type == "brokers" and c.entity_name == "<default>" and c.key == "min.insync.replicas"
        ),
        None,
    )
    if cluster is not None and cluster.isdigit():
        default = (int(cluster), "dynamic_cluster_default")
    elif stated_default is not None:
        default = (stated_default, "stated_default")
    else:
        default = (ASSUMED_MIN_ISR, "assumed_kafka_default")

    def resolve(topic: str) -> tuple[int, str]:
        value = overrides.get(topic)
        return (int(value), "topic_override") if value is not None and value.isdigit() else default

    return resolve


def kafka_partitions(state: KafkaState, stated_default_min_isr: int | None = None) -> list[KafkaPartition]:
    return list(iter_partitions(state, stated_default_min_isr))


def iter_partitions(state: KafkaState, stated_default_min_isr: int | None = None) -> Iterator[KafkaPartition]:
    """Each partition joined with its state and judged, one at a time (a snapshot streams them)."""
    resolve = min_isr_resolver(state, stated_default_min_isr)
    assignments = state.assignments
    ordered = assignments if isinstance(assignments, ReplicaAssignments) else sorted(assignments, key=_by_partition)
    for a in ordered:  # a million partitions: not copied into a sorted list when kept in order already
        key = (a.topic, a.partition)
        min_isr, source = resolve(a.topic)
        pending = a.topic in state.deletions
        s = state.states.get(key)
        leader = s.leader if s is not None else -1  # no state znode: no leader (missing_node)
        isr = s.isr if s is not None else ()
        rf = len(a.replicas) - len(a.adding_replicas) if a.adding_replicas else len(a.replicas)
        offline = leader == -1 or leader not in state.registered
        under_replicated = len(isr) < rf
        under_min_isr = leader == -1 or len(isr) < min_isr
        at_min_isr = leader >= 0 and len(isr) == min_isr
        preferred = leader < 0 or not a.replicas or leader == a.replicas[0]
        # KIP-704: a leader elected uncleanly (from outside the ISR) stays RECOVERING until it has
        # truncated its log; what it lost is lost, and the ISR cannot grow meanwhile
        recovering = s is not None and s.leader_recovery_state == RECOVERING
        health = (
            "offline"
            if offline
            else "under_min_isr"
            if under_min_isr
            else "recovering"
            if recovering
            else "under_replicated"
            if under_replicated
            else "ok"
        )
        partition = KafkaPartition(
            root=state.root,
            topic=a.topic,
            partition=a.partition,
            replicas=a.replicas,
            adding_replicas=a.adding_replicas,
            removing_replicas=a.removing_replicas,
            leader=leader,
            leader_epoch=s.leader_epoch if s else None,
            isr=isr,
            controller_epoch=s.controller_epoch if s else None,
            zk_version=s.zk_version if s else None,
            leader_recovery_state=s.leader_recovery_state if s else None,
            offline=offline,
            under_replicated=under_replicated,
            under_min_isr=under_min_isr,
            at_min_isr=at_min_isr,
            preferred_leader=preferred,
            min_isr=min_isr,
            min_isr_source=source,
            pending_deletion=pending,
            health=health,
            state_problem=None if s is not None else FailureType.MISSING_NODE.value,
            eligible_leader_replicas=s.eligible_leader_replicas if s else None,
            last_known_elr=s.last_known_elr if s else None,
        )
        refused = state.unreadable_states.get(key) if state.unreadable_states else None
        if refused is not None:
            if s is None:  # a state that exists but cannot be read: no judgement
                partition = replace(partition, **_UNJUDGED, isr=(), health="unknown", state_problem=refused)
            else:  # one Kafka refuses, read all the same (decode.kafka): judged on what it says, flagged
                partition.state_problem = refused
        yield partition


def _by_partition(a: KafkaReplicaAssignment) -> tuple[str, int]:
    return a.topic, a.partition


def kraft_migrated(state: KafkaState) -> bool:
    """A finalized (or stalled) migration: /migration exists and no ZooKeeper broker is registered."""
    return state.migration is not None and not state.registered


def kafka_findings(state: KafkaState, now_ms: int, stated_default_min_isr: int | None = None) -> list[KafkaFinding]:
    records = kafka_health_records(state, now_ms, stated_default_min_isr, partitions=False)
    return [r for r in records if isinstance(r, KafkaFinding)]


def kafka_health_records(
    state: KafkaState, now_ms: int, stated_default_min_isr: int | None = None, *, partitions: bool = True
) -> Iterator[KafkaPartition | KafkaFinding]:
    """One pass over the partitions: each ``KafkaPartition`` (when asked) and the findings it raises, then
    the broker- and cluster-level findings. Nothing but counters is kept, so memory does not grow with
    the partition count."""
    out: list[KafkaFinding] = []

    def add(
        kind: str,
        level: str,
        detail: str,
        topic: str | None = None,
        partition: int | None = None,
        broker_id: int | None = None,
    ) -> None:
        out.append(
            KafkaFinding(
                finding=kind,
                level=level,
                topic=topic,
                partition=partition,
                broker_id=broker_id,
                detail=detail,
                root=state.root,
            )
        )

    controller = state.controller
    if state.migration is not None:
        m = state.migration
        age = duration_text((now_ms - m.modified_ms) / 1000, coarse=True) if m.modified_ms else "an unknown time"
        if kraft_migrated(state):
            add(
                "kraft_migration",
                "warning",
                f"the cluster migrated to KRaft: /migration was last written {age} ago by KRaft controller "
                f"{m.kraft_controller_id} and no ZooKeeper broker is registered, so this ZooKeeper data is history, "
                f"not the live state; read the cluster from its KRaft controllers",
                broker_id=m.kraft_controller_id,
            )
            yield from out
            return  # partition facts from a frozen copy are not current: report none of them
        add(
            "kraft_migration",
            "info",
            f"a ZooKeeper to KRaft migration is under way (KRaft controller {m.kraft_controller_id}, "
            f"last dual write {age} ago)",
            broker_id=m.kraft_controller_id,
        )
    if not state.registered:
        # brokers/ids exists (or the root would not be a Kafka cluster) but no broker holds a session: the
        # cluster is down, not empty and healthy (Kafka's BrokerIdsZNode children are ephemeral)
        add(
            "no_broker_registered",
            "error",
            f"no broker is registered under {join(state.root, 'brokers/ids')}: every broker is down or cut off "
            + ("from the KRaft controllers (fenced)" if any(b.fenced for b in state.brokers) else "from ZooKeeper"),
        )
    if controller is None:
        if state.registered:
            add("missing_controller", "error", "no /controller znode: a controller election is in progress or stuck")
    elif controller.broker_id not in state.registered and not (controller.kraft_controller_epoch or -1) >= 0:
        add(
            "controller_not_registered",
            "error",
            f"/controller names broker {controller.broker_id}, which is not registered",
            broker_id=controller.broker_id,
        )

    _refused_by_kafka(state, add)
    yield from out
    out.clear()
    misled: dict[int, int] = {}
    named: dict[int, int] = {}
    preferred_for: dict[int, int] = {}
    blockers: dict[str, set[int]] = {topic: set() for topic in state.deletions}
    for p in iter_partitions(state, stated_default_min_isr):
        if partitions:
            yield p
        for b in p.replicas:
            named[b] = named.get(b, 0) + 1
            if p.topic in blockers and b not in state.registered:
                blockers[p.topic].add(b)
        if p.replicas:
            preferred_for[p.replicas[0]] = preferred_for.get(p.replicas[0], 0) + 1
        if p.preferred_leader is False and p.leader is not None:
            misled[p.leader] = misled.get(p.leader, 0) + 1
        _partition_findings(p, state, add)
        yield from out
        out.clear()
    _per_broker(misled, named, preferred_for, state, add)
    yield from _cluster_findings(state, now_ms, blockers, add, out)


def _refused_by_kafka(state: KafkaState, add: Any) -> None:
    """Topics and brokers whose znode Kafka's own reader refuses though its fields read (a topic_id that
    is not a Kafka Uuid, a registration without jmx_port): listed as read, with their failure type as
    ``decode_status`` (``model.walk.decode_one``). A placeholder row (nothing read) has none of its fields."""
    for t in state.topics:
        if t.decode_status not in _NOT_REFUSED and t.partition_count is not None:
            add(
                "kafka_cannot_read",
                "error",
                f"topic {t.topic}: Kafka cannot read its znode ({t.decode_status}), and its controller fails on "
                f"it; its {plural(t.partition_count, 'partition')} are shown and judged as the znode lists them",
                t.topic,
            )
    for b in state.brokers:
        if b.decode_status not in _NOT_REFUSED and b.version is not None:
            add(
                "kafka_cannot_read",
                "error",
                f"broker {b.broker_id}: Kafka cannot read its registration ({b.decode_status}), and its controller "
                "fails listing the brokers; it is shown as the znode holds it",
                broker_id=b.broker_id,
            )


_NOT_REFUSED = ("ok", "unreadable")


def _partition_findings(p: KafkaPartition, state: KafkaState, add: Any) -> None:
    """The findings of one partition, through ``add``."""
    where = f"{p.topic}-{p.partition}"
    if p.state_problem is not None and p.state_problem != FailureType.MISSING_NODE and p.health != "unknown":
        add(  # a state Kafka refuses, read all the same (``iter_partitions``)
            "kafka_cannot_read",
            "error",
            f"{where}: Kafka cannot read its state znode ({p.state_problem}); its leader and ISR are shown and "
            "judged as written",
            p.topic,
            p.partition,
        )
    if p.health == "unknown":
        add(
            "unknown_partition_state",
            "warning",
            f"{where}: its state znode cannot be decoded ({state.unreadable_states.get((p.topic, p.partition))}); "
            "its health is unknown",
            p.topic,
            p.partition,
        )
        return
    deleting = " (the topic is being deleted)" if p.pending_deletion else ""
    if p.offline:
        last = ", ".join(str(b) for b in p.isr) or "none"
        dead = [b for b in p.isr if b not in state.registered]
        why = (
            (
                f"its last ISR {plural(len(dead), 'member', counted=False)} {', '.join(map(str, dead))} "
                f"{'are' if len(dead) > 1 else 'is'} not registered (dead)"
            )
            if dead
            else f"last ISR [{last}]"
        )
        leader = "no leader" if p.leader == -1 else f"leader {p.leader} is not registered"
        if p.state_problem == FailureType.MISSING_NODE:
            leader = "its state znode is missing (missing_node), so no leader and no ISR"
            why = "the controller never wrote it, or it was deleted"
        if p.eligible_leader_replicas:  # KRaft, KIP-966: whom the controller may still elect cleanly
            why += f"; eligible leader replicas {list(p.eligible_leader_replicas)} can lead once back, losing nothing"
        add(
            "offline_partition",
            "error",
            f"{where} is offline: {leader}; {why}{deleting}",
            p.topic,
            p.partition,
            dead[0] if dead else None,
        )
    if p.under_replicated:
        rf = len(p.replicas) - len(p.adding_replicas)
        add(
            "under_replicated",
            "warning",
            f"{where}: ISR {list(p.isr)} holds {len(p.isr)} of {rf} replicas{deleting}",
            p.topic,
            p.partition,
        )
    if p.under_min_isr:
        cause = "no leader" if p.leader == -1 else f"ISR {len(p.isr)} < min.insync.replicas {p.min_isr}"
        add(
            "under_min_isr",
            "error",
            f"{where}: {cause} ({_source(p.min_isr_source)}): acks=all producers fail{deleting}",
            p.topic,
            p.partition,
        )
    elif p.at_min_isr:
        add(
            "at_min_isr",
            "warning",
            f"{where}: ISR {len(p.isr)} == min.insync.replicas {p.min_isr} ({_source(p.min_isr_source)}): "
            "one more lost replica stops acks=all producers",
            p.topic,
            p.partition,
        )
    if p.leader_recovery_state == RECOVERING:
        add(
            "leader_recovering",
            "warning",
            f"{where}: leader {p.leader} was elected uncleanly (from outside the ISR) and is still recovering "
            "(leader_recovery_state 1, KIP-704): records the old ISR held may be lost, and the ISR cannot grow "
            "until it finishes",
            p.topic,
            p.partition,
            p.leader,
        )
    if p.preferred_leader is False:
        add(
            "preferred_leader_imbalance",
            "info",
            f"{where}: led by {p.leader}, preferred leader is {p.replicas[0]}",
            p.topic,
            p.partition,
            p.leader,
        )
    strangers = [b for b in p.isr if b not in p.replicas]
    if strangers:
        add(
            "isr_not_in_replicas",
            "error",
            f"{where}: ISR members {strangers} are not replicas",
            p.topic,
            p.partition,
        )
    unregistered = [b for b in p.replicas if b not in state.registered]
    if unregistered:
        add(
            "unregistered_replicas",
            "warning",
            f"{where}: {plural(len(unregistered), 'replica', counted=False)} {unregistered} not registered",
            p.topic,
            p.partition,
            unregistered[0],
        )


def _cluster_findings(
    state: KafkaState, now_ms: int, blockers: dict[str, set[int]], add: Any, out: list[KafkaFinding]
) -> Iterator[KafkaFinding]:
    """Reassignments, stuck deletions (with what blocks them) and failed log directories."""
    for r in state.reassignments:
        add(
            "reassignment_in_flight",
            "info",
            f"{r.topic}-{r.partition} is moving to {list(r.target_replicas)} ({r.source})",
            r.topic,
            r.partition,
        )
    for topic, marker in sorted(state.deletions.items()):
        age = duration_text((now_ms - marker.marked_ms) / 1000, coarse=True) if marker.marked_ms else "an unknown time"
        blocked = sorted(blockers.get(topic, ()))
        why = f"; replicas on unregistered brokers {blocked} block it" if blocked else ""
        add("topic_deletion_pending", "warning", f"topic {topic} was marked for deletion {age} ago{why}", topic)
    for event in state.log_dir_events:
        add(
            "log_dir_failure",
            "error",
            f"broker {event.broker_id} reported a failed log directory ({event.node})",
            broker_id=event.broker_id,
        )
    yield from out


def _per_broker(
    misled: dict[int, int], named: dict[int, int], preferred_for: dict[int, int], state: KafkaState, add: Any
) -> None:
    """Broker-level views of the partition facts: who leads what it should not, who is gone."""
    for broker, count in sorted(misled.items()):
        add(
            "leader_imbalance",
            "info",
            f"broker {broker} leads {plural(count, 'partition')} it is not the preferred leader of; "
            "a preferred replica election would move them back",
            broker_id=broker,
        )
    fenced = {b.broker_id for b in state.brokers if b.fenced}  # KRaft: registered, but not alive
    for broker in sorted(b for b in named if b not in state.registered):
        status = (
            "is fenced (registered with the KRaft controller, but not heartbeating: down or stopped)"
            if broker in fenced
            else "is not registered (dead or decommissioned)"
        )
        add(
            "unregistered_broker",
            "warning",
            f"broker {broker} {status} but is a replica of {named[broker]} "
            f"partitions and the preferred leader of {preferred_for.get(broker, 0)}",
            broker_id=broker,
        )


def _source(source: str) -> str:
    return {
        "topic_override": "topic override",
        "dynamic_cluster_default": "cluster-wide dynamic default",
        "stated_default": "stated default",
        "assumed_kafka_default": "assumed Kafka default 1; server.properties is not in ZooKeeper",
    }.get(source, source)


# --- the summary a terminal leads with --------------------------------------------------------------------

# What a partition-level finding means, said once for all of them (the per-partition detail stays in
# --detail and the machine formats).
MEANING = {
    "offline_partition": "no live leader, unavailable to producers and consumers",
    "under_replicated": "ISR smaller than the replica set",
    "under_min_isr": "ISR below min.insync.replicas (or no leader): acks=all producers fail",
    "at_min_isr": "ISR at min.insync.replicas: one more loss fails acks=all producers",
    "preferred_leader_imbalance": "not led by their preferred replica",
    "unregistered_replicas": "replica lists name unregistered brokers",
    "unknown_partition_state": "state znode unreadable or undecodable: health unknown",
    "isr_not_in_replicas": "ISR names brokers outside the replica set",
    "leader_recovering": "led by a leader elected uncleanly that is still recovering (KIP-704): records may be "
    "lost, the ISR cannot grow",
    "reassignment_in_flight": "being moved between brokers",
    "leader_imbalance": "lead partitions they are not the preferred leader of (a preferred replica election "
    "moves them back)",
}
TOP_TOPICS = 2


def summarize_findings(findings: Sequence[KafkaFinding]) -> list[KafkaFindingSummary]:
    """Per rule, in the order ``sort_findings`` gives (errors first): its count, the most affected
    topics and the brokers it names, and one explanation. A rule about brokers or the cluster (few rows)
    keeps each row's own explanation; a rule about partitions says what it means and where it is."""
    by_rule: dict[tuple[str, str, str], list[KafkaFinding]] = {}
    for f in findings:
        by_rule.setdefault((f.root, f.finding, f.level), []).append(f)
    out = []
    for (root, finding, level), rows in by_rule.items():
        topics = Counter(f.topic for f in rows if f.topic is not None)
        top = tuple(f"{t} ({n})" for t, n in topics.most_common(TOP_TOPICS))
        brokers = tuple(sorted({f.broker_id for f in rows if f.broker_id is not None}))
        if finding in MEANING and len(rows) > 1:
            where = f" in {plural(len(topics), 'topic')}" if topics else ""
            unit = "partition" if any(f.partition is not None for f in rows) else "broker"
            explanation = f"{plural(len(rows), unit)}{where}: {MEANING[finding]}"
        else:
            explanation = "; ".join(f.detail for f in rows[:TOP_TOPICS]) + (
                f"; and {len(rows) - TOP_TOPICS} more" if len(rows) > TOP_TOPICS else ""
            )
        out.append(
            KafkaFindingSummary(
                finding=finding,
                level=level,
                count=len(rows),
                topics=top,
                brokers=brokers,
                explanation=explanation,
                root=root,
            )
        )
    return out
