"""Records → rich renderables (trees, tables, detail panels). Returns renderables; never prints.

Every value from ZooKeeper (ids, hosts, paths, error text, config values) enters rich as ``Text``, never
as a ``str``: rich reads ``[...]`` in a string as markup, and a component named ``enrich [geo]`` must
print as itself. ``_cell`` and ``_plain`` are the only ways values get in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from .records import Znode
from .schema import columns, to_jsonable


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
    label = Text(name, style="bold" if znode.num_children else "")
    if znode.num_children:
        label.append(f"  ({znode.num_children})", style="cyan")
    if znode.data_length and znode.encoding != "dir-marker":
        label.append(f"  {human_size(znode.data_length)}", style="dim")
    if znode.ephemeral:
        label.append("  ephemeral", style="magenta")
    if znode.summary:
        label.append(f"  {znode.summary}", style="green")
    elif znode.encoding not in ("empty", "dir-marker"):
        label.append(f"  {znode.encoding}", style="yellow")
    return label


def znode_tree(znodes: Iterable[Znode], unreadable: Iterable[Any] = ()) -> Tree | None:
    """A tree of the walked znodes, children in name order; unreadable nodes shown in red."""
    by_path: dict[str, Any] = {z.path: z for z in znodes}
    for item in unreadable:
        by_path.setdefault(item.path, item)
    if not by_path:
        return None
    top = min(by_path, key=lambda p: (p.count("/") if p != "/" else 0, p))
    nodes: dict[str, Tree] = {}
    for path in sorted(by_path, key=lambda p: p.split("/")):
        item = by_path[path]
        name = path if path == top else path.rsplit("/", 1)[1]
        label = (
            znode_label(item, name)
            if isinstance(item, Znode)
            else Text(f"{name}  unreadable: {item.reason}", style="red")
        )
        parent_path = path.rsplit("/", 1)[0] or "/"
        parent = nodes.get(parent_path) if path != top else None
        nodes[path] = parent.add(label) if parent is not None else Tree(label)
    return nodes[top]


def _cell(value: Any) -> Text:
    return Text(_cell_text(value))


def _plain(text: str | None) -> Text | None:
    """A title or caption that may hold ZooKeeper values, as literal text."""
    return None if text is None else Text(text)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str) and value.endswith("Z") and "T" in value[:11]:
        return value.replace("T", " ")  # ISO-8601 UTC from to_jsonable, easier on the eye
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # three decimals, as Storm's UI shows latencies and capacity; JSON and Parquet keep every digit
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


CELL_WIDTH = 48  # the widest a cell is drawn in a fitted table; longer values end in "…"


def record_table(
    records: Sequence[Any],
    record_type: type,
    *,
    title: str | None = None,
    only: Sequence[str] | None = None,
    width: int | None = None,
    wide: bool = False,
) -> Any:
    """``records`` for a terminal ``width`` columns wide.

    One record is shown vertically, every field on a line of its own (as psql's ``\\x``). More are a
    table of the ``only`` columns (else every column), in that order, which is also their priority: the
    leading columns that fit the width are kept, the rest named in the caption, and a long value ends
    in an ellipsis instead of wrapping into a column of letters. ``wide`` (or no width) shows every
    column, folding long values; machine formats never pass through here."""
    if len(records) == 1:
        return vertical_record(records[0], title=title)
    cols = columns(record_type)
    if only is not None:
        by_name = {c.name: c for c in cols}
        cols = tuple(by_name[name] for name in only)
    rows = [to_jsonable(record) for record in records]
    cells = [[_cell_text(row[c.name]) for c in cols] for row in rows]
    headers = [c.name.replace("_", " ") for c in cols]
    numeric = [c.kind in ("int", "float") for c in cols]
    widths = _fitted_widths(headers, cells, numeric, width) if width is not None and not wide else None
    fit = widths is not None
    kept = list(widths) if widths is not None else list(range(len(cols)))
    hidden = [col.name for i, col in enumerate(cols) if i >= len(kept)]  # kept is always a leading run
    caption = None
    if hidden:
        caption = Text(f"{len(hidden)} more: {', '.join(hidden)} (--wide shows them, -f json every field)")
    table = Table(title=_plain(title), caption=caption, show_lines=False, header_style="bold")
    for i in kept:
        justify: Any = "right" if cols[i].kind in ("int", "float") else "left"
        # Spaces instead of underscores give rich word breaks in headers ("num workers" wraps cleanly).
        header = Text(headers[i], no_wrap=False, overflow="fold")
        if widths is not None:
            table.add_column(header, justify=justify, width=widths[i], no_wrap=True, overflow="ellipsis")
        else:
            table.add_column(header, justify=justify, overflow="fold")
    for row_cells in cells:
        table.add_row(*(Text(row_cells[i], no_wrap=fit, overflow="ellipsis" if fit else "fold") for i in kept))
    return table


def _fitted_widths(
    headers: Sequence[str], cells: Sequence[Sequence[str]], numeric: Sequence[bool], width: int
) -> dict[int, int]:
    """Column index → width, for the leading columns that fit ``width`` with the table's borders (3 per
    column, 1 at the end); at least one column.

    A column needs at least its header's longest word (headers wrap between words) and at most its
    widest value, capped at ``CELL_WIDTH``; a number is never cut. Columns are taken in order while
    their least widths fit; the room left is then shared out, to the first columns first, up to what
    each would use."""
    natural = [min(CELL_WIDTH, max([len(h), *(len(row[i]) for row in cells)])) for i, h in enumerate(headers)]
    least = [
        max([len(w) for w in h.split()] + [len(row[i]) for row in cells])
        if numeric[i]
        else min(natural[i], max(4, *(len(word) for word in h.split())))
        for i, h in enumerate(headers)
    ]
    kept: dict[int, int] = {}
    used = 1
    for i in range(len(headers)):
        if kept and used + least[i] + 3 > width:
            break
        kept[i] = least[i]
        used += least[i] + 3
    room = max(0, width - used)
    for i in kept:
        grow = max(0, min(room, natural[i] - kept[i]))
        kept[i] += grow
        room -= grow
    return kept


def vertical_record(record: Any, *, title: str | None = None) -> Table:
    """One record as field, value lines: every field, long values folded."""
    table = key_value_table(to_jsonable(record).items())
    table.title = _plain(title)
    return table


def key_value_table(pairs: Iterable[tuple[str, Any]]) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in pairs:
        table.add_row(Text(key), value if isinstance(value, Text) else _cell(value))
    return table


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


def age(seconds: float | None) -> str:
    """A short human age: ``45s``, ``12m``, ``3h05m``, ``2d04h``."""
    if seconds is None:
        return ""
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


def errors_table(
    errors: Sequence[Any], now_secs: float, *, full: bool = False, title: str | None = None, width: int = 120
) -> Table:
    """Stored Storm errors, newest first: component, UTC time, age, worker, message."""
    table = Table(title=_plain(title), header_style="bold", show_lines=full)
    workers = [f"{e.host}:{e.port}" if e.host else "" for e in errors]
    widths = {
        "component": max((len(e.component) for e in errors), default=9),
        "time (UTC)": 19,
        "age": max((len(age(now_secs - e.time_secs)) for e in errors), default=3),
        "worker": min(max((len(w) for w in workers), default=6), 40),
    }
    widths = {name: max(w, len(name)) for name, w in widths.items()}
    # Five columns cost 3 characters each (separator and padding) plus the closing border.
    budget = width - sum(widths.values()) - 3 * (len(widths) + 1) - 1
    if budget < 24:  # a narrow terminal: the worker column gives way before the message does
        widths["worker"] = max(12, widths["worker"] - (24 - budget))
        budget = max(width - sum(widths.values()) - 3 * (len(widths) + 1) - 1, 8)
    for name, column_width in widths.items():
        table.add_column(name, no_wrap=True, width=column_width, overflow="ellipsis")
    # One line per error when scanning: the message gets the width the other columns leave (rich will not
    # shrink a no-wrap column below its content, so cut it here); --full shows whole traces, folded.
    table.add_column("error" if full else "first line", overflow="fold", no_wrap=not full)
    for e, worker in zip(errors, workers, strict=True):
        marker = "" if e.sequence is not None else " (last-error)"
        table.add_row(
            Text(e.component),
            f"{e.error_at:%Y-%m-%d %H:%M:%S}",
            age(now_secs - e.time_secs),
            Text(worker),
            # Tabs expanded here: rich measures a tab as one cell but draws it as eight, so a trace's
            # "\tat …" frames would be folded even where the terminal has room for them.
            Text((e.error + marker).expandtabs(4) if full else _cut(e.first_line + marker, budget)),
        )
    return table


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def findings_summary_table(summary: Sequence[Any], *, title: str | None = None, width: int | None = None) -> Table:
    """``kafka health``'s lead: one row per rule. From 100 columns up, the explanation gets the width
    that is left (rule names and counts never wrap, the topics column stays narrow); narrower, each
    rule is one cell of its name, explanation and most affected subjects, beside its level and count."""
    rows = []
    for row in summary:
        brokers = (
            [f"broker{'s' if len(row.brokers) > 1 else ''} {','.join(map(str, row.brokers))}"] if row.brokers else []
        )
        rows.append((row, [*row.topics, *brokers]))
    if width is not None and width < 100:
        table = Table(title=_plain(title), header_style="bold", show_lines=True)
        table.add_column("level", no_wrap=True)
        table.add_column("count", justify="right", no_wrap=True)
        table.add_column("finding", ratio=1, overflow="fold")
        for row, affected in rows:
            cell = Text(row.finding, style="bold")
            cell.append("\n" + row.explanation, style="")
            if affected:
                cell.append("\nmost affected: " + ", ".join(affected), style="")
            table.add_row(row.level, str(row.count), cell)
        return table
    table = Table(title=_plain(title), header_style="bold", expand=False)
    table.add_column("level", no_wrap=True)
    table.add_column("finding", no_wrap=True, overflow="ellipsis")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("most affected", max_width=30, overflow="fold")
    table.add_column("explanation", ratio=1, overflow="fold")
    for row, affected in rows:
        table.add_row(row.level, row.finding, str(row.count), Text("\n".join(affected)), Text(row.explanation))
    return table


_CHANGE_MARK = {"appeared": ("+", "bold"), "cleared": ("-", "green"), "changed": ("~", "yellow")}
_LEVEL_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def watch_line(change: Any) -> Text:
    """One ``--watch`` change: time, +/-/~, level, subject and detail (values literal)."""
    mark, style = _CHANGE_MARK.get(change.change, ("?", ""))
    line = Text(f"{change.at:%H:%M:%S} ")
    line.append(f"{mark} {change.change:<8} ", style=style)
    line.append(f"{change.level:<7} ", style=_LEVEL_STYLE.get(change.level, ""))
    line.append(change.subject)
    line.append(f": {change.detail}")
    if change.was is not None:
        line.append(f" (was {change.was})", style="dim")
    return line
