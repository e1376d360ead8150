"""``emit(records, fmt, out)``: the one writer behind every command's table, JSON, JSONL and CSV.

Machine formats stream: a walk of a million znodes is written as it is read. Every JSON object starts
with ``kind`` (``znode``, ``unreadable``, ``decode_failure``, …) so a mixed stream stays parseable.
CSV carries one record type (the command's ``primary``); records of other kinds are handed back so the
caller can report them on stderr; nothing is silently dropped.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from rich.console import Console

from .render import record_table
from .schema import columns, kind_name, to_jsonable

MACHINE_FORMATS = ("json", "jsonl", "csv")
FORMATS = ("table", *MACHINE_FORMATS)


def _json_object(record: Any) -> dict[str, Any]:
    return {"kind": kind_name(type(record)), **to_jsonable(record)}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def emit(
    records: Iterable[Any],
    fmt: str,
    out: TextIO,
    *,
    primary: type,
    console: Console | None = None,
    table_columns: Sequence[str] | None = None,
    title: str | None = None,
    wide: bool = False,
) -> list[Any]:
    """Write ``records`` in ``fmt``; return the records CSV or the table could not carry. A table fits
    the console's width unless ``wide`` (``render.record_table``)."""
    others: list[Any] = []
    if fmt == "jsonl":
        for record in records:
            out.write(_dumps(_json_object(record)) + "\n")
    elif fmt == "json":
        # Nothing is written until the first record exists: a walk that fails at its start (no such
        # path, no connection) must not leave a half-open array on stdout.
        separator = "["
        for record in records:
            out.write(separator + "\n" + _dumps(_json_object(record)))
            separator = ","
        out.write("[]\n" if separator == "[" else "\n]\n")
    elif fmt == "csv":
        names = [c.name for c in columns(primary)]
        writer = csv.writer(out, lineterminator="\n")
        header_written = False
        for record in records:
            if not header_written:
                writer.writerow(names)  # after the first record, for the same reason as JSON's "["
                header_written = True
            if type(record) is not primary:
                others.append(record)
                continue
            row = to_jsonable(record)
            writer.writerow(["" if row[n] is None else _csv_value(row[n]) for n in names])
        if not header_written:
            writer.writerow(names)
    elif fmt == "table":
        rows: list[Any] = []
        for record in records:
            (rows if type(record) is primary else others).append(record)
        console = console or Console(file=out)
        console.print(record_table(rows, primary, title=title, only=table_columns, width=console.width, wide=wide))
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return others


def _csv_value(value: Any) -> Any:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def emit_flat(header: Sequence[str], rows: Iterable[dict[str, Any]], out: TextIO) -> None:
    """CSV of rows that are already flat (``get``'s stat and decoded fields side by side)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if row.get(n) is None else _csv_value(row[n]) for n in header])
