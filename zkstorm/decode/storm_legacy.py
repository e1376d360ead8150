"""Storm 0.9's records (Java-serialized Clojure data, ``backtype.storm.daemon.common``) converted to what the
2.x decoders read or build, and the 0.5–0.7 task layout (``tasks``, ``taskbeats``, ``taskerrors``) shown as
legacy nodes. Kept apart from the 2.x decoders: a reader of ``storm`` sees the current format only."""

from __future__ import annotations

from typing import Any

from ..errors import DecodeError, FailureType
from ..layout import name_from_id
from ..records import StormComponent, StormExecutor, StormLegacyNode, StormTopology
from .registry import DecodeContext, utc


def legacy_storm_base(topology_id: str, base: dict[str, Any], root: str) -> list[Any]:
    if base.get("_record", "").rsplit(".", 1)[-1] != "StormBase":
        raise DecodeError(
            f"expected a StormBase record, found {base.get('_record')}", failure_type=FailureType.WRONG_RECORD
        )
    status = base.get("status") or {}
    kind = str(status.get(":type", "")).lstrip(":").upper() or "UNKNOWN"
    executors: dict[str, int] = base.get("component->executors") or {}
    launch = base.get("launch-time-secs")
    old = status.get(":old-status") or {}
    overrides: dict[str, int] = status.get(":executor-overrides") or {}
    name = base.get("storm-name")
    topology = StormTopology(
        topology_id=topology_id,
        name=name or name_from_id(topology_id),
        status=kind,
        num_workers=int(base.get("num-workers") or 0),
        launch_time_secs=launch,
        launched_at=utc(launch) if launch is not None else None,
        owner=None,
        principal=None,
        topology_version=None,
        prev_status=str(old.get(":type")).lstrip(":").upper() if old else None,
        action="kill" if kind == "KILLED" else "rebalance" if kind == "REBALANCING" else None,
        action_wait_secs=status.get(":kill-time-secs", status.get(":delay-secs")),
        rebalance_num_workers=status.get(":num-workers"),
        num_executors=sum(executors.values()),
        num_components=len(executors),
        format="java-0.9",
        name_derived=not name,
        root=root,
    )
    components = [
        StormComponent(
            topology_id=topology_id,
            component=component,
            executors=count,
            rebalance_executors=overrides.get(component),
            debug_enabled=None,
            debug_sampling_pct=None,
            root=root,
        )
        for component, count in sorted(executors.items())
    ]
    return [topology, *components]


def legacy_assignment(topology_id: str, assignment: dict[str, Any], root: str) -> list[Any]:
    if assignment.get("_record", "").rsplit(".", 1)[-1] != "Assignment":
        raise DecodeError(
            f"expected an Assignment record, found {assignment.get('_record')}", failure_type=FailureType.WRONG_RECORD
        )
    hosts: dict[str, str] = assignment.get("node->host") or {}
    starts: dict[tuple[int, int], int] = assignment.get("executor->start-time-secs") or {}
    rows = []
    for executor, (node, port) in (assignment.get("executor->node+port") or {}).items():
        rows.append(
            StormExecutor(
                topology_id=topology_id,
                start_task=int(executor[0]),
                end_task=int(executor[1]),
                node=node,
                port=int(port),
                host=hosts.get(node),
                start_time_secs=starts.get(executor),
                master_code_dir=assignment.get("master-code-dir"),
                mem_on_heap_mb=None,
                mem_off_heap_mb=None,
                cpu_pct=None,
                root=root,
            )
        )
    rows.sort(key=lambda r: (r.start_task, r.end_task))
    return rows


def legacy_supervisor(info: dict[str, Any]) -> dict[str, Any]:
    return {
        "time_secs": info.get("time-secs"),
        "hostname": info.get("hostname"),
        "assignment_id": info.get("assignment-id"),
        "used_ports": [int(p) for p in info.get("used-ports") or ()],
        "meta": [int(p) for p in info.get("meta") or () if isinstance(p, int)],
        "uptime_secs": info.get("uptime-secs"),
    }


def legacy_error_info(legacy: Any) -> dict[str, Any]:
    """A 0.9 error node's map (``:error``, ``:time-secs``, ``:host``, ``:port``) as the 2.x ``ErrorInfo``."""
    if not isinstance(legacy, dict) or ":error" not in legacy:
        raise DecodeError("0.9 error node without :error", failure_type=FailureType.WRONG_RECORD)
    return {
        "error": legacy[":error"],
        "error_time_secs": legacy.get(":time-secs"),
        "host": legacy.get(":host"),
        "port": legacy.get(":port"),
    }


def legacy_heartbeat(beat: dict[str, Any]) -> dict[str, Any]:
    stats = {}
    for executor, executor_stats in (beat.get(":executor-stats") or {}).items():
        stats[tuple(executor)] = legacy_executor_stats(executor_stats or {})
    return {
        "executor_stats": stats,
        "time_secs": beat.get(":time-secs"),
        "uptime_secs": beat.get(":uptime"),
    }


def legacy_executor_stats(stats: dict[str, Any]) -> dict[str, Any]:
    def windows(table: Any) -> dict[str, Any]:
        # 600 → "600", :all-time → ":all-time": the window names 0.10's thriftify-executor-stats gave them
        return {str(w): v for w, v in (table or {}).items()}

    out = {"emitted": windows(stats.get(":emitted")), "transferred": windows(stats.get(":transferred"))}
    if stats.get(":type") == ":spout":
        out["specific"] = {
            "spout": {
                "acked": windows(stats.get(":acked")),
                "failed": windows(stats.get(":failed")),
                "complete_ms_avg": windows(stats.get(":complete-latencies")),
            }
        }
    elif stats.get(":type") == ":bolt":
        out["specific"] = {
            "bolt": {
                "acked": windows(stats.get(":acked")),
                "failed": windows(stats.get(":failed")),
                "process_ms_avg": windows(stats.get(":process-latencies")),
                "executed": windows(stats.get(":executed")),
                "execute_ms_avg": windows(stats.get(":execute-latencies")),
            }
        }
    return out


def decode_legacy_task_node(context: DecodeContext, data: bytes | None) -> list[Any]:
    """The 0.5–0.7 layout: shown as legacy, with the stack-trace text of ``taskerrors`` entries."""
    segments = context.segments
    layout, topology_id = segments[0], segments[1]
    task = segments[2] if len(segments) > 2 else ""
    detail = ""
    if layout == "taskerrors" and len(segments) == 4 and data:
        detail = data.decode("utf-8", "replace").split("\n", 1)[0]
    return [
        StormLegacyNode(
            path=context.path,
            layout=layout,
            topology_id=topology_id,
            task_id=int(task) if task.isdigit() else None,
            detail=detail,
            root=context.root,
        )
    ]
