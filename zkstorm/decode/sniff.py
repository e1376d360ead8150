"""Encoding detection for any znode payload, from its bytes alone.

The magic bytes are the writers' (docs/storm-layout.md §3, docs/kafka-layout.md §1). Order matters: compression and
Java serialization have unambiguous magics; Storm's one-byte ``0x07`` directory marker must be checked
before Thrift; Thrift is only claimed when a whole struct parses to the last byte, since many short
binary values (a 4-byte blob sequence number) start with a plausible type byte.
"""

from __future__ import annotations

import json
import re

import orjson

from .thrift import is_thrift_struct

EMPTY = "empty"
DIR_MARKER = "dir-marker"
GZIP = "gzip"
ZSTD = "zstd"
JAVA = "java-serialized"
THRIFT = "thrift"
JSON = "json"
TEXT = "text"
BINARY = "binary"
ENCODINGS = (EMPTY, DIR_MARKER, GZIP, ZSTD, JAVA, THRIFT, JSON, TEXT, BINARY)

_UTF8_BOM = b"\xef\xbb\xbf"


def detect_encoding(data: bytes | None) -> str:
    if not data:
        return EMPTY  # ZooKeeper returns a data-less node as null or b"": the same thing
    # Dispatched on the first byte, since every magic starts with a distinct one: this runs once per
    # walked znode, and a slice per magic cost more than the rest for the common encodings.
    first = data[0]
    if first == 0x1F:
        if data[1:2] == b"\x8b":
            return GZIP
    elif first in _JSON_FIRST_BYTES:
        try:
            _orjson_loads(data)
            return JSON  # the common case (every Kafka znode), settled without decoding the text twice
        except orjson.JSONDecodeError:
            pass
    elif first == 0x07:
        if len(data) == 1:
            return DIR_MARKER
    elif first == 0x28:
        if data[:4] == b"\x28\xb5\x2f\xfd":
            return ZSTD
    elif first == 0xAC and data[:4] == b"\xac\xed\x00\x05":
        return JAVA
    elif first == 0 and len(data) > 1:
        return BINARY  # not text (a NUL), not Thrift (a struct that stops at once, then more bytes)
    text = _as_text(data)
    if text is not None:
        stripped = text.lstrip()
        if stripped[:1] in ("{", "[", '"') and _is_json(stripped):
            return JSON
        return TEXT
    if is_thrift_struct(data):
        return THRIFT
    return BINARY


# C0 controls other than tab, CR and LF: a payload holding one is binary, not text. Matched on the
# bytes by the regex engine, since a per-character loop cost more than the rest of the sniff.
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_JSON_DECODER = json.JSONDecoder()
_JSON_FIRST_BYTES = frozenset(b'{["')
# orjson (~6x the stdlib's speed) accepts a subset of what the stdlib path below accepts (no trailing
# bytes, no NaN, no lone surrogates, 64-bit integers); anything it rejects is judged again by that path.
_orjson_loads = orjson.loads


def _as_text(data: bytes) -> str | None:
    """The payload as text if it is printable UTF-8 (a BOM, as Jackson allows, is skipped)."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    if _CONTROL.search(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_json(text: str) -> bool:
    try:
        _JSON_DECODER.raw_decode(text)  # Kafka's reader ignores trailing bytes; so do we
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than any real document
        return False
    return True
