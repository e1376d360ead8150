"""``zkstorm changes``: what changed in Storm and Kafka, and when, from ZooKeeper's transaction logs.
Options, one call into the library (``Cluster.changes``), one emit (or, with ``--out``, one export)."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta
from typing import Any

import click

from ..errors import ExitCode, UsageError
from ..output import VIEW_FORMATS, Format, Shown
from ..units import OutOfRange, parse_duration, parse_utc, parse_zxid
from .app import cli
from .context import Settings, emit, say, stop_progress
from .options import Duration, format_option

_ZXID = re.compile(r"0[xX][0-9a-fA-F]+|[-+]?\d+")
# A number with or without a unit: a duration (or a zxid) whatever else is wrong with it (-2h, 1e400d, nan)
_NUMBER = re.compile(r"[-+]?(\d[\d.]*([eE][-+]?\d+)?|\.\d+|nan|inf(inity)?)[smhdw]?", re.IGNORECASE)


def _bound(value: str | None, option: str) -> int | datetime | timedelta | None:
    """A window end: a zxid (``0x1c8`` or decimal), a duration back from the last logged txn (``2h``),
    or an ISO time (UTC unless it says otherwise). Each is checked where it is read (``units``): a
    negative, infinite or ten-thousand-year duration and a zxid past a long are usage errors, never an empty
    window or everything."""
    if value is None:
        return None
    text = value.strip()
    try:
        if _ZXID.fullmatch(text):
            return parse_zxid(text)
        if _NUMBER.fullmatch(text):
            return timedelta(seconds=parse_duration(text))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None
    try:
        return parse_utc(text)
    except OutOfRange as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a zxid (0x1c8), a duration (2h) or an ISO time (2026-01-21T03:12Z)",
            param_hint=option,
        ) from None


@cli.command()
@click.option(
    "--since",
    default=None,
    help="Start: a zxid (0x1c8; with --from-kraft a log offset), an ISO time, or a duration back from the last txn.",
)
@click.option("--until", default=None, help="End (inclusive), as --since. Default: the end of the logs.")
@click.option("--detail", is_flag=True, help="After the summary, every change, one line each.")
@click.option("--kind", "kinds", multiple=True, help="Only changes of this kind (kafka_broker_gone, storm_*).")
@click.option("--topic", "topics", multiple=True, help="Only changes of this Kafka topic.")
@click.option("--topology", "topologies", multiple=True, help="Only changes of this topology (id or name).")
@click.option("--broker", "brokers", type=int, multiple=True, help="Only changes naming this broker id.")
@click.option("--path", "paths", multiple=True, help="Only znodes at or under this path (or matching a pattern).")
@click.option(
    "--stale-after",
    type=Duration(),
    default="30s",
    show_default=True,
    help="A worker silent this long has gone stale.",
)
@click.option("--out", default=None, help="Write the changes as Parquet under this path or URI, a table per kind.")
@click.option("--cluster", "cluster_name", envvar="ZKSTORM_CLUSTER", default=None, help="Cluster name for --out.")
@click.option("--snapshot-id", default=None, help="Run id for --out (default CLUSTER@YYYY-MM-DD, as snapshot's).")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def changes(
    settings: Settings,
    since: str | None,
    until: str | None,
    detail: bool,
    kinds: tuple[str, ...],
    topics: tuple[str, ...],
    topologies: tuple[str, ...],
    brokers: tuple[int, ...],
    paths: tuple[str, ...],
    stale_after: float,
    out: str | None,
    cluster_name: str | None,
    snapshot_id: str | None,
    fmt: Format,
) -> None:
    """What changed in Storm and Kafka between --since and --until, to the millisecond, from ZooKeeper's
    transaction logs (--from-files DATADIR) or a KRaft metadata log (--from-kraft DIR: the same change
    kinds, a record batch's append time as the moment; --since/--until as a number are log offsets): a
    summary first, then (--detail) every change; -f json, jsonl or csv for the change records; --out for
    Parquet. A damaged log exits 7 (--best-effort: what was readable)."""
    from ..model import ChangeFilter

    if not settings.from_files and not settings.from_kraft:
        raise UsageError(
            "changes reads ZooKeeper's transaction logs or a KRaft metadata log: give --from-files DATADIR "
            "or --from-kraft DIR"
        )
    if settings.at is not None or settings.at_zxid is not None or settings.at_offset is not None:
        raise UsageError("--at, --at-zxid and --at-offset choose one state to read; changes takes --since and --until")
    select = ChangeFilter(kinds=kinds, topics=topics, topologies=topologies, brokers=brokers, paths=paths)
    cluster = settings.cluster()  # not opened: the changes read the files their own way
    log = cluster.changes(
        since=_bound(since, "--since"),
        until=_bound(until, "--until"),
        stale_after_secs=stale_after,
        select=select,
    )
    if out:
        _write(log, out, cluster_name, snapshot_id)
    else:
        emit(settings, fmt, _shown(log, fmt, kinds, detail=detail))
    _finish(settings, log)


def _shown(log: Any, fmt: Format, kinds: tuple[str, ...], *, detail: bool) -> Shown:
    """A terminal's lines (the window, the summary, ``--detail``'s every change); else the records."""
    from ..render import plain_lines

    records, primary = log.rows(kinds, csv=fmt is Format.CSV)
    table = (lambda width, wide: plain_lines(log.terminal_lines(detail=detail))) if fmt is Format.TABLE else None
    return Shown(records, primary, table=table)


def _write(log: Any, out: str, cluster_name: str | None, snapshot_id: str | None) -> None:
    from ..export.changes import write_changes

    manifest = write_changes(log, log, out, cluster=cluster_name, snapshot_id=snapshot_id)
    stop_progress()
    rows = sum(manifest["tables"].values())
    click.echo(
        f"zkstorm: changes {manifest['snapshot_id']}: {rows:,} changes in {len(manifest['tables'])} tables, "
        f"{log.stats.txns:,} txns -> {out}",
        err=True,
    )


def _finish(settings: Settings, log: Any) -> None:
    """What a best-effort read left out, on stderr; exit 5 with --strict if anything was."""
    stop_progress()
    for problem in log.problems:
        say(f"warning: {problem}")
    if log.stats.unknown_before:
        say(
            f"note: {log.stats.unknown_before:,} changes right after the snapshot were read without their state "
            "before (the snapshot was written while they happened)"
        )
    if log.problems and settings.strict:
        sys.exit(ExitCode.DECODE_FAILURES)
