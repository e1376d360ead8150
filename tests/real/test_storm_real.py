"""Every zkstorm Storm view against what Nimbus's own Thrift API says about the same running cluster
(issue 39).

One real Storm 2.8.3 cluster for the module (``storm`` fixture: LocalCluster's Nimbus with its Thrift
server, two supervisors, real workers, under a root of its own in the suite's ZooKeeper), driven through
Storm's own API step by step (``storm_scenario.py``); after each step every view is compared fact by fact
with Nimbus's answer read from the same znodes (``storm_compare.py``). A test fails on any disagreement
and names each one. Then the same views from ZooKeeper's own files (``--from-files``), and ``zkstorm
changes`` against the times the scenario recorded, and ``zkstorm history`` over snapshots taken before
the supervisor stop, after it, at the kill and after the removal.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tests.real import storm_compare, storm_views, views
from tests.real.conftest import count
from tests.real.storm import SUPERVISOR_HOSTS, TOPOLOGY
from tests.real.storm_scenario import SNAPSHOT_AFTER, StormScenario, StormSeen
from zkstorm.jobs.history import run_history

pytestmark = pytest.mark.real_cluster


def agree(storm: StormScenario, step: str) -> StormSeen:
    """The step reached, its moment's facts counted, and not one disagreement."""
    seen = storm.reach(step)
    count(storm.profile, seen.facts)
    wrong = [str(f) for f in seen.facts if not f.equal]
    assert not wrong, f"{storm.profile} {step}: {len(wrong)} disagreements with Storm:\n" + "\n".join(wrong[:60])
    return seen


def _rows(seen: StormSeen, view: str) -> list[dict[str, Any]]:
    return seen.views[view].rows


def _tid(seen: StormSeen) -> str:
    (summary,) = [t for t in seen.storm["cluster"]["topologies"] if t["name"] == TOPOLOGY]
    return str(summary["id"])


def test_started_topology_heartbeats_errors_and_leader(storm: StormScenario) -> None:
    seen = agree(storm, "started")
    tid = _tid(seen)
    assert [t["status"] for t in _rows(seen, "topologies")] == ["ACTIVE"]
    components = {c["component"]: c for c in _rows(seen, f"components {tid} 10m")}
    assert set(components) == {"sentences", "split", "count"}
    assert components["sentences"]["emitted"] > 0 and components["split"]["failed"] > 0
    assert components["split"]["executors"] == 3 and components["split"]["tasks"] == 4
    errors = _rows(seen, f"errors {tid}")
    assert errors and all(e["component"] == "split" and "zkstorm-real" in e["error"] for e in errors)
    assert [n["is_leader"] for n in _rows(seen, "nimbus")] == [True]
    # Storm 2.x still writes each worker's executor figures to ZooKeeper (Worker.doExecutorHeartbeats, every
    # executor.metrics.frequency.secs, without Pacemaker): the beats zkstorm reads are the ones Nimbus reads
    assert len(_rows(seen, "workers")) == 2


def test_rebalance_moves_the_assignment(storm: StormScenario) -> None:
    seen = agree(storm, "rebalanced")
    tid = _tid(seen)
    slots = {(e["node"], e["port"]) for e in _rows(seen, f"assignment {tid}")}
    assert len(slots) == 3 and slots != storm.slots_before_rebalance
    components = {c["component"]: c for c in _rows(seen, f"components {tid} 10m")}
    assert components["count"]["executors"] == 4


def test_deactivate_then_activate(storm: StormScenario) -> None:
    assert [t["status"] for t in _rows(agree(storm, "deactivated"), "topologies")] == ["INACTIVE"]
    assert [t["status"] for t in _rows(agree(storm, "activated"), "topologies")] == ["ACTIVE"]


def test_supervisor_stopped_its_executors_moved(storm: StormScenario) -> None:
    seen = agree(storm, "supervisor_down")
    gone = storm.stopped_supervisor
    assert gone and gone not in {s["supervisor_id"] for s in _rows(seen, "supervisors")}
    assert gone not in {e["node"] for e in _rows(seen, f"assignment {_tid(seen)}")}
    assert gone not in {w["node"] for w in _rows(seen, "workers")}


def test_kill_then_removed(storm: StormScenario) -> None:
    assert [t["status"] for t in _rows(agree(storm, "killing"), "topologies")] == ["KILLED"]
    seen = agree(storm, "removed")
    assert _rows(seen, "topologies") == [] and seen.storm["cluster"].get("topologies", []) == []


def test_storms_own_pages_part_by_under_a_millisecond_per_executor(storm: StormScenario) -> None:
    """Where Nimbus's topology page and component page give a bolt different latencies from the same
    heartbeats (``storm_compare.latency_pages``: the topology page adds whole milliseconds per executor),
    zkstorm's ``components`` equals the topology page and ``--streams`` the component page (both held in
    every moment above); the two pages then differ by less than a millisecond per executor in the total."""
    storm.reach("removed")
    for seen in storm.seen.values():
        for tid, one in seen.storm["topologies"].items():
            for window, page in one.get("pages", {}).items():
                label = next(k for k, v in storm_compare.WINDOWS.items() if v == window)
                for name, stats in page.get("id_to_bolt_agg_stats", {}).items():
                    whole = storm_compare._component_window(seen.storm, tid, name, label)
                    executed = stats["specific_stats"]["bolt"].get("executed", 0)
                    executors = stats["common_stats"]["num_executors"]
                    for f in ("execute_latency_ms", "process_latency_ms"):
                        topo = stats["specific_stats"]["bolt"].get(f, 0.0)
                        comp = whole.get("specific_stats", {}).get("bolt", {}).get(f, 0.0)
                        assert 0 <= (comp - topo) * executed < executors + 1e-6, (tid, name, window, f, topo, comp)


def _files(storm: StormScenario, zxid: int | None = None) -> list[str]:
    """``--from-files`` over the test ZooKeeper's own data directory, read under the Storm root only (the
    same server holds the other tests' roots and the Kafka clusters' chroots)."""
    at = ["--at-zxid", hex(zxid)] if zxid is not None else []
    return ["--from-files", str(storm.zk.base / "data"), *at, "--storm-root", storm.cluster.root]


# a heartbeat's age is against the reader's clock: the live view's is the wall clock when it read, the files'
# the time of the txn at --at-zxid (the newest the state holds), which the live read follows within the
# moment: at most this many seconds on a loaded machine (a moment retried when a beat lands in it)
AGE_LAG_SECS = 10


def _ageless(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "age_secs"} for row in rows]


def _ages(moment: str, live: list[dict[str, Any]], files: list[dict[str, Any]]) -> list[str]:
    """Each worker's age from the files at most ``AGE_LAG_SECS`` under the live one, never over it."""
    return [
        f"{moment}: worker {a['node']}:{a['port']} {a['age_secs']} s old live, {b['age_secs']} s from the files"
        for a, b in zip(live, files, strict=False)
        if not 0 <= a["age_secs"] - b["age_secs"] <= AGE_LAG_SECS
    ]


def test_from_files_gives_the_same_views_as_live(storm: StormScenario) -> None:
    """ZooKeeper's own data directory, read after the scenarios, gives every Storm view of every moment
    as the live ensemble gave it then (``--at-zxid``: the server's zxid between the moment's two equal
    dumps), the per-topology views included, and agrees with Nimbus as much."""
    storm.reach("removed")
    problems = []
    for name, seen in storm.seen.items():
        offline = storm_views.read_views(_files(storm, seen.moment.zxid), storm_views.live_ids(seen.storm))
        problems += _ages(name, seen.views["workers"].rows, offline["workers"].rows)
        live = {view: _ageless(shown.rows) for view, shown in seen.views.items()}
        offline = {view: views.Shown(_ageless(shown.rows), shown.stderr) for view, shown in offline.items()}
        if {view: shown.rows for view, shown in offline.items()} != live:
            for view in [v for v in live if offline[v].rows != live[v]]:
                rows = [(a, b) for a, b in zip(live[view], offline[view].rows, strict=False) if a != b]
                problems.append(
                    f"{name} at {seen.moment.zxid:#x}, {view}: live {rows[:1] or live[view][:1]}, files "
                    f"{offline[view].rows[:1]} ({len(live[view])} and {len(offline[view].rows)} rows)"
                )
        found = storm_views.facts(offline, seen.storm)
        count(storm.profile + " files", found)
        problems += [f"{name}: {f}" for f in found if not f.equal]
    assert not problems, "\n".join(problems)


def _matches(change: dict[str, Any], event: dict[str, Any]) -> bool:
    """The change names the event's subject (and, for a status change, the status it went to)."""
    if event["kind"] == "storm_supervisor_left":
        return bool(change.get("supervisor_id") == event["supervisor_id"])
    if change.get("topology_id") != event["topology_id"]:
        return False
    if event["kind"] == "storm_topology_status_changed":
        return bool(change["status"] == event["status"])
    if event["kind"] == "storm_assignment_changed":
        return bool(change["executors_moved"] or change["slots_added"] or change["slots_freed"])
    return True


def test_changes_name_the_events_when_they_happened(storm: StormScenario) -> None:
    """``zkstorm changes`` over the data directory names each event the scenario caused (the rebalance, the
    deactivation and activation, the supervisor stopped and the assignment moved off it, the kill and the
    removal) at a time between when the harness asked Storm and when Storm showed the result."""
    storm.reach("removed")
    since = ["--since", hex(storm.started_zxid), "--path", storm.cluster.root]
    result = views.run(*_files(storm), "changes", *since, "-f", "json")
    assert result.exit_code == 0, result.stderr
    changes = json.loads(result.stdout)
    assert {e["kind"] for e in storm.events} == {
        "storm_topology_status_changed",
        "storm_assignment_changed",
        "storm_supervisor_left",
        "storm_topology_removed",
    }
    problems = []
    for event in storm.events:
        found = [c for c in changes if c["kind"] == event["kind"] and _matches(c, event)]
        if not any(event["from_ms"] <= c["time_ms"] <= event["to_ms"] for c in found):
            subject = {k: v for k, v in event.items() if k not in ("kind", "from_ms", "to_ms")}
            problems.append(
                f"{event['kind']} {subject} between {event['from_ms']} and {event['to_ms']}: "
                f"zkstorm has {[c['time_ms'] for c in found]}"
            )
    assert not problems, "\n".join(problems)


def _taken(storm: StormScenario, step: str) -> datetime:
    """When the snapshot after ``step`` was taken (its manifest's ``snapshot_time``)."""
    assert storm.snapshots is not None
    manifest = storm.snapshots / "_manifests" / f"{storm.snapshot_ids[step]}.json"
    return datetime.fromisoformat(json.loads(manifest.read_text())["snapshot_time"])


@pytest.mark.spark
def test_history_names_the_supervisor_gone_and_the_topology_killed(storm: StormScenario, spark: Any) -> None:
    """``zkstorm history`` over the snapshots taken running, after the supervisor stop, at the kill and after
    the removal (``storm_scenario.SNAPSHOT_AFTER``): the stopped supervisor's host missing from the second
    on (it never comes back), the other host never; the topology gone at the fourth, last seen KILLED."""
    running = storm.reach("activated")
    hosts = {s["supervisor_id"]: s["host"] for s in running.storm["cluster"]["supervisors"]}
    assert sorted(hosts.values()) == sorted(SUPERVISOR_HOSTS)  # one host each, as in production
    storm.reach("removed")
    assert storm.stopped_supervisor is not None and storm.snapshots is not None
    outcome = run_history(spark, str(storm.snapshots))
    assert outcome.snapshots == len(SNAPSHOT_AFTER)
    found = [(i.kind, i.subjects) for i in outcome.incidents]
    by_kind = {
        kind: [i for i in outcome.incidents if i.kind == kind] for kind in ("supervisor_missing", "topology_gone")
    }
    assert [len(v) for v in by_kind.values()] == [1, 1], found
    (missing,), (gone,) = by_kind.values()
    down = _taken(storm, "supervisor_down")
    assert (missing.subjects, missing.started, missing.ended, missing.ongoing) == (
        [hosts[storm.stopped_supervisor]],
        down,
        None,
        True,
    ), missing
    removed, tid = _taken(storm, "removed"), _tid(running)
    assert (gone.subjects, gone.started, gone.ended) == ([tid], removed, removed), gone
    assert gone.summary == f"topology {TOPOLOGY} ({tid}) gone since the previous snapshot; last seen KILLED"
