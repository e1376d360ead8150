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


# A read of this many snapshots or fewer (a nightly update reads two a cluster) gives each row its snapshot's
# columns from a map written into the plan (``Window.with_snapshot``) instead of a join with the snapshot
# frame. On a small read each such join was a shuffle of the rows and a stage of its own, and the stages,
# not the rows, were the cost; looking a value up scans the map's keys, so a read of many snapshots joins.
LOOKUP_SNAPSHOTS = 16

SNAPSHOT_COLUMNS = ("cluster", "snapshot_time", "idx", "prev_id", "next_id")


def snapshot_lookups(rows: list[tuple[str, str, Any, int, str | None]]) -> dict[str, dict[str, Any]]:
    """Per snapshot column (``SNAPSHOT_COLUMNS``), snapshot id → its value, for the snapshots ``rows`` (the
    read ones, as ``inputs.snapshot_rows`` gives them); ``next_id`` is the read snapshot after it."""
    following = {prev: snapshot_id for _, snapshot_id, _, _, prev in rows if prev is not None}
    return {
        "cluster": {r[1]: r[0] for r in rows},
        "snapshot_time": {r[1]: r[2] for r in rows},
        "idx": {r[1]: r[3] for r in rows},
        "prev_id": {r[1]: r[4] for r in rows},
        "next_id": {r[1]: following.get(r[1]) for r in rows},
    }


def _literal_map(values: dict[str, Any], column: str) -> Any:
    """``values`` as a Spark map literal of the column's type (``inputs.snapshot_frame``'s)."""
    from pyspark.sql.types import TimestampType

    F = _F()
    kind = {"idx": "int", "snapshot_time": "timestamp"}.get(column, "string")

    def value(v: Any) -> Any:
        if v is None:
            return F.lit(None).cast(kind)
        if kind == "timestamp":  # converted as createDataFrame converts the frame's times
            return F.timestamp_micros(F.lit(TimestampType().toInternal(v)))
        return F.lit(v).cast(kind)

    return F.create_map(*[x for key in sorted(values) for x in (F.lit(key), value(values[key]))])


@dataclass
class Window:
    """What the facts of some snapshots are computed from: ``snaps`` (the snapshot frame rows of the new
    snapshots and, where a cluster's history already has facts, the one snapshot before them, for
    comparisons) and their tables (``tables.table(name)``: rows of those snapshots only). ``seen`` holds
    the facts already kept, for the one fact that de-duplicates against the past (stored errors).

    A fact gives its rows their snapshot's position, time or neighbours with ``with_snapshot``, not by
    joining ``snaps``: on a nightly update that is a lookup in the plan, not a shuffle."""

    tables: Tables
    snaps: Any
    seen: Tables
    context: list[str] = field(default_factory=list)  # the kept snapshots read only to compare with
    lookups: dict[str, dict[str, Any]] | None = None  # ``snapshot_lookups`` of a read of few snapshots
    kept: dict[str, Any] = field(default_factory=dict)
    keeping: Any = field(default_factory=threading.RLock, repr=False, compare=False)

    def table(self, record_type: type) -> Any | None:
        """The rows of the snapshot table of ``record_type`` (the one its writer names, ``table_name``)."""
        return self.tables.table(table_name(record_type))

    def with_snapshot(self, df: Any, *columns: str) -> Any:
        """``df`` with ``columns`` (of ``SNAPSHOT_COLUMNS``) of each row's snapshot added after its own:
        from ``lookups`` when the read has them, else joined from ``snaps``. A row of a snapshot the
        window does not read is dropped; ``next_id`` is null for the last snapshot read."""
        F = _F()
        if self.lookups is not None:
            lookups = self.lookups
            return df.where(F.col("snapshot_id").isin(sorted(lookups["idx"]))).select(
                *df.columns, *[_literal_map(lookups[c], c)[F.col("snapshot_id")].alias(c) for c in columns]
            )
        joined = df
        framed = [c for c in columns if c != "next_id"]
        if framed:
            joined = joined.join(self.snaps.select("snapshot_id", *framed), "snapshot_id")
        if "next_id" in columns:
            following = self.snaps.where(F.col("prev_id").isNotNull()).select(
                F.col("prev_id").alias("snapshot_id"), F.col("snapshot_id").alias("next_id")
            )
            joined = joined.join(following, "snapshot_id", "left")
        return joined.select(*df.columns, *columns)

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


def paired_with_previous(df: Any, w: Window, keys: list[str]) -> Any:
    """Each row joined with the same key's row in the previous snapshot (columns prefixed ``prev_``);
    rows with no previous snapshot or no previous row for the key are dropped."""
    F = _F()
    current = w.with_snapshot(df, "prev_id", "idx")
    prev = df.select(
        F.col("snapshot_id").alias("prev_id"),
        *[F.col(k) for k in ["cluster", "root", *keys]],
        *[F.col(c).alias(f"prev_{c}") for c in df.columns if c not in ("snapshot_id", "cluster", "root", *keys)],
    )
    return current.join(prev, ["prev_id", "cluster", "root", *keys])


def with_previous(df: Any, w: Window, keys: list[str], columns: list[str]) -> Any:
    """Each row with ``columns`` of the same key's row in the previous snapshot of its cluster
    (``prev_<column>``); rows whose key was not in the previous snapshot are dropped. What ``paired_with_previous``
    gives, by one sort of the rows by key instead of a join of the table with itself: for the largest
    tables (a year of partitions)."""
    F, W = _F(), _window()
    by_key = W.partitionBy("cluster", "root", *keys).orderBy("idx")
    rows = w.with_snapshot(df, "idx")
    for column in ["idx", *columns]:
        rows = rows.withColumn(f"prev_{column}", F.lag(column).over(by_key))
    return rows.where(F.col("prev_idx") == F.col("idx") - 1)


def churn(df: Any, w: Window, keys: list[str], what: str) -> Any:
    """Per snapshot and root: how many ``keys`` there are (``what``), how many appeared (absent in the
    previous snapshot) and how many disappeared. A root has a row in a snapshot that has rows of it or whose
    previous snapshot had. Each key is marked where it is and, as it was, in the snapshot after: one
    grouping by key tells both, where joins of the snapshots with each other took a dozen stages."""
    F = _F()
    present = df.select("cluster", "snapshot_id", "root", *keys).distinct()
    here = present.select("snapshot_id", "cluster", "root", *keys, F.lit(1).alias("here"), F.lit(0).alias("was"))
    was = (
        w.with_snapshot(present, "next_id")
        .where(F.col("next_id").isNotNull())
        .select(
            F.col("next_id").alias("snapshot_id"),
            "cluster",
            "root",
            *keys,
            F.lit(0).alias("here"),
            F.lit(1).alias("was"),
        )
    )
    marked = (
        here.unionByName(was)
        .groupBy("snapshot_id", "cluster", "root", *keys)
        .agg(F.max("here").alias("here"), F.max("was").alias("was"))
    )
    marked = w.with_snapshot(marked, "prev_id")

    def count(condition: Any) -> Any:
        return F.sum(F.when(condition, 1).otherwise(0)).cast("long")

    here_now, there_before = F.col("here") == 1, F.col("was") == 1
    counts = marked.groupBy("snapshot_id", "root").agg(
        count(here_now & ~there_before & F.col("prev_id").isNotNull()).alias(f"{what}_appeared"),
        count(there_before & ~here_now).alias(f"{what}_disappeared"),
        count(here_now).alias(what),
    )
    return w.with_snapshot(counts, "cluster", "snapshot_time").select(
        "snapshot_id", "root", "cluster", "snapshot_time", f"{what}_appeared", f"{what}_disappeared", what
    )


def per_root(w: Window, *frames: Any) -> Any:
    """The snapshot frame's cluster and time for every (snapshot, root) that ``frames`` have rows of:
    the rows a per-snapshot count is given for."""
    keys = frames[0].select("snapshot_id", "root")
    for frame in frames[1:]:
        keys = keys.unionByName(frame.select("snapshot_id", "root"))
    return w.with_snapshot(keys.distinct(), "cluster", "snapshot_time").select(
        "snapshot_id", "cluster", "snapshot_time", "root"
    )


def with_time(df: Any, w: Window) -> Any:
    """Each row with its snapshot's time."""
    return w.with_snapshot(df, "snapshot_time")


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
