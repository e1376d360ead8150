"""Every zkstorm Kafka view against what Kafka's own API says about the same running cluster (issue 39).

One real three-broker cluster per version (``kafka`` fixture: 3.9.2, the last with ZooKeeper mode, and
2.8.2, the older layout), driven through Kafka's tools step by step (``scenario.py``); after each step,
every view is compared fact by fact with Kafka's answer read at the same moment (``compare.py``). A
test fails on any disagreement and names each one. Then the same views from ZooKeeper's own files
(``--from-files``), ``zkstorm changes`` against the times the scenario recorded, and ``zkstorm
history`` over snapshots taken before and after the broker kill.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tests.real import compare, views
from tests.real.conftest import count
from tests.real.kafka import SESSION_TIMEOUT_MS
from tests.real.scenario import (
    BROKER_PASSWORD,
    HISTORY_VERSION,
    SCRAM_PASSWORDS,
    SNAPSHOT_AFTER,
    TOPICS,
    KafkaScenario,
    Seen,
)
from zkstorm.jobs.history import run_history

pytestmark = pytest.mark.real_cluster


def agree(kafka: KafkaScenario, step: str) -> Seen:
    """The step reached, its moment's facts counted, and not one disagreement."""
    seen = kafka.reach(step)
    count(kafka.profile, seen.facts)
    wrong = [str(f) for f in seen.facts if not f.equal]
    assert not wrong, f"{kafka.profile} {step}: {len(wrong)} disagreements with Kafka:\n" + "\n".join(wrong[:60])
    return seen


def _rows(seen: Seen, view: str) -> list[dict[str, Any]]:
    return seen.views[view].rows


def test_started_brokers_and_controller(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "started")
    assert [b["broker_id"] for b in _rows(seen, "brokers")] == [1, 2, 3]
    assert seen.kafka["describe"]["cluster"]["controller"]["id"] == _rows(seen, "controller")[0]["broker_id"]


def test_topics_of_several_partition_counts_and_replication_factors(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "topics")
    shapes = {t["topic"]: (t["partition_count"], t["replication_factor"]) for t in _rows(seen, "topics")}
    assert {t: shapes[t] for t in TOPICS} == TOPICS


def test_configs_and_secrets_stay_redacted(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "configs")
    keys = {(c["entity_type"], c["entity_name"], c["key"]) for c in _rows(seen, "configs")}
    assert ("brokers", "1", "listener.name.plaintext.ssl.key.password") in keys
    assert ("brokers", "<default>", "min.insync.replicas") in keys
    assert ("users", "alice", "SCRAM-SHA-256") in keys and ("users", "bob", "SCRAM-SHA-512") in keys
    secrets = views.secret_strings(seen.moment.znodes, [BROKER_PASSWORD, *SCRAM_PASSWORDS.values()])
    assert len(secrets) >= 9, secrets  # the plaintexts, two SCRAM credentials' three parts, the encrypted password
    leaks = compare.secrets(views.every_output(kafka.where), secrets)
    count(kafka.profile, leaks)
    assert not [str(f) for f in leaks if not f.equal]


def test_acls_literal_prefixed_deny_and_host_specific(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "acls")
    acls = seen.kafka["describe"]["acls"]
    assert {a["pattern_type"] for a in acls} == {"LITERAL", "PREFIXED"}
    assert {a["permission_type"] for a in acls} == {"ALLOW", "DENY"}
    assert "10.0.0.5" in {a["host"] for a in acls}


def test_java_consumer_groups_are_not_shown_as_an_empty_fact(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "data")
    assert [g["group_id"] for g in seen.kafka["describe"]["consumer_groups"]] == ["billing"]
    table = seen.views["consumers"].table
    assert "__consumer_offsets" in table and "kafka-consumer-groups" in table, table


def test_throttled_reassignment_in_flight(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "reassigning")
    assert {m["topic"] for m in seen.kafka["describe"]["reassignments"]} == {"payments"}
    assert len(_rows(seen, "reassignments")) == TOPICS["payments"][0]
    throttles = {
        c["key"] for c in _rows(seen, "configs") if c["entity_type"] == "topics" and c["entity_name"] == "payments"
    }
    assert {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"} <= throttles


def test_reassignment_completed(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "reassigned")
    assert seen.kafka["describe"]["reassignments"] == [] and _rows(seen, "reassignments") == []


def test_broker_killed_offline_under_replicated_and_controller_moved(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "broker_down")
    assert kafka.killed is not None
    assert seen.kafka["verdicts"]["unavailable"], "the killed broker led no partition alone"
    assert seen.kafka["verdicts"]["under_replicated"]
    assert _rows(seen, "controller")[0]["broker_id"] != kafka.killed
    dead = [b for b in _rows(seen, "brokers") if b["broker_id"] == kafka.killed]
    assert dead and dead[0]["alive"] is False
    # the stalled deletion: Kafka no longer serves wide, zkstorm shows it marked, and what blocks it
    assert "wide" not in seen.kafka["describe"]["topics"]
    assert [t["pending_deletion"] for t in _rows(seen, "topics") if t["topic"] == "wide"] == [True]
    (pending,) = [f for f in _rows(seen, "health") if f["finding"] == "topic_deletion_pending"]
    assert pending["topic"] == "wide" and f"[{kafka.killed}]" in pending["detail"]


def test_broker_restarted_and_the_stalled_deletion_completed(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "broker_back")
    assert not seen.kafka["verdicts"]["unavailable"] and not seen.kafka["verdicts"]["under_replicated"]
    assert "wide" not in {t["topic"] for t in _rows(seen, "topics")}


def test_preferred_leader_election(kafka: KafkaScenario) -> None:
    before = kafka.reach("broker_back")
    seen = agree(kafka, "elected")
    assert any(not p["preferred_leader"] for p in _rows(before, "partitions")), "the restart moved no leader"
    assert all(p["preferred_leader"] for p in _rows(seen, "partitions"))


def test_topic_deleted(kafka: KafkaScenario) -> None:
    seen = agree(kafka, "deleted")
    assert not {"wide", "single"} & {t["topic"] for t in _rows(seen, "topics")}
    secrets = views.secret_strings(seen.moment.znodes, [BROKER_PASSWORD, *SCRAM_PASSWORDS.values()])
    leaks = compare.secrets(views.every_output(kafka.where), secrets)
    count(kafka.profile, leaks)
    assert not [str(f) for f in leaks if not f.equal]


def _without_root(shown: dict[str, views.Shown]) -> dict[str, Any]:
    """The rows of every view but the tree (the files' is of the whole server), less their ``root`` (the
    live one is read through a chroot in ``--zk``, the files' under ``--kafka-root``)."""
    return {
        name: [{k: v for k, v in row.items() if k != "root"} for row in s.rows]
        for name, s in shown.items()
        if name != "tree"
    }


def test_from_files_gives_the_same_views_as_live(kafka: KafkaScenario) -> None:
    """ZooKeeper's own data directory, read after the scenarios, gives every view as the live ensemble does,
    and agrees with Kafka as much."""
    kafka.reach("deleted")
    seen = kafka.moment("after", save=False)  # Kafka's answer and the live views, now
    files = ["--from-files", str(kafka.zk.base / "data"), "--kafka-root", kafka.cluster.chroot]
    offline = views.read_views(files, tree=kafka.cluster.chroot)
    assert kafka.zk.last_zxid() == seen.moment.zxid, "the cluster wrote meanwhile"
    assert _without_root(offline) == _without_root(seen.views)
    found = views.facts(offline, seen.kafka, seen.moment.znodes)
    count(kafka.profile + " files", found)
    assert not [str(f) for f in found if not f.equal]


# what ``zkstorm changes`` calls each recorded event, and the fields that name its subject
_CHANGE_KINDS = {
    "kafka_broker_gone": ("kafka_broker_gone", "broker_id", "broker"),
    "kafka_controller_moved": ("kafka_controller_elected", "broker_id", "new"),
    "kafka_reassignment_started": ("kafka_reassignment_started", "topic", "topic"),
    "kafka_reassignment_completed": ("kafka_reassignment_completed", "topic", "topic"),
    "kafka_topic_deleted": ("kafka_topic_deleted", "topic", "topic"),
}


def test_changes_name_the_events_when_they_happened(kafka: KafkaScenario) -> None:
    """``zkstorm changes`` over the data directory names each event the scenario caused, at a time within
    what the harness recorded: from the action to when Kafka showed its result; the broker gone when its
    session expired (at most a session timeout and a tick after the kill, at least a third of a session
    timeout less, the broker's last ping)."""
    kafka.reach("deleted")
    data = str(kafka.zk.base / "data")
    since = ["--since", hex(kafka.started_zxid), "--path", kafka.cluster.chroot]
    result = views.run("--from-files", data, "--kafka-root", kafka.cluster.chroot, "changes", *since, "-f", "json")
    assert result.exit_code == 0, result.stderr
    changes = json.loads(result.stdout)
    problems = []
    for event in kafka.events:
        kind, field, key = _CHANGE_KINDS[event["kind"]]
        low, high = event["from_ms"], event["to_ms"]
        if kind == "kafka_broker_gone":
            low = event["from_ms"] + SESSION_TIMEOUT_MS - SESSION_TIMEOUT_MS // 3 - 500
            high = min(high, event["from_ms"] + SESSION_TIMEOUT_MS + 2 * kafka.zk.tick_ms + 1000)
        found = [c for c in changes if c["kind"] == kind and c.get(field) == event[key]]
        if kind == "kafka_broker_gone":  # a kill -9: no clean close, the server expired the session
            found = [c for c in found if c.get("how") == "expired"]
        if not any(low <= c["time_ms"] <= high for c in found):
            problems.append(
                f"{kind} {event[key]} between {low} and {high}: zkstorm has {[c['time_ms'] for c in found]}"
            )
    assert not problems, "\n".join(problems)


def _taken(kafka: KafkaScenario, step: str) -> datetime:
    """When the snapshot after ``step`` was taken (its manifest's ``snapshot_time``)."""
    assert kafka.snapshots is not None
    manifest = kafka.snapshots / "_manifests" / f"{kafka.snapshot_ids[step]}.json"
    return datetime.fromisoformat(json.loads(manifest.read_text())["snapshot_time"])


@pytest.mark.spark
def test_history_names_the_broker_kill_between_the_right_snapshots(kafka: KafkaScenario, spark: Any) -> None:
    """``zkstorm history`` over the snapshots taken before the broker kill, after it and after the restart
    (``scenario.SNAPSHOT_AFTER``): the broker gone from the second to the third, the partitions it alone
    held offline as long, and the controller moved off it at the second. One history run a session: the
    3.9.2 cluster's (``scenario.HISTORY_VERSION``)."""
    assert kafka.snapshots is not None, f"only the {HISTORY_VERSION} cluster takes snapshots (conftest)"
    kafka.reach("broker_back")
    outcome = run_history(spark, str(kafka.snapshots))
    assert outcome.snapshots == len(SNAPSHOT_AFTER)
    down, back = _taken(kafka, "broker_down"), _taken(kafka, "broker_back")
    found = {i.kind: i for i in outcome.incidents}
    gone = found.get("broker_gone")
    assert gone is not None, [i.summary for i in outcome.incidents]
    assert (gone.subjects, gone.started, gone.ended, gone.ongoing) == ([f"broker {kafka.killed}"], down, back, False)
    offline = found.get("partitions_offline")
    assert offline is not None and (offline.started, offline.ended) == (down, back), offline
    moved = found.get("controller_election")
    assert moved is not None and moved.started == down and f"broker {kafka.killed}" in moved.subjects, moved
