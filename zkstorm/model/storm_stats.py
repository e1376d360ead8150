"""Storm UI's topology page from ZooKeeper alone: per spout and bolt, what flowed and how healthy it is.

Computed as Storm's UI computes it (apache/storm ``storm-server/src/main/java/org/apache/storm/stats/
StatsUtil.java``: ``aggPreMergeTopoPageBolt``/``…Spout``, ``mergeAggCompStatsTopoPage…``,
``postAggregateTopoStats``, ``computeAggCapacity``, ``extractDataFromHb``):

- emitted and transferred are summed over the component's executors and streams, system streams
  (ids starting ``__``) left out unless ``include_sys``; acked, failed and executed over every stream;
- a latency is the average over executors and streams weighted by its count (execute and process
  latency by executed, complete latency by acked), each executor's weighted sum cut to whole
  milliseconds before the executors' are added, as Storm's topology page does it: ``mergeAggCompStats
  TopoPageBolt``/``…Spout`` add the latency totals with ``sumOr0``, whose first operand is the
  accumulator's ``Integer`` 0, so every addition is a ``long`` one (found against a real Nimbus 2.8.3,
  ``tests/data/real/storm-2.8.3``). The component page (``component_streams``, Storm's
  ``aggCompExecsStats``) adds them as doubles, so the two pages can differ by under a millisecond per
  executor in the total;
- an executor's capacity is Σ(execute latency × executed) over its streams in the 10-minute window,
  over ``min(uptime, 600) × 1000`` ms (whatever window is shown, as Storm does); a bolt's capacity is
  the max over its executors (1.0 = busy all the time);
- only executors with a heartbeat count (``executors``, ``tasks``), system components (``__acker``,
  ``__system``, …) are left out unless ``include_sys``.

Nothing here reads ZooKeeper: the view feeds it records, and the snapshot feeds it one heartbeat at a
time (``executor_figures`` keeps a few numbers per executor, not the counter rows).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from ..layout import STATS_WINDOWS
from ..records import (
    StormComponent,
    StormComponentStats,
    StormComponentStream,
    StormError,
    StormExecutor,
    StormExecutorStat,
    StormExecutorStatColumns,
    StormWorker,
)

CAPACITY_WINDOW = "600"  # StatsUtil.TEN_MIN_IN_SECONDS: capacity always reads the 10-minute window
ALL_WINDOWS = tuple(STATS_WINDOWS.values())


def is_system_id(name: str | None) -> bool:
    """Storm's ``Utils.isSystemId``: system components and streams start with ``__``."""
    return bool(name) and name.startswith("__")  # type: ignore[union-attr]


# --- executors → components ------------------------------------------------------------------------------


def executor_components(
    components: Sequence[StormComponent], executors: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], str]:
    """Executor range → component id, from the StormBase's executors per component alone (docs/storm-layout.md §5):
    task ids are numbered from 1 over the components in sorted id order, each component's tasks cut into
    ``executors`` contiguous ranges, so the assignment's executors sorted by first task fall to the
    components in that order. While a rebalance changes executor counts, the counts that add up to the
    assignment are used; if neither does, the mapping is unknown (empty)."""
    ranges = sorted(e for e in set(executors) if e[0] >= 0)
    for counts in (
        {c.component: c.executors for c in components},
        {c.component: c.rebalance_executors if c.rebalance_executors is not None else c.executors for c in components},
    ):
        if sum(counts.values()) != len(ranges):
            continue
        out: dict[tuple[int, int], str] = {}
        position = 0
        for component in sorted(counts):
            for executor in ranges[position : position + counts[component]]:
                out[executor] = component
            position += counts[component]
        return out
    return {}


# --- one executor's figures per window ------------------------------------------------------------------


@dataclass(slots=True)
class Figures:
    """One executor's sums in one window (latency totals are latency × count, to be divided later)."""

    emitted: int = 0
    transferred: int = 0
    emitted_sys: int = 0  # on system streams, counted only with include_sys
    transferred_sys: int = 0
    acked: int = 0
    failed: int = 0
    executed: int = 0
    execute_total: float = 0.0
    process_total: float = 0.0
    complete_total: float = 0.0


@dataclass(slots=True)
class ExecutorFigures:
    """One executor's ``Figures`` per window, packed (``pack_windows``).

    A snapshot holds one of these for every executor of a cluster until its walk ends (72,600 in the
    312k-znode benchmark sandbox). As a dict of ``Figures`` an executor cost about 1.9 KB, and more once
    unpickled from the decode helper, where every sum is a float object of its own. Packed, it is one
    bytes object."""

    topology_id: str
    node: str
    port: int
    executor: tuple[int, int]
    executor_type: str | None
    packed: bytes = b""

    def windows(self) -> dict[str, Figures]:
        """Window → its ``Figures``, unpacked anew on each call."""
        return {window: Figures(*sums) for window, *sums in marshal.loads(self.packed)} if self.packed else {}

    def capacity(self, uptime_secs: int | None, windows: dict[str, Figures] | None = None) -> float:
        """``computeAggCapacity``: 0 without an uptime, as Storm reports it (``windows``: already unpacked)."""
        if not uptime_secs:
            return 0.0
        figures = (self.windows() if windows is None else windows).get(CAPACITY_WINDOW)
        total = figures.execute_total if figures else 0.0
        return total / (min(uptime_secs, 600) * 1000)


def pack_windows(windows: dict[str, Figures]) -> bytes:
    """``ExecutorFigures.packed``: each window's name and sums in ``Figures``' field order, by ``marshal``
    (exact for floats and for ints of any size)."""
    return marshal.dumps(tuple((window, *_sums_of(f)) for window, f in windows.items()))


_sums_of = attrgetter(*(f.name for f in fields(Figures)))  # a Figures' sums, in the order Figures(*sums) takes


def executor_figures(stats: Iterable[StormExecutorStat]) -> list[ExecutorFigures]:
    """The figures of each executor the counter rows describe (one heartbeat's rows, or several).

    Runs once per heartbeat in every snapshot, so the grouping is written out with ``get`` rather than
    chained ``setdefault`` calls (half the time on the sandbox's heartbeats)."""
    # executor → window → (source component, stream) → metric → value: a latency pairs with the count
    # of its own stream and window
    tables: _Tables = {}
    for s in stats:
        key = (s.topology_id, s.node, s.port, s.start_task, s.end_task, s.executor_type)
        windows = tables.get(key)
        if windows is None:
            windows = tables[key] = {}
        window = s.window
        streams = windows.get(window)
        if streams is None:
            streams = windows[window] = {}
        key_of_stream = (s.source_component, s.stream)
        metrics = streams.get(key_of_stream)
        if metrics is None:
            metrics = streams[key_of_stream] = {}
        metrics[s.metric] = s.value
    return _figures(tables)


def executor_figures_of_columns(stats: StormExecutorStatColumns) -> list[ExecutorFigures]:
    """``executor_figures`` of the rows one heartbeat's columns hold (the snapshot's): grouped in row order
    as that groups the rows, so the sums are added in the same order and are equal to the last bit."""
    tables: _Tables = {}
    head = (stats.topology_id, stats.node, stats.port)
    rows = list(zip(zip(stats.source_component, stats.stream, strict=True), stats.value, strict=True))
    at = 0
    executor: tuple[Any, ...] = ()
    windows: dict[str, dict[tuple[str | None, str], dict[str, float]]] = {}
    for start, end, executor_type, metric, window, n in stats.runs:
        if executor != (start, end, executor_type):  # an executor's runs come one after another
            executor = (start, end, executor_type)
            key = (*head, *executor)
            windows = tables.get(key) or tables.setdefault(key, {})
        streams = windows.get(window)
        if streams is None:
            streams = windows[window] = {}
        for key_of_stream, value in rows[at : at + n]:
            metrics = streams.get(key_of_stream)
            if metrics is None:
                metrics = streams[key_of_stream] = {}
            metrics[metric] = value
        at += n
    return _figures(tables)


# executor → window → (source component, stream) → metric → value: a latency pairs with the count of its
# own stream and window
_Tables = dict[tuple[Any, ...], dict[str, dict[tuple[str | None, str], dict[str, float]]]]


def _figures(tables: _Tables) -> list[ExecutorFigures]:
    out = []
    for (topology_id, node, port, start, end, executor_type), windows in tables.items():
        sums: dict[str, Figures] = {}
        for window, streams in windows.items():
            sums[window] = figures = Figures()
            for (_, stream_id), metrics in streams.items():
                get = metrics.get
                emitted = int(get("emitted", 0))
                transferred = int(get("transferred", 0))
                if stream_id.startswith("__"):
                    figures.emitted_sys += emitted
                    figures.transferred_sys += transferred
                else:
                    figures.emitted += emitted
                    figures.transferred += transferred
                acked = int(get("acked", 0))
                executed = int(get("executed", 0))
                figures.acked += acked
                figures.failed += int(get("failed", 0))
                figures.executed += executed
                figures.execute_total += get("execute_ms_avg", 0.0) * executed
                figures.process_total += get("process_ms_avg", 0.0) * executed
                figures.complete_total += get("complete_ms_avg", 0.0) * acked
        out.append(ExecutorFigures(topology_id, node, port, (start, end), executor_type, pack_windows(sums)))
    return out


# --- components -----------------------------------------------------------------------------------------


def component_stats(
    topology_id: str,
    components: Sequence[StormComponent],
    executors: Sequence[StormExecutor],
    figures: Iterable[ExecutorFigures],
    workers: Iterable[StormWorker],
    errors: Iterable[StormError],
    *,
    root: str,
    windows: Sequence[str] = (CAPACITY_WINDOW,),
    include_sys: bool = False,
) -> list[StormComponentStats]:
    """One row per component and window, as Storm's topology page shows it (see the module docstring).

    ``workers`` carry the stale flag (``join_workers``): a component whose assigned executors include one
    with no heartbeat, or a stale one, says how many. ``errors`` are the topology's merged errors
    (``merge_last_errors``): a component's last error is the one its ``-last-error`` node repeats, as
    Nimbus shows it, else its newest. A component with no executor in the assignment is still
    listed (with zeros), so nothing the StormBase names is dropped."""
    owner = executor_components(components, ((e.start_task, e.end_task) for e in executors))
    slots = {(e.start_task, e.end_task): (e.node, e.port) for e in executors}
    beats = {(w.node, w.port): w for w in workers if w.topology_id == topology_id}
    # an executor's figures from the heartbeat of the slot it is assigned to (a moved executor's old
    # worker may still have a beat); from any beat when the assigned slot has none
    chosen: dict[tuple[int, int], ExecutorFigures] = {}
    for f in figures:
        if f.topology_id != topology_id or f.executor not in owner:
            continue
        if f.executor not in chosen or slots.get(f.executor) == (f.node, f.port):
            chosen[f.executor] = f
    # a component's last error is the one its ``-last-error`` node holds (marked by merge_last_errors),
    # as Nimbus reads it (StormClusterStateImpl.lastError); the newest stored one when that node is gone
    last_errors: dict[str, StormError] = {}
    for error in errors:
        if error.topology_id != topology_id:
            continue
        held = last_errors.get(error.component)
        if held is None or (error.last_error, error.time_secs) > (held.last_error, held.time_secs):
            last_errors[error.component] = error

    stale: dict[str, int] = {}
    for executor, (node, port) in slots.items():
        component = owner.get(executor)
        beat = beats.get((node, port))
        if component is not None and (beat is None or beat.stale):
            stale[component] = stale.get(component, 0) + 1

    # each component's figures in executor order, grouped in one pass (a snapshot runs this for every
    # topology of the cluster)
    by_component: dict[str, list[ExecutorFigures]] = {}
    for executor, f in sorted(chosen.items()):
        by_component.setdefault(owner[executor], []).append(f)

    rows = []
    names = sorted({c.component for c in components} | set(owner.values()))
    for component in names:
        if is_system_id(component) and not include_sys:
            continue
        mine = by_component.get(component, [])
        unpacked = [f.windows() for f in mine]
        kinds = {f.executor_type for f in mine if f.executor_type}
        kind = kinds.pop() if len(kinds) == 1 else None
        capacities = [
            f.capacity(beats[(f.node, f.port)].uptime_secs if (f.node, f.port) in beats else None, sums)
            for f, sums in zip(mine, unpacked, strict=True)
        ]
        tasks = sum(end - start + 1 for start, end in (f.executor for f in mine))
        last = last_errors.get(component)
        last_error_at = datetime.fromtimestamp(last.time_secs, UTC) if last else None
        for window in windows:
            total = Figures()
            for sums in unpacked:
                w = sums.get(window)
                if w is None:
                    continue
                total.emitted += w.emitted + (w.emitted_sys if include_sys else 0)
                total.transferred += w.transferred + (w.transferred_sys if include_sys else 0)
                total.acked += w.acked
                total.failed += w.failed
                total.executed += w.executed
                # whole milliseconds per executor: Storm's long addition (see the module docstring)
                total.execute_total += int(w.execute_total)
                total.process_total += int(w.process_total)
                total.complete_total += int(w.complete_total)
            bolt = kind == "bolt"
            spout = kind == "spout"
            rows.append(
                StormComponentStats(
                    topology_id=topology_id,
                    component=component,
                    component_type=kind,
                    window=window,
                    executors=len(mine),
                    tasks=tasks,
                    emitted=total.emitted,
                    transferred=total.transferred,
                    acked=total.acked,
                    failed=total.failed,
                    complete_latency_ms=total.complete_total / total.acked if spout and total.acked else None,
                    executed=total.executed if bolt else None,
                    execute_latency_ms=total.execute_total / total.executed if bolt and total.executed else None,
                    process_latency_ms=total.process_total / total.executed if bolt and total.executed else None,
                    capacity=max(capacities, default=0.0) if bolt else None,
                    stale_executors=stale.get(component, 0),
                    last_error_at=last_error_at,
                    last_error_host=last.host if last else None,
                    last_error_port=last.port if last else None,
                    last_error=last.first_line if last else None,
                    root=root,
                )
            )
    return rows


def every_component_stats(
    components: Sequence[StormComponent],
    executors: Sequence[StormExecutor],
    figures: Sequence[ExecutorFigures],
    workers: Sequence[StormWorker],
    errors: Sequence[StormError],
    *,
    root: str,
) -> list[StormComponentStats]:
    """``component_stats`` of every topology that has components, in every window: the snapshot's
    ``storm_component_stats`` of the Storm cluster at ``root`` (system components left out, as the view
    shows them by default)."""

    def grouped(rows: Iterable[Any]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for row in rows:
            out.setdefault(row.topology_id, []).append(row)
        return out

    # each topology's own rows, grouped once: the topologies times the executors would be quadratic
    by_topology = grouped(components)
    assigned, measured, beating, failing = (grouped(x) for x in (executors, figures, workers, errors))
    rows = []
    for topology_id, mine in sorted(by_topology.items()):
        rows += component_stats(
            topology_id,
            mine,
            assigned.get(topology_id, []),
            measured.get(topology_id, []),
            beating.get(topology_id, []),
            failing.get(topology_id, []),
            root=root,
            windows=ALL_WINDOWS,
        )
    return rows


def component_streams(
    topology_id: str,
    components: Sequence[StormComponent],
    executors: Sequence[StormExecutor],
    stats: Iterable[StormExecutorStat],
    *,
    root: str,
    window: str = CAPACITY_WINDOW,
    include_sys: bool = False,
) -> list[StormComponentStream]:
    """Per component and stream, as Storm's component page shows it: output streams (emitted,
    transferred; a spout's acked, failed and complete latency) and a bolt's input streams by source
    component (executed, acked, failed; execute and process latency weighted by executed)."""
    owner = executor_components(components, ((e.start_task, e.end_task) for e in executors))
    kinds: dict[str, str | None] = {}
    # (component, direction, source, stream) → executor → metric → value
    streams: dict[tuple[str, str, str | None, str], dict[tuple[str, int, int, int], dict[str, float]]] = {}
    for s in stats:
        component = owner.get((s.start_task, s.end_task))
        if s.topology_id != topology_id or component is None or s.window != window:
            continue
        if not include_sys and (is_system_id(component) or is_system_id(s.stream)):
            continue
        kinds[component] = s.executor_type
        direction = "input" if s.source_component is not None else "output"
        executor = (s.node, s.port, s.start_task, s.end_task)
        streams.setdefault((component, direction, s.source_component, s.stream), {}).setdefault(executor, {})[
            s.metric
        ] = s.value
    rows = []
    for (component, direction, source, stream), by_executor in sorted(
        streams.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] or "", item[0][3])
    ):
        sums: dict[str, float] = {}
        for metrics in by_executor.values():
            for metric, value in metrics.items():
                if not metric.endswith("_ms_avg"):
                    sums[metric] = sums.get(metric, 0.0) + value
            executed, acked = metrics.get("executed", 0.0), metrics.get("acked", 0.0)
            sums["execute"] = sums.get("execute", 0.0) + metrics.get("execute_ms_avg", 0.0) * executed
            sums["process"] = sums.get("process", 0.0) + metrics.get("process_ms_avg", 0.0) * executed
            sums["complete"] = sums.get("complete", 0.0) + metrics.get("complete_ms_avg", 0.0) * acked
        kind = kinds.get(component)
        executed_total = sums.get("executed", 0.0)
        acked_total = sums.get("acked", 0.0)

        def count(metric: str, sums: dict[str, float] = sums) -> int | None:
            return int(sums[metric]) if metric in sums else None

        rows.append(
            StormComponentStream(
                topology_id=topology_id,
                component=component,
                component_type=kind,
                window=window,
                direction=direction,
                stream=stream,
                source_component=source,
                emitted=count("emitted"),
                transferred=count("transferred"),
                acked=count("acked"),
                failed=count("failed"),
                executed=count("executed"),
                complete_latency_ms=sums["complete"] / acked_total if kind == "spout" and acked_total else None,
                execute_latency_ms=sums["execute"] / executed_total if executed_total else None,
                process_latency_ms=sums["process"] / executed_total if executed_total else None,
                root=root,
            )
        )
    return rows
