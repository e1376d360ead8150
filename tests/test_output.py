"""One record type feeds every format: each record type through table, JSON, JSONL and CSV."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timezone
from typing import Any

import pytest
from rich.console import Console

from zkstorm.output import FORMATS, emit
from zkstorm.records import RECORD_TYPES, DecodeFailure, Unreadable, Znode
from zkstorm.schema import columns, kind_name

_VALUES: dict[str, Any] = {
    "str": 'ümlaut, "quoted"',
    "int": 42,
    "float": 1.5,
    "bool": True,
    "datetime": datetime(2025, 7, 8, 12, 0, tzinfo=timezone.utc),
}


def sample(record_type: type) -> Any:
    """A record with every field set, built from its columns so new record types are covered too."""
    values = {}
    for column in columns(record_type):
        if column.kind.startswith("list<"):
            values[column.name] = (_VALUES[column.kind[5:-1]],) * 2
        else:
            values[column.name] = _VALUES[column.kind]
    return record_type(**values)


SAMPLES: dict[type, Any] = {t: sample(t) for t in RECORD_TYPES}


def test_every_record_type_is_registered() -> None:
    import dataclasses

    import zkstorm.records as records

    declared = {v for v in vars(records).values() if dataclasses.is_dataclass(v) and isinstance(v, type)}
    assert declared == set(RECORD_TYPES)


# What each sample value must look like in each format, written out by hand: the expected output is not
# built by the code under test (``to_jsonable``), so a wrong conversion there cannot pass unnoticed.
_AS_JSON: dict[str, Any] = {**_VALUES, "datetime": "2025-07-08T12:00:00Z"}
_AS_CSV: dict[str, str] = {
    "str": 'ümlaut, "quoted"',
    "int": "42",
    "float": "1.5",
    "bool": "true",
    "datetime": "2025-07-08T12:00:00Z",
}
_IN_TABLE: dict[str, str] = {**_AS_CSV, "bool": "yes", "datetime": "2025-07-08 12:00:00"}


def _expected(record_type: type, values: dict[str, Any], list_of: Any) -> dict[str, Any]:
    out = {}
    for column in columns(record_type):
        if column.kind.startswith("list<"):
            out[column.name] = list_of(values[column.kind[5:-1]])
        else:
            out[column.name] = values[column.kind]
    return out


def _kind(record_type: type) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", record_type.__name__).lower()  # StormError -> storm_error


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_record_through_every_format(record_type: type, fmt: str) -> None:
    record = SAMPLES[record_type]
    out = io.StringIO()
    others = emit([record, record], fmt, out, primary=record_type, console=Console(file=out, width=4000))
    assert others == []
    text = out.getvalue()
    as_json = {"kind": _kind(record_type), **_expected(record_type, _AS_JSON, lambda v: [v, v])}
    if fmt == "json":
        assert json.loads(text) == [as_json] * 2
    elif fmt == "jsonl":
        assert [json.loads(line) for line in text.splitlines()] == [as_json] * 2
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows == [_expected(record_type, _AS_CSV, lambda v: f"{v} {v}")] * 2
    else:
        for column in columns(record_type):
            assert column.name.replace("_", " ") in text
        for value in _expected(record_type, _IN_TABLE, lambda v: f"{v},{v}").values():
            assert value in text


def test_csv_hands_back_records_of_other_kinds() -> None:
    out = io.StringIO()
    others = emit([SAMPLES[Znode], SAMPLES[Unreadable]], "csv", out, primary=Znode)
    assert others == [SAMPLES[Unreadable]]


def test_columns_follow_annotations() -> None:
    by_name = {c.name: c for c in columns(Znode)}
    assert by_name["czxid"].kind == "int" and not by_name["czxid"].nullable
    assert by_name["summary"].kind == "str" and by_name["summary"].nullable
    assert by_name["ephemeral"].kind == "bool"
    assert kind_name(DecodeFailure) == "decode_failure"
