"""The Storm scenarios, driven through Storm's own API on a real cluster, and the moment after each: what
Nimbus's Thrift API says and what zkstorm shows, read from the same znodes.

Steps, in order (``StormScenario.reach(step)`` runs the ones before it that have not run):

``started``          topology ``words`` (2 workers; spout ×2, ``split`` ×3 over 4 tasks, ``count`` ×2 over 4)
                     running, every executor's figures in ZooKeeper, ``split``'s errors stored
``rebalanced``       ``rebalance -w 1 -n 3 -e count=4`` (Nimbus.rebalance) while INACTIVE, then ACTIVE again:
                     three workers, four ``count`` executors, the assignment moved
``deactivated``      ``deactivate``: INACTIVE
``activated``        ``activate``: ACTIVE again
``supervisor_down``  the supervisor with the most workers stopped (LocalCluster.killSupervisor): its
                     registration gone, its executors moved to the other one
``killing``          ``kill -w 40``: KILLED while Nimbus waits
``removed``          the topology gone from Nimbus and from ZooKeeper

Each step records when it acted and when Storm showed its result (``events``: the topology's status
changed, its assignment moved, the supervisor gone, the topology removed), which ``zkstorm changes``
over ZooKeeper's own log is held against (``test_storm_real``).

With ``snapshots`` set, ``zkstorm snapshot`` is taken there after each of ``SNAPSHOT_AFTER`` (running,
the supervisor stopped, KILLED, removed: right after Storm showed the step's result, before its moment, so
the KILLED one is inside the kill's wait), which ``zkstorm history`` is held to (``test_storm_real``).

A moment is taken only when no znode under the root changed between a dump before Storm was asked and a
dump after zkstorm read (``consistent``). Nimbus computes its figures from the same workerbeats znodes
(``storm_compare`` says why they must then be equal).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkstorm.sources.base import RawNode

from . import storm
from .capture import Moment, dump
from .compare import Fact
from .storm import TOPOLOGY, StormCluster
from .storm_views import facts, live_ids, read_views
from .views import Shown, run

STEPS = ("started", "rebalanced", "deactivated", "activated", "supervisor_down", "killing", "removed")
KILL_WAIT_SECS = 40  # the KILLED moment is taken within it: views, Nimbus's API and a snapshot, slow under load
SNAPSHOT_AFTER = ("activated", "supervisor_down", "killing", "removed")


@dataclass
class StormSeen:
    """One moment: its capture, what zkstorm showed, and every fact compared."""

    moment: Moment
    views: dict[str, Shown]
    facts: list[Fact]

    @property
    def storm(self) -> dict[str, Any]:
        return self.moment.kafka  # the capture's "answer" field: here Nimbus's


def consistent(before: list[RawNode], after: list[RawNode]) -> bool:
    """The same znodes with the same versions: nothing was written under the root meanwhile (the
    supervisors' registrations included: Nimbus reads each one's used slots from it, as zkstorm does)."""

    def key(nodes: list[RawNode]) -> set[tuple[str, int]]:
        return {(n.path, n.stat.mzxid) for n in nodes}

    return key(before) == key(after)


@dataclass
class StormScenario:
    cluster: StormCluster
    zk: Any  # the test ZooKeeper (zkstorm.sandbox.server.ZkServer)
    writer: Any  # the tests' own kazoo client, for the dumps
    capture: Path | None = None
    profile: str = storm.PROFILE
    done: list[str] = field(default_factory=list)
    seen: dict[str, StormSeen] = field(default_factory=dict)
    timings: dict[str, tuple[float, float]] = field(default_factory=dict)
    retries: dict[str, int] = field(default_factory=dict)
    failed: str | None = None
    slots_before_rebalance: set[tuple[str, int]] = field(default_factory=set)
    stopped_supervisor: str | None = None
    topology_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    killed_ms: int = 0  # when kill was asked for (the removal follows it)
    started_zxid: int = 0  # the server's last zxid before the cluster started (``zkstorm changes --since``)
    snapshots: Path | None = None  # where ``zkstorm snapshot`` writes after each of ``SNAPSHOT_AFTER``
    snapshot_ids: dict[str, str] = field(default_factory=dict)  # step: its snapshot's id

    @property
    def where(self) -> list[str]:
        return ["--zk", self.zk.connect_string, "--storm-root", self.cluster.root]

    def reach(self, step: str) -> StormSeen:
        for name in STEPS[: STEPS.index(step) + 1]:
            if name in self.done:
                continue
            if self.failed is not None:
                raise AssertionError(f"{self.profile}: step {self.failed} failed earlier; {step} cannot be reached")
            self.failed = name
            started = time.monotonic()
            getattr(self, f"_{name}")()
            if self.snapshots is not None and name in SNAPSHOT_AFTER:
                self.snapshot(name)
            acted = time.monotonic()
            self.seen[name] = self.moment(name)
            self.timings[name] = (acted - started, time.monotonic() - acted)
            self.done.append(name)
            self.failed = None
        return self.seen[step]

    def snapshot(self, step: str) -> None:
        """``zkstorm snapshot`` of the Storm root as the step left it, under an id of its own (the default
        id is one a day: a second one the same day would replace the first)."""
        assert self.snapshots is not None
        snapshot_id = f"{self.profile}@{len(self.snapshot_ids)}-{step}"
        result = run(
            *self.where, "snapshot", str(self.snapshots), "--cluster", self.profile, "--snapshot-id", snapshot_id
        )
        assert result.exit_code == 0, f"snapshot after {step}: {result.stderr}"
        self.snapshot_ids[step] = snapshot_id

    def moment(self, name: str, attempts: int = 25, *, save: bool = True) -> StormSeen:
        """Storm's answer and zkstorm's views, taken again until the znodes they read did not change
        from before Storm was asked to after zkstorm read."""
        for attempt in range(attempts):
            self.retries[name] = attempt
            before = dump(self.writer, self.cluster.root)
            zxid = self.zk.last_zxid()  # between the two dumps: the state they agree on (``--at-zxid``)
            truth = self.cluster.truth()
            as_of_ms = int(time.time() * 1000)
            views = read_views(self.where, live_ids(truth))
            after = dump(self.writer, self.cluster.root)
            if consistent(before, after):
                moment = Moment(self.profile, name, self.cluster.root, as_of_ms, zxid, before, truth)
                if self.capture is not None and save:
                    self._save(moment)
                return StormSeen(moment, views, facts(views, truth))
        raise AssertionError(f"{self.profile} {name}: Storm's znodes kept changing; no steady moment")

    def event(self, kind: str, started_ms: int, **subject: Any) -> None:
        """``kind`` happened between ``started_ms`` (before Storm was asked) and now (Storm showed it)."""
        self.events.append({"kind": kind, "from_ms": started_ms, "to_ms": _now_ms(), **subject})

    def _save(self, moment: Moment) -> None:
        assert self.capture is not None
        moment.save(self.capture, answer="storm")
        order = self.capture / self.profile / "order.json"
        names = json.loads(order.read_text()) if order.exists() else []
        names = [n for n in names if n != moment.name] + [moment.name]
        order.write_text(json.dumps(names) + "\n")
        (self.capture / self.profile / "events.json").write_text(json.dumps(self.events, indent=1) + "\n")

    # --- the steps -----------------------------------------------------------------------------------

    def _running(self, what: str, workers: int, status: str = "ACTIVE", **extra: Any) -> dict[str, Any]:
        """Until the topology is ``status`` on ``workers`` workers, every executor's figures are in ZooKeeper,
        and ``extra`` checks hold."""

        def check(answer: dict[str, Any]) -> bool:
            summary = storm.summary(answer)
            return bool(
                summary
                and summary["status"] == status
                and summary["num_workers"] == workers
                and len(storm.slots(answer)) == workers
                and storm.beating(answer, counting=status == "ACTIVE")
                and all(test(answer) for test in extra.values())
            )

        return self.cluster.wait(what, check, timeout=90)

    def _started(self) -> None:
        self.cluster.submit(TOPOLOGY, workers=2)
        found = storm.topology(self._running("running with errors stored", 2, errors=_errors_stored))
        assert found is not None
        self.topology_id = found[0]

    def _rebalanced(self) -> None:
        """The rebalance, with no spout emitting: rebalanced while ACTIVE, a worker whose executors change
        goes on until its supervisor replaces it (in local mode it only logs "Local worker tried to commit
        suicide!", WorkerState.java), the other workers already send it tuples for executors it does not
        have, and its NullPointerException (WorkerState.transferLocalBatch) halts LocalCluster's whole JVM
        (Utils.asyncLoop's handler: exitProcess). So the topology is made INACTIVE first, and ACTIVE again
        once every new worker beats; the events recorded are the rebalance's own."""
        self.slots_before_rebalance = storm.slots(self.cluster.truth())
        self.cluster.deactivate(TOPOLOGY)
        self.cluster.wait("INACTIVE", lambda a: (storm.summary(a) or {}).get("status") == "INACTIVE")
        started = _now_ms()
        self.cluster.rebalance(TOPOLOGY, 1, 3, "count", 4)
        self._running("rebalanced to 3 workers", 3, "INACTIVE", executors=lambda a: _executors(a, "count") == 4)
        self.event("storm_topology_status_changed", started, topology_id=self.topology_id, status="REBALANCING")
        self.event("storm_assignment_changed", started, topology_id=self.topology_id)
        self.cluster.activate(TOPOLOGY)
        self._running("running on the new assignment", 3, executors=lambda a: _executors(a, "count") == 4)

    def _deactivated(self) -> None:
        started = _now_ms()
        self.cluster.deactivate(TOPOLOGY)
        self.cluster.wait("INACTIVE", lambda a: (storm.summary(a) or {}).get("status") == "INACTIVE")
        self.event("storm_topology_status_changed", started, topology_id=self.topology_id, status="INACTIVE")

    def _activated(self) -> None:
        started = _now_ms()
        self.cluster.activate(TOPOLOGY)
        self.cluster.wait("ACTIVE", lambda a: (storm.summary(a) or {}).get("status") == "ACTIVE")
        self.event("storm_topology_status_changed", started, topology_id=self.topology_id, status="ACTIVE")

    def _supervisor_down(self) -> None:
        slots = storm.slots(self.cluster.truth())
        busiest = max({s for s, _ in slots}, key=lambda s: sum(1 for n, _ in slots if n == s))
        self.stopped_supervisor = busiest
        started = _now_ms()
        self.cluster.kill_supervisor(busiest)

        def moved(answer: dict[str, Any]) -> bool:
            alive = {s["supervisor_id"] for s in answer["cluster"].get("supervisors", [])}
            return busiest not in alive and all(node != busiest for node, _ in storm.slots(answer))

        self._running("moved off the stopped supervisor", 3, moved=moved)
        self.event("storm_supervisor_left", started, supervisor_id=busiest)
        self.event("storm_assignment_changed", started, topology_id=self.topology_id)

    def _killing(self) -> None:
        self.killed_ms = _now_ms()
        self.cluster.kill(TOPOLOGY, KILL_WAIT_SECS)
        self.cluster.wait("KILLED", lambda a: (storm.summary(a) or {}).get("status") == "KILLED")
        self.event("storm_topology_status_changed", self.killed_ms, topology_id=self.topology_id, status="KILLED")

    def _removed(self) -> None:
        self.cluster.wait("removed", lambda a: storm.summary(a) is None, timeout=KILL_WAIT_SECS + 60)

        def gone() -> bool:
            return not any(
                self.writer.exists(f"{self.cluster.root}/{sub}")
                and self.writer.get_children(f"{self.cluster.root}/{sub}")
                for sub in ("storms", "assignments")
            )

        deadline = time.monotonic() + 30
        while not gone():
            if time.monotonic() > deadline:
                raise AssertionError("the killed topology's storms and assignments znodes stayed")
            time.sleep(0.2)
        self.event("storm_topology_removed", self.killed_ms, topology_id=self.topology_id)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _errors_stored(answer: dict[str, Any]) -> bool:
    found = storm.topology(answer)
    return bool(found and found[1].get("info", {}).get("errors", {}).get("split"))


def _executors(answer: dict[str, Any], component: str) -> int:
    found = storm.topology(answer)
    if not found or "info" not in found[1]:
        return 0
    return sum(1 for e in found[1]["info"]["executors"] if e["component_id"] == component)
