"""``zkstorm snapshot`` (the nightly export to Parquet), ``zkstorm history`` (the PySpark job over the
snapshots) and ``zkstorm diff``: options, one library call, one emit."""

from __future__ import annotations

import time
from typing import Any

import click

from ..errors import UsageError, ZkstormError
from .app import Settings, cli, finish, format_option, parse_duration, start_progress, stdout_console


def _utc_time(value: str) -> Any:
    from datetime import datetime, timezone

    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO time (2026-11-21T02:30:00Z)") from None
    return parsed.replace(tzinfo=parsed.tzinfo or timezone.utc).astimezone(timezone.utc)


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
    default=None,
    help="Record the snapshot as taken at this ISO time instead of now (backfilling from old backups).",
)
@click.option("--keep-days", type=click.IntRange(1), default=None, help="Delete snapshots older than N days.")
@click.option("--stale-after", default="30s", show_default=True, help="Worker heartbeat staleness threshold.")
@click.option(
    "--lock-stale-after",
    envvar="ZKSTORM_LOCK_STALE_AFTER",
    default="6h",
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
    snapshot_time: str | None,
    keep_days: int | None,
    stale_after: str,
    lock_stale_after: str,
) -> None:
    """Export every decoded record of one walk to Parquet under OUT (a path or a pyarrow filesystem URI),
    one dataset per record type, partitioned by snapshot_date. Secrets stay redacted; --show-secrets does
    not apply here. Cron-ready: atomic per snapshot (its manifest commits it), locked, idempotent per
    snapshot id; a failed or stopped run leaves the committed snapshot as it was."""
    from datetime import datetime, timezone

    from ..snapshot import prune, take_snapshot

    if settings.show_secrets:
        click.echo("zkstorm: note: --show-secrets does not apply to snapshots; secrets stay redacted", err=True)
        settings.show_secrets = False
    at = _utc_time(snapshot_time) if snapshot_time else datetime.now(timezone.utc)
    lock_stale_after_secs = parse_duration(lock_stale_after)
    started = time.monotonic()
    with settings.cluster(verify_digest=True) as cluster:
        run = take_snapshot(
            cluster,
            out,
            name=cluster_name,
            snapshot_id=snapshot_id,
            at=at,
            stale_after_secs=parse_duration(stale_after),
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
    since: Any,
    until: Any,
    out: str | None,
    html_path: str | None,
    full: bool,
    master: str,
    changes_path: str | None,
) -> None:
    """Cluster-health history over every committed snapshot under SNAPSHOTS (a PySpark job): error
    trends, flapping supervisors, restarts, ISR shrinks, under-replication, controller moves, growth.
    With --out holding an earlier run's history, only newer snapshots are read (incremental).
    On a cluster: spark-submit zkstorm/jobs/history.py with the same arguments (see the README)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ZkstormError("history needs PySpark: pip install 'zkstorm[spark]'") from None
    from ..jobs.history import print_summary, run_history
    from ..jobs.spark import session

    progress = start_progress("starting Spark")
    try:
        result = run_history(
            session(master),
            snapshots,
            since=since.date() if since else None,
            until=until.date() if until else None,
            out=out,
            html=html_path,
            full=full,
            changes=changes_path,
            progress=progress,
        )
    except ZkstormError:
        raise
    except Exception as exc:
        raise ZkstormError(f"the history job failed: {_spark_error(exc)}") from None
    print_summary(result, stdout_console())
    if html_path:
        click.echo(f"zkstorm: report written to {html_path}", err=True)


def _spark_error(exc: Exception) -> str:
    """One line for a Spark failure: the Java exception's own message, not the Py4J call trace."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.toString()).splitlines()[0]
        except Exception:
            pass
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@cli.command()
@click.argument("snapshots")
@click.argument("snapshot_a")
@click.argument("snapshot_b", required=False)
@click.option("--live", is_flag=True, help="Compare SNAPSHOT_A with the source as it is now (--zk or --from-files).")
@click.option("--table", "tables", multiple=True, help="Only these tables (repeatable).")
@format_option("table", "json", default="table")
@click.pass_obj
def diff(
    settings: Settings,
    snapshots: str,
    snapshot_a: str,
    snapshot_b: str | None,
    live: bool,
    tables: tuple[str, ...],
    fmt: str,
    as_json: bool,
) -> None:
    """What changed between two committed snapshots under SNAPSHOTS, per table: rows added and removed
    (a changed row counts once in each), with examples. SNAPSHOT_B or --live, not both."""
    import dataclasses
    import json
    import tempfile
    from datetime import datetime

    from ..jobs.diff import diff_snapshots
    from ..snapshot import take_snapshot

    if live == (snapshot_b is not None):
        raise UsageError("give SNAPSHOT_B or --live (one of them)")
    settings.show_secrets = False  # a diff compares with snapshots, which never hold secrets
    with tempfile.TemporaryDirectory(prefix="zkstorm-diff-") as scratch:
        out_b, id_b = snapshots, snapshot_b or ""
        if live:
            with settings.cluster(verify_digest=True) as cluster:
                run = take_snapshot(cluster, scratch, snapshot_id="live")
            out_b, id_b = scratch, run.snapshot_id
        diffs = diff_snapshots(snapshots, snapshot_a, out_b, id_b, tables=set(tables) or None)
    if ("json" if as_json else fmt) == "json":

        def plain(value: Any) -> Any:
            return value.isoformat() if isinstance(value, datetime) else str(value)

        click.echo(json.dumps([dataclasses.asdict(d) for d in diffs], indent=2, default=plain))
        return
    from ..render import diff_table

    stdout_console().print(diff_table(diffs, title=f"{snapshot_a} -> {snapshot_b or 'live'}"))
