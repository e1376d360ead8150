"""Kafka decoders and health against the fixtures: decoded values, corrupt cases, and every derived
health fact, through the CLI against the fixtures loaded into the real server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.fixtures import expected, manifest
from tests.test_cli import run
from tests.test_snapshot import read, snapshot
from zkstorm.errors import DecodeError, ExitCode
from zkstorm.layout import Roots
from zkstorm.model.walk import decode_node
from zkstorm.records import (
    DecodeFailure,
    DecodeWarning,
    KafkaAcl,
    KafkaBroker,
    KafkaClusterId,
    KafkaConfig,
    KafkaConfigChange,
    KafkaConsumerMember,
    KafkaConsumerOffset,
    KafkaConsumerOwner,
    KafkaController,
    KafkaFeature,
    KafkaMigration,
    KafkaPartitionState,
    KafkaProducerIdBlock,
    KafkaReplicaAssignment,
    KafkaTopic,
)
from zkstorm.sandbox.encode import kafka_json
from zkstorm.sources.base import RawNode, Stat

CLUSTERS = {"cluster-2x-chroot": "/kafka-prod", "cluster-08-root": "/", "migrated-kraft": "/clusters/analytics"}
STAT = Stat(5, 5, 1000, 2000, 3, 0, 0, 0, 0, 0, 5)


def _records(name: str) -> list[Any]:
    roots = Roots(storm=(), kafka=(CLUSTERS.get(name, "/"),))
    out = []
    for node in manifest("kafka", name):
        out += decode_node(RawNode(node.path, STAT, node.data), roots=roots)[1]
    return out


def _of(records: list[Any], kind: type) -> list[Any]:
    return [r for r in records if isinstance(r, kind)]


@pytest.mark.parametrize("name", list(CLUSTERS))
def test_every_fixture_znode_decodes_to_its_expected_value(name: str) -> None:
    exp = expected("kafka", name)
    records = _records(name)
    assert not _of(records, DecodeFailure) and not _of(records, DecodeWarning)

    brokers = {b.broker_id: b for b in _of(records, KafkaBroker)}
    assert set(brokers) == {b["id"] for b in exp["brokers"]}
    for want in exp["brokers"]:
        got = brokers[want["id"]]
        assert (got.version, got.host, got.port, got.jmx_port, got.rack) == (
            want["version"],
            want["host"],
            want["port"],
            want["jmx_port"],
            want["rack"],
        )
        assert got.timestamp_ms == want["timestamp_ms"]
        listeners = [f"{e['listener']}={e['security_protocol']}" for e in want["endpoints"]]
        assert list(got.listener_protocols) == listeners

    topics = {t.topic: t for t in _of(records, KafkaTopic)}
    assignments = {(a.topic, a.partition): a for a in _of(records, KafkaReplicaAssignment)}
    states = {(s.topic, s.partition): s for s in _of(records, KafkaPartitionState)}
    assert set(topics) == {t["name"] for t in exp["topics"]}
    for want in exp["topics"]:
        got = topics[want["name"]]
        assert (got.version, got.topic_id, got.partition_count, got.replication_factor) == (
            want["version"],
            want["topic_id"],
            want["partition_count"],
            want["replication_factor"],
        )
        for p in want["partitions"]:
            a, s = assignments[(want["name"], p["partition"])], states[(want["name"], p["partition"])]
            assert (list(a.replicas), list(a.adding_replicas), list(a.removing_replicas)) == (
                p["replicas"],
                p["adding_replicas"],
                p["removing_replicas"],
            )
            assert (s.leader, s.leader_epoch, list(s.isr), s.controller_epoch) == (
                p["leader"],
                p["leader_epoch"],
                p["isr"],
                p["controller_epoch"],
            )
            recovery = {"RECOVERED": 0, "RECOVERING": 1}.get(p["leader_recovery_state"], p["leader_recovery_state"])
            assert s.leader_recovery_state == recovery

    (controller,) = _of(records, KafkaController)
    assert (controller.broker_id, controller.version, controller.timestamp_ms) == (
        exp["controller"]["broker_id"],
        exp["controller"]["version"],
        exp["controller"]["timestamp_ms"],
    )
    assert controller.kraft_controller_epoch == exp["controller"]["kraft_controller_epoch"]
    cluster_ids = _of(records, KafkaClusterId)
    assert [c.cluster_id for c in cluster_ids] == ([exp["cluster_id"]] if exp["cluster_id"] else [])
    features = _of(records, KafkaFeature)
    if exp["feature"]:
        assert (features[0].version, features[0].status) == (exp["feature"]["version"], exp["feature"]["status"])
    blocks = _of(records, KafkaProducerIdBlock)
    if exp["latest_producer_id_block"]:
        want = exp["latest_producer_id_block"]
        assert (blocks[0].broker_id, blocks[0].block_start, blocks[0].block_end) == (
            want["broker"],
            want["block_start"],
            want["block_end"],
        )
    if exp["migration"]:
        (migration,) = _of(records, KafkaMigration)
        assert migration.kraft_controller_id == exp["migration"]["kraft_controller_id"]

    configs: dict[tuple[str, str], dict[str, str]] = {}
    for c in _of(records, KafkaConfig):
        entity_type, entity_name = c.entity_type, c.entity_name
        if entity_type == "users/clients":
            entity_type = "users"
        entity = configs.setdefault((entity_type, entity_name), {})  # listed even with no key left
        if c.key is not None:
            entity[c.key] = c.value
    for entity_type, entities in exp["configs"].items():
        for entity_name, entry in entities.items():
            assert (entity_type, entity_name) in configs, (entity_type, entity_name)
            got = configs[(entity_type, entity_name)]
            sensitive = set(entry.get("sensitive_keys", []))
            assert set(got) == set(entry["config"]), (entity_type, entity_name)
            for key, value in entry["config"].items():
                assert (got[key] == value) != (key in sensitive), (entity_type, entity_name, key)

    changes = _of(records, KafkaConfigChange)
    assert sorted(c.sequence for c in changes) == sorted(c["sequence"] for c in exp["config_changes"])
    acls = {
        (a.pattern_type, a.resource_type, a.resource_name, a.principal, a.permission_type, a.operation, a.host)
        for a in _of(records, KafkaAcl)
    }
    assert acls == {
        (
            a["pattern_type"],
            a["resource_type"],
            a["resource_name"],
            a["principal"],
            a["permissionType"],
            a["operation"],
            a["host"],
        )
        for a in exp["acls"]
    }

    groups = {g["group"]: g for g in exp["old_consumer_groups"]}
    members = _of(records, KafkaConsumerMember)
    assert {m.group for m in members} == {g for g, v in groups.items() if v["active"]}
    for m in members:
        want = next(x for x in groups[m.group]["members"] if x["consumer_id"] == m.consumer_id)
        assert dict(s.rsplit("=", 1) for s in m.subscription) == {k: str(v) for k, v in want["subscription"].items()}
        assert (m.pattern, m.timestamp_ms) == (want["pattern"], want["timestamp"])
    assert {(o.group, o.topic, o.partition, o.offset) for o in _of(records, KafkaConsumerOffset)} == {
        (g, o["topic"], o["partition"], o["offset"]) for g, v in groups.items() for o in v["offsets"]
    }
    assert {(o.group, o.topic, o.partition, o.owner_thread) for o in _of(records, KafkaConsumerOwner)} == {
        (g, o["topic"], o["partition"], o["owner_thread"]) for g, v in groups.items() for o in v["owners"]
    }


def test_corrupt_cases() -> None:
    exp = expected("kafka", "corrupt")
    data = {n.path: n.data for n in manifest("kafka", "corrupt")}
    roots = Roots(storm=(), kafka=("/",))
    for case in exp["cases"]:
        want = case["expected"]
        _, records = decode_node(RawNode(case["path"], STAT, data[case["path"]]), roots=roots)
        failures, warnings = _of(records, DecodeFailure), _of(records, DecodeWarning)
        if want["status"] == "error":
            assert [f.failure_type for f in failures] == [want["error_kind"]], case["path"]
            assert failures[0].size == len(data[case["path"]])
        elif want["status"] == "warning":
            assert not failures and [w.warning for w in warnings] == [want["error_kind"]], case["path"]
        else:
            assert not failures and not warnings, case["path"]
        if want["status"] != "error" and "partitions" in (want["decoded"] or {}):
            rows = _of(records, KafkaReplicaAssignment)
            assert [list(r.replicas) for r in rows] == [p["replicas"] for p in want["decoded"]["partitions"]]
    acl = next(c for c in exp["cases"] if c["path"].startswith("/kafka-acl/"))
    _, records = decode_node(RawNode(acl["path"], STAT, data[acl["path"]]), roots=roots)
    assert "offset 44" in records[0].reason


def _health(zk: str, *extra: str) -> list[dict[str, Any]]:
    result = run("--zk", zk, *extra, "kafka", "health", "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _facts(findings: list[dict[str, Any]], kind: str) -> set[tuple[str, int]]:
    return {(f["topic"], f["partition"]) for f in findings if f["finding"] == kind}


@pytest.mark.parametrize("name", ["cluster-2x-chroot", "cluster-08-root"])
def test_health_reproduces_every_expected_fact(writer: KazooClient, zk_root: Chroot, name: str) -> None:
    load_cluster(writer, zk_root.path, "kafka", name)
    exp = expected("kafka", name)["health"]
    zk = zk_root.zk + (CLUSTERS[name] if CLUSTERS[name] != "/" else "")
    findings = _health(zk)
    for f in findings:
        assert {"finding", "topic", "partition", "broker_id", "detail", "level"} <= set(f)

    def pairs(key: str) -> set[tuple[str, int]]:
        return {(x["topic"], x["partition"]) for x in exp[key]}

    assert _facts(findings, "offline_partition") == pairs("offline_partitions")
    assert _facts(findings, "under_replicated") == pairs("under_replicated_partitions")
    assert _facts(findings, "under_min_isr") == pairs("under_min_isr_partitions")
    assert _facts(findings, "at_min_isr") == pairs("at_min_isr_partitions")
    assert _facts(findings, "preferred_leader_imbalance") == pairs("preferred_leader_imbalance")
    assert _facts(findings, "reassignment_in_flight") == pairs("reassignments_in_flight")
    assert _facts(findings, "unregistered_replicas") == pairs("partitions_with_unregistered_replicas")
    assert not _facts(findings, "under_replicated") & pairs("not_under_replicated_thanks_to_kip455")
    unregistered = {f["broker_id"] for f in findings if f["finding"] == "unregistered_broker"}
    assert unregistered == set(exp["unregistered_broker_ids_in_replica_lists"])
    misled = {f["broker_id"] for f in findings if f["finding"] == "leader_imbalance"}
    assert misled == {x["leader"] for x in exp["preferred_leader_imbalance"]}
    deletions = {f["topic"] for f in findings if f["finding"] == "topic_deletion_pending"}
    assert deletions == set(exp["topics_pending_deletion"])
    for entry in exp["under_min_isr_partitions"]:
        detail = next(
            f["detail"]
            for f in findings
            if f["finding"] == "under_min_isr" and (f["topic"], f["partition"]) == (entry["topic"], entry["partition"])
        )
        source = {
            "topic_override": "topic override",
            "dynamic_cluster_default": "cluster-wide dynamic default",
            "assumed_kafka_default": "assumed Kafka default",
        }[entry["min_isr_source"]]
        assert source in detail
    for entry in exp["offline_partitions"]:
        detail = next(
            f["detail"]
            for f in findings
            if f["finding"] == "offline_partition"
            and (f["topic"], f["partition"]) == (entry["topic"], entry["partition"])
        )
        assert all(str(b) in detail for b in entry["isr"])  # names the dead last-ISR broker

    partitions = json.loads(run("--zk", zk, "kafka", "partitions", "-f", "json").stdout)
    for p in partitions:
        assert {
            "topic",
            "partition",
            "leader",
            "leader_epoch",
            "isr",
            "replicas",
            "offline",
            "under_replicated",
        } <= set(p)
    assert {(p["topic"], p["partition"]) for p in partitions if p["offline"]} == pairs("offline_partitions")
    offline = json.loads(run("--zk", zk, "kafka", "partitions", "--offline", "-f", "json").stdout)
    assert len(offline) == exp["offline_partitions_count"]
    under = json.loads(run("--zk", zk, "kafka", "partitions", "--under-replicated", "-f", "json").stdout)
    assert len(under) == exp["under_replicated_partitions_count"]

    brokers = json.loads(run("--zk", zk, "kafka", "brokers", "-f", "json").stdout)
    assert {b["broker_id"] for b in brokers if b["alive"]} == set(expected("kafka", name)["registered_broker_ids"])
    dead = set(expected("kafka", name)["unregistered_broker_ids_in_replica_lists"])
    assert {b["broker_id"] for b in brokers if not b["alive"]} == dead
    for b in brokers:
        assert {"broker_id", "host", "port", "rack", "alive"} <= set(b)
    controller = json.loads(run("--zk", zk, "kafka", "controller", "-f", "json").stdout)
    assert controller[0]["broker_id"] == exp["controller_broker_id"]
    check = run("--zk", zk, "kafka", "health", "--check")
    assert check.exit_code == (ExitCode.UNHEALTHY if any(f["level"] == "error" for f in findings) else 0)


def test_default_min_isr_is_stated_or_assumed(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    assumed = _health(zk_root.zk)
    assert _facts(assumed, "under_min_isr") == set()
    strict = json.loads(run("--zk", zk_root.zk, "kafka", "health", "--default-min-isr", "3", "-f", "json").stdout)
    details = [f["detail"] for f in strict if f["finding"] == "under_min_isr"]
    assert details and any("stated default" in d for d in details)
    assert any("topic override" in f["detail"] for f in strict if f["finding"] in ("under_min_isr", "at_min_isr"))


def test_kraft_migrated_tree_is_history_not_an_outage(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "migrated-kraft")
    findings = _health(zk_root.zk + "/clusters/analytics")
    kinds = {f["finding"] for f in findings}
    assert kinds == {"kraft_migration"}
    assert "history" in findings[0]["detail"] and str(3002) in findings[0]["detail"]
    assert run("--zk", zk_root.zk + "/clusters/analytics", "kafka", "health", "--check").exit_code == 0


def test_corrupt_tree_is_reported_and_the_rest_still_shown(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "corrupt")
    derived = expected("kafka", "corrupt")["derived"]
    result = run("--zk", zk_root.zk, "kafka", "partitions", "-f", "json")
    assert result.exit_code == 0
    health = {(p["topic"], p["partition"]): p["health"] for p in json.loads(result.stdout)}
    for entry in derived["partitions"]:
        want = entry["health"]
        assert health[(entry["topic"], entry["partition"])] == ("ok" if want == "ok" else want), entry
    assert "cannot decode kafka_partition_state" in result.stderr and "duplicate_key" in result.stderr
    brokers = json.loads(run("--zk", zk_root.zk, "kafka", "brokers", "-f", "json").stdout)
    assert {b["broker_id"] for b in brokers if b["alive"]} == set(derived["registered_broker_ids"])
    assert run("--zk", zk_root.zk, "--strict", "kafka", "brokers").exit_code == ExitCode.DECODE_FAILURES


def test_an_unreadable_state_of_a_partition_not_named_by_a_number_is_a_record_not_a_crash(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    """A partition znode whose name is no number (no broker writes one; a hand-made or damaged tree may),
    its state undecodable: one decode failure among the records, in the views and the nightly snapshot,
    never an internal error."""
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    writer.create(f"{zk_root.path}/brokers/topics/odd/partitions/abcdefgh/state", b"{not json", makepath=True)
    said = {
        ("kafka", "partitions", "-f", "json"): "cannot decode kafka_partition_state",
        ("kafka", "health"): "cannot decode kafka_partition_state",
        ("snapshot", str(tmp_path / "s")): "1 decode failures",
    }
    for args, line in said.items():
        result = run("--zk", zk_root.zk, *args)
        assert result.exit_code == 0 and line in result.stderr, (args, result.output)


def test_secrets_never_leave_unredacted(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    exp = expected("kafka", "cluster-2x-chroot")["configs"]
    secrets = [
        entry["config"][k]
        for entities in exp.values()
        for entry in entities.values()
        for k in entry.get("sensitive_keys", [])
    ]
    assert len(secrets) >= 3
    zk = zk_root.zk + "/kafka-prod"
    outputs = []
    for fmt in ("table", "json", "jsonl", "csv"):
        outputs.append(run("--zk", zk, "kafka", "configs", "-f", fmt).stdout)
        outputs.append(run("--zk", zk, "tree", "/", "-f", fmt if fmt != "table" else "tree").stdout)
    for node in manifest("kafka", "cluster-2x-chroot"):
        if "/config/users/" in node.path or "/config/brokers/" in node.path:
            outputs.append(run("--zk", zk_root.zk, "get", node.path, "--raw", "--json").stdout)
            outputs.append(run("--zk", zk_root.zk, "get", node.path).stdout)
    everything = "\n".join(outputs)
    for secret in secrets:
        for piece in secret.split(","):
            if len(piece) > 12 and not piece.startswith("iterations"):
                assert piece not in everything
    assert "iterations=8192" in everything  # the one SCRAM detail shown (svc-dispatch's SCRAM-SHA-512)
    shown = run("--zk", zk, "--show-secrets", "kafka", "configs", "-f", "json").stdout
    assert all(secret in shown for secret in secrets)


def test_every_other_kafka_view(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    zk = zk_root.zk + "/kafka-prod"
    for command in ("topics", "acls", "reassignments", "configs", "consumers", "controller", "brokers"):
        for fmt in ("table", "json", "csv"):
            result = run("--zk", zk, "kafka", command, "-f", fmt)
            assert result.exit_code == 0, (command, fmt, result.output)
    reassignments = json.loads(run("--zk", zk, "kafka", "reassignments", "-f", "json").stdout)
    assert len(reassignments) == expected("kafka", "cluster-2x-chroot")["health"]["reassignments_in_flight_count"]
    consumers = json.loads(run("--zk", zk_root.zk, "kafka", "consumers", "-f", "json").stdout)
    assert {c["kind"] for c in consumers} == {"kafka_consumer_member", "kafka_consumer_owner", "kafka_consumer_offset"}
    roots = json.loads(run("--zk", zk_root.zk, "kafka", "roots", "-f", "json").stdout)
    assert {r["root"] for r in roots} == {"/", "/kafka-prod"}


def test_health_rules_on_a_hand_built_state() -> None:
    """The health rules need records, not ZooKeeper: a state built by hand gets the findings an operator
    would name (the way to test a new rule before testing it through the CLI)."""
    from zkstorm.model.kafka_health import kafka_health_records
    from zkstorm.model.kafka_state import KafkaState
    from zkstorm.records import KafkaFinding, KafkaPartition, KafkaPartitionState, KafkaReplicaAssignment

    def assignment(partition: int, replicas: tuple[int, ...]) -> KafkaReplicaAssignment:
        return KafkaReplicaAssignment(
            topic="orders", partition=partition, replicas=replicas, adding_replicas=(), removing_replicas=(), root="/"
        )

    def leader_isr(partition: int, leader: int, isr: tuple[int, ...]) -> KafkaPartitionState:
        return KafkaPartitionState(
            topic="orders",
            partition=partition,
            leader=leader,
            leader_epoch=7,
            isr=isr,
            controller_epoch=3,
            version=1,
            leader_recovery_state=0,
            zk_version=9,
            root="/",
        )

    state = KafkaState(root="/", registered={1, 2})
    state.assignments = [assignment(0, (1, 2)), assignment(1, (3, 1)), assignment(2, (3,))]
    state.states = {
        ("orders", 0): leader_isr(0, 1, (1, 2)),  # healthy
        ("orders", 1): leader_isr(1, 1, (1,)),  # broker 3 dropped out of the ISR
        ("orders", 2): leader_isr(2, -1, (3,)),  # its only replica, broker 3, is gone
    }
    records = list(kafka_health_records(state, now_ms=1_700_000_000_000))
    health = {(p.topic, p.partition): p.health for p in records if isinstance(p, KafkaPartition)}
    assert health == {("orders", 0): "ok", ("orders", 1): "under_replicated", ("orders", 2): "offline"}
    findings = {(f.finding, f.partition, f.broker_id) for f in records if isinstance(f, KafkaFinding)}
    assert ("offline_partition", 2, 3) in findings
    assert ("under_replicated", 1, None) in findings
    assert ("unregistered_broker", None, 3) in findings
    detail = next(f.detail for f in records if isinstance(f, KafkaFinding) and f.finding == "unregistered_broker")
    assert detail.startswith("broker 3 is not registered") and "replica of 2 partitions" in detail


def test_health_leads_with_one_line_per_rule(writer: KazooClient, zk_root: Chroot) -> None:
    """In a terminal, `kafka health` is a summary: each rule once with its count and what it means,
    at most 40 lines at 120 columns; --detail adds every finding; JSON keeps every finding."""
    from tests.test_cli import run

    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    zk = ("--zk", zk_root.zk, "--kafka-root", "/kafka-prod", "kafka", "health")
    findings = json.loads(run(*zk, "-f", "json").stdout)
    counts = Counter(f["finding"] for f in findings)
    table = run(*zk, env={"COLUMNS": "120"}).stdout
    lines = table.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 120, table
    for finding, count in counts.items():
        row = next(line for line in lines if f"│ {finding} " in line)
        assert f"│ {count:>5} │" in row, row
    assert "broker 104 is not registered" in table  # the one-broker rule keeps its own explanation
    detailed = run(*zk, "--detail", env={"COLUMNS": "200"}).stdout
    assert len(detailed.splitlines()) > len(findings)
    narrow = run(*zk, env={"COLUMNS": "80"}).stdout
    assert max(map(len, narrow.splitlines())) <= 80


def test_the_summary_has_one_row_per_rule_whatever_the_partition_count() -> None:
    from zkstorm.model.kafka_health import summarize_findings
    from zkstorm.records import KafkaFinding

    many = [
        KafkaFinding(
            finding="under_replicated",
            level="warning",
            topic=f"t{p % 7}",
            partition=p,
            broker_id=None,
            detail="x",
            root="/",
        )
        for p in range(100_000)
    ] + [
        KafkaFinding(
            finding="unregistered_broker",
            level="warning",
            topic=None,
            partition=None,
            broker_id=9,
            detail="broker 9 is gone",
            root="/",
        )
    ]
    summary = summarize_findings(many)
    assert [(s.finding, s.count) for s in summary] == [("under_replicated", 100_000), ("unregistered_broker", 1)]
    assert summary[0].topics == ("t0 (14286)", "t1 (14286)")
    assert summary[0].explanation == "100000 partitions in 7 topics: ISR smaller than the replica set"
    assert summary[1].explanation == "broker 9 is gone" and summary[1].brokers == (9,)


def test_a_missing_partition_state_is_named(writer: KazooClient, zk_root: Chroot, tmp_path: Any) -> None:
    """A partition its topic lists with no ``state`` znode is offline for the reason ``missing_node``,
    in the partitions view, the health findings and the snapshot."""
    from tests.test_cli import run
    from tests.test_snapshot import read, snapshot
    from zkstorm.sandbox.encode import kafka_json

    root = f"{zk_root.path}/kafka"
    writer.create(
        f"{root}/brokers/ids/1", kafka_json({"version": 1, "host": "b1", "port": 9092, "jmx_port": -1}), makepath=True
    )
    writer.create(
        f"{root}/brokers/topics/clicks",
        kafka_json({"version": 1, "partitions": {"0": [1], "1": [1], "2": [1]}}),
        makepath=True,
    )
    for partition in (0, 2):
        state = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1]}
        writer.create(f"{root}/brokers/topics/clicks/partitions/{partition}/state", kafka_json(state), makepath=True)
    writer.create(
        f"{root}/brokers/topics/fresh", kafka_json({"version": 1, "partitions": {"0": [1]}})
    )  # no partitions/
    zk = ("--zk", zk_root.zk, "--kafka-root", "/kafka")
    rows = json.loads(run(*zk, "kafka", "partitions", "-f", "json").stdout)
    problems = {(r["topic"], r["partition"]): (r["state_problem"], r["health"]) for r in rows}
    assert problems == {
        ("clicks", 0): (None, "ok"),
        ("clicks", 1): ("missing_node", "offline"),
        ("clicks", 2): (None, "ok"),
        ("fresh", 0): ("missing_node", "offline"),
    }
    table = run(*zk, "kafka", "partitions", env={"COLUMNS": "250"}).stdout
    assert table.count("missing_node") == 2
    findings = json.loads(run(*zk, "kafka", "health", "-f", "json").stdout)
    offline = {(f["topic"], f["partition"]): f["detail"] for f in findings if f["finding"] == "offline_partition"}
    assert set(offline) == {("clicks", 1), ("fresh", 0)}
    assert all("missing_node" in detail for detail in offline.values())
    out = tmp_path / "out"
    snapshot(zk_root.zk, out, "--kafka-root", "/kafka")
    stored = {(r["topic"], r["partition"]): r["state_problem"] for r in read(out, "kafka_partitions")}
    assert stored == {
        ("clicks", 0): None,
        ("clicks", 1): "missing_node",
        ("clicks", 2): None,
        ("fresh", 0): "missing_node",
    }


def _json_payloads() -> list[bytes]:
    from tests import fixtures

    found = [
        n.data
        for system, name in fixtures.all_clusters()
        for n in fixtures.manifest(system, name)
        if n.data and n.data.lstrip()[:1] in (b"{", b"[", b'"')
    ]
    return [
        *found,
        b'{"a":1,"a":2}',  # a duplicate key
        b'{"a":"x:y","a":"z"}',
        b'{"k":"\\u003a","k":1}',  # a colon escaped, and a duplicate
        b'\xef\xbb\xbf{"a":1}',  # a BOM
        b'{"a":1} trailing',
        b'{"a":-9223372036854775809,"b":18446744073709551616}',
        b'{"a":NaN}',
        b'{"path":"C:\\dir"}',  # an unescaped backslash (Kafka before 1.0.1)
        b"  \n[1, 2.5e-7, -0.0, true, null]\n",
        b'"text"',
        b"42",
        b'{"a":1e400}',
    ]


def _outcome(read: Any) -> Any:
    """What ``read()`` gives, or the failure it raises (type and reason): two readers that must agree
    are compared on both."""
    try:
        return read()
    except DecodeError as exc:
        return ("error", exc.failure_type, exc.reason)


@pytest.mark.parametrize("data", _json_payloads())
def test_json_is_read_the_same_by_the_fast_path_and_the_lenient_one(data: bytes) -> None:
    from zkstorm.decode.jackson import _load_json_leniently, load_json

    def read(fn: Any) -> Any:
        parsed = fn(data)
        return (json.dumps(parsed.value), parsed.warnings, parsed.encoding)

    assert _outcome(lambda: read(load_json)) == _outcome(lambda: read(_load_json_leniently))


def _state_payloads() -> list[bytes]:
    from tests import fixtures

    found = [
        n.data
        for system, name in fixtures.all_clusters()
        for n in fixtures.manifest(system, name)
        if n.path.endswith("/state") and n.data
    ]
    return [
        *found,
        b'{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":0,"isr":[]}',
        b'{"controller_epoch":1,"leader":2,"version":0,"leader_epoch":3,"isr":[2,1]}',
        b'{"controller_epoch":1,"leader":2,"version":2,"leader_epoch":3,"isr":[2],"leader_recovery_state":1}',
        b'{"controller_epoch":1,"leader":true,"version":1,"leader_epoch":3,"isr":[2]}',
        b'{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":3,"isr":[2,"1"]}',
        b'{"controller_epoch":1,"leader":null,"version":1,"leader_epoch":3,"isr":[2]}',
        b'{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":3,"isr":[2],"new":1}',
        b'{"controller_epoch":1,"leader":2,"version":1,"isr":[2]}',
        b'{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":3,"isr":[2],"leader":4}',
    ]


@pytest.mark.parametrize("data", _state_payloads())
def test_a_partition_state_reads_the_same_straight_and_field_by_field(data: bytes) -> None:
    """The straight read of the usual partition state gives what the checked field-by-field read gives."""
    from zkstorm.decode.jackson import load_json
    from zkstorm.decode.kafka import _partition_state_fields, decode_partition_state
    from zkstorm.decode.registry import DecodeContext

    rel = "brokers/topics/t/partitions/3/state"
    context = DecodeContext(f"/k/{rel}", "/k", rel, STAT)
    straight = _outcome(lambda: decode_partition_state(context, data))
    assert straight == _outcome(lambda: _partition_state_fields(context, load_json(data), "t", "3"))


# --- payloads as Kafka's own code and tests write them, and as other writers do ------------------------


def _kafka(path: str, payload: str | bytes, root: str = "/") -> list[Any]:
    data = payload.encode() if isinstance(payload, str) else payload
    return decode_node(RawNode(path, STAT, data), roots=Roots(storm=(), kafka=(root,)))[1]


# TopicZNode.encode (Kafka's ZkData.scala) writes version 3 with the id as Uuid.toString gives it
_TOPIC = '{"version":3,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}%s}'


@pytest.mark.parametrize(
    "topic_id",
    [
        "AAAAAAAAAAAAAAAAAAAAAQ",  # Uuid.ONE_UUID, the metadata topic's id
        "vDQwYmN0Q4-1cqsJ-IrUtA",  # a random Uuid: the URL-safe alphabet
        "AAAAAAAAAAAAAAAAAAAAAA==",  # with base64's padding, which Java's decoder accepts
        "AAAAAAAAAAAAAAAAAAAAAB",  # the last character's unused bits are ignored by Java's decoder
    ],
)
def test_a_topic_id_kafka_reads_is_kept(topic_id: str) -> None:
    records = _kafka("/brokers/topics/orders", _TOPIC % f',"topic_id":"{topic_id}"')
    topic = _of(records, KafkaTopic)[0]
    assert (topic.topic_id, topic.decode_status, topic.partition_count) == (topic_id, "ok", 1)
    assert not _of(records, DecodeFailure)


@pytest.mark.parametrize(
    "topic_id",
    [
        '"b8e5e5e1-6a3b-4b5c-8f2d-0e2b8a6f4c3d"',  # java.util.UUID's form, as a script might write it
        '"vDQwYmN0Q4+1cqsJ/IrUtA"',  # standard base64, not base64url
        '"AAAAAAAAAAAAAAAAAAAAA"',  # 21 characters: 15 bytes and a dangling character
        '"AAAAAAAAAAAAAAAAAAAAAAA"',  # 23 characters: 17 bytes
        '"AAAAAAAAAAAAAAAAAAAAAA="',  # one padding character: a wrong ending unit
        '""',
        "null",  # Kafka's to[String] refuses a JSON null
    ],
)
def test_a_topic_id_kafka_refuses_lists_the_topic_as_invalid_topic_id(topic_id: str) -> None:
    """Uuid.fromString (Kafka's clients Uuid.java) reads at most 24 characters that Java's base64url
    decoder turns into exactly 16 bytes; TopicZNode.decode fails on anything else, so does this: a
    ``decode_failure``, and the topic listed as the znode holds it (its id as written), its status
    saying why."""
    records = _kafka("/brokers/topics/orders", _TOPIC % f',"topic_id":{topic_id}')
    failure = _of(records, DecodeFailure)[0]
    assert failure.failure_type == "invalid_topic_id" and "Kafka Uuid" in failure.reason
    topic = _of(records, KafkaTopic)[0]
    assert (topic.topic, topic.decode_status, topic.topic_id) == ("orders", "invalid_topic_id", json.loads(topic_id))
    assert (topic.partition_count, topic.replication_factor) == (1, 2)
    assert [(a.partition, a.replicas) for a in _of(records, KafkaReplicaAssignment)] == [(0, (1, 2))]


def test_a_topic_without_version_or_id_reads_as_kafka_reads_it() -> None:
    """TopicZNode.decode reads neither ``version`` nor needs ``topic_id``; admin tools have written
    topic znodes with neither."""
    records = _kafka("/brokers/topics/orders", '{"partitions":{"0":[1,2],"1":[2,1]}}')
    topic = _of(records, KafkaTopic)[0]
    assert (topic.version, topic.topic_id, topic.partition_count, topic.decode_status) == (None, None, 2, "ok")


def test_a_topic_whose_partitions_have_a_gap_is_read_with_a_note() -> None:
    """TopicZNode.decode reads any partition numbers: a topic missing partition 1 is listed with the
    partitions it has, and a note, not as a failure."""
    records = _kafka("/brokers/topics/orders", '{"version":2,"partitions":{"0":[1,2],"2":[2,1]}}')
    topic = _of(records, KafkaTopic)[0]
    assert (topic.partition_count, topic.decode_status) == (2, "ok")
    assert [a.partition for a in _of(records, KafkaReplicaAssignment)] == [0, 2]
    (note,) = _of(records, DecodeWarning)
    assert note.warning == "partition_gap" and "0,2" in note.detail
    assert not _of(records, DecodeFailure)


def test_acl_operations_and_permissions_take_kafkas_canonical_names() -> None:
    """AclEntryTest's own payload (Kafka's core tests): ``READ`` and ``Read`` are one operation, as
    SecurityUtils.operation reads them, and print as Kafka prints them."""
    acl_json = """{"version": 1, "acls": [{"host": "host1","permissionType": "Deny","operation": "READ", "principal": "User:alice"  },
    {  "host":  "*" ,  "permissionType": "Allow",  "operation":  "Read", "principal": "User:bob"  },
    {  "host": "host1",  "permissionType": "DENY",  "operation":   "describeconfigs" ,  "principal": "User:bob"}]}"""  # noqa: E501
    records = _kafka("/kafka-acl/Topic/orders", acl_json)
    acls = sorted((a.principal, a.permission_type, a.operation, a.host) for a in _of(records, KafkaAcl))
    assert acls == [
        ("User:alice", "Deny", "Read", "host1"),
        ("User:bob", "Allow", "Read", "*"),
        ("User:bob", "Deny", "DescribeConfigs", "host1"),
    ]
    assert not _of(records, DecodeWarning) and not _of(records, DecodeFailure)


def test_an_acl_name_kafka_does_not_know_reads_as_unknown_with_a_note() -> None:
    entry = '{"host":"*","permissionType":"Allow","operation":"describe_configs","principal":"User:bob"}'
    records = _kafka("/kafka-acl/Topic/orders", '{"version":1,"acls":[' + entry + "]}")
    assert _of(records, KafkaAcl)[0].operation == "Unknown"
    assert [w.warning for w in _of(records, DecodeWarning)] == ["unknown_acl_name"]


@pytest.mark.parametrize(
    "payload",
    [
        '{"version":1,"acls":[{"host":"*","permissionType":"Allow","operation":"Any","principal":"User:bob"}]}',
        '{"version":1,"acls":[{"host":"*","permissionType":"ANY","operation":"Read","principal":"User:bob"}]}',
        '{"version":1,"acls":[{"host":"*","permissionType":"Allow","operation":"Read","principal":"bob"}]}',
        '{"version":2,"acls":[{"host":"*","permissionType":"Allow","operation":"Read","principal":"User:bob"}]}',
    ],
)
def test_acls_kafka_refuses_are_invalid_values(payload: str) -> None:
    """AclEntry.fromBytes requires version 1, a principalType:name principal, and (AccessControlEntry)
    an operation and permission other than the filter value Any: the znode is a ``decode_failure``,
    and its ACLs are listed as written, each flagged (Kafka has none of them in force)."""
    records = _kafka("/kafka-acl/Topic/orders", payload)
    failure = _of(records, DecodeFailure)[0]
    assert failure.failure_type == "invalid_value" and "Kafka cannot read these ACLs" in failure.reason
    (acl,) = _of(records, KafkaAcl)
    assert (acl.resource_name, acl.host, acl.decode_status) == ("orders", "*", "invalid_value")
    assert acl.principal in ("User:bob", "bob") and acl.operation in ("Any", "Read")


# BrokerEndPointTest (Kafka's core tests): the endpoints are the address from version 2 on
@pytest.mark.parametrize(
    ("payload", "address"),
    [
        (  # testFromJsonFutureVersion
            '{"foo":"bar","version":100,"host":"localhost","port":9092,"jmx_port":9999,'
            '"timestamp":"1416974968782","endpoints":["SSL://localhost:9093"]}',
            ("localhost", 9093),
        ),
        (  # testFromJsonV3
            '{"version":3,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
            '"endpoints":["PLAINTEXT://host1:9092", "SSL://host1:9093"],"rack":"dc1"}',
            ("host1", 9092),
        ),
        (  # testFromJsonV4WithNullRack: the PLAINTEXT listener by the protocol map
            '{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
            '"endpoints":["CLIENT://host1:9092", "REPLICATION://host1:9093"],'
            '"listener_security_protocol_map":{"CLIENT":"SSL", "REPLICATION":"PLAINTEXT"},"rack":null}',
            ("host1", 9093),
        ),
        (  # legacy fields a tool left stale: Kafka ignores them
            '{"version":5,"host":"localhost","port":9092,"jmx_port":-1,"endpoints":["SSL://host1:9093"]}',
            ("host1", 9093),
        ),
        (  # no legacy fields at all (a test harness's registration): Kafka reads it
            '{"version":4,"jmx_port":-1,"endpoints":["SASL_SSL://host2:9094"]}',
            ("host2", 9094),
        ),
        (  # testFromJsonV1: the legacy fields are the address
            '{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,"port":9091}',
            ("172.16.8.243", 9091),
        ),
    ],
)
def test_a_brokers_address_is_where_kafka_reads_it(payload: str, address: tuple[str, int]) -> None:
    records = _kafka("/brokers/ids/1", payload)
    broker = _of(records, KafkaBroker)[0]
    assert (broker.host, broker.port, broker.decode_status) == (*address, "ok")
    assert not _of(records, DecodeFailure)


def test_a_broker_registration_without_jmx_port_is_one_kafka_refuses() -> None:
    """BrokerIdZNode.decode reads jmx_port in every version."""
    records = _kafka("/brokers/ids/1", '{"version":4,"endpoints":["PLAINTEXT://host1:9092"]}')
    assert "jmx_port: missing" in _of(records, DecodeFailure)[0].reason
    broker = _of(records, KafkaBroker)[0]  # the rest of the registration, as written
    assert (broker.decode_status, broker.host, broker.port, broker.jmx_port) == ("wrong_type", "host1", 9092, None)


@pytest.mark.parametrize(("path", "kind"), [("/brokers/ids/1", KafkaBroker), ("/controller", None)])
def test_a_timestamp_no_clock_can_hold_is_out_of_range_as_in_storm(path: str, kind: type | None) -> None:
    """A registration or controller timestamp of the right type but beyond any clock is the same failure
    as a Storm time beyond any clock (``value_out_of_range``), not a type error."""
    payload = (
        '{"version":4,"endpoints":["PLAINTEXT://h:9092"],"jmx_port":-1,"timestamp":"99999999999999999"}'
        if kind is KafkaBroker
        else '{"version":1,"brokerid":1,"timestamp":"99999999999999999"}'
    )
    records = _kafka(path, payload)
    assert _of(records, DecodeFailure)[0].failure_type == "value_out_of_range"
    if kind is not None:
        assert _of(records, kind)[0].decode_status == "value_out_of_range"


# TopicPartitionStateZNode.encode writes leader_recovery_state only when it is not RECOVERED (0)
_RECOVERING_STATE = '{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":2,"isr":[1],"leader_recovery_state":1}'


def test_a_recovering_leader_is_health_recovering_with_a_finding() -> None:
    """KIP-704: a leader elected uncleanly is RECOVERING (LeaderRecoveryState 1) until it has truncated
    its log; a partition in that state is not healthy, whatever its ISR says."""
    from zkstorm.model.kafka_health import kafka_health_records
    from zkstorm.model.kafka_state import KafkaStateBuilder
    from zkstorm.records import KafkaFinding, KafkaPartition

    builder = KafkaStateBuilder("/")
    topic = '{"version":3,"partitions":{"0":[1],"1":[1]},"adding_replicas":{},"removing_replicas":{}}'
    healthy = '{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":2,"isr":[1]}'
    for path, payload in (
        ("/brokers/ids/1", '{"version":4,"jmx_port":-1,"endpoints":["PLAINTEXT://host1:9092"]}'),
        ("/brokers/topics/orders", topic),
        ("/brokers/topics/orders/partitions/0/state", _RECOVERING_STATE),
        ("/brokers/topics/orders/partitions/1/state", healthy),
    ):
        builder.add(path, _kafka(path, payload))
    records = list(kafka_health_records(builder.state, 0))
    health = {p.partition: (p.health, p.leader_recovery_state) for p in records if isinstance(p, KafkaPartition)}
    assert health == {0: ("recovering", 1), 1: ("ok", 0)}
    findings = [(f.finding, f.partition) for f in records if isinstance(f, KafkaFinding) and f.level != "info"]
    assert findings == [("missing_controller", None), ("at_min_isr", 0), ("leader_recovering", 0), ("at_min_isr", 1)]


@pytest.mark.parametrize("value", [2, -1, 7])
def test_a_leader_recovery_state_kafka_does_not_know_is_an_invalid_value(value: int) -> None:
    payload = _RECOVERING_STATE.replace('"leader_recovery_state":1', f'"leader_recovery_state":{value}')
    records = _kafka("/brokers/topics/orders/partitions/0/state", payload)
    assert _of(records, DecodeFailure)[0].failure_type == "invalid_value"
    (state,) = _of(records, KafkaPartitionState)  # leader and ISR as written, beside the failure
    assert (state.leader, state.isr, state.leader_recovery_state) == (1, (1,), value)


def test_a_state_or_config_without_version_reads_as_kafka_reads_it() -> None:
    """TopicPartitionStateZNode.decode and ConfigEntityZNode.decode read no ``version``; a test harness's
    or an admin script's znodes without one are read, not failed."""
    state = _kafka(
        "/brokers/topics/orders/partitions/0/state", '{"leader":1,"leader_epoch":3,"controller_epoch":2,"isr":[1,2]}'
    )
    got = _of(state, KafkaPartitionState)[0]
    assert (got.leader, got.isr, got.version) == (1, (1, 2), None) and not _of(state, DecodeFailure)
    config = _kafka("/config/topics/orders", '{"config":{"retention.ms":"1000"}}')
    assert [(c.key, c.value) for c in _of(config, KafkaConfig)] == [("retention.ms", "1000")]
    assert not _of(config, DecodeFailure)


# --- nothing lost under a strict rule: what Kafka's reader refuses is flagged, and read all the same ------


def _seed(writer: KazooClient, chroot: str, nodes: dict[str, Any]) -> None:
    for path, value in nodes.items():
        writer.create(chroot + path, kafka_json(value), makepath=True)


def _view(zk: str, *args: str) -> list[dict[str, Any]]:
    result = run("--zk", zk, "kafka", *args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _registration(broker: int) -> dict[str, Any]:
    """A registration as BrokerIdZNode.encode writes it (version 5)."""
    return {
        "version": 5, "host": f"b{broker}", "port": 9092, "jmx_port": -1, "timestamp": "1790000000000",
        "endpoints": [f"PLAINTEXT://b{broker}:9092"], "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "rack": None, "features": {},
    }  # fmt: skip


def _state(leader: int, isr: list[int], **more: Any) -> dict[str, Any]:
    return {"version": 1, "leader": leader, "leader_epoch": 4, "controller_epoch": 2, "isr": isr, **more}


_CONTROLLER = {"version": 1, "brokerid": 1, "timestamp": "1790000000000"}


def test_a_topic_kafka_refuses_for_its_id_keeps_its_partitions_reassignment_and_health(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    """A ``topic_id`` Kafka's ``Uuid.fromString`` refuses (a ``java.util.UUID`` string, as tools other than
    Kafka write it) is flagged as Kafka would (``invalid_topic_id``, a ``decode_failure``, exit 5 with
    ``--strict``, a health finding) and costs nothing else the znode holds: the partition count and
    replication factor, each partition's replicas with the KIP-455 replicas being added and removed, the
    reassignment they make, and each partition's health, in the views and in the snapshot."""
    bad_id = "b8e5e5e1-6a3b-4b5c-8f2d-0e2b8a6f4c3d"
    topic = {
        "version": 3, "topic_id": bad_id, "partitions": {"0": [1, 2, 3], "1": [2, 3]},
        "adding_replicas": {"0": [3]}, "removing_replicas": {"0": [1]},
    }  # fmt: skip
    _seed(
        writer,
        zk_root.path,
        {
            "/controller": _CONTROLLER,
            **{f"/brokers/ids/{b}": _registration(b) for b in (1, 2, 3)},
            "/brokers/topics/orders": topic,
            "/brokers/topics/orders/partitions/0/state": _state(1, [1, 2, 3]),
            "/brokers/topics/orders/partitions/1/state": _state(2, [2]),  # 1 of its 2 replicas in sync
        },
    )
    zk = zk_root.zk
    (row,) = _view(zk, "topics")
    assert (row["partition_count"], row["replication_factor"], row["reassigning_partitions"]) == (2, 2, 1)
    assert (row["topic"], row["decode_status"], row["topic_id"]) == ("orders", "invalid_topic_id", bad_id)
    partitions = {p["partition"]: p for p in _view(zk, "partitions")}
    assert {n: (p["replicas"], p["adding_replicas"], p["removing_replicas"]) for n, p in partitions.items()} == {
        0: ([1, 2, 3], [3], [1]),
        1: ([2, 3], [], []),
    }
    assert {n: (p["leader"], p["isr"], p["health"]) for n, p in partitions.items()} == {
        0: (1, [1, 2, 3], "ok"),  # 3 is being added: 2 replicas to hold in sync, not 3
        1: (2, [2], "under_replicated"),
    }
    moves = [(r["topic"], r["partition"], r["target_replicas"], r["source"]) for r in _view(zk, "reassignments")]
    assert moves == [("orders", 0, [2, 3], "kip455")]
    findings = _view(zk, "health")
    (flag,) = [f for f in findings if f["finding"] == "kafka_cannot_read"]
    assert (flag["level"], flag["topic"], flag["partition"]) == ("error", "orders", None)
    assert "invalid_topic_id" in flag["detail"] and "2 partitions" in flag["detail"]
    assert _facts(findings, "under_replicated") == {("orders", 1)}
    assert _facts(findings, "reassignment_in_flight") == {("orders", 0)}
    strict = run("--zk", zk, "--strict", "kafka", "topics", "-f", "json")
    assert strict.exit_code == ExitCode.DECODE_FAILURES and "invalid_topic_id" in strict.stdout
    assert "cannot decode kafka_topic" in strict.stderr and bad_id in strict.stderr
    assert run("--zk", zk, "kafka", "health", "--check").exit_code == ExitCode.UNHEALTHY
    out = tmp_path / "out"
    snapshot(zk, out)
    (stored,) = read(out, "kafka_topics")
    assert (stored["partition_count"], stored["decode_status"], stored["topic_id"]) == (2, "invalid_topic_id", bad_id)
    assert {(p["partition"], p["health"]) for p in read(out, "kafka_partitions")} == {
        (0, "ok"),
        (1, "under_replicated"),
    }
    assert [(r["partition"], r["target_replicas"]) for r in read(out, "kafka_reassignments")] == [(0, [2, 3])]
    failures = [(f["path"], f["failure_type"]) for f in read(out, "decode_failures")]
    assert failures == [("/brokers/topics/orders", "invalid_topic_id")]
    assert "kafka_cannot_read" in {f["finding"] for f in read(out, "kafka_findings")}


def test_other_znodes_kafka_refuses_in_part_keep_what_they_hold(writer: KazooClient, zk_root: Chroot) -> None:
    """The same for every rule of Kafka's reader that refuses a znode whose fields read: a registration
    without ``jmx_port`` (``BrokerIdZNode.decode``), a ``leader_recovery_state`` other than 0 or 1
    (``TopicPartitionStateZNode.decode``), an ACL of operation ``Any`` (``AclEntry.fromBytes``): each a
    ``decode_failure`` (exit 5 with ``--strict``), its rows listed as written with the failure type as
    their status, the partition judged on the leader and ISR it holds, and a health finding for each."""
    registration = {k: v for k, v in _registration(3).items() if k != "jmx_port"}  # as some test harnesses write
    acls = [
        {"principal": "User:bob", "permissionType": "Allow", "operation": "Any", "host": "*"},
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
    ]
    _seed(
        writer,
        zk_root.path,
        {
            "/controller": _CONTROLLER,
            "/brokers/ids/1": _registration(1),
            "/brokers/ids/2": _registration(2),
            "/brokers/ids/3": registration,
            "/brokers/topics/ledger": {"version": 3, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": {"0": [1, 2]}},
            "/brokers/topics/ledger/partitions/0/state": _state(1, [1], leader_recovery_state=2),
            "/kafka-acl/Topic/ledger": {"version": 1, "acls": acls},
        },
    )
    zk = zk_root.zk
    brokers = {b["broker_id"]: (b["host"], b["port"], b["endpoints"], b["decode_status"]) for b in _view(zk, "brokers")}
    assert brokers[3] == ("b3", 9092, ["PLAINTEXT://b3:9092"], "wrong_type")
    assert brokers[1][3] == brokers[2][3] == "ok"
    (partition,) = _view(zk, "partitions")
    assert (partition["leader"], partition["isr"], partition["leader_recovery_state"]) == (1, [1], 2)
    assert (partition["health"], partition["state_problem"]) == ("under_replicated", "invalid_value")
    rows = {(a["principal"], a["operation"], a["decode_status"]) for a in _view(zk, "acls")}
    assert rows == {("User:bob", "Any", "invalid_value"), ("User:alice", "Read", "invalid_value")}
    findings = _view(zk, "health")
    flags = {(f["topic"], f["partition"], f["broker_id"]) for f in findings if f["finding"] == "kafka_cannot_read"}
    assert flags == {("ledger", 0, None), (None, None, 3)}
    assert _facts(findings, "under_replicated") == {("ledger", 0)}
    assert not _facts(findings, "unknown_partition_state")
    for view in ("brokers", "partitions", "acls"):
        assert run("--zk", zk, "--strict", "kafka", view).exit_code == ExitCode.DECODE_FAILURES, view


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.sampled_from(["a", "b", "t.1"]),
            st.one_of(st.integers(-3, 40), st.integers(1000, 5000)),
            st.sampled_from(["/", "/kafka"]),
            st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.integers(-1, 300)),
            st.sampled_from([(1, 2), (3,), ()]),
        ),
        max_size=60,
    )
)
def test_partition_states_behave_as_a_dict_of_the_pair(
    ops: list[tuple[bool, str, int, str, int | None, tuple[int, ...]]],
) -> None:
    """``PartitionStates`` (packed per topic, for memory) against a plain dict, on any sequence of sets and
    deletes: negative and far-off partition numbers, two roots, None and extreme numbers included."""
    from zkstorm.model.kafka_state import PartitionStates

    states, plain = PartitionStates(), {}
    for delete, topic, partition, root, number, isr in ops:
        key = (topic, partition)
        if delete and key in plain:
            del states[key], plain[key]
        elif not delete:
            value = KafkaPartitionState(
                root=root, topic=topic, partition=partition, leader=number if number is not None else -1,
                leader_epoch=7, isr=isr, controller_epoch=3, version=number, leader_recovery_state=0,
                zk_version=number,
            )  # fmt: skip
            states[key] = plain[key] = value
        assert len(states) == len(plain) and dict(states) == plain
    for key in [(t, p) for t in ("a", "b", "t.1", "z") for p in (-3, 0, 7, 40, 41, 4999)]:
        assert states.get(key) == plain.get(key) and (key in states) == (key in plain)


def test_partitions_of_a_topic_share_its_name_and_equal_broker_lists() -> None:
    """What every partition record holds once per distinct value (``decode.kafka.shared_ids``, interned
    topic names): a million partitions held by ``health`` cost a pointer each for them, not a copy."""
    topic = b'{"version":1,"partitions":{"0":[1,2,3],"1":[1,2,3],"2":[2,3,1]}}'
    state = b'{"controller_epoch":4,"leader":1,"version":1,"leader_epoch":2,"isr":[1,2]}'
    assignments = [r for r in _kafka("/brokers/topics/orders", topic) if isinstance(r, KafkaReplicaAssignment)]
    states = [_kafka(f"/brokers/topics/orders/partitions/{p}/state", state)[0] for p in (0, 1, 2)]
    assert assignments[0].replicas is assignments[1].replicas and assignments[2].replicas == (2, 3, 1)
    assert states[0].isr is states[1].isr is states[2].isr
    assert states[0].topic is states[2].topic is assignments[0].topic


def test_views_that_judge_partitions_leave_old_consumer_offsets_out(writer: KazooClient, zk_root: Chroot) -> None:
    """Old consumer groups commit an offset znode per partition they read: ``partitions`` and ``health``
    do not hold them; the consumer views walk again to read them."""
    import zkstorm

    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    with zkstorm.connect(zk_root.zk, kafka_root="/") as cluster:
        assert cluster.kafka.partitions() and cluster.kafka.health()
        assert cluster.kafka.state().other == []
        offsets = cluster.kafka.consumer_offsets()
        assert offsets and cluster.kafka.state().other  # kept since


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "t.1"]),
            st.integers(-1, 6),
            st.sampled_from([(1, 2, 3), (2, 3), (4,)]),
            st.sampled_from([(), (4,)]),
            st.sampled_from(["/", "/kafka"]),
        ),
        max_size=40,
    )
)
def test_replica_assignments_give_back_every_record_in_partition_order(
    rows: list[tuple[str, int, tuple[int, ...], tuple[int, ...], str]],
) -> None:
    """``ReplicaAssignments`` (replica sets per topic, for memory) gives back exactly the records appended,
    sorted by topic and partition, whatever their order, roots and reassignments."""
    from zkstorm.model.kafka_state import ReplicaAssignments

    records = [
        KafkaReplicaAssignment(
            root=root, topic=topic, partition=p, replicas=replicas, adding_replicas=adding, removing_replicas=()
        )
        for topic, p, replicas, adding, root in rows
    ]
    kept = ReplicaAssignments(records)
    assert len(kept) == len(records)
    assert sorted(kept, key=repr) == sorted(records, key=repr)
    assert [(a.topic, a.partition) for a in kept] == sorted((a.topic, a.partition) for a in records)
