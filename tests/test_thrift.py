"""The schema-driven Thrift reader and the compression envelope, against real Storm bytes."""

from __future__ import annotations

import contextlib
import gzip
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures import FIXTURES, expected, folder
from zkstorm.decode.storm_schema import ENUMS, REQUIRED, STRUCTS
from zkstorm.decode.thrift import ThriftReader, unwrap
from zkstorm.errors import DecodeError, FailureType
from zkstorm.sandbox.encode import java_gzip, storm_zstd, thrift_bytes

READER = ThriftReader(STRUCTS, ENUMS, REQUIRED)


def as_fixture_json(spec: Any, value: Any) -> Any:
    """Our decoded value in the fixtures' JSON conventions (expected.json ``_conventions``)."""
    if isinstance(spec, str):
        return value.hex() if spec == "binary" else value
    kind = spec[0]
    if kind == "enum":
        return value
    if kind == "struct":
        fields = {name: s for name, s in STRUCTS[spec[1]].values()}
        return {k: as_fixture_json(fields[k], v) for k, v in value.items()}
    if kind == "list":
        return [as_fixture_json(spec[1], v) for v in value]
    if kind == "set":
        return sorted(as_fixture_json(spec[1], v) for v in value)
    return {_key(spec[1], k): as_fixture_json(spec[2], v) for k, v in value.items()}


def _key(spec: Any, key: Any) -> str:
    if isinstance(spec, tuple) and spec[0] == "list":
        return f"{key[0]}-{key[1]}"
    if isinstance(spec, tuple) and spec[0] == "struct":
        if spec[1] == "ExecutorInfo":
            return f"{key[0]}-{key[1]}"
        if spec[1] == "NodeInfo":
            return f"{key[0]}:{key[1][0]}"
        return f"{key[0]}:{key[1]}"
    return key


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a))
    return bool(a == b)


THRIFT_ENCODINGS = {"gzip+thrift-binary": "gzip", "zstd+thrift-binary": "zstd", "thrift-binary": "raw"}


@pytest.mark.parametrize("name", ["storm2", "storm1", "encodings"])
def test_every_fixture_thrift_znode_decodes_to_its_expected_value(name: str) -> None:
    base = folder("storm", name)
    count = 0
    for path, entry in expected("storm", name)["znodes"].items():
        if entry["encoding"] not in THRIFT_ENCODINGS:
            continue
        payload, envelope = unwrap((base / entry["file"]).read_bytes())
        assert envelope == THRIFT_ENCODINGS[entry["encoding"]], path
        value = READER.read(entry["record_type"], payload)
        got = as_fixture_json(("struct", entry["record_type"]), value)
        assert _close(got, entry["value"]), f"{path}\n{json.dumps(got)[:600]}\n{json.dumps(entry['value'])[:600]}"
        count += 1
    assert count >= 15


def _case(file: str) -> dict[str, Any]:
    cases = json.loads((FIXTURES / "storm" / "corrupt" / "cases.json").read_text())["cases"]
    return next(c for c in cases if c["file"] == f"corrupt/{file}")


@pytest.mark.parametrize(
    ("file", "record_type"),
    [
        ("wrong-struct-for-path.bin", "StormBase"),
        ("thrift-truncated-mid-map.bin", "ClusterWorkerHeartbeat"),
        ("random-1mb.bin", "StormBase"),
        ("gzip-empty-payload.bin", "LogConfig"),
        ("zstd-over-size-cap.bin", "StormBase"),
    ],
)
def test_corrupt_cases_fail_with_an_acceptable_failure_type(file: str, record_type: str) -> None:
    case = _case(file)
    data = (FIXTURES / "storm" / "corrupt" / file).read_bytes()
    with pytest.raises(DecodeError) as info:
        READER.read(record_type, unwrap(data)[0])
    assert info.value.failure_type in {FailureType.of(t) for t in case["acceptable_failure_types"]}, info.value.reason


def test_i64_time_secs_is_accepted_where_i32_is_declared() -> None:
    beat = {"storm_id": "t-1-1", "executor_stats": {}, "time_secs": 1751976000, "uptime_secs": 5}
    data = bytearray(thrift_bytes("ClusterWorkerHeartbeat", beat))
    # Rewrite field 3 as i64 the way Storm master writes it.
    i = data.index(bytes([8, 0, 3]))
    data[i : i + 7] = bytes([10, 0, 3]) + (1751976000).to_bytes(8, "big")
    assert READER.read("ClusterWorkerHeartbeat", bytes(data))["time_secs"] == 1751976000


def test_unknown_fields_are_skipped() -> None:
    data = thrift_bytes("KillOptions", {"wait_secs": 30})
    extra = (
        bytes([11, 0, 99])
        + (3).to_bytes(4, "big")
        + b"new"
        + bytes([15, 0, 98, 8])
        + (1).to_bytes(4, "big")
        + b"\0\0\0\1"
    )
    assert READER.read("KillOptions", extra + data) == {"wait_secs": 30}


def test_envelopes() -> None:
    raw = thrift_bytes("KillOptions", {"wait_secs": 30})
    assert unwrap(raw) == (raw, "raw")
    assert unwrap(java_gzip(raw)) == (raw, "gzip")
    assert unwrap(storm_zstd("KillOptions", {"wait_secs": 30})) == (raw, "zstd")
    with pytest.raises(DecodeError) as info:
        unwrap(gzip.compress(raw)[:-6])
    assert info.value.failure_type == "decompression_error"
    with pytest.raises(DecodeError) as info:
        unwrap(storm_zstd("ErrorInfo", {"error": "x" * 4000, "error_time_secs": 1})[:-4])
    assert info.value.failure_type == "decompression_error"
    with pytest.raises(DecodeError) as info:
        unwrap(java_gzip(b"\0" * 5000), limit=4096)
    assert info.value.failure_type == "decompressed_size_limit"


REAL_PAYLOADS = [
    (entry["record_type"], (folder("storm", name) / entry["file"]).read_bytes())
    for name in ("storm2", "storm1", "encodings")
    for entry in expected("storm", name)["znodes"].values()
    if entry["encoding"] in THRIFT_ENCODINGS
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(REAL_PAYLOADS), st.data())
def test_mutated_real_payloads_give_only_typed_errors(sample: tuple[str, bytes], data: st.DataObject) -> None:
    record_type, payload = sample
    inner = unwrap(payload)[0]
    target = bytearray(data.draw(st.sampled_from([payload, inner])))
    for _ in range(data.draw(st.integers(1, 4))):
        mutation = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        position = data.draw(st.integers(0, max(len(target) - 1, 0)))
        if mutation == "flip" and target:
            target[position] ^= data.draw(st.integers(1, 255))
        elif mutation == "cut":
            del target[position:]
        else:
            target[position:position] = data.draw(st.binary(min_size=1, max_size=8))
    with contextlib.suppress(DecodeError):
        READER.read(record_type, unwrap(bytes(target))[0])


def _stream_id(component: bytes, stream: bytes, *, reverse: bool = False, extra: bool = False) -> bytes:
    fields = [bytes([11, 0, 1]) + len(component).to_bytes(4, "big") + component]
    fields.append(bytes([11, 0, 2]) + len(stream).to_bytes(4, "big") + stream)
    if reverse:
        fields.reverse()
    if extra:
        fields.append(bytes([8, 0, 9]) + (7).to_bytes(4, "big"))
    return b"".join(fields) + b"\0"


def test_maps_keyed_by_a_struct_of_strings_read_every_shape_alike() -> None:
    """A bolt's stats by GlobalStreamId: keys written as Storm writes them take a fast loop, any other
    shape (fields out of order, an unknown field) the schema's reader; both give (component, stream)."""
    reader = ThriftReader({"S": {1: ("m", ("map", ("struct", "GlobalStreamId"), "i64"))}, **STRUCTS}, ENUMS, REQUIRED)
    keys = [
        _stream_id(b"split", b"default"),
        _stream_id(b"count", b"__ack_ack", reverse=True),
        _stream_id(b"sp\xc3\xa9", b"x", extra=True),
        _stream_id(b"", b"s"),
    ]
    entries = b"".join(key + (i * 10).to_bytes(8, "big") for i, key in enumerate(keys))
    data = bytes([13, 0, 1, 12, 10]) + len(keys).to_bytes(4, "big") + entries + b"\0"
    assert reader.read("S", data) == {
        "m": {("split", "default"): 0, ("count", "__ack_ack"): 10, ("spé", "x"): 20, ("", "s"): 30}
    }
    bad = data.replace(b"sp\xc3\xa9", b"sp\xff\xa9")
    with pytest.raises(DecodeError) as info:
        reader.read("S", bad)
    assert "not UTF-8" in info.value.reason
    with pytest.raises(DecodeError) as info:
        reader.read("S", data[:-12])
    assert info.value.failure_type is FailureType.THRIFT_TRUNCATED
