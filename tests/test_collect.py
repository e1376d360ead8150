"""``to_znode``: the hot-path constructor gives exactly the record the dataclass constructor gives.
``decode_node``: each payload parsed once, with the encoding the sniff would give it."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import pytest

from tests.conftest import load_cluster
from tests.fixtures import KAFKA_FOLDERS, STORM_FOLDERS, manifest
from zkstorm.decode.sniff import detect_encoding
from zkstorm.layout import Roots
from zkstorm.model import walk as collect
from zkstorm.model.walk import decode_node, to_znode
from zkstorm.records import Znode
from zkstorm.sources.base import RawNode, Stat


def test_to_znode_sets_every_field_as_the_dataclass_would() -> None:
    stat = Stat(11, 12, 1_700_000_000_000, 1_700_000_001_000, 3, 4, 5, 0x1234, 9, 2, 13)
    built = to_znode(RawNode("/storm/supervisors/s1", stat, b"123456789"), "binary", "summary", "decoded")
    expected = Znode(
        path="/storm/supervisors/s1",
        czxid=11,
        mzxid=12,
        pzxid=13,
        ctime_ms=1_700_000_000_000,
        mtime_ms=1_700_000_001_000,
        version=3,
        cversion=4,
        aversion=5,
        ephemeral_owner=0x1234,
        data_length=9,
        num_children=2,
        ephemeral=True,
        encoding="binary",
        summary="summary",
        decode_status="decoded",
    )
    # asdict reads every declared slot: one that to_znode forgot would raise AttributeError here
    assert dataclasses.asdict(built) == dataclasses.asdict(expected)
    assert built == expected


def test_to_znode_defaults_and_persistent_nodes() -> None:
    built = to_znode(RawNode("/", Stat(0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0), None), "empty")
    assert built.ephemeral is False
    assert (built.summary, built.decode_status) == (None, "not-decoded")


ROOTS = Roots(
    storm=("/storm", "/storm1", "/storm-next", "/storm-plain", "/legacy-storm"),
    kafka=("/kafka-prod", "/clusters/analytics", "/"),
)
FIXTURE_NODES = [
    (f"{system}/{name}", node)
    for system, names in (("storm", STORM_FOLDERS), ("kafka", KAFKA_FOLDERS))
    for name in names
    for node in manifest(system, name)
]


def test_a_decoded_payload_is_not_sniffed_and_its_encoding_is_the_sniffs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Kafka JSON payload is parsed by its decoder alone, a Storm Thrift envelope read by its decoder
    alone; the encoding they report is the one the sniff would have found (checked on every fixture
    znode, the corrupt clusters included)."""
    sniffed: list[str] = []

    def counting(data: bytes | None) -> str:
        sniffed.append(current)
        return detect_encoding(data)

    monkeypatch.setattr(collect, "detect_encoding", counting)
    claimed = 0
    for label, node in FIXTURE_NODES:
        current = node.path
        znode, _ = decode_node(RawNode(node.path, STAT, node.data), roots=ROOTS)
        assert znode.encoding == detect_encoding(node.data), (label, node.path)
        if znode.decode_status == "decoded" and node.data and node.data[:1] in (b"{", b"\x1f", b"\xac", b"\x28"):
            assert node.path not in sniffed, (label, node.path)
            claimed += 1
    assert claimed > 250  # the check above ran on the fixtures' JSON and compressed/serialized payloads


STAT = Stat(5, 5, 1000, 2000, 3, 0, 0, 0, 0, 0, 5)


def test_a_files_walk_finds_an_unnamed_chroot_as_it_reads_instead_of_holding_it_to_the_end(tmp_path: Any) -> None:
    """A Kafka cluster under a chroot no flag names (/clusters/east), read from a real server's files: its
    root is found from the first path under its ``brokers/ids`` or ``brokers/topics``, and its znodes are
    decoded as they come. Held back until the walk ended, as they were, the znodes of a three-million-znode
    cluster under such a chroot all waited in memory (``tree`` of 300,000 such znodes: 291 MiB, 59 after)."""
    from kazoo.client import KazooClient

    from zkstorm.layout import DEFAULT_ROOTS
    from zkstorm.model.walk import decoded_walk
    from zkstorm.sandbox.server import ZkServer
    from zkstorm.sources.base import WalkStats
    from zkstorm.sources.files.source import FileSource

    server = ZkServer(tmp_path / "server").start()
    try:
        client = KazooClient(server.connect_string, timeout=30)
        client.start(timeout=30)
        client.ensure_path("/clusters/east")
        load_cluster(client, "/clusters/east", "kafka", "cluster-08-root")
        client.stop()
        client.close()
    finally:
        server.stop()
    stats = WalkStats()
    seen, late, decoded = 0, [], 0
    with FileSource([str(tmp_path / "server" / "data")]) as source:
        for path, znode, records in decoded_walk(source, "/", roots=DEFAULT_ROOTS, stats=stats, discover=True):
            if path.startswith("/clusters/east/") and znode is not None:
                seen += 1
                decoded += any(type(r).__name__ == "KafkaPartitionState" for r in records)
                if stats.znodes == source_total(tmp_path):
                    late.append(path)
    assert decoded == sum(1 for n in manifest("kafka", "cluster-08-root") if n.path.endswith("/state"))
    assert seen > 40 and len(late) <= 1, late


@cache
def source_total(tmp_path: Any) -> int:
    from zkstorm.sources.files.source import FileSource

    with FileSource([str(tmp_path / "server" / "data")]) as source:
        return sum(1 for _ in source.walk("/"))
