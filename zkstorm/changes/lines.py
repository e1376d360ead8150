"""One line per change, as ``changes --detail`` lists them and ``-f csv`` writes them (``ChangeLine``):
what happened, in words, without the time and the kind, which the caller puts in front."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ..records import (
    ChangeLine,
    KafkaAclChanged,
    KafkaBrokerControlledShutdown,
    KafkaBrokerGone,
    KafkaBrokerRegistered,
    KafkaBrokerRegisteredFenced,
    KafkaConfigChanged,
    KafkaControllerElected,
    KafkaControllerGone,
    KafkaIsrChangeNotified,
    KafkaLogDirEventNotified,
    KafkaPartitionChanged,
    KafkaPartitionsAdded,
    KafkaReassignmentCompleted,
    KafkaReassignmentProgressed,
    KafkaReassignmentStarted,
    KafkaReplicasChanged,
    KafkaTopicCreated,
    KafkaTopicDeleted,
    KafkaTopicMarkedForDeletion,
    StormAssignmentChanged,
    StormBackpressureChanged,
    StormErrorReported,
    StormNimbusLeaderChanged,
    StormSupervisorJoined,
    StormSupervisorLeft,
    StormTopologyRemoved,
    StormTopologyStatusChanged,
    StormTopologySubmitted,
    StormWorkerResumed,
    StormWorkerStale,
    StormWorkerStarted,
    StormWorkerStopped,
    ZnodeAclChanged,
    ZnodeCreated,
    ZnodeDataChanged,
    ZnodeDeleted,
)
from .select import change_kind

KRAFT_ROOT = "kraft:"  # the Kafka root of a KRaft metadata log's changes (``sources.kraft.source.ROOT``)
SHOWN = 6  # list members named in a line; the rest are counted


def clock(moment: datetime, *, date: bool = False) -> str:
    """``03:12:04.120`` (``2026-01-21 03:12:04.120`` with ``date``): a txn's time to the millisecond."""
    text = moment.strftime("%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S")
    return f"{text}.{moment.microsecond // 1000:03d}"


def listed(items: Sequence[Any], limit: int = SHOWN) -> str:
    shown = ", ".join(str(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit:,} more" if len(items) > limit else "")


def _ids(items: Sequence[int] | None) -> str:
    return "?" if items is None else "[" + ",".join(str(i) for i in items) + "]"


def _session(how: str) -> str:
    return {"expired": "session expired", "closed": "session closed", "deleted": "deleted"}.get(how, how)


def _where(host: str | None, port: int | None) -> str:
    return f" ({host}:{port})" if host else ""


def _holder(
    c: KafkaBrokerRegistered | KafkaBrokerGone | KafkaBrokerRegisteredFenced | KafkaBrokerControlledShutdown,
) -> str:
    """The registration's holder: its session in ZooKeeper, its broker epoch in KRaft (``changes/kraft.py``)."""
    return f"broker epoch {c.session_id}" if c.root == KRAFT_ROOT else f"session {c.session_id:#x}"


def _broker_registered(c: KafkaBrokerRegistered) -> str:
    return f"broker {c.broker_id} registered{_where(c.host, c.port)}, {_holder(c)}"


def _broker_gone(c: KafkaBrokerGone) -> str:
    how = c.how.replace("_", " ")
    return f"broker {c.broker_id}{_where(c.host, c.port)} gone ({_session(how)}), {_holder(c)}"


def _broker_registered_fenced(c: KafkaBrokerRegisteredFenced) -> str:
    again = ", replacing the registration that served" if c.replaced else ""
    return f"broker {c.broker_id} registered fenced{_where(c.host, c.port)}{again}, {_holder(c)}"


def _broker_controlled_shutdown(c: KafkaBrokerControlledShutdown) -> str:
    fenced = " (fenced already)" if c.fenced else ""
    return f"broker {c.broker_id}{_where(c.host, c.port)} began its controlled shutdown{fenced}, {_holder(c)}"


def _controller_elected(c: KafkaControllerElected) -> str:
    was = f", was broker {c.previous_broker_id}" if c.previous_broker_id is not None else ""
    epoch = f" (epoch {c.epoch})" if c.epoch is not None else ""
    return f"controller elected: broker {c.broker_id}{epoch}{was}"


def _controller_gone(c: KafkaControllerGone) -> str:
    return f"controller broker {c.broker_id} gone ({_session(c.how)})"


def _partition(c: KafkaPartitionChanged) -> str:
    if c.isr_before is None:
        state = f"leader {c.leader}, isr {_ids(c.isr)}, epoch {c.leader_epoch} (no state before)"
        return f"{c.topic}-{c.partition}: {state}{', OFFLINE' if c.offline else ''}"
    parts = []
    if c.leader_before != c.leader:
        parts.append(f"leader {c.leader_before if c.leader_before is not None else '?'}->{c.leader}")
    if c.isr_removed:
        parts.append(f"ISR -{_ids(c.isr_removed)}")
    if c.isr_added:
        parts.append(f"ISR +{_ids(c.isr_added)}")
    parts.append(f"isr {_ids(c.isr)}, epoch {c.leader_epoch}")
    if c.offline and not c.offline_before:
        parts.append("OFFLINE")
    elif c.offline_before and not c.offline:
        parts.append("back online")
    return f"{c.topic}-{c.partition}: " + ", ".join(parts)


def _topic_created(c: KafkaTopicCreated) -> str:
    return f"topic {c.topic} created: {c.partitions} partitions x{c.replication_factor}"


def _moved(c: Any, what: str) -> str:
    moving = ""
    if c.adding_replicas or c.removing_replicas:
        moving = f" (adding {_ids(c.adding_replicas)}, removing {_ids(c.removing_replicas)})"
    return (
        f"{c.topic}-{c.partition}: {what} ({c.source}), replicas {_ids(c.replicas_before)}->{_ids(c.replicas)}{moving}"
    )


def _config(c: KafkaConfigChanged) -> str:
    return f"config {c.entity_type}/{c.entity_name}: {listed(c.changes) or 'no key changed'}"


def _acl(c: KafkaAclChanged) -> str:
    what = [f"+{a}" for a in c.added] + [f"-{r}" for r in c.removed]
    return f"ACL {c.pattern_type} {c.resource_type}:{c.resource_name}: {listed(what) or 'no entry changed'}"


def _status(c: StormTopologyStatusChanged) -> str:
    workers = ""
    if c.num_workers_before != c.num_workers:
        workers = f", workers {c.num_workers_before}->{c.num_workers}"
    return f"topology {c.name} ({c.topology_id}): {c.status_before or '?'}->{c.status}{workers}"


def _assignment(c: StormAssignmentChanged) -> str:
    parts = [f"{c.executors_before}->{c.executors} executors"]
    if c.executors_moved:
        parts.append(f"{c.executors_moved} moved: {listed(c.moves, 3)}")
    if c.slots_added:
        parts.append(f"slots +{listed(c.slots_added, 3)}")
    if c.slots_freed:
        parts.append(f"slots -{listed(c.slots_freed, 3)}")
    return f"assignment of {c.name} ({c.topology_id}): " + "; ".join(parts)


def _worker(c: Any) -> str:
    return f"worker {c.node}:{c.port} of {c.topology_id}"


def _generic(c: Any, text: str) -> str:
    kind = f" [{c.record_kind}]" if getattr(c, "record_kind", None) else ""
    failure = f" (cannot decode: {c.failure_type})" if getattr(c, "failure_type", None) else ""
    return f"{c.path}{kind}: {text}{failure}"


_LINES: dict[type, Callable[[Any], str]] = {
    KafkaBrokerRegistered: _broker_registered,
    KafkaBrokerGone: _broker_gone,
    KafkaBrokerRegisteredFenced: _broker_registered_fenced,
    KafkaBrokerControlledShutdown: _broker_controlled_shutdown,
    KafkaControllerElected: _controller_elected,
    KafkaControllerGone: _controller_gone,
    KafkaPartitionChanged: _partition,
    KafkaTopicCreated: _topic_created,
    KafkaTopicMarkedForDeletion: lambda c: f"topic {c.topic} marked for deletion",
    KafkaTopicDeleted: lambda c: f"topic {c.topic} deleted ({c.partitions} partitions)",
    KafkaPartitionsAdded: lambda c: f"topic {c.topic}: partitions {c.partitions_before}->{c.partitions}",
    KafkaReassignmentStarted: lambda c: _moved(c, "reassignment started"),
    KafkaReassignmentProgressed: lambda c: _moved(c, "reassignment progressed"),
    KafkaReassignmentCompleted: lambda c: _moved(c, "reassignment completed"),
    KafkaReplicasChanged: lambda c: f"{c.topic}-{c.partition}: replicas {_ids(c.replicas_before)}->{_ids(c.replicas)}",
    KafkaConfigChanged: _config,
    KafkaAclChanged: _acl,
    KafkaIsrChangeNotified: lambda c: f"ISR change notification: {listed(c.partitions)}",
    KafkaLogDirEventNotified: lambda c: f"log dir failure on broker {c.broker_id} (event {c.event})",
    StormTopologySubmitted: lambda c: (
        f"topology {c.name} submitted ({c.topology_id}): {c.status}, "
        f"{c.num_workers} workers, {c.num_executors} executors"
    ),
    StormTopologyStatusChanged: _status,
    StormTopologyRemoved: lambda c: f"topology {c.name} removed ({c.topology_id}), was {c.status_before}",
    StormAssignmentChanged: _assignment,
    StormSupervisorJoined: lambda c: f"supervisor {c.hostname or c.supervisor_id} joined ({c.slots} slots)",
    StormSupervisorLeft: lambda c: f"supervisor {c.hostname or c.supervisor_id} left ({_session(c.how)})",
    StormWorkerStarted: lambda c: f"{_worker(c)} started",
    StormWorkerStopped: lambda c: f"{_worker(c)} stopped" + ("" if c.how == "deleted" else f" ({_session(c.how)})"),
    StormWorkerStale: lambda c: (
        f"{_worker(c)} stale: no heartbeat since {clock(c.last_beat_at)} (over {c.stale_after_secs:g}s)"
    ),
    StormWorkerResumed: lambda c: f"{_worker(c)} resumed after {c.silent_secs:.1f}s without a heartbeat",
    StormErrorReported: lambda c: f"error in {c.topology_id}/{c.component}{_where(c.host, c.port)}: {c.first_line}",
    StormNimbusLeaderChanged: lambda c: f"nimbus leader {c.leader_before or 'none'}->{c.leader or 'none'}",
    StormBackpressureChanged: lambda c: f"backpressure {'on' if c.on else 'off'} for {_worker(c)}",
    ZnodeCreated: lambda c: _generic(c, f"created{' (ephemeral)' if c.ephemeral else ''}: {c.summary}"),
    ZnodeDeleted: lambda c: _generic(
        c,
        f"deleted{'' if c.how == 'deleted' else f' ({_session(c.how)})'}, held "
        f"{c.summary_before if c.summary_before is not None else '?'}",
    ),
    ZnodeDataChanged: lambda c: _generic(
        c, f"{c.summary_before if c.summary_before is not None else '?'} -> {c.summary}"
    ),
    ZnodeAclChanged: lambda c: f"{c.path}: ACL set (version {c.acl_version})",
}


def describe(change: Any) -> str:
    """What ``change`` says, in one line."""
    return _LINES[type(change)](change)


def as_line(change: Any) -> ChangeLine:
    """``change`` as a ``ChangeLine``: one record type for a CSV of every kind."""
    return ChangeLine(
        at=change.at,
        change=change_kind(type(change)),
        detail=describe(change),
        zxid=change.zxid,
        time_ms=change.time_ms,
        session_id=change.session_id,
        path=change.path,
        root=change.root,
    )


def heading(stats: Any, changes: int) -> str:
    """What the window is: its first and last txn (time and zxid), how much it holds, and the files."""
    import os

    from .reader import time_of

    if stats.first_zxid is None or stats.first_time_ms is None or stats.last_time_ms is None:
        return "no txn in that window"
    first, last = time_of(stats.first_time_ms), time_of(stats.last_time_ms)
    files = ", ".join(os.path.basename(p) for p in stats.logs)
    if getattr(stats, "position", "zxid") == "offset":  # a KRaft metadata log (``changes/kraft.py``)
        snapshot = os.path.basename(stats.snapshot) if stats.snapshot else "the log's start"
        return (
            f"changes {clock(first, date=True)} .. {clock(last, date=first.date() != last.date())} UTC "
            f"(offset {stats.first_zxid}..{stats.last_zxid}): {changes:,} changes in {stats.txns:,} record "
            f"batches; state from {snapshot}, segments {files}"
        )
    snapshot = os.path.basename(stats.snapshot) if stats.snapshot else "?"
    return (
        f"changes {clock(first, date=True)} .. {clock(last, date=first.date() != last.date())} UTC "
        f"(zxid {stats.first_zxid:#x}..{stats.last_zxid:#x}): {changes:,} changes in {stats.txns:,} txns; "
        f"state from {snapshot}, logs {files}"
    )


def output_rows(log: Iterable[Any], kinds: Sequence[str], *, csv: bool) -> tuple[Iterable[Any], type]:
    """The change records as a machine format writes them, and their type: the records of the one kind
    ``kinds`` names (CSV then has that kind's own columns), or else every change, as ``ChangeLine``s for
    ``csv`` (one set of columns for every kind) and as themselves for JSON."""
    from ..records import CHANGE_TYPES
    from .select import change_kind

    named = [t for t in CHANGE_TYPES if change_kind(t) in kinds]
    one = named[0] if len(kinds) == 1 and len(named) == 1 else None
    if one is not None:
        return log, one
    return (as_lines(log) if csv else log), ChangeLine


def as_lines(log: Iterable[Any]) -> Iterator[ChangeLine]:
    """Every change as its ``ChangeLine`` (``-f csv`` of several kinds)."""
    return (as_line(change) for change in log)


def terminal_lines(log: Any, *, detail: bool) -> list[str]:
    """``zkstorm changes`` in a terminal: the window read, the summary, then (``detail``) every change,
    one line each (the date in front when the window spans days). Reads the whole log first."""
    kept = list(log) if detail else None
    if not detail:
        for _ in log:
            pass
    stats = log.stats
    dated = (
        stats.first_time_ms is not None
        and stats.last_time_ms is not None
        and stats.first_time_ms // 86_400_000 != stats.last_time_ms // 86_400_000
    )
    out = [heading(stats, sum(log.counters.by_kind.values()))]
    out += [f"{clock(line.started_at, date=dated)}  {line.system:<9} {line.detail}" for line in log.summary()]
    if kept:
        out.append("")
        out += [f"{clock(change.at, date=dated)}  {_position(change)}  {describe(change)}" for change in kept]
    return out


def _position(change: Any) -> str:
    """Where a change is in its log: a zxid (hex, as ZooKeeper prints them) or a KRaft offset (``@107``)."""
    return f"@{change.zxid}" if getattr(change, "root", None) == KRAFT_ROOT else f"{change.zxid:#x}"
