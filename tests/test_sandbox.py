"""The synthetic clusters and the sandbox lifecycle."""

from __future__ import annotations

import json
import logging
import time
from collections import Counter

from click.testing import CliRunner

import zkstorm
from tests.conftest import Chroot
from zkstorm.cli import cli
from zkstorm.decode.sniff import detect_encoding
from zkstorm.decode.thrift import is_thrift_struct
from zkstorm.records import Znode
from zkstorm.sandbox.seed import Sandbox, seed
from zkstorm.sandbox.synth import cluster, java_url_encode

NOW = 1795300000


def test_synthetic_cluster_is_deterministic_and_parents_come_first() -> None:
    first = list(cluster(scale=2, now=NOW))
    assert first == list(cluster(scale=2, now=NOW))
    seen = {"/"}
    for node in first:
        parent = node.path.rsplit("/", 1)[0] or "/"
        assert parent in seen, node.path
        if not node.sequential:
            seen.add(node.path)


def test_scale_grows_the_cluster_linearly() -> None:
    # Linear with an offset: cluster-wide nodes (__consumer_offsets, the controller, …) exist once.
    one, two, five = (sum(1 for _ in cluster(scale=s, now=NOW)) for s in (1, 2, 5))
    assert 0.9 * 4 * (two - one) < five - one < 1.1 * 4 * (two - one)


def test_synthetic_payloads_have_storm_and_kafka_encodings() -> None:
    import gzip

    encodings = Counter()
    for node in cluster(scale=1, now=NOW):
        encoding = detect_encoding(node.data)
        encodings[encoding] += 1
        if encoding == "gzip":
            assert is_thrift_struct(gzip.decompress(node.data)), node.path
        if node.path.startswith("/kafka/") and node.data:
            assert encoding in ("json", "text"), node.path
    assert encodings["gzip"] > 50 and encodings["json"] > 100 and encodings["dir-marker"] > 20


def test_component_ids_are_url_encoded_like_java() -> None:
    assert [java_url_encode(c) for c in ("score~v3", "alert*sink", "dédup", "top-5%", "a b")] == [
        "score%7Ev3",
        "alert*sink",
        "d%C3%A9dup",
        "top-5%25",
        "a+b",
    ]


def test_seeded_cluster_walks_back_complete(zk_root: Chroot) -> None:
    nodes = list(cluster(scale=1, now=NOW))
    counts = seed(zk_root.zk, nodes)
    assert counts.znodes == len(nodes)
    with zkstorm.connect(zk_root.zk) as session:
        znodes = [r for r in session.walk("/") if isinstance(r, Znode)]
    assert len(znodes) == len(nodes) + 1  # plus the chroot itself
    ephemeral = {z.path for z in znodes if z.ephemeral}
    assert any(p.startswith("/storm/supervisors/") for p in ephemeral)
    assert "/kafka/controller" in ephemeral
    assert any("/errors/" in p and p.rsplit("/", 1)[1].startswith("e00000") for p in ephemeral)


def test_seeded_kafka_cluster_has_the_promised_incidents(zk_root: Chroot) -> None:
    seed(zk_root.zk, cluster(scale=1, now=NOW))
    runner = CliRunner()
    args = ["--zk", zk_root.zk, "--kafka-root", "/kafka", "kafka", "health", "-f", "json"]
    kinds = {f["finding"] for f in json.loads(runner.invoke(cli, args).stdout)}
    assert {
        "offline_partition",
        "under_replicated",
        "under_min_isr",
        "unregistered_broker",
        "reassignment_in_flight",
        "topic_deletion_pending",
        "preferred_leader_imbalance",
    } <= kinds


def test_sandbox_start_status_stop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    state = str(tmp_path / "box")
    started = runner.invoke(cli, ["sandbox", "start", "--dir", state])
    try:
        assert started.exit_code == 0, started.output
        zk = started.stdout.strip()
        assert zk.startswith("127.0.0.1:")
        assert runner.invoke(cli, ["sandbox", "status", "--dir", state]).stdout.strip() == zk
        again = runner.invoke(cli, ["sandbox", "start", "--dir", state])
        assert again.stdout.strip() == zk  # already running: left as it is, not seeded twice
        rows = [
            json.loads(x)
            for x in runner.invoke(cli, ["--zk", zk, "tree", "/kafka/brokers/ids", "-f", "jsonl"]).stdout.splitlines()
        ]
        assert len(rows) == 4  # three live brokers; broker 4 is dead but named in replica lists
    finally:
        stopped = runner.invoke(cli, ["sandbox", "stop", "--dir", state])
    assert stopped.exit_code == 0
    assert not Sandbox(state).running()
    assert runner.invoke(cli, ["sandbox", "status", "--dir", state]).exit_code == 4


def test_the_docs_library_example_runs_as_written(zk_root: Chroot) -> None:
    """The Python example of docs/library.md, extracted verbatim and run in a fresh interpreter against a seeded
    cluster, prints what it promises from the model's records."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "library.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", page, re.S)
    seed(zk_root.zk, cluster(scale=1, now=int(time.time())))
    result = subprocess.run(
        [sys.executable, "-c", example],
        env={**os.environ, "ZKSTORM_ZK": zk_root.zk},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(re.match(r"\S+: ACTIVE, \d+/\d+ workers stale, \d+ errors today", line) for line in lines), lines
    assert any(re.match(r"nimbus leader \S+, Kafka controller broker \d+", line) for line in lines), lines
    assert any(re.match(r"[1-9]\d* offline partitions", line) for line in lines), lines  # the seeded incident
    assert "not registered" in result.stdout  # the unregistered broker's explanation
    assert "KafkaBroker(" in lines[-1]


def test_stopping_a_sandbox_closes_the_seeding_session_this_process_kept(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    """Seeding keeps its session open (the ephemeral brokers and supervisors stay registered); a stop
    from the same process (a benchmark, a test) closes it before the server goes, so that session does
    not retry a dead server for the rest of the process."""
    box = Sandbox(tmp_path / "box")
    box.start()
    try:
        box.seed(scale=1)
    finally:
        with caplog.at_level(logging.WARNING, logger="kazoo"):
            box.stop()
            time.sleep(1)  # a session left open logs its lost connection at once
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("kazoo")]


def test_free_ports_are_below_the_ephemeral_range_unused_and_never_handed_out_twice() -> None:
    """A server's port is one no outgoing connection can be given meanwhile (below the kernel's ephemeral
    range), nothing listens on, and this process has not handed out before."""
    import socket

    from zkstorm.sandbox import server

    low, _ = server._ephemeral_ports()
    ports = [server.free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert all(server.LOWEST_PORT <= port < low for port in ports)
    for port in ports[:20]:  # each one binds
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
    with socket.socket() as taken:  # the port the walk comes to next, listened on by another server
        taken.bind(("127.0.0.1", server.LOWEST_PORT + server._next_port[0] % (low - server.LOWEST_PORT)))
        taken.listen()
        assert server.free_port() != taken.getsockname()[1]
