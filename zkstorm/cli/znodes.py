"""``zkstorm tree`` and ``zkstorm get``: the tree as ZooKeeper holds it, and one znode in full."""

from __future__ import annotations

import time
from functools import partial

import click

from ..output import Format, Shown
from .app import cli, log
from .context import Settings, emit
from .options import format_option


@cli.command()
@click.argument("path", default="/")
@click.option("--depth", type=click.IntRange(0), default=None, help="Stop this many levels below PATH.")
@format_option(Format.TREE, Format.JSON, Format.JSONL, Format.CSV, default=Format.TREE)
@click.pass_obj
def tree(settings: Settings, path: str, depth: int | None, fmt: Format) -> None:
    """Walk the tree from PATH: child counts, sizes, ephemeral nodes, decoded summaries."""
    from ..records import Znode  # inside the command: zkstorm --help stays fast

    started = time.monotonic()
    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.tree(path, depth=depth), Znode), notes=False)
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


@cli.command()
@click.argument("path")
@click.option("--raw", is_flag=True, help="Add a hexdump of the bytes.")
@format_option(Format.TABLE, Format.JSON, Format.JSONL, Format.CSV, default=Format.TABLE)
@click.pass_obj
def get(settings: Settings, path: str, raw: bool, fmt: Format) -> None:
    """Show one znode: its stat, encoding and decoded value.

    JSON is one document (znode, records, value); JSONL one object per line (the znode, then each decoded
    record); CSV one row per decoded record with the znode's stat columns first (one row with a value
    column when nothing decodes it)."""
    from ..records import Znode
    from ..render import znode_detail

    with settings.cluster() as cluster:
        detail = cluster.get(path)
    shown = Shown(
        [detail.znode, *detail.records],
        Znode,
        table=partial(znode_detail, detail, raw=raw),
        document=detail.document(raw=raw),
        flat=detail.flat(),
    )
    emit(settings, fmt, shown, notes=False)
