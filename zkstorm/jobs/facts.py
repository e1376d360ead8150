"""What the history keeps of each snapshot (its facts), and the frame they are computed in.

A fact is small per-snapshot rows computed from that snapshot alone, or from it and the previous snapshot
*of the same cluster* (``prev_id``), so a missing night compares the two nights around it. A fact's rows
for a snapshot never change once computed, which is what lets ``zkstorm history`` append the facts of new
snapshots to those of earlier runs (``jobs/store.py``) instead of reading every snapshot again. The big
tables (``kafka_partitions``, ``znodes``, ``storm_executors``) are read only by facts.

A fact (``Fact``) names the snapshot tables it reads by their record types (``reads=(KafkaPartition,)``),
and asks its ``Window`` for them by type too: the table's name is the one the snapshot writer gives that
type (``export.parquet.table_name``), so a renamed record is an error here, not a fact that silently
reads nothing. Storm's facts are in ``storm_facts``, Kafka's in ``kafka_facts``; ZooKeeper's own is here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..export.parquet import table_name
from ..records import ZkUsage, Znode


def spark_functions() -> Any:
    """``pyspark.sql.functions``, imported when a fact is computed (the CLI imports the job lazily too)."""
    from pyspark.sql import functions

    return functions


def spark_window() -> Any:
    """``pyspark.sql.Window``, imported when a fact is computed."""
    from pyspark.sql import Window

    return Window


_F = spark_functions  # the names the fact bodies were written with
_window = spark_window


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
    keeping: Any = field(default_factory=threading.RLock, repr=False, compare=False)

    def table(self, record_type: type) -> Any | None:
        """The rows of the snapshot table of ``record_type`` (the one its writer names, ``table_name``)."""
        return self.tables.table(table_name(record_type))

    def seen_at_context(self, name: str) -> Any | None:
        """The kept rows of fact ``name`` for the ``context`` snapshots: where a fact that carries a
        state from snapshot to snapshot (a run of under-replication) goes on from. Filtered by id, so
        Parquet reads only what those snapshots wrote."""
        rows = self.seen.table(name)
        if rows is None or not self.context:
            return None
        return rows.where(_F().col("snapshot_id").isin(self.context))

    def keep(self, name: str, make: Callable[[], Any | None]) -> Any | None:
        """What several facts compute from, computed once and cached (``release`` lets it go), whichever
        writer's thread plans it first."""
        with self.keeping:
            if name not in self.kept:
                frame = make()
                self.kept[name] = frame.persist() if frame is not None else None
            return self.kept[name]

    def release(self) -> None:
        for frame in self.kept.values():
            if frame is not None:
                frame.unpersist()


def paired_with_previous(df: Any, snaps: Any, keys: list[str]) -> Any:
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


def with_previous(df: Any, snaps: Any, keys: list[str], columns: list[str]) -> Any:
    """Each row with ``columns`` of the same key's row in the previous snapshot of its cluster
    (``prev_<column>``); rows whose key was not in the previous snapshot are dropped. What ``paired_with_previous``
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


def per_root(snaps: Any, *frames: Any) -> Any:
    """The snapshot frame's cluster and time for every (snapshot, root) that ``frames`` have rows of:
    the rows a per-snapshot count is given for."""
    keys = frames[0].select("snapshot_id", "root")
    for frame in frames[1:]:
        keys = keys.unionByName(frame.select("snapshot_id", "root"))
    return snaps.select("cluster", "snapshot_id", "snapshot_time").join(keys.distinct(), "snapshot_id")


def with_time(df: Any, snaps: Any) -> Any:
    """Each row with its snapshot's time."""
    return df.join(snaps.select("snapshot_id", "snapshot_time"), "snapshot_id")


def zookeeper_subtrees(w: Window) -> Any | None:
    """Per snapshot: znodes and data bytes under each subtree two levels deep (``/kafka/brokers``)."""
    z = w.table(Znode)
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


@dataclass(frozen=True)
class Fact:
    name: str
    compute: Callable[[Window], Any | None]
    reads: tuple[type, ...]  # the record types whose snapshot tables it reads

    @property
    def tables(self) -> tuple[str, ...]:
        """The names of the snapshot tables it reads, as the snapshot writer names them."""
        return tuple(table_name(record_type) for record_type in self.reads)


def presence_grid(snaps: Any, df: Any, key: str) -> Any:
    """Every (snapshot, root, key) of a cluster, with ``present`` saying whether the key was in that
    snapshot under that root."""
    F = _F()
    keys = df.select("cluster", "root", key).distinct()
    present = df.select("snapshot_id", "root", key).distinct().withColumn("present", F.lit(True))
    return snaps.join(keys, "cluster").join(present, ["snapshot_id", "root", key], "left").fillna(False, ["present"])


def zookeeper_usage(w: Window) -> Any | None:
    """Per snapshot: znodes and data bytes of each subtree two levels deep and of each record kind per
    root, with what each is to Storm or Kafka (the snapshot's ``zk_usage``, already summed at the walk)."""
    u = w.table(ZkUsage)
    if u is None:
        return None
    F = _F()
    return u.where(F.col("by").isin("subtree", "record_kind")).select(
        "cluster", "snapshot_id", "snapshot_time", "by", "key", "meaning", "root", "znodes", "data_bytes"
    )


ZOOKEEPER_FACTS = [
    Fact("zookeeper_subtrees", zookeeper_subtrees, (Znode,)),
    Fact("zookeeper_usage", zookeeper_usage, (ZkUsage,)),
]
