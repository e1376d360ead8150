"""``zkstorm tree`` and ``zkstorm get``: the tree as ZooKeeper holds it, and one znode in full."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from .app import Settings, cli, finish, format_option, log, stdout_console, stop_progress


@cli.command()
@click.argument("path", default="/")
@click.option("--depth", type=click.IntRange(0), default=None, help="Stop this many levels below PATH.")
@format_option("tree", "json", "jsonl", "csv", default="tree")
@click.pass_obj
def tree(settings: Settings, path: str, depth: int | None, fmt: str, as_json: bool) -> None:
    """Walk the tree from PATH: child counts, sizes, ephemeral nodes, decoded summaries."""
    from ..records import Znode

    fmt = "json" if as_json else fmt
    started = time.monotonic()
    with settings.cluster() as cluster:
        records = cluster.tree(path, depth=depth)
        if fmt == "tree":
            from ..records import Unreadable
            from ..render import znode_tree

            everything = list(records)
            rendered = znode_tree(
                [r for r in everything if isinstance(r, Znode)], [r for r in everything if isinstance(r, Unreadable)]
            )
            if rendered is not None:
                stdout_console().print(rendered)
        else:
            from ..output import emit

            if sys.stdout.isatty():  # the lines themselves show the progress
                stop_progress()
            emit(records, fmt, sys.stdout, primary=Znode)
    stats = cluster.stats
    log.info(
        "walked %d znodes in %.2fs (%d requests, %d vanished, %d unreadable, %d retries)",
        stats.znodes,
        time.monotonic() - started,
        stats.requests,
        stats.vanished,
        stats.unreadable,
        stats.retries,
    )
    finish(settings, notes=False)


@cli.command()
@click.argument("path")
@click.option("--raw", is_flag=True, help="Add a hexdump of the bytes.")
@format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def get(settings: Settings, path: str, raw: bool, fmt: str, as_json: bool) -> None:
    """Show one znode: its stat, encoding and decoded value.

    JSON is one document (znode, records, value); JSONL one object per line (the znode, then each decoded
    record); CSV one row per decoded record with the znode's stat columns first (one row with a value
    column when nothing decodes it)."""
    fmt = "json" if as_json else fmt
    with settings.cluster() as cluster:
        detail = cluster.get(path)
    raw_hex = None
    if raw and detail.znode.data_length:
        raw_hex = (
            "(hidden: this znode holds secrets; add --show-secrets)" if detail.redacted else (detail.data or b"").hex()
        )
    stop_progress()
    if fmt == "json":
        import json

        from ..schema import kind_name, to_jsonable

        document = {
            "znode": to_jsonable(detail.znode),
            "records": [{"kind": kind_name(type(r)), **to_jsonable(r)} for r in detail.records],
            "value": detail.value,
            "redacted": detail.redacted and not detail.records,
            "raw_hex": raw_hex,
        }
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
    elif fmt == "jsonl":
        from ..output import emit
        from ..records import Znode

        emit([detail.znode, *detail.records], "jsonl", sys.stdout, primary=Znode)
    elif fmt == "csv":
        from ..output import emit_flat

        header, rows = detail.flat()
        emit_flat(header, rows, sys.stdout)
    else:
        _print_get_table(detail, raw, raw_hex, wide=settings.wide)
    finish(settings, notes=False)


def _print_get_table(detail: Any, raw: bool, raw_hex: str | None, *, wide: bool) -> None:
    from ..render import hexdump_text, key_value_table, record_table, value_text
    from ..schema import to_jsonable

    console = stdout_console()
    console.print(key_value_table(to_jsonable(detail.znode).items()))
    for kind in dict.fromkeys(type(r) for r in detail.records):
        rows = [r for r in detail.records if type(r) is kind]
        console.print(record_table(rows, kind, title=kind.__name__, width=console.width, wide=wide))
    if detail.redacted and not detail.records:
        console.print("value: (redacted: this znode holds secrets; add --show-secrets)")
    elif detail.redacted:
        console.print("(secret values redacted: add --show-secrets to see them)")
    elif detail.value is not None:
        console.print(value_text(detail.value))
    if raw and not detail.redacted and detail.data:
        console.print(hexdump_text(detail.data))
    elif raw_hex:
        console.print(raw_hex, markup=False)
