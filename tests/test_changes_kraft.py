"""``changes --from-kraft``: a KRaft metadata log's record batches told as the change records ZooKeeper's logs
give (``zkstorm.changes.kraft``), on the real captures ``tests/data/real/kraft-4.x`` (Kafka 4.4.0) and
``kraft-3.9`` (Kafka 3.9.2): what each scenario step of ``scripts/KraftScenario.java`` did, at the offset and
append time ``kafka-dump-log --cluster-metadata-decoder`` printed for its batch (``expected.json``)."""

from __future__ import annotations

import json
import shutil
import struct
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import zkstorm
from tests.test_cli import run
from tests.test_kraft import REAL, _batches, _rewrite_crc, expected, folder
from zkstorm.errors import ExitCode
from zkstorm.records import (
    KafkaAclChanged,
    KafkaBrokerControlledShutdown,
    KafkaBrokerGone,
    KafkaBrokerRegistered,
    KafkaBrokerRegisteredFenced,
    KafkaConfigChanged,
    KafkaControllerElected,
    KafkaPartitionChanged,
    KafkaPartitionsAdded,
    KafkaReassignmentCompleted,
    KafkaReassignmentStarted,
    KafkaTopicCreated,
    KafkaTopicDeleted,
)


def changes(name: str, **window: Any) -> list[Any]:
    cluster = zkstorm.from_kraft(str(folder(name)))
    return list(cluster.changes(**window))


def of(found: list[Any], kind: type) -> list[Any]:
    return [c for c in found if type(c) is kind]


def dump_records(name: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(the batch's last offset, its create time, the record as kafka-dump-log decoded it) of the log."""
    document = expected(name)["dump"]
    log = next(k for k in document if k.endswith(".log"))
    out = []
    for batch in document[log]["batches"]:
        for record in batch["records"]:
            if "payload" in record:
                out.append((batch["last_offset"], batch["create_time"], record["payload"]))
    return out


@pytest.mark.parametrize("name", ["kraft-4.x", "kraft-3.9"])
def test_brokers_fenced_and_unfenced_are_gone_and_registered_at_kafkas_batch(name: str) -> None:
    found = changes(name)
    fenced = [
        (last, time_ms, p["data"]["brokerId"])
        for last, time_ms, p in dump_records(name)
        if p["type"] == "BROKER_REGISTRATION_CHANGE_RECORD" and p["data"].get("fenced") == 1
    ]
    gone = of(found, KafkaBrokerGone)
    # broker 3 killed (its lease lapsed: fenced), broker 2 stopped (controlled shutdown, then fenced); a
    # second fencing of an already fenced broker is no second departure
    assert [(c.zxid, c.time_ms, c.broker_id) for c in gone] == fenced[: len(gone)]
    assert [(c.broker_id, c.how) for c in gone] == [(3, "fenced"), (2, "controlled_shutdown")]
    assert all(c.root == "kraft:" and c.path == f"kraft:/brokers/ids/{c.broker_id}" for c in gone)
    unfenced = {
        p["data"]["brokerId"]: (last, time_ms)
        for last, time_ms, p in dump_records(name)
        if p["type"] == "BROKER_REGISTRATION_CHANGE_RECORD" and p["data"].get("fenced") == -1
    }
    registered = of(found, KafkaBrokerRegistered)
    assert {c.broker_id: (c.zxid, c.time_ms) for c in registered} == unfenced
    assert {c.broker_id: c.rack for c in registered} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}


@pytest.mark.parametrize("name", ["kraft-4.x", "kraft-3.9"])
def test_fenced_at_registration_is_not_fenced_later_and_a_controlled_shutdown_starts_at_kafkas_record(
    name: str,
) -> None:
    found = changes(name)
    records = dump_records(name)
    # every broker's start: Kafka writes its registration fenced (RegisterBrokerRecord fenced true)
    registrations = [
        (last, time_ms, p["data"]["brokerId"], p["data"]["brokerEpoch"])
        for last, time_ms, p in records
        if p["type"] == "REGISTER_BROKER_RECORD"
    ]
    assert registrations and all(p["data"]["fenced"] for _, _, p in records if p["type"] == "REGISTER_BROKER_RECORD")
    fenced = of(found, KafkaBrokerRegisteredFenced)
    assert [(c.zxid, c.time_ms, c.broker_id, c.session_id) for c in fenced] == registrations
    assert [c.replaced for c in fenced] == [False] * 3  # none replaced a registration that served
    assert {c.broker_id: c.rack for c in fenced} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
    # a registration fenced is not a broker gone: the only ones gone were fenced after they served
    assert [(c.broker_id, c.how) for c in of(found, KafkaBrokerGone)] == [(3, "fenced"), (2, "controlled_shutdown")]
    # broker 2 stopped: InControlledShutdown 1 (BrokerRegistrationChangeRecord v1), then its fencing
    started = [
        (last, time_ms, p["data"]["brokerId"])
        for last, time_ms, p in records
        if p["type"] == "BROKER_REGISTRATION_CHANGE_RECORD" and p["data"].get("inControlledShutdown") == 1
    ]
    shutdown = of(found, KafkaBrokerControlledShutdown)
    assert [(c.zxid, c.time_ms, c.broker_id) for c in shutdown] == started and len(started) == 1
    epoch = next(c.session_id for c in fenced if c.broker_id == 2)  # broker 2's registration's
    assert (shutdown[0].fenced, shutdown[0].session_id, shutdown[0].root) == (False, epoch, "kraft:")
    gone = next(c for c in of(found, KafkaBrokerGone) if c.broker_id == 2)
    assert shutdown[0].zxid < gone.zxid
    # no generic record is left for these registrations' znodes
    generic = [c for c in found if type(c).__name__.startswith("Znode") and "/brokers/ids/" in c.path]
    assert generic == []


def test_a_migration_rolls_its_brokers_through_controlled_shutdown_and_registers_them_again() -> None:
    """KIP-866's last roll (tests/data/real/kraft-migration-3.9): each broker stopped cleanly, then
    registered again, fenced, and unfenced: three controlled shutdowns, six fenced registrations."""
    cluster = zkstorm.from_kraft(str(REAL / "kraft-migration-3.9" / "kraft"))
    found = list(cluster.changes())
    fenced = of(found, KafkaBrokerRegisteredFenced)
    shutdown = of(found, KafkaBrokerControlledShutdown)
    gone = of(found, KafkaBrokerGone)
    assert sorted(c.broker_id for c in fenced) == [1, 1, 2, 2, 3, 3]
    assert sorted(c.broker_id for c in shutdown) == [1, 2, 3] and not any(c.fenced for c in shutdown)
    assert sorted((c.broker_id, c.how) for c in gone) == [(b, "controlled_shutdown") for b in (1, 2, 3)]
    for broker in (1, 2, 3):  # shutdown started, fenced, registered again (fenced), unfenced: in that order
        lifecycle = (KafkaBrokerControlledShutdown, KafkaBrokerGone, KafkaBrokerRegisteredFenced, KafkaBrokerRegistered)
        mine = [c for c in found if type(c) in lifecycle and c.broker_id == broker]
        kinds = [type(c).__name__ for c in mine]
        assert kinds == [
            "KafkaBrokerRegisteredFenced",
            "KafkaBrokerRegistered",
            "KafkaBrokerControlledShutdown",
            "KafkaBrokerGone",
            "KafkaBrokerRegisteredFenced",
            "KafkaBrokerRegistered",
        ], (broker, kinds)
        again = mine[4]
        assert again.replaced is False and again.session_id > mine[0].session_id  # a new broker epoch


def test_a_serving_broker_registered_again_is_gone_then_registered_fenced(tmp_path: Path) -> None:
    """A broker that restarts within its lease registers again while its old registration serves: Kafka
    replaces it whole (``BrokerRegistration.fromRecord``), fenced. Made from the capture's own bytes:
    broker 1's ``RegisterBrokerRecord`` batch (offset 13) appended after the log's last batch, with its
    base offset, broker epoch and time moved there and its CRC32C made good (broker 1 serves at the end)."""
    target = tmp_path / "__cluster_metadata-0"
    shutil.copytree(folder("kraft-4.x"), target)
    log = next(target.glob("*.log"))
    batches = _batches(log)
    original, last = next(b for b in batches if b.base_offset == 13), batches[-1]
    data = bytearray(log.read_bytes())
    batch = bytearray(data[original.position : original.position + original.size])
    offset = last.last_offset + 1
    struct.pack_into(">q", batch, 0, offset)  # base offset
    struct.pack_into(">qq", batch, 27, last.max_timestamp_ms + 1, last.max_timestamp_ms + 1)  # base, max time
    epoch_at = bytes(batch).index(struct.pack(">q", 13), 61)  # the record's BrokerEpoch: 13, its offset
    struct.pack_into(">q", batch, epoch_at, offset)
    end = len(data)
    data += batch
    _rewrite_crc(data, end)
    log.write_bytes(bytes(data))
    found = list(zkstorm.from_kraft(str(target)).changes(since=offset))
    assert [(type(c).__name__, c.broker_id, c.zxid) for c in found] == [
        ("KafkaBrokerGone", 1, offset),
        ("KafkaBrokerRegisteredFenced", 1, offset),
    ]
    gone, fenced = found
    assert (gone.how, gone.session_id) == ("registered_again", 13)
    assert (fenced.replaced, fenced.session_id, fenced.rack) == (True, offset, "rack-a")


@pytest.mark.parametrize("name", ["kraft-4.x", "kraft-3.9"])
def test_topics_created_deleted_and_given_partitions(name: str) -> None:
    found = changes(name)
    records = dump_records(name)
    created = of(found, KafkaTopicCreated)
    names = [p["data"]["name"] for _, _, p in records if p["type"] == "TOPIC_RECORD"]
    assert [c.topic for c in created] == names == ["orders", "payments", "clicks", "audit-log", "doomed"]
    assert {c.topic: (c.partitions, c.replication_factor) for c in created} == {
        "orders": (6, 3),
        "payments": (3, 3),
        "clicks": (4, 2),
        "audit-log": (2, 1),
        "doomed": (3, 2),
    }
    removed = [(last, t) for last, t, p in records if p["type"] == "REMOVE_TOPIC_RECORD"]
    deleted = of(found, KafkaTopicDeleted)
    assert [(c.zxid, c.time_ms, c.topic, c.partitions) for c in deleted] == [(*removed[0], "doomed", 3)]
    added = of(found, KafkaPartitionsAdded)
    assert [(c.topic, c.partitions_before, c.partitions, c.added) for c in added] == [("clicks", 4, 5, (4,))]


def test_a_reassignment_started_and_finished_leader_moved_and_isr_shrunk() -> None:
    found = changes("kraft-4.x")
    started = of(found, KafkaReassignmentStarted)
    completed = of(found, KafkaReassignmentCompleted)
    assert [(c.topic, c.partition, c.replicas_before, c.replicas, c.adding_replicas, c.removing_replicas)
            for c in started] == [("clicks", 0, (2, 3), (3, 1, 2), (1,), (2,))]  # fmt: skip
    assert [(c.topic, c.partition, c.replicas_before, c.replicas) for c in completed] == [
        ("clicks", 0, (3, 1, 2), (3, 1))
    ]
    assert started[0].zxid < completed[0].zxid
    # broker 3 fenced: in the same batch its leaderships moved and it left every ISR; each partition was
    # online before (the broker goes after what its fencing moved) and orders-0's leader moved 3 -> 1
    gone = of(found, KafkaBrokerGone)[0]
    moved = [c for c in of(found, KafkaPartitionChanged) if c.zxid == gone.zxid]
    assert moved and all(3 in c.isr_removed and c.offline_before is False for c in moved)
    orders0 = next(c for c in moved if (c.topic, c.partition) == ("orders", 0))
    assert (orders0.leader_before, orders0.leader, orders0.isr) == (3, 1, (1, 2))
    assert orders0.leader_epoch == orders0.leader_epoch_before + 1
    audit = next(c for c in moved if (c.topic, c.partition) == ("audit-log", 1))  # its only replica was 3
    assert (audit.leader, audit.offline) == (-1, True)


@pytest.mark.parametrize("name", ["kraft-4.x", "kraft-3.9"])
def test_controller_configs_and_acls(name: str) -> None:
    found = changes(name)
    elected = of(found, KafkaControllerElected)
    assert [(c.zxid, c.broker_id, c.epoch, c.previous_broker_id) for c in elected] == [(0, 1, 1, None)]
    configs = of(found, KafkaConfigChanged)
    orders = next(c for c in configs if (c.entity_type, c.entity_name) == ("topics", "orders"))
    assert "min.insync.replicas=(unset)->2" in orders.changes
    password = next(c for c in configs if (c.entity_type, c.entity_name) == ("brokers", "1"))
    assert password.changes == ("listener.name.plaintext.ssl.key.password=(unset)-><redacted>",)
    scram = [c for c in configs if c.entity_name == "bob" and c.keys_removed]
    assert scram and all("<redacted>" in change for c in scram for change in c.changes)
    acls = of(found, KafkaAclChanged)
    removed = [c for c in acls if c.removed]
    assert [(c.resource_type, c.resource_name, c.removed) for c in removed] == [
        ("Topic", "orders", ("User:alice Allow Describe from *",))
    ]
    assert "kraft-capture-key-password" not in repr(found)


def test_a_window_from_a_snapshot_gives_what_the_whole_log_gives_after_it() -> None:
    whole = changes("kraft-4.x")
    for since in (57, 90, 108):  # 57 and 88 are snapshots' end offsets: the replay starts from one
        part = changes("kraft-4.x", since=since)
        assert part and [json.dumps(_plain(c)) for c in part] == [
            json.dumps(_plain(c)) for c in whole if c.zxid >= since
        ]
    gone = changes("kraft-4.x", since=108)
    assert [c.registered_at for c in of(gone, KafkaBrokerGone)] == [None]  # broker 2's is in the snapshot
    last = max(time_ms for _, time_ms, _ in dump_records("kraft-4.x"))  # a span back counts from the log's end
    tail = changes("kraft-4.x", since=timedelta(milliseconds=last - whole[-3].time_ms))
    assert [c.zxid for c in tail] == [c.zxid for c in whole if c.time_ms >= whole[-3].time_ms]
    until = changes("kraft-4.x", until=86)
    assert [json.dumps(_plain(c)) for c in until] == [json.dumps(_plain(c)) for c in whole if c.zxid <= 86]
    assert {c.broker_id: c.registered_at for c in of(whole, KafkaBrokerGone)}[3] is not None


def _plain(change: Any) -> dict[str, Any]:
    """A change's fields as text, but a registration's time and a znode's write count (``version``): a
    snapshot keeps neither (the time is then None, the count starts again at the snapshot)."""
    return {k: str(getattr(change, k)) for k in change.__dataclass_fields__ if k not in ("registered_at", "version")}


def test_cli_formats_and_window_options() -> None:
    target = str(folder("kraft-4.x"))
    table = run("--from-kraft", target, "changes", "--detail")
    assert table.exit_code == 0, table.output
    assert "(offset 0..159)" in table.stdout and "record batches" in table.stdout
    assert "@107  broker 3 (127.0.0.1:41413) gone (fenced), broker epoch 14" in table.stdout
    assert "@14  broker 3 registered fenced (127.0.0.1:41413), broker epoch 14" in table.stdout
    assert "@125  broker 2 (127.0.0.1:37261) began its controlled shutdown, broker epoch 12" in table.stdout
    kinds = run("--from-kraft", target, "changes", "--kind", "kafka_broker_*", "-f", "jsonl")
    assert [json.loads(line)["kind"] for line in kinds.stdout.splitlines()].count("kafka_broker_registered_fenced") == 3
    jsonl = run("--from-kraft", target, "changes", "--since", "84", "--until", "86", "-f", "jsonl")
    kinds = [json.loads(line)["kind"] for line in jsonl.stdout.splitlines()]
    assert kinds == ["kafka_reassignment_started", "kafka_reassignment_completed", "kafka_partition_changed"]
    csv = run("--from-kraft", target, "changes", "--kind", "kafka_broker_gone", "-f", "csv")
    assert csv.exit_code == 0 and csv.stdout.count("\n") == 3 and "controlled_shutdown" in csv.stdout
    bad = run("--from-kraft", target, "--at-offset", "5", "changes")
    assert bad.exit_code == ExitCode.USAGE and "--since" in bad.output


def test_a_damaged_batch_is_exit_7_and_best_effort_gives_the_changes_before_it(tmp_path: Path) -> None:
    target = tmp_path / "__cluster_metadata-0"
    shutil.copytree(folder("kraft-4.x"), target)
    log = next(target.glob("*.log"))
    victim = next(b for b in _batches(log) if b.base_offset == 93)  # broker 3's fencing
    data = bytearray(log.read_bytes())
    data[victim.position + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    failed = run("--from-kraft", str(target), "changes")
    assert failed.exit_code == ExitCode.FILES and "offset 93" in failed.output and "crc_mismatch" in failed.output
    best = run("--from-kraft", str(target), "--best-effort", "changes", "-f", "json")
    assert best.exit_code == 0 and "crc_mismatch" in best.stderr
    found = json.loads(best.stdout)
    assert found and max(c["zxid"] for c in found) < 93


def test_a_migrations_copy_of_zookeeper_is_one_change_and_dual_writes_come_after() -> None:
    """tests/data/real/kraft-migration-3.9: the controller copied ZooKeeper's topics into its log in one
    metadata transaction ("41 records ... across 1 batches", its log says), then took changes itself."""
    kraft = REAL / "kraft-migration-3.9" / "kraft"
    found = list(zkstorm.from_kraft(str(kraft)).changes())
    created = {c.topic: c for c in of(found, KafkaTopicCreated)}
    copied = [created[t] for t in ("orders", "payments", "clicks", "audit-log")]
    assert len({c.zxid for c in copied}) == 1 and [c.partitions for c in copied] == [6, 3, 5, 2]
    assert created["dual-written"].zxid > copied[0].zxid and created["dual-written"].partitions == 3
    configs = [c for c in of(found, KafkaConfigChanged) if c.entity_name == "orders"]
    assert configs[-1].changes == ("retention.ms=604800000->86400000",)
