"""The test-grade writer reproduces real Storm bytes (so the schemas it shares are right)."""

from __future__ import annotations

import gzip

import pytest
import zstandard

from tests.fixtures import expected, folder
from zkstorm.decode.thrift import is_thrift_struct
from zkstorm.sandbox.encode import java_gzip, storm_zstd, thrift_bytes


def _inner(encoding: str, data: bytes) -> bytes | None:
    if encoding == "gzip+thrift-binary":
        return gzip.decompress(data)
    if encoding == "zstd+thrift-binary":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if encoding == "thrift-binary":
        return data
    return None


@pytest.mark.parametrize("name", ["storm2", "storm1", "encodings"])
def test_fixture_values_re_encode_to_the_fixture_bytes(name: str) -> None:
    base = folder("storm", name)
    checked = 0
    for path, entry in expected("storm", name)["znodes"].items():
        inner = _inner(entry["encoding"], (base / entry["file"]).read_bytes())
        if inner is None:
            continue
        record = entry["record_type"]
        if "written as i64" in str(entry.get("schema_note")):
            continue  # master's i64 time_secs: the 2.x schema writes i32 (the reader accepts both)
        assert thrift_bytes(record, entry["value"]) == inner, path
        checked += 1
    assert checked >= 15


def test_java_gzip_header_is_jdk16_style() -> None:
    data = java_gzip(b"\x00")
    assert data[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert gzip.decompress(data) == b"\x00"


def test_zstd_frame_is_streaming_without_content_size() -> None:
    frame = storm_zstd("KillOptions", {"wait_secs": 30})
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    assert zstandard.get_frame_parameters(frame).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert is_thrift_struct(zstandard.ZstdDecompressor().decompressobj().decompress(frame))
