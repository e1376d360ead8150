"""Mutated real payloads through every registered decoder: only typed failure records come out."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.fixtures import manifest
from zkstorm.decode.registry import REGISTRY
from zkstorm.decode.sniff import detect_encoding
from zkstorm.layout import Roots
from zkstorm.model.walk import decode_node
from zkstorm.records import RECORD_TYPES, DecodeFailure
from zkstorm.sources.base import RawNode, Stat

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
    decoder = REGISTRY.lookup(path, ROOTS)[0]  # type: ignore[index]
    znode, records = decode_node(RawNode(path, STAT._replace(dataLength=len(data)), data), roots=ROOTS)
    assert znode.path == path and all(type(r) in RECORD_TYPES for r in records)
    failures = [r for r in records if isinstance(r, DecodeFailure)]
    event("typed failure" if failures else "decoded")
    if failures:
        (failure,) = failures
        # the failure, and at most the placeholder of what the znode stands for, empty but for its key;
        # or, when one of Kafka's rules refused a znode whose fields read, what they read
        # (``DecodeError.records``); either way, what stands for the znode has the failure type as its status
        others = [r for r in records if r is not failure]
        refused = failure.failure_type in _RULES_KEEPING_WHAT_WAS_READ
        assert records[0] is failure and (len(others) <= 1 or refused), "partial records from a failed read"
        assert all(r.decode_status == failure.failure_type for r in others if hasattr(r, "decode_status"))
        assert failure.path == path and failure.size == len(data) and failure.record_kind == decoder.kind
        assert failure.failure_type and failure.reason
        assert znode.decode_status == "failed" and znode.summary and failure.reason in znode.summary
    else:
        assert znode.decode_status == "decoded"


# what a decoder raises when Kafka's reader refuses a znode whose fields read (``decode.kafka``)
_RULES_KEEPING_WHAT_WAS_READ = {"invalid_topic_id", "invalid_value", "wrong_type"}


STRUCTURED = [
    (path, data)
    for path, data in SAMPLES
    if data[:1] in (b"{", b"[") or detect_encoding(data) in ("gzip", "zstd", "thrift", "java-serialized")
]


def test_every_structured_payload_cut_in_half_is_a_typed_failure() -> None:
    """The deterministic half of the fuzz test: a JSON, Thrift, gzip, zstd or Java payload cut in half
    is never decoded as if it were whole (plain-text payloads like ``10`` may still be)."""
    assert len(STRUCTURED) >= 250
    decoded = []
    for path, data in STRUCTURED:
        cut = data[: len(data) // 2]
        znode, records = decode_node(RawNode(path, STAT._replace(dataLength=len(cut)), cut), roots=ROOTS)
        if znode.decode_status != "failed" or not any(isinstance(r, DecodeFailure) for r in records):
            decoded.append(path)
    assert decoded == []
