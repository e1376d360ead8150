"""The nightly side: ``zkstorm snapshot`` (every record of one walk to Parquet), ``zkstorm diff`` (two
snapshots, or one and the source now) and ``zkstorm history`` (the PySpark job over the snapshots).
Options, one call to the library's entry point (``export.parquet``, ``export.diff``, ``jobs.history``),
one emit."""

from __future__ import annotations

import dataclasses
import sys
import time
from datetime import UTC, datetime
from typing import Any

import click

from ..defaults import LOCK_STALE_AFTER_SECS
from ..errors import UsageError
from ..output import Format, Shown
from ..units import duration_text
from .app import cli
from .context import Settings, emit, finish, start_progress, stdout_console
from .options import Duration, UtcTime, format_option, stale_after_option


@cli.command()
@click.argument("out")
@click.option(
    "--cluster",
    "cluster_name",
    envvar="ZKSTORM_CLUSTER",
    default=None,
    help="Cluster name stored in every row (default: the first --zk host; this host with --from-files).",
)
@click.option(
    "--snapshot-id", default=None, help="Default CLUSTER@YYYY-MM-DD (UTC): one snapshot a day; a re-run replaces it."
)
@click.option(
    "--snapshot-time",
    type=UtcTime(),
    default=None,
    help="Record the snapshot as taken at this ISO time instead of now (backfilling from old backups).",
)
@click.option("--keep-days", type=click.IntRange(1), default=None, help="Delete snapshots older than N days.")
@stale_after_option
@click.option(
    "--lock-stale-after",
    "lock_stale_after_secs",
    type=Duration(),
    envvar="ZKSTORM_LOCK_STALE_AFTER",
    default=duration_text(LOCK_STALE_AFTER_SECS),
    show_default=True,
    help="Take over OUT/_lock of another host once it is this old (a snapshot's longest plausible run); "
    "a lock of this host is taken over as soon as its process is gone.",
)
@click.pass_obj
def snapshot(
    settings: Settings,
    out: str,
    cluster_name: str | None,
    snapshot_id: str | None,
    snapshot_time: datetime | None,
    keep_days: int | None,
    stale_after_secs: float,
    lock_stale_after_secs: float,
) -> None:
    """Export every decoded record of one walk to Parquet under OUT (a path or a pyarrow filesystem URI),
    one dataset per record type, partitioned by snapshot_date. Secrets stay redacted; --show-secrets does
    not apply here. Cron-ready: atomic per snapshot (its manifest commits it), locked, idempotent per
    snapshot id; a failed or stopped run leaves the committed snapshot as it was."""
    from ..export.parquet import prune, take_snapshot

    if settings.show_secrets:
        click.echo("zkstorm: note: --show-secrets does not apply to snapshots; secrets stay redacted", err=True)
        settings.show_secrets = False
    at = snapshot_time or datetime.now(UTC)
    started = time.monotonic()
    with settings.cluster(verify_digest=True) as cluster:
        run = take_snapshot(
            cluster,
            out,
            name=cluster_name,
            snapshot_id=snapshot_id,
            at=at,
            stale_after_secs=stale_after_secs,
            lock_stale_after_secs=lock_stale_after_secs,
        )
    removed = prune(run.filesystem, run.base, keep_days, at.date()) if keep_days else []
    rows = sum(run.manifest["tables"].values())
    click.echo(
        f"zkstorm: snapshot {run.snapshot_id}: {run.znodes:,} znodes, {len(run.manifest['tables'])} tables, "
        f"{rows:,} rows, {run.failures} decode failures, {run.unreadable} unreadable -> {out} "
        f"({time.monotonic() - started:.1f}s{f', pruned {len(removed)} partitions' if removed else ''})",
        err=True,
    )
    finish(settings, notes=False)


@cli.command()
@click.argument("snapshots")
@click.argument("snapshot_a")
@click.argument("snapshot_b", required=False)
@click.option("--live", is_flag=True, help="Compare SNAPSHOT_A with the source as it is now (--zk or --from-files).")
@click.option("--table", "tables", multiple=True, help="Only these tables (repeatable).")
@format_option(Format.TABLE, Format.JSON, default=Format.TABLE)
@click.pass_obj
def diff(
    settings: Settings,
    snapshots: str,
    snapshot_a: str,
    snapshot_b: str | None,
    live: bool,
    tables: tuple[str, ...],
    fmt: Format,
) -> None:
    """What changed between two committed snapshots under SNAPSHOTS, per table: rows added and removed
    (a changed row counts once in each), with examples. SNAPSHOT_B or --live, not both."""
    from ..export.diff import TableDiff, diff_live, diff_snapshots
    from ..render import diff_table

    if live == (snapshot_b is not None):
        raise UsageError("give SNAPSHOT_B or --live (one of them)")
    only = set(tables) or None
    if live:
        settings.show_secrets = False  # a diff compares with snapshots, which never hold secrets
        with settings.cluster(verify_digest=True) as cluster:
            diffs = diff_live(cluster, snapshots, snapshot_a, tables=only)
    else:
        diffs = diff_snapshots(snapshots, snapshot_a, snapshots, snapshot_b or "", tables=only)
    title = f"{snapshot_a} -> {snapshot_b or 'live'}"
    document = [dataclasses.asdict(d) for d in diffs]

    def table(width: int, wide: bool) -> Any:
        return diff_table(diffs, title=title)

    emit(settings, fmt, Shown(diffs, TableDiff, table=table, document=document), notes=False)


@cli.command()
@click.argument("snapshots")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None, help="First day (UTC), inclusive.")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), default=None, help="Last day (UTC), inclusive.")
@click.option(
    "--out",
    default=None,
    help="Write each metric as a Parquet table under this path or URI, and keep what the next run builds on "
    "(it then reads only the snapshots committed since).",
)
@click.option("--html", "html_path", default=None, help="Write the report (self-contained HTML) here.")
@click.option("--full", is_flag=True, help="Rebuild from every snapshot even when --out holds an earlier history.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master.")
@click.option(
    "--changes",
    "changes_path",
    default=None,
    help="A changes dataset of the same period (zkstorm changes --out): incidents take their exact start "
    "and end from ZooKeeper's logs.",
)
def history(
    snapshots: str,
    since: datetime | None,
    until: datetime | None,
    out: str | None,
    html_path: str | None,
    full: bool,
    master: str,
    changes_path: str | None,
) -> None:
    """Cluster-health history over every committed snapshot under SNAPSHOTS (a PySpark job): error
    trends, flapping supervisors, restarts, ISR shrinks, under-replication, controller moves, growth.
    With --out holding an earlier run's history, only newer snapshots are read (incremental).
    On a cluster: spark-submit zkstorm/jobs/history.py with the same arguments (docs/history-on-a-cluster.md)."""
    from ..jobs.history import HistoryResult, run, summary

    result = run(
        master,
        snapshots,
        since=since.date() if since else None,
        until=until.date() if until else None,
        out=out,
        html=html_path,
        full=full,
        changes=changes_path,
        progress=start_progress("starting Spark"),
    )
    shown = Shown((), HistoryResult, table=lambda width, wide: summary(result))
    Format.TABLE.write(shown, sys.stdout, console=stdout_console())
    if html_path:
        click.echo(f"zkstorm: report written to {html_path}", err=True)
