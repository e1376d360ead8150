"""Kafka's facts: what the history keeps of each snapshot's Kafka tables (``facts`` says what a fact is):
brokers and their restarts, the brokers replica lists name without a registration, the controller and
its elections, partition health, runs of under-replication and of offline partitions, ISR shrinks, leader changes,
topic churn, and where each cluster was read (ZooKeeper or its KRaft controllers).

A Kafka row's ``root`` is its series' root (``inputs.kafka_series``): a cluster that moved from ZooKeeper
to KRaft goes on under the root it had in ZooKeeper, so every fact here compares its nights across the
move as any two nights."""

from __future__ import annotations

from typing import Any

from ..records import KafkaBroker, KafkaClusterId, KafkaController, KafkaControllerEpoch, KafkaPartition, KafkaTopic
from .facts import Fact, Window, churn, paired_with_previous, per_root, with_previous, with_time
from .facts import spark_functions as _F
from .facts import spark_window as _window


def _live_brokers(w: Window) -> Any | None:
    b = w.table(KafkaBroker)
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
        paired_with_previous(
            live.select("cluster", "snapshot_id", "root", "broker_id", "registration"), w, ["broker_id"]
        )
        .where(F.col("registration") != F.col("prev_registration"))
        .groupBy("snapshot_id", "root")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    brokers = churn(live, w, ["broker_id"], "brokers")
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
    partitions = w.table(KafkaPartition)
    if partitions is None:
        return None
    F = _F()
    live = _live_brokers(w)
    if live is not None:  # only partitions naming a broker that is not registered: usually none
        registered = live.groupBy("snapshot_id", "root").agg(F.collect_set("broker_id").alias("registered"))
        # a row per snapshot and root (and below, a row per broker), sent to every task: joined by key
        # instead, a night's partitions were shuffled and sorted to meet them, the replicas into one task
        partitions = partitions.join(F.broadcast(registered), ["snapshot_id", "root"], "left").where(
            F.col("registered").isNull() | (F.size(F.array_except("replicas", "registered")) > 0)
        )
    replicas = partitions.select(
        "cluster", "snapshot_id", "root", "offline", F.posexplode("replicas").alias("position", "broker_id")
    )
    if live is not None:
        replicas = replicas.join(
            F.broadcast(live.select("snapshot_id", "root", "broker_id")),
            ["snapshot_id", "root", "broker_id"],
            "left_anti",
        )
    return replicas.groupBy("cluster", "snapshot_id", "root", "broker_id").agg(
        F.count(F.lit(1)).alias("replica_of"),
        F.sum(F.col("offline").cast("int")).alias("offline"),
        F.sum((F.col("position") == 0).cast("int")).alias("preferred"),
    )


def kafka_controller(w: Window) -> Any | None:
    """Per snapshot: the controller broker and epoch, and how many elections happened since the
    previous snapshot (the epoch delta: every election bumps it once)."""
    epochs = w.table(KafkaControllerEpoch)
    controllers = w.table(KafkaController)
    if epochs is None and controllers is None:
        return None
    F, W = _F(), _window()
    out = w.with_snapshot(per_root(w, *(t for t in (controllers, epochs) if t is not None)), "idx")
    if controllers is not None:
        controller = controllers.select("snapshot_id", "root", F.col("broker_id").alias("controller"))
        out = out.join(controller, ["snapshot_id", "root"], "left")
    if epochs is not None:
        out = out.join(epochs.select("snapshot_id", "root", "epoch"), ["snapshot_id", "root"], "left")
        by_cluster = W.partitionBy("cluster", "root").orderBy("idx")
        previous = F.lag("epoch").over(by_cluster)
        # only a comparison with the snapshot just before counts (idx - 1), as for every other pair
        adjacent = F.lag("idx").over(by_cluster) == F.col("idx") - 1
        # an epoch that went down is another counter, not elections: the KRaft quorum's raft epoch after
        # a migration from ZooKeeper's /controller_epoch (the controller's move itself is still told)
        out = out.withColumn("elections", F.when(adjacent & (F.col("epoch") >= previous), F.col("epoch") - previous))
    return out.drop("idx")


def kafka_partition_health(w: Window) -> Any | None:
    p = w.table(KafkaPartition)
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
    return per_root(w, per).join(per, ["snapshot_id", "root"]).fillna(0)


def _under_replicated_runs(w: Window) -> Any | None:
    """Each under-replicated partition of each snapshot read, in its run of consecutive under-replicated
    snapshots: ``streak`` (snapshots in the run so far, this one included), ``since`` (the run's first
    snapshot time) and ``next_idx`` (the partition's next under-replicated snapshot read). A run that
    reaches back to the first snapshot read goes on from that snapshot's kept fact (a nightly run reads
    the night before only to compare with), so a run's length never depends on where a run of the job
    began. Computed once for the facts that read it."""

    def make() -> Any | None:
        p = w.table(KafkaPartition)
        if p is None:
            return None
        F, W = _F(), _window()
        rows = w.with_snapshot(
            p.where(F.col("under_replicated")).select("cluster", "snapshot_id", "root", "topic", "partition"),
            "idx",
            "snapshot_time",
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
            partition = ["cluster", "root", "topic", "partition"]
            kept = w.with_snapshot(kept, "idx").select(
                *partition, F.col("idx").alias("kept_idx"), F.col("since").alias("kept_since"), "streak"
            )
            rows = rows.join(kept.withColumnRenamed("streak", "kept_streak"), partition, "left")
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
    ending = w.with_snapshot(ending, "next_id").where(F.col("next_id").isNotNull())
    return ending.select(
        "cluster",
        F.col("next_id").alias("snapshot_id"),
        "root",
        "topic",
        "partition",
        "since",
        F.col("snapshot_time").alias("until"),
        "streak",
    )


def kafka_offline_runs(w: Window) -> Any | None:
    """Each snapshot's run of offline partitions so far (consecutive snapshots of a root with a partition
    that has no live leader), a row per topic offline at some snapshot of the run up to this one:
    ``offline``, the most of the topic's partitions offline at once in the run so far (a topic that came
    back keeps its row); ``worst``, the most of the root's; ``streak`` and ``since``, the run's snapshots so
    far and its first one's time. A run that reaches back to the first snapshot read goes on from that
    snapshot's kept rows, as the under-replicated runs do: a run's last snapshot says the whole run, so the
    incident rule reads the new nights, not a run of a year (``incidents.partitions_offline``)."""
    p = w.table(KafkaPartition)
    if p is None:
        return None
    F, W = _F(), _window()
    counts = w.with_snapshot(
        p.where(F.col("offline"))
        .groupBy("cluster", "snapshot_id", "root", "topic")
        .agg(F.count(F.lit(1)).alias("offline")),
        "idx",
    )
    totals = w.with_snapshot(
        counts.groupBy("cluster", "snapshot_id", "root").agg(F.sum("offline").alias("total")), "idx", "snapshot_time"
    )
    by_root = W.partitionBy("cluster", "root").orderBy("idx")
    in_run = W.partitionBy("cluster", "root", "run")
    so_far = in_run.orderBy("idx").rowsBetween(W.unboundedPreceding, W.currentRow)
    runs = (
        totals.withColumn("run", F.col("idx") - F.row_number().over(by_root))
        .withColumn("first_idx", F.min("idx").over(in_run))
        .withColumn("since", F.min("snapshot_time").over(in_run))
        .withColumn("worst", F.max("total").over(so_far))
    )
    streak = F.col("idx") - F.col("first_idx") + 1
    since, worst = F.col("since"), F.col("worst")
    topics = counts.select("cluster", "root", "idx", "topic", "offline")
    kept = w.seen_at_context("kafka_offline_runs")
    if kept is not None:
        kept = w.with_snapshot(kept, "idx").withColumnRenamed("idx", "kept_idx")
        run_so_far = kept.groupBy("cluster", "root", "kept_idx").agg(
            F.max("since").alias("kept_since"), F.max("streak").alias("kept_streak"), F.max("worst").alias("kept_worst")
        )
        runs = runs.join(run_so_far, ["cluster", "root"], "left")
        goes_on = F.col("first_idx") == F.col("kept_idx")
        streak = F.when(goes_on, streak + F.col("kept_streak") - 1).otherwise(streak)
        since = F.when(goes_on, F.col("kept_since")).otherwise(since)
        worst = F.when(goes_on, F.greatest(worst, F.col("kept_worst"))).otherwise(worst)
        # the kept topics, at the snapshot read first: those offline earlier in the run go on with it
        topics = topics.unionByName(kept.select("cluster", "root", F.col("kept_idx").alias("idx"), "topic", "offline"))
    runs = runs.select(
        "cluster",
        "snapshot_id",
        "root",
        "idx",
        "run",
        since.alias("since"),
        streak.alias("streak"),
        worst.alias("worst"),
    )
    topics = topics.join(runs.select("cluster", "root", "idx", "run"), ["cluster", "root", "idx"])
    first = topics.groupBy("cluster", "root", "run", "topic").agg(F.min("idx").alias("topic_idx"))
    counted = topics.groupBy("cluster", "root", "idx", "topic").agg(F.max("offline").alias("now"))
    grid = (
        runs.join(first, ["cluster", "root", "run"])
        .where(F.col("idx") >= F.col("topic_idx"))
        .join(counted, ["cluster", "root", "idx", "topic"], "left")
    )
    topic_so_far = (
        W.partitionBy("cluster", "root", "run", "topic").orderBy("idx").rowsBetween(W.unboundedPreceding, W.currentRow)
    )
    return grid.select(
        "cluster",
        "snapshot_id",
        "root",
        "topic",
        "since",
        F.col("streak").cast("long").alias("streak"),
        F.col("worst").cast("long").alias("worst"),
        F.max("now").over(topic_so_far).cast("long").alias("offline"),
    )


def _isr_pairs(w: Window) -> Any | None:
    """Each partition with its ISR and leader in the previous snapshot (``prev_isr``, ``prev_leader``),
    computed once for the facts that compare them."""

    def make() -> Any | None:
        p = w.table(KafkaPartition)
        if p is None:
            return None
        columns = p.select("cluster", "snapshot_id", "root", "topic", "partition", "isr", "leader")
        return with_previous(columns, w, ["topic", "partition"], ["isr", "leader"])

    return w.keep("isr_pairs", make)


def kafka_isr_shrinks(w: Window) -> Any | None:
    """Per snapshot, topic and broker: replicas that left a partition's ISR since the previous snapshot."""
    pairs = _isr_pairs(w)
    if pairs is None:
        return None
    F = _F()
    left = pairs.withColumn("broker_id", F.explode(F.array_except("prev_isr", "isr")))
    return (
        with_time(left, w)
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
        with_time(changed, w)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "root", "topic", F.col("prev_leader").alias("broker_id"))
        .count()
        .withColumnRenamed("count", "leader_changes")
    )


def kafka_topic_churn(w: Window) -> Any | None:
    t = w.table(KafkaTopic)
    return None if t is None else churn(t, w, ["topic"], "topics")


def kafka_sources(w: Window) -> Any | None:
    """Per snapshot and series: the Kafka cluster id and the root it was read under (``read_root``:
    a ZooKeeper chroot, or ``kraft:`` for a KRaft metadata folder), so the night a cluster moved to KRaft
    is told (``incidents.kafka_migrations``)."""
    ids = w.table(KafkaClusterId)
    if ids is None:
        return None
    return ids.select("cluster", "snapshot_id", "snapshot_time", "root", "read_root", "cluster_id")


# The columns of ``kafka_partitions`` the facts above read. It is the one table several facts read whole nights
# of, so a run keeps it in memory for them, these columns only: not the other 18 (the ELR lists, the
# adding and removing replicas, the state znode's versions), which the facts never look at.
KAFKA_PARTITION_COLUMNS: tuple[str, ...] = (
    "snapshot_id",
    "cluster",
    "root",
    "topic",
    "partition",
    "replicas",
    "isr",
    "leader",
    "offline",
    "under_replicated",
    "under_min_isr",
    "at_min_isr",
    "preferred_leader",
)
KAFKA_COLUMNS_READ = {KafkaPartition: KAFKA_PARTITION_COLUMNS}

KAFKA_FACTS = [
    Fact("kafka_brokers", kafka_brokers, (KafkaBroker,)),
    Fact("kafka_broker_presence", kafka_broker_presence, (KafkaBroker,)),
    Fact("kafka_broker_impact", kafka_broker_impact, (KafkaPartition, KafkaBroker)),
    Fact("kafka_controller", kafka_controller, (KafkaControllerEpoch, KafkaController)),
    Fact("kafka_partition_health", kafka_partition_health, (KafkaPartition,)),
    Fact("kafka_under_replicated", kafka_under_replicated, (KafkaPartition,)),
    Fact("kafka_under_replicated_ended", kafka_under_replicated_ended, (KafkaPartition,)),
    Fact("kafka_offline_runs", kafka_offline_runs, (KafkaPartition,)),
    Fact("kafka_isr_shrinks", kafka_isr_shrinks, (KafkaPartition,)),
    Fact("kafka_leader_changes", kafka_leader_changes, (KafkaPartition,)),
    Fact("kafka_topic_churn", kafka_topic_churn, (KafkaTopic,)),
    Fact("kafka_sources", kafka_sources, (KafkaClusterId,)),
]
