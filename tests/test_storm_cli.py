"""Storm commands against every Storm fixture folder loaded into the real server."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.fixtures import FIXTURES, expected, manifest
from tests.test_cli import run
from zkstorm.errors import ExitCode
from zkstorm.sandbox.encode import storm_gzip

# folder → the Storm roots in it
FOLDERS = {
    "storm2": ["/storm"],
    "storm1": ["/storm1"],
    "encodings": ["/storm-next", "/storm-plain"],
    "legacy09": ["/legacy-storm"],
}
CASES = [(name, root) for name, roots in FOLDERS.items() for root in roots]


def _values(name: str, root: str, sub: str) -> dict[str, Any]:
    znodes = expected("storm", name)["znodes"]
    prefix = f"{root}/{sub}/"
    return {
        p[len(prefix) :]: v for p, v in znodes.items() if p.startswith(prefix) and v["encoding"] != "storm-dir-marker"
    }


def _json(*args: str) -> Any:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def loaded(writer: KazooClient, zk_root: Chroot, request: pytest.FixtureRequest) -> Chroot:
    load_cluster(writer, zk_root.path, "storm", request.param)
    return zk_root


@pytest.mark.parametrize(("loaded", "root"), CASES, indirect=["loaded"], ids=[f"{n}{r}" for n, r in CASES])
def test_every_storm_command_on_every_version(loaded: Chroot, root: str) -> None:
    name = next(n for n, roots in FOLDERS.items() if root in roots)
    zk = ["--zk", loaded.zk, "--storm-root", root]

    topologies = _json(*zk, "storm", "topologies", "-f", "json")
    bases = _values(name, root, "storms")
    assert {t["topology_id"] for t in topologies} == set(bases)
    for t in topologies:
        value = bases[t["topology_id"]]["value"]
        assert {"topology_id", "name", "status", "num_workers", "launch_time_secs", "owner"} <= set(t)
        assert t["name"] == value.get("name", value.get("storm-name"))
        assert t["num_workers"] == value.get("num_workers", value.get("num-workers"))

    supervisors = _json(*zk, "storm", "supervisors", "-f", "json")
    assert {s["supervisor_id"] for s in supervisors} == set(_values(name, root, "supervisors"))
    for s in supervisors:
        assert {"supervisor_id", "hostname", "time_secs", "uptime_secs", "used_ports"} <= set(s)

    workers = _json(*zk, "storm", "workers", "-f", "json")
    assert {f"{w['topology_id']}/{w['node']}-{w['port']}" for w in workers} == set(_values(name, root, "workerbeats"))
    for w in workers:
        assert {"topology_id", "node", "port", "time_secs", "uptime_secs"} <= set(w)
        assert w["stale"] is True  # the fixtures' beats are from 2025

    for topology_id, entry in _values(name, root, "assignments").items():
        rows = _json(*zk, "storm", "assignment", topology_id, "-f", "json")
        slots = entry["value"].get("executor_node_port") or entry["value"].get("executor->node+port")
        assert len(rows) == len(slots)
        for row in rows:
            assert {"topology_id", "start_task", "end_task", "node", "port", "host", "start_time_secs"} <= set(row)
            assert row["host"]

    nimbuses = _json(*zk, "storm", "nimbus", "-f", "json")
    assert {n["nimbus_id"] for n in nimbuses} == set(_values(name, root, "nimbuses"))
    if _values(name, root, "leader-lock"):
        assert sum(1 for n in nimbuses if n["is_leader"]) == 1
    else:
        assert all(n["is_leader"] is None for n in nimbuses)  # no latch: leadership unknown, not "no"

    stored = _values(name, root, "errors")
    for topology_id in {p.split("/", 1)[0] for p in stored}:
        errors = _json(*zk, "errors", topology_id, "-f", "json")
        nodes = [p for p in stored if p.startswith(topology_id + "/") and p.count("/") == 2]
        assert len([e for e in errors if e["sequence"] is not None]) == len(nodes)
        times = [e["time_secs"] for e in errors]
        assert times == sorted(times, reverse=True)
        for e in errors:
            assert {"topology_id", "component", "time_secs", "host", "port", "error"} <= set(e)

    assert run(*zk, "tree", root).exit_code == 0


def test_errors_by_name_component_filters_and_limit(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    zk = ["--zk", zk_root.zk]
    by_id = _json(*zk, "errors", "fraud-scorer-3-1751880000", "-f", "json")
    assert _json(*zk, "errors", "fraud-scorer", "-f", "json") == by_id
    components = {e["component"] for e in by_id}
    assert {"score~v3", "alert*sink"} <= components  # URL-decoded as java.net.URLEncoder encoded them
    score = _json(*zk, "errors", "fraud-scorer", "-c", "score~v3", "-f", "json")
    assert score == _json(*zk, "errors", "fraud-scorer", "-c", "score%7Ev3", "-f", "json")
    assert len(score) == 10 and [e["sequence"] for e in score][:2] == [12, 10]  # trimmed: sequence numbers skip
    assert sum(e["last_error"] for e in score) == 1 and score[0]["last_error"]
    assert len(_json(*zk, "errors", "fraud-scorer", "--limit", "3", "-f", "json")) == 3
    newest = by_id[0]["time_secs"]
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(newest))
    assert [e["time_secs"] for e in _json(*zk, "errors", "fraud-scorer", "--since", since, "-f", "json")] == [newest]
    table = run(*zk, "errors", "fraud-scorer").stdout
    assert "score~v3" in table and "java.lang.StackOverflowError" in table
    newest_trace = _json(*zk, "errors", "fraud-scorer", "--limit", "1", "-f", "json")[0]["error"].splitlines()
    frames = [line.strip() for line in newest_trace[1:]]
    assert len(frames) >= 3  # a real stack trace, so the check below means something
    wide = {"COLUMNS": "400"}  # wide enough that no frame is folded at the column edge
    full = run(*zk, "errors", "fraud-scorer", "--full", "--limit", "1", env=wide).stdout
    short = run(*zk, "errors", "fraud-scorer", "--limit", "1", env=wide).stdout
    for frame in frames:
        assert frame in full, frame
    assert frames[-1] not in short  # without --full only the first line is shown


def test_last_error_is_shown_when_its_ephemeral_error_node_is_gone(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    component_dir = f"{zk_root.path}/storm/errors/fraud-scorer-3-1751880000/alert*sink"
    for child in writer.get_children(component_dir):
        writer.delete(f"{component_dir}/{child}")  # the reporting worker died
    rows = _json("--zk", zk_root.zk, "errors", "fraud-scorer", "-c", "alert*sink", "-f", "json")
    assert len(rows) == 1 and rows[0]["last_error"] and rows[0]["sequence"] is None


def test_errors_in_80_columns_show_each_worker_whole(writer: KazooClient, zk_root: Chroot) -> None:
    """At 80 columns the UTC time and then the message give way, not the worker's host and port."""
    load_cluster(writer, zk_root.path, "storm", "storm2")
    host = "storm-wkr-017.prod.example.com"
    component = f"{zk_root.path}/storm/errors/fraud-scorer-3-1751880000/score%7Ev3"
    info = {"error": "java.lang.IllegalStateException: boom", "error_time_secs": int(time.time()), "host": host,
            "port": 6703}  # fmt: skip
    writer.create(f"{component}/e0000000099", storm_gzip("ErrorInfo", info))
    table = run("--zk", zk_root.zk, "errors", "fraud-scorer", "--limit", "3", env={"COLUMNS": "80"}).stdout
    assert f"{host}:6703" in table
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "java.lang.Ill" in table  # the message, cut


def test_unknown_and_ambiguous_topologies(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    unknown = run("--zk", zk_root.zk, "errors", "no-such-topology")
    assert unknown.exit_code == ExitCode.NOT_FOUND
    assert "fraud-scorer" in unknown.stderr and "inventory-sync" in unknown.stderr
    base = writer.get(f"{zk_root.path}/storm/storms/fraud-scorer-3-1751880000")[0]
    writer.create(f"{zk_root.path}/storm/storms/fraud-scorer-9-1751990000", base)  # resubmitted under the same name
    ambiguous = run("--zk", zk_root.zk, "errors", "fraud-scorer")
    assert ambiguous.exit_code == ExitCode.USAGE
    assert "fraud-scorer-3-1751880000" in ambiguous.stderr and "fraud-scorer-9-1751990000" in ambiguous.stderr


def test_stale_workers(writer: KazooClient, zk_root: Chroot) -> None:
    now = int(time.time())
    root = f"{zk_root.path}/storm"
    for path in ("storms", "assignments", "workerbeats/t-1-1", "supervisors"):
        writer.ensure_path(f"{root}/{path}")
    for node, port, beat in (("sup-a-10.0.0.1", 6700, now - 2), ("sup-b-10.0.0.2", 6701, now - 300)):
        data = storm_gzip(
            "ClusterWorkerHeartbeat", {"storm_id": "t-1-1", "executor_stats": {}, "time_secs": beat, "uptime_secs": 60}
        )
        writer.create(f"{root}/workerbeats/t-1-1/{node}-{port}", data)
    rows = _json("--zk", zk_root.zk, "storm", "workers", "--stale-after", "30s", "-f", "json")
    assert {(w["node"], w["stale"]) for w in rows} == {("sup-a-10.0.0.1", False), ("sup-b-10.0.0.2", True)}
    assert all(w["age_secs"] >= 0 for w in rows)
    stale = _json("--zk", zk_root.zk, "storm", "workers", "--stale-after", "10m", "--stale", "-f", "json")
    assert stale == []


def test_worker_stats_rows(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    rows = _json("--zk", zk_root.zk, "storm", "workers", "fraud-scorer", "--stats", "-f", "json")
    beats = {p: v for p, v in _values("storm2", "/storm", "workerbeats").items() if p.startswith("fraud-scorer")}
    emitted = sum(
        len(s) for v in beats.values() for e in v["value"]["executor_stats"].values() for s in e["emitted"].values()
    )
    assert len([r for r in rows if r["metric"] == "emitted"]) == emitted
    assert {"executor_type", "metric", "window", "stream", "value"} <= set(rows[0])


def test_a_corrupt_znode_is_reported_and_the_rest_still_shown(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    bad = (FIXTURES / "storm" / "corrupt" / "wrong-struct-for-path.bin").read_bytes()
    writer.set(f"{zk_root.path}/storm/storms/fraud-scorer-3-1751880000", bad)
    result = run("--zk", zk_root.zk, "storm", "topologies", "-f", "json")
    assert result.exit_code == 0
    # still listed, undecoded: its name from its id, its status unknown, the failure type saying why
    shown = {t["topology_id"]: (t["name"], t["status"], t["decode_status"]) for t in json.loads(result.stdout)}
    assert shown == {
        "fraud-scorer-3-1751880000": ("fraud-scorer", "UNKNOWN", "thrift_schema_mismatch"),
        "inventory-sync-5-1751968800": ("inventory-sync", "REBALANCING", "ok"),
    }
    assert "/storm/storms/fraud-scorer-3-1751880000: cannot decode storm_topology" in result.stderr
    assert run("--zk", zk_root.zk, "--strict", "storm", "topologies").exit_code == ExitCode.DECODE_FAILURES
    tree = run("--zk", zk_root.zk, "tree", "/storm/storms", "-f", "jsonl")
    failures = [json.loads(x) for x in tree.stdout.splitlines() if '"decode_failure"' in x]
    assert failures and failures[0]["size"] == len(bad) and failures[0]["failure_type"] == "thrift_schema_mismatch"


def test_credentials_are_redacted_in_every_format(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    secrets = [
        value
        for path, entry in expected("storm", "storm2")["znodes"].items()
        if entry["record_type"] == "Credentials"
        for value in entry["value"]["creds"].values()
    ] + [
        entry["value"]["key"]
        for entry in expected("storm", "storm2")["znodes"].values()
        if entry["record_type"] == "PrivateWorkerKey"
    ]
    assert secrets
    paths = [n.path for n in manifest("storm", "storm2") if "/credentials/" in n.path or "/secretkeys/" in n.path]
    outputs = []
    for path in paths:
        for args in (("get", path), ("get", path, "--json"), ("get", path, "--raw"), ("get", path, "--json", "--raw")):
            outputs.append(run("--zk", zk_root.zk, *args).stdout)
    for fmt in ("tree", "json", "jsonl", "csv"):
        outputs.append(run("--zk", zk_root.zk, "tree", "/storm", "-f", fmt).stdout)
    everything = "\n".join(outputs)
    for secret in secrets:
        assert secret[:24] not in everything
    shown = run("--zk", zk_root.zk, "--show-secrets", "get", paths[0], "--json").stdout
    assert any(secret[:24] in shown for secret in secrets)


def test_storm_roots_finds_every_root(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "encodings")
    load_cluster(writer, zk_root.path, "storm", "storm1")
    rows = _json("--zk", zk_root.zk, "storm", "roots", "-f", "json")
    assert {r["root"] for r in rows} == {"/storm-next", "/storm-plain", "/storm1"}


def test_every_root_is_decoded_without_naming_it(writer: KazooClient, zk_root: Chroot) -> None:
    """Two Storm clusters and two Kafka chroots on one ensemble: `get` and `tree` decode paths under all
    of them with no --storm-root or --kafka-root (the flags only choose the cluster for the views)."""
    from zkstorm.sandbox.encode import kafka_json

    base = {"name": "canary", "status": "ACTIVE", "num_workers": 1, "launch_time_secs": 1790000000}
    for root in ("storm-main", "storm-canary"):
        writer.create(f"{zk_root.path}/{root}/storms/canary-1-1790000000", storm_gzip("StormBase", base), makepath=True)
        writer.create(f"{zk_root.path}/{root}/assignments", b"", makepath=True)
    for chroot in ("kafka/east", "kafka/west"):
        registration = {"version": 1, "host": f"{chroot.split('/')[1]}-1", "port": 9092, "jmx_port": -1}
        writer.create(f"{zk_root.path}/{chroot}/brokers/ids/7", kafka_json(registration), makepath=True)
        writer.create(f"{zk_root.path}/{chroot}/brokers/topics", b"", makepath=True)
    zk = ("--zk", zk_root.zk)
    for path in ("/storm-canary/storms/canary-1-1790000000", "/storm-main/storms/canary-1-1790000000"):
        got = _json(*zk, "get", path, "-f", "json")
        assert got["znode"]["decode_status"] == "decoded", path
        assert [r["name"] for r in got["records"] if r["kind"] == "storm_topology"] == ["canary"]
    west = _json(*zk, "get", "/kafka/west/brokers/ids/7", "-f", "json")
    assert [r["host"] for r in west["records"] if r["kind"] == "kafka_broker"] == ["west-1"]
    tree = {r["path"]: r for r in _json(*zk, "tree", "/", "-f", "json")}
    for path in (
        "/storm-main/storms/canary-1-1790000000",
        "/storm-canary/storms/canary-1-1790000000",
        "/kafka/east/brokers/ids/7",
        "/kafka/west/brokers/ids/7",
    ):
        assert tree[path]["decode_status"] == "decoded", path
    assert [r["root"] for r in _json(*zk, "storm", "roots", "-f", "json")] == ["/storm-canary", "/storm-main"]
    assert [r["root"] for r in _json(*zk, "kafka", "roots", "-f", "json")] == ["/kafka/east", "/kafka/west"]


# --- get of a heartbeat: every executor stat it holds, as storm workers --stats shows them -------------


def _stat_values(executor_stats: dict[str, Any]) -> int:
    """How many counters a 2.x heartbeat holds (expected.json's value): every metric, window and stream
    of emitted, transferred and the spout's or bolt's own."""
    count = 0
    for stats in executor_stats.values():
        tables = [stats["emitted"], stats["transferred"]]
        tables += [table for specific in stats["specific"].values() for table in specific.values()]
        count += sum(len(streams) for table in tables for streams in table.values())
    return count


def _get_heartbeat(zk: list[str], path: str, topology: str, node: str, port: int) -> list[dict[str, Any]]:
    """``get PATH`` in every format, checked against each other and ``storm workers --stats``; returns
    the JSON's executor stat records."""
    document = _json(*zk, "get", path, "-f", "json")
    kinds = [r["kind"] for r in document["records"]]
    assert kinds[0] == "storm_worker" and set(kinds[1:]) == {"storm_executor_stat"}
    worker = document["records"][0]
    # what only a join can fill is filled through the model, never a null that looks like a fact
    assert worker["host"] and worker["age_secs"] is not None and worker["stale"] is not None
    stats = [r for r in document["records"] if r["kind"] == "storm_executor_stat"]
    shown = [
        {k: v for k, v in row.items() if k != "kind"}
        for row in _json(*zk, "storm", "workers", topology, "--stats", "-f", "json")
        if (row["node"], row["port"]) == (node, port)
    ]
    assert sorted(json.dumps({k: v for k, v in s.items() if k != "kind"}, sort_keys=True) for s in stats) == sorted(
        json.dumps(s, sort_keys=True) for s in shown
    )
    lines = run(*zk, "get", path, "-f", "jsonl").stdout.splitlines()
    assert sum('"kind":"storm_executor_stat"' in line for line in lines) == len(stats)
    csv_rows = run(*zk, "get", path, "-f", "csv").stdout.splitlines()
    assert len(csv_rows) == 1 + 1 + len(stats)  # the header, the worker, each counter
    table = run(*zk, "get", path, "--wide")
    assert table.exit_code == 0 and "StormExecutorStat" in table.stdout
    return stats


def test_get_of_a_2x_heartbeat_prints_every_executor_stat(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    znodes = expected("storm", "storm2")["znodes"]
    path = next(p for p, v in znodes.items() if v["record_type"] == "ClusterWorkerHeartbeat")
    topology, slot = path.split("/")[-2:]
    node, _, port = slot.rpartition("-")
    stats = _get_heartbeat(["--zk", zk_root.zk], path, topology, node, int(port))
    assert len(stats) == _stat_values(znodes[path]["value"]["executor_stats"]) > 0


def test_get_of_a_09_heartbeat_prints_every_executor_stat(writer: KazooClient, zk_root: Chroot) -> None:
    from tests.test_clojure_streams import TOPOLOGY, stream

    root = f"{zk_root.path}/storm09"
    for path, name in [
        (f"storms/{TOPOLOGY}", "stormbase"),
        (f"assignments/{TOPOLOGY}", "assignment"),
        ("supervisors/sup-a", "supervisor"),
        (f"workerbeats/{TOPOLOGY}/sup-a-6700", "workerbeat"),
    ]:
        writer.create(f"{root}/{path}", stream(name), makepath=True)
    zk = ["--zk", zk_root.zk, "--storm-root", "/storm09"]
    stats = _get_heartbeat(zk, f"/storm09/workerbeats/{TOPOLOGY}/sup-a-6700", TOPOLOGY, "sup-a", 6700)
    # scripts/clojure_streams.clj: a spout [1 1] and a bolt [2 3] with their stats maps, a [-1 -1] of nil
    assert {(s["start_task"], s["end_task"], s["executor_type"]) for s in stats} == {(1, 1, "spout"), (2, 3, "bolt")}
    assert {s["metric"] for s in stats} >= {"emitted", "acked", "complete_ms_avg", "executed", "execute_ms_avg"}


@pytest.mark.parametrize(("folder", "root", "said"), [("storm2", "/storm", True), ("storm1", "/storm1", False)])
def test_workers_say_what_a_2x_beat_is(
    writer: KazooClient, zk_root: Chroot, folder: str, root: str, said: bool
) -> None:
    """Storm 2.x workers beat their liveness to the supervisor and Nimbus, and write ZooKeeper only their
    executors' figures (every executor.metrics.frequency.secs, 60 s by default): ``storm workers`` says so
    on stderr, in every format, for a cluster whose registrations say 2.x, and not for a 1.x one, whose
    workers wrote their liveness beat to ZooKeeper (held against a real 2.8.3 cluster in tests/real)."""
    load_cluster(writer, zk_root.path, "storm", folder)
    for fmt in ("table", "json"):
        result = run("--zk", zk_root.zk, "--storm-root", root, "storm", "workers", "-f", fmt)
        assert result.exit_code == 0, result.stderr
        assert ("executor.metrics.frequency.secs" in result.stderr) is said, (fmt, result.stderr)
        assert "executor.metrics.frequency.secs" not in result.stdout
