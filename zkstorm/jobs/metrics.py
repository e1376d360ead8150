"""The history's metrics, computed from the facts (``facts``: what is kept of each snapshot), so that a
nightly run reads only the new snapshots, and keeps what it computes so that it reads only their facts.

Every metric is keyed by ``cluster`` and ``root`` (the Storm root or Kafka chroot its rows were read
under: two clusters on one ensemble are two histories); per-snapshot metrics carry ``snapshot_time``.
ZooKeeper's own subtrees are the ensemble's and have no root.

How a nightly run keeps each metric's table (``jobs/store.py`` commits it with the run):

- ``per_snapshot``: a snapshot's rows come from its facts alone; the new nights' rows are appended.
- ``fold``: the table is a running state over the nights (totals per day or host, the runs of busy bolts
  or under-replicated partitions going on); its new content is made from the committed table and the
  new nights' facts, and replaces it. Where a state needs more than the table shows, the table or a fact
  carries it (a signature's topology ids; ``storm_supervisor_status``, every host a root has had).

A full rebuild computes each from every fact (``compute``); the two agree, table for table
(``tests/test_history.py``).

A new metric: a fact (``Window`` → rows with ``cluster`` and ``snapshot_id``, in ``storm_facts`` or
``kafka_facts``) if it needs a snapshot's tables, and a ``Metric`` here whose ``compute`` reads facts
(``History``), with ``per_snapshot`` or a ``fold``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..export.parquet import table_name
from .facts import ZOOKEEPER_FACTS, Tables
from .facts import spark_functions as _F
from .kafka_facts import KAFKA_COLUMNS_READ, KAFKA_FACTS
from .storm_facts import BUSY_CAPACITY, STORM_FACTS

CHRONIC_SNAPSHOTS = 3  # under-replicated in this many consecutive snapshots = chronic

# A metric's fold: its table's new content from its committed table (None before the first) and a
# nightly run's new facts alone (``History`` of them); None when the new nights give it no rows.
Fold = Callable[[Any, "History"], Any | None]


@dataclass
class History:
    """What metrics are computed from: every fact of the history (``fact(name)``), the snapshot frame
    of every snapshot in it (``snaps``: cluster, snapshot_id, snapshot_time, idx, prev_id) and the id of
    each cluster's newest snapshot (``latest``)."""

    facts: Tables
    snaps: Any
    latest: list[str] = field(default_factory=list)  # each cluster's newest snapshot id
    computed: dict[str, Any] = field(default_factory=dict)  # metric name → its DataFrame, once computed
    # the clusters with new snapshots, when ``facts`` are a nightly run's new facts alone (what a fold reads)
    renewed: list[str] = field(default_factory=list)
    # when this is a stretch of a history (the snapshots a nightly run finds incidents in again,
    # ``jobs/recheck.py``): the whole of it, and per cluster the days whose error bursts are found again
    whole: History | None = None
    error_days: dict[str, frozenset[date]] | None = None

    def fact(self, name: str) -> Any | None:
        return self.facts.table(name)

    @property
    def everything(self) -> History:
        """The whole history, for a rule whose input is one row per root and snapshot: it reads it all,
        even when it finds incidents in a stretch of it."""
        return self.whole or self


# --- facts: each system's in its module (``storm_facts``, ``kafka_facts``, ``facts``) ---------------------

FACTS = [*STORM_FACTS, *KAFKA_FACTS, *ZOOKEEPER_FACTS]  # every fact of a snapshot
SNAPSHOT_TABLES = sorted({name for fact in FACTS for name in fact.tables})  # what the history reads
# snapshot table → the columns the facts read of it, for a table they read few columns of
COLUMNS_READ = {table_name(record_type): columns for record_type, columns in KAFKA_COLUMNS_READ.items()}


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


def summed(compute: Callable[[History], Any | None], keys: list[str], sums: list[str]) -> Fold:
    """The fold of a metric that is a sum per ``keys`` (``compute``): its committed totals plus the new
    nights'."""

    def fold(table: Any, new: History) -> Any | None:
        rows = compute(new)
        if rows is None or table is None:
            return rows
        return table.unionByName(rows).groupBy(*keys).agg(*[_F().sum(c).alias(c) for c in sums])

    return fold


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


def _signatures(rows: Any, topology_ids: Any, component_names: Any) -> Any:
    """Per signature: its errors, first and last seen, and the topologies and components it hit, named
    (sorted) and counted: the names are what a later night's are merged with."""
    F = _F()
    return (
        rows.groupBy("cluster", "root", "signature")
        .agg(
            F.sum("errors").alias("errors"),
            F.array_sort(F.array_distinct(topology_ids)).alias("topology_ids"),
            F.array_sort(F.array_distinct(component_names)).alias("component_names"),
            F.min("first_seen").alias("first_seen"),
            F.max("last_seen").alias("last_seen"),
        )
        .select(
            "cluster", "root", "signature", "errors", F.size("topology_ids").cast("long").alias("topologies"),
            F.size("component_names").cast("long").alias("components"), "first_seen", "last_seen", "topology_ids",
            "component_names",
        )
    )  # fmt: skip


def storm_error_signatures(h: History) -> Any | None:
    e = _errors(h)
    if e is None:
        return None
    F = _F()
    one = F.lit(1).cast("long")
    rows = e.select(
        "cluster", "root", signature_column(F.col("first_line")).alias("signature"), one.alias("errors"),
        "topology_id", "component", F.col("error_at").alias("first_seen"), F.col("error_at").alias("last_seen"),
    )  # fmt: skip
    return _signatures(rows, F.collect_set("topology_id"), F.collect_set("component"))


def _fold_signatures(table: Any, new: History) -> Any | None:
    rows = storm_error_signatures(new)
    if rows is None or table is None:
        return rows
    F = _F()
    both = table.unionByName(rows)
    return _signatures(both, F.flatten(F.collect_list("topology_ids")), F.flatten(F.collect_list("component_names")))


def storm_supervisors(h: History) -> Any | None:
    """Per snapshot and root that has had supervisors: those present, missing (in an earlier snapshot,
    not in this one), restarted (uptime went down since the previous snapshot) and slot utilisation
    (used ports / ports). A snapshot's row comes from its facts alone."""
    status = h.fact("storm_supervisor_status")
    if status is None:
        return None
    F = _F()
    sup = h.fact("storm_supervisor_presence")
    at = ["snapshot_id", "root"]
    missing = status.groupBy(*at).agg(F.sum((~F.col("present")).cast("long")).alias("missing"))
    restarts = _restarts(h).groupBy(*at).count().withColumnRenamed("count", "restarts")
    rows = status.select("cluster", *at, "snapshot_time").distinct()
    if sup is not None:
        slots = sup.groupBy(*at).agg(
            F.count(F.lit(1)).alias("present"),
            F.sum("used_slots").alias("used_slots"),
            F.sum("slots").alias("slots"),
        )
        rows = rows.join(slots, at, "left")
    else:
        rows = rows.select(
            *at,
            "cluster",
            "snapshot_time",
            *[F.lit(0).cast("long").alias(c) for c in ("present", "used_slots", "slots")],
        )
    return (
        rows.join(missing, at, "left")
        .join(restarts, at, "left")
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


FLAP_KEYS = ["cluster", "root", "hostname"]
FLAP_SUMS = ["flaps", "restarts", "snapshots_absent"]


def storm_supervisor_flaps(h: History) -> Any | None:
    """Per supervisor host: how often it came back after being absent (a flap), how often it restarted,
    in how many snapshots it was missing. Sums over snapshots: a night's add to the totals kept."""
    status = h.fact("storm_supervisor_status")
    if status is None:
        return None
    F = _F()
    returned = F.col("present") & ~F.coalesce(F.col("was_present"), F.lit(True))
    per_host = status.groupBy(*FLAP_KEYS).agg(
        F.sum(returned.cast("long")).alias("flaps"),
        F.sum((~F.col("present")).cast("long")).alias("snapshots_absent"),
    )
    restarts = _restarts(h).groupBy(*FLAP_KEYS).count().withColumnRenamed("count", "restarts")
    return per_host.join(restarts, FLAP_KEYS, "left").fillna(0, ["restarts"]).select(*FLAP_KEYS, *FLAP_SUMS)


BUSY_SNAPSHOTS = 2  # above BUSY_CAPACITY in this many consecutive snapshots, up to the newest = stays busy


def storm_busy_components(h: History) -> Any | None:
    """Bolts whose capacity stays above ``BUSY_CAPACITY``: above it in at least ``BUSY_SNAPSHOTS``
    consecutive snapshots up to each cluster's newest, with how many and the lowest capacity in that
    run (the newest snapshot's ``storm_busy_streaks``)."""
    streaks = h.fact("storm_busy_streaks")
    if streaks is None:
        return None
    F = _F()
    return streaks.where(F.col("snapshot_id").isin(h.latest) & (F.col("streak") >= BUSY_SNAPSHOTS)).select(
        "cluster", "root", "component_name", F.col("streak").alias("busy_snapshots"), "lowest_capacity"
    )


def _fold_busy(table: Any, new: History) -> Any | None:
    """The new nights' rows for the clusters they are of, the committed ones for the others."""
    rows = storm_busy_components(new)
    if table is None:
        return rows
    others = table.where(~_F().col("cluster").isin(new.renewed))
    return others if rows is None else others.unionByName(rows)


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


def _fold_chronic(table: Any, new: History) -> Any | None:
    """The runs that ended stay; the ones going on are the newest snapshot's of each cluster."""
    rows = kafka_chronic_under_replicated(new)
    if table is None:
        return rows
    F = _F()
    kept = table.where(~F.col("ongoing") | ~F.col("cluster").isin(new.renewed))
    return kept if rows is None else kept.unionByName(rows)


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
    # Or a nightly run makes its table from the committed one and the new nights' facts (running totals,
    # the runs going on), and replaces it: the year's facts are not read again.
    fold: Fold | None = None


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
    Metric(
        "storm_errors_daily",
        "Storm",
        "Errors per day (de-duplicated)",
        storm_errors_daily,
        fold=summed(storm_errors_daily, ["cluster", "root", "day", "topology_id", "component"], ["errors"]),
    ),
    Metric(
        "storm_error_signatures",
        "Storm",
        "Recurring error signatures",
        storm_error_signatures,
        fold=_fold_signatures,
    ),
    Metric("storm_supervisors", "Storm", "Supervisors, restarts and slot use", storm_supervisors, per_snapshot=True),
    Metric(
        "storm_supervisor_flaps",
        "Storm",
        "Flapping supervisors",
        storm_supervisor_flaps,
        fold=summed(storm_supervisor_flaps, FLAP_KEYS, FLAP_SUMS),
    ),
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
    Metric(
        "storm_busy_components",
        "Storm",
        f"Bolts that stay above capacity {BUSY_CAPACITY}",
        storm_busy_components,
        fold=_fold_busy,
    ),
    Metric(
        "storm_failure_rises",
        "Storm",
        "Components whose failures rose",
        storm_failure_rises,
        fold=summed(storm_failure_rises, ["cluster", "root", "component_name"], ["failure_rise", "snapshots_rising"]),
    ),
    Metric("kafka_brokers", "Kafka", "Live brokers and restarts", as_kept("kafka_brokers"), per_snapshot=True),
    Metric("kafka_controller", "Kafka", "Controller and elections", as_kept("kafka_controller"), per_snapshot=True),
    Metric("kafka_partition_health", "Kafka", "Partition health", as_kept("kafka_partition_health"), per_snapshot=True),
    Metric(
        "kafka_chronic_under_replicated",
        "Kafka",
        "Chronically under-replicated",
        kafka_chronic_under_replicated,
        fold=_fold_chronic,
    ),
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
FOLDED = [metric.name for metric in METRICS if metric.fold is not None]
