"""Encoding detection, checked against every fixture znode's documented encoding."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures import expected, folder, manifest
from zkstorm.decode import sniff
from zkstorm.decode.sniff import ENCODINGS, _orjson_loads, detect_encoding
from zkstorm.decode.thrift import is_thrift_struct

STORM_NAMES = {
    "gzip+thrift-binary": "gzip",
    "zstd+thrift-binary": "zstd",
    "thrift-binary": "thrift",
    "java-serialization": "java-serialized",
    "utf8": "text",
    "int32-be": "binary",
    "int64-be": "binary",
    "storm-dir-marker": "dir-marker",
}


@pytest.mark.parametrize("name", ["storm2", "storm1", "encodings", "legacy09"])
def test_every_storm_fixture_znode(name: str) -> None:
    base = folder("storm", name)
    znodes = expected("storm", name)["znodes"]
    assert znodes
    for path, entry in znodes.items():
        data = (base / entry["file"]).read_bytes()
        assert detect_encoding(data) == STORM_NAMES[entry["encoding"]], path


@pytest.mark.parametrize("name", ["cluster-2x-chroot", "cluster-08-root", "migrated-kraft"])
def test_every_kafka_fixture_znode_is_json_text_or_empty(name: str) -> None:
    seen = set()
    for node in manifest("kafka", name):
        encoding = detect_encoding(node.data)
        seen.add(encoding)
        if encoding == "json":
            json.loads(node.data.decode("utf-8"))  # type: ignore[union-attr]
        else:
            assert encoding in ("text", "empty"), node.path
    assert {"json", "empty"} <= seen


def test_empty_and_none_are_the_same() -> None:
    assert detect_encoding(None) == detect_encoding(b"") == "empty"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (b"\x07", "dir-marker"),
        (b"\x00", "thrift"),  # a raw-Thrift empty struct (LogConfig with no loggers)
        (b"\x00\x00\x00\x07", "binary"),  # blob max sequence number
        (b'\xef\xbb\xbf{"version":1}', "json"),  # Jackson skips a BOM; so do we
        (b'{"version":1} trailing', "json"),  # and ignores trailing bytes
        (b"27", "text"),
        (b"nimbus-a:6627:6637", "text"),
        (b'{"truncated":', "text"),
        (b'{"rate":NaN}', "json"),  # orjson refuses NaN and huge integers; the stdlib path accepts both
        (b'{"id":123456789012345678901234567890}', "json"),
        (b"[" * 5000 + b"]" * 5000, "text"),  # nesting deeper than the stdlib recurses: an answer, no crash
        (b'"\\ud800"', "json"),  # a lone surrogate escape, which Jackson and the stdlib accept
        (gzip.compress(b"", mtime=0), "gzip"),
        (b"\x28\xb5\x2f\xfd\x00", "zstd"),
        (b"\xff\xfe\x00", "binary"),
    ],
)
def test_edge_cases(data: bytes, encoding: str) -> None:
    assert detect_encoding(data) == encoding


@given(st.binary(max_size=300))
def test_any_bytes_get_one_known_encoding(data: bytes) -> None:
    assert detect_encoding(data) in ENCODINGS


def _in_plain_order(data: bytes) -> str:
    """The documented order of checks (module docstring), one after the other: what the first-byte
    dispatch of ``detect_encoding`` must always agree with."""
    if not data:
        return "empty"
    if data == b"\x07":
        return "dir-marker"
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return "zstd"
    if data[:4] == b"\xac\xed\x00\x05":
        return "java-serialized"
    text = sniff._as_text(data)
    if text is not None:
        stripped = text.lstrip()
        return "json" if stripped[:1] in ("{", "[", '"') and sniff._is_json(stripped) else "text"
    return "thrift" if is_thrift_struct(data) else "binary"


_PREFIXES = [b"", b"\x00", b"\x07", b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"\xac\xed\x00\x05", b"{", b"[", b'"', b"\x0b"]


@given(st.sampled_from(_PREFIXES), st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_the_first_byte_dispatch_agrees_with_the_plain_order(prefix: bytes, rest: bytes) -> None:
    data = prefix + rest
    assert detect_encoding(data) == _in_plain_order(data)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(JSON_VALUES)
def test_every_json_document_is_json(value: object) -> None:
    assert detect_encoding(json.dumps(value).encode()) in ("json", "text")  # bare scalars are text
    assert detect_encoding(json.dumps([value]).encode()) == "json"


@given(st.sampled_from([b"{", b"[", b'"']), st.binary(max_size=60))
def test_the_fast_json_check_never_accepts_what_the_stdlib_refuses(start: bytes, rest: bytes) -> None:
    data = start + rest
    try:
        _orjson_loads(data)
    except ValueError:  # orjson.JSONDecodeError
        return
    json.JSONDecoder().raw_decode(data.decode("utf-8"))
