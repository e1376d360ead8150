"""zkstorm's Storm views held against Nimbus's own Thrift API about the same moment, fact by fact.

Each function takes what a view printed (``-f json``, parsed) and what Storm said (``StormTruth``'s
``truth``: getClusterInfo, getLeader, and per topology getTopologyInfo, getTopologyPageInfo and
getComponentPageInfo in each of Storm UI's windows) and returns ``Fact``s, as ``compare.py`` does for
Kafka:

- ``storm topologies``: getClusterInfo's topology summaries (name, status, workers, executors, owner,
  launch time).
- ``storm supervisors``: getClusterInfo's supervisor summaries (host, slots, slots used, version,
  memory and CPU capacity).
- ``storm assignment``: getTopologyInfo's executors (task range → host and port) and
  getTopologyPageInfo's workers (the supervisor id of each slot).
- ``storm workers``: getTopologyPageInfo's workers (slots with a heartbeat, uptime, executors).
- ``storm components`` (each window): getTopologyPageInfo's spout and bolt aggregates (executors, tasks,
  emitted, transferred, acked, failed, complete/execute/process latency, executed, capacity, last
  error).
- ``storm components --streams`` (each window): getComponentPageInfo's output streams and input streams.
- ``errors``: getTopologyInfo's errors, and each component's last error that they lack (``errors``).
- ``storm nimbus``: getClusterInfo's nimbus summaries and getLeader.

**Why the figures must be equal, not near.** Nimbus computes Storm UI's figures from the executor
heartbeats it reads from ZooKeeper each time it is asked (``Nimbus.getCommonTopoInfo``: "get it from
cluster state/zookeeper every time to collect the UI stats"), the same ``workerbeats`` znodes zkstorm
reads. The scenario takes a moment only when no znode under the root that these views read changed
between a dump before Storm was asked and a dump after zkstorm was (``storm_scenario.consistent``), so
both sides computed from the same bytes: counts are held equal exactly, and latencies and capacity to
``REL_TOL`` (1e-9: the two may sum the same doubles in a different order, Java's HashMap order against
ours). The only tolerance is on clock readings: Nimbus gives an uptime (``now - launch``, whole seconds,
read at ``time_ms``) where ZooKeeper holds the launch time, so the launch and start times are held to one
second.

What is not compared, and why: a supervisor's uptime (Nimbus's clock against its last heartbeat's);
acked and failed on a bolt's output streams (Nimbus fills 0, zkstorm leaves them empty; Storm UI shows
neither); Storm's topology page against its own component page, which differ by design
(``latency_pages``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .compare import Fact

REL_TOL = 1e-9
WINDOWS = {"10m": "600", "3h": "10800", "1d": "86400", "all": ":all-time"}
_MISSING = "(absent)"


@dataclass(frozen=True)
class StormFact(Fact):
    """A fact whose Storm side is ``kafka`` (the field ``Fact`` and the fact counts share)."""

    close: bool = False  # compare floats to REL_TOL
    within: float | None = None  # compare numbers to an absolute bound (a clock reading)

    @property
    def equal(self) -> bool:
        a, b = self.zkstorm, self.kafka
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
            if self.within is not None:
                return abs(a - b) <= self.within
            if self.close:
                return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
        return bool(a == b)

    def __str__(self) -> str:
        mark = "==" if self.equal else "!="
        return f"{self.view}: {self.subject} {self.field}: zkstorm {self.zkstorm!r} {mark} Storm {self.kafka!r}"


def _fact(view: str, subject: str, field: str, ours: Any, theirs: Any, **how: Any) -> StormFact:
    return StormFact(view, subject, field, ours, theirs, **how)


def _keys(view: str, what: str, ours: Iterable[Any], theirs: Iterable[Any]) -> list[StormFact]:
    return [_fact(view, what, "set", sorted(map(str, ours)), sorted(map(str, theirs)))]


def _now_secs(truth: dict[str, Any]) -> int:
    return int(truth["time_ms"] // 1000)


# --- the views ---------------------------------------------------------------------------------------------


def topologies(rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    view = "storm topologies"
    theirs = {t["id"]: t for t in truth["cluster"].get("topologies", [])}
    ours = {r["topology_id"]: r for r in rows}
    out = _keys(view, "topologies", ours, theirs)
    for tid in sorted(set(ours) & set(theirs)):
        r, t = ours[tid], theirs[tid]
        for field, storm in (
            ("name", "name"),
            ("status", "status"),
            ("num_workers", "num_workers"),
            ("num_executors", "num_executors"),
            ("owner", "owner"),
        ):
            out.append(_fact(view, tid, field, r[field], t[storm]))
        launched = _now_secs(truth) - t["uptime_secs"]
        out.append(_fact(view, tid, "launch_time_secs", r["launch_time_secs"], launched, within=1))
    return out


def supervisors(rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    view = "storm supervisors"
    theirs = {s["supervisor_id"]: s for s in truth["cluster"].get("supervisors", [])}
    ours = {r["supervisor_id"]: r for r in rows}
    out = _keys(view, "supervisors", ours, theirs)
    for sid in sorted(set(ours) & set(theirs)):
        r, s = ours[sid], theirs[sid]
        resources = s.get("total_resources", {})
        out += [
            _fact(view, sid, "hostname", r["hostname"], s["host"]),
            _fact(view, sid, "slots", len(r["ports"]), s["num_workers"]),
            _fact(view, sid, "slots used", len(r["used_ports"]), s["num_used_workers"]),
            _fact(view, sid, "version", r["version"], s["version"]),
            _fact(view, sid, "memory_capacity_mb", r["memory_capacity_mb"], resources.get("memory.mb"), close=True),
            _fact(view, sid, "cpu_capacity_pct", r["cpu_capacity_pct"], resources.get("cpu.pcore.percent"), close=True),
        ]
    return out


def _workers_of(truth: dict[str, Any], tid: str) -> list[dict[str, Any]]:
    pages = truth["topologies"].get(tid, {}).get("pages", {})
    return list(pages.get("600", {}).get("workers", []))


def assignment(tid: str, rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    view = "storm assignment"
    info = truth["topologies"][tid]["info"]
    theirs = {(e["executor_info"]["task_start"], e["executor_info"]["task_end"]): e for e in info["executors"]}
    ours = {(r["start_task"], r["end_task"]): r for r in rows}
    node_of = {(w["host"], w["port"]): w["supervisor_id"] for w in _workers_of(truth, tid)}
    out = _keys(view, f"{tid} executors", ours, theirs)
    for key in sorted(set(ours) & set(theirs)):
        r, e = ours[key], theirs[key]
        subject = f"{tid} [{key[0]} {key[1]}]"
        out += [
            _fact(view, subject, "host", r["host"], e["host"]),
            _fact(view, subject, "port", r["port"], e["port"]),
            _fact(view, subject, "node", r["node"], node_of.get((e["host"], e["port"]), _MISSING)),
        ]
    return out


def workers(tid: str, rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    """Each worker with a heartbeat against getTopologyPageInfo's workers. A worker's ZooKeeper beat
    carries its system executor ([-1 -1], the ``__system`` component) beside its assigned ones; Nimbus
    counts the assigned ones (``StatsUtil.aggWorkerStats``), so the beat holds one more."""
    view = "storm workers"
    theirs = {(w["supervisor_id"], w["port"]): w for w in _workers_of(truth, tid)}
    ours = {(r["node"], r["port"]): r for r in rows if r["topology_id"] == tid}
    out = _keys(view, f"{tid} slots", ours, theirs)
    for key in sorted(set(ours) & set(theirs)):
        r, w = ours[key], theirs[key]
        subject = f"{tid} {key[0]}:{key[1]}"
        out += [
            _fact(view, subject, "host", r["host"], w["host"]),
            _fact(view, subject, "uptime_secs", r["uptime_secs"], w["uptime_secs"]),
            _fact(view, subject, "executors (less __system)", r["num_executor_stats"] - 1, w["num_executors"]),
        ]
    return out


_COMMON = ("emitted", "transferred", "acked", "failed")
_BOLT = ("executed", "execute_latency_ms", "process_latency_ms", "capacity")
_FLOATS = {"complete_latency_ms", "execute_latency_ms", "process_latency_ms", "capacity"}


def components(tid: str, window: str, rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    view = f"storm components --window {window}"
    page = truth["topologies"][tid]["pages"][WINDOWS[window]]
    theirs = {**page.get("id_to_spout_agg_stats", {}), **page.get("id_to_bolt_agg_stats", {})}
    ours = {r["component"]: r for r in rows}
    out = _keys(view, f"{tid} components", ours, theirs)
    for name in sorted(set(ours) & set(theirs)):
        r, s = ours[name], theirs[name]
        common, specific = s["common_stats"], s.get("specific_stats", {})
        subject = f"{tid} {name}"
        out += [
            _fact(view, subject, "component_type", r["component_type"], s["type"].lower()),
            _fact(view, subject, "executors", r["executors"], common["num_executors"]),
            _fact(view, subject, "tasks", r["tasks"], common["num_tasks"]),
        ]
        out += [_fact(view, subject, f, r[f], common.get(f, 0)) for f in _COMMON]
        if "spout" in specific:
            latency = specific["spout"].get("complete_latency_ms", 0.0)
            out.append(_fact(view, subject, "complete_latency_ms", r["complete_latency_ms"], latency, close=True))
        if "bolt" in specific:
            bolt = specific["bolt"]
            out += [_fact(view, subject, f, r[f], bolt.get(f, 0), close=f in _FLOATS) for f in _BOLT]
        # the last error's first line (the record's ``last_error``; ``errors`` holds each error whole)
        error = s.get("last_error") or {}
        out += [
            _fact(view, subject, "last_error", r["last_error"], error["error"].splitlines()[0] if error else None),
            _fact(view, subject, "last_error_at", _secs(r["last_error_at"]), error.get("error_time_secs")),
            _fact(view, subject, "last_error_host", r["last_error_host"], error.get("host")),
            _fact(view, subject, "last_error_port", r["last_error_port"], error.get("port")),
        ]
    return out


def _component_window(truth: dict[str, Any], tid: str, component: str, window: str) -> dict[str, Any]:
    """getComponentPageInfo's whole-component figures (``window_to_stats``) of one window."""
    page = truth["topologies"][tid].get("components", {}).get(component, {}).get(WINDOWS[window], {})
    return dict(page.get("window_to_stats", {}).get(WINDOWS[window], {}))


def latency_pages(truth: dict[str, Any]) -> list[str]:
    """Where Storm's two pages give one bolt different latencies from the same heartbeats: the topology
    page (getTopologyPageInfo, which ``storm components`` is held to) adds each executor's latency total
    cut to whole milliseconds (``StatsUtil.sumOr0``'s long addition), the component page
    (getComponentPageInfo's ``window_to_stats``; ``--streams`` is held to it per stream) adds them as
    doubles. Listed for the README, not compared."""
    found = []
    for tid, one in truth["topologies"].items():
        for window, page in one.get("pages", {}).items():
            label = next(k for k, v in WINDOWS.items() if v == window)
            for name, stats in page.get("id_to_bolt_agg_stats", {}).items():
                whole = _component_window(truth, tid, name, label).get("specific_stats", {}).get("bolt", {})
                topo = stats.get("specific_stats", {}).get("bolt", {})
                for f in ("execute_latency_ms", "process_latency_ms"):
                    if whole and not math.isclose(topo.get(f, 0.0), whole.get(f, 0.0), rel_tol=REL_TOL):
                        found.append(
                            f"{tid} {name} {window} {f}: topology page {topo.get(f)}, component page {whole.get(f)}"
                        )
    return found


def _secs(text: str | None) -> int | None:
    if text is None:
        return None
    from datetime import datetime

    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def streams(tid: str, window: str, rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    """``--streams`` against getComponentPageInfo: a component's output streams (``sid_to_output_stats``)
    and a bolt's input streams by source (``gsid_to_input_stats``, keyed ``component:stream``)."""
    view = f"storm components --streams --window {window}"
    pages = truth["topologies"][tid]["components"]
    theirs: dict[tuple[str, str, str], dict[str, Any]] = {}
    for component, by_window in pages.items():
        page = by_window.get(WINDOWS[window], {})
        for stream, stats in page.get("sid_to_output_stats", {}).items():
            theirs[(component, "output", stream)] = stats
        for key, stats in page.get("gsid_to_input_stats", {}).items():
            source, _, stream = key.partition(":")
            theirs[(component, "input", f"{source}:{stream}")] = stats
    ours: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        stream = r["stream"] if r["direction"] == "output" else f"{r['source_component']}:{r['stream']}"
        ours[(r["component"], r["direction"], stream)] = r
    out = _keys(view, f"{tid} streams", ours, theirs)
    for key in sorted(set(ours) & set(theirs)):
        r, s = ours[key], theirs[key]
        common, specific = s["common_stats"], s.get("specific_stats", {})
        subject = f"{tid} {' '.join(key)}"
        if key[1] == "output":
            # a bolt's output streams carry emitted and transferred only (what Storm UI's component page
            # shows for them); Nimbus fills acked and failed with 0, zkstorm leaves them empty: a bolt acks
            # its input, which the input rows hold
            shown = _COMMON if "spout" in specific else ("emitted", "transferred")
            out += [_fact(view, subject, f, r[f], common.get(f, 0)) for f in shown]
            if "spout" in specific:
                latency = specific["spout"].get("complete_latency_ms", 0.0)
                out.append(_fact(view, subject, "complete_latency_ms", r["complete_latency_ms"], latency, close=True))
        else:
            bolt = specific.get("bolt", {})
            out += [
                _fact(view, subject, "acked", r["acked"], common.get("acked", 0)),
                _fact(view, subject, "failed", r["failed"] or 0, common.get("failed", 0)),
            ]
            out += [
                _fact(view, subject, f, r[f], bolt.get(f, 0), close=f in _FLOATS)
                for f in ("executed", "execute_latency_ms", "process_latency_ms")
            ]
    return out


def errors(tid: str, rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    """Storm keeps each error twice: an e-node, which getTopologyInfo lists (ephemeral in 2.x: it goes with
    the worker that reported it, as a stopped supervisor's workers go), and the component's ``-last-error``,
    the topology page's ``last_error`` (``StormClusterStateImpl.errors`` and ``lastError``). zkstorm lists
    each error once, the ``-last-error`` alone when its e-node is gone (``model.storm.merge_last_errors``),
    so Storm's errors are its list and each component's last error that the list lacks."""
    view = "errors"
    topology = truth["topologies"][tid]
    theirs = Counter(
        (component, e["error_time_secs"], e.get("host"), e.get("port"), e["error"])
        for component, found in topology["info"].get("errors", {}).items()
        for e in found
    )
    page = next(iter(topology.get("pages", {}).values()), {})  # every window's page has the same last errors
    for component, stats in {**page.get("id_to_spout_agg_stats", {}), **page.get("id_to_bolt_agg_stats", {})}.items():
        last = stats.get("last_error")
        key = last and (component, last["error_time_secs"], last.get("host"), last.get("port"), last["error"])
        if key and key not in theirs:
            theirs[key] = 1
    ours = Counter((r["component"], r["time_secs"], r["host"], r["port"], r["error"]) for r in rows)
    out = [_fact(view, tid, "count", sum(ours.values()), sum(theirs.values()))]
    for key in sorted(set(ours) | set(theirs), key=str):
        subject = f"{tid} {key[0]} at {key[1]} on {key[2]}:{key[3]}"
        out.append(_fact(view, subject, f"stored ({key[4].splitlines()[0][:60]})", ours[key], theirs[key]))
    return out


def nimbuses(rows: list[dict[str, Any]], truth: dict[str, Any]) -> list[StormFact]:
    view = "storm nimbus"
    theirs = {(n["host"], n["port"]): n for n in truth["cluster"].get("nimbuses", [])}
    ours = {(r["host"], r["port"]): r for r in rows}
    out = _keys(view, "nimbuses", ours, theirs)
    leader = truth.get("leader") or {}
    out.append(
        _fact(
            view,
            "leader",
            "host:port",
            next((f"{r['host']}:{r['port']}" for r in rows if r["is_leader"]), None),
            f"{leader.get('host')}:{leader.get('port')}" if leader else None,
        )
    )
    for key in sorted(set(ours) & set(theirs)):
        r, n = ours[key], theirs[key]
        subject = f"{key[0]}:{key[1]}"
        out += [
            _fact(view, subject, "is_leader", r["is_leader"], n["isLeader"]),
            _fact(view, subject, "version", r["version"], n["version"]),
            _fact(view, subject, "tls_port", r["tls_port"], n.get("tlsPort")),
            _fact(view, subject, "started_secs", r["started_secs"], _now_secs(truth) - n["uptime_secs"], within=1),
        ]
    return out


def notes(view: str, stderr: str) -> list[StormFact]:
    """A decode warning on stderr is a disagreement: Storm reads every znode it wrote."""
    return [_fact(view, "stderr", "decode notes", stderr.strip() or None, None)]
