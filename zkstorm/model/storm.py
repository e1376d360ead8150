"""The Storm cluster under one root, as views that return records: every Storm join lives here, once.

Each view reads the subtrees it shows (a topology's assignment, the supervisors, …), never the whole
root, and returns typed records. Undecodable and unreadable znodes met on the way are kept in the
cluster's ``problems`` (the CLI warns about them; ``--strict`` turns them into exit 5). The joins that
the nightly snapshot needs too (worker host and staleness, the error merge) are plain functions on
records, so the snapshot and the views run the same code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote_plus

from ..decode.registry import DETAIL_COLUMNS
from ..defaults import STALE_AFTER_SECS
from ..errors import AmbiguousTopology, NotFoundError, RootNotFoundError
from ..layout import Roots, name_from_id
from ..records import (
    StormComponent,
    StormComponentStats,
    StormComponentStream,
    StormError,
    StormExecutor,
    StormExecutorStat,
    StormExecutorStatColumns,
    StormLeaderInfo,
    StormLeaderLatch,
    StormNimbus,
    StormSupervisor,
    StormTopology,
    StormWorker,
)
from ..sources.base import RawNode
from .storm_stats import ExecutorFigures, component_stats, component_streams, executor_figures_of_columns
from .walk import ClusterReads

# --- joins and rules on records (no I/O): shared by the views and the snapshot -------------------------


def with_heartbeat_age(workers: Iterable[StormWorker], now_secs: float, stale_after_secs: float) -> list[StormWorker]:
    """Each worker with its heartbeat age and a stale flag (no beat for longer than ``stale_after_secs``).

    Storm's own default is ``nimbus.task.timeout.secs`` = 30: after that nimbus reassigns the worker's
    executors. A beat from the future (clock skew) counts as age 0.
    """
    out = []
    for worker in workers:
        if worker.time_secs is None:  # its heartbeat could not be decoded: no beat to trust
            out.append(dataclasses.replace(worker, age_secs=None, stale=True))
            continue
        age = max(0, int(now_secs - worker.time_secs))
        out.append(dataclasses.replace(worker, age_secs=age, stale=age > stale_after_secs))
    return out


def worker_hosts(executors: Iterable[StormExecutor], supervisors: Iterable[StormSupervisor]) -> dict[str, str]:
    """node (supervisor id) → hostname: the assignment's node→host map, overridden by the supervisors'
    own registrations (the live truth, when the supervisor is up)."""
    hosts = {e.node: e.host for e in executors if e.host}
    hosts.update({s.supervisor_id: s.hostname for s in supervisors if s.hostname})
    return hosts


def join_workers(
    workers: Iterable[StormWorker], hosts: dict[str, str], now_secs: float, stale_after_secs: float
) -> list[StormWorker]:
    """Workers with their host, heartbeat age and stale flag, sorted by topology, host, port."""
    located = [dataclasses.replace(w, host=hosts.get(w.node)) for w in workers]
    rows = with_heartbeat_age(located, now_secs, stale_after_secs)
    rows.sort(key=lambda w: (w.topology_id, w.host or w.node, w.port))
    return rows


def merge_last_errors(found: Iterable[StormError]) -> list[StormError]:
    """Mark the e-node that a component's ``-last-error`` repeats; keep a ``-last-error`` only when its
    e-node is gone (2.x e-nodes are ephemeral), so no error is listed twice and none is lost. Newest
    first.

    The twin is matched on the reporting worker too: two workers that fail alike in one second write
    equal text and time, and their ``reportError`` calls race (create the e-node, then set
    ``-last-error``: storm-client ``StormClusterStateImpl.reportError``), so the ``-last-error`` may
    repeat the older e-node. Storm's own last error is that node (``StormClusterStateImpl.lastError``)."""
    found = list(found)
    nodes = [e for e in found if e.sequence is not None]
    out = list(nodes)
    for last in (e for e in found if e.sequence is None):
        same = (last.component, last.time_secs, last.error, last.host, last.port)
        twins = [e for e in nodes if (e.component, e.time_secs, e.error, e.host, e.port) == same]
        if twins:
            newest = max(twins, key=lambda e: e.sequence or 0)
            out[out.index(newest)] = dataclasses.replace(newest, last_error=True)
        else:
            out.append(last)
    out.sort(key=lambda e: (e.time_secs, e.sequence if e.sequence is not None else -1), reverse=True)
    return out


def leader_of(latches: Sequence[StormLeaderLatch], infos: Sequence[StormLeaderInfo]) -> str | None:
    """``host:port…`` of the leading nimbus: the lowest leader-latch sequence (Curator's LeaderLatch),
    else what ``leader-info`` says (1.x/0.10 clusters without a latch)."""
    if latches:
        return min(latches, key=lambda r: r.sequence).participant_id
    info = next(iter(infos), None)
    return f"{info.host}:{info.port}" if info else None


def with_leadership(nimbuses: Iterable[StormNimbus], leader: str | None) -> list[StormNimbus]:
    """Each nimbus with ``is_leader`` (None when no leader is known), sorted by host."""

    def leads(n: StormNimbus) -> bool | None:
        if leader is None:
            return None
        host, _, rest = leader.partition(":")
        return host == n.host and rest.split(":")[0] == str(n.port)

    return sorted((dataclasses.replace(n, is_leader=leads(n)) for n in nimbuses), key=lambda n: n.host)


_TOPOLOGY_DIRS = ("errors", "workerbeats", "assignments", "storms")

# --- the views ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _TopologyParts:
    """What Storm's topology page is computed from: the StormBase's components, the assignment, the
    worker heartbeats (with age) and their executor counters."""

    components: list[StormComponent]
    executors: list[StormExecutor]
    workers: list[StormWorker]
    stats: list[StormExecutorStat]
    figures: list[ExecutorFigures]  # per executor the beats hold, those with no counter yet too


class StormCluster:
    """The Storm cluster whose ``storm.zookeeper.root`` is ``root``, on a ``Cluster``'s source."""

    def __init__(self, cluster: ClusterReads, root: str) -> None:
        self.cluster = cluster
        self.root = root
        self.roots = Roots(storm=(root,), kafka=())  # what its reads decode under: its own root only
        self._ids: dict[str, str] | None = None  # topology id → name, read once per view object
        self._present = False

    def _path(self, sub: str) -> str:
        return f"{self.root}/{sub}" if sub else self.root

    def require(self) -> None:
        """Raise ``RootNotFoundError`` unless the root holds a Storm cluster (its ``storms`` znode, which
        nimbus creates with the other subtrees when it first starts). A mistyped ``--storm-root`` must not
        read as a cluster with no topologies. Every view asks first, through ``_records`` and
        ``_listed_ids`` (one ``exists``)."""
        if self._present:
            return
        if not self.cluster.exists(self._path("storms")):
            why = "it has no storms znode" if self.cluster.exists(self.root) else "no such znode"
            raise RootNotFoundError(f"no Storm cluster at {self.root}: {why} (zkstorm storm roots lists them)")
        self._present = True

    def _records(self, sub: str, kind: type, *, detail: bool = False) -> list[Any]:
        self.require()
        return [
            r for r in self.cluster.records(self._path(sub), detail=detail, roots=self.roots) if isinstance(r, kind)
        ]

    # topologies ---------------------------------------------------------------------------------------

    def _listed_ids(self) -> set[str]:
        """Every topology id the root lists (storms, assignments, errors, workerbeats): four listings."""
        self.require()
        return {tid for sub in _TOPOLOGY_DIRS for tid in self.cluster.children(self._path(sub))}

    def topology_ids(self) -> dict[str, str]:
        """Every topology id the root knows of (storms, assignments, errors, workerbeats) → its name."""
        ids = {topology_id: name_from_id(topology_id) for topology_id in sorted(self._listed_ids())}
        for topology in self._records("storms", StormTopology):
            ids[topology.topology_id] = topology.name
        return ids

    def resolve(self, ident: str) -> str:
        """A topology id from an id or a name; unknown → ``NotFoundError``, ambiguous → ``AmbiguousTopology``."""
        if self._ids is not None and ident in self._ids:
            return ident  # resolved before: a view that takes a resolved id does not read the ids again
        if self._ids is None and ident in self._listed_ids():
            return ident  # an exact id: settled by the listings, without decoding every storms/ node
        known = self._ids = self.topology_ids()
        if ident in known:
            return ident
        matches = sorted(tid for tid, name in known.items() if name == ident)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousTopology(f"topology name {ident!r} matches several ids: {', '.join(matches)}")
        names = ", ".join(sorted(set(known.values()))) or "none"
        raise NotFoundError(f"no topology {ident!r} under {self.root}; known: {names}")

    def topologies(self) -> list[StormTopology]:
        """Every topology with its status, workers and executors, by name."""
        return sorted(self._records("storms", StormTopology), key=lambda t: (t.name, t.topology_id))

    def assignment(self, topology: str) -> list[StormExecutor]:
        """Where every executor of ``topology`` (an id or a name) runs."""
        topology_id = self.resolve(topology)
        rows = self._records(f"assignments/{topology_id}", StormExecutor)
        if not rows and not self.cluster.exists(self._path(f"assignments/{topology_id}")):
            raise NotFoundError(f"topology {topology_id} has no assignment")
        return rows

    # supervisors and workers --------------------------------------------------------------------------

    def supervisors(self) -> list[StormSupervisor]:
        """Every live supervisor (their znodes are ephemeral), by hostname."""
        return sorted(self._records("supervisors", StormSupervisor), key=lambda s: (s.hostname or "", s.supervisor_id))

    def workers(
        self,
        topology: str | None = None,
        *,
        stale_after_secs: float = STALE_AFTER_SECS,
        only_stale: bool = False,
    ) -> list[StormWorker]:
        """Worker heartbeats of ``topology`` (or of every topology) with host, age and a stale flag."""
        scope = f"/{self.resolve(topology)}" if topology else ""
        rows = self.joined_workers(self._records(f"workerbeats{scope}", StormWorker), scope, stale_after_secs)
        return [w for w in rows if w.stale] if only_stale else rows

    def joined_workers(
        self, workers: list[StormWorker], scope: str = "", stale_after_secs: float = STALE_AFTER_SECS
    ) -> list[StormWorker]:
        """``workers`` (heartbeats as decoded) with their host (the assignments under ``scope``, "" or
        "/{topology id}", and the supervisors), heartbeat age and stale flag: ``workers`` and ``get``."""
        executors = self._records(f"assignments{scope}", StormExecutor)
        hosts = worker_hosts(executors, self._records("supervisors", StormSupervisor))
        return join_workers(workers, hosts, self.cluster.now(), stale_after_secs)

    def workerbeats_note(self) -> str | None:
        """What the ``workerbeats`` znodes are, said when the cluster runs Storm 2 or newer (its supervisors'
        or nimbuses' registrations say which): there a worker reports liveness to its supervisor, which
        tells Nimbus over Thrift (apache/storm ``Worker.doHeartBeat``, ``heartbeatToMasterIfLocalbeatFail``),
        and writes ZooKeeper only its executors' figures, every ``executor.metrics.frequency.secs``, 60 s
        by default (``Worker.doExecutorHeartbeats``; Pacemaker, when configured, takes even those). An old
        beat there is then no dead worker by itself; 1.x workers wrote their liveness beat to ZooKeeper."""
        versions = [s.version for s in self.supervisors()] + [n.version for n in self._records("nimbuses", StormNimbus)]
        majors = {int(v.split(".")[0]) for v in versions if v and v.split(".")[0].isdigit()}
        if not majors or max(majors) < 2:
            return None
        return (
            "Storm 2.x workers report liveness to their supervisor and Nimbus, not to ZooKeeper: these beats "
            "carry the executors' figures, written every executor.metrics.frequency.secs (60 s by default), "
            "so an age past --stale-after is not by itself a dead worker (Nimbus's own view: storm list, the UI)"
        )

    def executor_stats(self, topology: str | None = None) -> list[StormExecutorStat]:
        """Every executor counter of the heartbeats (executor, window, stream, metric, value)."""
        scope = f"/{self.resolve(topology)}" if topology else ""
        return self._records(f"workerbeats{scope}", StormExecutorStat, detail=True)

    def missing_supervisors(self) -> list[str]:
        """Supervisor ids the assignments place executors on that are not registered (their supervisor
        znodes are ephemeral: missing means down, or cut off from ZooKeeper)."""
        live = {s.supervisor_id for s in self.supervisors()}
        return sorted({e.node for e in self._records("assignments", StormExecutor)} - live)

    def stored_error_counts(self) -> dict[str, int]:
        """topology id → error nodes Storm keeps for it, from the component znodes' child counts alone
        (nothing decoded)."""
        self.require()
        counts: dict[str, int] = {}
        base = self._path("errors")
        if not self.cluster.exists(base):
            return counts
        for item in self.cluster.source.walk(base, max_depth=2):
            if isinstance(item, RawNode) and item.path.count("/") - base.count("/") == 2:
                topology_id = item.path[len(base) + 1 :].split("/", 1)[0]
                if not item.path.endswith("-last-error"):
                    counts[topology_id] = counts.get(topology_id, 0) + item.stat.numChildren
        return counts

    # components: Storm UI's topology page -----------------------------------------------------------

    def components(
        self,
        topology: str,
        *,
        window: str = "600",
        component: str | None = None,
        include_sys: bool = False,
        stale_after_secs: float = STALE_AFTER_SECS,
    ) -> list[StormComponentStats]:
        """Per spout and bolt of ``topology`` in ``window`` (an ExecutorStats key: "600", "10800",
        "86400", ":all-time"): executors, tasks, emitted … capacity, stale executors, last error, as
        Storm's UI computes them (``storm_stats``). Reads the topology's storms, assignments, workerbeats
        and errors znodes only."""
        topology_id = self.resolve(topology)
        parts = self._topology_parts(topology_id, stale_after_secs)
        rows = component_stats(
            topology_id,
            parts.components,
            parts.executors,
            parts.figures,
            parts.workers,
            merge_last_errors(self._records(f"errors/{topology_id}", StormError)),
            root=self.root,
            windows=(window,),
            include_sys=include_sys,
        )
        return [r for r in rows if component is None or r.component == component]

    def component_streams(
        self, topology: str, *, window: str = "600", component: str | None = None, include_sys: bool = False
    ) -> list[StormComponentStream]:
        """Per component and stream of ``topology`` (Storm UI's component page: output streams, and a
        bolt's input streams by source component)."""
        topology_id = self.resolve(topology)
        parts = self._topology_parts(topology_id, STALE_AFTER_SECS)
        rows = component_streams(
            topology_id,
            parts.components,
            parts.executors,
            parts.stats,
            root=self.root,
            window=window,
            include_sys=include_sys,
        )
        return [r for r in rows if component is None or r.component == component]

    def _topology_parts(self, topology_id: str, stale_after_secs: float) -> _TopologyParts:
        components = self._records(f"storms/{topology_id}", StormComponent)
        if not components and not self.cluster.exists(self._path(f"storms/{topology_id}")):
            raise NotFoundError(f"topology {topology_id} has no storms node (killed?): no components to show")
        executors = self._records(f"assignments/{topology_id}", StormExecutor)
        # the heartbeats as columns: they keep an executor with no counter yet, which rows cannot
        # (``storm_heartbeat._stat_columns``), and Storm counts it
        path = self._path(f"workerbeats/{topology_id}")
        beats = list(self.cluster.records(path, detail=DETAIL_COLUMNS, roots=self.roots))
        workers = [r for r in beats if isinstance(r, StormWorker)]
        columns = [r for r in beats if isinstance(r, StormExecutorStatColumns)]
        stats = [row for c in columns for row in c.rows()]
        figures = [f for c in columns for f in executor_figures_of_columns(c)]
        workers = with_heartbeat_age(workers, self.cluster.now(), stale_after_secs)
        return _TopologyParts(components, executors, workers, stats, figures)

    # errors -------------------------------------------------------------------------------------------

    def errors(
        self,
        topology: str,
        *,
        component: str | None = None,
        since_secs: float | None = None,
        limit: int | None = None,
    ) -> list[StormError]:
        """Every error Storm keeps for ``topology``, newest first, each once (``merge_last_errors``).

        ``component`` matches the id plain or URL-encoded, as Storm names the znode."""
        topology_id = self.resolve(topology)
        shown = merge_last_errors(self._records(f"errors/{topology_id}", StormError))
        if component is not None:
            wanted = {component, unquote_plus(component)}
            shown = [e for e in shown if e.component in wanted]
        if since_secs is not None:
            shown = [e for e in shown if e.time_secs >= since_secs]
        return shown[:limit] if limit is not None else shown

    # nimbus -------------------------------------------------------------------------------------------

    def nimbuses(self) -> list[StormNimbus]:
        """Registered nimbuses, each with whether it leads (the lowest leader-latch sequence)."""
        return with_leadership(self._records("nimbuses", StormNimbus), self.leader())

    def leader(self) -> str | None:
        """``host:port…`` of the leading nimbus (``leader_of``), or None when nothing names one."""
        latches = self._records("leader-lock", StormLeaderLatch)
        infos: list[StormLeaderInfo] = []
        if not latches:  # 1.x and 0.10 write leader-info, at the root or (a known quirk) under root+root
            for path in ("leader-info", f"{self.root.lstrip('/')}/leader-info"):
                infos += self._records(path, StormLeaderInfo)
        return leader_of(latches, infos)
