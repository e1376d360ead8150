"""`zkstorm storm components`: Storm UI's topology page from ZooKeeper alone, checked against figures
computed by hand here from counters written into real heartbeats (several executors per component,
several windows, one stale worker), in the table, the JSON and the snapshot's Parquet."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot
from tests.test_cli import run
from tests.test_snapshot import read, snapshot
from zkstorm.sandbox.encode import storm_gzip

TOPOLOGY = "wordcount-7-1790000000"
# sorted component ids get task ids 1.. in order, cut into executors larger first (docs/storm-layout.md §5):
# __acker [1,1]; count [2,2]; sentences [3,3] [4,4]; split [5,6] [7,7] [8,8]
EXECUTORS = {"1-1": "a", "2-2": "a", "3-3": "a", "5-6": "a", "4-4": "b", "7-7": "b", "8-8": "b"}
SLOTS = {"a": ("sup-a", 6700, "wkr-a.example.org"), "b": ("sup-b", 6701, "wkr-b.example.org")}
UPTIME = {"a": 300, "b": 4000}  # a's executors started 5 minutes ago: capacity divides by 300 s, not 600


def spout(windows: dict[str, tuple[int, int, int, int, float]]) -> dict[str, Any]:
    """window → (emitted on default, emitted on __ack_init, acked, failed, complete latency ms)."""
    return {
        "emitted": {w: {"default": e, "__ack_init": sys} for w, (e, sys, _, _, _) in windows.items()},
        "transferred": {w: {"default": e, "__ack_init": sys} for w, (e, sys, _, _, _) in windows.items()},
        "rate": 20.0,
        "specific": {
            "spout": {
                "acked": {w: {"default": a} for w, (_, _, a, _, _) in windows.items()},
                "failed": {w: {"default": f} for w, (_, _, _, f, _) in windows.items()},
                "complete_ms_avg": {w: {"default": lat} for w, (*_, lat) in windows.items()},
            }
        },
    }


def bolt(emitted: int, inputs: dict[str, tuple[int, int, int, float, float]]) -> dict[str, Any]:
    """Window 600 only: emitted on default (and 5 on __metrics); input stream → (executed, acked,
    failed, execute latency ms, process latency ms)."""
    return {
        "emitted": {"600": {"default": emitted, "__metrics": 5}},
        "transferred": {"600": {"default": emitted}},
        "rate": 20.0,
        "specific": {
            "bolt": {
                "executed": {"600": {k: v[0] for k, v in inputs.items()}},
                "acked": {"600": {k: v[1] for k, v in inputs.items()}},
                "failed": {"600": {k: v[2] for k, v in inputs.items()}},
                "execute_ms_avg": {"600": {k: v[3] for k, v in inputs.items()}},
                "process_ms_avg": {"600": {k: v[4] for k, v in inputs.items()}},
            }
        },
    }


STATS = {
    "1-1": bolt(0, {"sentences:__ack_ack": (50, 50, 0, 0.01, 0.01)}),
    "2-2": bolt(0, {"split:default": (360000, 360000, 0, 0.1, 0.2)}),
    "3-3": spout({"600": (100, 100, 80, 2, 10.0), "10800": (1000, 1000, 900, 10, 12.0)}),
    "4-4": spout({"600": (50, 0, 20, 0, 40.0), "10800": (700, 0, 600, 5, 20.0)}),
    "5-6": bolt(120000, {"sentences:default": (60000, 60000, 0, 3.0, 0.7), "__system:__tick": (10, 0, 0, 2.0, 0.1)}),
    "7-7": bolt(180000, {"sentences:default": (90000, 89990, 10, 4.0, 5.0)}),
    "8-8": bolt(60000, {"sentences:default": (30000, 30000, 0, 1.0, 2.0)}),
}


def seed(writer: KazooClient, chroot: str, now: int) -> None:
    root = f"{chroot}/storm"
    base = {
        "name": "wordcount",
        "status": "ACTIVE",
        "num_workers": 2,
        "component_executors": {"sentences": 2, "split": 3, "count": 1, "__acker": 1, "__system": 0},
        "launch_time_secs": 1790000000,
        "owner": "ops",
    }
    writer.create(f"{root}/storms/{TOPOLOGY}", storm_gzip("StormBase", base), makepath=True)
    assignment = {
        "master_code_dir": "/data/storm",
        "node_host": {node: host for node, _, host in SLOTS.values()},
        "executor_node_port": {e: {"node": SLOTS[w][0], "port": [SLOTS[w][1]]} for e, w in EXECUTORS.items()},
        "executor_start_time_secs": {e: now - UPTIME[w] for e, w in EXECUTORS.items()},
    }
    writer.create(f"{root}/assignments/{TOPOLOGY}", storm_gzip("Assignment", assignment), makepath=True)
    for worker, (node, port, _) in SLOTS.items():
        beat = {
            "storm_id": TOPOLOGY,
            "executor_stats": {e: STATS[e] for e, w in EXECUTORS.items() if w == worker},
            "time_secs": now - (2 if worker == "a" else 900),  # worker b stopped beating 15 minutes ago
            "uptime_secs": UPTIME[worker],
        }
        writer.create(
            f"{root}/workerbeats/{TOPOLOGY}/{node}-{port}", storm_gzip("ClusterWorkerHeartbeat", beat), makepath=True
        )
    # Both workers report the same error in the same second. Storm's reportError creates the e-node,
    # then sets -last-error (StormClusterStateImpl.reportError), so the two race: b writes its e-node
    # second but a's set_data lands last. Storm's last error is a's (-last-error), not the newest e-node.
    boom = "java.lang.RuntimeException: boom\n\tat Count.execute"
    reports = [(now - 3600, "old failure", "a"), (now - 60, boom, "a"), (now - 60, boom, "b")]
    infos = [
        storm_gzip("ErrorInfo", {"error": text, "error_time_secs": when, "host": SLOTS[w][2], "port": SLOTS[w][1]})
        for when, text, w in reports
    ]
    for sequence, info in enumerate(infos):
        writer.create(f"{root}/errors/{TOPOLOGY}/count/e{sequence:010d}", info, makepath=True)
    writer.create(f"{root}/errors/{TOPOLOGY}/count-last-error", infos[1])


def expected(now: int) -> dict[tuple[str, str], dict[str, Any]]:
    """Each figure worked out by hand from STATS, as Storm's StatsUtil computes it."""
    split_execute = 3.0 * 60000 + 2.0 * 10 + 4.0 * 90000 + 1.0 * 30000  # latency × executed, every stream
    split_process = 0.7 * 60000 + 0.1 * 10 + 5.0 * 90000 + 2.0 * 30000
    capacities = [(3.0 * 60000 + 2.0 * 10) / (300 * 1000), 4.0 * 90000 / (600 * 1000), 1.0 * 30000 / (600 * 1000)]
    error = {
        "last_error_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60)),
        "last_error_host": "wkr-a.example.org",
        "last_error_port": 6700,
        "last_error": "java.lang.RuntimeException: boom",
    }
    none = {"last_error_at": None, "last_error_host": None, "last_error_port": None, "last_error": None}
    return {
        ("sentences", "600"): {
            "component_type": "spout", "executors": 2, "tasks": 2,
            "emitted": 150, "transferred": 150, "acked": 100, "failed": 2,
            "complete_latency_ms": (10.0 * 80 + 40.0 * 20) / 100,
            "executed": None, "execute_latency_ms": None, "process_latency_ms": None, "capacity": None,
            "stale_executors": 1, **none,
        },
        ("sentences", "10800"): {
            "component_type": "spout", "executors": 2, "tasks": 2,
            "emitted": 1700, "transferred": 1700, "acked": 1500, "failed": 15,
            "complete_latency_ms": (12.0 * 900 + 20.0 * 600) / 1500,
            "executed": None, "execute_latency_ms": None, "process_latency_ms": None, "capacity": None,
            "stale_executors": 1, **none,
        },
        ("split", "600"): {
            "component_type": "bolt", "executors": 3, "tasks": 4,
            "emitted": 360000, "transferred": 360000, "acked": 179990, "failed": 10,
            "complete_latency_ms": None, "executed": 180010,
            "execute_latency_ms": split_execute / 180010, "process_latency_ms": split_process / 180010,
            "capacity": max(capacities), "stale_executors": 2, **none,
        },
        ("count", "600"): {
            "component_type": "bolt", "executors": 1, "tasks": 1,
            "emitted": 0, "transferred": 0, "acked": 360000, "failed": 0,
            "complete_latency_ms": None, "executed": 360000, "execute_latency_ms": 0.1, "process_latency_ms": 0.2,
            "capacity": 0.1 * 360000 / (300 * 1000), "stale_executors": 0, **error,
        },
    }  # fmt: skip


def check(row: dict[str, Any], want: dict[str, Any]) -> None:
    for name, value in want.items():
        if isinstance(value, float):
            assert row[name] == pytest.approx(value, rel=1e-9), name
        else:
            assert row[name] == value, name


@pytest.fixture
def wordcount(writer: KazooClient, zk_root: Chroot) -> tuple[Chroot, int]:
    now = int(time.time())
    seed(writer, zk_root.path, now)
    return zk_root, now


def test_components_json_equals_figures_worked_by_hand(wordcount: tuple[Chroot, int]) -> None:
    chroot, now = wordcount
    want = expected(now)
    for window, flag in (("600", "10m"), ("10800", "3h")):
        result = run("--zk", chroot.zk, "storm", "components", "wordcount", "--window", flag, "-f", "json")
        assert result.exit_code == 0, result.output
        rows = {r["component"]: r for r in json.loads(result.stdout)}
        assert set(rows) == {"sentences", "split", "count"}  # __acker only with --system
        assert all(r["window"] == window and r["topology_id"] == TOPOLOGY for r in rows.values())
        for (component, w), figures in want.items():
            if w == window:
                check(rows[component], figures)
    system = json.loads(run("--zk", chroot.zk, "storm", "components", TOPOLOGY, "--system", "-f", "json").stdout)
    by_name = {r["component"]: r for r in system}
    assert by_name["__acker"]["executed"] == 50 and by_name["__acker"]["stale_executors"] == 0
    assert by_name["split"]["emitted"] == 360000 + 3 * 5  # each executor's __metrics counts too with --system
    assert by_name["sentences"]["emitted"] == 250


def test_last_error_is_the_one_storm_kept_when_two_workers_raced(wordcount: tuple[Chroot, int]) -> None:
    chroot, _ = wordcount
    result = run("--zk", chroot.zk, "errors", "wordcount", "-c", "count", "-f", "json")
    errors = json.loads(result.stdout)
    assert [e["sequence"] for e in errors] == [2, 1, 0]  # every report once; the copy folded into its twin
    assert [(e["sequence"], e["port"]) for e in errors if e["last_error"]] == [(1, 6700)]


def test_components_table_shows_the_figures(wordcount: tuple[Chroot, int]) -> None:
    chroot, _ = wordcount
    result = run("--zk", chroot.zk, "storm", "components", "wordcount", env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    cells = {
        row[0]: row[1:]
        for row in ([c.strip() for c in line.split("│")[1:-1]] for line in result.stdout.splitlines())
        if row and row[0]
    }
    # a table for spouts and one for bolts, each in the order Storm UI's topology page leads with
    # (StormComponentStats.TABLE_GROUPS): bolts capacity and latencies first, spouts complete latency
    assert cells["split"][:8] == ["3", "0.6", "3.167", "3.067", "180010", "360000", "179990", "10"]
    assert cells["sentences"][:6] == ["2", "16", "150", "150", "100", "2"]
    assert cells["count"][-1] == "java.lang.RuntimeException: boom"  # the last error: free text, last
    assert "Spouts (1)" in result.stdout and "Bolts (" in result.stdout


def test_components_streams(wordcount: tuple[Chroot, int]) -> None:
    chroot, _ = wordcount
    rows = json.loads(run("--zk", chroot.zk, "storm", "components", "wordcount", "--streams", "-f", "json").stdout)
    split_in = next(
        r for r in rows if r["component"] == "split" and r["direction"] == "input" and r["stream"] == "default"
    )
    assert split_in["source_component"] == "sentences" and split_in["executed"] == 180000
    assert split_in["execute_latency_ms"] == pytest.approx((3.0 * 60000 + 4.0 * 90000 + 1.0 * 30000) / 180000)
    spout_out = next(r for r in rows if r["component"] == "sentences" and r["direction"] == "output")
    assert (spout_out["emitted"], spout_out["acked"], spout_out["failed"]) == (150, 100, 2)
    assert not any(r["stream"].startswith("__") for r in rows)  # system streams only with --system


def test_snapshot_stores_the_component_rows_the_view_shows(wordcount: tuple[Chroot, int], tmp_path: Path) -> None:
    chroot, now = wordcount
    out = tmp_path / "out"
    snapshot(chroot.zk, out)
    stored = {(r["component"], r["window"]): r for r in read(out, "storm_component_stats")}
    assert {c for c, _ in stored} == {"sentences", "split", "count"}
    assert {w for _, w in stored} == {"600", "10800", "86400", ":all-time"}
    for key, figures in expected(now).items():
        check({**stored[key], "last_error_at": _iso(stored[key]["last_error_at"])}, figures)
    view = json.loads(run("--zk", chroot.zk, "storm", "components", "wordcount", "-f", "json").stdout)
    for row in view:
        parquet = stored[(row["component"], "600")]
        assert {k: (_iso(v) if k == "last_error_at" else v) for k, v in parquet.items() if k in row} == {
            k: v for k, v in row.items() if k != "kind"
        }


def _iso(value: Any) -> Any:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


@pytest.mark.parametrize(("name", "root"), [("storm2", "/storm"), ("storm1", "/storm1"), ("legacy09", "/legacy-storm")])
def test_components_on_every_storm_version(writer: KazooClient, zk_root: Chroot, name: str, root: str) -> None:
    """2.x gzip Thrift, 1.x raw Thrift and 0.9 Java-serialized heartbeats all give the table; every
    component the StormBase names is a row, with the counters its heartbeats carry."""
    from tests.conftest import load_cluster

    load_cluster(writer, zk_root.path, "storm", name)
    zk = ["--zk", zk_root.zk, "--storm-root", root]
    topologies = json.loads(run(*zk, "storm", "topologies", "-f", "json").stdout)
    assert topologies
    counted = 0
    for topology in topologies:
        result = run(*zk, "storm", "components", topology["topology_id"], "--window", "all", "-f", "json")
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        assert rows and not any(r["component"].startswith("__") for r in rows)
        counted += sum(r["emitted"] + r["acked"] for r in rows)
        for row in rows:
            assert row["component_type"] in ("spout", "bolt", None)
    if name == "legacy09":  # its topology has an assignment but no heartbeat: every executor is stale
        (row_names,) = [{r["component"]: r["stale_executors"] for r in rows}]
        assert row_names == {"parse": 3, "ship→es": 2, "tail-spout": 2}
    else:
        assert counted > 0


def test_components_as_prometheus_series(wordcount: tuple[Chroot, int]) -> None:
    """The same hand-worked figures, through prometheus_client's own parser; latencies in seconds."""
    from tests.test_prometheus import one, scrape

    chroot, now = wordcount
    m = scrape("--zk", chroot.zk, "storm", "components", "wordcount")
    for (component, window), figures in expected(now).items():
        if window != "600":
            continue
        labels = {"root": "/storm", "topology": "wordcount", "component": component, "window": "600"}
        for name in ("emitted", "transferred", "acked", "failed", "executors", "stale_executors"):
            assert one(m, f"zkstorm_storm_component_{name}", **labels) == figures[name], name
        for name in ("complete_latency", "execute_latency", "process_latency"):
            ms = figures[f"{name}_ms"]
            if ms is None:
                assert tuple(sorted(labels.items())) not in m.get(f"zkstorm_storm_component_{name}_seconds", {})
            else:
                assert one(m, f"zkstorm_storm_component_{name}_seconds", **labels) == pytest.approx(ms / 1000)
        if figures["capacity"] is not None:
            assert one(m, "zkstorm_storm_component_capacity", **labels) == pytest.approx(figures["capacity"])
    streams = run("--zk", chroot.zk, "storm", "components", "wordcount", "--streams", "-f", "prometheus")
    assert streams.exit_code == 2 and "--streams has no Prometheus form" in streams.stderr


def test_executor_figures_pack_every_window_exactly() -> None:
    """A snapshot holds each executor's figures packed until its walk ends: unpacked, they are the sums as
    computed, to the last bit of a float and past 64 bits of an int (a counter Storm would wrap, read as
    the heartbeat wrote it)."""
    from zkstorm.model.storm_stats import ALL_WINDOWS, ExecutorFigures, Figures, pack_windows

    windows = {
        window: Figures(
            emitted=2**70 + i,
            transferred=i,
            emitted_sys=3,
            transferred_sys=4,
            acked=5 + i,
            failed=6,
            executed=7,
            execute_total=0.1 + 0.2 * i,
            process_total=1e308,
            complete_total=-0.0,
        )
        for i, window in enumerate(ALL_WINDOWS)
    }
    figures = ExecutorFigures("t-1-1", "sup", 6700, (1, 2), "bolt", pack_windows(windows))
    assert figures.windows() == windows
    assert [str(f.complete_total) for f in figures.windows().values()] == ["-0.0"] * len(ALL_WINDOWS)
    assert figures.capacity(300) == windows["600"].execute_total / 300_000
    assert ExecutorFigures("t-1-1", "sup", 6700, (1, 2), None).windows() == {}
