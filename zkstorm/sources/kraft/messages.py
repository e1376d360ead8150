"""Kafka's message schemas, read generically: the JSON files under ``schemas/`` (copied from apache/kafka, see
``schemas/README.md``) interpreted as Kafka's own generator interprets them, so no record has a parser of
its own.

A schema names its fields with the versions each exists in (``versions``), is nullable in
(``nullableVersions``) and is tagged in (``taggedVersions`` with a ``tag``); from ``flexibleVersions`` on a
message uses the compact forms (unsigned varint lengths plus one, zero for null) and ends every struct with
its tagged fields (a count, then tag, size and value each; a tag not known is skipped by its size). Types:
``int8``, ``int16``, ``uint16``, ``int32``, ``int64``, ``float64``, ``bool``, ``uuid``, ``string``, ``bytes``,
arrays ``[]T`` of any of these or of a struct given inline (``fields``) or in ``commonStructs``, and a struct
field. A message reads as a dict of its field names (``PartitionId``); a struct as a dict, a uuid as Kafka
prints it (``Uuid.toString``: base64url, no padding). A field outside its versions, or a tagged field not
sent, holds the schema's default.

Every length and count is checked against the bytes left before anything is read or allocated for it: a
lying length is a ``MessageError``, never a large allocation. ``Schemas.read`` compiles a reader per
(message, version) the first time, a closure per field, so a million ``PartitionRecord``s pay for the
schema once.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

Reader = Callable[[bytes, int, int], tuple[Any, int]]  # (buffer, position, end) -> (value, position)

_UNPACK = {
    "int8": (struct.Struct(">b").unpack_from, 1),
    "int16": (struct.Struct(">h").unpack_from, 2),
    "uint16": (struct.Struct(">H").unpack_from, 2),
    "int32": (struct.Struct(">i").unpack_from, 4),
    "int64": (struct.Struct(">q").unpack_from, 8),
    "float64": (struct.Struct(">d").unpack_from, 8),
}
_INT32 = struct.Struct(">i").unpack_from
_INT16 = struct.Struct(">h").unpack_from
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID as Kafka prints it


class MessageError(ValueError):
    """Bytes that are not the message their schema describes: truncated, a length past the end, a bad
    varint, an unknown version. ``kind`` is the failure type (``record_truncated``, ``unknown_version``…)."""

    def __init__(self, reason: str, kind: str = "record_decode_error") -> None:
        super().__init__(reason)
        self.kind = kind


_UUIDS: dict[bytes, str] = {}  # uuid bytes -> text: a log names the same topic ids and log dirs again and again
_UUIDS_HELD = 1 << 16  # emptied when it holds this many: the bytes of a few megabytes at most


def uuid_text(raw: bytes) -> str:
    """A 16-byte uuid as Kafka's ``Uuid.toString`` prints it: base64url without padding. Remembered:
    a million ``PartitionRecord``s name their topic's id and each replica's log dir, a few thousand ids
    in all, and the base64 of each was a fifth of their decoding (bench/bench_kraft.py's profile)."""
    found = _UUIDS.get(raw)
    if found is None:
        if len(_UUIDS) >= _UUIDS_HELD:
            _UUIDS.clear()
        found = _UUIDS[raw] = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    return found


def read_uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """An unsigned varint (``ByteUtils.readUnsignedVarint``): at most 5 bytes."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise MessageError("varint runs past the end", "record_truncated")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise MessageError("varint longer than 5 bytes", "record_decode_error")


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A zigzag varint (``ByteUtils.readVarint``)."""
    raw, pos = read_uvarint(buf, pos, end)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A zigzag varlong (``ByteUtils.readVarlong``): at most 10 bytes."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise MessageError("varlong runs past the end", "record_truncated")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise MessageError("varlong longer than 10 bytes", "record_decode_error")


# --- the schema files --------------------------------------------------------------------------------------


_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*')


def load_json_with_comments(text: str) -> Any:
    """Kafka's schema files are JSON with ``//`` comments (its generator reads them leniently)."""
    return json.loads(_COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text))


@dataclass(frozen=True, slots=True)
class Versions:
    """A version range as the schemas write it: ``0+``, ``1-3``, ``2``, ``none``."""

    low: int
    high: int  # inclusive; a large number for "N+"

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none" or text == "":
            return cls(1, 0)  # empty
        if text.endswith("+"):
            return cls(int(text[:-1]), 1 << 15)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high


@dataclass(slots=True)
class FieldSpec:
    name: str
    type: str
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: Any
    fields: list[FieldSpec] = field(default_factory=list)  # a struct's (inline, or from commonStructs)


@dataclass(slots=True)
class MessageSpec:
    """One schema file: a metadata record (``apiKey``) or a control record's data (``name``)."""

    name: str
    api_key: int | None
    valid: Versions
    flexible: Versions
    fields: list[FieldSpec]
    readers: dict[int, Reader] = field(default_factory=dict)

    @property
    def newest(self) -> int:
        return self.valid.high


def _default(spec: dict[str, Any], kind: str) -> Any:
    raw = spec.get("default")
    if raw == "null":
        return None
    if kind.startswith("[]"):
        return []
    if kind in ("int8", "int16", "uint16", "int32", "int64"):
        if raw is None:
            return 0
        text = str(raw)
        return int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text)
    if kind == "float64":
        return float(raw) if raw is not None else 0.0
    if kind == "bool":
        return str(raw).lower() == "true"
    if kind == "string":
        return "" if raw is None else str(raw)
    if kind == "uuid":
        return ZERO_UUID
    if kind == "bytes":
        return b""
    return None  # a struct: not sent in this version


def _field(spec: dict[str, Any], common: dict[str, list[dict[str, Any]]]) -> FieldSpec:
    kind = spec["type"]
    element = kind[2:] if kind.startswith("[]") else kind
    sub = spec.get("fields") or common.get(element) or []
    tag = spec.get("tag")
    return FieldSpec(
        name=spec["name"],
        type=kind,
        versions=Versions.parse(spec.get("versions")),
        nullable=Versions.parse(spec.get("nullableVersions")),
        tagged=Versions.parse(spec.get("taggedVersions")),
        tag=int(tag) if tag is not None else None,
        default=_default(spec, kind),
        fields=[_field(s, common) for s in sub],
    )


def parse_schema(document: dict[str, Any]) -> MessageSpec:
    common = {c["name"]: c.get("fields", []) for c in document.get("commonStructs", [])}
    return MessageSpec(
        name=document["name"],
        api_key=document.get("apiKey"),
        valid=Versions.parse(document.get("validVersions")),
        flexible=Versions.parse(document.get("flexibleVersions")),
        fields=[_field(f, common) for f in document.get("fields", [])],
    )


# --- readers, compiled per version --------------------------------------------------------------------------


def _need(pos: int, size: int, end: int, what: str) -> None:
    if size < 0 or pos + size > end:
        raise MessageError(f"{what} of {size} bytes runs past the end ({end - pos} left)", "record_truncated")


def _scalar(kind: str) -> Reader:
    if kind in _UNPACK:
        unpack, size = _UNPACK[kind]

        def read_number(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            if pos + size > end:
                raise MessageError(f"{kind} runs past the end", "record_truncated")
            return unpack(buf, pos)[0], pos + size

        return read_number
    if kind == "bool":

        def read_bool(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            if pos >= end:
                raise MessageError("bool runs past the end", "record_truncated")
            return buf[pos] != 0, pos + 1

        return read_bool
    if kind == "uuid":

        def read_uuid(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            if pos + 16 > end:
                raise MessageError("uuid runs past the end", "record_truncated")
            return uuid_text(bytes(buf[pos : pos + 16])), pos + 16

        return read_uuid
    raise MessageError(f"type {kind!r} is not one Kafka's generator knows", "schema_error")


def _length(flexible: bool, nullable: bool, wide: bool, what: str) -> Callable[[bytes, int, int], tuple[int, int]]:
    """The length (or count) prefix of a string, bytes or array: -1 for null."""

    def compact(buf: bytes, pos: int, end: int) -> tuple[int, int]:
        n, pos = read_uvarint(buf, pos, end)
        if n == 0 and not nullable:
            raise MessageError(f"null {what} where the schema allows none")
        return n - 1, pos

    def classic(buf: bytes, pos: int, end: int) -> tuple[int, int]:
        if wide:
            _need(pos, 4, end, f"{what} length")
            n = _INT32(buf, pos)[0]
            pos += 4
        else:
            _need(pos, 2, end, f"{what} length")
            n = _INT16(buf, pos)[0]
            pos += 2
        if n < -1 or (n == -1 and not nullable):
            raise MessageError(f"{what} length {n}")
        return n, pos

    return compact if flexible else classic


def _type_reader(spec: FieldSpec, version: int, flexible: bool) -> Reader:
    kind = spec.type
    nullable = version in spec.nullable
    if kind == "string":
        length = _length(flexible, nullable, False, "string")

        def read_string(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            n, pos = length(buf, pos, end)
            if n < 0:
                return None, pos
            _need(pos, n, end, "string")
            try:
                return bytes(buf[pos : pos + n]).decode("utf-8"), pos + n
            except UnicodeDecodeError:
                raise MessageError("a string that is not UTF-8") from None

        return read_string
    if kind == "bytes":
        length = _length(flexible, nullable, True, "bytes")

        def read_bytes(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            n, pos = length(buf, pos, end)
            if n < 0:
                return None, pos
            _need(pos, n, end, "bytes")
            return bytes(buf[pos : pos + n]), pos + n

        return read_bytes
    if kind.startswith("[]"):
        element_kind = kind[2:]
        if spec.fields:  # an array of structs
            element = _struct_reader(spec.fields, version, flexible)
            smallest = 1
        else:
            element = _type_reader(
                FieldSpec(spec.name, element_kind, spec.versions, Versions(1, 0), Versions(1, 0), None, None),
                version,
                flexible,
            )
            smallest = _UNPACK[element_kind][1] if element_kind in _UNPACK else 16 if element_kind == "uuid" else 1
        count = _length(flexible, nullable, True, "array")
        if element_kind == "int32" and not spec.fields:  # replica lists and ISRs: the bulk of a metadata log

            def read_int32s(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
                n, pos = count(buf, pos, end)
                if n < 0:
                    return None, pos
                _need(pos, 4 * n, end, f"array of {n} int32")
                return list(struct.unpack_from(f">{n}i", buf, pos)), pos + 4 * n

            return read_int32s

        def read_array(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            n, pos = count(buf, pos, end)
            if n < 0:
                return None, pos
            _need(pos, smallest * n, end, f"array of {n}")  # each element takes a byte at least
            out = []
            for _ in range(n):
                value, pos = element(buf, pos, end)
                out.append(value)
            return out, pos

        return read_array
    if spec.fields:  # a struct field
        inner = _struct_reader(spec.fields, version, flexible)
        if not nullable:
            return inner

        def read_nullable_struct(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            _need(pos, 1, end, "struct marker")
            if buf[pos] == 0xFF:
                return None, pos + 1
            return inner(buf, pos + 1, end)

        return read_nullable_struct
    return _scalar(kind)


_FIXED = {"int8": "b", "int16": "h", "uint16": "H", "int32": "i", "int64": "q", "float64": "d", "bool": "?"}
_SIZES = {"b": 1, "h": 2, "H": 2, "i": 4, "q": 8, "d": 8, "?": 1, "16s": 16}


def _struct_reader(fields: list[FieldSpec], version: int, flexible: bool) -> Reader:
    """A reader of one struct at ``version``, generated from the schema as Python source: the fields in
    order, then (flexible) the tagged fields, as ``interpreted_struct_reader`` reads them, whose closures
    (one call per field, one per length) were most of the time a million ``PartitionRecord``s took
    (bench/bench_kraft.py's profile). Consecutive fixed-size fields (numbers, bools, uuids) are one
    ``struct`` unpack after one bounds check; a compact ``[]int32`` or ``[]uuid`` is read in place; every
    other type (strings, bytes, structs, the classic non-flexible forms, tagged values) calls its
    closure from ``_type_reader``. Every length is checked against the bytes left before it is used,
    as there; ``test_kraft.py`` holds the two readers equal on every record of the real captures and on
    every byte of one set to a lie."""
    names: dict[str, Any] = {
        "MessageError": MessageError,
        "read_uvarint": read_uvarint,
        "uuid_text": uuid_text,
        "unpack_from": struct.unpack_from,
    }
    body: list[str] = []
    values: list[str] = []  # the dict's items, in field order
    group: list[tuple[str, str]] = []  # consecutive fixed-size fields: (variable, struct code)
    tagged: dict[int, tuple[str, Reader]] = {}

    def flush() -> None:
        if not group:
            return
        codes = "".join(code for _, code in group)
        size = sum(_SIZES[code] for _, code in group)
        layout = struct.Struct(">" + codes)
        names[f"s{len(names)}"] = layout.unpack_from
        unpack = f"s{len(names) - 1}"
        body.append(f"    if pos + {size} > end:")
        body.append(
            f'        raise MessageError("{len(group)} fixed fields of {size} bytes run past the end", '
            '"record_truncated")'
        )
        targets = ", ".join(var for var, _ in group)
        body.append(f"    ({targets},) = {unpack}(buf, pos)")
        body.append(f"    pos += {size}")
        for var, code in group:
            if code == "16s":
                body.append(f"    {var} = uuid_text({var})")
        group.clear()

    def length(var: str) -> None:
        """A compact length or count (unsigned varint, minus one), a one-byte one read in place."""
        body.append("    if pos < end and buf[pos] < 128:")
        body.append(f"        {var} = buf[pos] - 1")
        body.append("        pos += 1")
        body.append("    else:")
        body.append(f"        {var}, pos = read_uvarint(buf, pos, end)")
        body.append(f"        {var} -= 1")

    for index, f in enumerate(fields):
        var = f"v{index}"
        values.append(f"{f.name!r}: {var}")
        kind = f.type
        if version not in f.versions or (flexible and version in f.tagged and f.tag is not None):
            if version in f.versions and f.tag is not None:
                tagged[f.tag] = (f.name, _type_reader(f, version, flexible))
            flush()
            default = f"d{index}"
            names[default] = f.default
            body.append(f"    {var} = list({default}) if type({default}) is list else {default}")
        elif kind in _FIXED or kind == "uuid":
            group.append((var, _FIXED.get(kind, "16s")))
        elif flexible and kind in ("[]int32", "[]uuid") and not f.fields:
            flush()
            nullable = version in f.nullable
            width = 4 if kind == "[]int32" else 16
            length("n")
            body.append("    if n < 0:")
            if nullable:
                body.append(f"        {var} = None")
            else:
                body.append('        raise MessageError("null array where the schema allows none")')
            body.append("    else:")
            body.append(f"        if pos + {width} * n > end:")
            body.append(
                f'            raise MessageError(f"array of {{n}} of {width} bytes runs past the end '
                '({end - pos} left)", "record_truncated")'
            )
            if kind == "[]int32":
                body.append("        " + var + ' = list(unpack_from(">%di" % n, buf, pos))')
            else:
                body.append(f"        {var} = [uuid_text(buf[p : p + 16]) for p in range(pos, pos + 16 * n, 16)]")
            body.append(f"        pos += {width} * n")
        else:
            flush()
            reader = f"r{index}"
            names[reader] = _type_reader(f, version, flexible)
            body.append(f"    {var}, pos = {reader}(buf, pos, end)")
    flush()
    body.append("    out = {" + ", ".join(values) + "}")
    if flexible:
        names["tagged"] = tagged
        body += [
            "    if pos < end and buf[pos] == 0:",  # no tagged fields: the common case
            "        return out, pos + 1",
            "    n, pos = read_uvarint(buf, pos, end)",
            "    if pos + 2 * n > end:",
            '        raise MessageError(f"{n} tagged fields of {2 * n} bytes runs past the end ({end - pos} left)", '
            '"record_truncated")',
            "    for _ in range(n):",
            "        tag, pos = read_uvarint(buf, pos, end)",
            "        size, pos = read_uvarint(buf, pos, end)",
            "        if pos + size > end:",
            '            raise MessageError(f"tagged field {tag} of {size} bytes runs past the end "',
            '                               f"({end - pos} left)", "record_truncated")',
            "        known = tagged.get(tag)",
            "        if known is not None:",
            "            value, after = known[1](buf, pos, pos + size)",
            "            if after != pos + size:",
            "                raise MessageError(",
            '                    f"tagged field {tag} ({known[0]}) holds {size} bytes, its value {after - pos}"',
            "                )",
            "            out[known[0]] = value",
            "        pos += size",
        ]
    body.append("    return out, pos")
    source = "def read_struct(buf, pos, end):\n" + "\n".join(body) + "\n"
    exec(compile(source, "<kafka schema reader>", "exec"), names)  # our own source, from the schema
    return names["read_struct"]  # type: ignore[no-any-return]


def interpreted_struct_reader(fields: list[FieldSpec], version: int, flexible: bool) -> Reader:
    """A reader of one struct at ``version``: its fields in order, then (flexible) its tagged fields; each
    field a closure (``_type_reader``). The reference the generated reader (``_struct_reader``) is held to."""
    plan: list[tuple[str, Reader | None, Any]] = []  # (name, reader or None for its default, default)
    tagged: dict[int, tuple[str, Reader]] = {}
    for f in fields:
        if version not in f.versions:
            plan.append((f.name, None, f.default))
        elif flexible and version in f.tagged and f.tag is not None:
            plan.append((f.name, None, f.default))
            tagged[f.tag] = (f.name, _type_reader(f, version, flexible))
        else:
            plan.append((f.name, _type_reader(f, version, flexible), None))

    def read_struct(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        out: dict[str, Any] = {}
        for name, reader, default in plan:
            if reader is None:
                out[name] = list(default) if type(default) is list else default
            else:
                out[name], pos = reader(buf, pos, end)
        if flexible:
            n, pos = read_uvarint(buf, pos, end)
            _need(pos, 2 * n, end, f"{n} tagged fields")
            for _ in range(n):
                tag, pos = read_uvarint(buf, pos, end)
                size, pos = read_uvarint(buf, pos, end)
                _need(pos, size, end, f"tagged field {tag}")
                known = tagged.get(tag)
                if known is not None:
                    value, after = known[1](buf, pos, pos + size)
                    if after != pos + size:
                        raise MessageError(
                            f"tagged field {tag} ({known[0]}) holds {size} bytes, its value {after - pos}"
                        )
                    out[known[0]] = value
                pos += size  # a tag this schema does not know: skipped by its size, as Kafka does
        return out, pos

    return read_struct


class Schemas:
    """Every schema under ``schemas/``: metadata records by api key, control records' data by name."""

    def __init__(self, specs: list[MessageSpec]) -> None:
        self.by_key = {s.api_key: s for s in specs if s.api_key is not None}
        self.by_name = {s.name: s for s in specs}

    @classmethod
    def packaged(cls) -> Schemas:
        folder = resources.files(__package__).joinpath("schemas")
        specs = [
            parse_schema(load_json_with_comments(entry.read_text(encoding="utf-8")))
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".json")
        ]
        return cls(specs)

    def reader(self, spec: MessageSpec, version: int) -> Reader:
        found = spec.readers.get(version)
        if found is None:
            if version not in spec.valid:
                raise MessageError(
                    f"{spec.name} version {version} (this reader knows {spec.valid.low}..{spec.newest})",
                    "unknown_record_version",
                )
            found = spec.readers[version] = _struct_reader(spec.fields, version, version in spec.flexible)
        return found

    def read_metadata(self, data: bytes, pos: int, end: int) -> tuple[str, int, dict[str, Any]]:
        """One metadata record's value (``MetadataRecordSerde``): frame version, api key and version as
        unsigned varints, then the message. (name, version, fields); the message must end where the
        value does."""
        frame, pos = read_uvarint(data, pos, end)
        if frame not in (0, 1):
            raise MessageError(f"metadata record frame version {frame} (Kafka writes 0 or 1)", "unknown_record_version")
        api_key, pos = read_uvarint(data, pos, end)
        version, pos = read_uvarint(data, pos, end)
        spec = self.by_key.get(api_key)
        if spec is None:
            raise MessageError(f"metadata record type {api_key} is none this reader knows", "unknown_record_type")
        value, pos = self.reader(spec, version)(data, pos, end)
        if pos != end:
            raise MessageError(f"{spec.name} v{version} ends {end - pos} bytes before its record does")
        return spec.name, version, value

    def read_control(self, name: str, data: bytes, pos: int, end: int) -> tuple[int, dict[str, Any]]:
        """A control record's value (``ControlRecordUtils``): a message whose first field is its
        ``Version`` (int16), read at that version (or the newest known, when newer: the fields this reader
        knows come first, and Kafka itself reads these at its own current version)."""
        spec = self.by_name[name]
        _need(pos, 2, end, "control record version")
        version = _INT16(data, pos)[0]
        read_as = min(max(version, spec.valid.low), spec.newest)
        value, _ = self.reader(spec, read_as)(data, pos, end)
        return version, value
