"""Every record zkstorm produces, as flat slotted dataclasses.

One record type feeds the terminal table, JSON, CSV and (later) Parquet: ``schema.py`` derives the
columns from these annotations, so a field added here shows up everywhere with no second schema.
Fields are scalars or tuples of scalars; nested source data becomes its own record keyed by its parent.
Every Storm and Kafka record ends with ``root``: the Storm root or Kafka chroot it was read under, so
the rows of two clusters on one ensemble never mix (in a snapshot, in history, in a diff).
How a type reads in a terminal table is said here too, once, for every command that shows it
(``render.record_table`` lays every table out by one rule):

- ``TABLE_COLUMNS``: the columns a table offers, in priority order (a comment or the docstring says why
  the first come first); a column is shown only if it fits whole, the rest are named under the table.
- ``TABLE_KEY``: the column that names the row (a topology, host, topic, path): never cut.
- ``TABLE_TEXT``: free text (a finding's explanation, a last error): last, in the room left.
- ``TABLE_FORMS``: field → (form, header): an epoch time as an ``age``, seconds as a ``duration``, a list
  by its ``count``, or only a shorter header (form None).
- ``TABLE_GROUPS``: (field, {value: (title, columns[, headers])}): a table per sort of row.
- ``TABLE_ONE_LINE``: one row is still a table row (partitions), not field, value lines.
Records are never changed after they are built, but they are not ``frozen``: a frozen dataclass sets
each field through ``object.__setattr__``, which made building one cost ~2.7x as much (16 fields:
2.3 µs against 0.85 µs), and a walk builds one or more per znode.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar


@dataclass(slots=True, kw_only=True)
class Znode:
    """One znode as the walker saw it: the full stat, the data size and the detected encoding.

    ``path`` is absolute on the ensemble (a ``--zk`` chroot is not part of it). Times are epoch ms as
    ZooKeeper stores them; ``ephemeral_owner`` is the owning session id (0 for persistent nodes).
    """

    path: str
    czxid: int
    mzxid: int
    pzxid: int
    ctime_ms: int
    mtime_ms: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    ephemeral: bool
    encoding: str
    summary: str | None = None
    decode_status: str = "not-decoded"  # "decoded", "failed", or "not-decoded" (no decoder for this path)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] or "/"


@dataclass(slots=True, kw_only=True)
class Unreadable:
    """A znode that exists but could not be read (``NoAuth``, or a persistent server-side error)."""

    path: str
    reason: str
    detail: str = ""


@dataclass(slots=True, kw_only=True)
class DecodeFailure:
    """A znode whose bytes did not decode as the record its path promises; the walk goes on."""

    path: str
    record_kind: str
    failure_type: str
    reason: str
    size: int
    encoding: str


# --- Storm (docs/storm-layout.md §4–§5; units as named) ----------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class StormTopology:
    """``storms/{id}``: a StormBase (or a 0.9 Clojure StormBase).

    Its table reads as ``storm list``: the name and status whole, then its size (workers, executors), its
    age and owner, a pending kill or rebalance and how long it still waits; the id last (the name says it)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "name",
        "status",
        "num_workers",
        "num_executors",
        "launch_time_secs",
        "owner",
        "action",
        "action_wait_secs",
        "topology_id",
    )
    TABLE_KEY: ClassVar[str] = "name"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "num_workers": (None, "workers"),
        "num_executors": (None, "executors"),
        "launch_time_secs": ("age", "age"),
        "action": (None, "pending"),
        "action_wait_secs": ("duration", "wait"),
        "topology_id": (None, "id"),
    }

    topology_id: str
    name: str
    status: str  # UNKNOWN when the znode could not be decoded
    num_workers: int | None
    launch_time_secs: int | None
    launched_at: datetime | None
    owner: str | None
    principal: str | None
    topology_version: str | None
    prev_status: str | None
    action: str | None  # "kill" while KILLED, "rebalance" while REBALANCING
    action_wait_secs: int | None
    rebalance_num_workers: int | None
    num_executors: int | None
    num_components: int | None
    format: str  # "thrift" or "java-0.9"; "unknown" when the znode could not be decoded
    # True when the StormBase gave no name (unreadable, undecodable, or a 0.9 base without storm-name) and
    # ``name`` is derived from the id ({name}-{counter}-{launch secs})
    name_derived: bool
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not
    decode_status: str = "ok"
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormComponent:
    """One component of a topology: its executor count and debug (event logging) switch."""

    topology_id: str
    component: str
    executors: int
    rebalance_executors: int | None
    debug_enabled: bool | None
    debug_sampling_pct: float | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormExecutor:
    """One executor range of an assignment, with its worker slot and scheduled resources.

    Its table reads as Storm UI's executor list: the task range, where it runs (host whole, port), how
    long since it started, what it was given; the supervisor id last (the host says it)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "start_task",
        "end_task",
        "host",
        "port",
        "start_time_secs",
        "mem_on_heap_mb",
        "cpu_pct",
        "node",
    )
    TABLE_KEY: ClassVar[str] = "host"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "start_task": (None, "first task"),
        "end_task": (None, "last task"),
        "start_time_secs": ("age", "up"),
        "mem_on_heap_mb": (None, "heap mb"),
        "cpu_pct": (None, "cpu %"),
        "node": (None, "supervisor"),
    }

    topology_id: str
    start_task: int
    end_task: int
    node: str  # supervisor id, not a hostname
    port: int
    host: str | None  # via the assignment's node->host
    start_time_secs: int | None
    master_code_dir: str | None  # the assignment's: nimbus's stormdist dir (0.9, 0.10) or storm.local.dir
    mem_on_heap_mb: float | None
    mem_off_heap_mb: float | None
    cpu_pct: float | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormComponentStats:
    """One spout or bolt in one stats window, as Storm UI's topology page shows it, computed from the
    worker heartbeats and the assignment (``model/storm_stats.py`` says how)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
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
    )
    # A table for spouts and one for bolts, each leading with what Storm UI's topology page leads with:
    # complete latency for spouts; capacity and the latencies for bolts. Counts follow, then stale
    # executors, then the last error (free text, last).
    TABLE_KEY: ClassVar[str] = "component"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("last_error",)
    TABLE_GROUPS: ClassVar[tuple[str, dict[Any, tuple[Any, ...]]]] = (
        "component_type",
        {
            "spout": (
                "Spouts",
                (
                    "component",
                    "executors",
                    "complete_latency_ms",
                    "emitted",
                    "transferred",
                    "acked",
                    "failed",
                    "stale_executors",
                    "last_error_at",
                    "last_error",
                ),
            ),
            "bolt": (
                "Bolts",
                (
                    "component",
                    "executors",
                    "capacity",
                    "execute_latency_ms",
                    "process_latency_ms",
                    "executed",
                    "emitted",
                    "acked",
                    "failed",
                    "stale_executors",
                    "last_error_at",
                    "last_error",
                ),
            ),
        },
    )
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "complete_latency_ms": (None, "complete ms"),
        "execute_latency_ms": (None, "execute ms"),
        "process_latency_ms": (None, "process ms"),
        "stale_executors": (None, "stale"),
        "last_error_at": ("age", "error age"),
        "last_error": (None, "last error"),
    }

    topology_id: str
    component: str
    component_type: str | None  # spout, bolt; None when no executor of it has a heartbeat
    window: str  # "600", "10800", "86400" (seconds) or ":all-time"
    executors: int  # with a heartbeat, as Storm counts them
    tasks: int
    emitted: int
    transferred: int
    acked: int
    failed: int
    complete_latency_ms: float | None  # spouts
    executed: int | None  # bolts
    execute_latency_ms: float | None
    process_latency_ms: float | None
    capacity: float | None  # bolts: the busiest executor's share of the last 10 minutes
    stale_executors: int  # assigned executors whose worker heartbeat is stale or missing
    last_error_at: datetime | None
    last_error_host: str | None
    last_error_port: int | None
    last_error: str | None  # its first line
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormComponentStream:
    """One stream of one component in one window (Storm UI's component page): an output stream, or a
    bolt's input stream from ``source_component``."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
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
    )

    topology_id: str
    component: str
    component_type: str | None
    window: str
    direction: str  # output, input
    stream: str
    source_component: str | None
    emitted: int | None
    transferred: int | None
    acked: int | None
    failed: int | None
    executed: int | None
    complete_latency_ms: float | None
    execute_latency_ms: float | None
    process_latency_ms: float | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormSupervisor:
    """``supervisors/{id}``: a supervisor's heartbeat (ephemeral: present means alive).

    Its table reads as Storm UI's supervisor list: the host whole, slots used of all, uptime, version,
    capacity; the supervisor id last (the host says it)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "hostname",
        "used_ports",
        "ports",
        "uptime_secs",
        "version",
        "memory_capacity_mb",
        "cpu_capacity_pct",
        "supervisor_id",
    )
    TABLE_KEY: ClassVar[str] = "hostname"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "used_ports": ("count", "used"),
        "ports": ("count", "slots"),
        "uptime_secs": ("duration", "uptime"),
        "memory_capacity_mb": (None, "mem mb"),
        "cpu_capacity_pct": (None, "cpu %"),
        "supervisor_id": (None, "id"),
    }

    supervisor_id: str
    hostname: str | None  # None (and the rest): a registration that could not be decoded
    assignment_id: str | None
    time_secs: int | None
    heartbeat_at: datetime | None
    uptime_secs: int | None
    used_ports: tuple[int, ...]
    ports: tuple[int, ...]
    version: str | None
    server_port: int | None
    memory_capacity_mb: float | None
    cpu_capacity_pct: float | None
    resources: tuple[str, ...]  # every capacity entry as "name=value"
    scheduler_meta: tuple[str, ...]  # "key=value"
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not
    decode_status: str = "ok"
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormWorker:
    """``workerbeats/{topology}/{node}-{port}``: a worker heartbeat. Age and staleness are derived
    against the time of the read (``model/storm.py``'s joins), so they are None straight out of the decoder.

    Its table answers "is each worker alive": host whole and port, the heartbeat's age and the stale
    flag first, then uptime and executors; the topology and supervisor ids last."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "host",
        "port",
        "age_secs",
        "stale",
        "uptime_secs",
        "num_executor_stats",
        "topology_id",
        "node",
    )
    TABLE_KEY: ClassVar[str] = "host"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "age_secs": ("duration", "beat age"),
        "uptime_secs": ("duration", "uptime"),
        "num_executor_stats": (None, "executors"),
        "topology_id": (None, "topology"),
        "node": (None, "supervisor"),
    }

    topology_id: str
    node: str
    port: int
    time_secs: int | None  # None (and the rest): a heartbeat that could not be decoded, stale
    heartbeat_at: datetime | None
    uptime_secs: int | None
    num_executor_stats: int | None  # entries in executor_stats, the worker's system executor [-1,-1] included
    host: str | None = None
    age_secs: int | None = None
    stale: bool | None = None
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not
    decode_status: str = "ok"
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormExecutorStat:
    """One counter of one executor in one window, flattened from a worker heartbeat."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
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
    )

    topology_id: str
    node: str
    port: int
    start_task: int
    end_task: int
    executor_type: str | None  # "spout", "bolt", or None for the worker's system executor
    metric: str  # emitted, transferred, acked, failed, executed, complete_ms_avg, process_ms_avg, execute_ms_avg
    window: str  # "600", "10800", "86400" (seconds) or ":all-time"
    stream: str
    source_component: str | None  # bolts: the component of the input stream
    value: float
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormExecutorStatColumns:
    """One heartbeat's ``StormExecutorStat`` rows as columns: what the snapshot's walk gets instead of the
    rows (``detail=DETAIL_COLUMNS``).

    The one-record-type rule bends here, and only here: a heartbeat carries ~180 counters, a large
    cluster millions, and making each a Python object (then reading it back, column by column, for
    Arrow) was the bulk of a snapshot's time. The rows a view shows are made from these same columns
    (``rows``), so a view's rows and the Parquet rows cannot differ. Not a record type: no table of its
    own, no JSON form; the snapshot writes it to ``StormExecutorStat``'s table.

    Fields that change per row are lists; those constant over a run of rows (one executor's metric in
    one window) are in ``runs``: ``(start_task, end_task, executor_type, metric, window, rows)``."""

    ROW_TYPE: ClassVar[type] = StormExecutorStat

    topology_id: str
    node: str
    port: int
    root: str
    runs: list[tuple[int, int, str | None, str, str, int]]
    stream: list[str]
    source_component: list[str | None]
    value: list[float]

    def __len__(self) -> int:
        return len(self.value)

    def columns(self) -> dict[str, list[Any]]:
        """Every column of ``StormExecutorStat``, by field name, in row order."""
        n = len(self.value)
        start: list[int] = []
        end: list[int] = []
        executor_type: list[str | None] = []
        metric: list[str] = []
        window: list[str] = []
        for run_start, run_end, run_type, run_metric, run_window, rows in self.runs:
            start += [run_start] * rows
            end += [run_end] * rows
            executor_type += [run_type] * rows
            metric += [run_metric] * rows
            window += [run_window] * rows
        return {
            "topology_id": [self.topology_id] * n,
            "node": [self.node] * n,
            "port": [self.port] * n,
            "start_task": start,
            "end_task": end,
            "executor_type": executor_type,
            "metric": metric,
            "window": window,
            "stream": self.stream,
            "source_component": self.source_component,
            "value": self.value,
            "root": [self.root] * n,
        }

    def rows(self) -> list[StormExecutorStat]:
        """The rows these columns hold, as a view shows them."""
        columns = self.columns()
        names = list(columns)
        return [StormExecutorStat(**dict(zip(names, row, strict=True))) for row in zip(*columns.values(), strict=True)]


@dataclass(slots=True, kw_only=True)
class StormError:
    """A stored error: ``errors/{topology}/{component}/e{seq}`` or the component's ``-last-error``."""

    topology_id: str
    component: str  # URL-decoded
    time_secs: int
    error_at: datetime
    host: str | None
    port: int | None
    error: str
    first_line: str
    sequence: int | None  # the e-node's ZooKeeper sequence; None for a -last-error node
    last_error: bool
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormNimbus:
    """``nimbuses/{id}``: a nimbus registration; leadership comes from the leader latch."""

    # host whole, then whether it leads (the question), how long it has run, its version; the TLS port last
    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "host",
        "port",
        "is_leader",
        "started_secs",
        "version",
        "tls_port",
    )
    TABLE_KEY: ClassVar[str] = "host"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "is_leader": (None, "leader"),
        "started_secs": ("age", "up"),
        "tls_port": (None, "tls port"),
    }

    nimbus_id: str
    host: str
    port: int | None
    tls_port: int | None
    started_secs: int | None  # NimbusSummary.uptime_secs as stored: the start time, epoch seconds
    version: str | None
    is_leader: bool | None = None
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not
    decode_status: str = "ok"
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormLeaderLatch:
    """``leader-lock/_c_…-latch-{seq}``: a nimbus in the leader election; lowest sequence leads."""

    node_name: str
    participant_id: str  # host:port, or host:port:tlsPort from 2.6.4/2.7.0
    sequence: int
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormLeaderInfo:
    """``leader-info`` (2.x): the Java-serialized NimbusInfo the leader writes."""

    path: str
    host: str
    port: int
    tls_port: int | None
    is_leader: bool
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormBlob:
    """``blobstore/{key}/{nimbus}-{version}``: a nimbus holding a version of a blob."""

    key: str
    nimbus_id: str
    version: int
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormBlobSequence:
    """``blobstoremaxkeysequencenumber/{key}``: the newest version of a blob."""

    key: str
    max_sequence: int
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormLogLevel:
    """One logger setting of ``logconfigs/{topology}``."""

    topology_id: str
    logger: str | None  # None: a log config with no logger in it (kept, so the topology's row is not lost)
    action: str | None
    target_level: str | None
    reset_timeout_secs: int | None
    reset_at_ms: int | None  # LogLevel.reset_log_level_timeout_epoch: epoch milliseconds
    reset_level: str | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormProfileRequest:
    """``profilerconfigs/{topology}/{host}_{port}_{ACTION}``."""

    topology_id: str
    host: str
    port: int
    action: str
    timestamp_ms: int | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormCredential:
    """One entry of ``credentials/{topology}``; the value is redacted unless asked for."""

    topology_id: str
    key: str | None  # None: no credential stored, the owner still shown
    value: str | None
    value_length: int | None
    owner: str | None
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormSecretKey:
    """``secretkeys/{service}/{topology}/{version}``: a worker-token signing key (redacted)."""

    service: str
    topology_id: str
    version: int
    user_name: str
    expiration_ms: int
    key: str
    key_length: int
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormBackpressure:
    """``backpressure/{topology}/{node}-{port}`` (1.x): when a worker last turned throttling on."""

    topology_id: str
    node: str
    port: int
    throttle_on_ms: int
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormLegacyNode:
    """A node of the Storm 0.5–0.7 task layout (``tasks``, ``taskbeats``, ``taskerrors``), shown as legacy."""

    path: str
    layout: str
    topology_id: str
    task_id: int | None
    detail: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormRoot:
    """A Storm root found on the ensemble (a node holding both ``storms`` and ``assignments``)."""

    root: str
    num_topologies: int


@dataclass(slots=True, kw_only=True)
class DecodeWarning:
    """A znode decoded the way Kafka (or Storm) would, but something about it deserves a look: a BOM, a
    duplicate key, trailing bytes, an unknown schema version, a legacy format."""

    path: str
    record_kind: str
    warning: str  # bom_stripped, duplicate_key, trailing_bytes, unknown_version, legacy_format, …
    detail: str


# --- Kafka (docs/kafka-layout.md §3; times in ms since the epoch as Kafka writes them) --------------------------


@dataclass(slots=True, kw_only=True)
class KafkaBroker:
    """``brokers/ids/{id}``: a live broker's registration (ephemeral). Brokers named in replica lists but
    not registered appear with ``alive`` false and nothing else known."""

    # as ``kafka-broker-api-versions`` names them: id, whether it is registered, its address whole, its
    # rack; then how long since it registered (a restart resets it) and the registration's version;
    # endpoints last (long, and the host and port above are the first PLAINTEXT one's)
    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "broker_id",
        "alive",
        "host",
        "port",
        "rack",
        "registered_at",
        "version",
        "endpoints",
    )
    TABLE_KEY: ClassVar[str] = "host"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "broker_id": (None, "id"),
        "registered_at": ("age", "up"),
    }

    broker_id: int
    alive: bool
    version: int | None
    host: str | None  # of the first PLAINTEXT-protocol endpoint; None when the broker has none
    port: int | None  # -1 when there is no PLAINTEXT endpoint
    rack: str | None
    jmx_port: int | None
    timestamp_ms: int | None
    registered_at: datetime | None
    endpoints: tuple[str, ...]  # "LISTENER://host:port"
    listener_protocols: tuple[str, ...]  # "LISTENER=PROTOCOL"
    features: tuple[str, ...]  # "name=min..max"
    broker_epoch: int | None  # the registration's czxid (KIP-380); over KRaft the registration's own epoch
    session_id: int | None  # ephemeralOwner: changes on every restart
    # KRaft only (None over ZooKeeper, where a registration exists only while its broker is alive): fenced
    # (no heartbeat within the session timeout, or not caught up yet: not alive, leads nothing) and in
    # controlled shutdown (moving its leaderships away before it stops)
    fenced: bool | None = None
    in_controlled_shutdown: bool | None = None
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not; or the failure type of a registration Kafka refuses
    # whose fields read (no jmx_port): the row as read
    decode_status: str = "ok"
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaTopic:
    """``brokers/topics/{topic}``: the replica assignment's envelope."""

    # as ``kafka-topics --describe``'s topic line: the name whole, partitions, replication factor, then a
    # reassignment in flight, the topic id and the znode's version
    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "topic",
        "partition_count",
        "replication_factor",
        "reassigning_partitions",
        "pending_deletion",
        "topic_id",
        "version",
    )
    TABLE_KEY: ClassVar[str] = "topic"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "partition_count": (None, "partitions"),
        "replication_factor": (None, "rf"),
        "reassigning_partitions": (None, "moving"),
        "pending_deletion": (None, "deleting"),
        "topic_id": (None, "id"),
    }

    topic: str
    version: int | None
    topic_id: str | None
    partition_count: int | None  # None: the assignment could not be decoded
    replication_factor: int | None  # replicas minus those being added (KIP-455), of the first partition
    reassigning_partitions: int | None
    # marked for deletion (admin/delete_topics/{topic}, a join of the model's): Kafka's metadata stops
    # serving the topic as its deletion starts, and the znodes stay until every replica is deleted (a
    # replica on a dead broker stalls it), as kafka-topics --zookeeper listed it, "marked for deletion"
    pending_deletion: bool = False
    # "ok", or why the znode gave no record (a failure type, "unreadable"): a placeholder row, so every
    # entity that exists is listed, decoded or not; or the failure type of a topic Kafka refuses whose
    # fields read (a topic_id that is not a Kafka Uuid): the row as read, its partitions with it
    decode_status: str = "ok"
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReplicaAssignment:
    """One partition of a topic znode: its replicas (preferred leader first) and KIP-455 changes."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaPartitionState:
    """``brokers/topics/{topic}/partitions/{p}/state``: leader and ISR as the controller wrote them."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    version: int | None  # None: not written (Kafka does not read it)
    leader_recovery_state: int  # 0 RECOVERED (absent), 1 RECOVERING
    zk_version: int | None  # the partition epoch: every leader/ISR write is conditional on it
    # KRaft only (KIP-966; None over ZooKeeper and before the metadata version that has them): replicas
    # that may still be elected cleanly though out of the ISR, and the last ones known to be
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaPartition:
    """A partition joined from its assignment and state, with its health as ``kafka-topics --describe``
    judges it from ZooKeeper alone (docs/kafka-layout.md §3.5). ``health`` is ``unknown`` when the state is
    unreadable."""

    # One line each, as ``kafka-topics --describe``: topic whole, partition, leader; then the verdict
    # (health) before the lists, so an 80-column terminal keeps it beside the ISR; the replicas, min ISR,
    # why the state is unknown, a move in flight, the leader epoch.
    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "topic",
        "partition",
        "leader",
        "health",
        "isr",
        "replicas",
        "min_isr",
        "state_problem",
        "adding_replicas",
        "removing_replicas",
        "leader_epoch",
    )
    TABLE_KEY: ClassVar[str] = "topic"
    TABLE_ONE_LINE: ClassVar[bool] = True
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "partition": (None, "part"),
        "state_problem": (None, "problem"),
        "adding_replicas": (None, "adding"),
        "removing_replicas": (None, "removing"),
        "leader_epoch": (None, "epoch"),
    }

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    leader: int | None
    leader_epoch: int | None
    isr: tuple[int, ...]
    controller_epoch: int | None
    zk_version: int | None
    leader_recovery_state: int | None
    offline: bool | None
    under_replicated: bool | None
    under_min_isr: bool | None
    at_min_isr: bool | None
    preferred_leader: bool | None
    min_isr: int
    min_isr_source: str  # topic_override, dynamic_cluster_default, assumed_kafka_default
    pending_deletion: bool
    health: str  # ok, offline, under_min_isr, recovering, under_replicated, unknown
    # why the state is not known: missing_node (no state znode: no leader was ever elected, or it was
    # deleted), a failure type when it cannot be decoded, unreadable; None when the state was read
    state_problem: str | None = None
    eligible_leader_replicas: tuple[int, ...] | None = None  # KRaft only (KIP-966): see KafkaPartitionState
    last_known_elr: tuple[int, ...] | None = None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaController:
    """``controller``: the active controller (ephemeral; persistent while a KRaft controller holds it)."""

    broker_id: int
    version: int
    timestamp_ms: int | None
    elected_at: datetime | None
    kraft_controller_epoch: int | None
    ephemeral: bool
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaControllerEpoch:
    epoch: int
    zk_version: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConfig:
    """One entry of ``config/{type}/{name}``; sensitive values (SCRAM, passwords) are redacted.

    Its tables read as ``kafka-configs --describe``, one per entity type (so the type needs no column):
    whose config (the name whole), the key, its value (free text, last: a JAAS config is long)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = ("entity_type", "entity_name", "key", "value", "sensitive")
    TABLE_KEY: ClassVar[str] = "entity_name"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("value",)
    TABLE_GROUPS: ClassVar[tuple[str, dict[Any, tuple[Any, ...]]]] = (
        "entity_type",
        {
            "topics": ("Topic configs", ("entity_name", "key", "value")),
            "brokers": ("Broker configs", ("entity_name", "key", "value")),
            "users": ("User quotas and credentials", ("entity_name", "key", "value")),
            "clients": ("Client quotas", ("entity_name", "key", "value")),
            "users/clients": ("User and client quotas", ("entity_name", "key", "value")),
            "ips": ("IP quotas", ("entity_name", "key", "value")),
        },
    )
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "entity_type": (None, "type"),
        "entity_name": (None, "name"),
    }

    entity_type: str  # topics, brokers, users, clients, ips, users/clients
    entity_name: str
    key: str | None  # None: the entity's config znode holds no key (every override deleted)
    value: str | None
    sensitive: bool
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConfigChange:
    """``config/changes/config_change_{seq}``: a recent config change (purged after ~15 minutes)."""

    node: str
    sequence: int
    version: int
    entity_path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaAcl:
    """One ACL of ``kafka-acl/{type}/{name}`` (or ``kafka-acl-extended/prefixed/…``).

    Its table reads as ``kafka-acls --list``: the resource (type, name whole), then who (principal) is
    allowed or denied (a deny wins) what (operation) from where (host); whether the name is a prefix."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "resource_type",
        "resource_name",
        "principal",
        "permission_type",
        "operation",
        "host",
        "pattern_type",
    )
    TABLE_KEY: ClassVar[str] = "resource_name"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "resource_type": (None, "resource"),
        "resource_name": (None, "name"),
        "pattern_type": (None, "pattern"),
        "permission_type": (None, "permission"),
    }

    pattern_type: str  # LITERAL or PREFIXED
    resource_type: str
    resource_name: str
    principal: str | None  # None (and the rest): the resource's ACL znode lists no ACL
    permission_type: str | None
    operation: str | None
    host: str | None
    # "ok", or the failure type of an ACL znode Kafka refuses (an operation Any, a principal without its
    # type): its ACLs are listed as written, and none of them is in force
    decode_status: str = "ok"
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaAclChange:
    node: str
    sequence: int
    pattern_type: str
    resource_type: str
    resource_name: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReassignment:
    """A partition being moved: from a topic's KIP-455 fields or the legacy admin znode.

    Its table reads as ``kafka-reassign-partitions --verify``: the partition, where it goes, how."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = ("topic", "partition", "target_replicas", "source")
    TABLE_KEY: ClassVar[str] = "topic"
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {"target_replicas": (None, "to replicas")}

    topic: str
    partition: int
    target_replicas: tuple[int, ...]
    source: str  # kip455 or admin
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaPreferredElection:
    topic: str
    partition: int
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaTopicDeletion:
    """``admin/delete_topics/{topic}``: a topic marked for deletion."""

    topic: str
    marked_ms: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaIsrChange:
    node: str
    topic: str | None  # None: a notification that names no partition
    partition: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaLogDirEvent:
    node: str
    broker_id: int
    event: int  # 1 = log directory failure
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConsumerMember:
    """``consumers/{group}/ids/{id}``: a live old (ZooKeeper-based) consumer."""

    group: str
    consumer_id: str
    version: int | None
    subscription: tuple[str, ...]  # "topic-or-regex=streams"
    pattern: str | None
    timestamp_ms: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConsumerOwner:
    group: str
    topic: str
    partition: int
    owner_thread: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConsumerOffset:
    """An old (ZooKeeper-based) consumer group's committed offset: ``consumers/{group}/offsets/{t}/{p}``."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = ("group", "topic", "partition", "offset")
    TABLE_KEY: ClassVar[str] = "group"

    group: str
    topic: str
    partition: int
    offset: int
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaClusterId:
    cluster_id: str
    version: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaProducerIdBlock:
    version: int
    broker_id: int
    block_start: int
    block_end: int
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaFeature:
    version: int
    status: str  # Enabled / Disabled
    finalized_features: tuple[str, ...]  # "name=min..max"
    # KRaft only: the metadata version (its feature level and MetadataVersion's name, "4.4-IV2"); a
    # ZooKeeper cluster has an inter.broker.protocol.version instead, in no znode
    metadata_version_level: int | None = None
    metadata_version: str | None = None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaMigration:
    """``migration``: written by a KRaft controller migrating the cluster off ZooKeeper (3.4+)."""

    version: int
    kraft_metadata_offset: int
    kraft_controller_id: int
    kraft_metadata_epoch: int
    kraft_controller_epoch: int
    zk_version: int | None
    modified_ms: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaDelegationToken:
    """``delegation_token/tokens/{id}``: token metadata only (the HMAC is never stored)."""

    token_id: str
    owner: str
    expiry_ms: int | None
    max_ms: int | None
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaRoot:
    root: str
    brokers: int
    topics: int


@dataclass(slots=True, kw_only=True)
class KafkaFinding:
    """One explained health finding (``kafka health``). ``finding`` names the rule (``offline_partition``,
    ``under_min_isr``, …); it is not called ``kind``, which every JSON object uses for its record type."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = ("level", "finding", "detail")
    TABLE_KEY: ClassVar[str] = "finding"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("detail",)

    finding: str
    level: str  # error, warning, info
    topic: str | None
    partition: int | None
    broker_id: int | None
    detail: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaFindingSummary:
    """One health rule's findings taken together (``kafka health`` leads with these): how many, where
    most of them are, and what they mean, said once."""

    finding: str
    level: str
    count: int
    topics: tuple[str, ...]  # the most affected, as "topic (partitions)"
    brokers: tuple[int, ...]
    explanation: str
    root: str  # the Kafka chroot it was read under


# --- ZooKeeper itself: the ensemble that holds the metadata, and what fills it ----------------------------


@dataclass(slots=True, kw_only=True)
class ZkMember:
    """One member of the ensemble as it answered ``srvr``, ``mntr`` and ``conf`` (or its AdminServer's
    ``/commands/monitor``), or did not. Figures a member would not give are None, and ``problem`` says why."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "host",
        "port",
        "server_id",
        "mode",
        "version",
        "zxid_lag",
        "latency_avg_ms",
        "latency_max_ms",
        "outstanding_requests",
        "connections",
        "znode_count",
        "watch_count",
        "approximate_data_bytes",
        "open_file_descriptors",
        "problem",
    )
    # host whole, then how it serves (mode, version, how far behind), how it performs (latency, queue,
    # connections), what it holds; why figures are missing (free text) last
    TABLE_KEY: ClassVar[str] = "host"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("problem",)
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "server_id": (None, "id"),
        "zxid_lag": (None, "behind"),
        "latency_avg_ms": (None, "avg ms"),
        "latency_max_ms": (None, "max ms"),
        "outstanding_requests": (None, "queued"),
        "znode_count": (None, "znodes"),
        "watch_count": (None, "watches"),
        "approximate_data_bytes": (None, "data bytes"),
        "open_file_descriptors": (None, "open fds"),
    }

    host: str
    port: int | None  # its client port; None for a peer whose configuration line names none (not read)
    server_id: int | None  # its myid, from conf or the ensemble's configuration
    learner_type: str | None  # participant (votes) or observer, from the ensemble's configuration
    mode: str  # leader, follower, observer, standalone, read-only, not-serving, unreachable, unknown
    serving: bool  # answers clients (a read-only member answers read-only clients only)
    read_only: bool | None  # in read-only mode: cut off from its quorum, readonlymode.enabled
    version: str | None  # "3.9.3"
    zxid: int | None  # the last transaction it processed
    zxid_lag: int | None  # transactions behind the leader's (0 for the leader; None without a leader)
    latency_min_ms: int | None
    latency_avg_ms: float | None
    latency_max_ms: int | None
    outstanding_requests: int | None
    connections: int | None
    znode_count: int | None
    watch_count: int | None
    ephemerals_count: int | None
    approximate_data_bytes: int | None
    open_file_descriptors: int | None
    max_file_descriptors: int | None
    followers: int | None  # the leader's: learners connected
    synced_followers: int | None  # the leader's: followers in sync
    uptime_ms: int | None
    source: str  # how it was read: 4lw (srvr and mntr), srvr (srvr only), admin (srvr and the AdminServer), none
    named_in: str  # zk (a --zk host) or config (a peer only the ensemble's configuration names)
    problem: str | None  # why figures are missing: unreachable, not serving, words not whitelisted
    advice: str | None  # the one setting to change so that zkstorm can read it all
    # figures it printed that no counter can hold (1e400, NaN, -5), as printed: ``key=value, …``; each is
    # None among the figures above, and the member has a ``member_odd_figures`` finding
    odd_figures: str | None = None


@dataclass(slots=True, kw_only=True)
class ZkFinding:
    """One explained health finding of the ensemble (``zk health``): a member down or behind, no quorum, a
    znode near ``jute.maxbuffer`` (named with its Storm or Kafka meaning)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = ("level", "finding", "member", "detail")
    TABLE_KEY: ClassVar[str] = "finding"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("detail",)

    finding: str  # no_quorum, member_unreachable, follower_behind, znode_near_jute_maxbuffer, …
    level: str  # error, warning, info
    member: str | None  # host:port
    path: str | None
    size: int | None  # the znode's data bytes (znode findings)
    detail: str


@dataclass(slots=True, kw_only=True)
class ZkUsage:
    """Where the data and znodes are: one subtree, one record kind, or one of the largest znodes
    (``by``), with its Storm or Kafka meaning. Sizes are the znodes' data as their stats give them (live),
    or the snapshot's own (``--from-files``)."""

    TABLE_COLUMNS: ClassVar[tuple[str, ...]] = (
        "by",
        "key",
        "meaning",
        "znodes",
        "data_bytes",
        "share_pct",
        "ephemerals",
        "largest_bytes",
        "root",
    )
    # Three short tables: subtrees (path whole, then its size and share), record kinds (what it is, and
    # under which root when there are several, then the same figures), the largest znodes (path and
    # size, then what it is: free text, last). A path names its root: no root column beside one.
    TABLE_KEY: ClassVar[str] = "key"
    TABLE_TEXT: ClassVar[tuple[str, ...]] = ("meaning",)
    TABLE_GROUPS: ClassVar[tuple[str, dict[Any, tuple[Any, ...]]]] = (
        "by",
        {
            "subtree": (
                "Subtrees",
                ("key", "data_bytes", "share_pct", "znodes", "meaning", "ephemerals"),
                {"key": "subtree"},
            ),
            "record_kind": (
                "Record kinds",
                ("key", "root", "data_bytes", "share_pct", "znodes", "largest_bytes", "meaning"),
                {"key": "kind"},
            ),
            "znode": ("Largest znodes", ("key", "data_bytes", "meaning"), {"key": "path"}),
        },
    )
    TABLE_FORMS: ClassVar[dict[str, tuple[str | None, str]]] = {
        "data_bytes": (None, "bytes"),
        "share_pct": (None, "share %"),
        "largest_bytes": (None, "largest"),
    }

    by: str  # subtree, record_kind, znode
    key: str  # the subtree's or the znode's path, or the record kind (storm_worker, kafka_consumer_offset …)
    meaning: str  # what it is to Storm or Kafka ("Storm worker heartbeats", "assignment of topology X")
    root: str | None  # the Storm root or Kafka chroot it is under; None for ZooKeeper's own and the rest
    znodes: int
    data_bytes: int
    ephemerals: int
    share_pct: float  # of all the data bytes read
    largest_path: str
    largest_bytes: int


@dataclass(slots=True, kw_only=True)
class WatchChange:
    """One difference between two rounds of a watched view (``--watch``): a subject that appeared,
    cleared, or changed its state (``was`` says from what)."""

    round: int
    at: datetime
    change: str  # appeared, cleared, changed
    subject: str  # "offline_partition orders-3", "worker wordcount-7-… host:6700"
    level: str
    detail: str
    was: str | None
    root: str  # the Storm or Kafka root of the watched view


# --- changes: what ZooKeeper's transaction logs say happened (``zkstorm changes``) ----------------------
#
# One record type per change kind. Each is what one logged txn (or one op of a multi, or one ephemeral a
# session's close removed) did, decoded from the state of the znode before it and after it, and carries
# the txn's identity at its end: ``zxid``, ``time_ms`` (the txn header's time: the leader's clock, epoch
# milliseconds; ``at`` is the same instant), ``session_id`` (the session whose txn it is), ``path`` and the
# Storm or Kafka ``root`` it falls under (None for a znode under neither). A change that happened through a
# session's end says ``how``: ``expired`` (the server ended the session: ZooKeeperServer.expire submits a
# closeSession with cxid 0), ``closed`` (the client closed it) or ``deleted`` (a delete request).


@dataclass(slots=True, kw_only=True)
class KafkaBrokerRegistered:
    """``brokers/ids/{id}`` created: a broker started (or came back) and registered its session."""

    at: datetime
    broker_id: int
    host: str | None
    port: int | None
    rack: str | None
    endpoints: tuple[str, ...]
    zxid: int
    time_ms: int
    session_id: int  # the session that holds the registration (its ephemeral owner)
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaBrokerGone:
    """``brokers/ids/{id}`` removed: its session expired or was closed (a clean shutdown), or it was
    deleted."""

    at: datetime
    broker_id: int
    host: str | None
    port: int | None
    # ZooKeeper: expired, closed, deleted; KRaft (changes/kraft.py): fenced (after it served: its lease
    # lapsed or the controller fenced it), controlled_shutdown, unregistered, registered_again (a new
    # registration, fenced, replaced the one that served: the broker restarted within its lease)
    how: str
    registered_at: datetime | None  # when the registration that went was made (its ctime)
    zxid: int
    time_ms: int
    session_id: int  # for a session's end: the session that held the registration
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaBrokerRegisteredFenced:
    """KRaft only: a broker registered with the controller, fenced, as Kafka registers every broker
    (``ClusterControlManager.registerBroker`` writes ``RegisterBrokerRecord`` with ``Fenced`` true): it
    serves once the controller unfences it (``KafkaBrokerRegistered``), after it caught up with the
    metadata log. Fenced at registration, where ``KafkaBrokerGone`` (``how`` ``fenced``) is a broker
    fenced after it served."""

    at: datetime
    broker_id: int
    host: str | None
    port: int | None
    rack: str | None
    endpoints: tuple[str, ...]
    replaced: bool  # it replaced a registration that was serving (then also a KafkaBrokerGone, registered_again)
    zxid: int
    time_ms: int
    session_id: int  # the broker epoch: the offset of its RegisterBrokerRecord
    path: str
    root: str


@dataclass(slots=True, kw_only=True)
class KafkaBrokerControlledShutdown:
    """KRaft only: a broker began its controlled shutdown (``BrokerRegistrationChangeRecord`` with
    ``InControlledShutdown`` 1, ``BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN``):
    it asked to stop, and the controller moves its leaderships off it, then fences it
    (``KafkaBrokerGone``, ``how`` ``controlled_shutdown``). ``fenced``: whether it was fenced already
    (a broker that never served)."""

    at: datetime
    broker_id: int
    host: str | None
    port: int | None
    fenced: bool
    zxid: int
    time_ms: int
    session_id: int  # the broker epoch
    path: str
    root: str


@dataclass(slots=True, kw_only=True)
class KafkaControllerElected:
    """``controller`` created: a broker won the controller election."""

    at: datetime
    broker_id: int | None
    epoch: int | None  # controller_epoch after this txn (Kafka bumps it in the same multi since 2.2)
    previous_broker_id: int | None  # the controller before it, when the logs or the snapshot say
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaControllerGone:
    """``controller`` removed: the controller resigned, or its session ended."""

    at: datetime
    broker_id: int | None
    how: str  # expired, closed, deleted
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaPartitionChanged:
    """``brokers/topics/{t}/partitions/{p}/state`` written: leader, ISR and epochs before and after, and
    whether the partition was offline (no leader, or a leader that is not registered) before and after."""

    at: datetime
    topic: str
    partition: int
    leader_before: int | None  # None: no state before (created), or not known
    leader: int
    isr_before: tuple[int, ...] | None
    isr: tuple[int, ...]
    isr_removed: tuple[int, ...]
    isr_added: tuple[int, ...]
    leader_epoch_before: int | None
    leader_epoch: int
    controller_epoch: int
    offline_before: bool | None
    offline: bool
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaTopicCreated:
    """``brokers/topics/{t}`` created."""

    at: datetime
    topic: str
    topic_id: str | None
    partitions: int | None
    replication_factor: int | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaTopicMarkedForDeletion:
    """``admin/delete_topics/{t}`` created: an admin asked to delete the topic."""

    at: datetime
    topic: str
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaTopicDeleted:
    """``brokers/topics/{t}`` removed: the controller finished deleting the topic."""

    at: datetime
    topic: str
    topic_id: str | None
    partitions: int | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaPartitionsAdded:
    """``brokers/topics/{t}`` rewritten with more partitions (``kafka-topics --alter --partitions``)."""

    at: datetime
    topic: str
    partitions_before: int
    partitions: int
    added: tuple[int, ...]
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReassignmentStarted:
    """A partition began moving: KIP-455 adding/removing replicas appeared in its topic znode, or an
    admin reassignment (``admin/reassign_partitions``) listed it."""

    at: datetime
    topic: str
    partition: int
    replicas_before: tuple[int, ...] | None  # None: not known (an admin request names only the target)
    replicas: tuple[int, ...]  # KIP-455: the full set while moving; admin: the target
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    source: str  # kip455 or admin
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReassignmentProgressed:
    """A moving partition's replicas, adding or removing replicas changed while it is still moving."""

    at: datetime
    topic: str
    partition: int
    replicas_before: tuple[int, ...] | None
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    source: str  # kip455 or admin
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReassignmentCompleted:
    """A partition finished moving (or the move was cancelled): no replicas adding or removing any more,
    or the controller took it off ``admin/reassign_partitions``."""

    at: datetime
    topic: str
    partition: int
    replicas_before: tuple[int, ...] | None
    replicas: tuple[int, ...] | None  # None: not known (admin: the topic znode says where it ended)
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    source: str  # kip455 or admin
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaReplicasChanged:
    """A partition's replica list changed without a KIP-455 move (a step of an admin reassignment, or an
    assignment rewritten by hand)."""

    at: datetime
    topic: str
    partition: int
    replicas_before: tuple[int, ...]
    replicas: tuple[int, ...]
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaConfigChanged:
    """``config/{type}/{name}`` created, written or removed: which keys were set, changed or removed, as
    ``key=before->after`` (a secret's values as ``<redacted>``, unless --show-secrets)."""

    at: datetime
    entity_type: str
    entity_name: str
    keys_set: tuple[str, ...]  # added or changed
    keys_removed: tuple[str, ...]
    changes: tuple[str, ...]
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaAclChanged:
    """``kafka-acl/{type}/{name}`` (or the prefixed one) created, written or removed: the ACLs added and
    removed, as ``principal permission operation from host``."""

    at: datetime
    pattern_type: str
    resource_type: str
    resource_name: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaIsrChangeNotified:
    """``isr_change_notification/isr_change_N`` created: a broker told the controller of ISR changes."""

    at: datetime
    partitions: tuple[str, ...]  # "topic-partition"
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class KafkaLogDirEventNotified:
    """``log_dir_event_notification/log_dir_event_N`` created: a broker reported a failed log directory."""

    at: datetime
    broker_id: int | None
    event: int | None  # 1 = log directory failure
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Kafka chroot it was read under


@dataclass(slots=True, kw_only=True)
class StormTopologySubmitted:
    """``storms/{id}`` created: a topology was submitted."""

    at: datetime
    topology_id: str
    name: str
    status: str
    num_workers: int | None
    num_executors: int | None
    owner: str | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormTopologyStatusChanged:
    """``storms/{id}`` written with another status (activate, deactivate, kill, rebalance) or worker
    count."""

    at: datetime
    topology_id: str
    name: str
    status_before: str | None  # None: not known
    status: str
    num_workers_before: int | None
    num_workers: int | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormTopologyRemoved:
    """``storms/{id}`` removed: nimbus finished killing the topology."""

    at: datetime
    topology_id: str
    name: str
    status_before: str | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormAssignmentChanged:
    """``assignments/{id}`` created, written or removed: which executors moved from which slot to which
    (``1-4 host-a:6700->host-b:6701``), and the worker slots taken and freed (``host:port``)."""

    at: datetime
    topology_id: str
    name: str
    executors_before: int
    executors: int
    executors_moved: int
    moves: tuple[str, ...]
    slots_added: tuple[str, ...]
    slots_freed: tuple[str, ...]
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormSupervisorJoined:
    """``supervisors/{id}`` created: a supervisor started and registered."""

    at: datetime
    supervisor_id: str
    hostname: str | None
    slots: int | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormSupervisorLeft:
    """``supervisors/{id}`` removed: its session expired or was closed."""

    at: datetime
    supervisor_id: str
    hostname: str | None
    how: str  # expired, closed, deleted
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormWorkerStarted:
    """``workerbeats/{id}/{node}-{port}`` created: a worker's first heartbeat."""

    at: datetime
    topology_id: str
    node: str
    port: int
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormWorkerStopped:
    """``workerbeats/{id}/{node}-{port}`` removed (nimbus clears the heartbeats of a topology it killed
    or of a worker it moved)."""

    at: datetime
    topology_id: str
    node: str
    port: int
    how: str
    last_beat_at: datetime | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormWorkerStale:
    """A worker wrote no heartbeat for longer than ``stale_after_secs``: found at the first txn past that
    moment (``zxid``, ``at``), which need not be the worker's own."""

    at: datetime
    topology_id: str
    node: str
    port: int
    last_beat_at: datetime
    stale_after_secs: float
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormWorkerResumed:
    """A stale worker wrote a heartbeat again, ``silent_secs`` after its previous one."""

    at: datetime
    topology_id: str
    node: str
    port: int
    silent_secs: float
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormErrorReported:
    """``errors/{id}/{component}/e…`` created (or a ``-last-error`` written alone): a component reported
    an error."""

    at: datetime
    topology_id: str
    component: str
    error_at: datetime | None
    host: str | None
    port: int | None
    first_line: str | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormNimbusLeaderChanged:
    """The nimbus leading (the lowest ``leader-lock`` latch, Curator's LeaderLatch) changed."""

    at: datetime
    leader_before: str | None  # host:port[:tlsPort]; None: no leader
    leader: str | None
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class StormBackpressureChanged:
    """``backpressure/{id}/{node}-{port}`` created (throttle on) or removed (off)."""

    at: datetime
    topology_id: str
    node: str
    port: int | None
    on: bool
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str  # the Storm root it was read under


@dataclass(slots=True, kw_only=True)
class ZnodeCreated:
    """Any other znode created, with what its decoder (if any) makes of its data."""

    at: datetime
    record_kind: str | None  # the decoder's kind; None when no decoder claims the path
    summary: str | None  # the decoded summary, the failure, or the encoding
    failure_type: str | None  # the data does not decode as ``record_kind`` (a ``FailureType``)
    ephemeral: bool
    data_length: int
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str | None  # the Storm or Kafka root it is under; None for neither


@dataclass(slots=True, kw_only=True)
class ZnodeDeleted:
    """Any other znode removed, with what it held."""

    at: datetime
    record_kind: str | None
    summary_before: str | None  # None: its state before is not known
    how: str  # expired, closed, deleted
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str | None


@dataclass(slots=True, kw_only=True)
class ZnodeDataChanged:
    """Any other znode's data written, decoded before and after."""

    at: datetime
    record_kind: str | None
    summary_before: str | None  # None: its state before is not known
    summary: str | None
    failure_type: str | None
    version: int
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str | None


@dataclass(slots=True, kw_only=True)
class ZnodeAclChanged:
    """A znode's ACL set (``setACL``)."""

    at: datetime
    acl_version: int
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str | None


@dataclass(slots=True, kw_only=True)
class ChangeLine:
    """Any change as one line (``changes -f csv`` over several kinds): its kind and what it says."""

    at: datetime
    change: str  # the change record's kind (``kafka_broker_gone``)
    detail: str
    zxid: int
    time_ms: int
    session_id: int
    path: str
    root: str | None


@dataclass(slots=True, kw_only=True)
class ChangeSummary:
    """One line of ``changes``' summary: changes taken together (a broker's absence with the partitions
    it took out of ISRs and offline, a topology's assignment changes, a kind of write counted)."""

    started_at: datetime
    ended_at: datetime | None  # when it ended; None for one moment or while it lasts to the end
    system: str  # Kafka, Storm, ZooKeeper
    subject: str
    detail: str
    changes: int
    root: str | None


# Rows carried as columns instead of records (``StormExecutorStatColumns``): not record types (no table,
# no JSON form of their own); each is written to its ``ROW_TYPE``'s table and shown as its rows.
COLUMN_BATCHES: tuple[type, ...] = (StormExecutorStatColumns,)

# The change kinds (``zkstorm changes``): written to Parquet by ``changes --out`` (one table per kind,
# named by the kind), never by a snapshot.
CHANGE_TYPES: tuple[type, ...] = (
    KafkaBrokerRegistered,
    KafkaBrokerGone,
    KafkaBrokerRegisteredFenced,
    KafkaBrokerControlledShutdown,
    KafkaControllerElected,
    KafkaControllerGone,
    KafkaPartitionChanged,
    KafkaTopicCreated,
    KafkaTopicMarkedForDeletion,
    KafkaTopicDeleted,
    KafkaPartitionsAdded,
    KafkaReassignmentStarted,
    KafkaReassignmentProgressed,
    KafkaReassignmentCompleted,
    KafkaReplicasChanged,
    KafkaConfigChanged,
    KafkaAclChanged,
    KafkaIsrChangeNotified,
    KafkaLogDirEventNotified,
    StormTopologySubmitted,
    StormTopologyStatusChanged,
    StormTopologyRemoved,
    StormAssignmentChanged,
    StormSupervisorJoined,
    StormSupervisorLeft,
    StormWorkerStarted,
    StormWorkerStopped,
    StormWorkerStale,
    StormWorkerResumed,
    StormErrorReported,
    StormNimbusLeaderChanged,
    StormBackpressureChanged,
    ZnodeCreated,
    ZnodeDeleted,
    ZnodeDataChanged,
    ZnodeAclChanged,
)

RECORD_TYPES: tuple[type, ...] = (
    Znode,
    Unreadable,
    DecodeFailure,
    StormTopology,
    StormComponent,
    StormExecutor,
    StormSupervisor,
    StormWorker,
    StormExecutorStat,
    StormComponentStats,
    StormComponentStream,
    StormError,
    StormNimbus,
    StormLeaderLatch,
    StormLeaderInfo,
    StormBlob,
    StormBlobSequence,
    StormLogLevel,
    StormProfileRequest,
    StormCredential,
    StormSecretKey,
    StormBackpressure,
    StormLegacyNode,
    StormRoot,
    DecodeWarning,
    KafkaBroker,
    KafkaTopic,
    KafkaReplicaAssignment,
    KafkaPartitionState,
    KafkaPartition,
    KafkaController,
    KafkaControllerEpoch,
    KafkaConfig,
    KafkaConfigChange,
    KafkaAcl,
    KafkaAclChange,
    KafkaReassignment,
    KafkaPreferredElection,
    KafkaTopicDeletion,
    KafkaIsrChange,
    KafkaLogDirEvent,
    KafkaConsumerMember,
    KafkaConsumerOwner,
    KafkaConsumerOffset,
    KafkaClusterId,
    KafkaProducerIdBlock,
    KafkaFeature,
    KafkaMigration,
    KafkaDelegationToken,
    KafkaRoot,
    KafkaFinding,
    KafkaFindingSummary,
    ZkMember,
    ZkFinding,
    ZkUsage,
    WatchChange,
    ChangeLine,
    ChangeSummary,
    *CHANGE_TYPES,
)

# Records a view computes for the terminal and never a snapshot table (the snapshot keeps the findings
# and the rows they summarize or compare; the schema in docs/snapshots.md lists the rest). The ensemble's findings
# are judged on thresholds given at the moment: the snapshot keeps the members and usage they come from.
VIEW_ONLY_TYPES: tuple[type, ...] = (KafkaFindingSummary, WatchChange, ZkFinding, ChangeLine, ChangeSummary)
