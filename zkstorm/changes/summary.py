"""The summary of a window, what ``changes`` shows first: changes taken together, oldest first.

A broker that left is one line from its going to its return, with the partitions that dropped it from
their ISR over that time and those that went offline, and until when; a supervisor that left, with the
executors Nimbus moved off it; per topology its lifecycle, assignment changes, workers and errors; other
changes counted by kind and place. ``Summarizer.add`` takes the records as they stream and keeps counts
and a few names per group, never the records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..layout import name_from_id
from ..records import (
    ChangeSummary,
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
from .lines import clock, listed

NAMED = 4  # names given in a line; the rest counted
KAFKA, STORM, ZOOKEEPER = "Kafka", "Storm", "ZooKeeper"


def _span(first: datetime, last: datetime) -> str:
    seconds = (last - first).total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _top(counter: Counter[str], limit: int = NAMED) -> str:
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{name} ({n:,})" for name, n in ranked[:limit])
    return shown + (f" and {len(ranked) - limit:,} more" if len(ranked) > limit else "")


@dataclass
class _Times:
    first: datetime | None = None
    last: datetime | None = None
    count: int = 0

    def seen(self, at: datetime) -> None:
        self.first = at if self.first is None or at < self.first else self.first
        self.last = at if self.last is None or at > self.last else self.last
        self.count += 1


@dataclass
class _BrokerAbsence:
    """A broker from its going to its return, and the partitions it took out of ISRs and offline."""

    root: str
    broker_id: int
    host: str | None
    how: str
    gone_at: datetime
    back_at: datetime | None = None
    isr: set[tuple[str, int]] = field(default_factory=set)
    isr_times: _Times = field(default_factory=_Times)
    leaders: int = 0  # leaderships moved from it to another broker
    offline_now: set[tuple[str, int]] = field(default_factory=set)
    went_offline: int = 0
    offline_times: _Times = field(default_factory=_Times)
    back_online: int = 0
    back_online_last: datetime | None = None
    controller: bool = False  # it was the controller, and its /controller went with it
    changes: int = 1

    def line(self, dated: bool) -> ChangeSummary:
        parts = [f"broker {self.broker_id}{f' ({self.host})' if self.host else ''} gone "
                 f"{clock(self.gone_at, date=dated)} ({_how(self.how)})"]  # fmt: skip
        if self.controller:
            parts[0] += " with the controllership"
        if self.isr:
            times = self.isr_times
            assert times.first is not None and times.last is not None
            parts.append(f"{_plural(len(self.isr), 'partition')} dropped it from their ISR over "
                         f"{_span(times.first, times.last)}")  # fmt: skip
        if self.leaders:
            parts.append(f"{_plural(self.leaders, 'leadership')} moved to other brokers")
        if self.went_offline:
            offline = f"{_plural(self.went_offline, 'partition')} offline"
            back = clock(self.back_online_last, date=dated) if self.back_online_last else None
            if not self.offline_now and back:
                parts.append(f"{offline} until {back}")
            elif back:
                parts.append(f"{offline}, {self.back_online:,} back by {back}, {len(self.offline_now):,} still offline")
            else:
                parts.append(f"{offline}, still offline")
        parts.append(f"back {clock(self.back_at, date=dated)}" if self.back_at else "not back")
        return ChangeSummary(
            started_at=self.gone_at,
            ended_at=self.back_at,
            system=KAFKA,
            subject=f"broker {self.broker_id}",
            detail=", ".join(parts),
            changes=self.changes,
            root=self.root,
        )


def _how(how: str) -> str:
    return {"expired": "session expired", "closed": "session closed", "deleted": "registration deleted"}.get(how, how)


@dataclass
class _Partitions:
    """Partition state changes no broker absence explains, per root."""

    root: str
    times: _Times = field(default_factory=_Times)
    shrinks: set[tuple[str, int]] = field(default_factory=set)
    expands: set[tuple[str, int]] = field(default_factory=set)
    leaders: int = 0
    went_offline: set[tuple[str, int]] = field(default_factory=set)
    back_online: int = 0
    topics: Counter[str] = field(default_factory=Counter)

    def line(self) -> ChangeSummary:
        parts = []
        if self.shrinks:
            parts.append(f"{_plural(len(self.shrinks), 'partition')} shrank their ISR")
        if self.expands:
            parts.append(f"{len(self.expands):,} grew it")
        if self.leaders:
            parts.append(f"{_plural(self.leaders, 'leader change')}")
        if self.went_offline:
            parts.append(f"{len(self.went_offline):,} went offline")
        if self.back_online:
            parts.append(f"{self.back_online:,} came back online")
        assert self.times.first is not None and self.times.last is not None
        parts.append(f"over {_span(self.times.first, self.times.last)}; topics {_top(self.topics)}")
        return ChangeSummary(
            started_at=self.times.first,
            ended_at=self.times.last if self.times.last != self.times.first else None,
            system=KAFKA,
            subject="partitions",
            detail=f"{_plural(self.times.count, 'partition state change')}: " + ", ".join(parts),
            changes=self.times.count,
            root=self.root,
        )


@dataclass
class _SupervisorAbsence:
    root: str
    supervisor_id: str
    host: str | None
    how: str
    left_at: datetime
    back_at: datetime | None = None
    moved: Counter[str] = field(default_factory=Counter)  # topology name → executors moved off it
    changes: int = 1

    def line(self, dated: bool) -> ChangeSummary:
        who = self.host or self.supervisor_id
        parts = [f"supervisor {who} left {clock(self.left_at, date=dated)} ({_how(self.how)})"]
        if self.moved:
            parts.append(f"Nimbus moved {_plural(sum(self.moved.values()), 'executor')} off it: {_top(self.moved)}")
        parts.append(f"back {clock(self.back_at, date=dated)}" if self.back_at else "not back")
        return ChangeSummary(
            started_at=self.left_at,
            ended_at=self.back_at,
            system=STORM,
            subject=f"supervisor {who}",
            detail=", ".join(parts),
            changes=self.changes,
            root=self.root,
        )


@dataclass
class _Topology:
    """Everything of one topology the window holds, but the absences' moves."""

    root: str
    topology_id: str
    name: str
    times: _Times = field(default_factory=_Times)
    lifecycle: list[str] = field(default_factory=list)
    assignments: int = 0
    moved: int = 0
    slots_added: int = 0
    slots_freed: int = 0
    started: int = 0
    stopped: int = 0
    stale: set[str] = field(default_factory=set)
    resumed: int = 0
    longest_silence: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    last_error: str | None = None
    backpressure: int = 0

    def line(self) -> ChangeSummary:
        parts = list(self.lifecycle)
        if self.assignments:
            what = [f"{self.moved:,} executors moved"] if self.moved else []
            what += [f"+{self.slots_added} slots"] * bool(self.slots_added)
            what += [f"-{self.slots_freed} slots"] * bool(self.slots_freed)
            parts.append(
                f"{_plural(self.assignments, 'assignment change')}" + (f" ({', '.join(what)})" if what else "")
            )
        workers = []
        if self.started:
            workers.append(f"{self.started:,} started")
        if self.stopped:
            workers.append(f"{self.stopped:,} stopped")
        if self.stale:
            workers.append(f"{len(self.stale):,} went stale")
        if self.resumed:
            workers.append(f"{self.resumed:,} resumed (longest silence {self.longest_silence:.0f} s)")
        if workers:
            parts.append("workers: " + ", ".join(workers))
        if self.errors:
            parts.append(
                f"{_plural(sum(self.errors.values()), 'error')} ({_top(self.errors)}); last: {self.last_error}"
            )
        if self.backpressure:
            parts.append(f"backpressure switched {self.backpressure:,} times")
        assert self.times.first is not None
        return ChangeSummary(
            started_at=self.times.first,
            ended_at=self.times.last if self.times.last != self.times.first else None,
            system=STORM,
            subject=f"topology {self.name}",
            detail=f"{self.name}: " + "; ".join(parts),
            changes=self.times.count,
            root=self.root,
        )


@dataclass
class _Group:
    """Changes of one kind counted together: ``3 topics created: a (1), b (1), c (1)``."""

    system: str
    noun: str
    verb: str
    root: str | None
    times: _Times = field(default_factory=_Times)
    names: Counter[str] = field(default_factory=Counter)

    def line(self) -> ChangeSummary:
        assert self.times.first is not None
        names = f": {_top(self.names)}" if self.names else ""
        return ChangeSummary(
            started_at=self.times.first,
            ended_at=self.times.last if self.times.last != self.times.first else None,
            system=self.system,
            subject=f"{self.noun} {self.verb}",
            detail=f"{_plural(self.times.count, self.noun)} {self.verb}{names}",
            changes=self.times.count,
            root=self.root,
        )


class Summarizer:
    """Takes every change record as it streams (``add``); ``lines`` then says what happened."""

    def __init__(self) -> None:
        self.brokers: dict[tuple[str, int], _BrokerAbsence] = {}  # open absences
        self.supervisors: dict[tuple[str, str], _SupervisorAbsence] = {}
        self.closed: list[Any] = []  # absences that ended, in the order they ended
        self.partitions: dict[str, _Partitions] = {}
        self.topologies: dict[tuple[str, str], _Topology] = {}
        self.groups: dict[tuple[str, str, str, str | None], _Group] = {}
        self.singles: list[ChangeSummary] = []  # lines of their own (controllers, nimbus leaders)
        self.first: datetime | None = None
        self.last: datetime | None = None

    def add(self, change: Any) -> None:
        at = change.at
        self.first = at if self.first is None else min(self.first, at)
        self.last = at if self.last is None else max(self.last, at)
        handler = _ADD.get(type(change))
        if handler is not None:
            handler(self, change)

    # Kafka ------------------------------------------------------------------------------------------

    def _broker_gone(self, c: KafkaBrokerGone) -> None:
        key = (c.root, c.broker_id)
        if key in self.brokers:
            self.closed.append(self.brokers.pop(key))
        self.brokers[key] = _BrokerAbsence(c.root, c.broker_id, c.host, c.how, c.at)

    def _broker_registered(self, c: KafkaBrokerRegistered) -> None:
        absence = self.brokers.pop((c.root, c.broker_id), None)
        if absence is not None:
            absence.back_at = c.at
            absence.changes += 1
            self.closed.append(absence)
        else:
            self._group(KAFKA, "broker", "registered", c.root, c.at, f"broker {c.broker_id}")

    def _partition(self, c: KafkaPartitionChanged) -> None:
        """A partition change goes with the absence of a broker it names (dropped from the ISR, a
        leadership moved off it, offline with it as leader or last ISR member, or back online), else
        with the root's other partition changes."""
        key = (c.topic, c.partition)
        for absence in self._absences(c.root):
            broker = absence.broker_id
            named = absence.back_at is None and (c.leader_before == broker or broker in (c.isr_before or ()))
            if not named and key not in absence.offline_now:
                continue
            if broker in c.isr_removed:
                absence.isr.add(key)
                absence.isr_times.seen(c.at)
            if c.leader_before == broker and c.leader not in (broker, -1):
                absence.leaders += 1
            # offline while it is gone: led by it (offline since it went), or left without a leader
            if named and key not in absence.offline_now and (c.offline or c.offline_before):
                absence.offline_now.add(key)
                absence.went_offline += 1
                absence.offline_times.seen(c.at)
            if not c.offline and key in absence.offline_now:
                absence.offline_now.discard(key)
                absence.back_online += 1
                absence.back_online_last = c.at
            absence.changes += 1
            return
        churn = self.partitions.get(c.root)
        if churn is None:
            churn = self.partitions[c.root] = _Partitions(c.root)
        churn.times.seen(c.at)
        churn.topics[c.topic] += 1
        if c.isr_removed:
            churn.shrinks.add(key)
        if c.isr_added:
            churn.expands.add(key)
        if c.leader_before is not None and c.leader_before != c.leader:
            churn.leaders += 1
        if c.offline and not c.offline_before:
            churn.went_offline.add(key)
        elif c.offline_before and not c.offline:
            churn.back_online += 1

    def _absences(self, root: str) -> list[_BrokerAbsence]:
        """The broker absences of ``root`` a partition change may belong to: those going on, and those
        over whose partitions are still offline (they come back online after the broker)."""
        going = [a for a in self.brokers.values() if a.root == root]
        over = [a for a in self.closed if isinstance(a, _BrokerAbsence) and a.root == root and a.offline_now]
        return going + over

    def _controller_gone(self, c: KafkaControllerGone) -> None:
        """The controller's znode gone with its broker's session is said on the broker's line."""
        absence = self.brokers.get((c.root, c.broker_id)) if c.broker_id is not None else None
        if absence is not None and absence.gone_at == c.at:
            absence.controller = True
            absence.changes += 1
        else:
            self._group(KAFKA, "controller", "gone", c.root, c.at, f"broker {c.broker_id}")

    def _controller(self, c: KafkaControllerElected) -> None:
        was = f", was broker {c.previous_broker_id}" if c.previous_broker_id is not None else ""
        epoch = f" (epoch {c.epoch})" if c.epoch is not None else ""
        self.singles.append(
            ChangeSummary(
                started_at=c.at,
                ended_at=None,
                system=KAFKA,
                subject="controller",
                detail=f"controller elected {clock(c.at)}: broker {c.broker_id}{epoch}{was}",
                changes=1,
                root=c.root,
            )
        )

    # Storm ------------------------------------------------------------------------------------------

    def _topology(self, root: str, topology_id: str, name: str | None, at: datetime) -> _Topology:
        key = (root, topology_id)
        found = self.topologies.get(key)
        if found is None:
            found = self.topologies[key] = _Topology(root, topology_id, name or name_from_id(topology_id))
        found.times.seen(at)
        return found

    def _supervisor_left(self, c: StormSupervisorLeft) -> None:
        self.supervisors[(c.root, c.supervisor_id)] = _SupervisorAbsence(
            c.root, c.supervisor_id, c.hostname, c.how, c.at
        )

    def _supervisor_joined(self, c: StormSupervisorJoined) -> None:
        absence = self.supervisors.pop((c.root, c.supervisor_id), None)
        if absence is not None:
            absence.back_at = c.at
            absence.changes += 1
            self.closed.append(absence)
        else:
            self._group(STORM, "supervisor", "joined", c.root, c.at, c.hostname or c.supervisor_id)

    def _assignment(self, c: StormAssignmentChanged) -> None:
        off: dict[tuple[str, str], int] = {}
        for move in c.moves:
            source = move.split(" ", 1)[1].split("->", 1)[0].rpartition(":")[0]
            for key, absence in self.supervisors.items():
                if absence.root == c.root and source in (absence.host, absence.supervisor_id):
                    off[key] = off.get(key, 0) + 1
        for key, n in off.items():
            self.supervisors[key].moved[c.name] += n
            self.supervisors[key].changes += 1
        t = self._topology(c.root, c.topology_id, c.name, c.at)
        t.assignments += 1
        t.moved += c.executors_moved
        t.slots_added += len(c.slots_added)
        t.slots_freed += len(c.slots_freed)
        if c.executors_before == 0 and c.executors:
            t.lifecycle.append(f"scheduled {clock(c.at)}")
        elif c.executors == 0 and c.executors_before:
            t.lifecycle.append(f"unassigned {clock(c.at)}")

    def _lifecycle(self, c: Any) -> None:
        t = self._topology(c.root, c.topology_id, c.name, c.at)
        if isinstance(c, StormTopologySubmitted):
            t.lifecycle.append(f"submitted {clock(c.at)} ({c.status})")
        elif isinstance(c, StormTopologyStatusChanged):
            t.lifecycle.append(f"{c.status_before or '?'}->{c.status} {clock(c.at)}")
        else:
            t.lifecycle.append(f"removed {clock(c.at)}")

    def _worker(self, c: Any) -> None:
        t = self._topology(c.root, c.topology_id, None, c.at)
        if isinstance(c, StormWorkerStarted):
            t.started += 1
        elif isinstance(c, StormWorkerStopped):
            t.stopped += 1
        elif isinstance(c, StormWorkerStale):
            t.stale.add(f"{c.node}:{c.port}")
        else:
            t.resumed += 1
            t.longest_silence = max(t.longest_silence, c.silent_secs)

    def _error(self, c: StormErrorReported) -> None:
        t = self._topology(c.root, c.topology_id, None, c.at)
        t.errors[c.component] += 1
        t.last_error = c.first_line

    def _backpressure(self, c: StormBackpressureChanged) -> None:
        self._topology(c.root, c.topology_id, None, c.at).backpressure += 1

    def _nimbus(self, c: StormNimbusLeaderChanged) -> None:
        self.singles.append(
            ChangeSummary(
                started_at=c.at,
                ended_at=None,
                system=STORM,
                subject="nimbus leader",
                detail=f"nimbus leader {c.leader_before or 'none'} -> {c.leader or 'none'} at {clock(c.at)}",
                changes=1,
                root=c.root,
            )
        )

    # everything else: counted ------------------------------------------------------------------------

    def _group(
        self, system: str, noun: str, verb: str, root: str | None, at: datetime, name: str | None = None
    ) -> None:
        key = (system, noun, verb, root)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(system, noun, verb, root)
        group.times.seen(at)
        if name is not None:
            group.names[name] += 1

    def _generic(self, c: Any) -> None:
        """Znodes of a kind a decoder knows, counted by kind; others by the parent they are under."""
        verb = _GENERIC_VERBS[type(c)]
        kind = getattr(c, "record_kind", None)
        if kind:
            self._group(ZOOKEEPER, f"{kind.replace('_', ' ')} znode", verb, c.root, c.at)
        else:
            parent = c.path.rsplit("/", 1)[0] or "/"
            self._group(ZOOKEEPER, "znode", f"{verb} under {parent}", c.root, c.at)

    def lines(self, stats: Any = None, counters: Any = None) -> list[ChangeSummary]:
        """The summary, oldest first, then the counts of what is not shown one by one."""
        dated = self.first is not None and self.last is not None and self.first.date() != self.last.date()
        out: list[ChangeSummary] = list(self.singles)
        absences = [*self.closed, *self.brokers.values(), *self.supervisors.values()]
        out += [a.line(dated) for a in absences]
        out += [p.line() for p in self.partitions.values()]
        out += [t.line() for t in self.topologies.values()]
        out += [g.line() for g in self.groups.values()]
        out.sort(key=lambda s: s.started_at)
        if stats is not None and counters is not None and self.first is not None:
            out += _counted(stats, counters, self.first, self.last or self.first)
        return out


def _counted(stats: Any, counters: Any, first: datetime, last: datetime) -> list[ChangeSummary]:
    """What the window held that is no change of its own: heartbeats, sessions, folded copies."""
    parts = []
    if counters.heartbeat_writes:
        parts.append(
            f"{counters.heartbeat_writes:,} worker heartbeats from {counters.heartbeat_workers:,} workers (rewrites, "
            "not changes: only their starts, stops and silences are shown)"
        )
    if counters.supervisor_beats:
        parts.append(f"{counters.supervisor_beats:,} supervisor heartbeats")
    sessions = [
        f"{stats.sessions_opened:,} opened" * bool(stats.sessions_opened),
        f"{stats.sessions_expired:,} expired" * bool(stats.sessions_expired),
        f"{stats.sessions_closed:,} closed" * bool(stats.sessions_closed),
    ]
    if any(sessions):
        parts.append("sessions " + ", ".join(s for s in sessions if s))
    if counters.errors_folded:
        parts.append(f"{counters.errors_folded:,} -last-error copies of reported errors")
    if stats.failed_txns:
        parts.append(f"{stats.failed_txns:,} failed txns (nothing changed)")
    if not parts:
        return []
    return [
        ChangeSummary(
            started_at=first,
            ended_at=last if last != first else None,
            system=ZOOKEEPER,
            subject="not shown",
            detail="; ".join(parts),
            changes=0,
            root=None,
        )
    ]


def _kafka_group(noun: str, verb: str, name: Any) -> Any:
    def add(s: Summarizer, c: Any) -> None:
        s._group(KAFKA, noun, verb, c.root, c.at, name(c))

    return add


_GENERIC_VERBS = {
    ZnodeCreated: "created",
    ZnodeDeleted: "deleted",
    ZnodeDataChanged: "written",
    ZnodeAclChanged: "given an ACL",
}


_ADD: dict[type, Any] = {
    KafkaBrokerGone: Summarizer._broker_gone,
    KafkaBrokerRegistered: Summarizer._broker_registered,
    KafkaPartitionChanged: Summarizer._partition,
    KafkaControllerElected: Summarizer._controller,
    KafkaControllerGone: Summarizer._controller_gone,
    KafkaBrokerRegisteredFenced: _kafka_group("broker", "registered fenced", lambda c: f"broker {c.broker_id}"),
    KafkaBrokerControlledShutdown: _kafka_group(
        "broker", "began controlled shutdown", lambda c: f"broker {c.broker_id}"
    ),
    KafkaTopicCreated: _kafka_group("topic", "created", lambda c: c.topic),
    KafkaTopicMarkedForDeletion: _kafka_group("topic", "marked for deletion", lambda c: c.topic),
    KafkaTopicDeleted: _kafka_group("topic", "deleted", lambda c: c.topic),
    KafkaPartitionsAdded: _kafka_group("topic", "given partitions", lambda c: c.topic),
    KafkaReassignmentStarted: _kafka_group("partition", "started moving", lambda c: c.topic),
    KafkaReassignmentProgressed: _kafka_group("partition move", "progressed", lambda c: c.topic),
    KafkaReassignmentCompleted: _kafka_group("partition", "finished moving", lambda c: c.topic),
    KafkaReplicasChanged: _kafka_group("replica list", "changed", lambda c: c.topic),
    KafkaConfigChanged: _kafka_group("config", "changed", lambda c: f"{c.entity_type}/{c.entity_name}"),
    KafkaAclChanged: _kafka_group("ACL resource", "changed", lambda c: f"{c.resource_type}:{c.resource_name}"),
    KafkaIsrChangeNotified: _kafka_group("ISR change notification", "posted", lambda c: listed(c.partitions, 1)),
    KafkaLogDirEventNotified: _kafka_group("log dir failure", "reported", lambda c: f"broker {c.broker_id}"),
    StormTopologySubmitted: Summarizer._lifecycle,
    StormTopologyStatusChanged: Summarizer._lifecycle,
    StormTopologyRemoved: Summarizer._lifecycle,
    StormAssignmentChanged: Summarizer._assignment,
    StormSupervisorJoined: Summarizer._supervisor_joined,
    StormSupervisorLeft: Summarizer._supervisor_left,
    StormWorkerStarted: Summarizer._worker,
    StormWorkerStopped: Summarizer._worker,
    StormWorkerStale: Summarizer._worker,
    StormWorkerResumed: Summarizer._worker,
    StormErrorReported: Summarizer._error,
    StormNimbusLeaderChanged: Summarizer._nimbus,
    StormBackpressureChanged: Summarizer._backpressure,
    ZnodeCreated: Summarizer._generic,
    ZnodeDeleted: Summarizer._generic,
    ZnodeDataChanged: Summarizer._generic,
    ZnodeAclChanged: Summarizer._generic,
}
