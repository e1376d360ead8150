"""``zkstorm errors`` and the ``zkstorm storm`` views: options, one model call, one emit."""

from __future__ import annotations

from typing import Any

import click

from ..layout import STATS_WINDOWS
from ..output import METRIC_FORMATS, VIEW_FORMATS, Format, Shown
from ..units import parse_since, plural
from .app import cli
from .context import Settings, emit, say
from .options import format_option, stale_after_option, watch_option
from .watching import watch_view


@cli.command()
@click.argument("topology")
@click.option("--component", "-c", default=None, help="Only this component (its id, plain or URL-encoded).")
@click.option("--since", default=None, help="Only errors since a duration ago (2h, 3d) or an ISO time.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most N errors (newest first).")
@click.option("--full", is_flag=True, help="Whole stack traces instead of first lines.")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def errors(
    settings: Settings,
    topology: str,
    component: str | None,
    since: str | None,
    limit: int | None,
    full: bool,
    fmt: Format,
) -> None:
    """Every error Storm keeps for TOPOLOGY (an id or a name), newest first.

    Storm keeps the last 10 errors per component; in 2.x they are ephemeral and vanish with the worker
    that reported them, while each component's -last-error survives (shown when its e-node is gone).
    """
    from ..records import StormError
    from ..render import errors_table

    with settings.cluster() as cluster:
        now = cluster.now()
        topology_id = cluster.storm.resolve(topology)
        rows = cluster.storm.errors(topology_id, component=component, since_secs=_since(since, now), limit=limit)
    title = f"{topology_id}: {plural(len(rows), 'stored error')}"

    def table(width: int, wide: bool) -> Any:
        return errors_table(rows, now, full=full, title=title, width=width)

    emit(settings, fmt, Shown(rows, StormError, title=title, table=table))


def _since(text: str | None, now: float) -> float | None:
    """``--since``: a duration back from the time the data is as of, or an ISO time."""
    if text is None:
        return None
    try:
        return parse_since(text, now)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--since'") from None


@cli.group()
def storm() -> None:
    """Storm views: topologies, supervisors, workers, assignments, nimbuses, roots."""


@storm.command("topologies")
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_topologies(settings: Settings, fmt: Format) -> None:
    """Every topology with its status, workers and executors."""
    from ..records import StormTopology

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.storm.topologies(), StormTopology, view=cluster.storm))


@storm.command("supervisors")
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_supervisors(settings: Settings, fmt: Format) -> None:
    """Every live supervisor (their znodes are ephemeral) with its slots and capacity."""
    from ..records import StormSupervisor

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.storm.supervisors(), StormSupervisor, view=cluster.storm))


@storm.command("workers")
@click.argument("topology", required=False)
@stale_after_option
@click.option("--stale", "only_stale", is_flag=True, help="Only stale workers.")
@click.option(
    "--stats",
    "with_stats",
    is_flag=True,
    help="Instead: every executor counter of the heartbeats (executor, window, stream, metric, value).",
)
@watch_option
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_workers(
    settings: Settings,
    topology: str | None,
    stale_after_secs: float,
    only_stale: bool,
    with_stats: bool,
    watch_every: float | None,
    fmt: Format,
) -> None:
    """Worker heartbeats with their age and a stale flag (of TOPOLOGY, or of every topology)."""
    from ..records import StormExecutorStat, StormWorker
    from ..watch import worker_item

    if with_stats and fmt is Format.PROMETHEUS:
        raise click.UsageError("--stats has no Prometheus form (its series would be unbounded); use -f jsonl")
    if watch_every is not None:

        def read() -> list[Any]:
            with settings.cluster() as cluster:
                return cluster.storm.workers(topology, stale_after_secs=stale_after_secs, only_stale=only_stale)

        watch_view(settings, fmt, watch_every, read, worker_item, lambda rows: Shown(rows, StormWorker))
        return
    with settings.cluster() as cluster:
        if with_stats:
            emit(settings, fmt, Shown(cluster.storm.executor_stats(topology), StormExecutorStat))
        else:
            rows = cluster.storm.workers(topology, stale_after_secs=stale_after_secs, only_stale=only_stale)
            emit(settings, fmt, Shown(rows, StormWorker, view=cluster.storm))
            note = cluster.storm.workerbeats_note()
            if note:
                say(f"note: {note}")


@storm.command("assignment")
@click.argument("topology")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_assignment(settings: Settings, topology: str, fmt: Format) -> None:
    """Where every executor of TOPOLOGY runs: task range, host, supervisor, port, start time."""
    from ..records import StormExecutor

    with settings.cluster() as cluster:
        topology_id = cluster.storm.resolve(topology)
        rows = cluster.storm.assignment(topology_id)
    emit(settings, fmt, Shown(rows, StormExecutor, title=topology_id))


@storm.command("components")
@click.argument("topology")
@click.option(
    "--window",
    type=click.Choice(list(STATS_WINDOWS)),
    default="10m",
    show_default=True,
    help="The stats window, as Storm's UI offers them (capacity always reads the last 10 minutes).",
)
@click.option("--component", help="Only this spout or bolt.")
@click.option("--system", "include_sys", is_flag=True, help="Also __acker, __system, … and system streams.")
@click.option("--streams", is_flag=True, help="Instead: one row per component and stream (Storm UI's component page).")
@stale_after_option
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_components(
    settings: Settings,
    topology: str,
    window: str,
    component: str | None,
    include_sys: bool,
    streams: bool,
    stale_after_secs: float,
    fmt: Format,
) -> None:
    """Storm UI's topology page from ZooKeeper alone: per spout and bolt of TOPOLOGY, executors, tasks,
    emitted, transferred, acked, failed, latencies, capacity, stale executors and the last error."""
    from ..records import StormComponentStats, StormComponentStream

    if fmt is Format.PROMETHEUS and streams:
        raise click.UsageError("--streams has no Prometheus form (its series would be unbounded); use -f jsonl")
    with settings.cluster() as cluster:
        topology_id = cluster.storm.resolve(topology)
        title = f"{topology_id}, window {window}"
        options = {"window": STATS_WINDOWS[window], "component": component, "include_sys": include_sys}
        if streams:
            emit(
                settings,
                fmt,
                Shown(cluster.storm.component_streams(topology_id, **options), StormComponentStream, title=title),
            )
        else:
            rows = cluster.storm.components(topology_id, stale_after_secs=stale_after_secs, **options)
            emit(settings, fmt, Shown(rows, StormComponentStats, title=title, view=cluster.storm))


@storm.command("nimbus")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_nimbus(settings: Settings, fmt: Format) -> None:
    """Registered nimbuses, and which one leads (the lowest leader-latch sequence)."""
    from ..records import StormNimbus

    with settings.cluster() as cluster:
        rows = cluster.storm.nimbuses()
    emit(settings, fmt, Shown(rows, StormNimbus))


@storm.command("roots")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def storm_roots(settings: Settings, fmt: Format) -> None:
    """Every Storm root on the ensemble (nodes that hold both storms and assignments)."""
    from ..records import StormRoot

    with settings.cluster() as cluster:
        rows = cluster.storm_roots()
    emit(settings, fmt, Shown(rows, StormRoot))
