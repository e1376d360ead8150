"""The committed snapshots of a dataset, as Spark sees them.

Only what a manifest lists is read: a snapshot without a manifest (a run that was killed or is still
writing) does not exist for the job, and neither does a part file that no manifest names. A damaged
manifest is skipped with one warning naming it (``zkstorm.export.manifest`` checks every manifest the same
way for the snapshot writer, ``diff`` and this job). Manifests and files are read through Spark, so
SNAPSHOTS may be any path Hadoop can open (``hdfs://``, ``s3a://``, ``file://``, a local folder); a
location only pyarrow opens (``s3://`` on a Spark without an S3 connector) is read through pyarrow and
local copies of the files (``export.objectstore.Staging``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..errors import DamagedManifestError
from ..export.manifest import MANIFESTS, SNAPSHOT, manifest_time, of_kind, parse_manifest
from ..export.objectstore import Staging

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SnapshotRef:
    snapshot_id: str
    cluster: str
    snapshot_time: datetime
    index: int  # position in its cluster's sequence, from 0
    files: tuple[str, ...]
    rows: dict[str, int]  # table → rows, from the manifest
    manifest: dict[str, Any]


class SnapshotSet:
    """The committed snapshots under ``base`` between ``since`` and ``until`` (dates, inclusive)."""

    def __init__(
        self,
        spark: Any,
        base: str,
        *,
        since: date | None = None,
        until: date | None = None,
        staging: Staging | None = None,
        dataset: str = SNAPSHOT,
    ) -> None:
        self.spark = spark
        self.base = base.rstrip("/")
        self.dataset = dataset  # snapshots, or changes runs (``history --changes``): never the other kind
        self.since, self.until = since, until
        self.staging = staging if staging is not None and staging.needed(self.base) else None
        manifests = self._manifests()
        kept = [
            m
            for m in manifests
            if (since is None or manifest_time(m).date() >= since)
            and (until is None or manifest_time(m).date() <= until)
        ]
        kept.sort(key=lambda m: (m["cluster"], manifest_time(m)))
        refs: list[SnapshotRef] = []
        position: dict[str, int] = {}
        for m in kept:
            index = position.get(m["cluster"], 0)
            position[m["cluster"]] = index + 1
            refs.append(self._ref(m, index))
        self.snapshots = refs
        # from every committed snapshot, not the selected ones: a series is named the same in any window
        self.kafka_series = kafka_series(manifests, self._ids_of_older_snapshots(manifests))

    def _ref(self, m: dict[str, Any], index: int) -> SnapshotRef:
        files = tuple(f"{self.base}/{f}" for f in m["files"])
        rows = {k: int(v) for k, v in m["tables"].items() if isinstance(v, int)}
        return SnapshotRef(m["snapshot_id"], m["cluster"], manifest_time(m), index, files, rows, m)

    def _ids_of_older_snapshots(self, manifests: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
        """The Kafka cluster ids of the snapshots whose manifest does not list them (written before
        manifests did), read from their ``kafka_cluster_ids`` tables: only for clusters whose snapshots
        name more than one Kafka root, the only ones a series can continue across, so a nightly run of a
        cluster that never moved reads nothing more."""
        roots: dict[str, set[str]] = {}
        for m in manifests:
            roots.setdefault(m["cluster"], set()).update(_kafka_roots(m))
        older = [
            self._ref(m, 0)
            for m in manifests
            if len(roots[m["cluster"]]) > 1 and not isinstance(m.get(KAFKA_CLUSTER_IDS), dict)
        ]
        frame = self._read(older, KAFKA_CLUSTER_IDS) if older else None
        ids: dict[str, dict[str, str]] = {}
        if frame is not None:
            for row in frame.select("snapshot_id", "root", "cluster_id").collect():
                if row["root"] is not None and row["cluster_id"]:
                    ids.setdefault(row["snapshot_id"], {})[row["root"]] = row["cluster_id"]
        return ids

    def _manifests(self) -> list[dict[str, Any]]:
        if self.staging is not None:
            from ..export.parquet import list_manifests, open_filesystem

            return list_manifests(*open_filesystem(self.base), self.dataset)  # each damaged one skipped with a warning
        manifests = []
        for path, text in text_files(self.spark, f"{self.base}/{MANIFESTS}/*.json"):
            try:
                manifests.append(parse_manifest(path, text))
            except DamagedManifestError as exc:
                log.warning("%s; skipped", str(exc))
        return of_kind(manifests, self.base, self.dataset)

    def __len__(self) -> int:
        return len(self.snapshots)

    def frame(self) -> Any:
        """One row per snapshot: cluster, snapshot_id, snapshot_time, idx, prev_id (null for the first)."""
        return snapshot_frame(self.spark, [(r.cluster, r.snapshot_id, r.snapshot_time) for r in self.snapshots])

    def table(self, name: str, ids: Collection[str] | None = None) -> Any | None:
        """The rows of one table from the committed snapshots (those in ``ids`` only, when given), or None
        if none of them has it. Read with the table's schema from ``zkstorm.export.parquet`` when it is one of
        zkstorm's tables, so Spark neither infers nor merges schemas (a column an older snapshot lacks
        reads as null). The ``root`` of a snapshot written before rows carried it is the one root its
        manifest names (``export.parquet.manifest_root``). A Kafka row's ``root`` is its series' root
        (``kafka_series``): a cluster read under ``kraft:`` after its migration goes on under the root it
        had in ZooKeeper."""
        frame = self._read([ref for ref in self.snapshots if ids is None or ref.snapshot_id in ids], name)
        if frame is None or not name.startswith("kafka_"):
            return frame
        return series_roots(frame, self.kafka_series, keep_read_root=name == KAFKA_CLUSTER_IDS)

    def _read(self, refs: list[SnapshotRef], name: str) -> Any | None:
        from ..export.parquet import manifest_root

        prefix = len(self.base) + 1
        paths = [f for ref in refs for f in ref.files if f[prefix:].split("/", 1)[0] == name]
        if not paths:
            return None
        if self.staging is not None:
            paths = self.staging.fetch(self.base, [p[prefix:] for p in paths])
        schema = spark_schema(name)
        reader = self.spark.read.schema(schema) if schema is not None else self.spark.read.option("mergeSchema", "true")
        frame = reader.parquet(*paths)
        legacy = {ref.snapshot_id: manifest_root(ref.manifest, name) for ref in refs}
        legacy = {snapshot_id: root for snapshot_id, root in legacy.items() if root is not None}
        if legacy and "root" in frame.columns:
            from pyspark.sql import functions as F

            named = F.create_map(*[F.lit(x) for pair in sorted(legacy.items()) for x in pair])
            frame = frame.withColumn("root", F.coalesce(F.col("root"), named[F.col("snapshot_id")]))
        return frame


KAFKA_CLUSTER_IDS = "kafka_cluster_ids"  # the manifest's key and the snapshot table (``KafkaClusterId``)


def _kafka_roots(manifest: dict[str, Any]) -> list[str]:
    roots = (manifest.get("roots") or {}).get("kafka") if isinstance(manifest.get("roots"), dict) else None
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def _cluster_ids(manifest: dict[str, Any], older: dict[str, dict[str, str]]) -> dict[str, str]:
    """Kafka root → cluster id of one snapshot: its manifest's, or read from its table (``older``)."""
    listed = manifest.get(KAFKA_CLUSTER_IDS)
    if isinstance(listed, dict):
        return {root: cid for root, cid in listed.items() if isinstance(root, str) and isinstance(cid, str) and cid}
    return older.get(manifest["snapshot_id"], {})


def kafka_series(manifests: list[dict[str, Any]], older: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """snapshot id → {Kafka root read: the root of its series} for the roots that continue another one.

    A Kafka cluster is one history for as long as its cluster id (``/cluster/id``; a KRaft cluster's
    ``meta.properties``, which KIP-866 formats with the id ZooKeeper holds) stays the same under one
    cluster name: its series is named by the root the id was first read under, in time order. So the
    night a cluster moves from ZooKeeper (``/kafka``) to its KRaft controllers (``kraft:``), its brokers,
    partitions and runs of under-replication go on in the ``/kafka`` series instead of starting again.
    Two roots of one snapshot stay two series even with one id (a copy is not a move), and a cluster
    rebuilt with a new id is a new series: the id is the proof, not the name. Computed from every
    committed snapshot, so a nightly update and a full rebuild name each series alike."""
    first: dict[tuple[str, str], str] = {}  # (cluster, Kafka cluster id) → the root it was first read under
    series: dict[str, dict[str, str]] = {}
    for m in sorted(manifests, key=lambda m: (m["cluster"], manifest_time(m), m["snapshot_id"])):
        ids = _cluster_ids(m, older)
        for root, cluster_id in sorted(ids.items()):
            named = first.setdefault((m["cluster"], cluster_id), root)
            if named != root and named not in ids:
                series.setdefault(m["snapshot_id"], {})[root] = named
    return series


def series_roots(frame: Any, series: dict[str, dict[str, str]], *, keep_read_root: bool = False) -> Any:
    """``frame`` (a Kafka table's rows) with each ``root`` replaced by its series' root; with
    ``keep_read_root`` the root each row was read under stays beside it (``read_root``), for the one
    fact that tells where a cluster was read (``kafka_facts.kafka_sources``)."""
    from pyspark.sql import functions as F

    if keep_read_root:
        frame = frame.withColumn("read_root", F.col("root"))
    if not series or "root" not in frame.columns:
        return frame
    pairs = sorted(
        (f"{snapshot_id}\0{root}", named) for snapshot_id, roots in series.items() for root, named in roots.items()
    )
    renamed = F.create_map(*[F.lit(x) for pair in pairs for x in pair])
    key = F.concat_ws("\0", F.col("snapshot_id"), F.col("root"))
    return frame.withColumn("root", F.coalesce(renamed[key], F.col("root")))


def text_files(spark: Any, pattern: str) -> list[tuple[str, str]]:
    """(path, text) of every file matching ``pattern`` (any filesystem Spark reads); none if the folder
    does not exist."""
    try:
        return list(spark.sparkContext.wholeTextFiles(pattern).collect())
    except Exception as exc:  # Py4J wraps "input path does not exist"
        if "does not exist" in str(exc) or "Input Pattern" in str(exc):
            return []
        raise


def snapshot_rows(snapshots: list[tuple[str, str, datetime]]) -> list[tuple[str, str, datetime, int, str | None]]:
    """(cluster, snapshot_id, snapshot_time, idx, prev_id) per snapshot, in time order within each cluster
    (``snapshot_frame``'s rows)."""
    rows = []
    position: dict[str, int] = {}
    previous: dict[str, str] = {}
    for cluster, snapshot_id, at in sorted(snapshots, key=lambda s: (s[0], s[2], s[1])):
        index = position.get(cluster, 0)
        position[cluster] = index + 1
        rows.append((cluster, snapshot_id, at, index, previous.get(cluster)))
        previous[cluster] = snapshot_id
    return rows


def snapshot_frame(spark: Any, snapshots: list[tuple[str, str, datetime]]) -> Any:
    """One row per (cluster, snapshot_id, snapshot_time), in time order within each cluster: ``idx`` its
    position from 0, ``prev_id`` the snapshot before it (null for the first)."""
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("cluster", T.StringType(), False),
            T.StructField("snapshot_id", T.StringType(), False),
            T.StructField("snapshot_time", T.TimestampType(), False),
            T.StructField("idx", T.IntegerType(), False),
            T.StructField("prev_id", T.StringType(), True),
        ]
    )
    return spark.createDataFrame(snapshot_rows(snapshots), schema)


@functools.cache
def _record_types() -> dict[str, type]:
    from ..export.parquet import table_name
    from ..records import RECORD_TYPES, DecodeFailure, Unreadable, Znode

    return {table_name(t): t for t in (*RECORD_TYPES, Znode, DecodeFailure, Unreadable)}


def spark_schema(name: str) -> Any | None:
    """The Spark schema of one of zkstorm's snapshot tables (None for a table it does not know)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from ..export.parquet import arrow_schema

    record_type = _record_types().get(name)
    return None if record_type is None else from_arrow_schema(arrow_schema(record_type))
