"""Worker heartbeats (``workerbeats/{topology}/{node}-{port}``, Storm's ``ClusterWorkerHeartbeat``): the
worker's beat, and with ``detail`` every executor counter it carries (``StormExecutorStat``, or for the
snapshot one ``StormExecutorStatColumns`` of them all).

A heartbeat is the bulk of a Storm tree's bytes and of its decoding, so it has a fast path: a walk that
only summarises reads the head and the fixed-width tail (``heartbeat_head_and_tail``) and skips the stats
map; a snapshot reads the map in one loop and takes the counters as columns, a map of them at a time
(``_stat_columns``)."""

from __future__ import annotations

import struct
from operator import itemgetter
from typing import Any

from ..errors import DecodeError
from ..records import StormExecutorStatColumns, StormWorker
from ..units import duration_text, utc_text
from .registry import DETAIL_COLUMNS, DecodeContext, utc
from .storm_legacy import legacy_heartbeat
from .storm_payload import ENVELOPE_ENCODING, java_payload, read_thrift, split_slot
from .thrift import unwrap

_SPOUT_METRICS = ("acked", "failed", "complete_ms_avg")


_BOLT_METRICS = ("acked", "failed", "process_ms_avg", "executed", "execute_ms_avg")


def decode_heartbeat(context: DecodeContext, data: bytes | None) -> list[Any]:
    _, topology_id, slot = context.segments
    node, port = split_slot(slot)
    legacy = java_payload(data, context)
    beat: dict[str, Any] | None
    if legacy is not None:
        beat = legacy_heartbeat(legacy)
    else:
        beat = None if context.detail else heartbeat_head_and_tail(data)
        if beat is not None and beat["envelope"] != "raw":
            # a compressed envelope is all the sniff would check; raw Thrift it skims whole, which the
            # head-and-tail read did not, so that one is left to the sniff
            context.encoding = ENVELOPE_ENCODING[beat["envelope"]]
        if beat is None:
            beat = read_thrift("ClusterWorkerHeartbeat", data, context)
    worker = StormWorker(
        topology_id=topology_id,
        node=node,
        port=port,
        time_secs=beat["time_secs"],
        heartbeat_at=utc(beat["time_secs"]),
        uptime_secs=beat["uptime_secs"],
        num_executor_stats=beat["num_executor_stats"] if "num_executor_stats" in beat else len(beat["executor_stats"]),
        root=context.root,
    )
    if not context.detail:
        return [worker]
    stats = _stat_columns(topology_id, node, port, beat["executor_stats"], context.root)
    return [worker, stats] if context.detail == DETAIL_COLUMNS else [worker, *stats.rows()]


_BEAT_HEAD = struct.Struct(">bhi")  # STRING, field 1, length


_MAP_HEADER = struct.Struct(">bhbbi")  # MAP, field 2, key type, value type, count


_TAIL_I32 = struct.Struct(">bhibhib")  # I32 3 time_secs, I32 4 uptime_secs, STOP


_TAIL_I64 = struct.Struct(">bhqbhib")  # I64 3 time_secs (Storm master), I32 4 uptime_secs, STOP


def heartbeat_head_and_tail(data: bytes | None) -> dict[str, Any] | None:
    """A heartbeat's id, executor count, time and uptime without decoding its executor stats.

    The stats map is ~99% of a heartbeat's bytes and of the cost of decoding it, and a summary needs
    none of it. Storm writes fields in id order (storm_id, executor_stats, time_secs, uptime_secs), so
    the head and the fixed-width tail hold everything else. The envelope is decompressed as usual (gzip's
    CRC vouches for the bytes); any other shape returns None and the caller decodes the whole struct.
    """
    if not data:
        return None
    try:
        payload, envelope = unwrap(data)
        kind, field, size = _BEAT_HEAD.unpack_from(payload, 0)
        if (kind, field) != (11, 1) or size < 0:
            return None
        storm_id = payload[7 : 7 + size].decode("utf-8")
        kind, field, ktype, vtype, count = _MAP_HEADER.unpack_from(payload, 7 + size)
        if (kind, field) != (13, 2) or count < 0 or (count and (ktype, vtype) != (12, 12)):
            return None
        head_end = 7 + size + _MAP_HEADER.size
        for tail in (_TAIL_I32, _TAIL_I64):
            if len(payload) - tail.size < head_end:
                continue
            t_kind, t_field, time_secs, u_kind, u_field, uptime, stop = tail.unpack_from(
                payload, len(payload) - tail.size
            )
            if (t_field, u_kind, u_field, stop) == (3, 8, 4, 0) and t_kind == (8 if tail is _TAIL_I32 else 10):
                if count == 0 and len(payload) - tail.size != head_end:
                    return None
                return {
                    "storm_id": storm_id,
                    "num_executor_stats": count,
                    "time_secs": time_secs,
                    "uptime_secs": uptime,
                    "envelope": envelope,
                }
    except (DecodeError, struct.error, UnicodeDecodeError):
        return None  # let the full decoder say exactly what is wrong
    return None


def _stat_columns(
    topology_id: str, node: str, port: int, stats: dict[Any, dict[str, Any]], root: str
) -> StormExecutorStatColumns:
    """The counter rows of a heartbeat's stats map, as columns: each (executor, metric, window) map of
    stream → value is one run of rows, its keys and values taken over whole (``list.extend`` over the
    map, not a step per counter).

    An executor the beat holds with no counter yet (its worker's first beat, or a bolt that no tuple has
    reached: 2.x's shuffle grouping prefers the sender's own worker) is one run of no rows, metric and
    window empty: Storm still counts it, its executors and tasks, on the topology page
    (``StatsUtil.extractDataFromHb`` takes every executor of the assigned slot's beat), so the figures
    keep it though no row shows it."""
    runs: list[tuple[int, int, str | None, str, str, int]] = []
    stream_column: list[str] = []
    source_column: list[str | None] = []
    value_column: list[float] = []
    for (start, end), executor in stats.items():
        specific = executor.get("specific") or {}
        executor_type = "spout" if "spout" in specific else "bolt" if "bolt" in specific else None
        if start == -1:
            executor_type = None  # the worker's system executor
        tables: list[tuple[str, dict[str, dict[Any, Any]]]] = [
            ("emitted", executor.get("emitted") or {}),
            ("transferred", executor.get("transferred") or {}),
        ]
        if executor_type == "spout" or "spout" in specific:
            tables += [(m, specific["spout"].get(m) or {}) for m in _SPOUT_METRICS]
        elif "bolt" in specific:
            tables += [(m, specific["bolt"].get(m) or {}) for m in _BOLT_METRICS]
        counted = len(runs)
        for metric, windows in tables:
            for window, streams in windows.items():
                rows = len(streams)
                if not rows:
                    continue
                runs.append((start, end, executor_type, metric, str(window), rows))
                keys = streams.keys()
                kinds = set(map(type, keys))
                if tuple not in kinds:  # an output stream's id
                    stream_column.extend(map(str, keys))
                    source_column.extend([None] * rows)
                elif kinds == {tuple} and set(map(len, keys)) == {2}:  # GlobalStreamId: (component, stream)
                    source_column.extend(map(itemgetter(0), keys))
                    stream_column.extend(map(str, map(itemgetter(1), keys)))
                else:  # no shape Storm writes: each key as the row it stands for reads it
                    for key in keys:
                        source, stream_id = (key if isinstance(key, tuple) else (None, key))[:2]
                        source_column.append(source)
                        stream_column.append(str(stream_id))
                value_column.extend(map(float, streams.values()))
        if len(runs) == counted:  # no counter at all: held by a run of no rows (see above)
            runs.append((start, end, executor_type, "", "", 0))
    return StormExecutorStatColumns(
        topology_id=topology_id,
        node=node,
        port=port,
        root=root,
        runs=runs,
        stream=stream_column,
        source_component=source_column,
        value=value_column,
    )


def summarize_heartbeat(records: list[Any]) -> str:
    w = records[0]
    return f"beat {utc_text(w.heartbeat_at)}, up {duration_text(w.uptime_secs)}, {w.num_executor_stats} executor stats"


def worker_placeholder(context: DecodeContext, status: str) -> StormWorker | None:
    _, topology_id, slot = context.segments
    try:
        node, port = split_slot(slot)
    except DecodeError:
        return None  # not a worker slot name: the failure record alone says so
    return StormWorker(
        topology_id=topology_id,
        node=node,
        port=port,
        time_secs=None,
        heartbeat_at=None,
        uptime_secs=None,
        num_executor_stats=None,
        decode_status=status,
        root=context.root,
    )
