"""The history metrics, in two stages, so that a nightly run reads only the new snapshots.

**Facts** (``FACTS``) are what the history keeps of each snapshot: small per-snapshot rows computed
from that snapshot alone, or from it and the previous snapshot *of the same cluster* (``prev_id``), so
a missing night compares the two nights around it. A fact's rows for a snapshot never change once
computed, which is what lets ``zkstorm history`` append the facts of new snapshots to those of earlier
runs (``jobs/store.py``) instead of reading every snapshot again. The big tables (``kafka_partitions``,
``znodes``, ``storm_executors``) are read only here.

**Metrics** (``METRICS``) are computed from the facts of the whole history: most are a fact as it is;
the rest (de-duplicated errors, runs of consecutive snapshots, flaps, absences) need every snapshot and
read only facts, which are small. Every metric is keyed by ``cluster`` and ``root`` (the Storm root or
Kafka chroot its rows were read under: two clusters on one ensemble are two histories); per-snapshot
metrics carry ``snapshot_time``. ZooKeeper's own subtrees are the ensemble's and have no root.

A new metric: a fact function (``Window`` → rows with ``cluster`` and ``snapshot_id``) if it needs a
snapshot's tables, and a ``Metric`` whose ``compute`` reads facts (``History``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

CHRONIC_SNAPSHOTS = 3  # under-replicated in this many consecutive snapshots = chronic
BUSY_CAPACITY = 0.8  # Storm UI flags a bolt whose capacity nears 1: it cannot keep up
BUSY_SNAPSHOTS = 2  # above it in this many consecutive snapshots, up to the newest = stays busy
ERROR_KEYS = ["cluster", "root", "topology_id", "component", "time_secs", "host", "port", "error"]


def _F() -> Any:
    from pyspark.sql import functions

    return functions


def _window() -> Any:
    from pyspark.sql import Window

    return Window


class Tables(Protocol):
    def table(self, name: str) -> Any | None: ...


@dataclass
class Window:
    """What the facts of some snapshots are computed from: ``snaps`` (the snapshot frame rows of the new
    snapshots and, where a cluster's history already has facts, the one snapshot before them, for
    comparisons) and their tables (``tables.table(name)``: rows of those snapshots only). ``seen`` holds
    the facts already kept, for the one fact that de-duplicates against the past (stored errors)."""

    tables: Tables
    snaps: Any
    seen: Tables
    context: list[str] = field(default_factory=list)  # the kept snapshots read only to compare with
    kept: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> Any | None:
        return self.tables.table(name)

    def seen_at_context(self, name: str) -> Any | None:
        """The kept rows of fact ``name`` for the ``context`` snapshots: where a fact that carries a
        state from snapshot to snapshot (a run of under-replication) goes on from. Filtered by id, so
        Parquet reads only what those snapshots wrote."""
        rows = self.seen.table(name)
        if rows is None or not self.context:
            return None
        return rows.where(_F().col("snapshot_id").isin(self.context))

    def keep(self, name: str, make: Callable[[], Any | None]) -> Any | None:
        """What several facts compute from, computed once and cached (``release`` lets it go)."""
        if name not in self.kept:
            frame = make()
            self.kept[name] = frame.persist() if frame is not None else None
        return self.kept[name]

    def release(self) -> None:
        for frame in self.kept.values():
            if frame is not None:
                frame.unpersist()


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


# --- comparisons between a snapshot and the previous one -------------------------------------------------


def _pairs(df: Any, snaps: Any, keys: list[str]) -> Any:
    """Each row joined with the same key's row in the previous snapshot (columns prefixed ``prev_``);
    rows with no previous snapshot or no previous row for the key are dropped."""
    F = _F()
    current = df.join(snaps.select("snapshot_id", "prev_id", "idx"), "snapshot_id")
    prev = df.select(
        F.col("snapshot_id").alias("prev_id"),
        *[F.col(k) for k in ["cluster", "root", *keys]],
        *[F.col(c).alias(f"prev_{c}") for c in df.columns if c not in ("snapshot_id", "cluster", "root", *keys)],
    )
    return current.join(prev, ["prev_id", "cluster", "root", *keys])


def _previous(df: Any, snaps: Any, keys: list[str], columns: list[str]) -> Any:
    """Each row with ``columns`` of the same key's row in the previous snapshot of its cluster
    (``prev_<column>``); rows whose key was not in the previous snapshot are dropped. What ``_pairs``
    gives, by one sort of the rows by key instead of a join of the table with itself: for the largest
    tables (a year of partitions)."""
    F, W = _F(), _window()
    by_key = W.partitionBy("cluster", "root", *keys).orderBy("idx")
    rows = df.join(snaps.select("snapshot_id", "idx"), "snapshot_id")
    for column in ["idx", *columns]:
        rows = rows.withColumn(f"prev_{column}", F.lag(column).over(by_key))
    return rows.where(F.col("prev_idx") == F.col("idx") - 1)


def churn(df: Any, snaps: Any, keys: list[str], what: str) -> Any:
    """Per snapshot and root: how many ``keys`` appeared (absent in the previous snapshot) and
    disappeared. A root has a row in a snapshot that has rows of it or whose previous snapshot had."""
    F = _F()
    present = df.select("cluster", "snapshot_id", "root", *keys).distinct()
    with_prev = present.join(snaps.select("snapshot_id", "prev_id"), "snapshot_id").where(F.col("prev_id").isNotNull())
    before = present.select(F.col("snapshot_id").alias("prev_id"), "cluster", "root", *keys)
    appeared = (
        with_prev.join(before, ["prev_id", "cluster", "root", *keys], "left_anti")
        .groupBy("snapshot_id", "root")
        .count()
    )
    nxt = snaps.where(F.col("prev_id").isNotNull()).select("snapshot_id", "prev_id")
    gone = (
        present.withColumnRenamed("snapshot_id", "prev_id")
        .join(nxt, "prev_id")
        .join(present, ["snapshot_id", "cluster", "root", *keys], "left_anti")
        .groupBy("snapshot_id", "root")
        .count()
    )
    counts = present.groupBy("snapshot_id", "root").count()
    roots = counts.select("snapshot_id", "root").unionByName(gone.select("snapshot_id", "root")).distinct()
    return (
        snaps.select("cluster", "snapshot_id", "snapshot_time")
        .join(roots, "snapshot_id")
        .join(appeared.withColumnRenamed("count", f"{what}_appeared"), ["snapshot_id", "root"], "left")
        .join(gone.withColumnRenamed("count", f"{what}_disappeared"), ["snapshot_id", "root"], "left")
        .join(counts.withColumnRenamed("count", what), ["snapshot_id", "root"], "left")
        .fillna(0, [f"{what}_appeared", f"{what}_disappeared", what])
    )


def _per_root(snaps: Any, *frames: Any) -> Any:
    """The snapshot frame's cluster and time for every (snapshot, root) that ``frames`` have rows of:
    the rows a per-snapshot count is given for."""
    keys = frames[0].select("snapshot_id", "root")
    for frame in frames[1:]:
        keys = keys.unionByName(frame.select("snapshot_id", "root"))
    return snaps.select("cluster", "snapshot_id", "snapshot_time").join(keys.distinct(), "snapshot_id")


def _timed(df: Any, snaps: Any) -> Any:
    return df.join(snaps.select("snapshot_id", "snapshot_time"), "snapshot_id")


# --- facts: Storm ----------------------------------------------------------------------------------------


def storm_topology_status(w: Window) -> Any | None:
    t = w.table("storm_topologies")
    if t is None:
        return None
    return (
        t.groupBy("cluster", "snapshot_id", "snapshot_time", "root", "status")
        .count()
        .withColumnRenamed("count", "topologies")
    )


def storm_topology_churn(w: Window) -> Any | None:
    t = w.table("storm_topologies")
    return None if t is None else churn(t, w.snaps, ["topology_id"], "topologies")


def storm_errors_unique(w: Window) -> Any | None:
    """Stored errors seen for the first time: the same error is seen every night Storm keeps it."""
    e = w.table("storm_errors")
    if e is None:
        return None
    F = _F()
    unique = e.groupBy(*ERROR_KEYS).agg(
        F.first("error_at").alias("error_at"),
        F.first("first_line").alias("first_line"),
        F.min_by("snapshot_id", "snapshot_time").alias("snapshot_id"),
    )
    seen = w.seen.table("storm_errors_unique")
    if seen is not None:
        unique = unique.join(seen.select(*ERROR_KEYS), ERROR_KEYS, "left_anti")
    return unique


def storm_supervisor_presence(w: Window) -> Any | None:
    """Each supervisor of each snapshot, with its uptime and slots."""
    sup = w.table("storm_supervisors")
    if sup is None:
        return None
    F = _F()
    return sup.select(
        "cluster",
        "snapshot_id",
        "snapshot_time",
        "root",
        "hostname",
        "uptime_secs",
        F.size("ports").alias("slots"),
        F.size("used_ports").alias("used_slots"),
    )


def storm_supervisor_restarts(w: Window) -> Any | None:
    """Supervisors whose uptime went down since the previous snapshot."""
    sup = w.table("storm_supervisors")
    if sup is None:
        return None
    F = _F()
    pairs = _pairs(sup.select("cluster", "snapshot_id", "root", "hostname", "uptime_secs"), w.snaps, ["hostname"])
    return pairs.where(F.col("uptime_secs") < F.col("prev_uptime_secs")).select(
        "cluster", "snapshot_id", "root", "hostname"
    )


def storm_workers(w: Window) -> Any | None:
    """Per snapshot: workers, workers with a stale heartbeat, and worker restarts (uptime went down)."""
    workers = w.table("storm_workers")
    if workers is None:
        return None
    F = _F()
    counts = workers.groupBy("snapshot_id", "root").agg(
        F.count(F.lit(1)).alias("workers"), F.sum(F.coalesce(F.col("stale").cast("int"), F.lit(0))).alias("stale")
    )
    restarts = (
        _pairs(
            workers.select("cluster", "snapshot_id", "root", "topology_id", "node", "port", "uptime_secs"),
            w.snaps,
            ["topology_id", "node", "port"],
        )
        .where(F.col("uptime_secs") < F.col("prev_uptime_secs"))
        .groupBy("snapshot_id", "root")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    return (
        _per_root(w.snaps, counts)
        .join(counts, ["snapshot_id", "root"], "left")
        .join(restarts, ["snapshot_id", "root"], "left")
        .fillna(0, ["workers", "stale", "restarts"])
    )


def storm_executor_moves(w: Window) -> Any | None:
    """Per snapshot and topology: executors whose node or port changed since the previous snapshot."""
    x = w.table("storm_executors")
    if x is None:
        return None
    F = _F()
    pairs = _pairs(
        x.select("cluster", "snapshot_id", "root", "topology_id", "start_task", "end_task", "node", "port"),
        w.snaps,
        ["topology_id", "start_task", "end_task"],
    )
    moved = pairs.where((F.col("node") != F.col("prev_node")) | (F.col("port") != F.col("prev_port")))
    return (
        _timed(moved, w.snaps)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "root", "topology_id")
        .count()
        .withColumnRenamed("count", "moved_executors")
    )


def _components(w: Window) -> Any | None:
    """storm_component_stats in the 10-minute window at each snapshot, labelled ``topology/component``."""
    c = w.table("storm_component_stats")
    if c is None:
        return None
    F = _F()
    return c.where(F.col("window") == "600").withColumn("component_name", F.concat_ws("/", "topology_id", "component"))


def storm_component_trend(w: Window) -> Any | None:
    """Per snapshot and component, its last 10 minutes: throughput (tuples/s a bolt executed or a
    spout emitted), acked, failed and capacity."""
    c = _components(w)
    if c is None:
        return None
    F = _F()
    return c.select(
        "cluster",
        "snapshot_id",
        "snapshot_time",
        "root",
        "component_name",
        (F.coalesce(F.col("executed"), F.col("emitted")) / 600.0).alias("throughput_per_s"),
        "acked",
        "failed",
        "capacity",
    )


def storm_failure_rise_events(w: Window) -> Any | None:
    """Components whose failed tuples (last 10 minutes) rose since the previous snapshot, by how many."""
    c = _components(w)
    if c is None:
        return None
    F = _F()
    pairs = _pairs(c.select("cluster", "snapshot_id", "root", "component_name", "failed"), w.snaps, ["component_name"])
    return pairs.where(F.col("failed") > F.col("prev_failed")).select(
        "cluster",
        "snapshot_id",
        "root",
        "component_name",
        (F.col("failed") - F.col("prev_failed")).alias("failure_rise"),
    )


# --- facts: Kafka ----------------------------------------------------------------------------------------


def _live_brokers(w: Window) -> Any | None:
    b = w.table("kafka_brokers")
    return None if b is None else b.where(_F().col("alive"))


def kafka_brokers(w: Window) -> Any | None:
    """Per snapshot: registered brokers, brokers gone since the previous snapshot, new ones, and restarts
    (the same id registered again: its registration timestamp, epoch or session changed)."""
    live = _live_brokers(w)
    if live is None:
        return None
    F = _F()
    registration = F.concat_ws(
        "/", *[F.coalesce(F.col(c).cast("string"), F.lit("")) for c in ("timestamp_ms", "broker_epoch", "session_id")]
    )
    live = live.withColumn("registration", registration)
    restarts = (
        _pairs(live.select("cluster", "snapshot_id", "root", "broker_id", "registration"), w.snaps, ["broker_id"])
        .where(F.col("registration") != F.col("prev_registration"))
        .groupBy("snapshot_id", "root")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    brokers = churn(live, w.snaps, ["broker_id"], "brokers")
    return brokers.join(restarts, ["snapshot_id", "root"], "left").fillna(0, ["restarts"])


def kafka_broker_presence(w: Window) -> Any | None:
    """Each registered broker of each snapshot, with its endpoint."""
    live = _live_brokers(w)
    if live is None:
        return None
    F = _F()
    return live.select(
        "cluster",
        "snapshot_id",
        "snapshot_time",
        "root",
        "broker_id",
        F.concat_ws(":", "host", F.col("port").cast("string")).alias("endpoint"),
    )


def kafka_broker_impact(w: Window) -> Any | None:
    """Per snapshot, each broker named in replica lists but not registered: the partitions it is a
    replica of, the preferred leader of, and how many of them are offline."""
    partitions = w.table("kafka_partitions")
    if partitions is None:
        return None
    F = _F()
    live = _live_brokers(w)
    if live is not None:  # only partitions naming a broker that is not registered: usually none
        registered = live.groupBy("snapshot_id", "root").agg(F.collect_set("broker_id").alias("registered"))
        partitions = partitions.join(registered, ["snapshot_id", "root"], "left").where(
            F.col("registered").isNull() | (F.size(F.array_except("replicas", "registered")) > 0)
        )
    replicas = partitions.select(
        "cluster", "snapshot_id", "root", "offline", F.posexplode("replicas").alias("position", "broker_id")
    )
    if live is not None:
        replicas = replicas.join(
            live.select("snapshot_id", "root", "broker_id"), ["snapshot_id", "root", "broker_id"], "left_anti"
        )
    return replicas.groupBy("cluster", "snapshot_id", "root", "broker_id").agg(
        F.count(F.lit(1)).alias("replica_of"),
        F.sum(F.col("offline").cast("int")).alias("offline"),
        F.sum((F.col("position") == 0).cast("int")).alias("preferred"),
    )


def kafka_controller(w: Window) -> Any | None:
    """Per snapshot: the controller broker and epoch, and how many elections happened since the
    previous snapshot (the epoch delta: every election bumps it once)."""
    epochs = w.table("kafka_controller_epochs")
    controllers = w.table("kafka_controllers")
    if epochs is None and controllers is None:
        return None
    F, W = _F(), _window()
    out = _per_root(w.snaps, *(t for t in (controllers, epochs) if t is not None)).join(
        w.snaps.select("snapshot_id", "idx"), "snapshot_id"
    )
    if controllers is not None:
        controller = controllers.select("snapshot_id", "root", F.col("broker_id").alias("controller"))
        out = out.join(controller, ["snapshot_id", "root"], "left")
    if epochs is not None:
        out = out.join(epochs.select("snapshot_id", "root", "epoch"), ["snapshot_id", "root"], "left")
        by_cluster = W.partitionBy("cluster", "root").orderBy("idx")
        previous = F.lag("epoch").over(by_cluster)
        # only a comparison with the snapshot just before counts (idx - 1), as for every other pair
        adjacent = F.lag("idx").over(by_cluster) == F.col("idx") - 1
        out = out.withColumn("elections", F.when(adjacent, F.col("epoch") - previous))
    return out.drop("idx")


def kafka_partition_health(w: Window) -> Any | None:
    p = w.table("kafka_partitions")
    if p is None:
        return None
    F = _F()

    def count(flag: str) -> Any:
        return F.sum(F.coalesce(F.col(flag).cast("int"), F.lit(0)))

    per = p.groupBy("snapshot_id", "root").agg(
        F.count(F.lit(1)).alias("partitions"),
        count("offline").alias("offline"),
        count("under_replicated").alias("under_replicated"),
        count("under_min_isr").alias("under_min_isr"),
        count("at_min_isr").alias("at_min_isr"),
        F.sum((F.col("preferred_leader") == F.lit(False)).cast("int")).alias("not_preferred_leader"),
        F.countDistinct("topic").alias("topics"),
    )
    return _per_root(w.snaps, per).join(per, ["snapshot_id", "root"]).fillna(0)


def _under_replicated_runs(w: Window) -> Any | None:
    """Each under-replicated partition of each snapshot read, in its run of consecutive under-replicated
    snapshots: ``streak`` (snapshots in the run so far, this one included), ``since`` (the run's first
    snapshot time) and ``next_idx`` (the partition's next under-replicated snapshot read). A run that
    reaches back to the first snapshot read goes on from that snapshot's kept fact (a nightly run reads
    the night before only to compare with), so a run's length never depends on where a run of the job
    began. Computed once for the facts that read it."""

    def make() -> Any | None:
        p = w.table("kafka_partitions")
        if p is None:
            return None
        F, W = _F(), _window()
        rows = (
            p.where(F.col("under_replicated"))
            .select("cluster", "snapshot_id", "root", "topic", "partition")
            .join(w.snaps.select("snapshot_id", "idx", "snapshot_time"), "snapshot_id")
        )
        by_partition = W.partitionBy("cluster", "root", "topic", "partition").orderBy("idx")
        by_run = W.partitionBy("cluster", "root", "topic", "partition", "run")  # clustered as by_partition
        rows = (
            rows.withColumn("run", F.col("idx") - F.row_number().over(by_partition))
            .withColumn("next_idx", F.lead("idx").over(by_partition))
            .withColumn("first_idx", F.min("idx").over(by_run))
            .withColumn("first_time", F.min("snapshot_time").over(by_run))
        )
        streak = F.col("idx") - F.col("first_idx") + 1
        since = F.col("first_time")
        kept = w.seen_at_context("kafka_under_replicated")
        if kept is not None:
            kept = kept.join(w.snaps.select("snapshot_id", F.col("idx").alias("kept_idx")), "snapshot_id").select(
                "cluster", "root", "topic", "partition", "kept_idx", F.col("since").alias("kept_since"), "streak"
            )
            rows = rows.join(
                kept.withColumnRenamed("streak", "kept_streak"), ["cluster", "root", "topic", "partition"], "left"
            )
            goes_on = F.col("first_idx") == F.col("kept_idx")
            streak = F.when(goes_on, streak + F.col("kept_streak") - 1).otherwise(streak)
            since = F.when(goes_on, F.col("kept_since")).otherwise(since)
        return rows.select(
            "cluster",
            "snapshot_id",
            "idx",
            "snapshot_time",
            "root",
            "topic",
            "partition",
            since.alias("since"),
            streak.cast("long").alias("streak"),
            "next_idx",
        )

    return w.keep("under_replicated_runs", make)


def kafka_under_replicated(w: Window) -> Any | None:
    """Each under-replicated partition of each snapshot, with its run so far: ``streak`` consecutive
    snapshots under-replicated up to this one, the first of them at ``since``."""
    runs = _under_replicated_runs(w)
    if runs is None:
        return None
    return runs.select("cluster", "snapshot_id", "root", "topic", "partition", "since", "streak")


def kafka_under_replicated_ended(w: Window) -> Any | None:
    """Runs of under-replication that ended at a snapshot: the partition was under-replicated in the
    snapshot before and is not in this one (its ISR recovered, or it is gone), with the run's length
    (``streak``) and span (``since``, ``until``). With the newest snapshot's ``kafka_under_replicated``
    rows they are every run, without reading every night's rows again."""
    runs = _under_replicated_runs(w)
    if runs is None:
        return None
    F = _F()
    ending = runs.where(F.col("next_idx").isNull() | (F.col("next_idx") != F.col("idx") + 1))
    following = w.snaps.select("cluster", (F.col("idx") - 1).alias("idx"), F.col("snapshot_id").alias("ended_at"))
    return ending.join(following, ["cluster", "idx"]).select(
        "cluster",
        F.col("ended_at").alias("snapshot_id"),
        "root",
        "topic",
        "partition",
        "since",
        F.col("snapshot_time").alias("until"),
        "streak",
    )


def kafka_offline_topics(w: Window) -> Any | None:
    """Per snapshot, each topic with offline partitions (no live leader), and how many."""
    p = w.table("kafka_partitions")
    if p is None:
        return None
    F = _F()
    return (
        p.where(F.col("offline"))
        .groupBy("cluster", "snapshot_id", "root", "topic")
        .agg(F.count(F.lit(1)).alias("offline"))
    )


def _isr_pairs(w: Window) -> Any | None:
    """Each partition with its ISR and leader in the previous snapshot (``prev_isr``, ``prev_leader``),
    computed once for the facts that compare them."""

    def make() -> Any | None:
        p = w.table("kafka_partitions")
        if p is None:
            return None
        columns = p.select("cluster", "snapshot_id", "root", "topic", "partition", "isr", "leader")
        return _previous(columns, w.snaps, ["topic", "partition"], ["isr", "leader"])

    return w.keep("isr_pairs", make)


def kafka_isr_shrinks(w: Window) -> Any | None:
    """Per snapshot, topic and broker: replicas that left a partition's ISR since the previous snapshot."""
    pairs = _isr_pairs(w)
    if pairs is None:
        return None
    F = _F()
    left = pairs.withColumn("broker_id", F.explode(F.array_except("prev_isr", "isr")))
    return (
        _timed(left, w.snaps)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "root", "topic", "broker_id")
        .count()
        .withColumnRenamed("count", "isr_shrinks")
    )


def kafka_leader_changes(w: Window) -> Any | None:
    """Per snapshot, topic and broker: partitions whose leader changed, counted for the broker that lost it."""
    pairs = _isr_pairs(w)
    if pairs is None:
        return None
    F = _F()
    changed = pairs.where(~F.col("leader").eqNullSafe(F.col("prev_leader")))
    return (
        _timed(changed, w.snaps)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "root", "topic", F.col("prev_leader").alias("broker_id"))
        .count()
        .withColumnRenamed("count", "leader_changes")
    )


def kafka_topic_churn(w: Window) -> Any | None:
    t = w.table("kafka_topics")
    return None if t is None else churn(t, w.snaps, ["topic"], "topics")


# --- facts: ZooKeeper ------------------------------------------------------------------------------------


def zookeeper_subtrees(w: Window) -> Any | None:
    """Per snapshot: znodes and data bytes under each subtree two levels deep (``/kafka/brokers``)."""
    z = w.table("znodes")
    if z is None:
        return None
    F = _F()
    parts = F.split(F.col("path"), "/")
    subtree = F.when(F.size(parts) <= 2, F.col("path")).otherwise(
        F.concat_ws("/", F.lit(""), F.element_at(parts, 2), F.element_at(parts, 3))
    )
    return (
        z.withColumn("subtree", subtree)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "subtree")
        .agg(F.count(F.lit(1)).alias("znodes"), F.sum("data_length").alias("bytes"))
    )


def zookeeper_usage(w: Window) -> Any | None:
    """Per snapshot: znodes and data bytes of each subtree two levels deep and of each record kind per
    root, with what each is to Storm or Kafka (the snapshot's ``zk_usage``, already summed at the walk)."""
    u = w.table("zk_usage")
    if u is None:
        return None
    F = _F()
    return u.where(F.col("by").isin("subtree", "record_kind")).select(
        "cluster", "snapshot_id", "snapshot_time", "by", "key", "meaning", "root", "znodes", "data_bytes"
    )


@dataclass(frozen=True)
class Fact:
    name: str
    compute: Callable[[Window], Any | None]
    reads: tuple[str, ...]  # the snapshot tables it reads


FACTS = [
    Fact("storm_topology_status", storm_topology_status, ("storm_topologies",)),
    Fact("storm_topology_churn", storm_topology_churn, ("storm_topologies",)),
    Fact("storm_errors_unique", storm_errors_unique, ("storm_errors",)),
    Fact("storm_supervisor_presence", storm_supervisor_presence, ("storm_supervisors",)),
    Fact("storm_supervisor_restarts", storm_supervisor_restarts, ("storm_supervisors",)),
    Fact("storm_workers", storm_workers, ("storm_workers",)),
    Fact("storm_executor_moves", storm_executor_moves, ("storm_executors",)),
    Fact("storm_component_trend", storm_component_trend, ("storm_component_stats",)),
    Fact("storm_failure_rise_events", storm_failure_rise_events, ("storm_component_stats",)),
    Fact("kafka_brokers", kafka_brokers, ("kafka_brokers",)),
    Fact("kafka_broker_presence", kafka_broker_presence, ("kafka_brokers",)),
    Fact("kafka_broker_impact", kafka_broker_impact, ("kafka_partitions", "kafka_brokers")),
    Fact("kafka_controller", kafka_controller, ("kafka_controller_epochs", "kafka_controllers")),
    Fact("kafka_partition_health", kafka_partition_health, ("kafka_partitions",)),
    Fact("kafka_under_replicated", kafka_under_replicated, ("kafka_partitions",)),
    Fact("kafka_under_replicated_ended", kafka_under_replicated_ended, ("kafka_partitions",)),
    Fact("kafka_offline_topics", kafka_offline_topics, ("kafka_partitions",)),
    Fact("kafka_isr_shrinks", kafka_isr_shrinks, ("kafka_partitions",)),
    Fact("kafka_leader_changes", kafka_leader_changes, ("kafka_partitions",)),
    Fact("kafka_topic_churn", kafka_topic_churn, ("kafka_topics",)),
    Fact("zookeeper_subtrees", zookeeper_subtrees, ("znodes",)),
    Fact("zookeeper_usage", zookeeper_usage, ("zk_usage",)),
]
SNAPSHOT_TABLES = sorted({name for fact in FACTS for name in fact.reads})  # what the history reads


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


def presence_grid(snaps: Any, df: Any, key: str) -> Any:
    """Every (snapshot, root, key) of a cluster, with ``present`` saying whether the key was in that
    snapshot under that root."""
    F = _F()
    keys = df.select("cluster", "root", key).distinct()
    present = df.select("snapshot_id", "root", key).distinct().withColumn("present", F.lit(True))
    return snaps.join(keys, "cluster").join(present, ["snapshot_id", "root", key], "left").fillna(False, ["present"])


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


METRICS = [
    Metric("storm_topology_status", "Storm", "Topologies by status", as_kept("storm_topology_status")),
    Metric("storm_topology_churn", "Storm", "Topologies started and stopped", as_kept("storm_topology_churn")),
    Metric("storm_errors_daily", "Storm", "Errors per day (de-duplicated)", storm_errors_daily),
    Metric("storm_error_signatures", "Storm", "Recurring error signatures", storm_error_signatures),
    Metric("storm_supervisors", "Storm", "Supervisors, restarts and slot use", storm_supervisors),
    Metric("storm_supervisor_flaps", "Storm", "Flapping supervisors", storm_supervisor_flaps),
    Metric("storm_workers", "Storm", "Workers: stale heartbeats and restarts", as_kept("storm_workers")),
    Metric("storm_executor_moves", "Storm", "Executors that moved", as_kept("storm_executor_moves")),
    Metric(
        "storm_component_trend",
        "Storm",
        "Component capacity (last 10 minutes at each snapshot)",
        as_kept("storm_component_trend"),
    ),
    Metric("storm_busy_components", "Storm", f"Bolts that stay above capacity {BUSY_CAPACITY}", storm_busy_components),
    Metric("storm_failure_rises", "Storm", "Components whose failures rose", storm_failure_rises),
    Metric("kafka_brokers", "Kafka", "Live brokers and restarts", as_kept("kafka_brokers")),
    Metric("kafka_controller", "Kafka", "Controller and elections", as_kept("kafka_controller")),
    Metric("kafka_partition_health", "Kafka", "Partition health", as_kept("kafka_partition_health")),
    Metric("kafka_chronic_under_replicated", "Kafka", "Chronically under-replicated", kafka_chronic_under_replicated),
    Metric("kafka_isr_shrinks", "Kafka", "ISR shrinks", as_kept("kafka_isr_shrinks")),
    Metric("kafka_leader_changes", "Kafka", "Leader changes", as_kept("kafka_leader_changes")),
    Metric("kafka_topic_churn", "Kafka", "Topics created and deleted", as_kept("kafka_topic_churn")),
    Metric("zookeeper_subtrees", "ZooKeeper", "Znodes and bytes per subtree", as_kept("zookeeper_subtrees")),
    Metric("zookeeper_subtree_bytes", "ZooKeeper", "Data bytes per subtree", zookeeper_subtree_bytes),
    Metric("zookeeper_record_kinds", "ZooKeeper", "Data bytes per record kind", zookeeper_record_kinds),
]
