"""zkstorm's Storm views of one moment, as its CLI prints them (click's runner, in this process), and every
fact of that moment against Nimbus's answer (``storm_compare``).

``read_views(where)`` reads the cluster-wide views and, for each topology Storm lists, its assignment,
workers, errors and its components and streams in each of Storm UI's windows."""

from __future__ import annotations

import json
from typing import Any

from . import storm_compare as compare
from .compare import Fact
from .views import Shown, run

CLUSTER_VIEWS: dict[str, tuple[str, ...]] = {
    "topologies": ("storm", "topologies"),
    "supervisors": ("storm", "supervisors"),
    "workers": ("storm", "workers"),
    "nimbus": ("storm", "nimbus"),
}


def _json(where: list[str], *args: str) -> Shown:
    result = run(*where, *args, "-f", "json")
    if result.exit_code != 0:
        raise AssertionError(f"zkstorm {' '.join(args)} exited {result.exit_code}: {result.stderr}")
    rows = json.loads(result.stdout) if result.stdout.strip() else []
    return Shown(rows if isinstance(rows, list) else [rows], result.stderr)


def read_views(where: list[str], topology_ids: list[str]) -> dict[str, Shown]:
    """Every Storm view as JSON (``where``: ``--zk host:port --storm-root ROOT``, or a captured moment's
    ``--zk``), the per-topology ones for each of ``topology_ids``."""
    shown = {name: _json(where, *args) for name, args in CLUSTER_VIEWS.items()}
    for tid in topology_ids:
        shown[f"assignment {tid}"] = _json(where, "storm", "assignment", tid)
        shown[f"errors {tid}"] = _json(where, "errors", tid)
        for window in compare.WINDOWS:
            shown[f"components {tid} {window}"] = _json(where, "storm", "components", tid, "--window", window)
            shown[f"streams {tid} {window}"] = _json(where, "storm", "components", tid, "--streams", "--window", window)
    return shown


def live_ids(truth: dict[str, Any]) -> list[str]:
    """The topologies Nimbus answered about in full (a killed one's pages are gone at once)."""
    return sorted(tid for tid, one in truth["topologies"].items() if "info" in one)


def facts(views: dict[str, Shown], truth: dict[str, Any]) -> list[Fact]:
    out: list[Fact] = []
    out += compare.topologies(views["topologies"].rows, truth)
    out += compare.supervisors(views["supervisors"].rows, truth)
    out += compare.nimbuses(views["nimbus"].rows, truth)
    for tid in live_ids(truth):
        out += compare.assignment(tid, views[f"assignment {tid}"].rows, truth)
        out += compare.workers(tid, views["workers"].rows, truth)
        out += compare.errors(tid, views[f"errors {tid}"].rows, truth)
        for window in compare.WINDOWS:
            out += compare.components(tid, window, views[f"components {tid} {window}"].rows, truth)
            out += compare.streams(tid, window, views[f"streams {tid} {window}"].rows, truth)
    # Storm 2.x: the workers view says what its beats are (``StormCluster.workerbeats_note``) when there is
    # a cluster to say it of
    workers = views["workers"]
    said = "executor.metrics.frequency.secs" in workers.stderr
    out.append(
        compare.StormFact(
            "storm workers", "note", "2.x beats explained", said, bool(truth["cluster"].get("supervisors"))
        )
    )
    rest = {
        **views,
        "workers": Shown(
            workers.rows,
            "\n".join(line for line in workers.stderr.splitlines() if "note: Storm 2.x workers" not in line),
        ),
    }
    for name, shown in rest.items():
        out += compare.notes(name, shown.stderr)
    return out
