"""Storm znodes → records, for 2.x, 1.x, 0.10 (Thrift in gzip, zstd or raw) and 0.9 (Java-serialized
Clojure data, converted by ``storm_legacy``), with the 0.5–0.7 task layout recognised as legacy. Paths are
relative to the Storm root, as Storm's ``ClusterUtils.java`` lays them out (``docs/storm-layout.md``);
worker heartbeats, the bulk of a tree, are read by ``storm_heartbeat``. Importing this module registers
every Storm decoder in ``registry.REGISTRY``.
"""

from __future__ import annotations

import struct
from typing import Any
from urllib.parse import unquote_plus

from ..errors import DecodeError, FailureType
from ..layout import STORM, name_from_id
from ..records import (
    StormBackpressure,
    StormBlob,
    StormBlobSequence,
    StormComponent,
    StormCredential,
    StormError,
    StormExecutor,
    StormLeaderInfo,
    StormLeaderLatch,
    StormLogLevel,
    StormNimbus,
    StormProfileRequest,
    StormSecretKey,
    StormSupervisor,
    StormTopology,
)
from ..redact import REDACTED
from ..units import duration_text, utc_text
from . import java, sniff
from .registry import REGISTRY, DecodeContext, utc
from .storm_heartbeat import decode_heartbeat, summarize_heartbeat, worker_placeholder
from .storm_legacy import (
    decode_legacy_task_node,
    legacy_assignment,
    legacy_error_info,
    legacy_storm_base,
    legacy_supervisor,
)
from .storm_payload import java_payload, read_thrift, split_slot

DIR_MARKER = b"\x07"


def _status_name(value: Any) -> str:
    return value if isinstance(value, str) else f"UNKNOWN({value})"


# --- topologies ---------------------------------------------------------------------------------------


def decode_storm_base(context: DecodeContext, data: bytes | None) -> list[Any]:
    topology_id = context.segments[1]
    legacy = java_payload(data, context)
    if legacy is not None:
        return legacy_storm_base(topology_id, legacy, context.root)
    base = read_thrift("StormBase", data, context)
    executors: dict[str, int] = base.get("component_executors") or {}
    action = base.get("topology_action_options") or {}
    kill, rebalance = action.get("kill_options"), action.get("rebalance_options")
    launch = base.get("launch_time_secs")
    topology = StormTopology(
        topology_id=topology_id,
        name=base["name"],
        status=_status_name(base["status"]),
        num_workers=base["num_workers"],
        launch_time_secs=launch,
        launched_at=utc(launch) if launch is not None else None,
        owner=base.get("owner"),
        principal=base.get("principal"),
        topology_version=base.get("topology_version"),
        prev_status=_status_name(base["prev_status"]) if "prev_status" in base else None,
        action="kill" if kill is not None else "rebalance" if rebalance is not None else None,
        action_wait_secs=(kill or rebalance or {}).get("wait_secs"),
        rebalance_num_workers=(rebalance or {}).get("num_workers"),
        num_executors=sum(executors.values()),
        num_components=len(executors),
        format="thrift",
        name_derived=False,
        root=context.root,
    )
    debug: dict[str, Any] = base.get("component_debug") or {}
    new_counts: dict[str, int] = (rebalance or {}).get("num_executors") or {}
    components = [
        StormComponent(
            topology_id=topology_id,
            component=component,
            executors=count,
            rebalance_executors=new_counts.get(component),
            debug_enabled=debug.get(component, {}).get("enable"),
            debug_sampling_pct=debug.get(component, {}).get("samplingpct"),
            root=context.root,
        )
        for component, count in sorted(executors.items())
    ]
    return [topology, *components]


def summarize_topology(records: list[Any]) -> str:
    t = records[0]
    return f"{t.name} {t.status} {t.num_workers} workers, {t.num_executors} executors"


# --- assignments --------------------------------------------------------------------------------------


def decode_assignment(context: DecodeContext, data: bytes | None) -> list[Any]:
    topology_id = context.segments[1]
    legacy = java_payload(data, context)
    if legacy is not None:
        return legacy_assignment(topology_id, legacy, context.root)
    assignment = read_thrift("Assignment", data, context)
    hosts: dict[str, str] = assignment.get("node_host") or {}
    starts: dict[tuple[int, int], int] = assignment.get("executor_start_time_secs") or {}
    resources: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = assignment.get("worker_resources") or {}
    rows = []
    for executor, slot in (assignment.get("executor_node_port") or {}).items():
        start, end = executor
        port = min(slot["port"]) if slot["port"] else -1
        res = resources.get((slot["node"], (port,)), {})
        rows.append(
            StormExecutor(
                topology_id=topology_id,
                start_task=start,
                end_task=end,
                node=slot["node"],
                port=port,
                host=hosts.get(slot["node"]),
                start_time_secs=starts.get(executor),
                master_code_dir=assignment.get("master_code_dir"),
                mem_on_heap_mb=res.get("mem_on_heap"),
                mem_off_heap_mb=res.get("mem_off_heap"),
                cpu_pct=res.get("cpu"),
                root=context.root,
            )
        )
    rows.sort(key=lambda r: (r.start_task, r.end_task))
    return rows


def summarize_assignment(records: list[Any]) -> str:
    slots = {(r.node, r.port) for r in records}
    return f"{len(records)} executors on {len(slots)} workers, {len({r.node for r in records})} nodes"


# --- supervisors --------------------------------------------------------------------------------------

_MEMORY_KEYS = ("memory.mb", "supervisor.memory.capacity.mb")
_CPU_KEYS = ("cpu.pcore.percent", "supervisor.cpu.capacity")


def decode_supervisor(context: DecodeContext, data: bytes | None) -> list[Any]:
    supervisor_id = context.segments[1]
    legacy = java_payload(data, context)
    info = legacy_supervisor(legacy) if legacy is not None else read_thrift("SupervisorInfo", data, context)
    capacity: dict[str, float] = info.get("resources_map") or {}
    return [
        StormSupervisor(
            supervisor_id=supervisor_id,
            hostname=info["hostname"],
            assignment_id=info.get("assignment_id"),
            time_secs=info["time_secs"],
            heartbeat_at=utc(info["time_secs"]),
            uptime_secs=info.get("uptime_secs"),
            used_ports=tuple(sorted(info.get("used_ports") or ())),
            ports=tuple(sorted(info.get("meta") or ())),
            version=info.get("version"),
            server_port=info.get("server_port"),
            memory_capacity_mb=next((capacity[k] for k in _MEMORY_KEYS if k in capacity), None),
            cpu_capacity_pct=next((capacity[k] for k in _CPU_KEYS if k in capacity), None),
            resources=tuple(f"{k}={v:g}" for k, v in sorted(capacity.items())),
            scheduler_meta=tuple(f"{k}={v}" for k, v in sorted((info.get("scheduler_meta") or {}).items())),
            root=context.root,
        )
    ]


def summarize_supervisor(records: list[Any]) -> str:
    s = records[0]
    return f"{s.hostname} {len(s.used_ports)}/{len(s.ports)} slots used, up {duration_text(s.uptime_secs)}"


# --- worker heartbeats --------------------------------------------------------------------------------


# --- errors -------------------------------------------------------------------------------------------


def _error(
    topology_id: str, component: str, info: dict[str, Any], sequence: int | None, last: bool, root: str
) -> StormError:
    text: str = info["error"]
    return StormError(
        topology_id=topology_id,
        component=component,
        time_secs=info["error_time_secs"],
        error_at=utc(info["error_time_secs"]),
        host=info.get("host"),
        port=info.get("port"),
        error=text,
        first_line=text.split("\n", 1)[0].strip(),
        sequence=sequence,
        last_error=last,
        root=root,
    )


def _error_info(data: bytes | None, context: DecodeContext) -> dict[str, Any]:
    legacy = java_payload(data, context)
    return read_thrift("ErrorInfo", data, context) if legacy is None else legacy_error_info(legacy)


def decode_error_node(context: DecodeContext, data: bytes | None) -> list[Any]:
    """``errors/{topology}/{component}/e{seq}``."""
    _, topology_id, encoded, name = context.segments
    sequence = int(name[1:]) if name[:1] == "e" and name[1:].isdigit() else None
    return [_error(topology_id, unquote_plus(encoded), _error_info(data, context), sequence, False, context.root)]


def decode_error_component(context: DecodeContext, data: bytes | None) -> list[Any]:
    """``errors/{topology}/{x}``: a component directory (0x07) or ``{component}-last-error`` (a record).

    Told apart by the data, not the name, since a component may itself be called ``x-last-error``."""
    if not data or data == DIR_MARKER:
        return []
    _, topology_id, name = context.segments
    component = name[: -len("-last-error")] if name.endswith("-last-error") else name
    return [_error(topology_id, unquote_plus(component), _error_info(data, context), None, True, context.root)]


def summarize_error(records: list[Any]) -> str:
    e = records[0]
    where = f" {e.host}:{e.port}" if e.host else ""
    return f"{utc_text(e.error_at)}{where} {e.first_line[:80]}"


# --- nimbus, leadership, blobs ------------------------------------------------------------------------


def decode_nimbus(context: DecodeContext, data: bytes | None) -> list[Any]:
    summary = read_thrift("NimbusSummary", data, context)
    return [
        StormNimbus(
            nimbus_id=context.segments[1],
            host=summary["host"],
            port=summary["port"],
            tls_port=summary.get("tlsPort"),
            started_secs=summary["uptime_secs"],
            version=summary["version"],
            root=context.root,
        )
    ]


def decode_leader_latch(context: DecodeContext, data: bytes | None) -> list[Any]:
    name = context.segments[1]
    _, _, sequence = name.rpartition("-latch-")
    if not sequence.isdigit():
        return []  # not a Curator latch node
    try:
        participant = (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("leader latch id is not UTF-8", failure_type=FailureType.INVALID_UTF8) from None
    return [StormLeaderLatch(node_name=name, participant_id=participant, sequence=int(sequence), root=context.root)]


def decode_leader_info(context: DecodeContext, data: bytes | None) -> list[Any]:
    if not data:
        return []
    info = java.loads(data)
    context.encoding = sniff.JAVA
    if not isinstance(info, dict) or "host" not in info:
        raise DecodeError("leader-info is not a NimbusInfo", failure_type=FailureType.WRONG_RECORD)
    return [
        StormLeaderInfo(
            path=context.path,
            host=info["host"],
            port=int(info["port"]),
            tls_port=info.get("tlsPort"),
            is_leader=bool(info.get("isLeader")),
            root=context.root,
        )
    ]


def decode_blob_holder(context: DecodeContext, data: bytes | None) -> list[Any]:
    _, key, name = context.segments
    nimbus_id, _, version = name.rpartition("-")
    if not nimbus_id or not version.isdigit():
        raise DecodeError(f"{name!r} is not {{nimbus-id}}-{{version}}", failure_type=FailureType.BAD_NODE_NAME)
    return [StormBlob(key=key, nimbus_id=nimbus_id, version=int(version), root=context.root)]


def decode_blob_sequence(context: DecodeContext, data: bytes | None) -> list[Any]:
    if not data or len(data) != 4:
        raise DecodeError(f"expected a 4-byte int, got {len(data or b'')} bytes", failure_type=FailureType.BAD_SIZE)
    return [StormBlobSequence(key=context.segments[1], max_sequence=struct.unpack(">i", data)[0], root=context.root)]


# --- per-topology settings ----------------------------------------------------------------------------


def decode_log_config(context: DecodeContext, data: bytes | None) -> list[Any]:
    topology_id = context.segments[1]
    config = read_thrift("LogConfig", data, context)
    levels = [
        StormLogLevel(
            topology_id=topology_id,
            logger=logger,
            action=_status_name(level["action"]),
            target_level=level.get("target_log_level"),
            reset_timeout_secs=level.get("reset_log_level_timeout_secs"),
            reset_at_ms=level.get("reset_log_level_timeout_epoch"),
            reset_level=level.get("reset_log_level"),
            root=context.root,
        )
        for logger, level in sorted((config.get("named_logger_level") or {}).items())
    ]
    empty = StormLogLevel(
        topology_id=topology_id,
        logger=None,
        action=None,
        target_level=None,
        reset_timeout_secs=None,
        reset_at_ms=None,
        reset_level=None,
        root=context.root,
    )
    return levels or [empty]


def decode_profile_request(context: DecodeContext, data: bytes | None) -> list[Any]:
    topology_id = context.segments[1]
    request = read_thrift("ProfileRequest", data, context)
    ports = request["nodeInfo"]["port"]
    return [
        StormProfileRequest(
            topology_id=topology_id,
            host=request["nodeInfo"]["node"],
            port=min(ports) if ports else -1,
            action=_status_name(request["action"]),
            timestamp_ms=request.get("time_stamp"),
            root=context.root,
        )
    ]


def decode_credentials(context: DecodeContext, data: bytes | None) -> list[Any]:
    topology_id = context.segments[1]
    creds = read_thrift("Credentials", data, context)
    owner = creds.get("topoOwner")
    context.redacted = not context.show_secrets and bool(creds["creds"])
    rows = [
        StormCredential(
            topology_id=topology_id,
            key=key,
            value=value if context.show_secrets else REDACTED,
            value_length=len(value),
            owner=owner,
            root=context.root,
        )
        for key, value in sorted(creds["creds"].items())
    ]
    # no credential: still the topology and its owner (a parent's scalars outlive an empty list)
    empty = StormCredential(
        topology_id=topology_id, key=None, value=None, value_length=None, owner=owner, root=context.root
    )
    return rows or [empty]


def decode_secret_key(context: DecodeContext, data: bytes | None) -> list[Any]:
    _, service, topology_id, version = context.segments
    key = read_thrift("PrivateWorkerKey", data, context)
    context.redacted = not context.show_secrets
    return [
        StormSecretKey(
            service=service,
            topology_id=topology_id,
            version=int(version) if version.isdigit() else -1,
            user_name=key["userName"],
            expiration_ms=key["expirationTimeMillis"],
            key=key["key"].hex() if context.show_secrets else REDACTED,
            key_length=len(key["key"]),
            root=context.root,
        )
    ]


def decode_backpressure(context: DecodeContext, data: bytes | None) -> list[Any]:
    _, topology_id, slot = context.segments
    node, port = split_slot(slot)
    if not data or len(data) != 8:
        raise DecodeError(f"expected an 8-byte long, got {len(data or b'')} bytes", failure_type=FailureType.BAD_SIZE)
    return [
        StormBackpressure(
            topology_id=topology_id,
            node=node,
            port=port,
            throttle_on_ms=struct.unpack(">q", data)[0],
            root=context.root,
        )
    ]


# --- placeholders: what an undecodable or unreadable znode stands for, from its path ----------------------


def topology_placeholder(context: DecodeContext, status: str) -> StormTopology:
    topology_id = context.segments[1]
    return StormTopology(
        topology_id=topology_id,
        name=name_from_id(topology_id),
        status="UNKNOWN",
        num_workers=None,
        launch_time_secs=None,
        launched_at=None,
        owner=None,
        principal=None,
        topology_version=None,
        prev_status=None,
        action=None,
        action_wait_secs=None,
        rebalance_num_workers=None,
        num_executors=None,
        num_components=None,
        format="unknown",
        name_derived=True,
        decode_status=status,
        root=context.root,
    )


def supervisor_placeholder(context: DecodeContext, status: str) -> StormSupervisor:
    return StormSupervisor(
        supervisor_id=context.segments[1],
        hostname=None,
        assignment_id=None,
        time_secs=None,
        heartbeat_at=None,
        uptime_secs=None,
        used_ports=(),
        ports=(),
        version=None,
        server_port=None,
        memory_capacity_mb=None,
        cpu_capacity_pct=None,
        resources=(),
        scheduler_meta=(),
        decode_status=status,
        root=context.root,
    )


def nimbus_placeholder(context: DecodeContext, status: str) -> StormNimbus:
    nimbus_id = context.segments[1]
    host, _, port = nimbus_id.rpartition(":")
    return StormNimbus(
        nimbus_id=nimbus_id,
        host=host if port.isdigit() else nimbus_id,
        port=int(port) if port.isdigit() else None,
        tls_port=None,
        started_secs=None,
        version=None,
        decode_status=status,
        root=context.root,
    )


def _summary(text: str, field: str | None = None) -> Any:
    """``text`` with the record count; with ``field``, only records where it is set count (an empty
    list's placeholder row says 0)."""
    return lambda records: text.format(n=sum(1 for r in records if field is None or getattr(r, field) is not None))


def register(registry: Any = REGISTRY) -> None:
    r = registry.register
    r(STORM, "storms/*", "storm_topology", decode_storm_base, summarize_topology, topology_placeholder)
    r(STORM, "assignments/*", "storm_assignment", decode_assignment, summarize_assignment)
    r(STORM, "supervisors/*", "storm_supervisor", decode_supervisor, summarize_supervisor, supervisor_placeholder)
    r(STORM, "workerbeats/*/*", "storm_worker", decode_heartbeat, summarize_heartbeat, worker_placeholder)
    r(STORM, "errors/*/*", "storm_error", decode_error_component, summarize_error)
    r(STORM, "errors/*/*/*", "storm_error", decode_error_node, summarize_error)
    r(
        STORM,
        "nimbuses/*",
        "storm_nimbus",
        decode_nimbus,
        lambda rs: f"{rs[0].host}:{rs[0].port} v{rs[0].version}",
        nimbus_placeholder,
    )
    r(STORM, "leader-lock/*", "storm_leader_latch", decode_leader_latch, lambda rs: f"candidate {rs[0].participant_id}")
    r(STORM, "leader-info", "storm_leader_info", decode_leader_info, lambda rs: f"leader {rs[0].host}:{rs[0].port}")
    r(
        STORM,
        "*/leader-info",
        "storm_leader_info",
        decode_leader_info,  # {root}{root}/leader-info (§2.1)
        lambda rs: f"leader {rs[0].host}:{rs[0].port}",
    )
    r(STORM, "blobstore/*/*", "storm_blob", decode_blob_holder, lambda rs: f"version {rs[0].version}")
    r(
        STORM,
        "blobstoremaxkeysequencenumber/*",
        "storm_blob_sequence",
        decode_blob_sequence,
        lambda rs: f"max version {rs[0].max_sequence}",
    )
    r(STORM, "logconfigs/*", "storm_log_config", decode_log_config, _summary("{n} logger settings", "logger"))
    r(
        STORM,
        "profilerconfigs/*/*",
        "storm_profile_request",
        decode_profile_request,
        lambda rs: f"{rs[0].action} {rs[0].host}:{rs[0].port}",
    )
    r(STORM, "credentials/*", "storm_credentials", decode_credentials, _summary("{n} credentials", "key"))
    r(
        STORM,
        "secretkeys/*/*/*",
        "storm_secret_key",
        decode_secret_key,
        lambda rs: f"key for {rs[0].user_name} (redacted)",
    )
    r(STORM, "backpressure/*/*", "storm_backpressure", decode_backpressure, lambda rs: "throttled")
    for layout in ("tasks", "taskbeats"):
        r(STORM, f"{layout}/*/*", "storm_legacy", decode_legacy_task_node, lambda rs: f"legacy 0.5-0.7 {rs[0].layout}")
    r(
        STORM,
        "taskerrors/*/*/*",
        "storm_legacy",
        decode_legacy_task_node,
        lambda rs: f"legacy error {rs[0].detail[:60]}",
    )


register()
