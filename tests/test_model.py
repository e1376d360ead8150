"""The cluster model: every view's rows equal the nightly snapshot's rows for the same things, because
both come from the same model (``zkstorm.model``), not from two assemblies of the same joins."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.test_cli import run
from tests.test_snapshot import read, snapshot
from zkstorm.export.parquet import table_name
from zkstorm.records import RECORD_TYPES
from zkstorm.schema import columns, kind_name

KINDS = {kind_name(t): t for t in RECORD_TYPES}

# (system, fixture cluster, the flag choosing its root)
CLUSTERS = [
    ("storm", "storm2", ()),
    ("storm", "storm1", ("--storm-root", "/storm1")),
    ("storm", "legacy09", ("--storm-root", "/legacy-storm")),
    ("kafka", "cluster-2x-chroot", ("--kafka-root", "/kafka-prod")),
    ("kafka", "cluster-08-root", ()),
]
STORM_VIEWS = [
    ("storm", "topologies"),
    ("storm", "supervisors"),
    ("storm", "workers"),
    ("storm", "workers", "--stats"),
    ("storm", "nimbus"),
]
PER_TOPOLOGY = [("storm", "assignment"), ("errors",)]
KAFKA_VIEWS = [
    ("kafka", "brokers"),
    ("kafka", "topics"),
    ("kafka", "partitions"),
    ("kafka", "controller"),
    ("kafka", "configs"),
    ("kafka", "acls"),
    ("kafka", "reassignments"),
    ("kafka", "consumers"),
    ("kafka", "health"),
]


def comparable(row: dict[str, Any], record_type: type) -> str:
    """One row as canonical JSON over the record's own columns (a Parquet row adds snapshot columns),
    datetimes written as the JSON writer writes them."""
    out = {}
    for column in columns(record_type):
        value = row[column.name]
        if isinstance(value, datetime):
            value = value.astimezone(UTC).isoformat().replace("+00:00", "Z")
        out[column.name] = value
    return json.dumps(out, sort_keys=True)


def view_rows(chroot: Chroot, flags: tuple[str, ...], *command: str) -> dict[type, list[dict[str, Any]]]:
    result = run("--zk", chroot.zk, *flags, *command, "-f", "json")
    assert result.exit_code == 0, result.output
    by_type: dict[type, list[dict[str, Any]]] = {}
    for row in json.loads(result.stdout):
        by_type.setdefault(KINDS[row.pop("kind")], []).append(row)
    return by_type


@pytest.mark.parametrize(("system", "name", "flags"), CLUSTERS, ids=[c[1] for c in CLUSTERS])
def test_every_view_row_equals_the_snapshot_row(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path, system: str, name: str, flags: tuple[str, ...]
) -> None:
    load_cluster(writer, zk_root.path, system, name)
    out = tmp_path / "out"
    snapshot(zk_root.zk, out, *flags)
    shown = views_equal_snapshot(zk_root, out, system, flags)
    assert sum(map(len, shown.values())) >= 10


def views_equal_snapshot(
    chroot: Chroot, out: Path, system: str, flags: tuple[str, ...], root: str | None = None
) -> dict[type, set[str]]:
    """Every view of ``system`` under ``flags``, in JSON, against the snapshot at ``out``: each view row
    is a snapshot row, and the views together show every snapshot row of their types (of ``root`` only,
    when given). Returns the rows shown, by type."""
    commands: list[tuple[str, ...]] = list(STORM_VIEWS if system == "storm" else KAFKA_VIEWS)
    if system == "storm":
        topologies = view_rows(chroot, flags, "storm", "topologies")
        for topology in next(iter(topologies.values()), []):
            commands += [(*command, topology["topology_id"]) for command in PER_TOPOLOGY]

    def stored_rows(record_type: type) -> list[dict[str, Any]]:
        rows = read(out, table_name(record_type))
        return [r for r in rows if root is None or r["root"] == root]

    shown: dict[type, set[str]] = {}
    for command in commands:
        for record_type, rows in view_rows(chroot, flags, *command).items():
            stored = stored_rows(record_type)
            ages = {}
            if record_type.__name__ == "StormWorker":
                # the one column that moves with the clock: the view and the snapshot read a second apart
                ages = {(w["topology_id"], w["node"], w["port"]): w.pop("age_secs") for w in stored}
                for w in rows:
                    assert abs(w.pop("age_secs") - ages[(w["topology_id"], w["node"], w["port"])]) <= 5
                    w["age_secs"] = None
                for w in stored:
                    w["age_secs"] = None
            in_parquet = {comparable(r, record_type) for r in stored}
            in_view = [comparable(r, record_type) for r in rows]
            missing = [r for r in in_view if r not in in_parquet]
            assert not missing, f"{' '.join(command)}: rows not in {table_name(record_type)}: {missing[:3]}"
            shown.setdefault(record_type, set()).update(in_view)
    # and the other way round: the views together show every row the snapshot keeps of their types
    for record_type, rows_shown in shown.items():
        stored = stored_rows(record_type)
        for row in stored:
            if "age_secs" in row:
                row["age_secs"] = None
        unseen = {comparable(r, record_type) for r in stored} - rows_shown
        assert not unseen, f"{table_name(record_type)} rows no view shows: {sorted(unseen)[:3]}"
    return shown


def load_at(writer: KazooClient, chroot: str, system: str, name: str, fixture_root: str, root: str) -> None:
    """A fixture cluster's znodes moved from its own root to ``root`` (a second copy of a cluster)."""
    from tests.fixtures import SERVER_NODES, manifest

    transaction = writer.transaction()
    for node in manifest(system, name):
        if node.path in SERVER_NODES:
            continue
        if node.path == fixture_root:
            path = root
        elif node.path.startswith(fixture_root.rstrip("/") + "/"):
            path = root.rstrip("/") + node.path[len(fixture_root.rstrip("/")) :]
        else:
            continue
        transaction.create(chroot + path, node.data or b"", ephemeral=node.ephemeral)
    for result in transaction.commit():
        if isinstance(result, Exception):
            raise result


# One ensemble, two clusters of each system: Storm at /storm and at /storm-staging (the same fixture
# twice: the same topology ids, supervisors and worker slots), Kafka at /kafka and at the ensemble's root
# (two clusters with the same topic names and broker ids)
TWO_OF_EACH = [("storm", "/storm"), ("storm", "/storm-staging"), ("kafka", "/kafka"), ("kafka", "/")]


def test_on_an_ensemble_of_two_storm_and_two_kafka_clusters_each_roots_views_equal_its_snapshot_rows(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    load_at(writer, zk_root.path, "storm", "storm2", "/storm", "/storm-staging")
    load_at(writer, zk_root.path, "kafka", "cluster-2x-chroot", "/kafka-prod", "/kafka")
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    out = tmp_path / "out"
    snapshot(zk_root.zk, out, "--kafka-root", "/kafka")
    manifest = json.loads(next((out / "_manifests").glob("*.json")).read_text())
    assert manifest["roots"] == {"storm": ["/storm", "/storm-staging"], "kafka": ["/kafka", "/"]}
    for system, root in TWO_OF_EACH:
        shown = views_equal_snapshot(zk_root, out, system, (f"--{system}-root", root), root)
        assert sum(map(len, shown.values())) >= 10, root
    # a row of each root in every table of each system: nothing left without the column that tells them apart
    for system, root in TWO_OF_EACH:
        for table in (
            ("storm_topologies", "storm_workers") if system == "storm" else ("kafka_brokers", "kafka_partitions")
        ):
            assert [r for r in read(out, table) if r["root"] == root], (table, root)


@pytest.mark.parametrize(
    ("name", "flags"), [("storm2", ()), ("storm1", ("--storm-root", "/storm1"))], ids=["storm2", "storm1"]
)
def test_executor_stat_rows_of_the_view_are_the_snapshot_rows_one_for_one(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path, name: str, flags: tuple[str, ...]
) -> None:
    """The snapshot writes a heartbeat's counters from columns (``StormExecutorStatColumns``), the view
    shows rows made from the same columns: each row as many times in both (the test above compares
    sets), and the component stats summed from them equal."""
    from zkstorm.records import StormComponentStats, StormExecutorStat

    load_cluster(writer, zk_root.path, "storm", name)
    out = tmp_path / "out"
    snapshot(zk_root.zk, out, *flags)
    shown = view_rows(zk_root, flags, "storm", "workers", "--stats")[StormExecutorStat]
    stored = read(out, table_name(StormExecutorStat))
    assert len(shown) > 50
    assert sorted(comparable(r, StormExecutorStat) for r in shown) == sorted(
        comparable(r, StormExecutorStat) for r in stored
    )
    stats = read(out, table_name(StormComponentStats))
    for topology in next(iter(view_rows(zk_root, flags, "storm", "topologies").values())):
        topology_id = topology["topology_id"]
        for window in ("10m", "3h", "1d", "all"):
            view = view_rows(zk_root, flags, "storm", "components", topology_id, "--window", window)
            for row in view.get(StormComponentStats, []):
                assert comparable(row, StormComponentStats) in {comparable(r, StormComponentStats) for r in stats}
