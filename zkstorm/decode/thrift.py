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


# --- the schema-driven reader -------------------------------------------------------------------------
#
# Values come out as plain Python: structs as dicts by field name, enums by name, binary as bytes, lists
# and sets as lists, maps as dicts. Map keys must be hashable, which is exactly what generated code gets
# wrong for Storm (storm.md §8.1): list keys become tuples, and struct keys become tuples of their field
# values in field-id order (ExecutorInfo → (start, end), NodeInfo → (node, (port,)), GlobalStreamId →
# (component, stream)).

_WIRE_OF = {
    "bool": BOOL,
    "byte": BYTE,
    "double": DOUBLE,
    "i16": I16,
    "i32": I32,
    "i64": I64,
    "string": STRING,
    "binary": STRING,
    "struct": STRUCT,
    "enum": I32,
    "map": MAP,
    "list": LIST,
    "set": SET,
}
_UNPACK = {
    BYTE: struct.Struct(">b"),
    DOUBLE: struct.Struct(">d"),
    I16: struct.Struct(">h"),
    I32: _I32,
    I64: struct.Struct(">q"),
}
_INTS = (I16, I32, I64)


def wire_of(spec: object) -> int:
    return _WIRE_OF[spec if isinstance(spec, str) else spec[0]]  # type: ignore[index]


class ThriftReader:
    """Reads TBinaryProtocol structs against schemas of the form in ``storm_schema``.

    Follows what Storm's Java readers do where that is safe (skip unknown field ids; skip a field whose
    wire type differs from the schema) and is stricter where Java silently misreads: container element
    types are checked against the schema before any element is read, required fields are validated,
    and every length is checked against the bytes left. Integer fields accept any integer width (Storm
    master writes heartbeat ``time_secs`` as i64 where 2.x wrote i32).
    """

    def __init__(
        self,
        structs: dict[str, dict[int, tuple[str, object]]],
        enums: dict[str, dict[int, str]],
        required: dict[str, frozenset[str]],
    ) -> None:
        self.structs = structs
        self.enums = enums
        self.required = required

    def read(self, name: str, buf: bytes) -> dict[str, object]:
        """Decode one struct that must span ``buf`` (trailing bytes are ignored, as TDeserializer does)."""
        if not buf:
            raise DecodeError("no bytes", failure_type="thrift-truncated")
        value, _ = self.read_struct(name, memoryview(buf), 0, 0)
        return value

    def read_struct(self, name: str, buf: memoryview, offset: int, depth: int) -> tuple[dict[str, object], int]:
        if depth > _MAX_DEPTH:
            raise DecodeError("nesting too deep", failure_type="thrift-decode-error", offset=offset)
        fields = self.structs[name]
        out: dict[str, object] = {}
        end = len(buf)
        while True:
            if offset >= end:
                raise DecodeError(
                    f"{name}: input ends before the struct's STOP byte", failure_type="thrift-truncated", offset=offset
                )
            ttype = buf[offset]
            if ttype == STOP:
                offset += 1
                break
            if offset + 3 > end:
                raise DecodeError(
                    f"{name}: input ends inside a field header", failure_type="thrift-truncated", offset=offset
                )
            if ttype not in FIELD_TYPES:
                raise DecodeError(
                    f"{name}: unknown wire type {ttype} at offset {offset}",
                    failure_type="thrift-decode-error",
                    offset=offset,
                )
            field_id = (buf[offset + 1] << 8 | buf[offset + 2]) - ((buf[offset + 1] & 0x80) << 9)
            offset += 3
            field = fields.get(field_id)
            if field is None:
                offset = _skip(buf, offset, ttype)  # a field a newer Storm added
                continue
            field_name, spec = field
            expected = wire_of(spec)
            if ttype != expected and not (ttype in _INTS and expected in _INTS):
                offset = _skip(buf, offset, ttype)  # Java's generated readers skip it too
                continue
            out[field_name], offset = self._value(spec, ttype, buf, offset, depth)
        missing = self.required.get(name, frozenset()) - out.keys()
        if missing:
            raise DecodeError(
                f"{name}: required field(s) missing: {', '.join(sorted(missing))}",
                failure_type="missing-required-fields",
            )
        return out, offset

    def _value(self, spec: object, ttype: int, buf: memoryview, offset: int, depth: int) -> tuple[object, int]:
        if ttype == STRING:
            n = _length(buf, offset)
            raw = bytes(buf[offset + 4 : offset + 4 + n])
            if spec == "binary":
                return raw, offset + 4 + n
            try:
                return raw.decode("utf-8"), offset + 4 + n
            except UnicodeDecodeError as exc:
                raise DecodeError(
                    f"string at offset {offset} is not UTF-8", failure_type="thrift-decode-error", offset=offset
                ) from exc
        unpack = _UNPACK.get(ttype)
        if unpack is not None:
            _need_typed(buf, offset, unpack.size)
            (number,) = unpack.unpack_from(buf, offset)
            offset += unpack.size
            if isinstance(spec, tuple) and spec[0] == "enum":
                return self.enums[spec[1]].get(number, number), offset
            return number, offset
        if ttype == BOOL:
            _need_typed(buf, offset, 1)
            return buf[offset] != 0, offset + 1
        assert isinstance(spec, tuple)
        kind = spec[0]
        if kind == "struct":
            return self.read_struct(spec[1], buf, offset, depth + 1)
        if kind == "map":
            _need_typed(buf, offset, 6)
            ktype, vtype = buf[offset], buf[offset + 1]
            n = _length(buf, offset + 2, per_element=2)
            offset += 6
            if n:
                self._check_element(spec[1], ktype, "map key", offset)
                self._check_element(spec[2], vtype, "map value", offset)
            out: dict[object, object] = {}
            for _ in range(n):
                key, offset = self._value(spec[1], ktype, buf, offset, depth + 1)
                value, offset = self._value(spec[2], vtype, buf, offset, depth + 1)
                out[_hashable(key, spec[1], self.structs)] = value
            return out, offset
        # list or set
        _need_typed(buf, offset, 5)
        etype = buf[offset]
        n = _length(buf, offset + 1, per_element=1)
        offset += 5
        if n:
            self._check_element(spec[1], etype, kind, offset)
        items = []
        for _ in range(n):
            item, offset = self._value(spec[1], etype, buf, offset, depth + 1)
            items.append(item)
        return items, offset

    @staticmethod
    def _check_element(spec: object, ttype: int, what: str, offset: int) -> None:
        expected = wire_of(spec)
        if ttype != expected and not (ttype in _INTS and expected in _INTS):
            raise DecodeError(
                f"{what} has wire type {ttype} where the schema has {expected}",
                failure_type="thrift-schema-mismatch",
                offset=offset,
            )


def _hashable(key: object, spec: object, structs: dict[str, dict[int, tuple[str, object]]]) -> object:
    if isinstance(key, list):
        return tuple(key)
    if isinstance(key, dict) and isinstance(spec, tuple) and spec[0] == "struct":
        names = [name for _, (name, _) in sorted(structs[spec[1]].items())]
        return tuple(tuple(v) if isinstance(v := key.get(n), list) else v for n in names)
    return key


def _need_typed(buf: memoryview, offset: int, n: int) -> None:
    if offset + n > len(buf):
        raise DecodeError(
            f"input ends at offset {len(buf)} inside a value that needs {n} bytes at {offset}",
            failure_type="thrift-truncated",
            offset=offset,
        )


def _length(buf: memoryview, offset: int, per_element: int = 1) -> int:
    _need_typed(buf, offset, 4)
    (n,) = _I32.unpack_from(buf, offset)
    if n < 0:
        raise DecodeError(f"negative length {n} at offset {offset}", failure_type="thrift-decode-error", offset=offset)
    left = len(buf) - offset - 4
    if n * per_element > left:
        # Either the input was cut short or the length is garbage; a length beyond any possible
        # ZooKeeper payload (jute.maxbuffer is ~1 MB by default) can only be garbage.
        kind = "thrift-decode-error" if n > 64 * 1024 * 1024 else "thrift-truncated"
        raise DecodeError(
            f"length {n} at offset {offset} exceeds the {left} bytes left", failure_type=kind, offset=offset
        )
    return n


def _skip(buf: memoryview, offset: int, ttype: int) -> int:
    try:
        return skip_value(buf, offset, ttype)
    except DecodeError as exc:
        raise DecodeError(
            exc.reason,
            failure_type="thrift-truncated" if "truncated" in exc.reason else "thrift-decode-error",
            offset=exc.offset,
        ) from None


# --- the compression envelope -------------------------------------------------------------------------

MAX_DECOMPRESSED = 100 * 1024 * 1024  # Storm's own cap (storm.compression.*.max.decompressed.bytes)
_THRIFT_FIRST_BYTES = frozenset({STOP, *FIELD_TYPES})


def unwrap(data: bytes, limit: int = MAX_DECOMPRESSED) -> tuple[bytes, str]:
    """Strip Storm's serialization delegate envelope: returns (Thrift bytes, envelope name).

    Sniffed from the bytes (storm.md §3.3), since a rolling upgrade leaves gzip, zstd and raw Thrift
    side by side. Decompression is capped at ``limit`` bytes, as Storm caps it.
    """
    if data[:2] == b"\x1f\x8b":
        return _gunzip(data, limit), "gzip"
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return _unzstd(data, limit), "zstd"
    if data and data[0] in _THRIFT_FIRST_BYTES:
        return data, "raw"
    if data[:4] == b"\xac\xed\x00\x05":
        raise DecodeError("Java serialization where Thrift is expected", failure_type="unknown-encoding")
    raise DecodeError(f"not gzip, zstd or Thrift (starts {data[:4].hex()})", failure_type="unknown-encoding")


def _gunzip(data: bytes, limit: int) -> bytes:
    import zlib

    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise DecodeError(f"gzip: {exc}", failure_type="decompression-error") from None
    if len(out) > limit:
        raise DecodeError(f"gzip inflates past the {limit}-byte limit", failure_type="decompressed-size-limit")
    if not inflater.eof:
        raise DecodeError("gzip stream is truncated", failure_type="decompression-error")
    if not out:
        raise DecodeError("gzip holds zero bytes", failure_type="empty-after-decompression")
    return out


def _unzstd(data: bytes, limit: int) -> bytes:
    import io

    import zstandard

    dctx = zstandard.ZstdDecompressor()
    try:
        # read_to_iter yields bounded chunks, so a small frame that inflates to gigabytes is stopped
        # at the limit instead of being allocated whole (decompressobj has no output cap).
        total = 0
        for chunk in dctx.read_to_iter(io.BytesIO(data), read_size=65536, write_size=1 << 20):
            total += len(chunk)
            if total > limit:
                raise DecodeError(f"zstd inflates past the {limit}-byte limit", failure_type="decompressed-size-limit")
        # Storm's frames carry no content size; decompressobj reads them, and .eof tells a whole frame
        # from a truncated one (which it would otherwise return partially, without error).
        inflater = dctx.decompressobj()
        out = inflater.decompress(data)
    except zstandard.ZstdError as exc:
        raise DecodeError(f"zstd: {exc}", failure_type="decompression-error") from None
    if not inflater.eof:
        raise DecodeError("zstd frame is truncated", failure_type="decompression-error")
    if not out:
        raise DecodeError("zstd holds zero bytes", failure_type="empty-after-decompression")
    return out
