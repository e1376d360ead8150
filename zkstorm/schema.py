"""Columns of a record type, derived from its annotations (and their order in a table, from its
``TABLE_COLUMNS``), and the one record → JSON conversion.

Only this module reads annotations. The table renderer, the JSON/CSV writers, and later the Parquet
writer and the Spark job all ask ``columns()`` so that every output agrees on names, order and types.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from .units import iso_utc

_SCALARS: dict[type, str] = {str: "str", int: "int", float: "float", bool: "bool", datetime: "datetime"}


@dataclass(frozen=True, slots=True)
class Column:
    """One column: ``kind`` is a scalar name (``str``, ``int``, …) or ``list<scalar>`` for tuples."""

    name: str
    kind: str
    nullable: bool


def _kind_of(annotation: Any) -> tuple[str, bool]:
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) != len(typing.get_args(annotation))
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        annotation, origin = args[0], typing.get_origin(args[0])
    if origin is tuple:
        element = typing.get_args(annotation)[0]
        return f"list<{_SCALARS[element]}>", nullable
    return _SCALARS[annotation], nullable


@cache
def columns(record_type: type) -> tuple[Column, ...]:
    hints = typing.get_type_hints(record_type)
    out = []
    for field in dataclasses.fields(record_type):
        kind, nullable = _kind_of(hints[field.name])
        out.append(Column(field.name, kind, nullable))
    return tuple(out)


@cache
def table_columns(record_type: type) -> tuple[Column, ...]:
    """The columns of a record type in a table's order of priority: its ``TABLE_COLUMNS`` first (record
    metadata, so every view of the type agrees), then the rest as declared (``root`` last)."""
    by_name = {c.name: c for c in columns(record_type)}
    leading = [by_name[name] for name in getattr(record_type, "TABLE_COLUMNS", ())]
    return (*leading, *(c for c in by_name.values() if c not in leading))


def kind_name(record_type: type) -> str:
    """The record kind as written in outputs: ``StormError`` → ``storm_error``."""
    name = record_type.__name__
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def to_jsonable(record: Any) -> dict[str, Any]:
    """Field name → JSON-ready value, in declaration order (datetimes as ISO-8601 UTC)."""
    record_type: Any = type(record)
    return {c.name: _jsonable(getattr(record, c.name)) for c in columns(record_type)}
