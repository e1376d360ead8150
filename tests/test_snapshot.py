"""`zkstorm snapshot`: Parquet read back with pyarrow and with a real local SparkSession, atomicity
under SIGKILL, idempotent re-runs, the lock, schema round trips, and no secret in any file."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.faults import REASON, small_disk, zkstorm
from tests.fixtures import distinct_errors, expected
from tests.test_cli import ENV, run
from tests.test_output import SAMPLES
from zkstorm.errors import ExitCode
from zkstorm.export.lock import LOCK, UNREADABLE_GRACE_SECS
from zkstorm.export.parquet import Lock, Snapshot, list_manifests, table_name
from zkstorm.records import RECORD_TYPES
from zkstorm.sandbox.seed import seed
from zkstorm.sandbox.synth import cluster
from zkstorm.schema import columns


def snapshot(zk: str, out: Path, *args: str) -> Any:
    result = run("--zk", zk, *args, "snapshot", str(out), "--cluster", "test")
    assert result.exit_code == 0, result.output
    return result


def read(out: Path, table: str) -> list[dict[str, Any]]:
    path = out / table
    if not path.exists():
        return []
    return ds.dataset(str(path), format="parquet", partitioning="hive").to_table().to_pylist()


@pytest.fixture
def storm_and_kafka(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    return zk_root


def test_snapshot_of_fixture_clusters_equals_expected(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = snapshot(storm_and_kafka.zk, out, "--kafka-root", "/kafka-prod")
    assert "snapshot test@" in result.stderr
    (manifest,) = list_manifests_local(out)
    storm = expected("storm", "storm2")["znodes"]
    kafka = expected("kafka", "cluster-2x-chroot")

    errors = read(out, "storm_errors")  # each error once, as `zkstorm errors` lists them
    assert sorted((e["error"], e["time_secs"]) for e in errors) == sorted(
        (error, when) for _, error, when in distinct_errors(storm, "/storm")
    )
    topologies = read(out, "storm_topologies")
    assert {t["name"] for t in topologies} == {
        v["value"]["name"] for v in storm.values() if v["record_type"] == "StormBase"
    }
    workers = read(out, "storm_workers")
    assert len(workers) == sum(v["record_type"] == "ClusterWorkerHeartbeat" for v in storm.values())
    assert all(w["stale"] is True for w in workers)  # their beats are from 2025
    stats = read(out, "storm_executor_stats")
    assert stats and {s["metric"] for s in stats} >= {"emitted", "transferred", "acked"}

    brokers = read(out, "kafka_brokers")  # as `kafka brokers` shows them: the registered ones and the dead
    assert {b["broker_id"] for b in brokers if b["alive"]} == {b["id"] for b in kafka["brokers"]}
    assert {b["broker_id"] for b in brokers if not b["alive"]} == set(kafka["unregistered_broker_ids_in_replica_lists"])
    partitions = read(out, "kafka_partitions")
    assert len(partitions) == sum(t["partition_count"] for t in kafka["topics"])
    assert sum(p["offline"] for p in partitions) == kafka["health"]["offline_partitions_count"]
    assert sum(p["under_replicated"] for p in partitions) == kafka["health"]["under_replicated_partitions_count"]
    findings = read(out, "kafka_findings")
    assert sum(f["finding"] == "offline_partition" for f in findings) == kafka["health"]["offline_partitions_count"]

    znodes = read(out, "znodes")
    assert len(znodes) == manifest["znodes"] == manifest["tables"]["znodes"]
    assert {z["decode_status"] for z in znodes} >= {"decoded", "not-decoded"}
    for table, rows in manifest["tables"].items():
        got = read(out, table)
        assert len(got) == rows, table
        assert {r["snapshot_id"] for r in got} == {manifest["snapshot_id"]}
        assert {r["cluster"] for r in got} == {"test"}
        assert {r["snapshot_date"] for r in got} == {manifest["snapshot_date"]}
    assert manifest["zxid_min"] <= manifest["zxid_max"] and manifest["schema_version"] == 1


def list_manifests_local(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "_manifests").glob("*.json"))]


def test_snapshot_reads_back_in_spark(spark: Any, storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    snapshot(storm_and_kafka.zk, out, "--kafka-root", "/kafka-prod")
    (manifest,) = list_manifests_local(out)
    for table, rows in manifest["tables"].items():
        frame = spark.read.parquet(str(out / table))
        assert frame.count() == rows, table
        assert "snapshot_date" in frame.columns and "snapshot_id" in frame.columns
    errors = spark.read.parquet(str(out / "storm_errors"))
    stored = distinct_errors(expected("storm", "storm2")["znodes"], "/storm")
    by_component = {r["component"]: r["count"] for r in errors.groupBy("component").count().collect()}
    assert sum(by_component.values()) == len(stored) and "score~v3" in by_component
    partitions = spark.read.parquet(str(out / "kafka_partitions"))
    health = expected("kafka", "cluster-2x-chroot")["health"]
    assert partitions.filter("offline").count() == health["offline_partitions_count"]


def test_rerun_replaces_and_never_duplicates(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    snapshot(storm_and_kafka.zk, out)
    first = {t: len(read(out, t)) for t in list_manifests_local(out)[0]["tables"]}
    snapshot(storm_and_kafka.zk, out)
    assert {t: len(read(out, t)) for t in first} == first
    assert len(list_manifests_local(out)) == 1
    snapshot(storm_and_kafka.zk, out, "--show-secrets")  # ignored for snapshots, said so
    run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--cluster", "test", "--snapshot-id", "second")
    assert len(read(out, "znodes")) == 2 * first["znodes"]
    assert len(list_manifests_local(out)) == 2


def test_no_secret_in_any_file(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    snapshot(storm_and_kafka.zk, out, "--kafka-root", "/kafka-prod", "--show-secrets")
    storm = expected("storm", "storm2")["znodes"].values()
    secrets = [s for v in storm if v["record_type"] == "Credentials" for s in v["value"]["creds"].values()]
    secrets += [v["value"]["key"] for v in storm if v["record_type"] == "PrivateWorkerKey"]
    configs = expected("kafka", "cluster-2x-chroot")["configs"]
    secrets += [e["config"][k] for ents in configs.values() for e in ents.values() for k in e.get("sensitive_keys", [])]
    assert len(secrets) >= 6
    values: list[str] = []
    for table_dir in out.iterdir():
        if table_dir.name.startswith("_"):
            values.append("\n".join(p.read_text() for p in table_dir.glob("*.json")))
            continue
        for row in read(out, table_dir.name):
            values.extend(str(v) for v in row.values())
    raw = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    everything = "\n".join(values)
    for secret in secrets:
        assert secret[:20] not in everything
        assert secret[:20].encode() not in raw


def test_schema_round_trip_of_every_record_type(tmp_path: Path) -> None:
    out = tmp_path / "out"
    at = datetime(2025, 7, 8, 12, 0, tzinfo=UTC)
    with Snapshot(str(out), snapshot_id="rt", cluster="c", snapshot_time=at) as snap:
        for record in SAMPLES.values():
            snap.add(record)
        snap.commit({})
    for record_type in RECORD_TYPES:
        (row,) = read(out, table_name(record_type))
        for column in columns(record_type):
            value = getattr(SAMPLES[record_type], column.name)
            assert row[column.name] == (list(value) if isinstance(value, tuple) else value), column.name
        assert (row["snapshot_id"], row["cluster"], row["snapshot_time"]) == ("rt", "c", at)


def test_adding_a_column_keeps_older_snapshots_readable(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    old = tmp_path / "t" / "snapshot_date=2025-01-01"
    new = tmp_path / "t" / "snapshot_date=2025-01-02"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    pq.write_table(pa.table({"snapshot_id": ["a"], "path": ["/x"]}), old / "part-a.parquet")
    pq.write_table(pa.table({"snapshot_id": ["b"], "path": ["/y"], "added": [1]}), new / "part-b.parquet")
    schemas = [pq.read_schema(p) for p in (old / "part-a.parquet", new / "part-b.parquet")]
    dataset = ds.dataset(str(tmp_path / "t"), schema=pa.unify_schemas(schemas), partitioning="hive")
    rows = sorted(dataset.to_table().to_pylist(), key=lambda r: r["snapshot_id"])
    assert [r["added"] for r in rows] == [None, 1]


def test_lock_stops_a_second_writer(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    import pyarrow.fs as pafs

    out = tmp_path / "out"
    out.mkdir()
    lock = Lock(pafs.LocalFileSystem(), str(out / "_lock"), local=True)
    lock.acquire()
    try:
        result = run("--zk", storm_and_kafka.zk, "snapshot", str(out))
        assert result.exit_code == ExitCode.ERROR and "another snapshot" in result.stderr
        assert not list(out.glob("*/*/*.parquet"))
    finally:
        lock.release()
    snapshot(storm_and_kafka.zk, out)


def test_stale_lock_of_a_dead_process_is_taken_over(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "_lock").write_text(json.dumps({"pid": 2**22 + 12345, "host": os.uname().nodename, "since": 0}))
    snapshot(storm_and_kafka.zk, out)
    assert not (out / "_lock").exists()  # taken over, then released
    (manifest,) = list_manifests_local(out)
    assert manifest["snapshot_id"].startswith("test@") and manifest["tables"]["znodes"] > 0


def _snapshot_process(zk: str, out: Path, snapshot_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkstorm.cli",
            "--zk",
            zk,
            "--kafka-root",
            "/kafka",
            "snapshot",
            str(out),
            "--cluster",
            "big",
            "--snapshot-id",
            snapshot_id,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ENV},
    )


@pytest.fixture
def big_tree(zk_root: Chroot) -> Chroot:
    seed(zk_root.zk, cluster(scale=30, now=int(time.time())), keep_session=False)
    return zk_root


def test_sigkill_at_any_moment_leaves_previous_state_or_whole_files(big_tree: Chroot, tmp_path: Path) -> None:
    """Each table shows the previous snapshot or the new one's complete file, never a partial one; the
    manifest (what the history job reads) appears only after every file; the next run cleans up."""
    out = tmp_path / "out"
    started = time.monotonic()
    first = _snapshot_process(big_tree.zk, out, "A")
    assert first.wait(120) == 0, first.stderr.read() if first.stderr else ""
    duration = time.monotonic() - started
    before = {t: len(read(out, t)) for t in list_manifests_local(out)[0]["tables"]}
    for fraction in (0.25, 0.5, 0.75, 0.95):
        victim = _snapshot_process(big_tree.zk, out, "B")
        time.sleep(duration * fraction)
        victim.send_signal(signal.SIGKILL)
        victim.wait(30)
        manifests = {m["snapshot_id"]: m for m in list_manifests_local(out)}
        for table, rows in before.items():
            got = read(out, table)  # a partial Parquet file would fail to read here
            assert {r["snapshot_id"] for r in got} <= {"A", "B"}, table
            assert sum(r["snapshot_id"] == "A" for r in got) == rows, table
            if "B" in manifests:  # committed by this victim or an earlier one; a later victim's uncommitted
                # files of B may sit beside its files (the next run removes them): readers read what it lists
                listed = [out / f for f in manifests["B"]["files"] if f.startswith(f"{table}/")]
                rows_listed = sum(pq.read_metadata(f).num_rows for f in listed)
                assert rows_listed == manifests["B"]["tables"].get(table, 0), table
        assert not list(out.rglob(".*.parquet.tmp")) or "B" not in manifests
    again = _snapshot_process(big_tree.zk, out, "B")  # the next run cleans up and commits whole
    assert again.wait(120) == 0
    manifests = {m["snapshot_id"]: m for m in list_manifests_local(out)}
    for table, rows in manifests["B"]["tables"].items():
        assert sum(r["snapshot_id"] == "B" for r in read(out, table)) == rows, table
    # a lock's owner written by a victim killed as it took the lock is kept for its grace period: a run
    # starting at that moment would be between writing it and linking it into place (roll-back's rule)
    left = list(out.rglob(".*.tmp"))
    assert [p for p in left if not p.name.startswith(f".{LOCK}-")] == []
    assert all(time.time() - p.stat().st_mtime < UNREADABLE_GRACE_SECS for p in left)


def test_two_concurrent_runs(big_tree: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    runs = [_snapshot_process(big_tree.zk, out, "C") for _ in range(2)]
    codes = sorted(p.wait(120) for p in runs)
    errors = "".join(p.stderr.read() for p in runs if p.stderr)
    assert codes in ([0, 0], [0, 1])
    if codes == [0, 1]:
        assert "another snapshot" in errors
    (manifest,) = list_manifests_local(out)
    for table, rows in manifest["tables"].items():
        assert len(read(out, table)) == rows, table  # whoever won, exactly one copy


def test_keep_days_prunes_old_partitions(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    snapshot(storm_and_kafka.zk, out)
    old = out / "znodes" / "snapshot_date=2020-01-01"
    old.mkdir()
    (old / "part-old.parquet").write_bytes((next((out / "znodes").glob("*/*.parquet"))).read_bytes())
    manifest = list_manifests_local(out)[0]
    (out / "_manifests" / "old.json").write_text(
        json.dumps(
            {
                **manifest,
                "snapshot_id": "old",
                "snapshot_date": "2020-01-01",
                "snapshot_time": "2020-01-01T00:00:00Z",
                "files": ["znodes/snapshot_date=2020-01-01/part-old.parquet"],
            }
        )
    )
    result = run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--cluster", "test", "--keep-days", "30")
    assert result.exit_code == 0 and "pruned 1 partitions" in result.stderr
    assert not old.exists() and len(list_manifests_local(out)) == 1


def test_manifest_listing_api(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    import pyarrow.fs as pafs

    out = tmp_path / "out"
    snapshot(storm_and_kafka.zk, out)
    (manifest,) = list_manifests(pafs.LocalFileSystem(), str(out))
    assert manifest["tool"].startswith("zkstorm ") and manifest["source"]["zk"]


def test_docs_document_the_current_schema() -> None:
    from zkstorm.export.parquet import schema_markdown

    readme = (Path(__file__).parents[1] / "docs" / "snapshots.md").read_text()
    documented = readme.split("<!-- schema:start -->\n", 1)[1].split("<!-- schema:end -->", 1)[0]
    assert documented == schema_markdown()


STORM_ROOT = {"storm2": "/storm", "storm1": "/storm1", "encodings": "/storm-next", "legacy09": "/legacy-storm"}
KAFKA_ROOT = {
    "cluster-2x-chroot": "/kafka-prod",
    "cluster-08-root": "/",
    "migrated-kraft": "/clusters/analytics",
    "corrupt": "/",
}


@pytest.mark.parametrize(("system", "name"), [("storm", n) for n in STORM_ROOT] + [("kafka", n) for n in KAFKA_ROOT])
def test_every_fixture_cluster_snapshots_whole(
    spark: Any, writer: KazooClient, zk_root: Chroot, tmp_path: Path, system: str, name: str
) -> None:
    from tests.fixtures import SERVER_NODES, manifest

    load_cluster(writer, zk_root.path, system, name)
    out = tmp_path / "out"
    root = ["--storm-root", STORM_ROOT[name]] if system == "storm" else ["--kafka-root", KAFKA_ROOT[name]]
    snapshot(zk_root.zk, out, *root)
    (meta,) = list_manifests_local(out)
    nodes = [n for n in manifest(system, name) if n.path not in SERVER_NODES]
    assert meta["tables"]["znodes"] == len(nodes) + 1  # plus the chroot itself
    exp = expected(system, name)
    if system == "storm":
        znodes = exp["znodes"]
        # every Storm root in the folder is found and decoded, the one named and the others
        roots = sorted({p.split("/")[1] for p in znodes if "/errors/" in p or "/storms/" in p})
        errors = [e for root in roots for e in distinct_errors(znodes, "/" + root)]
        assert meta["tables"].get("storm_errors", 0) == len(errors)
        bases = sum(
            "/storms/" in p
            for p, v in znodes.items()
            if p.split("/")[1] in roots and v["encoding"] != "storm-dir-marker"
        )
        assert meta["tables"].get("storm_topologies", 0) == bases
    elif name == "corrupt":
        assert meta["tables"]["decode_failures"] == exp["derived"]["counts"]["errors"]
        assert meta["tables"]["decode_warnings"] == exp["derived"]["counts"]["warnings"]
    else:
        brokers = read(out, "kafka_brokers")  # registered, and unregistered but named in replica lists
        assert {b["broker_id"] for b in brokers if b["alive"]} == set(exp["registered_broker_ids"])
        assert {b["broker_id"] for b in brokers if not b["alive"]} == set(
            exp["unregistered_broker_ids_in_replica_lists"]
        )
        assert meta["tables"]["kafka_replica_assignments"] == sum(t["partition_count"] for t in exp["topics"])
    for table, rows in meta["tables"].items():
        assert len(read(out, table)) == rows, table
        assert spark.read.parquet(str(out / table)).count() == rows, table


def test_out_may_be_a_filesystem_uri(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "uri-out"
    result = run("--zk", storm_and_kafka.zk, "snapshot", out.as_uri(), "--cluster", "uri")
    assert result.exit_code == 0, result.output
    (meta,) = list_manifests_local(out)
    assert len(read(out, "znodes")) == meta["tables"]["znodes"]


# A hostile world: full and read-only disks, signals, kills, damaged manifests (tests/faults.py).


def committed(out: Path) -> dict[str, Any]:
    """What a reader of the manifests sees: each manifest's bytes and the bytes of every file it lists,
    each read back whole as Parquet first."""
    import pyarrow.parquet as pq

    state: dict[str, Any] = {}
    for path in sorted((out / "_manifests").glob("*.json")):
        files = json.loads(path.read_text())["files"]
        for file in files:
            pq.read_table(out / file)
        state[path.name] = (path.read_bytes(), {file: (out / file).read_bytes() for file in files})
    return state


def part_files(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.glob("*/snapshot_date=*/*") if p.is_file())


def _wait_for(condition: Any, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_a_full_disk_mid_table_keeps_the_committed_snapshot_and_no_temporary_file(
    storm_and_kafka: Chroot, tmp_path: Path
) -> None:
    """A same-day re-run meets a full disk while writing a table: one line naming the file, the committed
    snapshot as it was, nothing of the run left; the next run, with room again, commits."""
    with small_disk(tmp_path / "disk", 8 << 20) as disk:
        out = disk.path / "out"
        args = ("--zk", storm_and_kafka.zk, "--kafka-root", "/kafka-prod", "snapshot", str(out), "--cluster", "test")
        assert disk.zkstorm(*args).returncode == 0
        before, files = committed(out), part_files(out)
        disk.fill(leave=8 << 10)
        rerun = disk.zkstorm(*args)
        assert rerun.returncode == 1 and len(rerun.stderr.splitlines()) == 1, rerun.stderr
        table_file = r"\w+/snapshot_date=[\d-]+/\.part-test@[\d-]+-\w+\.parquet\.tmp"
        message = rf"zkstorm: cannot write {re.escape(str(out))}/{table_file}: {REASON[disk.mode]}\n"
        assert re.fullmatch(message, rerun.stderr), rerun.stderr
        assert committed(out) == before and part_files(out) == files
        assert not list(out.rglob("*.tmp")) and not (out / "_lock").exists()
        disk.free()
        assert disk.zkstorm(*args).returncode == 0
        (manifest,) = list_manifests_local(out)
        assert part_files(out) == sorted(manifest["files"]) != files


def test_a_full_disk_at_the_manifest_keeps_the_committed_snapshot(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    """Every file of a same-day re-run is written and placed, then the disk is full for its manifest: the
    committed snapshot must read exactly as before (the re-run used to rename its files over the committed
    ones first), and the re-run's own files are gone. ``_manifests`` is a tmpfs of its own, so it is the
    manifest that meets the full disk."""
    out = tmp_path / "out"
    with small_disk(out / "_manifests", 1 << 20) as disk:
        assert disk.mode == "tmpfs", "the manifest's own full disk needs a tmpfs this test can mount (run as root)"
        args = ("--zk", storm_and_kafka.zk, "snapshot", str(out), "--cluster", "test")
        assert zkstorm(*args).returncode == 0
        before, files = committed(out), part_files(out)
        disk.fill(leave=0)
        rerun = zkstorm(*args)
        (name,) = before
        assert committed(out) == before and part_files(out) == files
        assert rerun.returncode == 1
        assert rerun.stderr == f"zkstorm: cannot write {out}/_manifests/.{name}.tmp: No space left on device\n"
        assert not list(out.rglob("*.tmp")) and not (out / "_lock").exists()
        disk.free()
        assert zkstorm(*args).returncode == 0
        assert committed(out) != before and not set(part_files(out)) & set(files)


def test_a_read_only_out_is_one_line(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 8 << 20) as disk:
        out = disk.path / "out"
        assert disk.zkstorm("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "n1").returncode == 0
        before = committed(out)
        with disk.read_only():
            night = disk.zkstorm("--zk", storm_and_kafka.zk, "snapshot", str(out))
            assert night.returncode == 1
            assert night.stderr == f"zkstorm: cannot write {out}/_lock: Read-only file system\n"
            compared = run("diff", str(out), "n1", "n1", "--json")  # reading needs no write
            assert compared.exit_code == 0 and not any(d["added"] for d in json.loads(compared.stdout))
        assert committed(out) == before


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_mid_write_removes_what_the_run_wrote_and_says_so(
    big_tree: Chroot, tmp_path: Path, signum: int, code: int
) -> None:
    out = tmp_path / "out"
    victim = _snapshot_process(big_tree.zk, out, "T")
    _wait_for(lambda: list(out.glob("*/*/.part-*.tmp")) or victim.poll() is not None, "a table being written")
    assert victim.poll() is None, "the run ended before it could be stopped mid-write"
    victim.send_signal(signum)
    _, stderr = victim.communicate(timeout=60)
    assert (victim.returncode, stderr) == (code, f"zkstorm: interrupted by {signal.Signals(signum).name}\n")
    assert [p for p in out.rglob("*") if p.is_file()] == []  # no temporary file, no lock


def test_sigkill_between_the_files_and_the_manifest_of_a_rerun_keeps_the_committed_snapshot(
    big_tree: Chroot, tmp_path: Path
) -> None:
    """A same-day re-run killed once its files are written and placed, before its manifest: the committed
    snapshot reads exactly as before; the next run takes over the dead run's lock and removes its files."""
    out = tmp_path / "out"
    first = _snapshot_process(big_tree.zk, out, "A")
    assert first.wait(120) == 0
    before, files = committed(out), part_files(out)
    victim = _snapshot_process(big_tree.zk, out, "A")

    def writing() -> list[Path]:
        return list(out.glob("*/*/.part-*.tmp"))

    _wait_for(lambda: writing() or victim.poll() is not None, "a table being written")
    # The manifest's temporary name becomes a FIFO: opening it to write blocks until a reader comes, as a
    # write to a hung NFS server does. That holds the run exactly between its files and its manifest, a
    # window of microseconds a kill cannot otherwise be aimed at.
    os.mkfifo(out / "_manifests" / ".A.json.tmp")
    _wait_for(lambda: not writing() or victim.poll() is not None, "every table written and placed")
    time.sleep(0.5)
    assert victim.poll() is None, "the run should be held at its manifest"
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    assert (out / "_lock").exists() and committed(out) == before
    again = _snapshot_process(big_tree.zk, out, "A")
    assert again.wait(120) == 0, again.stderr.read() if again.stderr else ""
    (manifest,) = list_manifests_local(out)
    assert part_files(out) == sorted(manifest["files"]) and not set(files) & set(manifest["files"])
    assert not list(out.rglob(".*.tmp")) and not (out / "_lock").exists()


def _truncated(manifest: dict[str, Any], text: str) -> str:
    return text[: len(text) // 2]


def _zeros(manifest: dict[str, Any], text: str) -> str:
    return "\0" * 512


def _without(key: str) -> Any:
    return lambda manifest, text: json.dumps({k: v for k, v in manifest.items() if k != key})


def _with(key: str, value: Any) -> Any:
    return lambda manifest, text: json.dumps({**manifest, key: value(manifest) if callable(value) else value})


DAMAGE = {
    "truncated": _truncated,
    "zeros": _zeros,
    "no files": _without("files"),
    "files not a list": _with("files", lambda m: m["files"][0]),
    "no snapshot_id": _without("snapshot_id"),
    "a file outside OUT": _with("files", lambda m: [*m["files"], "../../etc/hostname"]),
    "a megabyte time": _with("snapshot_time", lambda m: "9" * 1_500_000),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_manifest_is_skipped_and_its_files_are_kept(
    storm_and_kafka: Chroot, tmp_path: Path, damage: str
) -> None:
    """Neither the next night nor a diff of other snapshots stops on it, and nothing it may list is
    deleted as a leftover; naming its snapshot is one line; so is re-running it."""
    out = tmp_path / "out"
    assert run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "night1").exit_code == 0
    path = out / "_manifests" / "night1.json"
    path.write_text(DAMAGE[damage](json.loads(path.read_text()), path.read_text()))
    kept = {f: (out / f).read_bytes() for f in part_files(out)}
    night = zkstorm("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "night2")
    assert night.returncode == 0, night.stderr
    assert {f: (out / f).read_bytes() for f in kept if (out / f).exists()} == kept and not (out / "_lock").exists()
    (warning,) = [line for line in night.stderr.splitlines() if "night1" in line]
    assert f"{path}: not a zkstorm snapshot manifest (" in warning
    # the reason whole and short: the key it lacks named, no value a megabyte long
    assert "chars>" not in warning and len(warning) < 400, warning[:400]
    if damage.startswith("no "):
        assert f"(no {damage[3:]} key)" in warning
    assert "part files of its snapshot id are kept" in warning
    assert run("diff", str(out), "night2", "night2").exit_code == 0
    compared = run("diff", str(out), "night1", "night2")
    assert compared.exit_code == ExitCode.ERROR and len(compared.stderr.splitlines()) == 1
    assert compared.stderr.startswith(f"zkstorm: snapshot 'night1' cannot be compared: {path}: not a zkstorm snapshot")
    rerun = run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "night1")
    assert rerun.exit_code == ExitCode.ERROR and len(rerun.stderr.splitlines()) == 1
    assert rerun.stderr.startswith(f"zkstorm: cannot re-run snapshot 'night1': its manifest {path} is damaged (")
    assert {f: (out / f).read_bytes() for f in kept} == kept


def test_diff_names_a_file_it_cannot_read(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for night in ("night1", "night2"):
        assert run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", night).exit_code == 0
    (manifest,) = [m for m in list_manifests_local(out) if m["snapshot_id"] == "night2"]
    znodes = next(f for f in manifest["files"] if f.startswith("znodes/"))
    (out / znodes).write_bytes(b"PAR1 not Parquet")
    compared = run("diff", str(out), "night1", "night2")
    assert compared.exit_code == ExitCode.ERROR and len(compared.stderr.splitlines()) == 1
    assert compared.stderr.startswith(f"zkstorm: cannot read {out}/{znodes} of snapshot 'night2': ")
    (out / znodes).unlink()
    compared = run("diff", str(out), "night1", "night2")
    assert compared.stderr == f"zkstorm: cannot read {out}/{znodes} of snapshot 'night2': No such file or directory\n"


def test_a_rerun_replaces_a_snapshot_of_the_old_file_names(storm_and_kafka: Chroot, tmp_path: Path) -> None:
    """Snapshots written before the run token (``part-<id>.parquet``) still read, and a re-run of one
    writes new names and removes the old files only after its commit."""
    out = tmp_path / "out"
    assert run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "old").exit_code == 0
    path = out / "_manifests" / "old.json"
    manifest = json.loads(path.read_text())
    old_names = [re.sub(r"/part-old-\w+\.parquet$", "/part-old.parquet", f) for f in manifest["files"]]
    for new, old in zip(manifest["files"], old_names, strict=True):
        (out / new).rename(out / old)
    path.write_text(json.dumps({**manifest, "files": old_names}))
    same = run("diff", str(out), "old", "old", "--json")
    assert same.exit_code == 0 and min(d["rows_a"] for d in json.loads(same.stdout)) > 0
    assert run("--zk", storm_and_kafka.zk, "snapshot", str(out), "--snapshot-id", "old").exit_code == 0
    (rerun,) = list_manifests_local(out)
    assert part_files(out) == sorted(rerun["files"]) and not set(old_names) & set(rerun["files"])
    assert rerun["tables"] == manifest["tables"]
