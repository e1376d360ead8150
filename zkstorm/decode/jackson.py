"""Kafka's JSON as Kafka's own reader reads it (Jackson, through ``core/src/main/scala/kafka/utils/Json.scala``),
so zkstorm reads what Kafka reads and refuses what Kafka refuses:

- a UTF-8 byte order mark is skipped, bytes after the first JSON value are ignored, a duplicate key keeps
  its last value (Jackson's defaults);
- a parse that fails is retried once with backslashes doubled, as ``Json.parseFull`` did in Kafka 1.0.1 to
  2.5 to read strings (ACLs) that older versions wrote unescaped;
- values are never coerced: a string where Kafka reads a number is a type error (``Fields``), named
  field by field.

Each leniency used is kept as a warning (kind, detail) with the value (``Json``), for the decoder to
report as a ``decode_warning``. The common payload needs none and is parsed by orjson.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ..errors import DecodeError, FailureType
from . import sniff

_BOM = b"\xef\xbb\xbf"


DIGITS = re.compile(r"^-?\d+$")


class Json:
    """A parsed payload plus the warnings its parsing raised (kind, detail), and the encoding ``sniff``
    gives the same bytes (``json`` for an object, array or string that parses as it is, else ``text``:
    a bare number, or a value that parsed only with Kafka's legacy backslash retry)."""

    def __init__(self, value: Any, warnings: list[tuple[str, str]], encoding: str = sniff.JSON) -> None:
        self.value = value
        self.warnings = warnings
        self.encoding = encoding


def load_json(data: bytes) -> Json:
    """The payload read as Kafka's Jackson reader reads it, with a warning for each leniency used.

    Most payloads need none: orjson parses them (several times the stdlib's speed), and the rest, or
    anything orjson might read otherwise than the stdlib (a BOM, a backslash escape, an integer of 19
    digits or more, trailing bytes, NaN, a duplicate key), take the stdlib path below. A duplicate key
    shows as a colon more in the bytes than in orjson's own rewrite of what it parsed (without
    backslashes, every colon in a string is one in the bytes too)."""
    if orjson_reads_as_stdlib(data):
        try:
            value = _orjson_loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            if data.count(b":") == _orjson_dumps(value).count(b":"):
                return Json(value, [], sniff.JSON if data.lstrip()[:1] in _JSON_START_BYTES else sniff.TEXT)
    return _load_json_leniently(data)


_LONG_NUMBER = re.compile(rb"\d{19}")  # beyond 64 bits orjson reads a float where the stdlib keeps an int


def orjson_reads_as_stdlib(data: bytes) -> bool:
    """Whether orjson may read ``data`` (it then reads it as the stdlib does, or fails): no BOM, no
    backslash escape, no integer of 19 digits or more. A duplicate key is the caller's to rule out."""
    return not data.startswith(_BOM) and b"\\" not in data and not _LONG_NUMBER.search(data)


_JSON_START_BYTES = (b"{", b"[", b'"')


_orjson_loads, _orjson_dumps = orjson.loads, orjson.dumps


def _load_json_leniently(data: bytes) -> Json:
    warnings: list[tuple[str, str]] = []
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
        warnings.append(("bom_stripped", "a UTF-8 byte order mark was skipped, as Jackson does"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
            failure_type=FailureType.INVALID_UTF8,
            offset=exc.start,
        ) from None
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value  # last wins, as in Jackson
        return out

    decoder = json.JSONDecoder(object_pairs_hook=pairs)
    stripped = text.lstrip()
    try:
        value, end = decoder.raw_decode(stripped)
    except json.JSONDecodeError as exc:
        try:
            value, end = decoder.raw_decode(stripped.replace("\\", "\\\\"))
        except json.JSONDecodeError:
            raise DecodeError(
                f"not JSON: {exc.msg} at offset {exc.pos}", failure_type=FailureType.JSON_SYNTAX, offset=exc.pos
            ) from None
        stripped = stripped.replace("\\", "\\\\")
        warnings.append(("legacy_unescaped_backslash", "read with backslashes doubled, as Kafka 1.0.1-2.5 retried"))
    trailing = stripped[end:]
    if trailing.strip():
        count = len(trailing.encode("utf-8"))
        warnings.append(("trailing_bytes", f"{count} bytes after the JSON value were ignored, as Jackson does"))
    for key in dict.fromkeys(duplicates):
        warnings.append(("duplicate_key", f"key {key!r} appears more than once; the last value was used"))
    retried = any(kind == "legacy_unescaped_backslash" for kind, _ in warnings)
    return Json(value, warnings, sniff.JSON if stripped[:1] in _JSON_START and not retried else sniff.TEXT)


_JSON_START = ("{", "[", '"')


def json_object(parsed: Json, what: str) -> dict[str, Any]:
    if not isinstance(parsed.value, dict):
        raise DecodeError(
            f"{what} must be a JSON object, found {json_type(parsed.value)}", failure_type=FailureType.NOT_AN_OBJECT
        )
    return parsed.value


def json_type(value: Any) -> str:
    """A JSON value's type as Jackson names it in its errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


class Fields:
    """Typed access to a JSON object that collects every type error before failing (one message)."""

    def __init__(self, obj: dict[str, Any], known: tuple[str, ...] = ()) -> None:
        self.obj = obj
        self.errors: list[str] = []
        self.known = set(known)

    def _get(self, key: str, required: bool) -> Any:
        self.known.add(key)
        if key not in self.obj:
            if required:
                self.errors.append(f"{key}: missing")
            return None
        return self.obj[key]

    def integer(self, key: str, required: bool = True) -> int | None:
        value = self._get(key, required)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        self.errors.append(f"{key}: expected a number, got {json_type(value)}")
        return None

    def string(self, key: str, required: bool = True, nullable: bool = False) -> str | None:
        value = self._get(key, required)
        if isinstance(value, str) or (value is None and (nullable or not required)):
            return value
        self.errors.append(f"{key}: expected a string, got {json_type(value)}")
        return None

    def str_ms(self, key: str, required: bool = True) -> int | None:
        """Milliseconds written as a JSON string (Kafka's ``timestamp``)."""
        value = self.string(key, required)
        if value is None:
            return None
        if not DIGITS.match(value):
            self.errors.append(f"{key}: expected decimal digits in a string, got {value!r}")
            return None
        return int(value)

    def int_list(self, key: str, required: bool = True, value: Any = None, label: str | None = None) -> tuple[int, ...]:
        value = self._get(key, required) if value is None else value
        if value is None:
            return ()
        if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
        self.errors.append(f"{label or key}: expected an array of numbers, got {json_type(value)}")
        return ()

    def obj_field(self, key: str, required: bool = True) -> dict[str, Any]:
        value = self._get(key, required)
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.errors.append(f"{key}: expected an object, got {json_type(value)}")
        return {}

    def list_field(self, key: str, required: bool = True) -> list[Any]:
        value = self._get(key, required)
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.errors.append(f"{key}: expected an array, got {json_type(value)}")
        return []

    def check(self, what: str) -> None:
        if self.errors:
            raise DecodeError(f"{what}: " + "; ".join(self.errors), failure_type=FailureType.WRONG_TYPE)

    def unknown(self) -> list[str]:
        return sorted(set(self.obj) - self.known)
