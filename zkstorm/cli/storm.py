"""``zkstorm errors`` and the ``zkstorm storm`` views: options, one model call, one emit."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ..units import plural
from .app import (
    PROMETHEUS_FORMATS,
    VIEW_FORMATS,
    Settings,
    cli,
    emit_prometheus,
    emit_rows,
    finish,
    format_option,
    parse_duration,
    parse_since,
    stdout_console,
    watch_option,
    watch_view,
)


@cli.command()
@click.argument("topology")
@click.option("--component", "-c", default=None, help="Only this component (its id, plain or URL-encoded).")
@click.option("--since", default=None, help="Only errors since a duration ago (2h, 3d) or an ISO time.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most N errors (newest first).")
@click.option("--full", is_flag=True, help="Whole stack traces instead of first lines.")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def errors(
    settings: Settings,
    topology: str,
    component: str | None,
    since: str | None,
    limit: int | None,
    full: bool,
    fmt: str,
    as_json: bool,
) -> None:
    """Every error Storm keeps for TOPOLOGY (an id or a name), newest first.

    Storm keeps the last 10 errors per component; in 2.x they are ephemeral and vanish with the worker
    that reported them, while each component's -last-error survives (shown when its e-node is gone).
    """
    from ..records import StormError

    fmt = "json" if as_json else fmt
    with settings.cluster() as cluster:
        now = cluster.now()
        topology_id = cluster.storm.resolve(topology)
        rows = cluster.storm.errors(
            topology_id, component=component, since_secs=parse_since(since, now) if since else None, limit=limit
        )
    if fmt == "table":
        from ..render import errors_table
        from .app import stdout_console

        title = f"{topology_id}: {plural(len(rows), 'stored error')}"
        console = stdout_console()
        console.print(errors_table(rows, now, full=full, title=title, width=console.width))
        finish(settings)
    else:
        emit_rows(settings, fmt, rows, StormError)


@cli.group()
def storm() -> None:
    """Storm views: topologies, supervisors, workers, assignments, nimbuses, roots."""


@storm.command("topologies")
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def storm_topologies(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every topology with its status, workers and executors."""
    from ..records import StormTopology

    with settings.cluster() as cluster:
        rows = cluster.storm.topologies()
        errors_stored = cluster.storm.stored_error_counts() if fmt == "prometheus" else {}
    if fmt == "prometheus":
        from ..export.prometheus import storm_topology_families

        emit_prometheus(settings, storm_topology_families(cluster.storm.root, rows, errors_stored))
        return
    columns = [
        "name",
        "status",
        "num_workers",
        "num_executors",
        "launched_at",
        "action",
        "action_wait_secs",
        "owner",
        "topology_id",
        "decode_status",
    ]
    emit_rows(settings, "json" if as_json else fmt, rows, StormTopology, columns=columns)


@storm.command("supervisors")
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def storm_supervisors(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every live supervisor (their znodes are ephemeral) with its slots and capacity."""
    from ..records import StormSupervisor

    with settings.cluster() as cluster:
        rows = cluster.storm.supervisors()
        missing = cluster.storm.missing_supervisors() if fmt == "prometheus" else []
    if fmt == "prometheus":
        from ..export.prometheus import storm_supervisor_families

        emit_prometheus(settings, storm_supervisor_families(cluster.storm.root, rows, missing))
        return
    columns = [
        "hostname",
        "used_ports",
        "ports",
        "uptime_secs",
        "version",
        "memory_capacity_mb",
        "cpu_capacity_pct",
        "supervisor_id",
        "decode_status",
    ]
    emit_rows(settings, "json" if as_json else fmt, rows, StormSupervisor, columns=columns)


@storm.command("workers")
@click.argument("topology", required=False)
@click.option(
    "--stale-after",
    default="30s",
    show_default=True,
    help="A heartbeat older than this is stale (nimbus.task.timeout.secs is 30 by default).",
)
@click.option("--stale", "only_stale", is_flag=True, help="Only stale workers.")
@click.option(
    "--stats",
    "with_stats",
    is_flag=True,
    help="Instead: every executor counter of the heartbeats (executor, window, stream, metric, value).",
)
@watch_option
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def storm_workers(
    settings: Settings,
    topology: str | None,
    stale_after: str,
    only_stale: bool,
    with_stats: bool,
    watch_every: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Worker heartbeats with their age and a stale flag (of TOPOLOGY, or of every topology)."""
    from ..records import StormExecutorStat, StormWorker

    fmt = "json" if as_json else fmt
    limit = parse_duration(stale_after)
    if watch_every is not None:
        from ..output import emit
        from ..watch import worker_item

        def read() -> list[StormWorker]:
            with settings.cluster() as cluster:
                return cluster.storm.workers(topology, stale_after_secs=limit, only_stale=only_stale)

        def show(rows: Sequence[StormWorker]) -> None:
            console = stdout_console()
            emit(
                rows,
                "table",
                sys.stdout,
                primary=StormWorker,
                console=console,
                table_columns=WORKER_COLUMNS,
                wide=settings.wide,
            )

        watch_view(settings, fmt, watch_every, read, worker_item, show)
        return
    with settings.cluster() as cluster:
        if with_stats:
            stats = cluster.storm.executor_stats(topology)
        else:
            rows = cluster.storm.workers(topology, stale_after_secs=limit, only_stale=only_stale)
        names = cluster.storm.topology_ids() if fmt == "prometheus" else {}
    if fmt == "prometheus" and not with_stats:
        from ..export.prometheus import storm_worker_families

        emit_prometheus(settings, storm_worker_families(cluster.storm.root, rows, names))
        return
    if fmt == "prometheus":
        raise click.UsageError("--stats has no Prometheus form (its series would be unbounded); use -f jsonl")
    if with_stats:
        columns = [
            "topology_id",
            "node",
            "port",
            "start_task",
            "end_task",
            "executor_type",
            "metric",
            "window",
            "stream",
            "source_component",
            "value",
        ]
        emit_rows(settings, fmt, stats, StormExecutorStat, columns=columns)
        return
    emit_rows(settings, fmt, rows, StormWorker, columns=WORKER_COLUMNS)


WORKER_COLUMNS = [
    "host",
    "port",
    "age_secs",
    "stale",
    "uptime_secs",
    "num_executor_stats",
    "topology_id",
    "node",
    "decode_status",
]


@storm.command("assignment")
@click.argument("topology")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def storm_assignment(settings: Settings, topology: str, fmt: str, as_json: bool) -> None:
    """Where every executor of TOPOLOGY runs: task range, host, supervisor, port, start time."""
    from ..records import StormExecutor

    with settings.cluster() as cluster:
        topology_id = cluster.storm.resolve(topology)
        rows = cluster.storm.assignment(topology_id)
    columns = ["start_task", "end_task", "host", "port", "start_time_secs", "mem_on_heap_mb", "cpu_pct", "node"]
    emit_rows(settings, "json" if as_json else fmt, rows, StormExecutor, columns=columns, title=topology_id)


@storm.command("components")
@click.argument("topology")
@click.option(
    "--window",
    type=click.Choice(["10m", "3h", "1d", "all"]),
    default="10m",
    show_default=True,
    help="The stats window, as Storm's UI offers them (capacity always reads the last 10 minutes).",
)
@click.option("--component", help="Only this spout or bolt.")
@click.option("--system", "include_sys", is_flag=True, help="Also __acker, __system, … and system streams.")
@click.option("--streams", is_flag=True, help="Instead: one row per component and stream (Storm UI's component page).")
@click.option("--stale-after", default="30s", show_default=True, help="A worker heartbeat older than this is stale.")
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def storm_components(
    settings: Settings,
    topology: str,
    window: str,
    component: str | None,
    include_sys: bool,
    streams: bool,
    stale_after: str,
    fmt: str,
    as_json: bool,
) -> None:
    """Storm UI's topology page from ZooKeeper alone: per spout and bolt of TOPOLOGY, executors, tasks,
    emitted, transferred, acked, failed, latencies, capacity, stale executors and the last error."""
    from ..model.storm_stats import WINDOWS
    from ..records import StormComponentStats, StormComponentStream

    fmt = "json" if as_json else fmt
    if fmt == "prometheus" and streams:
        raise click.UsageError("--streams has no Prometheus form (its series would be unbounded); use -f jsonl")
    key = WINDOWS[window]
    with settings.cluster() as cluster:
        topology_id = cluster.storm.resolve(topology)
        if streams:
            stream_rows = cluster.storm.component_streams(
                topology_id, window=key, component=component, include_sys=include_sys
            )
        else:
            rows = cluster.storm.components(
                topology_id,
                window=key,
                component=component,
                include_sys=include_sys,
                stale_after_secs=parse_duration(stale_after),
            )
    if fmt == "prometheus":
        from ..export.prometheus import storm_component_families
        from ..layout import name_from_id

        emit_prometheus(settings, storm_component_families(cluster.storm.root, name_from_id(topology_id), rows))
        return
    title = f"{topology_id}, window {window}"
    if streams:
        columns = [
            "component",
            "direction",
            "stream",
            "source_component",
            "emitted",
            "transferred",
            "acked",
            "failed",
            "executed",
            "complete_latency_ms",
            "execute_latency_ms",
            "process_latency_ms",
        ]
        emit_rows(settings, fmt, stream_rows, StormComponentStream, columns=columns, title=title)
        return
    columns = [
        "component",
        "component_type",
        "executors",
        "tasks",
        "emitted",
        "transferred",
        "acked",
        "failed",
        "complete_latency_ms",
        "executed",
        "execute_latency_ms",
        "process_latency_ms",
        "capacity",
        "stale_executors",
        "last_error_at",
        "last_error",
    ]
    emit_rows(settings, fmt, rows, StormComponentStats, columns=columns, title=title)


@storm.command("nimbus")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def storm_nimbus(settings: Settings, fmt: str, as_json: bool) -> None:
    """Registered nimbuses, and which one leads (the lowest leader-latch sequence)."""
    from ..records import StormNimbus

    with settings.cluster() as cluster:
        rows = cluster.storm.nimbuses()
    columns = ["host", "port", "tls_port", "version", "started_secs", "is_leader", "decode_status"]
    emit_rows(settings, "json" if as_json else fmt, rows, StormNimbus, columns=columns)


@storm.command("roots")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def storm_roots(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every Storm root on the ensemble (nodes that hold both storms and assignments)."""
    from ..records import StormRoot

    with settings.cluster() as cluster:
        rows = cluster.storm_roots()
    emit_rows(settings, "json" if as_json else fmt, rows, StormRoot)
