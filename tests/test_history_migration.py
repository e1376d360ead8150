"""One Kafka cluster's history across its move from ZooKeeper to KRaft (``jobs.inputs.kafka_series``).

The snapshots are of the real KIP-866 migration of ``tests/data/real/kraft-migration-3.9`` (Kafka 3.9.2):
night 0 read from ZooKeeper in dual-write, nights 1 and 2 from the KRaft controller's metadata folder
(finalized, then its last record), all three as ``--cluster prod``, as the nightly job is
switched from ``--zk`` to ``--from-kraft`` the day the cluster moves.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import zkstorm
from tests import history_tables
from tests.test_kafka_migration import KRAFT_DIR, ZOOKEEPER, at
from zkstorm.export.parquet import take_snapshot
from zkstorm.jobs.history import run_history

pytestmark = pytest.mark.spark

CLUSTER_ID = "1iXQC_DET4KcULbd1gkakQ"  # the capture's /cluster/id, and its KRaft meta.properties' cluster.id
# (when the snapshot was taken, the source it read, the Kafka root it read under)
NIGHTS: list[tuple[datetime, Callable[[str], Any], str]] = [
    (at("dual_write"), lambda kraft: zkstorm.from_files(ZOOKEEPER, at=at("dual_write")), "/"),
    (at("finalized"), lambda kraft: zkstorm.from_kraft(kraft, at=at("finalized")), "kraft:"),
    (at("finalized") + timedelta(minutes=1), zkstorm.from_kraft, "kraft:"),
]


def _nights(out: Path, kraft: str, nights: range) -> None:
    for i in nights:
        taken, opening, _ = NIGHTS[i]
        with opening(kraft) as cluster:
            take_snapshot(cluster, str(out), name="prod", snapshot_id=f"prod@{i}", at=taken)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("migrated") / "snapshots"
    _nights(out, KRAFT_DIR, range(len(NIGHTS)))
    return out


def test_each_snapshot_names_the_kafka_cluster_id_it_read(migrated: Path) -> None:
    listed = {}
    for manifest in sorted((migrated / "_manifests").glob("*.json")):
        m = json.loads(manifest.read_text())
        listed[m["snapshot_id"]] = m["kafka_cluster_ids"]
    assert listed == {f"prod@{i}": {root: CLUSTER_ID} for i, (_, _, root) in enumerate(NIGHTS)}


def test_a_cluster_moved_to_kraft_is_one_history_told_once(spark: Any, migrated: Path, tmp_path: Path) -> None:
    """Its brokers and partitions go on under ZooKeeper's root: no broker gone, no new series, one
    ``kafka_migrated`` incident at the first night read from the KRaft controllers; and the night-by-night
    update names the series as the full rebuild does."""
    full = run_history(spark, str(migrated), out=str(tmp_path / "full"))
    brokers = spark.read.parquet(str(tmp_path / "full" / "kafka_brokers")).orderBy("snapshot_time").collect()
    assert [(r["root"], r["brokers"]) for r in brokers] == [("/", 3)] * len(NIGHTS)
    assert [(r["brokers_disappeared"], r["brokers_appeared"]) for r in brokers[1:]] == [(0, 0)] * (len(NIGHTS) - 1)
    health = spark.read.parquet(str(tmp_path / "full" / "kafka_partition_health"))
    assert {r["root"] for r in health.collect()} == {"/"}
    kinds = [(i.kind, i.root, i.started) for i in full.incidents if i.system == "Kafka"]
    assert ("kafka_migrated", "/", NIGHTS[1][0]) in kinds
    assert [k for k, *_ in kinds].count("kafka_migrated") == 1
    assert "broker_gone" not in [k for k, *_ in kinds]
    moved = next(i for i in full.incidents if i.kind == "kafka_migrated")
    assert moved.summary == (
        f"Kafka cluster {CLUSTER_ID} read from its KRaft controllers, no longer from ZooKeeper (/): "
        "its history goes on under /"
    )

    # night by night: the ZooKeeper night alone, then the KRaft ones added; the ZooKeeper night's manifest
    # as a snapshot written before manifests listed the ids, which are then read from its table
    snapshots, out = tmp_path / "snapshots", tmp_path / "nightly"
    shutil.copytree(migrated, snapshots)
    older = snapshots / "_manifests" / "prod@0.json"
    older.write_text(json.dumps({k: v for k, v in json.loads(older.read_text()).items() if k != "kafka_cluster_ids"}))
    later = {p.name: p.read_bytes() for p in (snapshots / "_manifests").glob("*.json") if p.stem != "prod@0"}
    for name in later:
        (snapshots / "_manifests" / name).unlink()
    run_history(spark, str(snapshots), out=str(out))
    for name, data in later.items():
        (snapshots / "_manifests" / name).write_bytes(data)
    assert run_history(spark, str(snapshots), out=str(out)).mode == "incremental"
    assert history_tables.differing(out, tmp_path / "full") == {}


def test_a_kraft_cluster_of_another_id_is_another_history(spark: Any, tmp_path: Path) -> None:
    """Not the same cluster (formatted with a new id, not migrated): two series, and no migration."""
    kraft = tmp_path / "kraft"
    shutil.copytree(KRAFT_DIR, kraft)
    properties = kraft / "meta.properties"
    properties.write_text(properties.read_text().replace(CLUSTER_ID, "AnotherClusterId00000A"))
    snapshots = tmp_path / "snapshots"
    _nights(snapshots, str(kraft), range(len(NIGHTS)))
    result = run_history(spark, str(snapshots), out=str(tmp_path / "history"))
    assert "kafka_migrated" not in [i.kind for i in result.incidents]
    brokers = spark.read.parquet(str(tmp_path / "history" / "kafka_brokers")).collect()
    registered = sorted((r["root"], r["brokers"]) for r in brokers if r["brokers"])
    assert registered == [("/", 3), ("kraft:", 3), ("kraft:", 3)]  # the ZooKeeper series' night, then KRaft's two
