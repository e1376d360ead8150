"""``emit(records, fmt, out)``: the one writer behind every command's table, JSON, JSONL and CSV.

Machine formats stream: a walk of a million znodes is written as it is read. Every JSON object starts
with ``kind`` (``znode``, ``unreadable``, ``decode_failure``, …) so a mixed stream stays parseable.
CSV carries one record type (the command's ``primary``); records of other kinds are handed back so the
caller can report them on stderr; nothing is silently dropped. CSV is what spreadsheets open, so a text
cell is written as data, never as a formula or terminal control (``csv_cell``).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any, TextIO

import orjson

from .render import visible  # rich-free: rich is imported only where a renderable is built
from .schema import columns, kind_name, to_jsonable

MACHINE_FORMATS = ("json", "jsonl", "csv")
FORMATS = ("table", *MACHINE_FORMATS)
# Lines gathered before one write: a write per line cost as much as encoding it, and a walk yields
# thousands of lines per second, so the stream still moves as the walk reads.
_LINES_PER_WRITE = 256


def _json_object(record: Any) -> dict[str, Any]:
    return {"kind": kind_name(type(record)), **to_jsonable(record)}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Plan:
    """How one record type becomes a JSON object: orjson writes the slotted dataclass itself (fields in
    declaration order, tuples as arrays, UTC datetimes as ``…Z``) after a ``kind`` prefix computed once,
    so no per-record dict is built. ``finite`` checks the type's float fields: NaN and infinities, and
    anything else orjson refuses (an integer beyond 64 bits, a lone surrogate), go through the stdlib
    encoder as before, so the output says the same thing either way."""

    __slots__ = ("empty", "finite", "prefix")

    def __init__(self, record_type: type) -> None:
        kind = kind_name(record_type).encode()
        self.prefix = b'{"kind":"' + kind + b'",'
        self.empty = b'{"kind":"' + kind + b'"}'
        floats = [c.name for c in columns(record_type) if c.kind in ("float", "list<float>")]
        self.finite: Callable[[Any], bool] | None = _finite_check(floats) if floats else None


def _finite_check(names: list[str]) -> Callable[[Any], bool]:
    get = attrgetter(*names) if len(names) > 1 else (lambda r, g=attrgetter(names[0]): (g(r),))

    def finite(record: Any) -> bool:
        for value in get(record):
            if value is None:
                continue
            if isinstance(value, tuple):
                if not all(math.isfinite(v) for v in value):
                    return False
            elif not math.isfinite(value):
                return False
        return True

    return finite


_PLANS: dict[type, _Plan] = {}
_ORJSON_OPTIONS = orjson.OPT_UTC_Z
_orjson_dumps = orjson.dumps


def json_bytes(record: Any) -> bytes:
    """One record as a compact JSON object starting with ``kind``, UTF-8, no newline."""
    record_type = type(record)
    plan = _PLANS.get(record_type)
    if plan is None:
        plan = _PLANS[record_type] = _Plan(record_type)
    if plan.finite is None or plan.finite(record):
        try:
            body = _orjson_dumps(record, option=_ORJSON_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            pass
        else:
            return plan.prefix + body[1:] if len(body) > 2 else plan.empty
    text = _dumps(_json_object(record))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: written as a JSON \u escape, read back as the same string
        return json.dumps(_json_object(record), ensure_ascii=True, separators=(",", ":")).encode()


def _sink(out: TextIO) -> Callable[[bytes], Any]:
    """A writer of UTF-8 bytes to ``out``: its binary buffer when it has one (after flushing what the
    text layer holds, so the order is kept), else decoded text."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None and (getattr(out, "encoding", "") or "").lower().replace("-", "") == "utf8":
        out.flush()
        return buffer.write  # type: ignore[no-any-return]
    return lambda data: out.write(data.decode())


def emit(
    records: Iterable[Any],
    fmt: str,
    out: TextIO,
    *,
    primary: type,
    console: Any = None,
    table_columns: Sequence[str] | None = None,
    title: str | None = None,
    wide: bool = False,
) -> list[Any]:
    """Write ``records`` in ``fmt``; return the records CSV or the table could not carry. A table fits
    the console's width unless ``wide`` (``render.record_table``)."""
    others: list[Any] = []
    if fmt in ("jsonl", "json"):
        _write_json(records, fmt, out)
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
            writer.writerow(["" if row[n] is None else csv_cell(row[n]) for n in names])
        if not header_written:
            writer.writerow(names)
    elif fmt == "table":
        rows: list[Any] = []
        for record in records:
            (rows if type(record) is primary else others).append(record)
        from rich.console import Console

        from .render import record_table

        console = console or Console(file=out)
        console.print(record_table(rows, primary, title=title, only=table_columns, width=console.width, wide=wide))
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return others


def _write_json(records: Iterable[Any], fmt: str, out: TextIO) -> None:
    """JSONL (one object a line) or one JSON array, written in batches of lines. Nothing is written
    until the first record exists: a walk that fails at its start (no such path, no connection) must
    not leave a half-open array on stdout; one that fails later has every record before it written."""
    write = _sink(out)
    lines: list[bytes] = []
    jsonl = fmt == "jsonl"
    opened = False  # JSON: "[" written

    def drain() -> None:
        nonlocal opened
        if jsonl:
            write(b"\n".join(lines) + b"\n")
        else:
            write((b",\n" if opened else b"[\n") + b",\n".join(lines))
            opened = True
        lines.clear()

    try:
        for record in records:
            lines.append(json_bytes(record))
            if len(lines) >= _LINES_PER_WRITE:
                drain()
    finally:
        if lines:
            drain()
    if not jsonl:
        write(b"\n]\n" if opened else b"[]\n")
    flush = getattr(getattr(out, "buffer", out), "flush", None)
    if flush is not None:
        flush()


# OWASP's "CSV Injection": a spreadsheet reads a cell that starts with one of these as a formula
# (=HYPERLINK(…) opens a link, =cmd|… ran commands in old Excel); a leading tab or CR can hide one.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """One CSV cell. Numbers as they are (a ``-1`` stays a number); lists joined by spaces; text with its
    control characters shown as escapes (``render.visible``, newlines and tabs kept: a Storm trace stays
    one multi-line cell) and, when it would start a formula, a single quote ahead of it, as OWASP
    recommends. A text that is a plain number (a Kafka config's ``-1``) is no formula and stays as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return " ".join(str(v) for v in value)
        value = " ".join(str(v) for v in value)
    if not isinstance(value, str):
        return value
    text = visible(value, multiline=True)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def emit_flat(header: Sequence[str], rows: Iterable[dict[str, Any]], out: TextIO) -> None:
    """CSV of rows that are already flat (``get``'s stat and decoded fields side by side)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if row.get(n) is None else csv_cell(row[n]) for n in header])
