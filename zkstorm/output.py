"""The one output option and the one emitter: ``Format`` (table, tree, json, jsonl, csv, prometheus) is the
option's value, resolved once (``--json`` is ``Format.JSON``), and each member writes what a command shows
(``Shown``): ``Format.CSV.write(shown, sys.stdout)``. As pip-audit's output-format choice is its formatters,
the member is the writer: a command never branches on the format.

What a command shows is its records, all of one ``primary`` type as a rule (that type's columns head the
CSV and the table, its ``TABLE_COLUMNS`` order the table), and, where a view has a form of its own, that
form: a renderable for the terminal (``get``'s znode in full, ``kafka health``'s summary by rule,
``errors``' traces), one JSON document (``get``, ``diff``), flat CSV rows (``get``). Prometheus is one
more format: its series come from the records and the view they were read through
(``export.prometheus``).

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
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from operator import attrgetter
from typing import Any, TextIO

import orjson

from .schema import columns, kind_name, to_jsonable
from .text import visible
from .units import iso_utc


@dataclass
class Shown:
    """What one command shows, in whatever format it is asked for.

    ``records`` are its rows (a stream, for a walk), of the ``primary`` type as a rule; a machine format
    writes every record, the table and CSV only the primary ones and hand back the rest. The optional
    fields are the view's own forms, where it has one: ``table`` the renderable a terminal shows instead
    of the record table (given the width and ``--wide``; a string is lines written whole), ``document``
    the one JSON document written instead of the records, ``flat`` the (header, rows) written as CSV
    instead. For Prometheus, ``view``
    is what the records were read through (a view of the model, or a report) and ``as_of_secs`` and
    ``problems`` what every exposition carries (when the data was current, what could not be read)."""

    records: Iterable[Any]
    primary: type
    title: str | None = None
    table: Callable[..., Any] | None = None  # (width=, wide=) → a renderable
    document: Any = None
    flat: tuple[Sequence[str], Iterable[dict[str, Any]]] | None = None
    view: Any = None
    as_of_secs: float | None = None
    problems: Sequence[Any] = ()


class Format(StrEnum):
    """The output formats, each the writer of itself (``write``)."""

    TABLE = "table"
    TREE = "tree"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    PROMETHEUS = "prometheus"

    @property
    def streams(self) -> bool:
        """Whether the records are written as they come (a walk's lines appear as it reads), rather than
        gathered first for a layout (a table, a tree) or a scrape (Prometheus)."""
        return self in (Format.JSON, Format.JSONL, Format.CSV)

    def write(self, shown: Shown, out: TextIO, *, console: Any = None, wide: bool = False) -> list[Any]:
        """Write ``shown`` to ``out`` in this format; return the records it could not carry (CSV and the
        table write the primary type's only). A table or tree fits ``console``'s width (one on ``out`` when
        none is given) unless ``wide``."""
        return _WRITERS[self](shown, out, console, wide)


# The formats of a view's rows, and of the views that also have Prometheus series.
VIEW_FORMATS = (Format.TABLE, Format.JSON, Format.JSONL, Format.CSV)
METRIC_FORMATS = (*VIEW_FORMATS, Format.PROMETHEUS)
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


def _write_table(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    rows: list[Any] = []
    others: list[Any] = []
    if shown.table is None:
        for record in shown.records:
            (rows if type(record) is shown.primary else others).append(record)
    console = console or terminal(out)
    if shown.table is not None:
        drawn = shown.table(width=console.width, wide=wide)
        if isinstance(drawn, str):  # lines of words, escaped already: written whole, never cut to the width
            out.write(drawn)
        else:
            console.print(drawn)
    else:
        from .render import record_table

        table = record_table(
            rows, shown.primary, title=shown.title, width=console.width, wide=wide, now_secs=shown.as_of_secs
        )
        console.print(table)
    return others


def _write_tree(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    """The walked znodes as a tree, unreadable ones among them; failure records go back to the caller."""
    from .records import Unreadable, Znode
    from .render import znode_tree

    znodes: list[Znode] = []
    unreadable: list[Unreadable] = []
    others: list[Any] = []
    for record in shown.records:
        kind = type(record)
        (znodes if kind is Znode else unreadable if kind is Unreadable else others).append(record)
    rendered = znode_tree(znodes, unreadable)
    if rendered is not None:
        (console or terminal(out)).print(rendered)
    return others


def terminal(out: TextIO | None = None) -> Any:
    """The rich console a table or tree is drawn on: ``out`` (stdout by default), its width and colours as
    rich finds them (``COLUMNS``, ``NO_COLOR``), no highlighting of what merely looks like a number or a path."""
    from rich.console import Console

    return Console(file=out, soft_wrap=False, highlight=False)


def _write_json(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    if shown.document is not None:
        out.write(json.dumps(shown.document, ensure_ascii=False, indent=2, default=_plain) + "\n")
    else:
        _write_lines(shown.records, out, jsonl=False)
    return []


def _write_jsonl(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    _write_lines(shown.records, out, jsonl=True)
    return []


def _plain(value: Any) -> Any:
    """What a view's own JSON document holds besides JSON's types: times (as every time is written), or
    anything else as its text."""
    return iso_utc(value) if isinstance(value, datetime) else str(value)


def _write_csv(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    writer = csv.writer(out, lineterminator="\n")
    if shown.flat is not None:
        header, flat_rows = shown.flat
        writer.writerow(header)
        for row in flat_rows:
            writer.writerow(["" if row.get(n) is None else csv_cell(row[n]) for n in header])
        return []
    others: list[Any] = []
    primary = shown.primary
    names = [c.name for c in columns(primary)]
    header_written = False
    for record in shown.records:
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
    return others


def _write_prometheus(shown: Shown, out: TextIO, console: Any, wide: bool) -> list[Any]:
    from .export.prometheus import exposition, read_families, series

    records = list(shown.records)
    families = series(shown.primary, records, shown.view)
    out.write(exposition([*read_families(shown.as_of_secs or 0.0, shown.problems), *families]))
    return []


_WRITERS: dict[Format, Callable[[Shown, TextIO, Any, bool], list[Any]]] = {
    Format.TABLE: _write_table,
    Format.TREE: _write_tree,
    Format.JSON: _write_json,
    Format.JSONL: _write_jsonl,
    Format.CSV: _write_csv,
    Format.PROMETHEUS: _write_prometheus,
}


def _sink(out: TextIO) -> Callable[[bytes], Any]:
    """A writer of UTF-8 bytes to ``out``: its binary buffer when it has one (after flushing what the
    text layer holds, so the order is kept), else decoded text."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None and (getattr(out, "encoding", "") or "").lower().replace("-", "") == "utf8":
        out.flush()
        return buffer.write  # type: ignore[no-any-return]
    return lambda data: out.write(data.decode())


def _write_lines(records: Iterable[Any], out: TextIO, *, jsonl: bool) -> None:
    """JSONL (one object a line) or one JSON array, written in batches of lines. Nothing is written
    until the first record exists: a walk that fails at its start (no such path, no connection) must
    not leave a half-open array on stdout; one that fails later has every record before it written."""
    write = _sink(out)
    lines: list[bytes] = []
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
