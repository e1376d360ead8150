"""What Kafka itself says: one ``KafkaTruth`` JVM per cluster (``java/KafkaTruth.java``) on that version's
jars, spoken to a JSON line at a time. ``describe()`` is Kafka's AdminClient; ``tool(...)`` runs one of
Kafka's own commands (``kafka-topics``, ``kafka-configs``, ``kafka-acls``, ``kafka-reassign-partitions``,
``kafka-leader-election``, ``kafka-producer-perf-test``) in that JVM and returns what it printed.

``verdicts()`` is ``kafka-topics --describe`` with its four filters, parsed: Kafka's own judgement of
which partitions are under-replicated, unavailable, under and at min ISR, and of each topic's
replication factor while partitions move."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import Daemon, DaemonFailed, classpath, compile_java, jars, jvm, log4j1

SOURCE = Path(__file__).parent / "java" / "KafkaTruth.java"


@dataclass(frozen=True)
class ToolResult:
    code: int
    out: str
    err: str


class ToolFailed(Exception):
    pass


class KafkaTruth:
    """The AdminClient and command JVM of one cluster (a ``Daemon`` with pipes)."""

    def __init__(self, profile: str, tools: Any, bootstrap: str, run_dir: Path) -> None:
        self.profile = profile
        self.tools = tools  # the version's command classes (kafka.KafkaVersion)
        self.bootstrap = bootstrap
        classes = compile_java(SOURCE, profile)
        config = log4j1(run_dir / "truth", run_dir / "truth" / "truth.log", level="WARN")
        self.daemon = Daemon(
            "kafka-truth",
            jvm(
                classpath(classes, jars(profile)),
                "KafkaTruth",
                [bootstrap],
                heap="256m",
                options=[f"-Dlog4j.configuration=file:{config}"],
            ),
            log=run_dir / "truth" / "stderr.log",
            pipes=True,
        )
        self._lock = threading.Lock()

    def start(self) -> KafkaTruth:
        self.daemon.start()
        return self

    def stop(self) -> None:
        self.daemon.stop(timeout=5)

    def ask(self, *command: Any, timeout_hint: str = "") -> Any:
        process = self.daemon.process
        if process is None or process.stdin is None or process.stdout is None:
            raise DaemonFailed("the KafkaTruth JVM is not running")
        with self._lock:
            process.stdin.write(json.dumps(list(command)).encode() + b"\n")
            process.stdin.flush()
            line = process.stdout.readline()
        if not line:
            raise DaemonFailed(f"the KafkaTruth JVM exited ({process.poll()}):\n{self.daemon.log_tail()}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise ToolFailed(f"{command[0]}: {answer['error']}")
        return answer["value"]

    # the AdminClient ---------------------------------------------------------------------------------

    def cluster(self, timeout_ms: int = 2000) -> dict[str, Any]:
        return self.ask("cluster", timeout_ms)  # type: ignore[no-any-return]

    def describe(self) -> dict[str, Any]:
        return self.ask("describe")  # type: ignore[no-any-return]

    def consume(self, group: str, topic: str, count: int, timeout_ms: int = 30000) -> int:
        return int(self.ask("consume", group, topic, count, timeout_ms))

    # Kafka's commands --------------------------------------------------------------------------------

    def tool(self, main: str, *args: str, check: bool = True) -> ToolResult:
        value = self.ask("tool", main, *args)
        result = ToolResult(value["code"], value["out"], value["err"])
        if check and result.code != 0:
            raise ToolFailed(f"{main} {' '.join(args)} exited {result.code}:\n{result.out}\n{result.err}")
        return result

    def topics(self, *args: str, check: bool = True) -> ToolResult:
        return self.tool(self.tools.topics, "--bootstrap-server", self.bootstrap, *args, check=check)

    def configs(self, *args: str) -> ToolResult:
        return self.tool(self.tools.configs, "--bootstrap-server", self.bootstrap, *args)

    def acls(self, *args: str) -> ToolResult:
        return self.tool(self.tools.acls, "--bootstrap-server", self.bootstrap, *args)

    def reassign(self, *args: str) -> ToolResult:
        return self.tool(self.tools.reassign, "--bootstrap-server", self.bootstrap, *args)

    def elect(self, *args: str, check: bool = True) -> ToolResult:
        return self.tool(self.tools.election, "--bootstrap-server", self.bootstrap, *args, check=check)

    def produce(self, topic: str, records: int, size: int) -> ToolResult:
        return self.tool(
            self.tools.producer_perf,
            "--topic",
            topic,
            "--num-records",
            str(records),
            "--record-size",
            str(size),
            "--throughput",
            "-1",
            "--producer-props",
            f"bootstrap.servers={self.bootstrap}",
            "acks=all",
            "linger.ms=5",
        )

    def verdicts(self) -> dict[str, Any]:
        """``kafka-topics --describe`` whole and with each of its filters: Kafka's own verdicts."""
        described = parse_describe(self.topics("--describe").out)
        out: dict[str, Any] = {"topics": described["topics"], "partitions": described["partitions"]}
        for flag, name in (
            ("--under-replicated-partitions", "under_replicated"),
            ("--unavailable-partitions", "unavailable"),
            ("--under-min-isr-partitions", "under_min_isr"),
            ("--at-min-isr-partitions", "at_min_isr"),
        ):
            out[name] = sorted(
                [p["topic"], p["partition"]] for p in parse_describe(self.topics("--describe", flag).out)["partitions"]
            )
        return out


def parse_describe(text: str) -> dict[str, Any]:
    """``kafka-topics --describe`` output: a topic line (``Topic: t\\tTopicId: …\\tPartitionCount: 6\\t
    ReplicationFactor: 3\\tConfigs: …``) and a line per partition (``\\tTopic: t\\tPartition: 0\\tLeader: 2\\t
    Replicas: 2,3,1\\tIsr: 2,3,1``; ``Leader: none`` when there is none, 2.4+)."""
    topics: dict[str, Any] = {}
    partitions: list[dict[str, Any]] = []
    for line in text.splitlines():
        fields = dict(chunk.split(": ", 1) for chunk in line.strip().split("\t") if ": " in chunk)
        if "Topic" not in fields:
            continue
        if "Partition" in fields:
            leader = fields.get("Leader", "none").strip()
            partitions.append(
                {
                    "topic": fields["Topic"].strip(),
                    "partition": int(fields["Partition"]),
                    "leader": None if leader in ("none", "-1") else int(leader),
                    "replicas": _ids(fields.get("Replicas", "")),
                    "isr": _ids(fields.get("Isr", "")),
                    "adding": _ids(fields.get("Adding Replicas", "")),
                    "removing": _ids(fields.get("Removing Replicas", "")),
                }
            )
        elif "PartitionCount" in fields:
            topics[fields["Topic"].strip()] = {
                "partition_count": int(fields["PartitionCount"]),
                "replication_factor": int(fields["ReplicationFactor"]),
                "topic_id": fields.get("TopicId", "").strip() or None,
            }
    return {"topics": topics, "partitions": partitions}


def _ids(text: str) -> list[int]:
    return [int(x) for x in text.replace(" ", "").split(",") if x.strip().lstrip("-").isdigit()]
