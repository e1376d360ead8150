"""Storm's ZooKeeper records as Thrift schemas, as ``storm.thrift`` defines them
(``storm-client/src/storm.thrift``; docs/storm-layout.md §4).

Data only: field id → (name, type). Types are wire names (``bool``, ``i32``, ``string``, …), or tuples
``("struct", Name)``, ``("enum", Name)``, ``("map", K, V)``, ``("list", E)``, ``("set", E)``. A schema
is all a TBinaryProtocol reader or writer needs, which is why zkstorm does not use generated code:
stock generators cannot build Storm's maps keyed by lists and structs (docs/storm-layout.md §8).
"""

from __future__ import annotations

from typing import Any

TypeSpec = Any  # a wire type name or a tuple as described above

_STATS = ("map", "string", ("map", "string", "i64"))

STRUCTS: dict[str, dict[int, tuple[str, TypeSpec]]] = {
    "StormBase": {
        1: ("name", "string"),
        2: ("status", ("enum", "TopologyStatus")),
        3: ("num_workers", "i32"),
        4: ("component_executors", ("map", "string", "i32")),
        5: ("launch_time_secs", "i32"),
        6: ("owner", "string"),
        7: ("topology_action_options", ("struct", "TopologyActionOptions")),
        8: ("prev_status", ("enum", "TopologyStatus")),
        9: ("component_debug", ("map", "string", ("struct", "DebugOptions"))),
        10: ("principal", "string"),
        11: ("topology_version", "string"),
    },
    "TopologyActionOptions": {
        1: ("kill_options", ("struct", "KillOptions")),
        2: ("rebalance_options", ("struct", "RebalanceOptions")),
    },
    "KillOptions": {1: ("wait_secs", "i32")},
    "RebalanceOptions": {
        1: ("wait_secs", "i32"),
        2: ("num_workers", "i32"),
        3: ("num_executors", ("map", "string", "i32")),
        4: ("topology_resources_overrides", ("map", "string", ("map", "string", "double"))),
        5: ("topology_conf_overrides", "string"),
        6: ("principal", "string"),
    },
    "DebugOptions": {1: ("enable", "bool"), 2: ("samplingpct", "double")},
    "Assignment": {
        1: ("master_code_dir", "string"),
        2: ("node_host", ("map", "string", "string")),
        3: ("executor_node_port", ("map", ("list", "i64"), ("struct", "NodeInfo"))),
        4: ("executor_start_time_secs", ("map", ("list", "i64"), "i64")),
        5: ("worker_resources", ("map", ("struct", "NodeInfo"), ("struct", "WorkerResources"))),
        6: ("total_shared_off_heap", ("map", "string", "double")),
        7: ("owner", "string"),
    },
    "NodeInfo": {1: ("node", "string"), 2: ("port", ("set", "i64"))},
    "WorkerResources": {
        1: ("mem_on_heap", "double"),
        2: ("mem_off_heap", "double"),
        3: ("cpu", "double"),
        4: ("shared_mem_on_heap", "double"),
        5: ("shared_mem_off_heap", "double"),
        6: ("resources", ("map", "string", "double")),
        7: ("shared_resources", ("map", "string", "double")),
    },
    "SupervisorInfo": {
        1: ("time_secs", "i64"),
        2: ("hostname", "string"),
        3: ("assignment_id", "string"),
        4: ("used_ports", ("list", "i64")),
        5: ("meta", ("list", "i64")),
        6: ("scheduler_meta", ("map", "string", "string")),
        7: ("uptime_secs", "i64"),
        8: ("version", "string"),
        9: ("resources_map", ("map", "string", "double")),
        10: ("server_port", "i32"),
    },
    "ClusterWorkerHeartbeat": {
        1: ("storm_id", "string"),
        2: ("executor_stats", ("map", ("struct", "ExecutorInfo"), ("struct", "ExecutorStats"))),
        3: ("time_secs", "i32"),  # i64 on master (3.0.0-SNAPSHOT): readers accept both widths
        4: ("uptime_secs", "i32"),
    },
    "ExecutorInfo": {1: ("task_start", "i32"), 2: ("task_end", "i32")},
    "ExecutorStats": {
        1: ("emitted", _STATS),
        2: ("transferred", _STATS),
        3: ("specific", ("struct", "ExecutorSpecificStats")),
        4: ("rate", "double"),
    },
    "ExecutorSpecificStats": {1: ("bolt", ("struct", "BoltStats")), 2: ("spout", ("struct", "SpoutStats"))},
    "SpoutStats": {
        1: ("acked", _STATS),
        2: ("failed", _STATS),
        3: ("complete_ms_avg", ("map", "string", ("map", "string", "double"))),
    },
    "BoltStats": {
        1: ("acked", ("map", "string", ("map", ("struct", "GlobalStreamId"), "i64"))),
        2: ("failed", ("map", "string", ("map", ("struct", "GlobalStreamId"), "i64"))),
        3: ("process_ms_avg", ("map", "string", ("map", ("struct", "GlobalStreamId"), "double"))),
        4: ("executed", ("map", "string", ("map", ("struct", "GlobalStreamId"), "i64"))),
        5: ("execute_ms_avg", ("map", "string", ("map", ("struct", "GlobalStreamId"), "double"))),
    },
    "GlobalStreamId": {1: ("componentId", "string"), 2: ("streamId", "string")},
    "ErrorInfo": {1: ("error", "string"), 2: ("error_time_secs", "i32"), 3: ("host", "string"), 4: ("port", "i32")},
    "NimbusSummary": {
        1: ("host", "string"),
        2: ("port", "i32"),
        3: ("uptime_secs", "i32"),  # in ZooKeeper: the nimbus start time, epoch seconds
        4: ("isLeader", "bool"),
        5: ("version", "string"),
        6: ("tlsPort", "i32"),
    },
    "Credentials": {1: ("creds", ("map", "string", "string")), 2: ("topoOwner", "string")},
    "LogConfig": {2: ("named_logger_level", ("map", "string", ("struct", "LogLevel")))},
    "LogLevel": {
        1: ("action", ("enum", "LogLevelAction")),
        2: ("target_log_level", "string"),
        3: ("reset_log_level_timeout_secs", "i32"),
        4: ("reset_log_level_timeout_epoch", "i64"),  # epoch milliseconds despite the name
        5: ("reset_log_level", "string"),
    },
    "ProfileRequest": {
        1: ("nodeInfo", ("struct", "NodeInfo")),
        2: ("action", ("enum", "ProfileAction")),
        3: ("time_stamp", "i64"),
    },
    "PrivateWorkerKey": {1: ("key", "binary"), 2: ("userName", "string"), 3: ("expirationTimeMillis", "i64")},
    "WorkerToken": {
        1: ("serviceType", ("enum", "WorkerTokenServiceType")),
        2: ("info", "binary"),
        3: ("signature", "binary"),
    },
    "WorkerTokenInfo": {
        1: ("userName", "string"),
        2: ("topologyId", "string"),
        3: ("secretVersion", "i64"),
        4: ("expirationTimeMillis", "i64"),
    },
}

ENUMS: dict[str, dict[int, str]] = {
    "TopologyStatus": {1: "ACTIVE", 2: "INACTIVE", 3: "REBALANCING", 4: "KILLED"},
    "LogLevelAction": {1: "UNCHANGED", 2: "UPDATE", 3: "REMOVE"},
    "ProfileAction": {
        0: "JPROFILE_STOP",
        1: "JPROFILE_START",
        2: "JPROFILE_DUMP",
        3: "JMAP_DUMP",
        4: "JSTACK_DUMP",
        5: "JVM_RESTART",
    },
    "WorkerTokenServiceType": {0: "NIMBUS", 1: "DRPC", 2: "SUPERVISOR"},
}

# Required fields per struct (storm.thrift "required"); checked after decoding, reported, not crashed on.
REQUIRED: dict[str, frozenset[str]] = {
    "StormBase": frozenset({"name", "status", "num_workers"}),
    "Assignment": frozenset({"master_code_dir"}),
    "NodeInfo": frozenset({"node", "port"}),
    "SupervisorInfo": frozenset({"time_secs", "hostname"}),
    "ClusterWorkerHeartbeat": frozenset({"storm_id", "executor_stats", "time_secs", "uptime_secs"}),
    "ExecutorInfo": frozenset({"task_start", "task_end"}),
    "ExecutorStats": frozenset({"emitted", "transferred", "specific", "rate"}),
    "SpoutStats": frozenset({"acked", "failed", "complete_ms_avg"}),
    "BoltStats": frozenset({"acked", "failed", "process_ms_avg", "executed", "execute_ms_avg"}),
    "GlobalStreamId": frozenset({"componentId", "streamId"}),
    "ErrorInfo": frozenset({"error", "error_time_secs"}),
    "NimbusSummary": frozenset({"host", "port", "uptime_secs", "isLeader", "version"}),
    "Credentials": frozenset({"creds"}),
    "LogLevel": frozenset({"action"}),
    "ProfileRequest": frozenset({"nodeInfo", "action"}),
    "PrivateWorkerKey": frozenset({"key", "userName", "expirationTimeMillis"}),
    "WorkerToken": frozenset({"serviceType", "info", "signature"}),
    "WorkerTokenInfo": frozenset({"userName", "topologyId", "secretVersion", "expirationTimeMillis"}),
}
