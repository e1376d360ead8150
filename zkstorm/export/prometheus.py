"""The model's records as Prometheus text exposition, for node_exporter's textfile collector or a
Pushgateway (``-f prometheus``, ``output.Format.PROMETHEUS``).

``series`` picks a view's series by the type of its rows: a row type without bounded series (executor
counters, component streams, znodes) has none, and asking for them is a usage error. What a series
needs besides the rows (a root's stored error counts, its topology names, the supervisors assignments
name) it asks of the view the rows were read through, while the cluster is still open.

Written through ``prometheus_client`` (its own escaping and format, which its parser reads back). Its
escaping covers backslash, quote and newline only, and a textfile is read with ``cat`` too: every label
value is first shown as every other writer shows ZooKeeper's text (``text.visible``: ESC, BEL, OSC 52 and
bidi controls as ``\x1b``, ``\u202e``), in ``Family.add``, the one way a value enters a series. Every
series is a gauge of the state the command read; labels are bounded: a root, a topic, a broker id, a
topology name, a finding kind, a status, an ensemble member (host:port; an ensemble has a handful), never
a partition, a worker or a Storm or Kafka host. The metric names, labels
and units are listed in docs/prometheus.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..layout import name_from_id
from ..records import (
    DecodeFailure,
    KafkaBroker,
    KafkaFinding,
    KafkaPartition,
    StormComponentStats,
    StormSupervisor,
    StormTopology,
    StormWorker,
    Unreadable,
    ZkFinding,
    ZkMember,
)
from ..text import visible


@dataclass
class Family:
    """One metric: its name (``zkstorm_`` added), help text, label names and samples."""

    name: str
    documentation: str
    labels: tuple[str, ...] = ()
    samples: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def add(self, value: float, *label_values: Any) -> Family:
        self.samples.append((tuple(visible(str(v)) for v in label_values), float(value)))
        return self


def exposition(families: Iterable[Family]) -> str:
    """The text format (version 0.0.4) of ``families``, through prometheus_client's own writer."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    built = []
    for family in families:
        gauge = GaugeMetricFamily(f"zkstorm_{family.name}", family.documentation, labels=list(family.labels))
        for values, value in family.samples:
            gauge.add_metric(list(values), value)
        built.append(gauge)

    class _Collector:
        def collect(self) -> Iterator[Any]:
            return iter(built)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector())  # type: ignore[arg-type]
    return generate_latest(registry).decode("utf-8")


def read_families(as_of_secs: float, problems: Sequence[Any]) -> list[Family]:
    """What every output carries: when the data was current, and what could not be read or decoded."""
    return [
        Family("data_timestamp_seconds", "When the ZooKeeper data read was current (epoch seconds).").add(as_of_secs),
        Family("decode_failures", "Znodes read that could not be decoded.").add(
            sum(isinstance(p, DecodeFailure) for p in problems)
        ),
        Family("unreadable_znodes", "Znodes the session was not allowed to read (NoAuth) or that failed.").add(
            sum(isinstance(p, Unreadable) for p in problems)
        ),
    ]


# --- Kafka ------------------------------------------------------------------------------------------------


def kafka_partition_families(root: str, partitions: Sequence[KafkaPartition]) -> list[Family]:
    """Partition totals by health condition, and per topic."""
    total = Family("kafka_partitions", "Partitions.", ("root",)).add(len(partitions), root)
    flags = [
        ("offline", "Partitions without a live leader."),
        ("under_replicated", "Partitions whose ISR is smaller than their replica set."),
        ("under_min_isr", "Partitions whose ISR is below min.insync.replicas (acks=all producers fail)."),
        ("at_min_isr", "Partitions whose ISR is at min.insync.replicas (one more loss blocks acks=all)."),
    ]
    out = [total]
    for flag, text in flags:
        out.append(
            Family(f"kafka_partitions_{flag}", text, ("root",)).add(
                sum(bool(getattr(p, flag)) for p in partitions), root
            )
        )
    out.append(
        Family(
            "kafka_partitions_not_preferred_leader", "Partitions not led by their preferred replica.", ("root",)
        ).add(sum(p.preferred_leader is False for p in partitions), root)
    )
    out.append(
        Family("kafka_partitions_unknown_health", "Partitions whose state znode could not be read.", ("root",)).add(
            sum(p.health == "unknown" for p in partitions), root
        )
    )
    per_topic = {
        name: Family(f"kafka_topic_{name}", text, ("root", "topic"))
        for name, text in (
            ("partitions", "Partitions of the topic."),
            ("offline_partitions", "Offline partitions of the topic."),
            ("under_replicated_partitions", "Under-replicated partitions of the topic."),
            ("under_min_isr_partitions", "Partitions of the topic below min.insync.replicas."),
        )
    }
    counts: dict[str, Counter[str]] = {}
    for p in partitions:
        c = counts.setdefault(p.topic, Counter())
        c["partitions"] += 1
        c["offline_partitions"] += bool(p.offline)
        c["under_replicated_partitions"] += bool(p.under_replicated)
        c["under_min_isr_partitions"] += bool(p.under_min_isr)
    for topic, c in sorted(counts.items()):
        for name, family in per_topic.items():
            family.add(c[name], root, topic)
    return out + list(per_topic.values())


def kafka_broker_families(
    root: str, brokers: Sequence[KafkaBroker], partitions: Sequence[KafkaPartition] | None = None
) -> list[Family]:
    """Registered and unregistered brokers (named in replica lists only), per broker; with partitions,
    how many each broker leads and holds a replica of."""
    registered = [b for b in brokers if b.alive]
    out = [
        Family("kafka_brokers", "Registered brokers.", ("root",)).add(len(registered), root),
        Family(
            "kafka_brokers_unregistered", "Brokers named in replica lists but not registered (dead).", ("root",)
        ).add(len(brokers) - len(registered), root),
    ]
    per_broker = Family(
        "kafka_broker_registered",
        "1 if the broker is registered, 0 if only a replica list names it.",
        ("root", "broker_id"),
    )
    for b in sorted(brokers, key=lambda b: b.broker_id):
        per_broker.add(1 if b.alive else 0, root, b.broker_id)
    out.append(per_broker)
    if partitions is not None:
        leaders = Counter(p.leader for p in partitions if p.leader is not None and p.leader >= 0)
        replicas = Counter(r for p in partitions for r in p.replicas)
        lead = Family("kafka_broker_leader_partitions", "Partitions the broker leads.", ("root", "broker_id"))
        hold = Family(
            "kafka_broker_replica_partitions", "Partitions the broker is a replica of.", ("root", "broker_id")
        )
        for b in sorted(brokers, key=lambda b: b.broker_id):
            lead.add(leaders[b.broker_id], root, b.broker_id)
            hold.add(replicas[b.broker_id], root, b.broker_id)
        out += [lead, hold]
    return out


def kafka_finding_families(root: str, findings: Sequence[KafkaFinding]) -> list[Family]:
    """Health findings counted by rule and level."""
    family = Family(
        "kafka_findings", "Health findings (kafka health), by rule and level.", ("root", "finding", "level")
    )
    for (finding, level), count in sorted(Counter((f.finding, f.level) for f in findings).items()):
        family.add(count, root, finding, level)
    return [family]


# --- Storm ------------------------------------------------------------------------------------------------


def storm_topology_families(
    root: str, topologies: Sequence[StormTopology], errors_stored: dict[str, int]
) -> list[Family]:
    """Topologies by status; per topology (by name) its workers, executors and stored errors."""
    by_status = Family("storm_topologies", "Topologies by status.", ("root", "status"))
    for status, count in sorted(Counter(t.status for t in topologies).items()):
        by_status.add(count, root, status)
    workers = Family("storm_topology_workers", "Workers the topology asks for.", ("root", "topology"))
    executors = Family("storm_topology_executors", "Executors of the topology.", ("root", "topology"))
    errors = Family(
        "storm_topology_errors_stored",
        "Errors Storm keeps for the topology (newest 10 per component).",
        ("root", "topology"),
    )
    for t in sorted(topologies, key=lambda t: (t.name, t.topology_id)):
        workers.add(t.num_workers or 0, root, t.name)
        executors.add(t.num_executors or 0, root, t.name)
        errors.add(errors_stored.get(t.topology_id, 0), root, t.name)
    return [by_status, workers, executors, errors]


def storm_worker_families(root: str, workers: Sequence[StormWorker], names: dict[str, str]) -> list[Family]:
    """Workers with a heartbeat, stale ones, and the oldest heartbeat, per topology (by name)."""
    total = Family("storm_workers", "Workers with a heartbeat.", ("root", "topology"))
    stale = Family("storm_workers_stale", "Workers whose heartbeat is stale.", ("root", "topology"))
    oldest = Family(
        "storm_worker_heartbeat_age_max_seconds", "The oldest worker heartbeat's age.", ("root", "topology")
    )
    by_topology: dict[str, list[StormWorker]] = {}
    for w in workers:
        by_topology.setdefault(names.get(w.topology_id, w.topology_id), []).append(w)
    for name, mine in sorted(by_topology.items()):
        total.add(len(mine), root, name)
        stale.add(sum(bool(w.stale) for w in mine), root, name)
        oldest.add(max(w.age_secs or 0 for w in mine), root, name)
    return [
        Family("storm_stale_workers", "Workers whose heartbeat is stale, all topologies.", ("root",)).add(
            sum(bool(w.stale) for w in workers), root
        ),
        total,
        stale,
        oldest,
    ]


def storm_supervisor_families(
    root: str, supervisors: Sequence[StormSupervisor], missing: Sequence[str]
) -> list[Family]:
    """Live supervisors, those assignments name but that are not registered, and slots."""
    used = sum(len(s.used_ports) for s in supervisors)
    slots = sum(len(s.ports) for s in supervisors)
    return [
        Family("storm_supervisors", "Registered (live) supervisors.", ("root",)).add(len(supervisors), root),
        Family(
            "storm_supervisors_missing",
            "Supervisors an assignment places executors on that are not registered.",
            ("root",),
        ).add(len(missing), root),
        Family("storm_slots", "Worker slots of the live supervisors.", ("root", "state"))
        .add(used, root, "used")
        .add(slots - used, root, "free"),
    ]


# (record field, metric name, help, scale): each a gauge per component and window, absent when None
_COMPONENT_SERIES = (
    ("emitted", "emitted", "Tuples emitted in the window (Storm UI's Emitted).", 1),
    ("transferred", "transferred", "Tuples transferred in the window (Storm UI's Transferred).", 1),
    ("acked", "acked", "Tuples acked in the window.", 1),
    ("failed", "failed", "Tuples failed in the window.", 1),
    ("executed", "executed", "Tuples executed in the window (bolts).", 1),
    ("complete_latency_ms", "complete_latency_seconds", "Average complete latency (spouts), weighted by acked.", 1e-3),
    ("execute_latency_ms", "execute_latency_seconds", "Average execute latency (bolts), weighted by executed.", 1e-3),
    ("process_latency_ms", "process_latency_seconds", "Average process latency (bolts), weighted by executed.", 1e-3),
    (
        "capacity",
        "capacity",
        "The busiest executor's share of the last 10 minutes spent executing (bolts; above 1 is overloaded).",
        1,
    ),
    ("executors", "executors", "Executors with a heartbeat.", 1),
    ("stale_executors", "stale_executors", "Assigned executors whose worker heartbeat is stale or missing.", 1),
)


def storm_component_families(root: str, components: Sequence[StormComponentStats]) -> list[Family]:
    """Storm UI's topology page per component (by topology name, component and window): tuple counts,
    latencies in seconds, capacity as a ratio, and executors without a fresh heartbeat. The topology's
    name is the one its id gives (``layout.name_from_id``): stable across resubmissions, bounded."""
    labels = ("root", "topology", "component", "window")
    families = [
        (attr, scale, Family(f"storm_component_{name}", text, labels)) for attr, name, text, scale in _COMPONENT_SERIES
    ]
    for c in sorted(components, key=lambda c: (c.component, c.window)):
        topology = name_from_id(c.topology_id)
        for attr, scale, family in families:
            value = getattr(c, attr)
            if value is not None:
                family.add(value * scale, root, topology, c.component, c.window)
    return [family for _, _, family in families]


# --- ZooKeeper itself ---------------------------------------------------------------------------------------

# (record field, metric name, help, scale): a gauge per member, absent where the member did not say
_MEMBER_SERIES = (
    ("zxid_lag", "zxid_lag", "Transactions the member is behind the leader.", 1),
    ("latency_avg_ms", "latency_avg_seconds", "The member's average request latency.", 1e-3),
    ("latency_max_ms", "latency_max_seconds", "The member's largest request latency.", 1e-3),
    ("outstanding_requests", "outstanding_requests", "Requests queued on the member.", 1),
    ("connections", "connections", "Client connections to the member.", 1),
    ("znode_count", "znodes", "Znodes in the member's tree.", 1),
    ("watch_count", "watches", "Watches set on the member.", 1),
    ("ephemerals_count", "ephemerals", "Ephemeral znodes in the member's tree.", 1),
    ("approximate_data_bytes", "approximate_data_bytes", "The member's tree's data, approximately.", 1),
    ("open_file_descriptors", "open_file_descriptors", "File descriptors the member has open.", 1),
    ("max_file_descriptors", "max_file_descriptors", "The member's open file limit.", 1),
)


def member_label(member: ZkMember) -> str:
    return f"{member.host}:{member.port}" if member.port is not None else member.host


def zk_member_families(members: Sequence[ZkMember]) -> list[Family]:
    """The ensemble: members by whether they serve, whether one leads, and each member's mode and figures."""
    serving = [m for m in members if m.serving and m.mode != "read-only"]
    out = [
        Family("zk_members", "Members of the ensemble (the --zk hosts and the peers its configuration names).").add(
            len(members)
        ),
        Family("zk_members_serving", "Members that serve clients (leading or following; read-only ones not).").add(
            len(serving)
        ),
        Family("zk_quorum", "1 if a member leads (the ensemble takes writes), else 0.").add(
            1 if any(m.mode in ("leader", "standalone") for m in members) else 0
        ),
    ]
    up = Family("zk_member_up", "1 if the member answers, 0 if it is unreachable.", ("member",))
    info = Family(
        "zk_member_info",
        "The member's mode, version and server id (always 1).",
        ("member", "mode", "version", "server_id"),
    )
    leader = Family("zk_member_leader", "1 if the member leads.", ("member",))
    series = [
        (attr, scale, Family(f"zk_member_{name}", text, ("member",))) for attr, name, text, scale in _MEMBER_SERIES
    ]
    for m in sorted(members, key=member_label):
        name = member_label(m)
        up.add(0 if m.mode == "unreachable" else 1, name)
        info.add(1, name, m.mode, m.version or "", "" if m.server_id is None else m.server_id)
        leader.add(1 if m.mode in ("leader", "standalone") else 0, name)
        for attr, scale, family in series:
            value = getattr(m, attr)
            if value is not None:
                family.add(value * scale, name)
    return [*out, up, info, leader, *(family for _, _, family in series)]


def zk_finding_families(findings: Sequence[ZkFinding]) -> list[Family]:
    """The ensemble's health findings counted by rule and level."""
    family = Family("zk_findings", "Health findings (zk health), by rule and level.", ("finding", "level"))
    for (finding, level), count in sorted(Counter((f.finding, f.level) for f in findings).items()):
        family.add(count, finding, level)
    return [family]


# --- a view's series, by the type of its rows ----------------------------------------------------------------


def _kafka_health(findings: Sequence[KafkaFinding], report: Any) -> list[Family]:
    """``kafka health``: the partitions and brokers of the same walk, and the findings (``model.KafkaHealth``)."""
    return [
        *kafka_partition_families(report.root, report.partitions),
        *kafka_broker_families(report.root, report.brokers, report.partitions),
        *kafka_finding_families(report.root, findings),
    ]


_SERIES: dict[type, Callable[[Sequence[Any], Any], list[Family]]] = {
    KafkaFinding: _kafka_health,
    KafkaPartition: lambda rows, view: kafka_partition_families(view.root, rows),
    KafkaBroker: lambda rows, view: kafka_broker_families(view.root, rows),
    StormTopology: lambda rows, view: storm_topology_families(view.root, rows, view.stored_error_counts()),
    StormWorker: lambda rows, view: storm_worker_families(view.root, rows, view.topology_ids()),
    StormSupervisor: lambda rows, view: storm_supervisor_families(view.root, rows, view.missing_supervisors()),
    StormComponentStats: lambda rows, view: storm_component_families(view.root, rows),
    ZkMember: lambda rows, _view: zk_member_families(rows),
    ZkFinding: lambda rows, ensemble: [*zk_member_families(ensemble.members()), *zk_finding_families(rows)],
}


def series(primary: type, rows: Sequence[Any], view: Any) -> list[Family]:
    """The series of a view's ``rows`` (all of type ``primary``), read through ``view`` (a ``StormCluster``,
    a ``KafkaCluster``, for Kafka's findings the ``KafkaHealth`` report, for the ensemble's its
    ``Ensemble``); ``UsageError`` for a type that has none."""
    make = _SERIES.get(primary)
    if make is None:
        raise UsageError(f"{primary.__name__} rows have no Prometheus form (their series would be unbounded)")
    return make(rows, view)
