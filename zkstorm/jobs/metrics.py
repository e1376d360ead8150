"""The history metrics: each a Spark DataFrame computed from the committed snapshots.

Comparisons between snapshots always pair a snapshot with the previous one *of the same cluster*
(``prev_id`` from ``SnapshotSet.frame``), so a missing night compares the two nights around it.
Every metric is keyed by ``cluster``; per-snapshot metrics carry ``snapshot_time``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .snapshots import SnapshotSet

CHRONIC_SNAPSHOTS = 3  # under-replicated in this many consecutive snapshots = chronic


def _F() -> Any:
    from pyspark.sql import functions

    return functions


def _window() -> Any:
    from pyspark.sql import Window

    return Window


def _pairs(df: Any, snaps: Any, keys: list[str]) -> Any:
    """Each row joined with the same key's row in the previous snapshot (columns prefixed ``prev_``);
    rows with no previous snapshot or no previous row for the key are dropped."""
    F = _F()
    current = df.join(snaps.select("snapshot_id", "prev_id", "idx"), "snapshot_id")
    prev = df.select(
        F.col("snapshot_id").alias("prev_id"),
        *[F.col(k) for k in ["cluster", *keys]],
        *[F.col(c).alias(f"prev_{c}") for c in df.columns if c not in ("snapshot_id", "cluster", *keys)],
    )
    return current.join(prev, ["prev_id", "cluster", *keys])


def churn(df: Any, snaps: Any, keys: list[str], what: str) -> Any:
    """Per snapshot: how many ``keys`` appeared (absent in the previous snapshot) and disappeared."""
    F = _F()
    present = df.select("cluster", "snapshot_id", *keys).distinct()
    with_prev = present.join(snaps.select("snapshot_id", "prev_id"), "snapshot_id").where(F.col("prev_id").isNotNull())
    before = present.select(F.col("snapshot_id").alias("prev_id"), "cluster", *keys)
    appeared = with_prev.join(before, ["prev_id", "cluster", *keys], "left_anti").groupBy("snapshot_id").count()
    nxt = snaps.where(F.col("prev_id").isNotNull()).select("snapshot_id", "prev_id")
    gone = (
        present.withColumnRenamed("snapshot_id", "prev_id")
        .join(nxt, "prev_id")
        .join(present, ["snapshot_id", "cluster", *keys], "left_anti")
        .groupBy("snapshot_id")
        .count()
    )
    return (
        snaps.select("cluster", "snapshot_id", "snapshot_time")
        .join(appeared.withColumnRenamed("count", f"{what}_appeared"), "snapshot_id", "left")
        .join(gone.withColumnRenamed("count", f"{what}_disappeared"), "snapshot_id", "left")
        .join(present.groupBy("snapshot_id").count().withColumnRenamed("count", what), "snapshot_id", "left")
        .fillna(0, [f"{what}_appeared", f"{what}_disappeared", what])
        .drop("snapshot_id")
    )


# --- Storm ---------------------------------------------------------------------------------------------


def storm_topology_status(s: SnapshotSet, snaps: Any) -> Any | None:
    t = s.table("storm_topologies")
    if t is None:
        return None
    return t.groupBy("cluster", "snapshot_time", "status").count().withColumnRenamed("count", "topologies")


def storm_topology_churn(s: SnapshotSet, snaps: Any) -> Any | None:
    t = s.table("storm_topologies")
    return None if t is None else churn(t, snaps, ["topology_id"], "topologies")


def _errors(s: SnapshotSet) -> Any | None:
    """Stored errors de-duplicated across snapshots: the same error is seen every night it is kept."""
    e = s.table("storm_errors")
    if e is None:
        return None
    keys = ["cluster", "topology_id", "component", "time_secs", "host", "port", "error"]
    F = _F()
    return e.groupBy(*keys).agg(F.first("error_at").alias("error_at"), F.first("first_line").alias("first_line"))


def storm_errors_daily(s: SnapshotSet, snaps: Any) -> Any | None:
    e = _errors(s)
    if e is None:
        return None
    F = _F()
    return (
        e.withColumn("day", F.to_date("error_at"))
        .groupBy("cluster", "day", "topology_id", "component")
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


def storm_error_signatures(s: SnapshotSet, snaps: Any) -> Any | None:
    e = _errors(s)
    if e is None:
        return None
    F = _F()
    return (
        e.withColumn("signature", signature_column(F.col("first_line")))
        .groupBy("cluster", "signature")
        .agg(
            F.count(F.lit(1)).alias("errors"),
            F.countDistinct("topology_id").alias("topologies"),
            F.countDistinct("component").alias("components"),
            F.min("error_at").alias("first_seen"),
            F.max("error_at").alias("last_seen"),
        )
    )


def presence_grid(snaps: Any, df: Any, key: str) -> Any:
    """Every (snapshot, key) of a cluster, with ``present`` saying whether the key was in that snapshot."""
    F = _F()
    keys = df.select("cluster", key).distinct()
    present = df.select("snapshot_id", key).distinct().withColumn("present", F.lit(True))
    return snaps.join(keys, "cluster").join(present, ["snapshot_id", key], "left").fillna(False, ["present"])


def storm_supervisors(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot: supervisors present, missing (seen before in this cluster), restarted (uptime went
    down since the previous snapshot) and slot utilisation (used ports / ports)."""
    sup = s.table("storm_supervisors")
    if sup is None:
        return None
    F = _F()
    grid = presence_grid(snaps, sup, "hostname")
    first_seen = (
        sup.join(snaps.select("snapshot_id", "idx"), "snapshot_id")
        .groupBy("cluster", "hostname")
        .agg(F.min("idx").alias("first_idx"))
    )
    missing = (
        grid.join(first_seen, ["cluster", "hostname"])
        .where(~F.col("present") & (F.col("idx") > F.col("first_idx")))
        .groupBy("snapshot_id")
        .count()
        .withColumnRenamed("count", "missing")
    )
    restarts = (
        _pairs(sup.select("cluster", "snapshot_id", "hostname", "uptime_secs"), snaps, ["hostname"])
        .where(F.col("uptime_secs") < F.col("prev_uptime_secs"))
        .groupBy("snapshot_id")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    slots = sup.groupBy("snapshot_id").agg(
        F.count(F.lit(1)).alias("present"),
        F.sum(F.size("used_ports")).alias("used_slots"),
        F.sum(F.size("ports")).alias("slots"),
    )
    return (
        snaps.select("cluster", "snapshot_id", "snapshot_time")
        .join(slots, "snapshot_id", "left")
        .join(missing, "snapshot_id", "left")
        .join(restarts, "snapshot_id", "left")
        .fillna(0, ["present", "missing", "restarts", "used_slots", "slots"])
        .withColumn(
            "slot_utilisation_pct",
            F.when(F.col("slots") > 0, F.round(100.0 * F.col("used_slots") / F.col("slots"), 1)),
        )
        .drop("snapshot_id")
    )


def storm_supervisor_flaps(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per supervisor host: how often it came back after being absent (a flap), how often it restarted."""
    sup = s.table("storm_supervisors")
    if sup is None:
        return None
    F, W = _F(), _window()
    grid = presence_grid(snaps, sup, "hostname")
    by_host = W.partitionBy("cluster", "hostname").orderBy("idx")
    flagged = grid.withColumn("was_present", F.lag("present").over(by_host)).withColumn(
        "seen_before", F.max(F.col("present").cast("int")).over(by_host.rowsBetween(W.unboundedPreceding, -1))
    )
    returns = flagged.where(F.col("present") & ~F.col("was_present") & (F.col("seen_before") == 1))
    restarts = _pairs(sup.select("cluster", "snapshot_id", "hostname", "uptime_secs"), snaps, ["hostname"]).where(
        F.col("uptime_secs") < F.col("prev_uptime_secs")
    )
    absent = flagged.where(~F.col("present") & (F.col("seen_before") == 1))
    return (
        sup.select("cluster", "hostname")
        .distinct()
        .join(
            returns.groupBy("cluster", "hostname").count().withColumnRenamed("count", "flaps"),
            ["cluster", "hostname"],
            "left",
        )
        .join(
            restarts.groupBy("cluster", "hostname").count().withColumnRenamed("count", "restarts"),
            ["cluster", "hostname"],
            "left",
        )
        .join(
            absent.groupBy("cluster", "hostname").count().withColumnRenamed("count", "snapshots_absent"),
            ["cluster", "hostname"],
            "left",
        )
        .fillna(0, ["flaps", "restarts", "snapshots_absent"])
    )


def storm_workers(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot: workers, workers with a stale heartbeat, and worker restarts (uptime went down)."""
    w = s.table("storm_workers")
    if w is None:
        return None
    F = _F()
    counts = w.groupBy("snapshot_id").agg(
        F.count(F.lit(1)).alias("workers"), F.sum(F.coalesce(F.col("stale").cast("int"), F.lit(0))).alias("stale")
    )
    restarts = (
        _pairs(
            w.select("cluster", "snapshot_id", "topology_id", "node", "port", "uptime_secs"),
            snaps,
            ["topology_id", "node", "port"],
        )
        .where(F.col("uptime_secs") < F.col("prev_uptime_secs"))
        .groupBy("snapshot_id")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    return (
        snaps.select("cluster", "snapshot_id", "snapshot_time")
        .join(counts, "snapshot_id", "left")
        .join(restarts, "snapshot_id", "left")
        .fillna(0, ["workers", "stale", "restarts"])
        .drop("snapshot_id")
    )


def storm_executor_moves(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot and topology: executors whose node or port changed since the previous snapshot."""
    x = s.table("storm_executors")
    if x is None:
        return None
    F = _F()
    pairs = _pairs(
        x.select("cluster", "snapshot_id", "topology_id", "start_task", "end_task", "node", "port"),
        snaps,
        ["topology_id", "start_task", "end_task"],
    )
    moved = pairs.where((F.col("node") != F.col("prev_node")) | (F.col("port") != F.col("prev_port")))
    return (
        moved.join(snaps.select("snapshot_id", "snapshot_time"), "snapshot_id")
        .groupBy("cluster", "snapshot_time", "topology_id")
        .count()
        .withColumnRenamed("count", "moved_executors")
    )


BUSY_CAPACITY = 0.8  # Storm UI flags a bolt whose capacity nears 1: it cannot keep up
BUSY_SNAPSHOTS = 2  # above it in this many consecutive snapshots, up to the newest = stays busy


def _components(s: SnapshotSet, snaps: Any) -> Any | None:
    """storm_component_stats in the 10-minute window at each snapshot, labelled ``topology/component``."""
    c = s.table("storm_component_stats")
    if c is None:
        return None
    F = _F()
    return (
        c.where(F.col("window") == "600")
        .withColumn("component_name", F.concat_ws("/", "topology_id", "component"))
        .join(snaps.select("snapshot_id", "idx"), "snapshot_id")
    )


def storm_component_trend(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot and component, its last 10 minutes: throughput (tuples/s a bolt executed or a
    spout emitted), acked, failed and capacity."""
    c = _components(s, snaps)
    if c is None:
        return None
    F = _F()
    return c.select(
        "cluster",
        "snapshot_time",
        "component_name",
        (F.coalesce(F.col("executed"), F.col("emitted")) / 600.0).alias("throughput_per_s"),
        "acked",
        "failed",
        "capacity",
    )


def storm_busy_components(s: SnapshotSet, snaps: Any) -> Any | None:
    """Bolts whose capacity stays above ``BUSY_CAPACITY``: above it in at least ``BUSY_SNAPSHOTS``
    consecutive snapshots up to the newest, with how many and the lowest capacity in that run."""
    c = _components(s, snaps)
    if c is None:
        return None
    F, W = _F(), _window()
    busy = c.where(F.col("capacity") > BUSY_CAPACITY)
    by_component = W.partitionBy("cluster", "component_name").orderBy("idx")
    runs = busy.withColumn("run", F.col("idx") - F.row_number().over(by_component))
    last_idx = snaps.groupBy("cluster").agg(F.max("idx").alias("last_idx"))
    return (
        runs.groupBy("cluster", "component_name", "run")
        .agg(
            F.count(F.lit(1)).alias("busy_snapshots"),
            F.min("capacity").alias("lowest_capacity"),
            F.max("idx").alias("end_idx"),
        )
        .join(last_idx, "cluster")
        .where((F.col("end_idx") == F.col("last_idx")) & (F.col("busy_snapshots") >= BUSY_SNAPSHOTS))
        .drop("run", "end_idx", "last_idx")
    )


def storm_failure_rises(s: SnapshotSet, snaps: Any) -> Any | None:
    """Components whose failed tuples (last 10 minutes) rose from one snapshot to the next: the sum of
    the rises over the history and in how many snapshots they rose."""
    c = _components(s, snaps)
    if c is None:
        return None
    F = _F()
    pairs = _pairs(c.select("cluster", "snapshot_id", "component_name", "failed"), snaps, ["component_name"])
    return (
        pairs.where(F.col("failed") > F.col("prev_failed"))
        .groupBy("cluster", "component_name")
        .agg(
            F.sum(F.col("failed") - F.col("prev_failed")).alias("failure_rise"),
            F.count(F.lit(1)).alias("snapshots_rising"),
        )
    )


# --- Kafka ---------------------------------------------------------------------------------------------


def kafka_brokers(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot: registered brokers, brokers gone since the previous snapshot, new ones, and restarts
    (the same id registered again: its registration timestamp, epoch or session changed)."""
    b = s.table("kafka_brokers")
    if b is None:
        return None
    F = _F()
    registration = F.concat_ws(
        "/", *[F.coalesce(F.col(c).cast("string"), F.lit("")) for c in ("timestamp_ms", "broker_epoch", "session_id")]
    )
    live = b.where(F.col("alive")).withColumn("registration", registration)
    restarts = (
        _pairs(live.select("cluster", "snapshot_id", "broker_id", "registration"), snaps, ["broker_id"])
        .where(F.col("registration") != F.col("prev_registration"))
        .groupBy("snapshot_id")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    return (
        churn(live, snaps, ["broker_id"], "brokers")
        .join(snaps.select("snapshot_id", "snapshot_time", "cluster"), ["cluster", "snapshot_time"])
        .join(restarts, "snapshot_id", "left")
        .fillna(0, ["restarts"])
        .drop("snapshot_id")
    )


def kafka_controller(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot: the controller broker and epoch, and how many elections happened since the
    previous snapshot (the epoch delta: every election bumps it once)."""
    epochs = s.table("kafka_controller_epochs")
    controllers = s.table("kafka_controllers")
    if epochs is None and controllers is None:
        return None
    F, W = _F(), _window()
    out = snaps.select("cluster", "snapshot_id", "snapshot_time", "idx")
    if controllers is not None:
        out = out.join(controllers.select("snapshot_id", F.col("broker_id").alias("controller")), "snapshot_id", "left")
    if epochs is not None:
        out = out.join(epochs.select("snapshot_id", "epoch"), "snapshot_id", "left")
        by_cluster = W.partitionBy("cluster").orderBy("idx")
        out = out.withColumn("elections", F.col("epoch") - F.lag("epoch").over(by_cluster))
    return out.drop("snapshot_id", "idx")


def kafka_partition_health(s: SnapshotSet, snaps: Any) -> Any | None:
    p = s.table("kafka_partitions")
    if p is None:
        return None
    F = _F()

    def count(flag: str) -> Any:
        return F.sum(F.coalesce(F.col(flag).cast("int"), F.lit(0)))

    per = p.groupBy("snapshot_id").agg(
        F.count(F.lit(1)).alias("partitions"),
        count("offline").alias("offline"),
        count("under_replicated").alias("under_replicated"),
        count("under_min_isr").alias("under_min_isr"),
        count("at_min_isr").alias("at_min_isr"),
        F.sum((F.col("preferred_leader") == F.lit(False)).cast("int")).alias("not_preferred_leader"),
        F.countDistinct("topic").alias("topics"),
    )
    return (
        snaps.select("cluster", "snapshot_id", "snapshot_time")
        .join(per, "snapshot_id", "left")
        .fillna(0)
        .drop("snapshot_id")
    )


def kafka_chronic_under_replicated(s: SnapshotSet, snaps: Any) -> Any | None:
    """Partitions under-replicated in at least ``CHRONIC_SNAPSHOTS`` consecutive snapshots: each run
    with its length, first and last snapshot time, and whether it still goes on in the newest one."""
    p = s.table("kafka_partitions")
    if p is None:
        return None
    F, W = _F(), _window()
    under = (
        p.where(F.col("under_replicated"))
        .select("cluster", "snapshot_id", "topic", "partition")
        .join(snaps.select("snapshot_id", "idx", "snapshot_time"), "snapshot_id")
    )
    by_partition = W.partitionBy("cluster", "topic", "partition").orderBy("idx")
    runs = under.withColumn("run", F.col("idx") - F.row_number().over(by_partition))
    last_idx = snaps.groupBy("cluster").agg(F.max("idx").alias("last_idx"))
    return (
        runs.groupBy("cluster", "topic", "partition", "run")
        .agg(
            F.count(F.lit(1)).alias("consecutive_snapshots"),
            F.min("snapshot_time").alias("since"),
            F.max("snapshot_time").alias("until"),
            F.max("idx").alias("end_idx"),
        )
        .where(F.col("consecutive_snapshots") >= CHRONIC_SNAPSHOTS)
        .join(last_idx, "cluster")
        .withColumn("ongoing", F.col("end_idx") == F.col("last_idx"))
        .drop("run", "end_idx", "last_idx")
    )


def _isr_pairs(s: SnapshotSet, snaps: Any) -> Any | None:
    p = s.table("kafka_partitions")
    if p is None:
        return None
    return _pairs(
        p.select("cluster", "snapshot_id", "topic", "partition", "isr", "leader"), snaps, ["topic", "partition"]
    )


def kafka_isr_shrinks(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot, topic and broker: replicas that left a partition's ISR since the previous snapshot."""
    pairs = _isr_pairs(s, snaps)
    if pairs is None:
        return None
    F = _F()
    left = pairs.withColumn("broker_id", F.explode(F.array_except("prev_isr", "isr")))
    return (
        left.join(snaps.select("snapshot_id", "snapshot_time"), "snapshot_id")
        .groupBy("cluster", "snapshot_time", "topic", "broker_id")
        .count()
        .withColumnRenamed("count", "isr_shrinks")
    )


def kafka_leader_changes(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot, topic and broker: partitions whose leader changed, counted for the broker that lost it."""
    pairs = _isr_pairs(s, snaps)
    if pairs is None:
        return None
    F = _F()
    changed = pairs.where(~F.col("leader").eqNullSafe(F.col("prev_leader")))
    return (
        changed.join(snaps.select("snapshot_id", "snapshot_time"), "snapshot_id")
        .groupBy("cluster", "snapshot_time", "topic", F.col("prev_leader").alias("broker_id"))
        .count()
        .withColumnRenamed("count", "leader_changes")
    )


def kafka_topic_churn(s: SnapshotSet, snaps: Any) -> Any | None:
    t = s.table("kafka_topics")
    return None if t is None else churn(t, snaps, ["topic"], "topics")


# --- ZooKeeper -----------------------------------------------------------------------------------------


def zookeeper_subtrees(s: SnapshotSet, snaps: Any) -> Any | None:
    """Per snapshot: znodes and data bytes under each subtree two levels deep (``/kafka/brokers``)."""
    z = s.table("znodes")
    if z is None:
        return None
    F = _F()
    parts = F.split(F.col("path"), "/")
    subtree = F.when(F.size(parts) <= 2, F.col("path")).otherwise(
        F.concat_ws("/", F.lit(""), F.element_at(parts, 2), F.element_at(parts, 3))
    )
    return (
        z.withColumn("subtree", subtree)
        .groupBy("cluster", "snapshot_time", "subtree")
        .agg(F.count(F.lit(1)).alias("znodes"), F.sum("data_length").alias("bytes"))
    )


@dataclass(frozen=True)
class Metric:
    name: str
    system: str
    title: str
    compute: Callable[[SnapshotSet, Any], Any | None]


METRICS = [
    Metric("storm_topology_status", "Storm", "Topologies by status", storm_topology_status),
    Metric("storm_topology_churn", "Storm", "Topologies started and stopped", storm_topology_churn),
    Metric("storm_errors_daily", "Storm", "Errors per day (de-duplicated)", storm_errors_daily),
    Metric("storm_error_signatures", "Storm", "Recurring error signatures", storm_error_signatures),
    Metric("storm_supervisors", "Storm", "Supervisors, restarts and slot use", storm_supervisors),
    Metric("storm_supervisor_flaps", "Storm", "Flapping supervisors", storm_supervisor_flaps),
    Metric("storm_workers", "Storm", "Workers: stale heartbeats and restarts", storm_workers),
    Metric("storm_executor_moves", "Storm", "Executors that moved", storm_executor_moves),
    Metric(
        "storm_component_trend", "Storm", "Component capacity (last 10 minutes at each snapshot)", storm_component_trend
    ),
    Metric("storm_busy_components", "Storm", f"Bolts that stay above capacity {BUSY_CAPACITY}", storm_busy_components),
    Metric("storm_failure_rises", "Storm", "Components whose failures rose", storm_failure_rises),
    Metric("kafka_brokers", "Kafka", "Live brokers and restarts", kafka_brokers),
    Metric("kafka_controller", "Kafka", "Controller and elections", kafka_controller),
    Metric("kafka_partition_health", "Kafka", "Partition health", kafka_partition_health),
    Metric("kafka_chronic_under_replicated", "Kafka", "Chronically under-replicated", kafka_chronic_under_replicated),
    Metric("kafka_isr_shrinks", "Kafka", "ISR shrinks", kafka_isr_shrinks),
    Metric("kafka_leader_changes", "Kafka", "Leader changes", kafka_leader_changes),
    Metric("kafka_topic_churn", "Kafka", "Topics created and deleted", kafka_topic_churn),
    Metric("zookeeper_subtrees", "ZooKeeper", "Znodes and bytes per subtree", zookeeper_subtrees),
]
