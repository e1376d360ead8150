"""``kafka migration``: a cluster's ZooKeeper data and its KRaft controllers' metadata log read together
(``zkstorm.model.kafka_migration``).

The KRaft side is a real capture (``tests/data/real/kraft-3.9``, Kafka 3.9.2). The ZooKeeper side is the
test ZooKeeper, a chroot seeded with the znodes that capture's image stands for, in the JSON forms Kafka
wrote to ZooKeeper (``sources.kraft.image.Tree``: what ``KRaftMigrationDriver`` writes in dual-write mode);
then a difference is planted on one side only. A real migrated cluster's two sides are the capture of
scripts/capture-kraft.sh's migration run, where there is one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kazoo.client import KazooClient

import zkstorm
from tests.conftest import Chroot
from tests.test_cli import run
from tests.test_kraft import REAL, folder
from zkstorm.errors import ExitCode, UsageError
from zkstorm.model import check_migration
from zkstorm.records import KafkaTopicCreated
from zkstorm.sources.kraft.source import ROOT, KraftSource

KRAFT = "kraft-3.9"


def seed_from_kraft(writer: KazooClient, chroot: str, name: str = KRAFT) -> KraftSource:
    """Every znode the KRaft folder's image stands for, written under ``chroot`` (each after its subtree,
    as the source walks: a parent made by ``makepath`` is then given its data)."""
    source = KraftSource(str(folder(name)))
    source.connect()
    for node in source.walk("/"):
        path = chroot + node.path[len(ROOT) :]
        if node.data is None:
            writer.ensure_path(path)
        elif writer.exists(path):
            writer.set(path, node.data)
        else:
            writer.create(path, node.data, makepath=True)
    return source


def migration(zk: Chroot, *args: str) -> Any:
    return run("--zk", zk.zk, "kafka", "migration", "--kraft", str(folder(KRAFT)), *args)


def findings(result: Any) -> list[dict[str, Any]]:
    assert result.exit_code in (0, ExitCode.UNHEALTHY), result.output
    return json.loads(result.stdout)


@pytest.fixture
def both(writer: KazooClient, zk_root: Chroot) -> Chroot:
    seed_from_kraft(writer, zk_root.path)
    return zk_root


def test_the_same_data_on_both_sides_gives_no_difference(both: Chroot) -> None:
    result = migration(both, "--check", "-f", "json")
    assert result.exit_code == 0, result.output
    found = findings(result)
    assert [f["finding"] for f in found] == ["migration_phase"]
    assert found[0]["level"] == "info" and "no migration has started" in found[0]["detail"]


def test_a_topic_config_changed_in_zookeeper_only_is_found_and_check_fails(writer: KazooClient, both: Chroot) -> None:
    path = f"{both.path}/config/topics/orders"
    config = json.loads(writer.get(path)[0])
    config["config"]["retention.ms"] = "1000"
    writer.set(path, json.dumps(config).encode())
    result = migration(both, "--check", "-f", "json")
    assert result.exit_code == ExitCode.UNHEALTHY, result.output
    errors = [f for f in findings(result) if f["level"] == "error"]
    assert [(f["finding"], f["topic"]) for f in errors] == [("migration_config_differs", "orders")]
    assert errors[0]["detail"] == (
        "config topics/orders retention.ms: '1000' in ZooKeeper, '604800000' in the KRaft log"
    )
    plain = migration(both, "-f", "json")  # without --check the same findings exit 0
    assert plain.exit_code == 0


def test_topics_assignments_and_acls_on_one_side_only(writer: KazooClient, both: Chroot) -> None:
    writer.delete(f"{both.path}/brokers/topics/audit-log", recursive=True)
    topic = f"{both.path}/brokers/topics/clicks"
    body = json.loads(writer.get(topic)[0])
    body["partitions"]["1"] = [2, 1]
    writer.set(topic, json.dumps(body).encode())
    ghost = {"version": 3, "partitions": {"0": [1]}, "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}
    writer.create(f"{both.path}/brokers/topics/ghost", json.dumps(ghost).encode())
    acl = f"{both.path}/kafka-acl/Topic/orders"
    writer.set(acl, json.dumps({"version": 1, "acls": []}).encode())
    errors = [f for f in findings(migration(both, "--check", "-f", "json")) if f["level"] == "error"]
    by_kind: dict[str, list[str]] = {}
    for f in errors:
        by_kind.setdefault(f["finding"], []).append(f["detail"])
    assert by_kind["migration_topic_differs"] == [
        "topic audit-log is in the KRaft log only",
        "topic ghost is in ZooKeeper only",
    ]
    assert by_kind["migration_assignment_differs"] == ["clicks-1: replicas [2,1] in ZooKeeper, [1,2] in the KRaft log"]
    assert by_kind["migration_acl_differs"] == [
        "ACL LITERAL Topic:orders User:alice Allow Read from * in the KRaft log only"
    ]


def test_migration_znode_without_a_migration_state_in_the_log_is_no_one_phase(
    writer: KazooClient, both: Chroot
) -> None:
    cluster = zkstorm.from_kraft(str(folder(KRAFT)))
    cluster.kafka.state()
    end = cluster.source.plan.log_end_offset
    body = {"version": 0, "kraft_metadata_offset": end - 20, "kraft_controller_id": 1, "kraft_metadata_epoch": 1,
            "kraft_controller_epoch": 1}  # fmt: skip
    writer.create(f"{both.path}/migration", json.dumps(body).encode())
    result = migration(both, "--check", "-f", "json")
    assert result.exit_code == ExitCode.UNHEALTHY
    phase = next(f for f in findings(result) if f["finding"] == "migration_phase")
    assert phase["level"] == "error" and "do not tell one phase" in phase["detail"]
    assert f"/migration names KRaft offset {end - 20}" in phase["detail"]


def test_another_clusters_folder_is_said_first(writer: KazooClient, both: Chroot) -> None:
    writer.set(f"{both.path}/cluster/id", json.dumps({"version": "1", "id": "someone-elses-id"}).encode())
    errors = [f for f in findings(migration(both, "-f", "json")) if f["level"] == "error"]
    assert [f["finding"] for f in errors] == ["migration_other_cluster"]


# --- a real migration (tests/data/real/kraft-migration-3.9: scripts/capture-kraft.sh migrate 3.9.2) ---------

MIGRATED = REAL / "kraft-migration-3.9"
ZOOKEEPER, KRAFT_DIR = str(MIGRATED / "zookeeper"), str(MIGRATED / "kraft")
MOMENTS = json.loads((MIGRATED / "moments.json").read_text())  # when each phase was settled (epoch ms)
SECRETS = ("kraft-capture-key-password", "alice-scram-secret", "carol-scram-secret", "dave-scram-secret")


def at(moment: str) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=MOMENTS[moment])


def report_at(moment: str | None) -> Any:
    when = at(moment) if moment else None
    with zkstorm.from_files(ZOOKEEPER, at=when) as zk, zkstorm.from_kraft(KRAFT_DIR, at=when) as kraft:
        return check_migration(zk.kafka, kraft.kafka)


@pytest.mark.parametrize(
    ("moment", "phase", "state", "brokers", "said"),
    [
        ("dual_write", "dual_write", "MIGRATION", (1, 2, 3), "registered in ZooKeeper (ZooKeeper mode): 1, 2, 3"),
        ("brokers_on_kraft", "dual_write", "MIGRATION", (), "every broker runs in KRaft mode: ready to finalize"),
        (None, "finalized", "POST_MIGRATION", (), "ZooKeeper's data is no longer written"),
    ],
)
def test_each_phase_of_a_real_migration_as_both_sides_tell_it(
    moment: str | None, phase: str, state: str, brokers: tuple[int, ...], said: str
) -> None:
    report = report_at(moment)
    assert (report.phase, report.kraft_state, report.zookeeper_brokers) == (phase, state, brokers)
    # ZooKeeper held what the log held when read: nothing differs, and /migration is at the log's offset or
    # only no-op records behind it
    assert [(f.finding, f.level) for f in report.findings if f.finding != "migration_behind"] == [
        ("migration_phase", "info")
    ]
    assert all(f.level == "info" for f in report.findings)
    phase_finding = next(f for f in report.findings if f.finding == "migration_phase")
    assert said in phase_finding.detail and "held by KRaft controller 3000" in phase_finding.detail


def test_the_phases_are_the_ones_kafkas_controller_logged() -> None:
    logged = (MIGRATED / "controller-migration.log").read_text()
    order = [line.rsplit("migration state from ", 1)[1].split(".")[0] for line in logged.splitlines()
             if "changing the migration state from" in line]  # fmt: skip
    assert "PRE_MIGRATION to MIGRATION" in order and order[-1] == "MIGRATION to POST_MIGRATION"
    assert "Completed migration of metadata from ZooKeeper to KRaft" in logged
    result = run("--from-files", ZOOKEEPER, "kafka", "migration", "--kraft", KRAFT_DIR, "--check")
    assert result.exit_code == 0, result.output
    assert "migration phase finalized: KRaft state POST_MIGRATION" in " ".join(result.stdout.split())


def test_zookeeper_read_before_the_last_dual_writes_differs_and_says_why() -> None:
    """ZooKeeper as it was just before the controller wrote topic dual-written to it, against the KRaft
    log at the dual-write moment: the dual-write steps are in the log only, and /migration says so."""
    created = next(
        c for c in zkstorm.from_files(ZOOKEEPER).changes() if type(c) is KafkaTopicCreated and c.topic == "dual-written"
    )
    kraft = KraftSource(KRAFT_DIR, at_time_ms=MOMENTS["dual_write"])
    kraft.connect()
    assert kraft.plan is not None
    result = run(
        "--from-files", ZOOKEEPER, "--at-zxid", hex(created.zxid - 1),
        "kafka", "migration", "--kraft", KRAFT_DIR, "--kraft-at-offset", str(kraft.plan.offset),
        "--check", "-f", "json",
    )  # fmt: skip
    assert result.exit_code == ExitCode.UNHEALTHY, result.output
    found = [(f["level"], f["finding"], f["detail"]) for f in findings(result)]
    dual = "Topic:dual-written User:carol Allow Write from *"
    assert found[:4] == [
        ("error", "migration_acl_differs", f"ACL LITERAL {dual} in the KRaft log only"),
        ("error", "migration_config_differs",
         "config topics/dual-written retention.ms = '3600000' in the KRaft log only"),
        ("error", "migration_config_differs",
         "config topics/orders retention.ms: '604800000' in ZooKeeper, '86400000' in the KRaft log"),
        ("error", "migration_topic_differs", "topic dual-written is in the KRaft log only"),
    ]  # fmt: skip
    behind = next(f for f in found if f[1] == "migration_behind")
    assert behind[0] == "warning" and f"the log ends at {kraft.plan.offset}" in behind[2]
    assert "1 TopicRecord" in behind[2] and "1 AccessControlEntryRecord" in behind[2]
    assert not any(secret in result.output for secret in SECRETS)


def test_usage_errors() -> None:
    result = run("--from-kraft", str(folder(KRAFT)), "kafka", "migration", "--kraft", str(folder(KRAFT)))
    assert result.exit_code == ExitCode.USAGE and "--from-kraft" in result.output
    with zkstorm.from_files(ZOOKEEPER) as zk, pytest.raises(UsageError, match="KRaft metadata folder"):
        check_migration(zk.kafka, zk.kafka)  # two ZooKeeper sides: not a migration check
    missing = run("--from-files", ZOOKEEPER, "kafka", "migration", "--kraft", "/no/such/folder")
    assert missing.exit_code == ExitCode.FILES and "/no/such/folder" in missing.output
