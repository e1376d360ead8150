"""`-f prometheus`: text exposition that prometheus_client's own parser reads, with values checked
against the fixture clusters' expected values (computed independently of zkstorm)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from kazoo.client import KazooClient
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Chroot, load_cluster
from tests.fixtures import expected
from tests.test_cli import run


def scrape(*args: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """metric name → labels → value, parsed by prometheus_client."""
    result = run(*args, "-f", "prometheus")
    assert result.exit_code == 0, result.output
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(result.stdout):
        assert family.type == "gauge" and family.documentation
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


@pytest.fixture
def kafka2x(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    return zk_root


def one(metrics: dict[str, Any], name: str, **labels: str) -> float:
    return metrics[name][tuple(sorted(labels.items()))]


def test_kafka_health_metrics(kafka2x: Chroot) -> None:
    health = expected("kafka", "cluster-2x-chroot")["health"]
    topics = expected("kafka", "cluster-2x-chroot")["topics"]
    m = scrape("--zk", kafka2x.zk, "--kafka-root", "/kafka-prod", "kafka", "health")
    root = {"root": "/kafka-prod"}
    assert one(m, "zkstorm_kafka_partitions", **root) == sum(t["partition_count"] for t in topics)
    assert one(m, "zkstorm_kafka_partitions_offline", **root) == health["offline_partitions_count"]
    assert one(m, "zkstorm_kafka_partitions_under_replicated", **root) == health["under_replicated_partitions_count"]
    assert one(m, "zkstorm_kafka_partitions_under_min_isr", **root) == health["under_min_isr_partitions_count"]
    assert one(m, "zkstorm_kafka_partitions_at_min_isr", **root) == health["at_min_isr_partitions_count"]
    assert one(m, "zkstorm_kafka_brokers_unregistered", **root) == len(
        health["unregistered_broker_ids_in_replica_lists"]
    )
    assert one(m, "zkstorm_kafka_broker_registered", broker_id="104", **root) == 0
    assert one(m, "zkstorm_kafka_broker_registered", broker_id="101", **root) == 1
    offline_by_topic = Counter(p["topic"] for p in health["offline_partitions"])
    for t in topics:
        assert one(m, "zkstorm_kafka_topic_partitions", topic=t["name"], **root) == t["partition_count"]
        assert one(m, "zkstorm_kafka_topic_offline_partitions", topic=t["name"], **root) == offline_by_topic[t["name"]]
    leaders = one(m, "zkstorm_kafka_broker_leader_partitions", broker_id="104", **root)
    assert leaders == 0  # a dead broker leads nothing
    assert one(m, "zkstorm_kafka_findings", finding="unregistered_broker", level="warning", **root) == 1
    assert one(m, "zkstorm_kafka_findings", finding="offline_partition", level="error", **root) == 4
    assert m["zkstorm_data_timestamp_seconds"][()] > 1.7e9
    assert m["zkstorm_decode_failures"][()] == 0


def test_kafka_partitions_and_brokers_metrics(kafka2x: Chroot) -> None:
    zk = ("--zk", kafka2x.zk, "--kafka-root", "/kafka-prod", "kafka")
    partitions = scrape(*zk, "partitions")
    assert "zkstorm_kafka_findings" not in partitions
    assert one(partitions, "zkstorm_kafka_partitions_offline", root="/kafka-prod") == 4
    brokers = scrape(*zk, "brokers")
    assert one(brokers, "zkstorm_kafka_brokers", root="/kafka-prod") == 3
    assert {dict(k)["broker_id"] for k in brokers["zkstorm_kafka_broker_registered"]} == {"101", "102", "103", "104"}


def test_storm_metrics(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    znodes = expected("storm", "storm2")["znodes"]
    bases = {p.rsplit("/", 1)[1]: v["value"] for p, v in znodes.items() if p.startswith("/storm/storms/")}
    zk = ("--zk", zk_root.zk, "storm")
    topologies = scrape(*zk, "topologies")
    statuses = Counter(str(b["status"]).upper().split(".")[-1] for b in bases.values())
    got = {dict(k)["status"]: v for k, v in topologies["zkstorm_storm_topologies"].items()}
    assert got == dict(statuses)
    # errors/{topology}/{component}/e{sequence}: the error nodes, not the -last-error copies
    errors = Counter(p.split("/")[3] for p in znodes if p.startswith("/storm/errors/") and len(p.split("/")) == 6)
    for topology_id, base in bases.items():
        assert (
            one(topologies, "zkstorm_storm_topology_workers", root="/storm", topology=base["name"])
            == base["num_workers"]
        )
        assert (
            one(topologies, "zkstorm_storm_topology_errors_stored", root="/storm", topology=base["name"])
            == errors[topology_id]
        )
    workers = scrape(*zk, "workers")
    beats = sum(v["record_type"] == "ClusterWorkerHeartbeat" for v in znodes.values())
    assert sum(workers["zkstorm_storm_workers"].values()) == beats
    assert one(workers, "zkstorm_storm_stale_workers", root="/storm") == beats  # beats from 2025 are all stale
    supervisors = scrape(*zk, "supervisors")
    live = sum(v["record_type"] == "SupervisorInfo" for p, v in znodes.items() if p.startswith("/storm/supervisors/"))
    assert one(supervisors, "zkstorm_storm_supervisors", root="/storm") == live
    assert one(supervisors, "zkstorm_storm_supervisors_missing", root="/storm") >= 0
    used = one(supervisors, "zkstorm_storm_slots", root="/storm", state="used")
    free = one(supervisors, "zkstorm_storm_slots", root="/storm", state="free")
    assert used > 0 and free >= 0
