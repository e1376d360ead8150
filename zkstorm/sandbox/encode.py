"""Test-grade writers: Storm records as TBinaryProtocol (optionally gzip/zstd), Kafka records as JSON.

Used by the sandbox to seed realistic clusters and by the tests to build payloads. Values are given in
the same JSON shapes as the fixtures' ``expected.json``: structs as dicts by field name, enums by name,
binary as hex, executor keys ``"start-end"``, NodeInfo keys ``"node:port"``, GlobalStreamId keys
``"component:stream"``. Fields are written in field-id order and map entries in the given order, as
Storm's generated Java code does, so a value taken from a fixture re-encodes to the fixture's bytes.
"""

from __future__ import annotations

import gzip
import json
import struct
from typing import Any

from ..decode import thrift as t
from ..decode.storm_schema import ENUMS, STRUCTS, TypeSpec

_WIRE = {
    "bool": t.BOOL,
    "byte": t.BYTE,
    "double": t.DOUBLE,
    "i16": t.I16,
    "i32": t.I32,
    "i64": t.I64,
    "string": t.STRING,
    "binary": t.STRING,
}
_PACK = {"byte": ">b", "double": ">d", "i16": ">h", "i32": ">i", "i64": ">q"}


def wire_type(spec: TypeSpec) -> int:
    if isinstance(spec, str):
        return _WIRE[spec]
    return {"struct": t.STRUCT, "enum": t.I32, "map": t.MAP, "list": t.LIST, "set": t.SET}[spec[0]]


def _key_value(spec: TypeSpec, key: Any) -> Any:
    """Turn a JSON object key back into the value it stands for."""
    if not isinstance(key, str):
        return key
    if spec in ("i32", "i64", "i16", "byte"):
        return int(key)
    if isinstance(spec, tuple) and spec[0] == "list":
        start, _, end = key[1:].partition("-")  # "-1--1" → (-1, -1)
        return [int(key[0] + start), int(end)]
    if isinstance(spec, tuple) and spec[0] == "struct":
        name = spec[1]
        if name == "ExecutorInfo":
            start, _, end = key[1:].partition("-")
            return {"task_start": int(key[0] + start), "task_end": int(end)}
        if name == "NodeInfo":
            node, _, port = key.rpartition(":")
            return {"node": node, "port": [int(port)]}
        if name == "GlobalStreamId":
            component, _, stream = key.partition(":")
            return {"componentId": component, "streamId": stream}
    return key


def _write(out: bytearray, spec: TypeSpec, value: Any) -> None:
    if isinstance(spec, str):
        if spec == "bool":
            out.append(1 if value else 0)
        elif spec == "string":
            raw = value.encode("utf-8")
            out += struct.pack(">i", len(raw)) + raw
        elif spec == "binary":
            raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
            out += struct.pack(">i", len(raw)) + raw
        else:
            out += struct.pack(_PACK[spec], value)
        return
    kind = spec[0]
    if kind == "enum":
        codes = {name: code for code, name in ENUMS[spec[1]].items()}
        out += struct.pack(">i", codes[value] if isinstance(value, str) else value)
    elif kind == "struct":
        write_struct(out, spec[1], value)
    elif kind == "map":
        items = value.items() if isinstance(value, dict) else value
        items = list(items)
        out += bytes([wire_type(spec[1]), wire_type(spec[2])]) + struct.pack(">i", len(items))
        for key, item in items:
            _write(out, spec[1], _key_value(spec[1], key))
            _write(out, spec[2], item)
    else:  # list, set
        out += bytes([wire_type(spec[1])]) + struct.pack(">i", len(value))
        for item in value:
            _write(out, spec[1], item)


def write_struct(out: bytearray, name: str, value: dict[str, Any]) -> None:
    for field_id, (field_name, spec) in sorted(STRUCTS[name].items()):
        if field_name in value and value[field_name] is not None:
            out += bytes([wire_type(spec)]) + struct.pack(">h", field_id)
            _write(out, spec, value[field_name])
    out.append(t.STOP)


def thrift_bytes(name: str, value: dict[str, Any]) -> bytes:
    out = bytearray()
    write_struct(out, name, value)
    return bytes(out)


def java_gzip(data: bytes) -> bytes:
    """gzip as JDK 16+ ``GZIPOutputStream`` writes it: MTIME 0, XFL 0, OS byte 0xff."""
    body = gzip.compress(data, compresslevel=6, mtime=0)
    return body[:8] + b"\x00\xff" + body[10:]


def storm_gzip(name: str, value: dict[str, Any]) -> bytes:
    """A record as Storm 1.x/2.x's default GzipThriftSerializationDelegate writes it."""
    return java_gzip(thrift_bytes(name, value))


def storm_zstd(name: str, value: dict[str, Any]) -> bytes:
    """A record as master's ZstdBridge delegate writes it: one streaming frame, no content size."""
    import io

    import zstandard

    buffer = io.BytesIO()
    with zstandard.ZstdCompressor(level=3, write_content_size=False).stream_writer(buffer, closefd=False) as writer:
        writer.write(thrift_bytes(name, value))
    return buffer.getvalue()


def kafka_json(value: Any) -> bytes:
    """Compact JSON as Jackson writes it for Kafka 2.x/3.x."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
