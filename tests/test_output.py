"""One record type feeds every format: each record type through table, JSON, JSONL and CSV."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console

from zkstorm.output import VIEW_FORMATS, Format, Shown
from zkstorm.records import RECORD_TYPES, DecodeFailure, Unreadable, Znode
from zkstorm.schema import columns, kind_name

_VALUES: dict[str, Any] = {
    "str": 'ümlaut, "quoted"',
    "int": 42,
    "float": 1.5,
    "bool": True,
    "datetime": datetime(2025, 7, 8, 12, 0, tzinfo=UTC),
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
    assert declared == set(RECORD_TYPES) | set(records.COLUMN_BATCHES)
    assert not set(RECORD_TYPES) & set(records.COLUMN_BATCHES)


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


@pytest.mark.parametrize("fmt", VIEW_FORMATS)
@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_record_through_every_format(record_type: type, fmt: Format) -> None:
    record = SAMPLES[record_type]
    out = io.StringIO()
    others = fmt.write(Shown([record, record], record_type), out, console=Console(file=out, width=4000), wide=True)
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
    else:  # --wide: every field as stored
        for column in columns(record_type):
            assert column.name.replace("_", " ") in text, column.name
        for value in _expected(record_type, _IN_TABLE, lambda v: f"{v},{v}").values():
            assert value in text


def test_csv_hands_back_records_of_other_kinds() -> None:
    out = io.StringIO()
    others = Format.CSV.write(Shown([SAMPLES[Znode], SAMPLES[Unreadable]], Znode), out)
    assert others == [SAMPLES[Unreadable]]


def test_columns_follow_annotations() -> None:
    by_name = {c.name: c for c in columns(Znode)}
    assert by_name["czxid"].kind == "int" and not by_name["czxid"].nullable
    assert by_name["summary"].kind == "str" and by_name["summary"].nullable
    assert by_name["ephemeral"].kind == "bool"
    assert kind_name(DecodeFailure) == "decode_failure"


def _stdlib_line(record: Any) -> str:
    """The object as the stdlib encoder writes it from ``to_jsonable`` (the reference form)."""
    from zkstorm.schema import to_jsonable

    return json.dumps(
        {"kind": kind_name(type(record)), **to_jsonable(record)}, ensure_ascii=False, separators=(",", ":")
    )


@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_json_bytes_says_what_the_stdlib_encoder_says(record_type: type) -> None:
    from zkstorm.output import json_bytes

    record = SAMPLES[record_type]
    written = json_bytes(record)
    assert json.loads(written) == json.loads(_stdlib_line(record))
    assert written.startswith(b'{"kind":"' + kind_name(record_type).encode() + b'"')
    assert list(json.loads(written)) == ["kind", *(c.name for c in columns(record_type))]  # declaration order


def test_json_bytes_falls_back_where_orjson_refuses() -> None:
    """NaN, an integer beyond 64 bits and a lone surrogate are written as the stdlib writes them."""
    import dataclasses

    from zkstorm.output import json_bytes

    with_float = next(t for t in RECORD_TYPES if any(c.kind == "float" for c in columns(t)))
    name = next(c.name for c in columns(with_float) if c.kind == "float")
    cases = [
        dataclasses.replace(SAMPLES[with_float], **{name: float("nan")}),
        dataclasses.replace(SAMPLES[Znode], czxid=2**70),
        dataclasses.replace(SAMPLES[Znode], path="/\ud800"),
    ]
    for record in cases[:2]:
        assert json_bytes(record) == _stdlib_line(record).encode()
    assert json.loads(json_bytes(cases[2]))["path"] == "/\ud800"  # escaped: valid UTF-8, the same string


def test_machine_formats_write_every_record_read_before_a_failure() -> None:
    """Lines are written in batches; a walk that fails midway still has every record before it written
    (and a JSON array that never got a record writes nothing at all)."""

    def failing(n: int) -> Any:
        yield from [SAMPLES[Znode]] * n
        raise RuntimeError("connection lost")

    for fmt in (Format.JSONL, Format.JSON):
        out = io.StringIO()
        with pytest.raises(RuntimeError):
            fmt.write(Shown(failing(300), Znode), out)
        text = out.getvalue()
        assert text.count('"kind":"znode"') == 300
        out = io.StringIO()
        with pytest.raises(RuntimeError):
            fmt.write(Shown(failing(0), Znode), out)
        assert out.getvalue() == ""
    out = io.StringIO()
    Format.JSON.write(Shown([SAMPLES[Znode]] * 600, Znode), out)
    assert json.loads(out.getvalue()) == [json.loads(_stdlib_line(SAMPLES[Znode]))] * 600


@pytest.mark.parametrize("record_type", RECORD_TYPES, ids=lambda t: t.__name__)
def test_table_priorities_name_real_columns(record_type: type) -> None:
    """A record type's ``TABLE_COLUMNS`` (its table's priorities, record metadata) name its own fields, each
    once: a renamed field cannot leave a view's table without its leading column."""
    from zkstorm.schema import table_columns

    leading = getattr(record_type, "TABLE_COLUMNS", ())
    assert len(set(leading)) == len(leading)
    assert set(leading) <= {c.name for c in columns(record_type)}
    assert [c.name for c in table_columns(record_type)][: len(leading)] == list(leading)
    assert sorted(c.name for c in table_columns(record_type)) == sorted(c.name for c in columns(record_type))


def test_every_format_is_its_own_writer() -> None:
    """The one option's values are the formats, and each member writes: no format is handled elsewhere."""
    out = io.StringIO()
    for fmt in Format:
        if fmt is not Format.PROMETHEUS:
            fmt.write(Shown([SAMPLES[Znode]], Znode), out, console=Console(file=out, width=200))
    assert {f.value for f in Format} == {"table", "tree", "json", "jsonl", "csv", "prometheus"}
