"""``--watch``: a real process re-reading a real ZooKeeper while the test changes it, showing what
appeared, cleared and changed, and ending with exit 130 on Ctrl-C (SIGINT)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.test_cli import ENV, run
from zkstorm.watch import Item, differences

TOPOLOGY = "fraud-scorer-3-1751880000"


def test_differences_name_what_appeared_cleared_and_changed() -> None:
    before = {
        1: Item(1, "a", "error", "x", "/"),
        2: Item(2, "b", "warning", "y", "/"),
        3: Item(3, "c", "info", "z", "/"),
    }
    now = {2: Item(2, "b", "warning", "y", "/"), 3: Item(3, "c", "error", "z!", "/"), 4: Item(4, "d", "info", "w", "/")}
    changes = differences(before, now, round_=2, at=datetime(2026, 1, 1, tzinfo=UTC))
    assert [(c.change, c.subject) for c in changes] == [("appeared", "d"), ("cleared", "a"), ("changed", "c")]
    assert changes[2].was == "info: z" and changes[2].level == "error"
    assert differences(now, now, round_=3, at=datetime(2026, 1, 1, tzinfo=UTC)) == []


class Watcher:
    """The CLI in its own process, its stdout read line by line on a thread."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zkstorm", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **ENV},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, predicate: Any, timeout: float = 30) -> list[str]:
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            seen.append(line)
            if predicate(line):
                return seen
        stderr = self.process.stderr.read() if self.process.poll() is not None and self.process.stderr else ""
        raise AssertionError(f"not seen in {timeout}s; got {seen}; stderr {stderr}")

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=30)


@pytest.fixture
def kafka(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    return zk_root


def test_kafka_health_watch_reports_a_partition_going_offline_and_back(writer: KazooClient, kafka: Chroot) -> None:
    zk = ["--zk", kafka.zk, "--kafka-root", "/kafka-prod"]
    partitions = json.loads(run(*zk, "kafka", "partitions", "-f", "json").stdout)
    healthy = next(p for p in partitions if p["health"] == "ok")
    state = f"{kafka.path}/kafka-prod/brokers/topics/{healthy['topic']}/partitions/{healthy['partition']}/state"
    original, _ = writer.get(state)
    subject = f"offline_partition {healthy['topic']}-{healthy['partition']}"

    watcher = Watcher(*zk, "kafka", "health", "--watch", "1s", "-f", "jsonl")
    try:
        first = watcher.until(lambda line: True)
        assert json.loads(first[0])["kind"] == "watch_change" and json.loads(first[0])["round"] == 1
        offline = json.loads(original)
        offline.update(leader=-1, isr=[])
        writer.set(state, json.dumps(offline).encode())
        seen = watcher.until(lambda line: subject in line and '"appeared"' in line)
        change = json.loads(seen[-1])
        assert change["level"] == "error" and change["round"] > 1
        writer.set(state, original)
        seen = watcher.until(lambda line: subject in line and '"cleared"' in line)
    finally:
        code = watcher.interrupt()
    assert code == 130


def test_storm_workers_watch_table_names_a_worker_that_went_away(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    beats = f"{zk_root.path}/storm/workerbeats/{TOPOLOGY}"
    gone = sorted(writer.get_children(beats))[0]
    watcher = Watcher("--zk", zk_root.zk, "storm", "workers", TOPOLOGY, "--watch", "1s")
    try:
        watcher.until(lambda line: "watching every 1s" in line)
        writer.delete(f"{beats}/{gone}")
        seen = watcher.until(lambda line: "cleared" in line)
        port = gone.rsplit("-", 1)[1]
        assert f"worker {TOPOLOGY}" in seen[-1] and f":{port}" in seen[-1]
        assert seen[-1].split()[1] == "-"
    finally:
        code = watcher.interrupt()
    assert code == 130


def test_watch_refuses_formats_that_cannot_stream(kafka: Chroot) -> None:
    result = run("--zk", kafka.zk, "--kafka-root", "/kafka-prod", "kafka", "health", "--watch", "1s", "-f", "json")
    assert result.exit_code == 2 and "--watch writes a table or -f jsonl" in result.stderr
    result = run("--zk", kafka.zk, "storm", "workers", "--watch", "0s")
    assert result.exit_code == 2
