"""TBinaryProtocol primitives: wire types, and a schemaless skimmer.

The skimmer walks a struct without knowing its schema. Sniffing uses it to tell raw Thrift from other
binary (a payload is Thrift only if a struct parses and ends exactly at the last byte), and the
schema-driven reader uses it to skip fields a newer Storm added.
"""

from __future__ import annotations

import struct

from ..errors import DecodeError

STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = (
    0,
    2,
    3,
    4,
    6,
    8,
    10,
    11,
    12,
    13,
    14,
    15,
)
FIELD_TYPES = frozenset({BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST})
_FIXED_WIDTH = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8}
_I32 = struct.Struct(">i")
_MAX_DEPTH = 64


def _need(buf: bytes | memoryview, offset: int, n: int) -> None:
    if n < 0 or offset + n > len(buf):
        raise DecodeError(f"truncated: need {n} bytes at offset {offset}, have {len(buf) - offset}", offset=offset)


def _count(buf: bytes | memoryview, offset: int, min_element: int) -> int:
    _need(buf, offset, 4)
    (n,) = _I32.unpack_from(buf, offset)
    # A length can never promise more elements than the bytes left could hold: this rejects a corrupt
    # "1.7 GB string" at once instead of attempting the allocation.
    if n < 0 or n * min_element > len(buf) - offset - 4:
        raise DecodeError(f"bad length {n} at offset {offset}", offset=offset)
    return n


def skip_value(buf: bytes | memoryview, offset: int, ttype: int, depth: int = 0) -> int:
    """Return the offset just past one value of wire type ``ttype``."""
    if depth > _MAX_DEPTH:
        raise DecodeError("nesting too deep", offset=offset)
    width = _FIXED_WIDTH.get(ttype)
    if width is not None:
        _need(buf, offset, width)
        return offset + width
    if ttype == STRING:
        n = _count(buf, offset, 1)
        return offset + 4 + n
    if ttype == STRUCT:
        return skip_struct(buf, offset, depth + 1)
    if ttype == MAP:
        _need(buf, offset, 2)
        ktype, vtype = buf[offset], buf[offset + 1]
        n = _count(buf, offset + 2, 2)  # a key and a value take at least a byte each
        offset += 6
        if n and (ktype not in FIELD_TYPES or vtype not in FIELD_TYPES):
            raise DecodeError(f"bad map element types {ktype}/{vtype}", offset=offset)
        for _ in range(n):
            offset = skip_value(buf, offset, ktype, depth + 1)
            offset = skip_value(buf, offset, vtype, depth + 1)
        return offset
    if ttype in (SET, LIST):
        _need(buf, offset, 1)
        etype = buf[offset]
        n = _count(buf, offset + 1, 1)
        offset += 5
        if n and etype not in FIELD_TYPES:
            raise DecodeError(f"bad element type {etype}", offset=offset)
        for _ in range(n):
            offset = skip_value(buf, offset, etype, depth + 1)
        return offset
    raise DecodeError(f"unknown wire type {ttype}", offset=offset)


def skip_struct(buf: bytes | memoryview, offset: int, depth: int = 0) -> int:
    """Return the offset just past the struct starting at ``offset`` (after its STOP byte)."""
    while True:
        _need(buf, offset, 1)
        ttype = buf[offset]
        if ttype == STOP:
            return offset + 1
        if ttype not in FIELD_TYPES:
            raise DecodeError(f"unknown field type {ttype}", offset=offset)
        _need(buf, offset, 3)
        offset = skip_value(buf, offset + 3, ttype, depth)


def is_thrift_struct(buf: bytes | memoryview) -> bool:
    """True when ``buf`` is exactly one TBinaryProtocol struct."""
    try:
        return skip_struct(buf, 0) == len(buf)
    except DecodeError:
        return False
