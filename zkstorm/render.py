"""Records → rich renderables (trees, tables, detail panels). Returns renderables; never prints.

Every value from ZooKeeper (ids, hosts, paths, error text, config values) enters rich as ``Text``, never
as a ``str``: rich reads ``[...]`` in a string as markup, and a component named ``enrich [geo]`` must
print as itself. ``_cell``, ``_plain`` and ``_lines`` are the only ways values get in, and each passes
them through ``visible``: text from ZooKeeper is data, never terminal control. ``visible`` is also what
every other writer to a terminal or a spreadsheet uses (stderr warnings, log lines, CSV cells), so it
needs no rich: rich is imported where a renderable is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .schema import table_columns, to_jsonable
from .text import visible
from .units import duration_text, plural

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table
    from rich.text import Text

    from .records import Znode


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n_float = n / 1024
        if n_float < 1024 or unit == "GiB":
            return f"{n_float:.1f} {unit}"
        n = int(n_float)
    return f"{n} B"


def znode_label(znode: Znode, name: str) -> Text:
    from rich.text import Text

    label = Text(visible(name), style="bold" if znode.num_children else "")
    if znode.num_children:
        label.append(f"  ({znode.num_children})", style="cyan")
    if znode.data_length and znode.encoding != "dir-marker":
        label.append(f"  {human_size(znode.data_length)}", style="dim")
    if znode.ephemeral:
        label.append("  ephemeral", style="magenta")
    if znode.summary:
        label.append(f"  {visible(znode.summary)}", style="green")
    elif znode.encoding not in ("empty", "dir-marker"):
        label.append(f"  {znode.encoding}", style="yellow")
    return label


def znode_tree(znodes: Iterable[Znode], unreadable: Iterable[Any] = ()) -> ZnodeTree | None:
    """A tree of the walked znodes, children in name order; unreadable nodes shown in red."""
    from rich.text import Text

    from .records import Znode

    by_path: dict[str, Any] = {z.path: z for z in znodes}
    for item in unreadable:
        by_path.setdefault(item.path, item)
    if not by_path:
        return None
    top = min(by_path, key=lambda p: (p.count("/") if p != "/" else 0, p))
    nodes: dict[str, ZnodeTree] = {}
    for path in sorted(by_path, key=lambda p: p.split("/")):
        item = by_path[path]
        parent_path = _present_ancestor(path, nodes) if path != top else None
        # a node's name under its parent; the path below the nearest node shown, should one be missing
        name = path if parent_path is None else path[len(parent_path) :].lstrip("/")
        label = (
            znode_label(item, name)
            if isinstance(item, Znode)
            else Text(f"{visible(name)}  unreadable: {visible(item.reason)}", style="red")
        )
        node = nodes[path] = ZnodeTree(label)
        if parent_path is not None:
            nodes[parent_path].children.append(node)
    return nodes[top]


def _present_ancestor(path: str, nodes: dict[str, Any]) -> str | None:
    parent = path
    while parent not in ("", "/"):
        parent = parent.rsplit("/", 1)[0] or "/"
        if parent in nodes:
            return parent
    return None


class ZnodeTree:
    """A tree drawn as rich's ``Tree`` draws one (the same guides, labels folded in the width left), except
    that a level never disappears: where the guides of a deep node would leave its label less than
    ``MIN_LABEL`` cells, the outer guides give way to a ``…N`` marker (N levels not drawn), so every node
    keeps its line and its label. (rich gives such a label no width at all, and drops it.)"""

    MIN_LABEL = 24
    GUIDES = ("    ", "│   ", "├── ", "└── ")  # space, continue, fork, end: rich's TREE_GUIDES
    ASCII_GUIDES = ("    ", "|   ", "+-- ", "`-- ")

    def __init__(self, label: Text) -> None:
        self.label = label
        self.children: list[ZnodeTree] = []

    def walk(self) -> Iterator[tuple[ZnodeTree, tuple[bool, ...]]]:
        """Every node depth-first with, per level above it, whether that ancestor was a last child."""
        stack: list[tuple[ZnodeTree, tuple[bool, ...]]] = [(self, ())]
        while stack:
            node, lasts = stack.pop()
            yield node, lasts
            count = len(node.children)
            stack.extend((child, (*lasts, i == count - 1)) for i, child in reversed(list(enumerate(node.children))))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        space, cont, fork, end = self.ASCII_GUIDES if options.ascii_only else self.GUIDES
        style = console.get_style("tree.line", default="")
        width = options.max_width
        fits = max(2, (width - self.MIN_LABEL) // 4)  # guide columns that leave the label its room
        for node, lasts in self.walk():
            first_guides = [space if last else cont for last in lasts[:-1]] + (
                [end if lasts[-1] else fork] if lasts else []
            )
            rest_guides = [space if last else cont for last in lasts]
            if len(lasts) > fits:
                hidden = len(lasts) - (fits - 1)
                marker = (f"…{hidden}" if not options.ascii_only else f">{hidden}").ljust(4)
                first_guides = [marker, *first_guides[-(fits - 1) :]]
                rest_guides = [marker, *rest_guides[-(fits - 1) :]]
            prefix_width = sum(len(g) for g in first_guides)
            lines = console.render_lines(
                node.label, options.update(width=max(1, width - prefix_width), height=None), pad=False
            )
            for i, line in enumerate(lines):
                guides = first_guides if i == 0 else rest_guides
                if guides:
                    yield Segment("".join(guides), style)
                yield from line
                yield Segment.line()


def _cell(value: Any) -> Text:
    from rich.text import Text

    return Text(_cell_text(value))


def _plain(text: str | None) -> Text | None:
    """A title or caption that may hold ZooKeeper values, as literal text on one line."""
    from rich.text import Text

    return None if text is None else Text(visible(text))


def _lines(text: str, **options: Any) -> Text:
    """A value shown on as many lines as it has (a Storm error's trace, a znode's text), as literal text."""
    from rich.text import Text

    return Text(visible(text, multiline=True), **options)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str) and value.endswith("Z") and "T" in value[:11]:
        return visible(value.replace("T", " "))  # ISO-8601 UTC from to_jsonable, easier on the eye
    if isinstance(value, list):
        return visible(",".join(str(v) for v in value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # three decimals, as Storm's UI shows latencies and capacity; JSON and Parquet keep every digit
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return visible(str(value))


CELL_WIDTH = 48  # the widest a value is drawn under --wide before it folds


@dataclass(frozen=True)
class _Column:
    """One column of a record table as a terminal shows it: the field, its header, how its values are
    shown (a human form: ``age``, ``duration``), and its place in the layout rule."""

    name: str
    header: str
    kind: str
    key: bool = False  # the record's name (a topology, a host, a topic): never cut
    text: bool = False  # free text (a finding's explanation): last, gets what is left, wraps
    form: str | None = None


def table_layout(
    record_type: type,
    rows: Sequence[dict[str, Any]],
    *,
    wide: bool,
    leading: Sequence[str] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[list[_Column], list[str]]:
    """The columns a table of ``rows`` offers, in priority order, and the fields it leaves to ``--wide``.

    The record type says what leads (``TABLE_COLUMNS``, why in its docstring), which column names the
    row (``TABLE_KEY``), which hold free text (``TABLE_TEXT``) and which are shown in a human form
    (``TABLE_FORMS``: field → (form or None, header); an epoch time as an ``age``, seconds as a
    ``duration``, a list by its ``count``); ``leading`` replaces ``TABLE_COLUMNS`` (a group's own). A
    ``decode_status`` column is offered only when a row is not ``ok``, a ``root`` only when the rows span
    more than one; ``wide`` offers every field as stored."""
    declared = table_columns(record_type)
    explicit = leading is not None  # a group's own columns: it says whether the root is one
    leading = getattr(record_type, "TABLE_COLUMNS", ()) if leading is None else leading
    forms: dict[str, tuple[str, str]] = {} if wide else getattr(record_type, "TABLE_FORMS", {})
    key = getattr(record_type, "TABLE_KEY", None)
    text = set(getattr(record_type, "TABLE_TEXT", ()))
    if wide:
        names = [c.name for c in declared]
    else:
        chosen = list(leading or [c.name for c in declared])
        several_roots = len({row.get("root") for row in rows}) > 1
        # a root a group names explicitly (or leaves out) stays where it put it, when there are several
        base = [n for n in chosen if n != "decode_status" and (n != "root" or several_roots)]
        if any(row.get("decode_status") not in (None, "ok") for row in rows):
            base.append("decode_status")
        if several_roots and "root" not in base and not explicit:
            base.append("root")
        names = [n for n in base if n not in text] + [n for n in base if n in text]  # free text last
    kinds = {c.name: c.kind for c in declared}
    columns = []
    for name in dict.fromkeys(names):
        form, header = forms.get(name, (None, name.replace("_", " ")))
        header = (headers or {}).get(name, header) if not wide else header
        columns.append(_Column(name, header, kinds[name], key=name == key, text=name in text, form=form))
    shown = {c.name for c in columns}
    left = [c.name for c in declared if c.name not in shown and c.name not in ("decode_status", "root")]
    return columns, left


def _shown_value(value: Any, column: _Column, now_secs: float) -> str:
    """A cell's text: the value as stored, or in its column's human form."""
    if value is None or column.form is None:
        return _cell_text(value)
    if column.form == "count":  # a list shown by its length: a supervisor's used slots
        return str(len(value)) if isinstance(value, list) else _cell_text(value)
    seconds = _seconds(value, column.name)
    if column.form == "age":
        return duration_text(now_secs - seconds) if seconds is not None else _cell_text(value)
    if column.form == "duration":
        return duration_text(seconds) if seconds is not None else _cell_text(value)
    if column.form == "clock" and seconds is not None:
        from datetime import UTC, datetime

        return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%d %H:%M}"
    return _cell_text(value)


def _seconds(value: Any, name: str) -> float | None:
    """Seconds (since the epoch, or of a duration) in a field, by the unit its name says."""
    from .units import parse_utc

    if isinstance(value, str):  # a datetime, as to_jsonable wrote it
        try:
            return parse_utc(value).timestamp()
        except ValueError:
            return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return value / 1000 if name.endswith("_ms") else float(value)


def record_table(
    records: Sequence[Any],
    record_type: type,
    *,
    title: str | None = None,
    width: int | None = None,
    wide: bool = False,
    now_secs: float | None = None,
    leading: Sequence[str] | None = None,
    one_line: bool = False,
    grouped_by: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """``records`` for a terminal ``width`` columns wide.

    One record is shown vertically, every field on a line of its own (as psql's ``\\x``), unless its type
    lists one line per thing (``TABLE_ONE_LINE``: partitions, as ``kafka-topics --describe``). More are a
    table, laid out by one rule: the columns ``table_layout`` offers, in priority order, each at its
    natural width and added only if it fits whole; the key column always, never cut (it wraps where the
    terminal is narrower than the name); free text last, in the room left, wrapped. What is left out is
    named under the table. ``wide`` (or no width) offers every field, folding long values; machine
    formats never pass through here. A type whose rows are of several sorts, each read for other
    columns (spouts and bolts; subtrees, record kinds and the largest znodes), is a table per sort
    (``TABLE_GROUPS``: the field that tells them, and each sort's title and columns)."""
    import time

    from rich.table import Table
    from rich.text import Text

    groups = getattr(record_type, "TABLE_GROUPS", None)
    if groups is not None and not wide and leading is None and len(records) > 1:
        return _grouped_tables(records, record_type, groups, title=title, width=width, now_secs=now_secs)
    if len(records) == 1 and not (one_line or getattr(record_type, "TABLE_ONE_LINE", False)):
        return vertical_record(records[0], title=title)
    rows = [to_jsonable(record) for record in records]
    now = time.time() if now_secs is None else now_secs
    offered, left = table_layout(record_type, rows, wide=wide or width is None, leading=leading, headers=headers)
    cells = {c.name: [_shown_value(row[c.name], c, now) for row in rows] for c in offered}
    fit = width is not None and not wide
    kept = _fitted(offered, cells, width) if fit and width is not None else {c.name: None for c in offered}
    hidden = [name for name in [c.name for c in offered if c.name not in kept] + left if name != grouped_by]
    notes = []
    odd = sum(1 for row in rows if row.get("decode_status") not in (None, "ok"))
    if odd and not wide:
        notes.append(f"{odd} of {len(rows)} rows not decoded whole (decode status)")
    if hidden:
        notes.append(f"{len(hidden)} more: {', '.join(hidden)} (--wide shows them, -f json every field)")
    caption = Text("; ".join(notes)) if notes else None
    table = Table(title=_plain(title), caption=caption, show_lines=False, header_style="bold")
    for column in offered:
        if column.name not in kept:
            continue
        justify: Any = "right" if column.kind in ("int", "float") and column.form is None else "left"
        # Spaces instead of underscores give rich word breaks in headers ("num workers" wraps cleanly).
        header = Text(column.header, no_wrap=False, overflow="fold")
        if not fit:
            table.add_column(header, justify=justify, overflow="fold", max_width=CELL_WIDTH if wide else None)
        elif column.key or (column.text and (kept[column.name] or 0) >= _WRAPPED_TEXT):
            # wraps rather than cuts: a name whole, an explanation read through where it has the room
            table.add_column(header, justify=justify, width=kept[column.name], overflow="fold")
        else:
            table.add_column(header, justify=justify, width=kept[column.name], no_wrap=True, overflow="ellipsis")
    shown = [c for c in offered if c.name in kept]
    cut = {c.name for c in shown if c.text and fit and (kept[c.name] or 0) < _WRAPPED_TEXT}
    for i in range(len(rows)):  # free text in a narrow column: one line, ending in "…"
        table.add_row(
            *(
                Text(cells[c.name][i], overflow="ellipsis", no_wrap=True)
                if c.name in cut
                else Text(cells[c.name][i], overflow="fold")
                for c in shown
            )
        )
    return table


def _grouped_tables(
    records: Sequence[Any],
    record_type: type,
    groups: tuple[str, dict[Any, tuple[Any, ...]]],
    *,
    title: str | None,
    width: int | None,
    now_secs: float | None,
) -> Any:
    """A table per sort of row (``TABLE_GROUPS``: field → {sort: (title, columns[, headers])}), each with its
    own title, columns and headers, in the order the groups are declared; rows of a sort not declared go
    to a last table of the type's own columns."""
    from rich.console import Group
    from rich.text import Text

    field, sorts = groups
    parts: list[Any] = [_plain(title)] if title else []
    seen: set[Any] = set()
    for sort, (heading, leading, *headers) in sorts.items():
        rows = [r for r in records if getattr(r, field) == sort]
        seen.add(sort)
        if rows:
            table = record_table(
                rows,
                record_type,
                width=width,
                now_secs=now_secs,
                leading=leading,
                one_line=True,
                grouped_by=field,
                headers=headers[0] if headers else None,
            )
            parts.append(Text(visible(f"{heading} ({len(rows)})"), style="bold"))
            parts.append(table)
    rest = [r for r in records if getattr(r, field) not in seen]
    if rest:
        leading = getattr(record_type, "TABLE_COLUMNS", ())
        parts.append(record_table(rest, record_type, width=width, now_secs=now_secs, leading=leading, one_line=True))
    return Group(*parts)


def _fitted(columns: Sequence[_Column], cells: dict[str, list[str]], width: int) -> dict[str, int | None]:
    """Column name → width, by the layout rule, for a table ``width`` columns wide with its borders (3 per
    column, 1 at the end). Each column needs its natural width: its widest value whole, and its header's
    longest word (headers wrap between words). In priority order, a column is kept if it fits whole
    (the key always: where the terminal is narrower than the name, the name wraps); free text is placed
    last, in what is left, if that is at least ``_LEAST_TEXT`` wide."""

    def natural(column: _Column) -> int:
        longest_word = max((len(w) for w in column.header.split()), default=1)
        return max([longest_word, *(len(v) for v in cells[column.name])])

    kept: dict[str, int | None] = {}
    used = 1
    for column in columns:
        if column.text:
            continue
        need = natural(column)
        if column.key and used + need + 3 > width:  # a name wider than the terminal wraps, and leaves
            room = width - used - 3  # room for the figures beside it; names that fit stay whole
            fitting = [len(v) for v in cells[column.name] if len(v) <= room - _BESIDE_A_WRAPPED_KEY // 3]
            need = max(room - _BESIDE_A_WRAPPED_KEY, *fitting, min(16, room))
        elif used + need + 3 > width:
            continue
        kept[column.name] = need
        used += need + 3
    for column in columns:
        if column.text and width - used - 3 >= _LEAST_TEXT:
            kept[column.name] = min(natural(column), width - used - 3)
            used += (kept[column.name] or 0) + 3
    room = width - used
    for column in columns:  # room to spare: headers on one line, the leading columns' first
        if column.name in kept and not column.text and room > 0:
            grow = max(0, min(room, len(column.header) - (kept[column.name] or 0)))
            kept[column.name] = (kept[column.name] or 0) + grow
            room -= grow
    return {c.name: kept[c.name] for c in columns if c.name in kept}  # in priority order


_LEAST_TEXT = 12  # free text narrower than this is left to --wide
_WRAPPED_TEXT = 24  # free text narrower than this is cut to one line: a column of words is unreadable
_BESIDE_A_WRAPPED_KEY = 24  # columns kept for the rest of a row whose name wraps anyway


def vertical_record(record: Any, *, title: str | None = None) -> Table:
    """One record as field, value lines: every field, long values folded (each value on one line: a
    newline in it is shown as ``\\n``, as in a table)."""
    table = key_value_table(to_jsonable(record).items())
    table.title = _plain(title)
    return table


def key_value_table(pairs: Iterable[tuple[str, Any]]) -> Table:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in pairs:
        table.add_row(_plain(key), _cell(value))
    return table


def znode_detail(detail: Any, *, raw: bool, width: int, wide: bool) -> Any:
    """``get``'s znode for a terminal (``model.ZnodeDetail``): its stat, then a table (or the fields) of each
    kind of record decoded from it, its plain value when nothing decoded it, and with ``raw`` its hexdump;
    a secret's value and bytes hidden as the detail says."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [key_value_table(to_jsonable(detail.znode).items())]
    for kind in dict.fromkeys(type(r) for r in detail.records):
        rows = [r for r in detail.records if type(r) is kind]
        parts.append(record_table(rows, kind, title=kind.__name__, width=width, wide=wide))
    if detail.redacted and not detail.records:
        parts.append(Text("value: (redacted: this znode holds secrets; add --show-secrets)"))
    elif detail.redacted:
        parts.append(Text("(secret values redacted: add --show-secrets to see them)"))
    elif detail.value is not None:
        parts.append(value_text(detail.value))
    raw_hex = detail.raw_hex() if raw else None
    if raw and not detail.redacted and detail.data:
        parts.append(hexdump_text(detail.data))
    elif raw_hex:
        parts.append(Text(raw_hex))
    return Group(*parts)


def value_text(value: Any) -> Text:
    """``get``'s value of a znode no decoder claims: its text, or its JSON indented, on as many lines as
    it has (control characters shown as escapes; JSON's own escaping leaves C1 and bidi controls)."""
    import json

    return _lines(value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False))


def hexdump_text(data: bytes, limit: int = 4096) -> Text:
    """``hexdump`` as a renderable (its text column shows printable ASCII only)."""
    return _lines(hexdump(data, limit))


def hexdump(data: bytes, limit: int = 4096) -> str:
    lines = []
    for offset in range(0, min(len(data), limit), 16):
        chunk = data[offset : offset + 16]
        hexpart = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08x}  {hexpart:<47}  {text}")
    if len(data) > limit:
        lines.append(f"… {len(data) - limit} more bytes")
    return "\n".join(lines)


def errors_table(
    errors: Sequence[Any], now_secs: float, *, full: bool = False, title: str | None = None, width: int = 120
) -> Table:
    """Stored Storm errors, newest first: component, UTC time, age, worker, message. ``full`` shows each
    whole trace on its lines; otherwise its first line, cut to the width left."""
    from rich.table import Table

    table = Table(title=_plain(title), header_style="bold", show_lines=full)
    workers = [visible(f"{e.host}:{e.port}") if e.host else "" for e in errors]
    components = [visible(e.component) for e in errors]
    widths = {
        "component": max((len(c) for c in components), default=9),
        "time (UTC)": 19,
        "age": max((len(duration_text(now_secs - e.time_secs)) for e in errors), default=3),
        "worker": min(max((len(w) for w in workers), default=6), 40),
    }
    widths = {name: max(w, len(name)) for name, w in widths.items()}

    def left() -> int:  # each column costs 3 characters (separator and padding), and the closing border 1
        return width - sum(widths.values()) - 3 * (len(widths) + 1) - 1

    # A narrow terminal (80 columns): the UTC time goes first (the age says when; -f json has the time),
    # then the message down to its first 10 characters (the exception's package: -f json or a wider
    # terminal has it whole), so that the worker's host and port stay whole; only then does the worker
    # give way.
    if left() < 24:
        del widths["time (UTC)"]
    if left() < 10:
        widths["worker"] = max(12, widths["worker"] - (10 - left()))
    budget = max(left(), 8)
    for name, column_width in widths.items():
        table.add_column(name, no_wrap=True, width=column_width, overflow="ellipsis")
    # One line per error when scanning: the message gets the width the other columns leave (rich will not
    # shrink a no-wrap column below its content, so cut it here); --full shows whole traces, folded.
    table.add_column("error" if full else "first line", overflow="fold", no_wrap=not full)
    for e, component, worker in zip(errors, components, workers, strict=True):
        marker = "" if e.sequence is not None else " (last-error)"
        cells: list[Text | str | None] = [_plain(component)]
        if "time (UTC)" in widths:
            cells.append(f"{e.error_at:%Y-%m-%d %H:%M:%S}")
        table.add_row(
            *cells,
            duration_text(now_secs - e.time_secs),
            _plain(worker),
            # Tabs expanded here: rich measures a tab as one cell but draws it as eight, so a trace's
            # "\tat …" frames would be folded even where the terminal has room for them.
            _lines((e.error + marker).expandtabs(4)) if full else _plain(_cut(visible(e.first_line) + marker, budget)),
        )
    return table


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def kafka_health(
    summary: Sequence[Any], findings: Sequence[Any], *, root: str, detail: bool, width: int, wide: bool
) -> Any:
    """``kafka health`` for a terminal: the summary by rule (``findings_summary_table``), then with ``detail``
    every finding as a table of the ``KafkaFinding`` records."""
    from rich.console import Group

    from .records import KafkaFinding

    title = f"{len(findings)} findings under {root}, by rule"
    parts: list[Any] = [findings_summary_table(summary, title=title, width=width)]
    if detail:
        parts.append(record_table(findings, KafkaFinding, width=width, wide=wide))
    return Group(*parts)


def findings_summary_table(summary: Sequence[Any], *, title: str | None = None, width: int | None = None) -> Table:
    """``kafka health``'s lead: one row per rule. From 100 columns up, the explanation gets the width
    that is left (rule names and counts never wrap, the topics column stays narrow); narrower, each
    rule is one cell of its name, explanation and most affected subjects, beside its level and count."""
    from rich.table import Table

    rows = []
    for row in summary:
        brokers = (
            [f"{plural(len(row.brokers), 'broker', counted=False)} {','.join(map(str, row.brokers))}"]
            if row.brokers
            else []
        )
        rows.append((row, [*row.topics, *brokers]))
    if width is not None and width < 100:
        table = Table(title=_plain(title), header_style="bold", show_lines=True)
        table.add_column("level", no_wrap=True)
        table.add_column("count", justify="right", no_wrap=True)
        table.add_column("finding", ratio=1, overflow="fold")
        for row, affected in rows:
            cell = _plain(row.finding)
            assert cell is not None
            cell.stylize("bold")
            cell.append("\n" + visible(row.explanation), style="")
            if affected:
                cell.append("\nmost affected: " + visible(", ".join(affected)), style="")
            table.add_row(_plain(row.level), str(row.count), cell)
        return table
    table = Table(title=_plain(title), header_style="bold", expand=False)
    table.add_column("level", no_wrap=True)
    table.add_column("finding", no_wrap=True, overflow="ellipsis")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("most affected", max_width=30, overflow="fold")
    table.add_column("explanation", ratio=1, overflow="fold")
    for row, affected in rows:
        table.add_row(
            _plain(row.level),
            _plain(row.finding),
            str(row.count),
            _lines("\n".join(visible(a) for a in affected)),
            _plain(row.explanation),
        )
    return table


_CHANGE_MARK = {"appeared": ("+", "bold"), "cleared": ("-", "green"), "changed": ("~", "yellow")}
_LEVEL_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def watch_line(change: Any) -> Text:
    """One ``--watch`` change: time, +/-/~, level, subject and detail (values literal)."""
    from rich.text import Text

    mark, style = _CHANGE_MARK.get(change.change, ("?", ""))
    line = Text(f"{change.at:%H:%M:%S} ")
    line.append(f"{mark} {change.change:<8} ", style=style)
    line.append(f"{visible(change.level):<7} ", style=_LEVEL_STYLE.get(change.level, ""))
    line.append(visible(change.subject))
    line.append(f": {visible(change.detail)}")
    if change.was is not None:
        line.append(f" (was {visible(str(change.was))})", style="dim")
    return line


def diff_table(diffs: Sequence[Any], *, title: str) -> Table:
    """``zkstorm diff``: per table, rows before and after, added and removed (unchanged tables dimmed)."""
    from rich.table import Table

    table = Table(title=_plain(title), header_style="bold")
    for column in ("table", "rows before", "rows after", "added", "removed"):
        table.add_column(column, justify="left" if column == "table" else "right")
    for d in diffs:
        style = None if d.added or d.removed else "dim"
        table.add_row(_plain(d.table), f"{d.rows_a:,}", f"{d.rows_b:,}", f"{d.added:,}", f"{d.removed:,}", style=style)
    return table


def history_summary(
    heading: str, metrics: Sequence[tuple[str, str, int, str]], incidents: Sequence[str], incidents_heading: str
) -> Any:
    """``zkstorm history``'s summary: its heading, one row per metric (system, metric, rows, what it
    shows) and the newest incidents, one line each. Their text comes from snapshots of ZooKeeper (topology
    and topic names in an incident's summary), so it enters as every value does."""
    from rich.console import Group
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", expand=False)
    for name in ("system", "metric", "rows", "what it shows"):
        table.add_column(name, justify="right" if name == "rows" else "left")
    for system, title, rows, line in metrics:
        table.add_row(_plain(system), _plain(title), f"{rows:,}", _plain(line))
    parts: list[Any] = [_plain(heading), table, _plain(incidents_heading)]
    parts += [_plain(line) for line in incidents]
    return Group(*parts)


def plain_lines(lines: Iterable[str]) -> str:
    """Lines of words (``changes``' summary), each ZooKeeper text in them escaped; written whole, never
    wrapped or cut to the terminal's width: a line is one event, read and grepped whole."""
    return "".join(visible(line) + "\n" for line in lines)
