"""TBinaryProtocol primitives: wire types, and a schemaless skimmer.

The skimmer walks a struct without knowing its schema. Sniffing uses it to tell raw Thrift from other
binary (a payload is Thrift only if a struct parses and ends exactly at the last byte), and the
schema-driven reader uses it to skip fields a newer Storm added.
"""

from __future__ import annotations

import struct
from typing import Any, cast

from zlib_ng import zlib_ng as _zlib_ng

from ..errors import DecodeError, FailureType

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
# wrong for Storm (docs/storm-layout.md §8): list keys become tuples, and struct keys become tuples of their field
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

    Each schema type is compiled once into a reader closure ``(buf, offset) -> (value, offset)``, with
    tight loops for the string-keyed maps that make up most of a heartbeat's bytes.
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
        self._readers: dict[object, Any] = {}

    def read(self, name: str, buf: bytes) -> dict[str, object]:
        """Decode one struct at the start of ``buf`` (trailing bytes are ignored, as TDeserializer does)."""
        if not buf:
            raise DecodeError("no bytes", failure_type=FailureType.THRIFT_TRUNCATED)
        buf = bytes(buf)
        try:
            value, _ = self._reader(("struct", name))(buf, 0)
        except (struct.error, IndexError):
            raise DecodeError(f"{name}: input ends inside a value", failure_type=FailureType.THRIFT_TRUNCATED) from None
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"{name}: a string is not UTF-8 ({exc.reason})", failure_type=FailureType.THRIFT_DECODE_ERROR
            ) from None
        except RecursionError:
            raise DecodeError(f"{name}: nesting too deep", failure_type=FailureType.THRIFT_DECODE_ERROR) from None
        return value  # type: ignore[no-any-return]

    def _reader(self, spec: object) -> Any:
        key = spec if isinstance(spec, str) else tuple(spec)  # type: ignore[arg-type]
        reader = self._readers.get(key)
        if reader is None:
            if isinstance(spec, tuple) and spec[0] == "struct":
                # Structs may be recursive in principle: register a trampoline before compiling.
                self._readers[key] = lambda buf, offset: self._readers[key](buf, offset)
            reader = self._compile(spec)
            self._readers[key] = reader
        return reader

    def _compile(self, spec: object) -> Any:
        if isinstance(spec, str):
            return _SCALAR_READERS[spec]
        kind = spec[0]  # type: ignore[index]
        if kind == "enum":
            names = self.enums[spec[1]]  # type: ignore[index]
            unpack_i32 = _I32.unpack_from

            def read_enum(buf: bytes, offset: int) -> tuple[object, int]:
                (code,) = unpack_i32(buf, offset)
                return names.get(code, code), offset + 4

            return read_enum
        if kind == "struct":
            return self._compile_struct(spec[1])  # type: ignore[index]
        if kind == "map":
            return self._compile_map(spec[1], spec[2])  # type: ignore[index]
        return self._compile_list(spec[1])  # type: ignore[index]

    def _compile_struct(self, name: str) -> Any:
        fields = {}
        for field_id, (field_name, field_spec) in self.structs[name].items():
            fields[field_id] = (field_name, wire_of(field_spec), self._reader(field_spec), field_spec)
        required = self.required.get(name, frozenset())
        int_readers = {I16: _read_i16, I32: _read_i32, I64: _read_i64}

        def read_struct(buf: bytes, offset: int) -> tuple[dict[str, object], int]:
            out: dict[str, object] = {}
            end = len(buf)
            while True:
                if offset >= end:
                    raise DecodeError(
                        f"{name}: input ends before the struct's STOP byte",
                        failure_type=FailureType.THRIFT_TRUNCATED,
                        offset=offset,
                    )
                ttype = buf[offset]
                if ttype == STOP:
                    offset += 1
                    break
                if offset + 3 > end:
                    raise DecodeError(
                        f"{name}: input ends inside a field header",
                        failure_type=FailureType.THRIFT_TRUNCATED,
                        offset=offset,
                    )
                if ttype not in FIELD_TYPES:
                    raise DecodeError(
                        f"{name}: unknown wire type {ttype} at offset {offset}",
                        failure_type=FailureType.THRIFT_DECODE_ERROR,
                        offset=offset,
                    )
                field = fields.get((buf[offset + 1] << 8 | buf[offset + 2]) - ((buf[offset + 1] & 0x80) << 9))
                offset += 3
                if field is None:
                    offset = _skip(buf, offset, ttype)  # a field a newer Storm added
                    continue
                field_name, expected, reader, field_spec = field
                if ttype != expected:
                    if ttype in _INTS and expected in _INTS:
                        value, offset = int_readers[ttype](buf, offset)
                        if isinstance(field_spec, tuple):  # an enum sent with another width
                            value = self.enums[field_spec[1]].get(value, value)
                        out[field_name] = value
                    else:
                        offset = _skip(buf, offset, ttype)  # Java's generated readers skip it too
                    continue
                out[field_name], offset = reader(buf, offset)
            if required and not required <= out.keys():
                missing = ", ".join(sorted(required - out.keys()))
                raise DecodeError(
                    f"{name}: required field(s) missing: {missing}", failure_type=FailureType.MISSING_REQUIRED_FIELDS
                )
            return out, offset

        return read_struct

    def _compile_map(self, key_spec: object, value_spec: object) -> Any:
        key_wire, value_wire = wire_of(key_spec), wire_of(value_spec)
        read_key, read_value = self._reader(key_spec), self._reader(value_spec)
        hashable = _hashable_for(key_spec, self.structs)
        fast_value = _FIXED.get(value_spec) if isinstance(value_spec, str) else None
        string_keys = key_spec == "string"
        # map<struct of strings, number> (a bolt's stats by GlobalStreamId): each key read in one loop
        # when its fields come as Storm writes them (every field, in id order, nothing else)
        string_struct = _string_struct_header(key_spec, self.structs) if fast_value is not None else None
        pair_struct = string_struct if string_struct is not None and len(string_struct[0]) == 2 else None

        def read_entry(buf: bytes, offset: int, out: dict[object, object]) -> int:
            """One entry read as the schema says: whatever shape the fast paths below do not take."""
            key, offset = read_key(buf, offset)
            value, offset = read_value(buf, offset)
            out[hashable(key) if hashable else key] = value
            return offset

        def read_pair_keyed(
            buf: bytes, offset: int, n: int, out: dict[object, object]
        ) -> tuple[dict[object, object], int]:
            """``n`` entries keyed by a struct of two strings (GlobalStreamId: component, stream), the
            most common key of a bolt's stats, each in straight-line code: the loop over the headers
            below cost a third more per entry. Any other shape goes to the schema's readers."""
            (first, second), stop = pair_struct  # type: ignore[misc]
            unpack, width = fast_value  # type: ignore[misc]
            end = len(buf)
            for _ in range(n):
                if buf[offset : offset + 3] == first:
                    (size,) = _UNPACK_I32(buf, offset + 3)
                    start = offset + 7
                    at = start + size
                    if size >= 0 and buf[at : at + 3] == second:
                        (size2,) = _UNPACK_I32(buf, at + 3)
                        start2 = at + 7
                        at2 = start2 + size2
                        if size2 >= 0 and buf[at2 : at2 + 1] == stop and at2 + 1 + width <= end:
                            try:
                                key = (buf[start:at].decode("utf-8"), buf[start2:at2].decode("utf-8"))
                            except UnicodeDecodeError:
                                pass  # the generic reader says where
                            else:
                                out[key] = unpack(buf, at2 + 1)[0]
                                offset = at2 + 1 + width
                                continue
                offset = read_entry(buf, offset, out)
            return out, offset

        def read_map(buf: bytes, offset: int) -> tuple[dict[object, object], int]:
            # a heartbeat holds a map per executor, metric and window: the common case is checked inline
            if offset + 6 <= len(buf):
                ktype, vtype, n = _MAP_HEAD(buf, offset)
                if n < 0 or 2 * n > len(buf) - offset - 6:
                    n = _length(buf, offset + 2, per_element=2)  # raises, saying why
            else:
                ktype, vtype = buf[offset], buf[offset + 1]
                n = _length(buf, offset + 2, per_element=2)
            offset += 6
            if not n:
                return {}, offset
            if ktype != key_wire:
                _check_element(key_wire, ktype, "map key", offset)
            if vtype != value_wire:
                _check_element(value_wire, vtype, "map value", offset)
            out: dict[object, object] = {}
            if string_keys and fast_value is not None and vtype == value_wire:
                # map<string, i64|double|i32>: the bulk of every stats table
                unpack, width = fast_value
                end = len(buf)
                for _ in range(n):
                    (size,) = _UNPACK_I32(buf, offset)
                    start = offset + 4
                    offset = start + size
                    if size < 0 or offset + width > end:
                        raise DecodeError(
                            "input ends inside a map entry", failure_type=FailureType.THRIFT_TRUNCATED, offset=start
                        )
                    out[buf[start:offset].decode("utf-8")] = unpack(buf, offset)[0]
                    offset += width
                return out, offset
            if pair_struct is not None and vtype == value_wire:
                return read_pair_keyed(buf, offset, n, out)
            if string_struct is not None and fast_value is not None and vtype == value_wire:
                headers, stop = string_struct
                unpack, width = fast_value
                for _ in range(n):
                    at = offset
                    key_fields: list[str] = []
                    for header in headers:
                        if buf[at : at + 3] != header:
                            break
                        (size,) = _UNPACK_I32(buf, at + 3)
                        start = at + 7
                        at = start + size
                        if size < 0 or at > len(buf):
                            break
                        try:
                            key_fields.append(buf[start:at].decode("utf-8"))
                        except UnicodeDecodeError:
                            break  # the generic reader says where
                    else:
                        if buf[at : at + 1] == stop and at + 1 + width <= len(buf):
                            out[tuple(key_fields)] = unpack(buf, at + 1)[0]
                            offset = at + 1 + width
                            continue
                    offset = read_entry(buf, offset, out)
                return out, offset
            if string_keys and vtype == value_wire:
                # map<string, map<…>> (a stats table's windows): each key read here, the value by its reader
                end = len(buf)
                for _ in range(n):
                    key: object = None
                    if offset + 4 <= end:
                        (size,) = _UNPACK_I32(buf, offset)
                        if 0 <= size <= end - offset - 4:
                            try:  # (not contextlib.suppress: this loop runs per window of every executor)
                                key = buf[offset + 4 : offset + 4 + size].decode("utf-8")
                            except UnicodeDecodeError:
                                key = None  # the generic reader says where
                    if key is None:
                        key, offset = read_key(buf, offset)
                    else:
                        offset += 4 + size
                    out[key], offset = read_value(buf, offset)
                return out, offset
            for _ in range(n):
                key, offset = read_key(buf, offset) if ktype == key_wire else _read_int_any(ktype, buf, offset)
                value, offset = read_value(buf, offset) if vtype == value_wire else _read_int_any(vtype, buf, offset)
                out[hashable(key) if hashable else key] = value
            return out, offset

        return read_map

    def _compile_list(self, element_spec: object) -> Any:
        element_wire = wire_of(element_spec)
        read_element = self._reader(element_spec)
        packed = _PACKED.get(element_spec) if isinstance(element_spec, str) else None

        def read_list(buf: bytes, offset: int) -> tuple[list[object], int]:
            etype = buf[offset]
            n = _length(buf, offset + 1, per_element=1)
            offset += 5
            if n:
                _check_element(element_wire, etype, "list", offset)
            if packed is not None and etype == element_wire:
                # list<i64> (every executor id of an assignment): one unpack instead of a call per element
                code, width = packed
                _need_typed(buf, offset, n * width)
                return list(struct.unpack_from(f">{n}{code}", buf, offset)), offset + n * width
            items = []
            for _ in range(n):
                item, offset = read_element(buf, offset) if etype == element_wire else _read_int_any(etype, buf, offset)
                items.append(item)
            return items, offset

        return read_list


_UNPACK_I32 = _I32.unpack_from
_MAP_HEAD = struct.Struct(">BBi").unpack_from  # key type, value type, count


def _check_element(expected: int, ttype: int, what: str, offset: int) -> None:
    if ttype != expected and not (ttype in _INTS and expected in _INTS):
        raise DecodeError(
            f"{what} has wire type {ttype} where the schema has {expected}",
            failure_type=FailureType.THRIFT_SCHEMA_MISMATCH,
            offset=offset,
        )


def _fixed_reader(unpacker: struct.Struct) -> Any:
    unpack, width = unpacker.unpack_from, unpacker.size

    def read(buf: bytes, offset: int) -> tuple[object, int]:
        return unpack(buf, offset)[0], offset + width

    return read


_read_i16 = _fixed_reader(_UNPACK[I16])
_read_i32 = _fixed_reader(_I32)
_read_i64 = _fixed_reader(_UNPACK[I64])


def _read_int_any(ttype: int, buf: bytes, offset: int) -> tuple[object, int]:
    return {I16: _read_i16, I32: _read_i32, I64: _read_i64}[ttype](buf, offset)


def _read_string(buf: bytes, offset: int) -> tuple[object, int]:
    n = _length(buf, offset)
    try:
        return buf[offset + 4 : offset + 4 + n].decode("utf-8"), offset + 4 + n
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"string at offset {offset} is not UTF-8", failure_type=FailureType.THRIFT_DECODE_ERROR, offset=offset
        ) from exc


def _read_binary(buf: bytes, offset: int) -> tuple[object, int]:
    n = _length(buf, offset)
    return bytes(buf[offset + 4 : offset + 4 + n]), offset + 4 + n


def _read_bool(buf: bytes, offset: int) -> tuple[object, int]:
    return buf[offset] != 0, offset + 1


_SCALAR_READERS = {
    "bool": _read_bool,
    "byte": _fixed_reader(_UNPACK[BYTE]),
    "double": _fixed_reader(_UNPACK[DOUBLE]),
    "i16": _read_i16,
    "i32": _read_i32,
    "i64": _read_i64,
    "string": _read_string,
    "binary": _read_binary,
}
_PACKED = {"i64": ("q", 8), "i32": ("i", 4), "i16": ("h", 2), "double": ("d", 8)}
_FIXED = {
    "i64": (_UNPACK[I64].unpack_from, 8),
    "double": (_UNPACK[DOUBLE].unpack_from, 8),
    "i32": (_I32.unpack_from, 4),
}


def _string_struct_header(spec: object, structs: dict[str, dict[int, tuple[str, object]]]) -> Any:
    """For a struct whose fields are all strings: the field headers (STRING, id) in id order and the STOP
    byte, as the bytes a writer puts before each value; None for any other type."""
    if not (isinstance(spec, tuple) and spec[0] == "struct"):
        return None
    fields = structs[spec[1]]
    if not fields or any(field_spec != "string" for _, field_spec in fields.values()):
        return None
    return tuple(struct.pack(">bh", STRING, field_id) for field_id in sorted(fields)), bytes([STOP])


def _hashable_for(spec: object, structs: dict[str, dict[int, tuple[str, object]]]) -> Any:
    """How a map key of this type becomes a dict key: lists as tuples, structs as the tuple of their
    field values in field-id order (so ``NodeInfo{node, port: [6700]}`` is ``("node", (6700,))``)."""
    if isinstance(spec, tuple) and spec[0] in ("list", "set"):
        return tuple
    if isinstance(spec, tuple) and spec[0] == "struct":
        names = [name for _, (name, _) in sorted(structs[spec[1]].items())]  # once per map type, not per key

        def struct_key(key: dict[str, object]) -> object:
            return tuple(tuple(v) if isinstance(v := key.get(n), list) else v for n in names)

        return struct_key
    return None


def _need_typed(buf: bytes | memoryview, offset: int, n: int) -> None:
    if offset + n > len(buf):
        raise DecodeError(
            f"input ends at offset {len(buf)} inside a value that needs {n} bytes at {offset}",
            failure_type=FailureType.THRIFT_TRUNCATED,
            offset=offset,
        )


def _length(buf: bytes | memoryview, offset: int, per_element: int = 1) -> int:
    """The length at ``offset``, checked against the bytes left (the common case in one test)."""
    end = len(buf)
    if offset + 4 <= end:
        (n,) = _UNPACK_I32(buf, offset)
        if n >= 0 and n * per_element <= end - offset - 4:
            return n  # type: ignore[no-any-return]
    return _bad_length(buf, offset, per_element)


def _bad_length(buf: bytes | memoryview, offset: int, per_element: int) -> int:
    _need_typed(buf, offset, 4)
    (n,) = _I32.unpack_from(buf, offset)
    if n < 0:
        raise DecodeError(
            f"negative length {n} at offset {offset}", failure_type=FailureType.THRIFT_DECODE_ERROR, offset=offset
        )
    left = len(buf) - offset - 4
    # Either the input was cut short or the length is garbage; a length beyond any possible
    # ZooKeeper payload (jute.maxbuffer is ~1 MB by default) can only be garbage.
    kind = FailureType.THRIFT_DECODE_ERROR if n > 64 * 1024 * 1024 else FailureType.THRIFT_TRUNCATED
    raise DecodeError(f"length {n} at offset {offset} exceeds the {left} bytes left", failure_type=kind, offset=offset)


def _skip(buf: bytes | memoryview, offset: int, ttype: int) -> int:
    try:
        return skip_value(buf, offset, ttype)
    except DecodeError as exc:
        raise DecodeError(
            exc.reason,
            failure_type=FailureType.THRIFT_TRUNCATED if "truncated" in exc.reason else FailureType.THRIFT_DECODE_ERROR,
            offset=exc.offset,
        ) from None


# --- the compression envelope -------------------------------------------------------------------------

MAX_DECOMPRESSED = 100 * 1024 * 1024  # Storm's own cap (storm.compression.*.max.decompressed.bytes)
_THRIFT_FIRST_BYTES = frozenset({STOP, *FIELD_TYPES})


_ZLIB_NG_ERROR = cast(type[Exception], _zlib_ng.error)  # its stub declares an instance, not the class


def unwrap(data: bytes, limit: int = MAX_DECOMPRESSED) -> tuple[bytes, str]:
    """Strip Storm's serialization delegate envelope: returns (Thrift bytes, envelope name).

    Sniffed from the bytes (docs/storm-layout.md §3), since a rolling upgrade leaves gzip, zstd and raw Thrift
    side by side. Decompression is capped at ``limit`` bytes, as Storm caps it.
    """
    if data[:2] == b"\x1f\x8b":
        return _gunzip(data, limit), "gzip"
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return _unzstd(data, limit), "zstd"
    if data and data[0] in _THRIFT_FIRST_BYTES:
        return data, "raw"
    if data[:4] == b"\xac\xed\x00\x05":
        raise DecodeError("Java serialization where Thrift is expected", failure_type=FailureType.UNKNOWN_ENCODING)
    raise DecodeError(f"not gzip, zstd or Thrift (starts {data[:4].hex()})", failure_type=FailureType.UNKNOWN_ENCODING)


def _gunzip(data: bytes, limit: int) -> bytes:
    # zlib-ng inflates a small payload in a third of zlib's time (most of it is setting up the inflater,
    # once per znode); a damaged one is inflated again by zlib, whose message the failure keeps
    inflater: Any = _zlib_ng.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, limit + 1)
    except _ZLIB_NG_ERROR:
        import zlib

        inflater = zlib.decompressobj(wbits=31)
        try:
            out = inflater.decompress(data, limit + 1)
        except zlib.error as exc:
            raise DecodeError(f"gzip: {exc}", failure_type=FailureType.DECOMPRESSION_ERROR) from None
    if len(out) > limit:
        raise DecodeError(
            f"gzip inflates past the {limit}-byte limit", failure_type=FailureType.DECOMPRESSED_SIZE_LIMIT
        )
    if not inflater.eof:
        raise DecodeError("gzip stream is truncated", failure_type=FailureType.DECOMPRESSION_ERROR)
    if not out:
        raise DecodeError("gzip holds zero bytes", failure_type=FailureType.EMPTY_AFTER_DECOMPRESSION)
    return out


def _unzstd(data: bytes, limit: int) -> bytes:
    import zstandard

    # decompressobj has no output cap, so feed it small slices of input: a zstd block inflates to at most
    # 128 KiB and a slice of 512 bytes holds a bounded number of blocks, so a tiny frame that inflates to
    # gigabytes is stopped near the limit instead of being allocated whole. Storm's frames carry no
    # content size; .eof tells a whole frame from a truncated one (returned partially, without error).
    inflater = zstandard.ZstdDecompressor().decompressobj()
    parts: list[bytes] = []
    total = 0
    try:
        for start in range(0, len(data), 512):
            chunk = inflater.decompress(data[start : start + 512])
            total += len(chunk)
            if total > limit:
                raise DecodeError(
                    f"zstd inflates past the {limit}-byte limit", failure_type=FailureType.DECOMPRESSED_SIZE_LIMIT
                )
            parts.append(chunk)
            if inflater.eof:
                break
    except zstandard.ZstdError as exc:
        raise DecodeError(f"zstd: {exc}", failure_type=FailureType.DECOMPRESSION_ERROR) from None
    if not inflater.eof:
        raise DecodeError("zstd frame is truncated", failure_type=FailureType.DECOMPRESSION_ERROR)
    if not total:
        raise DecodeError("zstd holds zero bytes", failure_type=FailureType.EMPTY_AFTER_DECOMPRESSION)
    return b"".join(parts)
