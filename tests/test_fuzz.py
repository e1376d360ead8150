"""Mutated real payloads through every registered decoder: only typed failure records come out."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures import manifest
from zkstorm.collect import decode_node
from zkstorm.decode.registry import REGISTRY
from zkstorm.paths import Roots
from zkstorm.records import DecodeFailure
from zkstorm.zk import RawNode, Stat

ROOTS = Roots(
    storm=("/storm", "/storm1", "/storm-next", "/storm-plain", "/legacy-storm"),
    kafka=("/kafka-prod", "/clusters/analytics", "/"),
)
STAT = Stat(5, 5, 1000, 2000, 3, 0, 0, 0, 0, 0, 5)
SAMPLES = [
    (node.path, node.data)
    for system, name in [("storm", n) for n in ("storm2", "storm1", "encodings", "legacy09")]
    + [("kafka", n) for n in ("cluster-2x-chroot", "cluster-08-root", "migrated-kraft", "corrupt")]
    for node in manifest(system, name)
    if node.data and len(node.data) > 1 and REGISTRY.lookup(node.path, ROOTS)
]


def test_every_decoder_kind_is_sampled() -> None:
    kinds = {REGISTRY.lookup(path, ROOTS)[0].kind for path, _ in SAMPLES}  # type: ignore[index]
    assert len(kinds) >= 30


def _mutate(data: bytes, draw: st.DrawFn) -> bytes:
    target = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "duplicate"]))
        position = draw(st.integers(0, max(len(target) - 1, 0)))
        if kind == "flip" and target:
            target[position] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del target[position:]
        elif kind == "insert":
            target[position:position] = draw(st.binary(min_size=1, max_size=6))
        else:
            target[position:position] = target[position : position + draw(st.integers(1, 16))]
    return bytes(target)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    path, data = draw(st.sampled_from(SAMPLES))
    return path, _mutate(data, draw)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_payloads_yield_records_or_typed_failures(sample: tuple[str, bytes]) -> None:
    path, data = sample
    znode, records = decode_node(RawNode(path, STAT, data), roots=ROOTS)
    assert znode.path == path and znode.data_length == STAT.dataLength
    for failure in (r for r in records if isinstance(r, DecodeFailure)):
        assert failure.path == path and failure.size == len(data) and failure.failure_type and failure.reason
