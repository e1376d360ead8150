"""Object storage for real: ``snapshot``, ``history`` and ``diff`` over ``s3://bucket/prefix`` against the
suite's S3-protocol server (moto, on loopback; ``tests/conftest.py``), endpoint and credentials from the
standard AWS environment variables. Spark cannot open ``s3://`` here (pyspark ships no hadoop-aws), so the
history job reads and writes the store through pyarrow: the same tables as a local run."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq
from kazoo.client import KazooClient

from tests.conftest import Chroot, S3Server, load_cluster
from tests.faults import zkstorm
from tests.test_cli import run


def _objects(server: S3Server, bucket: str, prefix: str = "") -> list[str]:
    pages = server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def _s3fs() -> pafs.FileSystem:
    filesystem, _ = pafs.FileSystem.from_uri("s3://any")
    return filesystem


def test_snapshot_history_and_diff_round_trip_through_s3(
    spark: Any, writer: KazooClient, zk_root: Chroot, s3: tuple[S3Server, str], tmp_path: Path
) -> None:
    """Snapshots written to the bucket, compared by ``diff`` and read by ``history`` (the CLI in this
    process, on the suite's Spark session) into another prefix of it, then an incremental run."""
    server, bucket = s3
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    load_cluster(writer, zk_root.path, "storm", "storm2")
    snaps = f"s3://{bucket}/zk"
    args = ("--zk", zk_root.zk, "--kafka-root", "/")
    first = zkstorm(*args, "snapshot", snaps, "--cluster", "c1", "--snapshot-id", "a")
    assert first.returncode == 0, first.stderr
    brokers = sorted(writer.get_children(zk_root.path + "/brokers/ids"))
    writer.delete(f"{zk_root.path}/brokers/ids/{brokers[0]}")
    second = zkstorm(*args, "snapshot", snaps, "--cluster", "c1", "--snapshot-id", "b")
    assert second.returncode == 0, second.stderr
    keys = _objects(server, bucket, "zk/")
    assert {"zk/_manifests/a.json", "zk/_manifests/b.json"} <= set(keys) and "zk/_lock" not in keys
    assert not [k for k in keys if k.rsplit("/", 1)[-1].startswith(".")]  # no temporary object left
    manifest = json.loads(server.client().get_object(Bucket=bucket, Key="zk/_manifests/b.json")["Body"].read())
    for file in manifest["files"]:
        table = pq.read_table(f"{bucket}/zk/{file}", filesystem=_s3fs())
        assert table.num_rows == manifest["tables"][file.split("/", 1)[0]]

    compared = zkstorm("diff", snaps, "a", "b", "-f", "json")
    assert compared.returncode == 0, compared.stderr
    by_table = {d["table"]: d for d in json.loads(compared.stdout)}
    assert (by_table["kafka_brokers"]["removed"], by_table["kafka_brokers"]["added"]) == (1, 1)

    html = tmp_path / "report.html"
    history = run("history", snaps, "--out", f"s3://{bucket}/hist", "--html", str(html))
    assert history.exit_code == 0, history.stderr
    assert "2 snapshots of c1" in history.stdout and "read 2" in history.stdout, history.stdout
    written = _objects(server, bucket, "hist/")
    assert any(k.startswith("hist/kafka_brokers/") and k.endswith(".parquet") for k in written), written
    assert any(k.startswith("hist/_history/runs/") for k in written), written
    brokers_table = pq.read_table(f"{bucket}/hist/kafka_brokers", filesystem=_s3fs())
    assert brokers_table.num_rows > 0
    again = run("history", snaps, "--out", f"s3://{bucket}/hist")
    assert again.exit_code == 0 and "incremental run, read 0" in again.stdout, again.stdout + again.stderr
    assert html.read_text().count('<figure class="chart"') > 0
    assert not list(Path(tempfile.gettempdir()).glob("zkstorm-history-*"))  # the staging folder is removed
