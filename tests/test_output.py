"""One record type feeds every format: each record type through table, JSON, JSONL and CSV."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from rich.console import Console

from zkstorm.output import FORMATS, emit
from zkstorm.records import RECORD_TYPES, DecodeFailure, Unreadable, Znode
from zkstorm.schema import columns, kind_name, to_jsonable

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


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_record_through_every_format(record_type: type, fmt: str) -> None:
    record = SAMPLES[record_type]
    out = io.StringIO()
    others = emit([record, record], fmt, out, primary=record_type, console=Console(file=out, width=2000))
    assert others == []
    text = out.getvalue()
    expected = to_jsonable(record)
    if fmt == "json":
        assert json.loads(text) == [{"kind": kind_name(record_type), **expected}] * 2
    elif fmt == "jsonl":
        assert [json.loads(line) for line in text.splitlines()] == [{"kind": kind_name(record_type), **expected}] * 2
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 2 and list(rows[0]) == [c.name for c in columns(record_type)]
        first = columns(record_type)[0].name
        assert rows[0][first] == str(getattr(record, first))
    else:
        for column in columns(record_type):
            assert column.name.replace("_", " ") in text


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
