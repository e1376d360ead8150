"""Every record zkstorm produces, as flat frozen dataclasses.

One record type feeds the terminal table, JSON, CSV and (later) Parquet: ``schema.py`` derives the
columns from these annotations, so a field added here shows up everywhere with no second schema.
Fields are scalars or tuples of scalars; nested source data becomes its own record keyed by its parent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True, kw_only=True)
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

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] or "/"


@dataclass(frozen=True, slots=True, kw_only=True)
class Unreadable:
    """A znode that exists but could not be read (``NoAuth``, or a persistent server-side error)."""

    path: str
    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeFailure:
    """A znode whose bytes did not decode as the record its path promises; the walk goes on."""

    path: str
    record_kind: str
    failure_type: str
    reason: str
    size: int
    encoding: str


# --- Storm (storm.md §4–§6; units as named) ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StormTopology:
    """``storms/{id}``: a StormBase (or a 0.9 Clojure StormBase)."""

    topology_id: str
    name: str
    status: str
    num_workers: int
    launch_time_secs: int | None
    launched_at: datetime | None
    owner: str | None
    principal: str | None
    topology_version: str | None
    prev_status: str | None
    action: str | None  # "kill" while KILLED, "rebalance" while REBALANCING
    action_wait_secs: int | None
    rebalance_num_workers: int | None
    num_executors: int
    num_components: int
    format: str  # "thrift" or "java-0.9"


@dataclass(frozen=True, slots=True, kw_only=True)
class StormComponent:
    """One component of a topology: its executor count and debug (event logging) switch."""

    topology_id: str
    component: str
    executors: int
    rebalance_executors: int | None
    debug_enabled: bool | None
    debug_sampling_pct: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormExecutor:
    """One executor range of an assignment, with its worker slot and scheduled resources."""

    topology_id: str
    start_task: int
    end_task: int
    node: str  # supervisor id, not a hostname
    port: int
    host: str | None  # via the assignment's node->host
    start_time_secs: int | None
    mem_on_heap_mb: float | None
    mem_off_heap_mb: float | None
    cpu_pct: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormSupervisor:
    """``supervisors/{id}``: a supervisor's heartbeat (ephemeral: present means alive)."""

    supervisor_id: str
    hostname: str
    assignment_id: str | None
    time_secs: int
    heartbeat_at: datetime
    uptime_secs: int | None
    used_ports: tuple[int, ...]
    ports: tuple[int, ...]
    version: str | None
    server_port: int | None
    memory_capacity_mb: float | None
    cpu_capacity_pct: float | None
    resources: tuple[str, ...]  # every capacity entry as "name=value"
    scheduler_meta: tuple[str, ...]  # "key=value"


@dataclass(frozen=True, slots=True, kw_only=True)
class StormWorker:
    """``workerbeats/{topology}/{node}-{port}``: a worker heartbeat. Age and staleness are derived
    against the time of the read (``health.py``), so they are None straight out of the decoder."""

    topology_id: str
    node: str
    port: int
    time_secs: int
    heartbeat_at: datetime
    uptime_secs: int
    num_executor_stats: int  # entries in executor_stats, the worker's system executor [-1,-1] included
    host: str | None = None
    age_secs: int | None = None
    stale: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormExecutorStat:
    """One counter of one executor in one window, flattened from a worker heartbeat."""

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


@dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class StormNimbus:
    """``nimbuses/{id}``: a nimbus registration; leadership comes from the leader latch."""

    nimbus_id: str
    host: str
    port: int
    tls_port: int | None
    started_secs: int  # NimbusSummary.uptime_secs as stored: the start time, epoch seconds
    version: str
    is_leader: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormLeaderLatch:
    """``leader-lock/_c_…-latch-{seq}``: a nimbus in the leader election; lowest sequence leads."""

    node_name: str
    participant_id: str  # host:port, or host:port:tlsPort from 2.6.4/2.7.0
    sequence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StormLeaderInfo:
    """``leader-info`` (2.x): the Java-serialized NimbusInfo the leader writes."""

    path: str
    host: str
    port: int
    tls_port: int | None
    is_leader: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class StormBlob:
    """``blobstore/{key}/{nimbus}-{version}``: a nimbus holding a version of a blob."""

    key: str
    nimbus_id: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StormBlobSequence:
    """``blobstoremaxkeysequencenumber/{key}``: the newest version of a blob."""

    key: str
    max_sequence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StormLogLevel:
    """One logger setting of ``logconfigs/{topology}``."""

    topology_id: str
    logger: str
    action: str
    target_level: str | None
    reset_timeout_secs: int | None
    reset_at_ms: int | None  # LogLevel.reset_log_level_timeout_epoch: epoch milliseconds
    reset_level: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormProfileRequest:
    """``profilerconfigs/{topology}/{host}_{port}_{ACTION}``."""

    topology_id: str
    host: str
    port: int
    action: str
    timestamp_ms: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormCredential:
    """One entry of ``credentials/{topology}``; the value is redacted unless asked for."""

    topology_id: str
    key: str
    value: str
    value_length: int
    owner: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StormSecretKey:
    """``secretkeys/{service}/{topology}/{version}``: a worker-token signing key (redacted)."""

    service: str
    topology_id: str
    version: int
    user_name: str
    expiration_ms: int
    key: str
    key_length: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StormBackpressure:
    """``backpressure/{topology}/{node}-{port}`` (1.x): when a worker last turned throttling on."""

    topology_id: str
    node: str
    port: int
    throttle_on_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StormLegacyNode:
    """A node of the Storm 0.5–0.7 task layout (``tasks``, ``taskbeats``, ``taskerrors``), shown as legacy."""

    path: str
    layout: str
    topology_id: str
    task_id: int | None
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StormRoot:
    """A Storm root found on the ensemble (a node holding both ``storms`` and ``assignments``)."""

    root: str
    num_topologies: int


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
)
