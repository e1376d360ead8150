"""The history's metrics, computed from the facts of the whole history (``facts``: what is kept of each
snapshot), so that a nightly run reads only the new snapshots.

Most metrics are a fact as it is; the rest (de-duplicated errors, runs of consecutive snapshots, flaps,
absences) need every snapshot and read only facts, which are small. Every metric is keyed by ``cluster``
and ``root`` (the Storm root or Kafka chroot its rows were read under: two clusters on one ensemble are
two histories); per-snapshot metrics carry ``snapshot_time``. ZooKeeper's own subtrees are the
ensemble's and have no root.

A metric whose rows of a snapshot come from that snapshot's facts alone (``per_snapshot``) is computed,
in a nightly run, from the new nights' facts only, and its rows are appended to its table
(``jobs/store.py``); the others are computed from every kept fact each run.

A new metric: a fact (``Window`` → rows with ``cluster`` and ``snapshot_id``, in ``storm_facts`` or
``kafka_facts``) if it needs a snapshot's tables, and a ``Metric`` here whose ``compute`` reads facts
(``History``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .facts import ZOOKEEPER_FACTS, Tables, presence_grid
from .facts import spark_functions as _F
from .facts import spark_window as _window
from .kafka_facts import KAFKA_FACTS
from .storm_facts import STORM_FACTS

CHRONIC_SNAPSHOTS = 3  # under-replicated in this many consecutive snapshots = chronic
BUSY_CAPACITY = 0.8  # Storm UI flags a bolt whose capacity nears 1: it cannot keep up
BUSY_SNAPSHOTS = 2  # above it in this many consecutive snapshots, up to the newest = stays busy


@dataclass
class History:
    """What metrics are computed from: every fact of the history (``fact(name)``), the snapshot frame
    of every snapshot in it (``snaps``: cluster, snapshot_id, snapshot_time, idx, prev_id) and the id of
    each cluster's newest snapshot (``latest``)."""

    facts: Tables
    snaps: Any
    latest: list[str] = field(default_factory=list)  # each cluster's newest snapshot id
    computed: dict[str, Any] = field(default_factory=dict)  # metric name → its DataFrame, once computed

    def fact(self, name: str) -> Any | None:
        return self.facts.table(name)


# --- facts: each system's in its module (``storm_facts``, ``kafka_facts``, ``facts``) ---------------------

FACTS = [*STORM_FACTS, *KAFKA_FACTS, *ZOOKEEPER_FACTS]  # every fact of a snapshot
SNAPSHOT_TABLES = sorted({name for fact in FACTS for name in fact.tables})  # what the history reads


# --- metrics over the whole history ----------------------------------------------------------------------


def as_kept(fact: str) -> Callable[[History], Any | None]:
    """A metric that is a fact as it is, without the snapshot id."""

    def compute(h: History) -> Any | None:
        rows = h.fact(fact)
        return None if rows is None else rows.drop("snapshot_id")

    compute.__doc__ = f"The {fact} fact of every snapshot."
    return compute


def _errors(h: History) -> Any | None:
    return h.fact("storm_errors_unique")


def storm_errors_daily(h: History) -> Any | None:
    e = _errors(h)
    if e is None:
        return None
    F = _F()
    return (
        e.withColumn("day", F.to_date("error_at"))
        .groupBy("cluster", "root", "day", "topology_id", "component")
        .count()
        .withColumnRenamed("count", "errors")
    )


def signature_column(column: Any) -> Any:
    """The normalised first line of an error: numbers, hex ids and quoted values replaced, so the same
    failure on different hosts, ports and offsets counts as one signature."""
    F = _F()
    text = F.regexp_replace(column, r"0x[0-9a-fA-F]+", "0x?")
    text = F.regexp_replace(text, r"[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}", "<uuid>")
    text = F.regexp_replace(text, r"\d+", "N")
    return F.substring(F.trim(text), 1, 200)


def storm_error_signatures(h: History) -> Any | None:
    e = _errors(h)
    if e is None:
        return None
    F = _F()
    return (
        e.withColumn("signature", signature_column(F.col("first_line")))
        .groupBy("cluster", "root", "signature")
        .agg(
            F.count(F.lit(1)).alias("errors"),
            F.countDistinct("topology_id").alias("topologies"),
            F.countDistinct("component").alias("components"),
            F.min("error_at").alias("first_seen"),
            F.max("error_at").alias("last_seen"),
        )
    )


def storm_supervisors(h: History) -> Any | None:
    """Per snapshot: supervisors present, missing (seen before in this cluster), restarted (uptime went
    down since the previous snapshot) and slot utilisation (used ports / ports)."""
    sup = h.fact("storm_supervisor_presence")
    if sup is None:
        return None
    F = _F()
    grid = presence_grid(h.snaps, sup, "hostname")
    first_seen = (
        sup.join(h.snaps.select("snapshot_id", "idx"), "snapshot_id")
        .groupBy("cluster", "root", "hostname")
        .agg(F.min("idx").alias("first_idx"))
    )
    missing = (
        grid.join(first_seen, ["cluster", "root", "hostname"])
        .where(~F.col("present") & (F.col("idx") > F.col("first_idx")))
        .groupBy("snapshot_id", "root")
        .count()
        .withColumnRenamed("count", "missing")
    )
    restarts = _restarts(h).groupBy("snapshot_id", "root").count().withColumnRenamed("count", "restarts")
    slots = sup.groupBy("snapshot_id", "root").agg(
        F.count(F.lit(1)).alias("present"),
        F.sum("used_slots").alias("used_slots"),
        F.sum("slots").alias("slots"),
    )
    # every snapshot of a cluster, for each root that had supervisors in it
    return (
        grid.select("cluster", "snapshot_id", "snapshot_time", "root")
        .distinct()
        .join(slots, ["snapshot_id", "root"], "left")
        .join(missing, ["snapshot_id", "root"], "left")
        .join(restarts, ["snapshot_id", "root"], "left")
        .fillna(0, ["present", "missing", "restarts", "used_slots", "slots"])
        .withColumn(
            "slot_utilisation_pct",
            F.when(F.col("slots") > 0, F.round(100.0 * F.col("used_slots") / F.col("slots"), 1)),
        )
        .drop("snapshot_id")
    )


def _restarts(h: History) -> Any:
    restarts = h.fact("storm_supervisor_restarts")
    if restarts is None:
        return h.snaps.select(
            "cluster", "snapshot_id", _F().lit("").alias("root"), _F().lit("").alias("hostname")
        ).limit(0)
    return restarts


def storm_supervisor_flaps(h: History) -> Any | None:
    """Per supervisor host: how often it came back after being absent (a flap), how often it restarted."""
    sup = h.fact("storm_supervisor_presence")
    if sup is None:
        return None
    F, W = _F(), _window()
    grid = presence_grid(h.snaps, sup, "hostname")
    by_host = W.partitionBy("cluster", "root", "hostname").orderBy("idx")
    flagged = grid.withColumn("was_present", F.lag("present").over(by_host)).withColumn(
        "seen_before", F.max(F.col("present").cast("int")).over(by_host.rowsBetween(W.unboundedPreceding, -1))
    )
    returns = flagged.where(F.col("present") & ~F.col("was_present") & (F.col("seen_before") == 1))
    absent = flagged.where(~F.col("present") & (F.col("seen_before") == 1))
    host = ["cluster", "root", "hostname"]
    return (
        sup.select(*host)
        .distinct()
        .join(returns.groupBy(*host).count().withColumnRenamed("count", "flaps"), host, "left")
        .join(_restarts(h).groupBy(*host).count().withColumnRenamed("count", "restarts"), host, "left")
        .join(absent.groupBy(*host).count().withColumnRenamed("count", "snapshots_absent"), host, "left")
        .fillna(0, ["flaps", "restarts", "snapshots_absent"])
    )


def storm_busy_components(h: History) -> Any | None:
    """Bolts whose capacity stays above ``BUSY_CAPACITY``: above it in at least ``BUSY_SNAPSHOTS``
    consecutive snapshots up to the newest, with how many and the lowest capacity in that run."""
    c = h.fact("storm_component_trend")
    if c is None:
        return None
    F, W = _F(), _window()
    busy = c.where(F.col("capacity") > BUSY_CAPACITY).join(h.snaps.select("snapshot_id", "idx"), "snapshot_id")
    by_component = W.partitionBy("cluster", "root", "component_name").orderBy("idx")
    runs = busy.withColumn("run", F.col("idx") - F.row_number().over(by_component))
    last_idx = h.snaps.groupBy("cluster").agg(F.max("idx").alias("last_idx"))
    return (
        runs.groupBy("cluster", "root", "component_name", "run")
        .agg(
            F.count(F.lit(1)).alias("busy_snapshots"),
            F.min("capacity").alias("lowest_capacity"),
            F.max("idx").alias("end_idx"),
        )
        .join(last_idx, "cluster")
        .where((F.col("end_idx") == F.col("last_idx")) & (F.col("busy_snapshots") >= BUSY_SNAPSHOTS))
        .drop("run", "end_idx", "last_idx")
    )


def storm_failure_rises(h: History) -> Any | None:
    """Components whose failed tuples (last 10 minutes) rose from one snapshot to the next: the sum of
    the rises over the history and in how many snapshots they rose."""
    rises = h.fact("storm_failure_rise_events")
    if rises is None:
        return None
    F = _F()
    return rises.groupBy("cluster", "root", "component_name").agg(
        F.sum("failure_rise").alias("failure_rise"), F.count(F.lit(1)).alias("snapshots_rising")
    )


def kafka_chronic_under_replicated(h: History) -> Any | None:
    """Partitions under-replicated in at least ``CHRONIC_SNAPSHOTS`` consecutive snapshots: each run
    with its length, first and last snapshot time, and whether it still goes on in the newest one. The
    runs that ended are a fact of the snapshot that ended them; those going on are the newest
    snapshot's under-replicated partitions, with their run so far: no night's rows are read twice."""
    under = h.fact("kafka_under_replicated")
    if under is None:
        return None
    F = _F()
    columns = [
        "cluster",
        "root",
        "topic",
        "partition",
        F.col("streak").alias("consecutive_snapshots"),
        "since",
        "until",
    ]
    ongoing = (
        under.where(F.col("snapshot_id").isin(h.latest))
        .join(h.snaps.select("snapshot_id", F.col("snapshot_time").alias("until")), "snapshot_id")
        .select(*columns, F.lit(True).alias("ongoing"))
    )
    ended = h.fact("kafka_under_replicated_ended")
    runs = ongoing if ended is None else ended.select(*columns, F.lit(False).alias("ongoing")).unionByName(ongoing)
    return runs.where(F.col("consecutive_snapshots") >= CHRONIC_SNAPSHOTS)


def zookeeper_subtree_bytes(h: History) -> Any | None:
    """Per snapshot: data bytes and znodes of each subtree two levels deep, with its meaning."""
    u = h.fact("zookeeper_usage")
    if u is None:
        return None
    F = _F()
    return u.where(F.col("by") == "subtree").select(
        "cluster", "snapshot_time", F.col("key").alias("subtree"), "meaning", "znodes", "data_bytes"
    )


def zookeeper_record_kinds(h: History) -> Any | None:
    """Per snapshot: data bytes and znodes of each record kind (``storm_worker``, ``kafka_consumer_offset``),
    named with its root where it has one (``kafka_consumer_offset /kafka``): what grows ZooKeeper."""
    u = h.fact("zookeeper_usage")
    if u is None:
        return None
    F = _F()
    kind = F.when(F.col("root").isNull(), F.col("key")).otherwise(F.concat_ws(" ", "key", "root"))
    return u.where(F.col("by") == "record_kind").select(
        "cluster", "snapshot_time", kind.alias("record_kind"), "meaning", "znodes", "data_bytes"
    )


@dataclass(frozen=True)
class Metric:
    name: str
    system: str
    title: str
    compute: Callable[[History], Any | None]
    # Its rows of a snapshot are a function of that snapshot's facts alone, never changed by a later
    # one: a nightly run computes the new nights' rows and appends them to the table (``jobs/store.py``).
    per_snapshot: bool = False


METRICS = [
    Metric(
        "storm_topology_status", "Storm", "Topologies by status", as_kept("storm_topology_status"), per_snapshot=True
    ),
    Metric(
        "storm_topology_churn",
        "Storm",
        "Topologies started and stopped",
        as_kept("storm_topology_churn"),
        per_snapshot=True,
    ),
    Metric("storm_errors_daily", "Storm", "Errors per day (de-duplicated)", storm_errors_daily),
    Metric("storm_error_signatures", "Storm", "Recurring error signatures", storm_error_signatures),
    Metric("storm_supervisors", "Storm", "Supervisors, restarts and slot use", storm_supervisors),
    Metric("storm_supervisor_flaps", "Storm", "Flapping supervisors", storm_supervisor_flaps),
    Metric(
        "storm_workers", "Storm", "Workers: stale heartbeats and restarts", as_kept("storm_workers"), per_snapshot=True
    ),
    Metric("storm_executor_moves", "Storm", "Executors that moved", as_kept("storm_executor_moves"), per_snapshot=True),
    Metric(
        "storm_component_trend",
        "Storm",
        "Component capacity (last 10 minutes at each snapshot)",
        as_kept("storm_component_trend"),
        per_snapshot=True,
    ),
    Metric("storm_busy_components", "Storm", f"Bolts that stay above capacity {BUSY_CAPACITY}", storm_busy_components),
    Metric("storm_failure_rises", "Storm", "Components whose failures rose", storm_failure_rises),
    Metric("kafka_brokers", "Kafka", "Live brokers and restarts", as_kept("kafka_brokers"), per_snapshot=True),
    Metric("kafka_controller", "Kafka", "Controller and elections", as_kept("kafka_controller"), per_snapshot=True),
    Metric("kafka_partition_health", "Kafka", "Partition health", as_kept("kafka_partition_health"), per_snapshot=True),
    Metric("kafka_chronic_under_replicated", "Kafka", "Chronically under-replicated", kafka_chronic_under_replicated),
    Metric("kafka_isr_shrinks", "Kafka", "ISR shrinks", as_kept("kafka_isr_shrinks"), per_snapshot=True),
    Metric("kafka_leader_changes", "Kafka", "Leader changes", as_kept("kafka_leader_changes"), per_snapshot=True),
    Metric("kafka_topic_churn", "Kafka", "Topics created and deleted", as_kept("kafka_topic_churn"), per_snapshot=True),
    Metric(
        "zookeeper_subtrees",
        "ZooKeeper",
        "Znodes and bytes per subtree",
        as_kept("zookeeper_subtrees"),
        per_snapshot=True,
    ),
    Metric(
        "zookeeper_subtree_bytes", "ZooKeeper", "Data bytes per subtree", zookeeper_subtree_bytes, per_snapshot=True
    ),
    Metric(
        "zookeeper_record_kinds", "ZooKeeper", "Data bytes per record kind", zookeeper_record_kinds, per_snapshot=True
    ),
]

PER_SNAPSHOT = [metric.name for metric in METRICS if metric.per_snapshot]
