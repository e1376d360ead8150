"""Storm decoders: every fixture znode against expected.json, corrupt payloads, legacy layouts."""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from urllib.parse import unquote_plus

import pytest

from tests.fixtures import FIXTURES, expected, folder
from zkstorm.errors import FailureType
from zkstorm.layout import Roots
from zkstorm.model.walk import decode_node
from zkstorm.records import (
    DecodeFailure,
    StormBackpressure,
    StormBlobSequence,
    StormComponent,
    StormCredential,
    StormError,
    StormExecutor,
    StormExecutorStat,
    StormLeaderInfo,
    StormLeaderLatch,
    StormLegacyNode,
    StormLogLevel,
    StormNimbus,
    StormProfileRequest,
    StormSecretKey,
    StormSupervisor,
    StormTopology,
    StormWorker,
)
from zkstorm.sources.base import RawNode, Stat

STAT = Stat(1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1)
STORM_ROOTS = {
    "storm2": ("/storm",),
    "storm1": ("/storm1",),
    "encodings": ("/storm-next", "/storm-plain"),
    "legacy09": ("/legacy-storm",),
}


def _decode(name: str, path: str, data: bytes, **kwargs: Any) -> list[Any]:
    roots = Roots(storm=STORM_ROOTS[name], kafka=())
    _, records = decode_node(RawNode(path, STAT, data), roots=roots, **kwargs)
    return records


def _one(records: list[Any], kind: type) -> Any:
    found = [r for r in records if isinstance(r, kind)]
    assert len(found) == 1, records
    return found[0]


def _check(record_type: str, path: str, value: Any, records: list[Any]) -> None:
    """The records carry what expected.json says the znode holds."""
    leaf = path.rsplit("/", 1)[1]
    if record_type == "StormBase":
        t = _one(records, StormTopology)
        assert (t.name, t.status, t.num_workers) == (value["name"], value["status"], value["num_workers"])
        assert t.launch_time_secs == value.get("launch_time_secs") and t.owner == value.get("owner")
        assert t.topology_id == leaf and t.prev_status == value.get("prev_status")
        assert {c.component: c.executors for c in records if isinstance(c, StormComponent)} == value.get(
            "component_executors", {}
        )
        options = value.get("topology_action_options") or {}
        if "kill_options" in options:
            assert t.action == "kill" and t.action_wait_secs == options["kill_options"].get("wait_secs")
        if "rebalance_options" in options:
            assert t.action == "rebalance" and t.rebalance_num_workers == options["rebalance_options"].get(
                "num_workers"
            )
    elif record_type == "Assignment":
        rows = [r for r in records if isinstance(r, StormExecutor)]
        assert {f"{r.start_task}-{r.end_task}": {"node": r.node, "port": [r.port]} for r in rows} == value[
            "executor_node_port"
        ]
        for r in rows:
            assert r.host == value["node_host"][r.node]
            assert r.start_time_secs == value["executor_start_time_secs"][f"{r.start_task}-{r.end_task}"]
            resources = value.get("worker_resources", {}).get(f"{r.node}:{r.port}")
            if resources:
                assert r.mem_on_heap_mb == resources.get("mem_on_heap") and r.cpu_pct == resources.get("cpu")
    elif record_type == "SupervisorInfo":
        s = _one(records, StormSupervisor)
        assert (s.hostname, s.time_secs, s.uptime_secs) == (
            value["hostname"],
            value["time_secs"],
            value.get("uptime_secs"),
        )
        assert s.used_ports == tuple(sorted(value.get("used_ports", []))) and s.supervisor_id == leaf
        assert s.version == value.get("version") and s.server_port == value.get("server_port")
    elif record_type == "ClusterWorkerHeartbeat":
        w = _one(records, StormWorker)
        assert (w.topology_id, w.time_secs, w.uptime_secs) == (
            value["storm_id"],
            value["time_secs"],
            value["uptime_secs"],
        )
        assert w.num_executor_stats == len(value["executor_stats"])
        assert f"{w.node}-{w.port}" == leaf
    elif record_type == "ErrorInfo":
        e = _one(records, StormError)
        assert (e.error, e.time_secs) == (value["error"], value["error_time_secs"])
        assert (e.host, e.port) == (value.get("host"), value.get("port"))
        assert e.last_error == leaf.endswith("-last-error")
        component = leaf[: -len("-last-error")] if e.last_error else path.rsplit("/", 2)[1]
        assert e.component == unquote_plus(component)
    elif record_type == "NimbusSummary":
        n = _one(records, StormNimbus)
        assert (n.host, n.port, n.started_secs, n.version) == (
            value["host"],
            value["port"],
            value["uptime_secs"],
            value["version"],
        )
        assert n.tls_port == value.get("tlsPort")
    elif record_type == "Credentials":
        every = [r for r in records if isinstance(r, StormCredential)]
        creds = [c for c in every if c.key is not None]
        assert {c.key for c in creds} == set(value["creds"])
        assert all(c.value == "<redacted>" for c in creds)
        assert {c.key: c.value_length for c in creds} == {k: len(v) for k, v in value["creds"].items()}
        assert {c.owner for c in every} == {value.get("topoOwner")}  # kept even with no credential
        assert len(every) == max(len(creds), 1)
    elif record_type == "LogConfig":
        levels = {r.logger: r for r in records if isinstance(r, StormLogLevel) and r.logger is not None}
        assert set(levels) == set(value.get("named_logger_level", {}))
        for logger, level in value.get("named_logger_level", {}).items():
            assert levels[logger].action == level["action"]
            assert levels[logger].reset_at_ms == level.get("reset_log_level_timeout_epoch")
    elif record_type == "ProfileRequest":
        p = _one(records, StormProfileRequest)
        assert (p.host, p.port, p.action, p.timestamp_ms) == (
            value["nodeInfo"]["node"],
            value["nodeInfo"]["port"][0],
            value["action"],
            value.get("time_stamp"),
        )
    elif record_type == "PrivateWorkerKey":
        k = _one(records, StormSecretKey)
        assert (k.user_name, k.expiration_ms) == (value["userName"], value["expirationTimeMillis"])
        assert k.key == "<redacted>" and k.key_length == len(bytes.fromhex(value["key"]))
    elif record_type == "org.apache.storm.nimbus.NimbusInfo":
        i = _one(records, StormLeaderInfo)
        assert (i.host, i.port, i.tls_port) == (value["host"], value["port"], value.get("tlsPort"))
    elif record_type.startswith("leader-latch"):
        latch = _one(records, StormLeaderLatch)
        assert latch.participant_id == value and latch.sequence == int(leaf.rsplit("-", 1)[1])
    elif record_type == "blob max key sequence number":
        assert _one(records, StormBlobSequence).max_sequence == value
    elif "backpressure" in path:
        assert _one(records, StormBackpressure).throttle_on_ms == value
    elif record_type == "record" or record_type.endswith("record"):
        pass  # legacy; checked in test_legacy_09
    else:
        raise AssertionError(f"no check for {record_type} at {path}")


@pytest.mark.parametrize("name", ["storm2", "storm1", "encodings", "legacy09"])
def test_every_fixture_znode_decodes_to_its_expected_value(name: str) -> None:
    base = folder("storm", name)
    for path, entry in expected("storm", name)["znodes"].items():
        records = _decode(name, path, (base / entry["file"]).read_bytes())
        assert not [r for r in records if isinstance(r, DecodeFailure)], (path, records)
        if entry["encoding"] == "storm-dir-marker":
            assert records == [], path
            continue
        if name == "legacy09":
            continue
        _check(entry["record_type"], path, entry["value"], records)


def test_legacy_09_clojure_payloads() -> None:
    base = folder("storm", "legacy09")
    znodes = expected("storm", "legacy09")["znodes"]
    storms = next(p for p in znodes if "/storms/" in p)
    records = _decode("legacy09", storms, (base / znodes[storms]["file"]).read_bytes())
    t = _one(records, StormTopology)
    value = znodes[storms]["value"]
    assert (t.name, t.status, t.format) == ("log-shipper", "REBALANCING", "java-0.9")
    assert (t.num_workers, t.launch_time_secs) == (value["num-workers"], value["launch-time-secs"])
    assert t.prev_status == "ACTIVE" and t.rebalance_num_workers == 3 and t.action_wait_secs == 60
    components = {c.component: (c.executors, c.rebalance_executors) for c in records if isinstance(c, StormComponent)}
    assert components["parse"] == (3, 4) and components["ship→es"] == (2, None)

    assignment = next(p for p in znodes if "/assignments/" in p)
    rows = _decode("legacy09", assignment, (base / znodes[assignment]["file"]).read_bytes())
    expected_slots = znodes[assignment]["value"]["executor->node+port"]
    assert {f"{r.start_task}-{r.end_task}": [r.node, r.port] for r in rows} == expected_slots
    assert all(r.host for r in rows) and all(r.start_time_secs for r in rows)

    error = next(p for p in znodes if "/errors/" in p and znodes[p]["encoding"] == "java-serialization")
    e = _one(_decode("legacy09", error, (base / znodes[error]["file"]).read_bytes()), StormError)
    assert e.component == "ship→es" and e.host is None and e.port is None  # 0.9.2 wrote neither
    assert e.time_secs == znodes[error]["value"][":time-secs"] and e.error.startswith("java.io.IOException")


def test_heartbeat_stats_rows_on_request() -> None:
    base = folder("storm", "storm2")
    znodes = expected("storm", "storm2")["znodes"]
    path = next(p for p, v in znodes.items() if v["record_type"] == "ClusterWorkerHeartbeat")
    data = (base / znodes[path]["file"]).read_bytes()
    assert not [r for r in _decode("storm2", path, data) if isinstance(r, StormExecutorStat)]
    rows = [r for r in _decode("storm2", path, data, detail=True) if isinstance(r, StormExecutorStat)]
    stats = znodes[path]["value"]["executor_stats"]
    emitted = sum(len(streams) for ex in stats.values() for streams in ex["emitted"].values())
    assert len([r for r in rows if r.metric == "emitted"]) == emitted
    assert {r.window for r in rows} <= {"600", "10800", "86400", ":all-time"}
    assert any(r.source_component for r in rows if r.executor_type == "bolt" and r.metric == "executed")
    assert {r.executor_type for r in rows if (r.start_task, r.end_task) == (-1, -1)} == {None}
    # the rows are filled slot by slot: each must be the record the dataclass constructor gives
    # (asdict reads every declared slot, so a slot left unset would raise here)
    for row in rows:
        assert dataclasses.asdict(row) == dataclasses.asdict(StormExecutorStat(**dataclasses.asdict(row)))
        assert type(row.value) is float and type(row.window) is str and type(row.stream) is str


def test_show_secrets_reveals_credentials_and_keys() -> None:
    base = folder("storm", "storm2")
    znodes = expected("storm", "storm2")["znodes"]
    path = next(p for p, v in znodes.items() if v["record_type"] == "Credentials" and v["value"]["creds"])
    creds = _decode("storm2", path, (base / znodes[path]["file"]).read_bytes(), show_secrets=True)
    assert {c.key: c.value for c in creds if isinstance(c, StormCredential)} == znodes[path]["value"]["creds"]


def _cases() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "storm" / "corrupt" / "cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["file"].rsplit("/", 1)[1])
def test_corrupt_payloads_become_decode_failures(case: dict[str, Any]) -> None:
    data = (FIXTURES / "storm" / case["file"]).read_bytes()
    path = case["pretend_path"]
    roots = Roots(storm=("/storm", "/storm-next"), kafka=())
    znode, records = decode_node(RawNode(path, STAT, data), roots=roots)
    failure, *placeholder = records  # and what the znode stands for, with the failure as its status
    assert isinstance(failure, DecodeFailure)
    assert len(placeholder) <= 1 and all(r.decode_status == failure.failure_type for r in placeholder)
    assert failure.path == path and failure.size == case["size"] == len(data)
    assert failure.failure_type in {FailureType.of(t) for t in case["acceptable_failure_types"]}, failure.reason
    assert failure.reason and znode.summary and "undecodable" in znode.summary


def test_component_named_like_a_last_error_node_is_told_apart_by_its_data() -> None:
    roots = Roots(storm=("/storm",), kafka=())
    _, records = decode_node(RawNode("/storm/errors/t-1-1/x-last-error", STAT, b"\x07"), roots=roots)
    assert records == []  # a component directory called "x-last-error"


def test_legacy_task_layout_is_recognised() -> None:
    roots = Roots(storm=("/storm",), kafka=())
    _, records = decode_node(
        RawNode("/storm/taskerrors/t-1-1/7/1300000000", STAT, b"java.lang.Oops\n\tat x"), roots=roots
    )
    (legacy,) = records
    assert isinstance(legacy, StormLegacyNode)
    assert (legacy.layout, legacy.task_id, legacy.detail) == ("taskerrors", 7, "java.lang.Oops")


def test_a_time_no_clock_can_hold_is_a_decode_failure() -> None:
    from zkstorm.sandbox.encode import thrift_bytes

    data = thrift_bytes("SupervisorInfo", {"time_secs": 72057595789903933, "hostname": "h"})  # found by the fuzz test
    roots = Roots(storm=("/storm",), kafka=())
    _, (failure, placeholder) = decode_node(RawNode("/storm/supervisors/s", STAT, data), roots=roots)
    assert isinstance(failure, DecodeFailure) and failure.failure_type == "value_out_of_range"
    assert (placeholder.supervisor_id, placeholder.decode_status) == ("s", "value_out_of_range")


def test_a_topology_named_from_its_id_says_so_in_its_row() -> None:
    """A StormBase without its (Thrift-required) name is undecodable; its row is listed under the name
    its id gives, and says the name is derived, not only a warning on stderr."""
    from zkstorm.sandbox.encode import storm_gzip

    znodes = expected("storm", "storm2")["znodes"]
    path = next(p for p, v in znodes.items() if v["record_type"] == "StormBase")
    value = dict(znodes[path]["value"])
    named = _one(_decode("storm2", path, storm_gzip("StormBase", value)), StormTopology)
    assert (named.name, named.name_derived) == ("fraud-scorer", False)
    del value["name"]
    records = _decode("storm2", path, storm_gzip("StormBase", value))
    assert _one(records, DecodeFailure).failure_type == "missing_required_fields"
    nameless = _one(records, StormTopology)
    assert (nameless.name, nameless.name_derived, nameless.root) == ("fraud-scorer", True, "/storm")
