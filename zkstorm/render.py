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


def record_table(
    records: Sequence[Any], record_type: type, *, title: str | None = None, only: Sequence[str] | None = None
) -> Table:
    """A table of ``records``: every column, or the ``only`` ones in that order."""
    table = Table(title=_plain(title), show_lines=False, header_style="bold")
    cols = columns(record_type)
    if only is not None:
        by_name = {c.name: c for c in cols}
        cols = tuple(by_name[name] for name in only)
    for col in cols:
        # Spaces instead of underscores give rich word breaks in headers ("num workers" wraps cleanly).
        table.add_column(
            col.name.replace("_", " "), overflow="fold", justify="right" if col.kind in ("int", "float") else "left"
        )
    for record in records:
        row = to_jsonable(record)
        table.add_row(*(_cell(row[c.name]) for c in cols))
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


def findings_summary_table(summary: Sequence[Any], *, title: str | None = None) -> Table:
    """``kafka health``'s lead: one row per rule, the explanation given the width that is left (rule
    names and counts never wrap, the topics column stays narrow)."""
    table = Table(title=_plain(title), header_style="bold", expand=False)
    table.add_column("level", no_wrap=True)
    table.add_column("finding", no_wrap=True, overflow="ellipsis")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("most affected", max_width=30, overflow="fold")
    table.add_column("explanation", ratio=1, overflow="fold")
    for row in summary:
        brokers = (
            [f"broker{'s' if len(row.brokers) > 1 else ''} {','.join(map(str, row.brokers))}"] if row.brokers else []
        )
        table.add_row(
            row.level, row.finding, str(row.count), Text("\n".join([*row.topics, *brokers])), Text(row.explanation)
        )
    return table
