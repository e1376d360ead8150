"""One record type feeds every format: each record type through table, JSON, JSONL and CSV."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from rich.console import Console

from zkstorm.output import FORMATS, emit
from zkstorm.records import RECORD_TYPES, DecodeFailure, Unreadable, Znode
from zkstorm.schema import columns, kind_name, to_jsonable

SAMPLES: dict[type, Any] = {
    Znode: Znode(
        path="/a/b",
        czxid=1,
        mzxid=2,
        pzxid=3,
        ctime_ms=4,
        mtime_ms=5,
        version=6,
        cversion=7,
        aversion=8,
        ephemeral_owner=0x100,
        data_length=10,
        num_children=0,
        ephemeral=True,
        encoding="json",
        summary='ümlaut, "quoted"',
    ),
    Unreadable: Unreadable(path="/secret", reason="NoAuth"),
    DecodeFailure: DecodeFailure(
        path="/x",
        record_kind="storm_base",
        failure_type="thrift-truncated",
        reason="truncated",
        size=12,
        encoding="gzip",
    ),
}


def test_every_record_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(RECORD_TYPES)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_record_through_every_format(record_type: type, fmt: str) -> None:
    record = SAMPLES[record_type]
    out = io.StringIO()
    others = emit([record, record], fmt, out, primary=record_type, console=Console(file=out, width=200))
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
        assert rows[0]["path"] == record.path
    else:
        for column in columns(record_type):
            assert column.name in text


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
