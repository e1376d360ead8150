"""A ZooKeeper to KRaft migration (KIP-866) checked from both sides: the cluster's ZooKeeper data and its
KRaft controllers' metadata log, read together (``zkstorm kafka migration``), as findings an operator
reads before finalizing.

What is read, and where Kafka keeps it (apache/kafka 3.9):

- the phase: the log's ``ZkMigrationStateRecord`` (``ZkMigrationState``: ``PRE_MIGRATION`` while the
  controllers wait for every ZooKeeper broker to register with them, ``MIGRATION`` once the data is copied
  and the controller writes to both, ``POST_MIGRATION`` once finalized; ``metadata/.../migration/
  ZkMigrationState.java``), ZooKeeper's ``/migration`` (``MigrationZNode``: the KRaft offset and epoch last
  written to ZooKeeper, ``ZkMigrationLeadershipState``) and ``/controller``'s ``kraftControllerEpoch`` (a
  KRaft controller holds ZooKeeper's controller role; ``KRaftMigrationDriver`` claims it), and the brokers
  still registered in ZooKeeper (still in ZooKeeper mode: docs/ops.html "ZooKeeper to KRaft Migration"
  restarts each in KRaft mode before the controllers are).
- what ``/migration`` recorded against the log's end: metadata records after that offset are not yet in
  ZooKeeper (``KRaftMigrationDriver`` writes each committed delta, then the offset).
- the data both sides hold: topics (by name and id), each partition's replica assignment, configs (every
  entity type; a secret's value is compared by its presence only: ZooKeeper holds it encrypted or salted,
  KRaft otherwise) and ACLs; each one side holds and the other not, or holds otherwise, is an
  error-level finding, which ``--check`` exits 6 on (information once the migration is finalized: ZooKeeper
  is then history, and what differs is what changed since). Leaders and ISRs are not compared: they move in
  seconds, and ZooKeeper gets them after the log.

The ZooKeeper side is any ``Cluster`` (a live ensemble or ZooKeeper's files); the KRaft side a ``Cluster``
on a controller's metadata folder (``from_kraft``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..records import KafkaAcl, KafkaClusterId, KafkaConfig, KafkaFinding
from .kafka import KafkaCluster, sort_findings

# ZkMigrationState's values (metadata/src/main/java/org/apache/kafka/metadata/migration/ZkMigrationState.java,
# 3.5+: MIGRATION and PRE_MIGRATION swapped from 3.4's)
MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION"}
SHOWN = 8  # differences named one by one per kind; the rest are counted in one finding


@dataclass
class MigrationReport:
    """The phase, the offsets, and the findings (errors first): what ``kafka migration`` shows."""

    phase: str  # not_started, pre_migration, dual_write, finalized, unknown
    kraft_state: str | None  # ZkMigrationState's name, None: the log holds no ZkMigrationStateRecord
    recorded_offset: int | None  # /migration's kraft_metadata_offset
    log_end_offset: int | None  # the last KRaft offset read: the log's end, unless read as of an offset or time
    zookeeper_brokers: tuple[int, ...]
    findings: list[KafkaFinding] = field(default_factory=list)


class _Findings:
    def __init__(self, root: str, limit: int | None) -> None:
        self.root = root
        self.limit = limit  # differences named one by one per kind (None: all)
        self.level = "error"  # of a difference: info once the migration is finalized (ZooKeeper is history)
        self.out: list[KafkaFinding] = []

    def add(self, kind: str, level: str, detail: str, *, topic: str | None = None, partition: int | None = None,
            broker_id: int | None = None) -> None:  # fmt: skip
        self.out.append(
            KafkaFinding(
                finding=kind,
                level=level,
                topic=topic,
                partition=partition,
                broker_id=broker_id,
                detail=detail,
                root=self.root,
            )
        )

    def differences(self, kind: str, items: list[tuple[str, str | None, int | None]], what: str) -> None:
        """One error per difference (``detail``, topic, partition), the first ``limit``; the rest in one."""
        limit = len(items) if self.limit is None else self.limit
        for detail, topic, partition in items[:limit]:
            self.add(kind, self.level, detail, topic=topic, partition=partition)
        if len(items) > limit:
            self.add(kind, self.level, f"and {len(items) - limit:,} more {what} that differ (--every lists them all)")


def check_migration(zookeeper: KafkaCluster, kraft: KafkaCluster, *, every: bool = False) -> MigrationReport:
    """The migration as both sides say it (see the module docstring). ``kraft`` is a KRaft folder's view
    (``from_kraft(...).kafka``); ``every``: one finding per difference, none folded."""
    source: Any = kraft.cluster.source
    if not hasattr(source, "records_after"):
        raise UsageError("the KRaft side of a migration check is a KRaft metadata folder's view: from_kraft(DIR).kafka")
    theirs = kraft.state(other=True)  # connects the KRaft source: its image is read
    image = source.image
    zk = zookeeper.state(other=True)
    findings = _Findings(zookeeper.root, None if every else SHOWN)

    state_code = image.migration_state
    kraft_state = MIGRATION_STATES.get(state_code, f"state {state_code}") if state_code is not None else None
    migration = zk.migration
    recorded = migration.kraft_metadata_offset if migration is not None else None
    end = source.plan.offset if source.plan is not None else None  # the log's end, or the --at offset
    registered = tuple(sorted(zk.registered))
    phase = _phase(kraft_state, migration is not None)
    report = MigrationReport(phase, kraft_state, recorded, end, registered)

    if phase == "finalized":  # ZooKeeper is written no more: what differs is what changed since, not a fault
        findings.level = "info"
    _same_cluster(zookeeper, kraft, source, findings)
    _phase_findings(report, zk, findings)
    if migration is not None and end is not None and phase in ("dual_write", "pre_migration"):
        _lag(source, migration.kraft_metadata_offset, end, findings)

    _topics(zk, theirs, findings)
    _assignments(zk, theirs, findings)
    _configs(zk.configs, theirs.configs, findings)
    _acls(
        [r for r in zk.other if isinstance(r, KafkaAcl)], [r for r in theirs.other if isinstance(r, KafkaAcl)], findings
    )
    report.findings = sort_findings(findings.out)
    return report


def _phase(kraft_state: str | None, znode: bool) -> str:
    if kraft_state == "PRE_MIGRATION":
        return "pre_migration"
    if kraft_state == "MIGRATION":
        return "dual_write"
    if kraft_state == "POST_MIGRATION":
        return "finalized"
    if kraft_state in (None, "NONE") and not znode:
        return "not_started"
    return "unknown"


def _same_cluster(zookeeper: KafkaCluster, kraft: KafkaCluster, source: Any, findings: _Findings) -> None:
    """The two sides are one cluster: ZooKeeper's ``cluster/id`` is the KRaft folder's ``cluster.id``
    (a migration keeps the id: docs/ops.html has the controllers formatted with it)."""
    ids = [
        r.cluster_id
        for r in zookeeper.cluster.records(f"{zookeeper.root.rstrip('/')}/cluster/id", depth=0, roots=zookeeper.roots)
        if isinstance(r, KafkaClusterId)
    ]
    theirs = getattr(source, "cluster_id", None)
    if ids and theirs and ids[0] != theirs:
        findings.add(
            "migration_other_cluster",
            "error",
            f"ZooKeeper's cluster id is {ids[0]}, the KRaft folder's meta.properties says {theirs}: not the same "
            "cluster, so every other finding compares two clusters",
        )


def _phase_findings(report: MigrationReport, zk: Any, findings: _Findings) -> None:
    migration = zk.migration
    controller = zk.controller
    kraft_epoch = controller.kraft_controller_epoch if controller is not None else None
    brokers = ", ".join(str(b) for b in report.zookeeper_brokers) or "none"
    holder = (
        f"ZooKeeper's /controller is held by KRaft controller {controller.broker_id} (KRaft epoch {kraft_epoch})"
        if controller is not None and kraft_epoch is not None
        else f"ZooKeeper's /controller is held by ZooKeeper-mode broker {controller.broker_id}"
        if controller is not None
        else "no /controller in ZooKeeper"
    )
    written = (
        f"/migration names KRaft offset {migration.kraft_metadata_offset} (epoch {migration.kraft_metadata_epoch}), "
        f"written by KRaft controller {migration.kraft_controller_id}"
        if migration is not None
        else "no /migration in ZooKeeper"
    )
    said = {
        "not_started": "no migration has started: the KRaft log has no migration state and ZooKeeper no /migration",
        "pre_migration": "pre-migration: the KRaft controllers wait for every ZooKeeper broker to register with "
        "them before they copy the metadata",
        "dual_write": (
            f"dual-write: the KRaft controllers hold the metadata and write it to ZooKeeper too; brokers still "
            f"registered in ZooKeeper (ZooKeeper mode): {brokers}"
            + ("" if report.zookeeper_brokers else "; every broker runs in KRaft mode: ready to finalize")
        ),
        "finalized": "finalized: the cluster runs on KRaft alone; ZooKeeper's data is no longer written",
        "unknown": f"the KRaft log says {report.kraft_state or 'no migration state'} and ZooKeeper "
        f"{'has' if migration is not None else 'has no'} /migration: the two do not tell one phase",
    }[report.phase]
    level = "error" if report.phase == "unknown" else "info"
    findings.add("migration_phase", level, f"{said} (KRaft ZkMigrationState {report.kraft_state}; {written}; {holder})")


def _lag(source: Any, recorded: int, end: int, findings: _Findings) -> None:
    """The records after /migration's offset: not yet in ZooKeeper (no-op records change nothing there)."""
    if recorded >= end:
        return
    after = source.records_after(recorded, end)
    changing = {name: n for name, n in after.items() if name != "NoOpRecord"}
    if not changing:
        findings.add(
            "migration_behind",
            "info",
            f"/migration names KRaft offset {recorded}, the log ends at {end}: only no-op records after it",
        )
        return
    kinds = ", ".join(f"{n} {name}" for name, n in sorted(changing.items()))
    findings.add(
        "migration_behind",
        "warning",
        f"/migration names KRaft offset {recorded}, the log ends at {end}: {sum(changing.values()):,} metadata "
        f"records are not yet written to ZooKeeper ({kinds}); the differences found may be them",
    )


def _topics(zk: Any, kraft: Any, findings: _Findings) -> None:
    ours = {t.topic: t for t in zk.topics}
    theirs = {t.topic: t for t in kraft.topics}
    items: list[tuple[str, str | None, int | None]] = []
    for name in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(name), theirs.get(name)
        if b is None:
            items.append((f"topic {name} is in ZooKeeper only", name, None))
        elif a is None:
            items.append((f"topic {name} is in the KRaft log only", name, None))
        elif a.topic_id != b.topic_id:
            items.append((f"topic {name}: id {a.topic_id} in ZooKeeper, {b.topic_id} in the KRaft log", name, None))
    findings.differences("migration_topic_differs", items, "topics")


def _assignments(zk: Any, kraft: Any, findings: _Findings) -> None:
    def by_key(rows: Iterable[Any]) -> dict[tuple[str, int], tuple[Any, ...]]:
        return {(a.topic, a.partition): (a.replicas, a.adding_replicas, a.removing_replicas) for a in rows}

    ours, theirs = by_key(zk.assignments), by_key(kraft.assignments)
    topics = {t for t, _ in ours} & {t for t, _ in theirs}  # a topic on one side only is one finding above
    items: list[tuple[str, str | None, int | None]] = []
    for key in sorted(k for k in ours.keys() | theirs.keys() if k[0] in topics):
        a, b = ours.get(key), theirs.get(key)
        if a == b:
            continue
        topic, partition = key
        items.append(
            (
                f"{topic}-{partition}: replicas {_replicas(a)} in ZooKeeper, {_replicas(b)} in the KRaft log",
                topic,
                partition,
            )
        )
    findings.differences("migration_assignment_differs", items, "partitions")


def _replicas(entry: tuple[Any, ...] | None) -> str:
    if entry is None:
        return "none (no such partition)"
    replicas, adding, removing = entry
    text = "[" + ",".join(str(r) for r in replicas) + "]"
    if adding or removing:
        text += f" (adding {list(adding)}, removing {list(removing)})"
    return text


def _config_map(rows: Iterable[KafkaConfig]) -> dict[tuple[str, str, str], KafkaConfig]:
    return {(c.entity_type, c.entity_name, c.key): c for c in rows if c.key is not None}


def _same_value(a: KafkaConfig, b: KafkaConfig) -> bool:
    """Equal, or both secrets (compared by presence only), or the same number written two ways (a quota
    ``1048576`` and ``1048576.0``)."""
    if a.sensitive or b.sensitive or a.value == b.value:
        return True
    try:
        return float(a.value or "") == float(b.value or "")
    except ValueError:
        return False


def _configs(zk: Iterable[KafkaConfig], kraft: Iterable[KafkaConfig], findings: _Findings) -> None:
    ours, theirs = _config_map(zk), _config_map(kraft)
    items: list[tuple[str, str | None, int | None]] = []
    for key in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(key), theirs.get(key)
        entity_type, entity_name, name = key
        where = f"config {entity_type}/{entity_name} {name}"
        topic = entity_name if entity_type == "topics" else None
        if b is None:
            assert a is not None
            items.append((f"{where} = {_shown(a)} in ZooKeeper only", topic, None))
        elif a is None:
            items.append((f"{where} = {_shown(b)} in the KRaft log only", topic, None))
        elif not _same_value(a, b):
            items.append((f"{where}: {_shown(a)} in ZooKeeper, {_shown(b)} in the KRaft log", topic, None))
    findings.differences("migration_config_differs", items, "config keys")


def _shown(config: KafkaConfig) -> str:
    return "<redacted>" if config.sensitive else repr(config.value)


def _acl_key(a: KafkaAcl) -> tuple[str, ...]:
    return (
        a.pattern_type,
        a.resource_type,
        a.resource_name,
        a.principal or "",
        a.permission_type or "",
        a.operation or "",
        a.host or "",
    )


def _acls(zk: list[KafkaAcl], kraft: list[KafkaAcl], findings: _Findings) -> None:
    ours = {_acl_key(a) for a in zk if a.principal}
    theirs = {_acl_key(a) for a in kraft if a.principal}
    items: list[tuple[str, str | None, int | None]] = []
    for key in sorted(ours ^ theirs):
        pattern, kind, name, principal, permission, operation, host = key
        side = "ZooKeeper" if key in ours else "the KRaft log"
        topic = name if kind == "Topic" and pattern == "LITERAL" else None
        items.append(
            (
                f"ACL {pattern} {kind}:{name} {principal} {permission} {operation} from {host} in {side} only",
                topic,
                None,
            )
        )
    findings.differences("migration_acl_differs", items, "ACLs")
