"""Storm's changes, one function per znode kind (see ``handlers.HANDLERS``), with Storm's own meaning of
its znodes (``ClusterUtils`` and ``StormClusterStateImpl`` in apache/storm). Worker heartbeats are
rewritten every few seconds per worker and are most of a busy log: they are never decoded, only timed
(``kinds.Heartbeats``): a worker's first heartbeat, its last, and a silence longer than the threshold
are changes; a rewrite is not. A supervisor's own heartbeat (its registration rewritten) is counted.
Both rewrites have a rewriter (``heartbeat_written``, ``supervisor_written``; ``handlers.REWRITES``), which
the reader's fast path calls without a step and the handler's set calls with one."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ..layout import STORM_ERRORS_KEPT, name_from_id
from ..records import (
    StormAssignmentChanged,
    StormBackpressureChanged,
    StormError,
    StormErrorReported,
    StormExecutor,
    StormNimbusLeaderChanged,
    StormSupervisor,
    StormSupervisorJoined,
    StormSupervisorLeft,
    StormTopology,
    StormTopologyRemoved,
    StormTopologyStatusChanged,
    StormTopologySubmitted,
    StormWorkerStarted,
    StormWorkerStopped,
)
from .kinds import latch_participant, worker_of
from .reader import NodeState, time_of

if TYPE_CHECKING:
    from ..sources.files.txnlog import Txn
    from .kinds import Engine, Place
    from .reader import Rewrite, Step


def is_heartbeat(path: str) -> bool:
    """``…/workerbeats/{topology}/{node}-{port}``: a worker heartbeat, whose bytes no change reads."""
    parts = path.rsplit("/", 3)
    return len(parts) == 4 and parts[1] == "workerbeats"


def topology(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``storms/{id}`` (a StormBase): submitted, its status or worker count changed (activate,
    deactivate, kill, rebalance), or removed once killed."""
    topology_id = step.path.rsplit("/", 1)[1]
    root = where.root or "/storm"
    after = _base(engine, step, step.after) if step.op != "delete" else None
    before = _base(engine, step, step.before) if step.known and step.op != "create" else None
    if step.op == "create":
        if after is None:
            return None
        return [
            StormTopologySubmitted(
                **engine.common(step),
                topology_id=topology_id,
                name=after.name,
                status=after.status,
                num_workers=after.num_workers,
                num_executors=after.num_executors,
                owner=after.owner,
                root=root,
            )
        ]
    if step.op == "delete":
        return [
            StormTopologyRemoved(
                **engine.common(step),
                topology_id=topology_id,
                name=before.name if before is not None else name_from_id(topology_id),
                status_before=before.status if before is not None else None,
                root=root,
            )
        ]
    if after is None or (
        before is not None and (before.status, before.num_workers) == (after.status, after.num_workers)
    ):
        return None
    return [
        StormTopologyStatusChanged(
            **engine.common(step),
            topology_id=topology_id,
            name=after.name,
            status_before=before.status if before is not None else None,
            status=after.status,
            num_workers_before=before.num_workers if before is not None else None,
            num_workers=after.num_workers,
            root=root,
        )
    ]


def _base(engine: Engine, step: Step, state: NodeState | None) -> StormTopology | None:
    found = engine.records_of(step.path, state, StormTopology)
    return found[0] if found else None


def assignment(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``assignments/{id}``: which executors moved from which worker slot to which, and the slots taken
    and freed. Hosts come from the assignment's own node→host map (the supervisor id when it has none)."""
    before = _executors(engine, step, step.before) if step.op != "create" else {}
    after = _executors(engine, step, step.after) if step.op != "delete" else {}
    if before is None or after is None or (step.op != "create" and not step.known):
        return None
    moves = tuple(
        f"{start}-{end} {before[(start, end)]}->{slot}"
        for (start, end), slot in sorted(after.items())
        if (start, end) in before and before[(start, end)] != slot
    )
    slots_before, slots_after = set(before.values()), set(after.values())
    topology_id = step.path.rsplit("/", 1)[1]
    return [
        StormAssignmentChanged(
            **engine.common(step),
            topology_id=topology_id,
            name=name_from_id(topology_id),
            executors_before=len(before),
            executors=len(after),
            executors_moved=len(moves),
            moves=moves,
            slots_added=tuple(sorted(slots_after - slots_before)),
            slots_freed=tuple(sorted(slots_before - slots_after)),
            root=where.root or "/storm",
        )
    ]


def _executors(engine: Engine, step: Step, state: NodeState | None) -> dict[tuple[int, int], str] | None:
    """(start task, end task) → ``host:port`` of an assignment's state; None when it does not decode."""
    found = engine.records_of(step.path, state, StormExecutor)
    if found is None:
        return None
    return {(e.start_task, e.end_task): f"{e.host or e.node}:{e.port}" for e in found}


def supervisor(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``supervisors/{id}`` (ephemeral): joined, or left with its session. A rewrite is the supervisor's
    heartbeat (``StormClusterStateImpl.supervisorHeartbeat``): counted, not decoded."""
    supervisor_id = step.path.rsplit("/", 1)[1]
    root = where.root or "/storm"
    if step.op == "set":
        return supervisor_written(engine, step.txn, step.path, where)
    if step.op == "create":
        record = _supervisor(engine, step, step.after)
        return [
            StormSupervisorJoined(
                **engine.common(step),
                supervisor_id=supervisor_id,
                hostname=record.hostname if record else None,
                slots=len(record.ports) if record else None,
                root=root,
            )
        ]
    record = _supervisor(engine, step, step.before) if step.known else None
    return [
        StormSupervisorLeft(
            **engine.common(step),
            supervisor_id=supervisor_id,
            hostname=record.hostname if record else None,
            how=step.how,
            root=root,
        )
    ]


def supervisor_written(engine: Engine, txn: Txn | Rewrite, path: str, where: Place) -> list[Any]:
    """A supervisor's registration rewritten (``StormClusterStateImpl.supervisorHeartbeat``): counted."""
    engine.counters.supervisor_beats += engine.counting
    return []


def _supervisor(engine: Engine, step: Step, state: NodeState | None) -> StormSupervisor | None:
    found = engine.records_of(step.path, state, StormSupervisor)
    return found[0] if found else None


def heartbeat(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``workerbeats/{id}/{node}-{port}``: a worker started (its first heartbeat), resumed after a
    silence longer than the threshold, or stopped (nimbus removed its heartbeats)."""
    beats = engine.heartbeats
    time_ms = step.txn.time_ms
    if step.op == "set":  # most of a busy log: nothing but the time is read
        return heartbeat_written(engine, step.txn, step.path, where)
    topology_id, node, port = worker_of(step.path)
    root = where.root or "/storm"
    if step.op == "create":
        beats.beat(step.path, time_ms)
        return [StormWorkerStarted(**engine.common(step), topology_id=topology_id, node=node, port=port, root=root)]
    last = beats.last(step.path)
    if last is None and step.before is not None:
        last = step.before.mtime
    beats.remove(step.path)
    return [
        StormWorkerStopped(
            **engine.common(step),
            topology_id=topology_id,
            node=node,
            port=port,
            how=step.how,
            last_beat_at=time_of(last) if last else None,
            root=root,
        )
    ]


def heartbeat_written(engine: Engine, txn: Txn | Rewrite, path: str, where: Place) -> list[Any]:
    """A heartbeat rewritten: its time, and the worker's return if it had gone stale. ``Engine.rewritten``
    does the same inline for the reader's runs of rewrites: a change here is one there too (the tests that
    read with ``fast=False``, which comes here, hold the two to the same records and counters)."""
    silent_since = engine.heartbeats.beat(path, txn.time_ms)
    return [] if silent_since is None else [engine.resumed(txn, path, silent_since, where)]


def error(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``errors/{id}/{component}/e{seq}`` created: an error reported. Storm's ``reportError`` then writes
    the same bytes to ``{component}-last-error``: that copy is no second error (counted, not shown);
    a ``-last-error`` written with other bytes is one. Workers report concurrently, so the copy may come
    after another worker's e-node: it is matched against every e-node the component still keeps
    (``reportError`` trims them to ``STORM_ERRORS_KEPT``; storm-client ``StormClusterStateImpl``)."""
    if step.op == "delete":
        return None
    after = step.after
    assert after is not None
    found = engine.records_of(step.path, after, StormError)
    if not found:
        return None  # a component directory (a 0x07 marker), or a failure the generic record carries
    record = found[0]
    directory = step.path.rsplit("/", 1)[0] if record.sequence is not None else step.path[: -len("-last-error")]
    if record.last_error:
        if after.data in engine.errors.get(directory, ()):
            engine.counters.errors_folded += engine.counting
            return []
    else:
        engine.errors.setdefault(directory, deque(maxlen=STORM_ERRORS_KEPT)).append(after.data)
    return [
        StormErrorReported(
            **engine.common(step),
            topology_id=record.topology_id,
            component=record.component,
            error_at=record.error_at,
            host=record.host,
            port=record.port,
            first_line=record.first_line,
            root=record.root,
        )
    ]


def leader_latch(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``leader-lock/{latch}``: a nimbus joined or left the leader election; the leader is the lowest
    latch sequence (Curator's ``LeaderLatch``), so a change of the latches may change the leader."""
    root = where.root or "/storm"
    latches = engine.latches.setdefault(root, {})
    was = leader(latches)
    if step.op == "create":
        assert step.after is not None
        latches[step.path] = latch_participant(engine, step.path, step.after)
    elif step.op == "delete":
        latches.pop(step.path, None)
    else:
        return None
    now = leader(latches)
    if now == was:
        return None
    return [StormNimbusLeaderChanged(**engine.common(step), leader_before=was, leader=now, root=root)]


def leader(latches: dict[str, str]) -> str | None:
    """The participant of the lowest latch sequence (``…-latch-0000000012``), as ``model.storm.leader_of``."""
    if not latches:
        return None
    return latches[min(latches, key=lambda path: path.rsplit("-latch-", 1)[-1])]


def backpressure(engine: Engine, step: Step, where: Place) -> list[Any] | None:
    """``backpressure/{id}/{node}-{port}``: created when a worker turns its throttle on, removed when it
    turns it off (Storm 1.x's ``WorkerBackpressureThread``)."""
    if step.op == "set":
        return None
    topology_id, node, port = worker_of(step.path)
    return [
        StormBackpressureChanged(
            **engine.common(step),
            topology_id=topology_id,
            node=node,
            port=port if port >= 0 else None,
            on=step.op == "create",
            root=where.root or "/storm",
        )
    ]
