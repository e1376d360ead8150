"""Storm's facts: what the history keeps of each snapshot's Storm tables (``facts`` says what a fact is):
topologies by status and their churn, each topology present (so one gone is named), stored errors seen
for the first time, supervisors (present or missing) and their restarts, workers, executors that moved,
per component its last 10 minutes, and the bolts busy in a run of snapshots.

Two facts carry a state from night to night (``storm_supervisor_status``: every host a root has had;
``storm_busy_streaks``: a run of busy snapshots): a new night's rows go on from the kept rows of the night
before it (``Window.seen_at_context``), so no earlier night is read again."""

from __future__ import annotations

from typing import Any

from ..records import (
    StormComponentStats,
    StormError,
    StormExecutor,
    StormSupervisor,
    StormTopology,
    StormWorker,
)
from .facts import Fact, Window, churn, paired_with_previous, per_root, with_time
from .facts import spark_functions as _F
from .facts import spark_window as _window

BUSY_CAPACITY = 0.8  # Storm UI flags a bolt whose capacity nears 1: it cannot keep up

ERROR_KEYS = ["cluster", "root", "topology_id", "component", "time_secs", "host", "port", "error"]


def storm_topology_status(w: Window) -> Any | None:
    t = w.table(StormTopology)
    if t is None:
        return None
    return (
        t.groupBy("cluster", "snapshot_id", "snapshot_time", "root", "status")
        .count()
        .withColumnRenamed("count", "topologies")
    )


def storm_topology_churn(w: Window) -> Any | None:
    t = w.table(StormTopology)
    return None if t is None else churn(t, w, ["topology_id"], "topologies")


def storm_topology_presence(w: Window) -> Any | None:
    """Each topology of each snapshot, by id, with its name and status: one that is in a snapshot and not
    in the next is named (``incidents.topologies_gone``), which the counts per status cannot do."""
    t = w.table(StormTopology)
    if t is None:
        return None
    return t.select("cluster", "snapshot_id", "snapshot_time", "root", "topology_id", "name", "status")


def storm_errors_unique(w: Window) -> Any | None:
    """Stored errors seen for the first time: the same error is seen every night Storm keeps it."""
    e = w.table(StormError)
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
    sup = w.table(StormSupervisor)
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


def storm_supervisor_status(w: Window) -> Any | None:
    """Each supervisor host a cluster's root has had, at each snapshot from the first it was in: whether
    it is ``present``, and whether it was in the snapshot before (``was_present``; null at its first).
    Missing hosts and flaps are counted from these rows. A host the kept rows of the night before the new
    ones know goes on from there, absent or not."""
    sup = w.table(StormSupervisor)
    kept = w.seen_at_context("storm_supervisor_status")
    if sup is None and kept is None:
        return None
    F, W = _F(), _window()
    snaps = w.snaps.select("cluster", "snapshot_id", "snapshot_time", "idx")
    host = ["cluster", "root", "hostname"]
    if sup is not None:
        present = sup.select("cluster", "snapshot_id", "root", "hostname").distinct()
    else:  # no supervisor in the nights read: every host kept is missing
        present = kept.select("cluster", "snapshot_id", "root", "hostname").where(F.lit(False))  # type: ignore[union-attr]
    present = present.withColumn("present", F.lit(True))
    first = w.with_snapshot(present, "idx").select(*host, "idx")
    if kept is not None:
        known = w.with_snapshot(kept, "idx").select(*host, "idx")
        first = first.unionByName(known)
    first = first.groupBy(*host).agg(F.min("idx").alias("first_idx"))
    rows = (
        snaps.join(first, "cluster")
        .where(F.col("idx") >= F.col("first_idx"))
        .join(present.drop("cluster"), ["snapshot_id", "root", "hostname"], "left")
        .fillna(False, ["present"])
    )
    by_host = W.partitionBy(*host).orderBy("idx")
    return rows.withColumn("was_present", F.lag("present").over(by_host)).select(
        "cluster", "snapshot_id", "snapshot_time", "root", "hostname", "present", "was_present"
    )


def storm_supervisor_restarts(w: Window) -> Any | None:
    """Supervisors whose uptime went down since the previous snapshot."""
    sup = w.table(StormSupervisor)
    if sup is None:
        return None
    F = _F()
    pairs = paired_with_previous(
        sup.select("cluster", "snapshot_id", "root", "hostname", "uptime_secs"), w, ["hostname"]
    )
    return pairs.where(F.col("uptime_secs") < F.col("prev_uptime_secs")).select(
        "cluster", "snapshot_id", "root", "hostname"
    )


def storm_workers(w: Window) -> Any | None:
    """Per snapshot: workers, workers with a stale heartbeat, and worker restarts (uptime went down)."""
    workers = w.table(StormWorker)
    if workers is None:
        return None
    F = _F()
    counts = workers.groupBy("snapshot_id", "root").agg(
        F.count(F.lit(1)).alias("workers"), F.sum(F.coalesce(F.col("stale").cast("int"), F.lit(0))).alias("stale")
    )
    restarts = (
        paired_with_previous(
            workers.select("cluster", "snapshot_id", "root", "topology_id", "node", "port", "uptime_secs"),
            w,
            ["topology_id", "node", "port"],
        )
        .where(F.col("uptime_secs") < F.col("prev_uptime_secs"))
        .groupBy("snapshot_id", "root")
        .count()
        .withColumnRenamed("count", "restarts")
    )
    return (
        per_root(w, counts)
        .join(counts, ["snapshot_id", "root"], "left")
        .join(restarts, ["snapshot_id", "root"], "left")
        .fillna(0, ["workers", "stale", "restarts"])
    )


def storm_executor_moves(w: Window) -> Any | None:
    """Per snapshot and topology: executors whose node or port changed since the previous snapshot."""
    x = w.table(StormExecutor)
    if x is None:
        return None
    F = _F()
    pairs = paired_with_previous(
        x.select("cluster", "snapshot_id", "root", "topology_id", "start_task", "end_task", "node", "port"),
        w,
        ["topology_id", "start_task", "end_task"],
    )
    moved = pairs.where((F.col("node") != F.col("prev_node")) | (F.col("port") != F.col("prev_port")))
    return (
        with_time(moved, w)
        .groupBy("cluster", "snapshot_id", "snapshot_time", "root", "topology_id")
        .count()
        .withColumnRenamed("count", "moved_executors")
    )


def _components(w: Window) -> Any | None:
    """storm_component_stats in the 10-minute window at each snapshot, labelled ``topology/component``."""
    c = w.table(StormComponentStats)
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
    pairs = paired_with_previous(
        c.select("cluster", "snapshot_id", "root", "component_name", "failed"), w, ["component_name"]
    )
    return pairs.where(F.col("failed") > F.col("prev_failed")).select(
        "cluster",
        "snapshot_id",
        "root",
        "component_name",
        (F.col("failed") - F.col("prev_failed")).alias("failure_rise"),
    )


def storm_busy_streaks(w: Window) -> Any | None:
    """Each component above ``BUSY_CAPACITY`` in a snapshot, with its run so far: ``streak`` consecutive
    snapshots above it up to this one, and the ``lowest_capacity`` in them. A run the kept rows of the
    night before the new ones hold goes on from there."""
    c = _components(w)
    if c is None:
        return None
    F, W = _F(), _window()
    component = ["cluster", "root", "component_name"]
    rows = w.with_snapshot(
        c.where(F.col("capacity") > BUSY_CAPACITY).select("snapshot_id", *component, "capacity"), "idx"
    )
    by_component = W.partitionBy(*component).orderBy("idx")
    rows = rows.withColumn("run", F.col("idx") - F.row_number().over(by_component))
    so_far = W.partitionBy(*component, "run").orderBy("idx").rowsBetween(W.unboundedPreceding, W.currentRow)
    rows = rows.withColumn("first_idx", F.min("idx").over(so_far)).withColumn("lowest", F.min("capacity").over(so_far))
    streak, lowest = F.col("idx") - F.col("first_idx") + 1, F.col("lowest")
    kept = w.seen_at_context("storm_busy_streaks")
    if kept is not None:
        kept = w.with_snapshot(kept, "idx").select(
            *component,
            F.col("idx").alias("kept_idx"),
            F.col("streak").alias("kept_streak"),
            F.col("lowest_capacity").alias("kept_lowest"),
        )
        rows = rows.join(kept, component, "left")
        goes_on = F.col("first_idx") == F.col("kept_idx")
        streak = F.when(goes_on, streak + F.col("kept_streak") - 1).otherwise(streak)
        lowest = F.when(goes_on, F.least(lowest, F.col("kept_lowest"))).otherwise(lowest)
    return rows.select(
        "cluster", "snapshot_id", "root", "component_name", streak.cast("long").alias("streak"),
        lowest.alias("lowest_capacity"),
    )  # fmt: skip


STORM_FACTS = [
    Fact("storm_topology_status", storm_topology_status, (StormTopology,)),
    Fact("storm_topology_churn", storm_topology_churn, (StormTopology,)),
    Fact("storm_topology_presence", storm_topology_presence, (StormTopology,)),
    Fact("storm_errors_unique", storm_errors_unique, (StormError,)),
    Fact("storm_supervisor_presence", storm_supervisor_presence, (StormSupervisor,)),
    Fact("storm_supervisor_status", storm_supervisor_status, (StormSupervisor,)),
    Fact("storm_supervisor_restarts", storm_supervisor_restarts, (StormSupervisor,)),
    Fact("storm_workers", storm_workers, (StormWorker,)),
    Fact("storm_executor_moves", storm_executor_moves, (StormExecutor,)),
    Fact("storm_component_trend", storm_component_trend, (StormComponentStats,)),
    Fact("storm_failure_rise_events", storm_failure_rise_events, (StormComponentStats,)),
    Fact("storm_busy_streaks", storm_busy_streaks, (StormComponentStats,)),
]
