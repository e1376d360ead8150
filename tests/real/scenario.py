"""The Kafka scenarios, driven through Kafka's own tools on a real cluster, and the moment after each:
what Kafka's API says and what zkstorm shows, read while neither changes.

Steps, in order (``KafkaScenario.reach(step)`` runs the ones before it that have not run, so a test run
alone still finds the cluster in its state):

``started``       three brokers registered, a controller elected, nothing else
``topics``        topics of several partition counts and replication factors (``kafka-topics --create``)
``configs``       topic overrides, a cluster-default and per-broker dynamic configs, a dynamic broker
                  password, SCRAM credentials and quotas (``kafka-configs``)
``acls``          literal, prefixed, deny and host-specific ACLs under ``AclAuthorizer`` (``kafka-acls``)
``data``          records produced (``kafka-producer-perf-test``) and a Java consumer group committing
``reassigning``   a reassignment held in flight by a throttle of 10 bytes/s (``kafka-reassign-partitions
                  --execute --throttle``; replica fetches capped at 64 KiB so one fetch cannot finish it)
``reassigned``    the throttle lifted (``--additional``), the move completed, ``--verify`` clearing it
``broker_down``   the controller ``kill -9``ed: offline and under-replicated partitions, a new controller;
                  then ``wide`` deleted (``kafka-topics --delete``) with a replica on the dead broker:
                  Kafka's metadata drops it at once, its deletion stalls in ZooKeeper
``broker_back``   that broker started again and caught up (its leaders elsewhere now); ``wide``'s
                  deletion completes
``elected``       a preferred-leader election (``kafka-leader-election --election-type preferred``)
``deleted``       a topic deleted with every broker up (``single``), gone from ZooKeeper at once

Each step records when it acted and when Kafka showed the result (``events``), which ``zkstorm changes``
is held to. With ``capture`` set, each moment is also written there (``capture.Moment.save``). With
``snapshots`` set, ``zkstorm snapshot`` is taken there after each of ``SNAPSHOT_AFTER`` (before the
broker kill, after it, after the restart), which ``zkstorm history`` is held to.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .capture import Moment, dump
from .compare import Fact
from .kafka import SESSION_TIMEOUT_MS, KafkaCluster
from .truth import ToolFailed
from .views import Shown, facts, read_views, run

STEPS = (
    "started",
    "topics",
    "configs",
    "acls",
    "data",
    "reassigning",
    "reassigned",
    "broker_down",
    "broker_back",
    "elected",
    "deleted",
)

# name: (partitions, replication factor). ``single`` has a partition on every broker, so the one killed
# leaves one offline; ``wide`` has more than four partitions (its znode's map comes out in hash order).
TOPICS = {"orders": (6, 3), "payments": (3, 2), "single": (3, 1), "wide": (12, 3)}
BROKER_PASSWORD = "zkstorm-real-broker-pw"
SCRAM_PASSWORDS = {"alice": "zkstorm-real-alice-pw", "bob": "zkstorm-real-bob-pw"}
SNAPSHOT_AFTER = ("reassigned", "broker_down", "broker_back")
HISTORY_VERSION = "3.9.2"  # the version whose snapshots the one history run reads
THROTTLE = 10  # bytes/s: the reassignment stays in flight until it is lifted


@dataclass
class Seen:
    """One moment: its capture, what zkstorm showed, and every fact compared."""

    moment: Moment
    views: dict[str, Shown]
    facts: list[Fact]

    @property
    def kafka(self) -> dict[str, Any]:
        return self.moment.kafka


@dataclass
class KafkaScenario:
    cluster: KafkaCluster
    zk: Any  # the test ZooKeeper (zkstorm.sandbox.server.ZkServer)
    writer: Any  # the tests' own kazoo client, for captures and for waiting on ZooKeeper
    capture: Path | None = None
    done: list[str] = field(default_factory=list)
    seen: dict[str, Seen] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    killed: int | None = None
    plan: Path | None = None  # the reassignment's JSON file
    deleting_since: int = 0  # when ``wide``'s deletion was asked for (it stalls on the dead broker)
    started_zxid: int = 0  # the server's last zxid before the cluster started (``zkstorm changes --since``)
    timings: dict[str, tuple[float, float]] = field(default_factory=dict)  # step: (acting, its moment) in s
    retries: dict[str, int] = field(default_factory=dict)  # step: moments taken again (something changed)
    failed: str | None = None  # a step that raised: the ones after it are not tried
    snapshots: Path | None = None  # where ``zkstorm snapshot`` writes after each of ``SNAPSHOT_AFTER``
    snapshot_ids: dict[str, str] = field(default_factory=dict)  # step: its snapshot's id

    @property
    def profile(self) -> str:
        return self.cluster.version.profile

    @property
    def truth(self) -> Any:
        assert self.cluster.truth is not None
        return self.cluster.truth

    @property
    def where(self) -> list[str]:
        return ["--zk", f"{self.zk.connect_string}{self.cluster.chroot}"]

    def reach(self, step: str) -> Seen:
        """Run every step up to ``step`` not run yet, each followed by its moment; ``step``'s moment."""
        for name in STEPS[: STEPS.index(step) + 1]:
            if name in self.done:
                continue
            if self.failed is not None:  # the cluster is not in the state the steps after it need
                raise AssertionError(f"{self.profile}: step {self.failed} failed earlier; {step} cannot be reached")
            self.failed = name
            started = time.monotonic()
            getattr(self, f"_{name}")()
            acted = time.monotonic()
            self.seen[name] = self.moment(name)
            if self.snapshots is not None and name in SNAPSHOT_AFTER:
                self.snapshot(name)
            self.timings[name] = (acted - started, time.monotonic() - acted)
            self.done.append(name)
            self.failed = None
        return self.seen[step]

    def snapshot(self, step: str) -> None:
        """``zkstorm snapshot`` of the cluster as the step left it, under an id of its own (the default id is
        one a day: a second one the same day would replace the first)."""
        assert self.snapshots is not None
        snapshot_id = f"{self.profile}@{len(self.snapshot_ids)}-{step}"
        result = run(
            *self.where, "snapshot", str(self.snapshots), "--cluster", self.profile, "--snapshot-id", snapshot_id
        )
        assert result.exit_code == 0, f"snapshot after {step}: {result.stderr}"
        self.snapshot_ids[step] = snapshot_id

    # --- the moment after a step --------------------------------------------------------------------

    def kafka_answer(self) -> dict[str, Any]:
        return {"describe": self.truth.describe(), "verdicts": self.truth.verdicts()}

    def moment(self, name: str, attempts: int = 30, *, save: bool = True) -> Seen:
        """Kafka's answer, the znodes and zkstorm's views, taken again until the server's zxid and Kafka's
        answer are the same before and after: all three then describe one state."""
        for attempt in range(attempts):
            self.retries[name] = attempt
            before = self.zk.last_zxid()
            time.sleep(0.2)
            if self.zk.last_zxid() != before:
                continue
            try:
                kafka = self.kafka_answer()
                as_of_ms = int(time.time() * 1000)
                nodes = dump(self.writer, self.cluster.chroot)
                views = read_views(self.where)
                again = self.kafka_answer()
            except ToolFailed:  # Kafka's metadata not yet the same on every broker: not a steady moment
                time.sleep(0.3)
                continue
            if self.zk.last_zxid() == before and _steady(kafka) == _steady(again):
                moment = Moment(self.profile, name, self.cluster.chroot, as_of_ms, before, nodes, kafka)
                if self.capture is not None and save:
                    self._save(moment)
                return Seen(moment, views, facts(views, kafka, nodes))
        raise AssertionError(f"{self.profile} {name}: ZooKeeper or Kafka kept changing; no steady moment")

    def _save(self, moment: Moment) -> None:
        assert self.capture is not None
        moment.save(self.capture)
        order = self.capture / self.profile / "order.json"
        names = json.loads(order.read_text()) if order.exists() else []
        names = [n for n in names if n != moment.name] + [moment.name]
        order.write_text(json.dumps(names) + "\n")
        (self.capture / self.profile / "events.json").write_text(json.dumps(self.events, indent=1) + "\n")

    def wait(self, what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
        """Until ``check`` is true; Kafka's errors meanwhile (metadata not yet everywhere) are "not yet"."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                answer = check()
            except ToolFailed as exc:
                answer, last = None, exc
            if answer:
                return answer
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.profile}: not {what} within {timeout:g}s ({last})\n{self.cluster.log_tails()}"
                )
            time.sleep(0.2)

    def event(self, kind: str, started_ms: int, **subject: Any) -> None:
        self.events.append({"kind": kind, "from_ms": started_ms, "to_ms": _now_ms(), **subject})

    def partitions(self) -> dict[tuple[str, int], dict[str, Any]]:
        described = self.truth.describe()
        return {(t, p["partition"]): p for t, d in described["topics"].items() for p in d["partitions"]}

    # --- the steps -----------------------------------------------------------------------------------

    def _started(self) -> None:
        """The cluster as it starts (the fixture started it)."""

    def _topics(self) -> None:
        for topic, (count, rf) in TOPICS.items():
            self.truth.topics("--create", "--topic", topic, "--partitions", str(count), "--replication-factor", str(rf))
        self.wait(
            "every topic's partitions led",
            lambda: (
                all(p["leader"] is not None for p in self.partitions().values())
                and {t for t, _ in self.partitions()} >= set(TOPICS)
            ),
        )

    def _configs(self) -> None:
        c = self.truth.configs
        c("--entity-type", "topics", "--entity-name", "orders", "--alter", "--add-config",
          "min.insync.replicas=2,retention.ms=3600000")  # fmt: skip
        c("--entity-type", "topics", "--entity-name", "wide", "--alter", "--add-config",
          "cleanup.policy=compact,segment.bytes=1048576")  # fmt: skip
        # the cluster-wide default min.insync.replicas (dynamic, in /config/brokers/<default>): what
        # ``single`` (one replica) and ``payments`` (two) are judged against
        c("--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
          "min.insync.replicas=2,message.max.bytes=2000000")  # fmt: skip
        # a dynamic password (stored encrypted with password.encoder.secret) and a plain per-broker config
        c("--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
          f"listener.name.plaintext.ssl.key.password={BROKER_PASSWORD},log.cleaner.backoff.ms=20000")  # fmt: skip
        c("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config",
          f"SCRAM-SHA-256=[iterations=4096,password={SCRAM_PASSWORDS['alice']}]")  # fmt: skip
        # a quota in the same znode as the credential (kafka-configs alters them one kind at a time)
        c("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config", "consumer_byte_rate=1048576")
        c("--entity-type", "users", "--entity-name", "bob", "--alter", "--add-config",
          f"SCRAM-SHA-512=[iterations=8192,password={SCRAM_PASSWORDS['bob']}]")  # fmt: skip
        c("--entity-type", "clients", "--entity-name", "app-1", "--alter", "--add-config",
          "producer_byte_rate=2048000")  # fmt: skip
        self.wait(
            "the topic override in Kafka's answer", lambda: self.truth.describe()["min_isr"]["orders"]["value"] == "2"
        )

    def _acls(self) -> None:
        a = self.truth.acls
        a("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
          "--topic", "orders")  # fmt: skip
        a("--add", "--allow-principal", "User:bob", "--operation", "Write", "--topic", "pay",
          "--resource-pattern-type", "prefixed")  # fmt: skip
        a("--add", "--deny-principal", "User:mallory", "--operation", "Read", "--topic", "orders")
        a("--add", "--allow-principal", "User:carol", "--allow-host", "10.0.0.5", "--operation", "Read",
          "--group", "billing")  # fmt: skip
        a("--add", "--allow-principal", "User:ops", "--operation", "DescribeConfigs", "--cluster")
        a("--add", "--allow-principal", "User:bob", "--operation", "Write", "--transactional-id", "tx-",
          "--resource-pattern-type", "prefixed")  # fmt: skip
        self.wait("every ACL in Kafka's answer", lambda: len(self.truth.describe()["acls"]) >= 7)

    def _data(self) -> None:
        self.truth.produce("payments", 3000, 200)
        read = self.truth.consume("billing", "payments", 100)
        assert read >= 100, read

    def _reassigning(self) -> None:
        """Every partition of ``payments`` onto the broker it is not on yet, off its second replica."""
        current = {p: v["replicas"] for (t, p), v in self.partitions().items() if t == "payments"}
        brokers = set(self.cluster.broker_ids)
        plan = {
            "version": 1,
            "partitions": [
                {"topic": "payments", "partition": p, "replicas": [*sorted(brokers - set(r)), r[0]]}
                for p, r in sorted(current.items())
            ],
        }
        self.plan = self.cluster.run_dir / "reassignment.json"
        self.plan.write_text(json.dumps(plan))
        started = _now_ms()
        self.truth.reassign("--execute", "--reassignment-json-file", str(self.plan), "--throttle", str(THROTTLE))
        self.event("kafka_reassignment_started", started, topic="payments")
        self.wait("the reassignment listed by Kafka", lambda: self.truth.describe()["reassignments"])

    def _reassigned(self) -> None:
        assert self.plan is not None
        started = _now_ms()
        self.truth.reassign(
            "--execute", "--additional", "--reassignment-json-file", str(self.plan), "--throttle", "1000000000"
        )
        self.wait("the reassignment to complete", lambda: not self.truth.describe()["reassignments"], timeout=90)
        self.event("kafka_reassignment_completed", started, topic="payments")
        self.truth.reassign("--verify", "--reassignment-json-file", str(self.plan))  # clears the throttles
        self.wait("every replica in its ISR", self._all_in_sync)

    def _broker_down(self) -> None:
        """The controller killed; then ``wide`` deleted, a replica of which is on the dead broker: Kafka's
        metadata drops the topic at once, and its znodes stay until that broker is back."""
        victim = self.cluster.controller_id()
        self.killed = victim
        started = _now_ms()
        self.cluster.kill(victim)
        rest = set(self.cluster.broker_ids) - {victim}
        self.cluster.wait_brokers(rest, timeout=SESSION_TIMEOUT_MS / 1000 + 30)
        self.event("kafka_broker_gone", started, broker=victim)
        # the brokers' metadata can still name the dead controller for a while after its session expired (a
        # loaded machine: the changes test then sought the dead broker's own earlier election): the new one
        # is the first live broker Kafka names
        self.wait("a live broker named as the controller", lambda: self.cluster.controller_id() in rest)
        self.event("kafka_controller_moved", started, old=victim, new=self.cluster.controller_id())
        # the new controller took the dead broker out of every ISR (and the offline partitions' leaders)
        self.wait(
            "the dead broker out of the ISRs it can leave",
            lambda: all(victim not in p["isr"] or p["replicas"] == [victim] for p in self.partitions().values()),
        )
        self.deleting_since = _now_ms()
        self.truth.topics("--delete", "--topic", "wide")
        base = self.cluster.chroot
        self.wait(
            "wide out of Kafka's metadata, its deletion stalled in ZooKeeper",
            lambda: (
                "wide" not in self.truth.describe()["topics"]
                and self.writer.exists(f"{base}/admin/delete_topics/wide")
                and self.writer.exists(f"{base}/brokers/topics/wide")
            ),
        )

    def _broker_back(self) -> None:
        """The broker back: it catches up, and the deletion it stalled completes."""
        assert self.killed is not None
        self.cluster.restart(self.killed)
        self.cluster.wait_brokers(set(self.cluster.broker_ids))
        self.wait("every replica back in its ISR", self._all_in_sync, timeout=90)
        self._gone("wide", self.deleting_since)

    def _elected(self) -> None:
        self.truth.elect("--election-type", "preferred", "--all-topic-partitions", check=False)
        self.wait(
            "every partition led by its preferred replica",
            lambda: all(p["leader"] == p["replicas"][0] for p in self.partitions().values()),
        )

    def _deleted(self) -> None:
        """A topic deleted with every broker up: gone from Kafka and ZooKeeper within a second."""
        started = _now_ms()
        self.truth.topics("--delete", "--topic", "single")
        self._gone("single", started)

    def _gone(self, topic: str, started: int) -> None:
        base = self.cluster.chroot
        self.wait(
            f"{topic} gone from Kafka and ZooKeeper",
            lambda: (
                topic not in self.truth.describe()["topics"]
                and not self.writer.exists(f"{base}/brokers/topics/{topic}")
                and not self.writer.exists(f"{base}/admin/delete_topics/{topic}")
            ),
            timeout=90,
        )
        self.event("kafka_topic_deleted", started, topic=topic)

    def _all_in_sync(self) -> bool:
        return all(
            p["leader"] is not None and sorted(p["isr"]) == sorted(p["replicas"]) for p in self.partitions().values()
        )


def _steady(answer: dict[str, Any]) -> Any:
    describe = {k: v for k, v in answer["describe"].items() if k not in ("started_ms", "finished_ms", "took_ms")}
    return json.dumps({"describe": describe, "verdicts": answer["verdicts"]}, sort_keys=True)


def _now_ms() -> int:
    return int(time.time() * 1000)
