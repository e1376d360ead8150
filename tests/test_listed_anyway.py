"""What exists in ZooKeeper is listed, decoded or not: a topic, broker, topology, supervisor, worker or
nimbus whose znode is damaged, empty or unreadable is still a row of its view (and of the snapshot),
with its key, nothing invented, and a ``decode_status`` saying why."""

from __future__ import annotations

import json
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from tests.conftest import Chroot
from tests.test_cli import run
from tests.test_snapshot import read, snapshot
from zkstorm.sandbox.encode import kafka_json, storm_gzip

GOOD_BASE = {"name": "billing", "status": "ACTIVE", "num_workers": 1, "launch_time_secs": 1790000000}


def seed(writer: KazooClient, chroot: str) -> None:
    k = f"{chroot}/kafka"
    writer.create(
        f"{k}/brokers/ids/1", kafka_json({"version": 1, "host": "b1", "port": 9092, "jmx_port": -1}), makepath=True
    )
    writer.create(f"{k}/brokers/ids/2", b'{"version":4,"host":', makepath=True)  # cut mid-write
    writer.create(f"{k}/brokers/topics/good", kafka_json({"version": 1, "partitions": {"0": [1]}}), makepath=True)
    writer.create(f"{k}/brokers/topics/truncated", b'{"version":1,"partitions":{"0":[1', makepath=True)
    writer.create(f"{k}/brokers/topics/empty", b"", makepath=True)
    writer.create(f"{k}/brokers/topics/badkey", kafka_json({"version": 1, "partitions": {"zero": [1]}}), makepath=True)
    s = f"{chroot}/storm"
    writer.create(f"{s}/storms/billing-1-1790000000", storm_gzip("StormBase", GOOD_BASE), makepath=True)
    writer.create(f"{s}/storms/ledger-2-1790000001", b"\x1f\x8b\x08\x00garbage", makepath=True)
    writer.create(f"{s}/assignments", b"", makepath=True)
    supervisor = storm_gzip("SupervisorInfo", {"time_secs": 1790000000, "hostname": "h1"})
    writer.create(f"{s}/supervisors/sup-ok", supervisor, makepath=True)
    writer.create(f"{s}/supervisors/sup-bad", b"\x0c\x00\x01", makepath=True)
    writer.create(f"{s}/workerbeats/billing-1-1790000000/sup-ok-6700", b"not a heartbeat", makepath=True)
    locked = make_digest_acl("someone", "else", all=True)
    writer.create(f"{s}/nimbuses", b"", makepath=True)  # makepath would lock the parents too
    writer.create(f"{s}/nimbuses/nimbus-x:6627", b"secret", acl=[locked])


def view(zk: str, *args: str) -> list[dict]:  # type: ignore[type-arg]
    result = run("--zk", zk, "--kafka-root", "/kafka", *args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_damaged_entities_are_rows_with_a_status(writer: KazooClient, zk_root: Chroot, tmp_path: Path) -> None:
    seed(writer, zk_root.path)
    zk = zk_root.zk
    topics = {t["topic"]: (t["partition_count"], t["decode_status"]) for t in view(zk, "kafka", "topics")}
    assert topics == {
        "good": (1, "ok"),
        "truncated": (None, "json_syntax"),
        "empty": (None, "empty_data"),
        "badkey": (None, topics["badkey"][1]),
    }
    assert topics["badkey"][1] not in ("ok", None)
    brokers = {b["broker_id"]: (b["alive"], b["host"], b["decode_status"]) for b in view(zk, "kafka", "brokers")}
    assert brokers == {1: (True, "b1", "ok"), 2: (True, None, "json_syntax")}
    topologies = {t["topology_id"]: (t["name"], t["decode_status"]) for t in view(zk, "storm", "topologies")}
    assert topologies["billing-1-1790000000"] == ("billing", "ok")
    assert topologies["ledger-2-1790000001"][0] == "ledger" and topologies["ledger-2-1790000001"][1] != "ok"
    supervisors = {s["supervisor_id"]: s["decode_status"] for s in view(zk, "storm", "supervisors")}
    assert supervisors["sup-ok"] == "ok" and supervisors["sup-bad"] not in ("ok", None)
    (worker,) = view(zk, "storm", "workers")
    assert (worker["node"], worker["port"], worker["stale"], worker["age_secs"]) == ("sup-ok", 6700, True, None)
    assert worker["decode_status"] not in ("ok", None)
    (nimbus,) = view(zk, "storm", "nimbus")
    assert (nimbus["host"], nimbus["port"], nimbus["decode_status"]) == ("nimbus-x", 6627, "unreadable")
    table = run("--zk", zk, "--kafka-root", "/kafka", "kafka", "topics", env={"COLUMNS": "200"}).stdout
    assert "truncated" in table and "json_syntax" in table and "empty_data" in table
    out = tmp_path / "out"
    snapshot(zk, out, "--kafka-root", "/kafka")
    stored = {t["topic"]: t["decode_status"] for t in read(out, "kafka_topics")}
    assert stored["truncated"] == "json_syntax" and stored["good"] == "ok"
    assert {t["topology_id"] for t in read(out, "storm_topologies")} == set(topologies)
