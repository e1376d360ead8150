"""Object storage for real: ``snapshot``, ``history`` and ``diff`` over ``s3://bucket/prefix`` against the
suite's S3-protocol server (moto, on loopback; ``tests/conftest.py``), endpoint and credentials from the
standard AWS environment variables. Spark cannot open ``s3://`` here (pyspark ships no hadoop-aws), so the
history job reads and writes the store through pyarrow: the same tables as a local run."""

from __future__ import annotations

import json
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.faults import zkstorm, zkstorm_process
from tests.s3server import S3_ACCESS_KEY, S3_SECRET_KEY, S3Server
from tests.test_cli import run


def _objects(server: S3Server, bucket: str, prefix: str = "") -> list[str]:
    pages = server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    keys = (item["Key"] for page in pages for item in page.get("Contents", []))
    return sorted(k for k in keys if not k.endswith("/"))  # not pyarrow's empty directory markers


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


def _committed(server: S3Server, bucket: str, prefix: str) -> dict[str, Any]:
    """What a reader of the manifests sees under ``prefix``: each manifest's bytes and the bytes of every
    file it lists."""
    client, state = server.client(), {}
    for key in _objects(server, bucket, f"{prefix}/_manifests/"):
        if key.rsplit("/", 1)[-1].startswith("."):
            continue
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        files = json.loads(body)["files"]
        state[key] = (body, {f: client.get_object(Bucket=bucket, Key=f"{prefix}/{f}")["Body"].read() for f in files})
    return state


@pytest.mark.parametrize(
    "held",
    [
        pytest.param(r"^PUT /[^/]+/zk/\w+/snapshot_date=[\d-]+/part-A-\w+\.parquet$", id="at-a-table-rename"),
        pytest.param(r" /[^/]+/zk/_manifests/\.A\.json\.tmp$", id="at-the-manifest"),
    ],
)
def test_sigkill_mid_write_to_s3_keeps_the_committed_snapshot_and_the_next_run_completes(
    writer: KazooClient, zk_root: Chroot, s3: tuple[S3Server, str], held: str
) -> None:
    """A same-day re-run to the bucket killed (SIGKILL) while the server holds one of its writes: a table's
    copy to its final name (S3 has no rename: pyarrow copies, then deletes), or its manifest. The committed
    snapshot reads exactly as before, and the next run takes over the dead run's lock (best effort on an
    object store: a check, then a write), removes what it left and commits."""
    server, bucket = s3
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    load_cluster(writer, zk_root.path, "storm", "storm2")
    args = ("--zk", zk_root.zk, "--kafka-root", "/kafka-prod", "snapshot", f"s3://{bucket}/zk", "--snapshot-id", "A")
    assert zkstorm(*args).returncode == 0
    before = _committed(server, bucket, "zk")
    with server.hold(held) as reached:
        victim = zkstorm_process(*args)
        assert reached.wait(120), victim.communicate(timeout=30)
        time.sleep(0.2)
        assert victim.poll() is None, "the run should be held by the server"
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
    left = _objects(server, bucket, "zk/")
    assert "zk/_lock" in left and _committed(server, bucket, "zk") == before
    again = zkstorm(*args)
    assert again.returncode == 0, again.stderr
    assert "taking over the snapshot lock" in again.stderr and f"pid {victim.pid} of this host is gone" in again.stderr
    (key,) = before
    after = _committed(server, bucket, "zk")
    manifest = json.loads(after[key][0])
    assert after != before and not set(manifest["files"]) & set(before[key][1])
    parts = [k for k in _objects(server, bucket, "zk/") if not k.startswith(("zk/_manifests/", "zk/_lock"))]
    assert sorted(parts) == sorted(f"zk/{f}" for f in manifest["files"])  # nothing else: no temporary object
    assert _objects(server, bucket, "zk/_manifests/") == [key]


def test_credentials_come_from_the_environment_and_are_never_printed(
    writer: KazooClient, zk_root: Chroot, s3: tuple[S3Server, str], tmp_path: Path
) -> None:
    """Every command that reaches the bucket, at -vv and on an error, prints neither the secret key nor the
    access key id; no object written holds them. (``history``: the next test.)"""
    server, bucket = s3
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    snaps = f"s3://{bucket}/zk"
    runs = [zkstorm("-vv", "--zk", zk_root.zk, "snapshot", snaps, "--snapshot-id", i) for i in ("a", "b")]
    runs.append(zkstorm("-vv", "diff", snaps, "a", "b", "-f", "json"))
    assert [r.returncode for r in runs] == [0, 0, 0], [r.stderr[-2000:] for r in runs]
    assert "zkstorm: debug" in runs[0].stderr
    missing = zkstorm("-vv", "--zk", zk_root.zk, "snapshot", "s3://no-such-bucket-zkstorm/zk")
    assert missing.returncode == 1 and "no-such-bucket-zkstorm" in missing.stderr, missing.stderr
    runs.append(missing)
    _no_credentials_in(server, bucket, runs)


@pytest.mark.spark  # Spark runs in the child process, out of the spark fixture's reach
def test_the_history_job_never_prints_the_credentials(
    writer: KazooClient, zk_root: Chroot, s3: tuple[S3Server, str]
) -> None:
    """``history`` at -vv, reading snapshots from the bucket and writing its history there: as the test
    before."""
    server, bucket = s3
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    snaps = f"s3://{bucket}/zk"
    runs = [zkstorm("-vv", "--zk", zk_root.zk, "snapshot", snaps, "--snapshot-id", i) for i in ("a", "b")]
    runs.append(zkstorm("-vv", "history", snaps, "--out", f"s3://{bucket}/hist", "--master", "local[1]", timeout=600))
    assert [r.returncode for r in runs] == [0, 0, 0], [r.stderr[-2000:] for r in runs]
    assert _objects(server, bucket, "hist/")  # what it wrote is checked too
    _no_credentials_in(server, bucket, runs)


def _no_credentials_in(server: S3Server, bucket: str, runs: list[Any]) -> None:
    """Neither key in the runs' output nor in any object of the bucket."""
    for result in runs:
        for secret in (S3_SECRET_KEY, S3_ACCESS_KEY):
            assert secret not in result.stdout + result.stderr
    client = server.client()
    for key in _objects(server, bucket):
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        assert S3_SECRET_KEY.encode() not in body and S3_ACCESS_KEY.encode() not in body, key
