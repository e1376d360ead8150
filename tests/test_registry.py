"""Decoders plug into the registry by path pattern; failures become DecodeFailure records."""

from __future__ import annotations

from typing import Any

import pytest

from zkstorm.decode.registry import Registry
from zkstorm.errors import DecodeError
from zkstorm.layout import Roots, is_secret_path
from zkstorm.model.walk import decode_node
from zkstorm.records import DecodeFailure
from zkstorm.sources.base import RawNode, Stat

STAT = Stat(1, 1, 0, 0, 0, 0, 0, 0, 5, 0, 1)


def _decode_length(context: Any, data: bytes | None) -> list[Any]:
    if data == b"bad":
        raise DecodeError("not a thing")
    return [
        DecodeFailure(
            path=context.relative, record_kind="probe", failure_type="", reason="", size=len(data or b""), encoding=""
        )
    ]


def _registry() -> Registry:
    registry = Registry()
    registry.register("storm", "storms/*", "storm_base", _decode_length, lambda rs: f"{len(rs)} record")
    registry.register("kafka", "config/brokers/<default>", "kafka_default", _decode_length)
    registry.register("kafka", "config/brokers/*", "kafka_broker_config", _decode_length)
    return registry


def test_lookup_by_root_and_pattern() -> None:
    registry, roots = _registry(), Roots(storm=("/storm",), kafka=("/kafka",))
    found = registry.lookup("/storm/storms/topo-1-1", roots)
    assert found and found[0].kind == "storm_base" and found[2] == "storms/topo-1-1"
    assert registry.lookup("/storm/storms", roots) is None
    assert registry.lookup("/other/storms/x", roots) is None
    assert registry.lookup("/kafka/config/brokers/<default>", roots)[0].kind == "kafka_default"  # type: ignore[index]
    assert registry.lookup("/kafka/config/brokers/7", roots)[0].kind == "kafka_broker_config"  # type: ignore[index]


def test_decode_node_summarises_and_turns_errors_into_failures() -> None:
    registry, roots = _registry(), Roots()
    znode, records = decode_node(RawNode("/storm/storms/t-1-1", STAT, b"hello"), roots=roots, registry=registry)
    assert znode.summary == "1 record" and znode.encoding == "text" and records[0].size == 5
    znode, records = decode_node(RawNode("/storm/storms/t-1-1", STAT, b"bad"), roots=roots, registry=registry)
    assert records == [
        DecodeFailure(
            path="/storm/storms/t-1-1",
            record_kind="storm_base",
            failure_type="decode_error",
            reason="not a thing",
            size=3,
            encoding="text",
        )
    ]
    assert znode.summary == "undecodable storm_base: not a thing"
    znode, records = decode_node(RawNode("/elsewhere", STAT, b"x"), roots=roots, registry=registry)
    assert records == [] and znode.summary is None


@pytest.mark.parametrize(
    "path",
    [
        "/storm/credentials/t-1-1",
        "/storm/secretkeys/NIMBUS/t-1-1/0",
        "/kafka-prod/config/users/alice",
        "/kafka-prod/config/users/alice/clients/app",
        "/kafka-prod/config/brokers/<default>",
        "/delegation_token/tokens/abc",
        "/a/b/c/config/users/x",  # under any root, whatever --kafka-root says
    ],
)
def test_secret_paths(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize("path", ["/kafka/config/topics/orders", "/storm/storms/t-1-1", "/config/users", "/"])
def test_not_secret_paths(path: str) -> None:
    assert not is_secret_path(path)


def test_locate_finds_every_root_over_a_path_deepest_first() -> None:
    """``Roots.locate`` looks only at the roots under a path's first segment: it finds what trying every
    root finds, for nested, overlapping and top-level roots."""
    from zkstorm.layout import relative_to

    roots = Roots(
        storm=("/storm", "/a/storm", "/a", "/x/y/z"),
        kafka=("/", "/a", "/kafka", "/a/b/kafka", "/storm/kafka"),
    )
    paths = ["/", "/a", "/a/b", "/a/b/kafka/brokers/ids/1", "/a/storm/storms/t", "/storm", "/storm/kafka/x"]
    paths += ["/stormy/x", "/kafka", "/kafka2/brokers", "/x/y/z", "/x/y/zz", "/x/y", "/zookeeper/quota"]
    for path in paths:
        every = [
            (system, root, rel)
            for system, found in (("storm", roots.storm), ("kafka", roots.kafka))
            for root in found
            if (rel := relative_to(path, root)) is not None
        ]
        every.sort(key=lambda e: -len(e[1]))
        assert sorted(roots.locate(path)) == sorted(every), path
        assert [len(r) for _, r, _ in roots.locate(path)] == sorted((len(r) for _, r, _ in every), reverse=True)
