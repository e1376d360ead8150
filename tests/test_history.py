"""The history job against a real local SparkSession, over a hand-built week written by our snapshot
writer; every metric is checked against expectations computed here in plain Python."""

from __future__ import annotations

import json
import logging
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests import history_tables
from tests.conftest import Chroot, load_cluster
from tests.test_cli import run
from zkstorm.export.parquet import Snapshot
from zkstorm.jobs.history import expects_update, run_history
from zkstorm.jobs.metrics import CHRONIC_SNAPSHOTS, METRICS
from zkstorm.jobs.report import CHARTS
from zkstorm.jobs.spark import BRIEF_RUN_JVM, session_conf
from zkstorm.records import (
    KafkaBroker,
    KafkaController,
    KafkaControllerEpoch,
    KafkaPartition,
    KafkaTopic,
    StormComponentStats,
    StormError,
    StormExecutor,
    StormSupervisor,
    StormTopology,
    StormWorker,
    ZkUsage,
    Znode,
)

DAY0 = datetime(2026, 11, 1, 2, 30, tzinfo=UTC)
DAYS = 5

# The week, as plain data. Index = day.
TOPOLOGIES = [
    {"A": "ACTIVE", "B": "ACTIVE"},
    {"A": "ACTIVE", "B": "INACTIVE"},
    {"A": "ACTIVE", "C": "ACTIVE"},
    {"A": "REBALANCING", "C": "ACTIVE"},
    {"A": "ACTIVE", "C": "ACTIVE"},
]
# (topology, component, time_secs, first line) and the days the error is still stored
ERRORS = [
    (("A", "spout", 1_793_000_000, "java.io.IOException: timeout after 3000 ms"), {0, 1, 2}),
    (("A", "bolt", 1_793_100_000, "java.io.IOException: timeout after 5000 ms"), {2, 3}),
    (("C", "bolt", 1_793_200_000, "java.lang.NullPointerException"), {3, 4}),
] + [  # a burst: topology C's sink cannot reach redis a dozen times in one day, the first half first seen
    # two nights before the rest (the night that sees the rest finds it in the day's errors of both nights)
    (("C", "sink", 1_793_300_000 + 60 * n, f"java.net.ConnectException: Connection refused: redis-{n}:6379"), days)
    for n, days in zip(range(12), [{2, 3}] * 6 + [{4}] * 6, strict=True)
]
# host → per day (uptime) or None when absent
SUPERVISORS = {"h1": [100, 200, 300, 400, 500], "h2": [100, None, 50, 10, 90]}
WORKERS = {("A", "n1", 6700): [(100, False), (200, False), (50, False), (150, True), (250, False)]}
EXECUTOR_PLACES = [("n1", 6700)] * 3 + [("n2", 6701)] * 2
BROKERS = [  # broker → registration timestamp per day (None = not registered)
    {1: 10, 2: 20, 3: 30},
    {1: 10, 2: 20},
    {1: 10, 2: 20, 3: 31},
    {1: 11, 2: 20, 3: 31},
    {1: 11, 2: 20, 3: 31},
]
CONTROLLER = [(1, 5), (1, 5), (2, 7), (2, 7), (2, 8)]
ISR_T0 = [[1, 2, 3], [1, 2], [1, 2], [1, 2], [1, 2, 3]]
LEADER_T1 = [2, 1, 1, 1, 1]
TOPICS = [{"t"}, {"t"}, {"t", "u"}, {"t", "u"}, {"t"}]
# partitions offline (no live leader; their one replica, broker 4, never registered), present only on the
# nights they are: a run from night 1 on, across every nightly run's boundary, whose topics change (t's
# are back after night 2, so a run that reads nights 3 and 4 knows of them only from the kept facts)
OFFLINE = [set(), {("t", 2)}, {("t", 2), ("t", 3), ("u", 0)}, {("u", 0)}, {("u", 0)}]
# ZooKeeper's subtrees per day: (znodes, data bytes); heartbeats quadruple on day 2, an old consumer
# group's offsets appear on day 4
USAGE = {
    ("/storm/workerbeats", "/storm", "storm_worker", "Storm worker heartbeats"): [
        (100, 1_000_000),
        (110, 1_100_000),
        (400, 4_000_000),
        (410, 4_100_000),
        (420, 4_200_000),
    ],
    ("/kafka/consumers", "/kafka", "kafka_consumer_offset", "old Kafka consumers' offsets"): [
        (1, 10),
        (1, 10),
        (1, 10),
        (1, 10),
        (30_001, 3_000_000),
    ],
}
# component → per day (capacity, failed, executed) in the last 10 minutes before the snapshot
COMPONENTS = {
    ("A", "parse"): [(0.5, 0, 6000), (0.9, 0, 6600), (0.85, 0, 6000), (0.95, 0, 7200), (0.92, 0, 6900)],
    ("A", "sink"): [(0.2, 0, 600), (0.95, 0, 600), (0.3, 0, 600), (0.2, 3, 600), (0.2, 9, 600)],
}


def _day(i: int) -> datetime:
    return DAY0 + timedelta(days=i)


def _records(i: int) -> list[Any]:
    out: list[Any] = []
    for tid, status in TOPOLOGIES[i].items():
        out.append(
            StormTopology(
                root="/storm",
                topology_id=tid, name=f"words-{tid.lower()}", status=status, num_workers=1, launch_time_secs=None,
                launched_at=None, owner=None, principal=None, topology_version=None, prev_status=None, action=None,
                action_wait_secs=None, rebalance_num_workers=None, num_executors=1, num_components=1, format="thrift",
                name_derived=False,
            )
        )  # fmt: skip
    for (tid, component, secs, line), days in ERRORS:
        if i in days:
            at = datetime.fromtimestamp(secs, UTC)
            out.append(
                StormError(
                    root="/storm",
                    topology_id=tid, component=component, time_secs=secs, error_at=at, host="w1", port=6700,
                    error=line + "\n\tat x", first_line=line, sequence=None, last_error=False,
                )
            )  # fmt: skip
    for host, uptimes in SUPERVISORS.items():
        if uptimes[i] is not None:
            out.append(
                StormSupervisor(
                    root="/storm",
                    supervisor_id=f"{host}-id", hostname=host, assignment_id=None, time_secs=1, heartbeat_at=_day(i),
                    uptime_secs=uptimes[i], used_ports=[6700] if host == "h1" else [],
                    ports=[6700, 6701] if host == "h1" else [6700], version=None, server_port=None,
                    memory_capacity_mb=None, cpu_capacity_pct=None, resources=[], scheduler_meta=[],
                )
            )  # fmt: skip
    for (tid, node, port), days in WORKERS.items():
        uptime, stale = days[i]
        out.append(
            StormWorker(
                root="/storm",
                topology_id=tid, node=node, port=port, time_secs=1, heartbeat_at=_day(i), uptime_secs=uptime,
                num_executor_stats=0, stale=stale,
            )
        )  # fmt: skip
    node, port = EXECUTOR_PLACES[i]
    out.append(
        StormExecutor(
            root="/storm",
            topology_id="A", start_task=1, end_task=1, node=node, port=port, host=None, start_time_secs=None,
            master_code_dir=None, mem_on_heap_mb=None, mem_off_heap_mb=None, cpu_pct=None,
        )
    )  # fmt: skip
    for broker, stamp in BROKERS[i].items():
        host = "b3-new" if broker == 3 and i >= 2 else f"b{broker}"  # broker 3 comes back on another machine
        out.append(
            KafkaBroker(
                root="/kafka",
                broker_id=broker, alive=True, version=4, host=host, port=9092, rack=None, jmx_port=None,
                timestamp_ms=stamp, registered_at=None, endpoints=[], listener_protocols=[], features=[],
                broker_epoch=None, session_id=None,
            )
        )  # fmt: skip
    controller, epoch = CONTROLLER[i]
    out.append(
        KafkaController(
            root="/kafka",
            broker_id=controller, version=1, timestamp_ms=None, elected_at=None, kraft_controller_epoch=None,
            ephemeral=True,
        )
    )  # fmt: skip
    out.append(KafkaControllerEpoch(epoch=epoch, zk_version=None, root="/kafka"))
    for partition, isr, leader in ((0, ISR_T0[i], 1), (1, [1, 2, 3], LEADER_T1[i])):
        under = len(isr) < 3
        out.append(
            KafkaPartition(
                root="/kafka",
                topic="t", partition=partition, replicas=[1, 2, 3], adding_replicas=[], removing_replicas=[],
                leader=leader, leader_epoch=0, isr=isr, controller_epoch=1, zk_version=0, leader_recovery_state=0,
                offline=False, under_replicated=under, under_min_isr=False, at_min_isr=False,
                preferred_leader=leader == 1, min_isr=1, min_isr_source="assumed", pending_deletion=False,
                health="under_replicated" if under else "ok",
            )
        )  # fmt: skip
    for topic, partition in sorted(OFFLINE[i]):
        out.append(
            KafkaPartition(
                root="/kafka",
                topic=topic, partition=partition, replicas=[4], adding_replicas=[], removing_replicas=[],
                leader=-1, leader_epoch=0, isr=[4], controller_epoch=1, zk_version=0, leader_recovery_state=0,
                offline=True, under_replicated=False, under_min_isr=False, at_min_isr=False,
                preferred_leader=None, min_isr=1, min_isr_source="assumed", pending_deletion=False, health="offline",
            )
        )  # fmt: skip
    for (tid, component), days in COMPONENTS.items():
        capacity, failed, executed = days[i]
        out.append(
            StormComponentStats(
                root="/storm",
                topology_id=tid, component=component, component_type="bolt", window="600", executors=2, tasks=2,
                emitted=executed, transferred=executed, acked=executed - failed, failed=failed,
                complete_latency_ms=None, executed=executed, execute_latency_ms=1.0, process_latency_ms=1.0,
                capacity=capacity, stale_executors=0, last_error_at=None, last_error_host=None,
                last_error_port=None, last_error=None,
            )
        )  # fmt: skip
    for topic in TOPICS[i]:
        out.append(
            KafkaTopic(
                root="/kafka",
                topic=topic, version=3, topic_id=None, partition_count=2, replication_factor=3,
                reassigning_partitions=0,
            )
        )  # fmt: skip
    for (subtree, root, kind, meaning), days in USAGE.items():
        znodes, size = days[i]
        for by, key in (("subtree", subtree), ("record_kind", kind)):
            out.append(
                ZkUsage(
                    by=by, key=key, meaning=meaning, root=root, znodes=znodes, data_bytes=size, ephemerals=0,
                    share_pct=0.0, largest_path=subtree, largest_bytes=size,
                )
            )  # fmt: skip
    for n in range(i + 2):
        out.append(
            Znode(
                path=f"/storm/x/{n}", czxid=1, mzxid=1, pzxid=1, ctime_ms=0, mtime_ms=0, version=0, cversion=0,
                aversion=0, ephemeral_owner=0, data_length=10, num_children=0, ephemeral=False, encoding="empty",
            )
        )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("history") / "snapshots"
    for i in range(DAYS + 1):
        with Snapshot(str(out), snapshot_id=f"c1@{i}", cluster="c1", snapshot_time=_day(i)) as snap:
            for record in _records(min(i, DAYS - 1)):
                snap.add(record)
            snap.commit({})
    (out / "_manifests" / "c1@5.json").unlink()  # a run that died before its manifest: not a snapshot
    return out


@pytest.fixture(scope="module")
def result(spark: Any, week: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("metrics")
    html = out / "report.html"
    progress = _Recorder()
    outcome = run_history(spark, str(week), out=str(out / "tables"), html=str(html), progress=progress)
    outcome.stages = progress.stages  # type: ignore[attr-defined]
    return outcome, out, html


class _Recorder:
    """A ``Progress`` that keeps the stages it is told of."""

    def __init__(self) -> None:
        self.stages: list[str] = []

    def stage(self, description: str, count: Any = None, unit: str = "") -> None:
        self.stages.append(description)

    def stop(self) -> None:
        pass


def test_history_reports_each_stage_as_it_starts(result: Any) -> None:
    """The manifests, the facts of the new snapshots, the metrics (computed several at a time), the
    incidents and the report, numbered out of the total."""
    outcome, _, _ = result
    assert outcome.stages == [
        "reading the manifests",
        f"facts of {DAYS} new snapshots (1/4)",
        f"{len(METRICS)} metrics (2/4)",
        "incidents (3/4)",
        "the report (4/4)",
    ]


def _table(spark: Any, result: Any, name: str) -> list[dict[str, Any]]:
    _, out, _ = result
    return [r.asDict() for r in spark.read.parquet(str(out / "tables" / name)).collect()]


def _per_day(rows: list[dict[str, Any]], column: str) -> list[Any]:
    by_time = {r["snapshot_time"].astimezone(UTC): r[column] for r in rows}
    return [by_time.get(_day(i)) for i in range(DAYS)]


def test_only_committed_snapshots_are_read(result: Any) -> None:
    outcome, _, _ = result
    assert outcome.snapshots == DAYS and outcome.clusters == ["c1"]
    assert outcome.last == _day(DAYS - 1)
    assert set(outcome.tables) == {m.name for m in METRICS} | {"incidents"}


def _incidents(outcome: Any, kind: str) -> list[Any]:
    return [i for i in outcome.incidents if i.kind == kind]


def test_incidents_name_what_happened_and_when(spark: Any, result: Any) -> None:
    """Each staged event of the week, as an incident naming its subjects, dated, linked to its chart;
    the same incidents as the ``incidents`` table."""
    outcome, _, _ = result
    (gone,) = _incidents(outcome, "broker_gone")  # broker 3 is not registered on day 1 only
    assert (gone.subjects, gone.started, gone.ended, gone.ongoing) == (["broker 3"], _day(1), _day(2), False)
    # named as it was when it went, not as it came back
    assert "broker 3 (b3:9092)" in gone.summary and "a replica of 2 partitions" in gone.summary
    (missing,) = _incidents(outcome, "supervisor_missing")
    assert (missing.subjects, missing.started, missing.ended) == (["h2"], _day(1), _day(2))
    shrinks = _incidents(outcome, "isr_shrink")
    expected = [(_day(i), b) for i in range(1, DAYS) for b in sorted(set(ISR_T0[i - 1]) - set(ISR_T0[i]))]
    assert [(i.started, i.subjects) for i in shrinks] == [(day, [f"broker {b}", "t"]) for day, b in expected]
    moves = _incidents(outcome, "leader_moves")
    changes = [(_day(i), LEADER_T1[i - 1]) for i in range(1, DAYS) if LEADER_T1[i] != LEADER_T1[i - 1]]
    assert [(i.started, i.subjects[0]) for i in moves] == [(day, f"broker {b}") for day, b in changes]
    elections = _incidents(outcome, "controller_election")
    assert [(i.started, i.summary) for i in elections] == [
        (_day(2), "controller moved from broker 1 to broker 2 (2 elections)"),
        (_day(4), "controller re-elected on broker 2"),
    ]
    (offline,) = _incidents(outcome, "partitions_offline")  # from night 1 on, three at most (night 2)
    assert (offline.started, offline.ended, offline.snapshots, offline.count) == (_day(1), None, 4, 3)
    assert offline.subjects == ["t", "u"]  # t's most at once (2, night 2), though none of t's since night 3
    assert offline.summary.endswith("in 4 snapshots, still offline; topics t (2), u (1)")
    (burst,) = _incidents(outcome, "error_burst")
    assert burst.subjects == ["C", "C/sink"] and burst.count == 12
    assert "most common (12): java.net.ConnectException: Connection refused: redis-N:N" in burst.summary
    assert [i.chart for i in (gone, missing, shrinks[0], moves[0], elections[0], burst)] == [
        "kafka_brokers",
        "storm_supervisors",
        "kafka_isr_shrinks",
        "kafka_leader_changes",
        "kafka_controller",
        "storm_errors_daily",
    ]
    stored = _table(spark, result, "incidents")
    assert sorted((r["kind"], r["summary"]) for r in stored) == sorted((i.kind, i.summary) for i in outcome.incidents)


def test_a_topology_gone_is_one_incident_at_the_first_snapshot_without_it(result: Any) -> None:
    """Topology B (INACTIVE on day 1) is not in day 2's snapshot: named with its name, id and last status
    at day 2, ended there (an id never comes back); A and C, there to the end, are not named."""
    outcome, _, _ = result
    (gone,) = _incidents(outcome, "topology_gone")
    assert (gone.subjects, gone.started, gone.ended, gone.ongoing) == (["B"], _day(2), _day(2), False)
    assert gone.summary == "topology words-b (B) gone since the previous snapshot; last seen INACTIVE"
    assert (gone.system, gone.level, gone.chart) == ("Storm", "warning", "storm_topology_churn")


def test_storm_topology_metrics(spark: Any, result: Any) -> None:
    rows = _table(spark, result, "storm_topology_status")
    got = {(r["snapshot_time"].astimezone(UTC), r["status"]): r["topologies"] for r in rows}
    expected: dict[Any, int] = {}
    for i, topologies in enumerate(TOPOLOGIES):
        for status in topologies.values():
            expected[(_day(i), status)] = expected.get((_day(i), status), 0) + 1
    assert got == expected
    churn = _table(spark, result, "storm_topology_churn")
    appeared = [0] + [len(set(TOPOLOGIES[i]) - set(TOPOLOGIES[i - 1])) for i in range(1, DAYS)]
    gone = [0] + [len(set(TOPOLOGIES[i - 1]) - set(TOPOLOGIES[i])) for i in range(1, DAYS)]
    assert _per_day(churn, "topologies_appeared") == appeared
    assert _per_day(churn, "topologies_disappeared") == gone


def test_errors_are_deduplicated_and_grouped_by_signature(spark: Any, result: Any) -> None:
    daily = _table(spark, result, "storm_errors_daily")
    expected: dict[Any, int] = {}
    for (tid, component, secs, _), _days in ERRORS:
        key = (datetime.fromtimestamp(secs, UTC).date(), tid, component)
        expected[key] = expected.get(key, 0) + 1
    assert {(r["day"], r["topology_id"], r["component"]): r["errors"] for r in daily} == expected
    signatures = {r["signature"]: r for r in _table(spark, result, "storm_error_signatures")}
    assert signatures["java.io.IOException: timeout after N ms"]["errors"] == 2
    assert signatures["java.io.IOException: timeout after N ms"]["components"] == 2
    assert signatures["java.lang.NullPointerException"]["errors"] == 1


def test_supervisor_presence_flaps_restarts_and_slots(spark: Any, result: Any) -> None:
    per = _table(spark, result, "storm_supervisors")
    present = [sum(1 for u in SUPERVISORS.values() if u[i] is not None) for i in range(DAYS)]
    assert _per_day(per, "present") == present
    assert _per_day(per, "missing") == [sum(1 for u in SUPERVISORS.values() if u[i] is None) for i in range(DAYS)]
    restarts = [0] + [
        sum(1 for u in SUPERVISORS.values() if None not in (u[i], u[i - 1]) and u[i] < u[i - 1]) for i in range(1, DAYS)
    ]
    assert _per_day(per, "restarts") == restarts
    used = [1] * DAYS
    slots = [2 + (1 if SUPERVISORS["h2"][i] is not None else 0) for i in range(DAYS)]
    assert _per_day(per, "slot_utilisation_pct") == [round(100 * u / s, 1) for u, s in zip(used, slots, strict=True)]
    flaps = {r["hostname"]: r for r in _table(spark, result, "storm_supervisor_flaps")}
    assert (flaps["h2"]["flaps"], flaps["h2"]["restarts"], flaps["h2"]["snapshots_absent"]) == (1, 1, 1)
    assert (flaps["h1"]["flaps"], flaps["h1"]["restarts"]) == (0, 0)


def test_workers_and_executor_moves(spark: Any, result: Any) -> None:
    per = _table(spark, result, "storm_workers")
    days = WORKERS[("A", "n1", 6700)]
    assert _per_day(per, "stale") == [int(stale) for _, stale in days]
    assert _per_day(per, "restarts") == [0] + [int(days[i][0] < days[i - 1][0]) for i in range(1, DAYS)]
    moves = _table(spark, result, "storm_executor_moves")
    moved_days = [i for i in range(1, DAYS) if EXECUTOR_PLACES[i] != EXECUTOR_PLACES[i - 1]]
    assert [(r["snapshot_time"].astimezone(UTC), r["moved_executors"]) for r in moves] == [
        (_day(i), 1) for i in moved_days
    ]


def test_component_trend_busy_bolts_and_rising_failures(spark: Any, result: Any) -> None:
    trend = _table(spark, result, "storm_component_trend")
    parse = [r for r in trend if r["component_name"] == "A/parse"]
    assert _per_day(parse, "capacity") == [c for c, _, _ in COMPONENTS[("A", "parse")]]
    assert _per_day(parse, "throughput_per_s") == [e / 600 for _, _, e in COMPONENTS[("A", "parse")]]
    # above 0.8 from day 1 to the newest snapshot: 4 in a row; sink's one busy day is not a trend
    busy = {r["component_name"]: r for r in _table(spark, result, "storm_busy_components")}
    assert set(busy) == {"A/parse"}
    assert (busy["A/parse"]["busy_snapshots"], busy["A/parse"]["lowest_capacity"]) == (4, 0.85)
    rises = {r["component_name"]: r for r in _table(spark, result, "storm_failure_rises")}
    assert set(rises) == {"A/sink"}
    assert (rises["A/sink"]["failure_rise"], rises["A/sink"]["snapshots_rising"]) == (9, 2)
    _, _, html = result
    page = html.read_text()
    assert "A/parse (4)" in page and "A/sink (9)" in page  # named in the report


def test_kafka_brokers_and_controller(spark: Any, result: Any) -> None:
    per = _table(spark, result, "kafka_brokers")
    assert _per_day(per, "brokers") == [len(b) for b in BROKERS]
    assert _per_day(per, "brokers_disappeared") == [0] + [
        len(set(BROKERS[i - 1]) - set(BROKERS[i])) for i in range(1, DAYS)
    ]
    restarts = [0] + [
        sum(1 for b, stamp in BROKERS[i].items() if b in BROKERS[i - 1] and BROKERS[i - 1][b] != stamp)
        for i in range(1, DAYS)
    ]
    assert _per_day(per, "restarts") == restarts
    controller = _table(spark, result, "kafka_controller")
    assert _per_day(controller, "controller") == [c for c, _ in CONTROLLER]
    assert _per_day(controller, "elections") == [None] + [
        CONTROLLER[i][1] - CONTROLLER[i - 1][1] for i in range(1, DAYS)
    ]


def test_kafka_partition_health_shrinks_and_chronic(spark: Any, result: Any) -> None:
    health = _table(spark, result, "kafka_partition_health")
    assert _per_day(health, "under_replicated") == [int(len(isr) < 3) for isr in ISR_T0]
    assert _per_day(health, "not_preferred_leader") == [int(leader != 1) for leader in LEADER_T1]
    shrinks = _table(spark, result, "kafka_isr_shrinks")
    expected = [(_day(i), broker) for i in range(1, DAYS) for broker in sorted(set(ISR_T0[i - 1]) - set(ISR_T0[i]))]
    assert sorted((r["snapshot_time"].astimezone(UTC), r["broker_id"]) for r in shrinks) == expected
    leaders = _table(spark, result, "kafka_leader_changes")
    changes = [(_day(i), LEADER_T1[i - 1]) for i in range(1, DAYS) if LEADER_T1[i] != LEADER_T1[i - 1]]
    assert [(r["snapshot_time"].astimezone(UTC), r["broker_id"]) for r in leaders] == changes
    chronic = _table(spark, result, "kafka_chronic_under_replicated")
    run = [i for i, isr in enumerate(ISR_T0) if len(isr) < 3]
    assert len(run) >= CHRONIC_SNAPSHOTS
    assert [(r["topic"], r["partition"], r["consecutive_snapshots"], r["ongoing"]) for r in chronic] == [
        ("t", 0, len(run), run[-1] == DAYS - 1)
    ]


def test_topic_churn_and_zookeeper_growth(spark: Any, result: Any) -> None:
    churn = _table(spark, result, "kafka_topic_churn")
    assert _per_day(churn, "topics_appeared") == [0] + [len(TOPICS[i] - TOPICS[i - 1]) for i in range(1, DAYS)]
    assert _per_day(churn, "topics_disappeared") == [0] + [len(TOPICS[i - 1] - TOPICS[i]) for i in range(1, DAYS)]
    subtrees = _table(spark, result, "zookeeper_subtrees")
    assert _per_day(subtrees, "znodes") == [i + 2 for i in range(DAYS)]
    assert _per_day(subtrees, "bytes") == [10 * (i + 2) for i in range(DAYS)]


def test_zookeeper_usage_per_subtree_and_record_kind_and_its_growth(spark: Any, result: Any) -> None:
    """What fills ZooKeeper night by night (the snapshots' ``zk_usage``): data bytes per subtree and per
    record kind, and an incident for each subtree that grew by half again and by 1 MiB or 10,000 znodes."""
    subtrees = _table(spark, result, "zookeeper_subtree_bytes")
    kinds = _table(spark, result, "zookeeper_record_kinds")
    for (subtree, root, kind, meaning), days in USAGE.items():
        mine = [r for r in subtrees if r["subtree"] == subtree]
        assert _per_day(mine, "data_bytes") == [size for _, size in days]
        assert _per_day(mine, "znodes") == [n for n, _ in days] and {r["meaning"] for r in mine} == {meaning}
        assert _per_day([r for r in kinds if r["record_kind"] == f"{kind} {root}"], "data_bytes") == [
            size for _, size in days
        ]
    outcome, _, html = result
    growth = _incidents(outcome, "zookeeper_growth")
    assert [(i.started, i.subjects, i.chart) for i in growth] == [
        (_day(2), ["/storm/workerbeats"], "zookeeper_subtree_bytes"),
        (_day(4), ["/kafka/consumers"], "zookeeper_subtree_bytes"),
    ]
    assert growth[0].summary == (
        "/storm/workerbeats (Storm worker heartbeats) grew from 1.0 MiB in 110 znodes to 3.8 MiB in 400 znodes "
        "since the previous snapshot"
    )
    assert growth[1].summary.startswith("/kafka/consumers (old Kafka consumers' offsets) grew from 10 bytes in 1")
    page = html.read_text()
    assert "Data bytes per record kind" in page and "Data bytes per subtree" in page


def test_a_small_read_runs_without_whole_stage_code_generation(spark: Any) -> None:
    """Compiling Java per stage costs more than a small read's stages do (``_plan_for``), and a large
    read keeps it; the result is Spark's either way, as every metric test here checks on a small read."""
    from zkstorm.jobs.history import SMALL_ROWS, _plan_for

    before = spark.conf.get("spark.sql.codegen.wholeStage")
    try:
        assert _plan_for(spark, 10) and spark.conf.get("spark.sql.codegen.wholeStage") == "false"
        assert not _plan_for(spark, SMALL_ROWS) and spark.conf.get("spark.sql.codegen.wholeStage") == "true"
    finally:
        spark.conf.set("spark.sql.codegen.wholeStage", before)


def test_a_large_read_gives_the_tables_a_small_read_does(
    spark: Any, week: Path, result: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The week read as if it were large (``SMALL_ROWS`` 0): code generation on, the snapshot frame
    broadcast, each fact shuffled into its sorted file (``HistoryStore.write``, ``large``); every table as
    the small read's."""
    from zkstorm.jobs import history

    monkeypatch.setattr(history, "SMALL_ROWS", 0)
    out = tmp_path / "history"
    run_history(spark, str(week), out=str(out))
    _, full_out, _ = result
    assert history_tables.differing(out, full_out / "tables") == {}
    assert _facts_out_of_snapshot_order(out) == []


def test_since_until_select_days(spark: Any, week: Path) -> None:
    outcome = run_history(spark, str(week), since=_day(1).date(), until=_day(2).date())
    assert outcome.snapshots == 2 and outcome.first == _day(1)


def test_incremental_runs_read_only_new_snapshots_and_agree_with_a_full_rebuild(
    spark: Any, week: Path, result: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Night by night as cron runs it: the first two nights, then two more, then one, then none; each
    later run reads only the new snapshots and the one before them, and the tables end up equal to the
    full rebuild's (the ``result`` fixture): the sums, runs and hosts the folded tables carry go on across
    the runs (a failure rise in the second and one in the third, a busy bolt's run and an
    under-replicated partition's over all three). The runs kept are compacted into one. The incidents
    are found again from a cutoff on (``jobs/recheck.py``): the second run from the night before broker
    3 went (still gone after the first run), the third from the night before it, and the error burst whose
    day's errors the second and third runs each saw half of is found whole. The partitions offline
    from night 1 on are one incident, though each run saw a part of it and read only its own nights and the
    one before: their fact carries the run."""
    from pyspark.testing import assertDataFrameEqual

    from zkstorm.jobs import store

    monkeypatch.setattr(store, "COMPACT_AFTER", 1)
    snapshots, out = tmp_path / "snapshots", tmp_path / "history"
    shutil.copytree(week, snapshots)
    later = {i: (snapshots / "_manifests" / f"c1@{i}.json").read_bytes() for i in (2, 3, 4)}
    for i in later:
        (snapshots / "_manifests" / f"c1@{i}.json").unlink()

    def nights(*days: int) -> None:
        for i in days:
            (snapshots / "_manifests" / f"c1@{i}.json").write_bytes(later[i])

    first = run_history(spark, str(snapshots), out=str(out))
    assert (first.mode, first.read, first.snapshots) == ("full (no earlier history under --out)", 2, 2)
    still = [i.kind for i in first.incidents if i.ongoing]
    assert first.incidents_read == 2 and still == ["broker_gone", "partitions_offline", "supervisor_missing"]
    nights(2, 3)
    second = run_history(spark, str(snapshots), out=str(out))
    assert (second.mode, second.read, second.snapshots) == ("incremental", 3, 4)  # 2 new + the one before
    assert second.incidents_read == 4  # from night 0, the last with broker 3
    assert len(store.HistoryStore(spark, str(out)).runs) == 1  # compacted
    nights(4)
    third = run_history(spark, str(snapshots), out=str(out))
    assert (third.mode, third.read, third.snapshots, third.incidents_read) == ("incremental", 2, DAYS, 2)
    idle = run_history(spark, str(snapshots), out=str(out))
    assert (idle.mode, idle.read, idle.snapshots, idle.incidents_read) == ("incremental", 0, DAYS, 0)

    full, full_out, _ = result
    assert third.tables == full.tables == idle.tables
    assert [i.summary for i in third.incidents] == [i.summary for i in full.incidents]
    assert history_tables.differing(out, full_out / "tables") == {}
    assert _facts_out_of_snapshot_order(out) == []  # the compacted run too
    # the topologies present (topology_gone's fact), kept night by night, are the rebuild's
    kept_facts, rebuilt_facts = out / "_history" / "facts", full_out / "tables" / "_history" / "facts"
    assert {p.name for p in kept_facts.iterdir()} == {p.name for p in rebuilt_facts.iterdir()}
    present = [spark.read.parquet(str(f / "storm_topology_presence")).drop("run") for f in (kept_facts, rebuilt_facts)]
    assert present[0].count() == sum(len(t) for t in TOPOLOGIES)
    assertDataFrameEqual(*present)


def _facts_out_of_snapshot_order(out: Path) -> list[str]:
    """The kept fact files (``_history/facts/<fact>/run=<id>``) whose rows are not in ``snapshot_id``
    order: a nightly run reads one night of them by that id, and only sorted files let Parquet's page
    statistics skip the others."""
    import pyarrow.parquet as pq

    unsorted = []
    files = sorted((out / "_history" / "facts").glob("*/run=*/*.parquet"))
    for path in files:
        ids = pq.read_table(path, columns=["snapshot_id"])["snapshot_id"].to_pylist()
        if ids != sorted(ids):
            unsorted.append(str(path.relative_to(out)))
    assert files
    return unsorted


def test_the_kept_facts_are_sorted_by_snapshot_so_a_night_is_read_alone(result: Any) -> None:
    """The full rebuild's facts, each file in ``snapshot_id`` order (``jobs/store.py``): the kept rows of
    the night before a new one are then read without reading the year's."""
    _, full_out, _ = result
    assert _facts_out_of_snapshot_order(full_out / "tables") == []


def _weeks_history(result: Any, tmp_path: Path) -> Path:
    """A copy of the history the ``result`` fixture built over the whole week, for a test to run on."""
    _, full_out, _ = result
    return Path(shutil.copytree(full_out / "tables", tmp_path / "history"))


def test_an_older_snapshot_or_full_makes_a_full_rebuild(spark: Any, week: Path, result: Any, tmp_path: Path) -> None:
    """On the week's history: a snapshot committed after it, but taken before the newest one it keeps (a
    run that finished late), makes the next run a full rebuild; so does ``full`` whatever is kept."""
    snapshots, out = tmp_path / "snapshots", _weeks_history(result, tmp_path)
    shutil.copytree(week, snapshots)
    late_at = _day(2) + timedelta(hours=12)
    with Snapshot(str(snapshots), snapshot_id="c1@late", cluster="c1", snapshot_time=late_at) as snap:
        snap.add_all(_records(2))
        snap.commit({})
    late = run_history(spark, str(snapshots), out=str(out))
    assert late.mode == "full (snapshot c1@late is older than the newest one kept)" and late.read == DAYS + 1
    forced = run_history(spark, str(snapshots), out=str(out), full=True)
    assert (forced.mode, forced.read) == ("full", DAYS + 1)


def test_a_metric_table_gone_from_out_makes_a_full_rebuild(spark: Any, week: Path, result: Any, tmp_path: Path) -> None:
    """A table removed from --out by hand: a nightly run would fold the new nights into nothing (or append
    them to nothing), and the table would lose its past. The run is a full rebuild instead, saying so,
    and the tables are the whole week's again."""
    out = _weeks_history(result, tmp_path)
    for name in ("storm_errors_daily", "storm_workers"):  # a folded table and an appended one
        shutil.rmtree(out / name)
    rebuilt = run_history(spark, str(week), out=str(out))
    assert (rebuilt.mode, rebuilt.read) == ("full (the table storm_errors_daily under --out is gone)", DAYS)
    _, full_out, _ = result
    assert history_tables.differing(out, full_out / "tables") == {}


def _a_later_night(snapshots: Path, day: int) -> str:
    """Commit one more snapshot of c1, taken on ``day`` (after the week), with ``day - 3``'s records."""
    snapshot_id = f"c1@{day}"
    with Snapshot(str(snapshots), snapshot_id=snapshot_id, cluster="c1", snapshot_time=_day(day)) as snap:
        snap.add_all(_records(day - 3))
        snap.commit({})
    return snapshot_id


def _parts(table: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in table.glob("part-*.parquet")}


def _assert_equal_to_a_full_rebuild(spark: Any, snapshots: Path, out: Path, tmp_path: Path) -> None:
    """Every metric table and the incidents under ``out`` are those of a full rebuild of ``snapshots``."""
    rebuilt_out = tmp_path / "rebuilt"
    rebuilt = run_history(spark, str(snapshots), out=str(rebuilt_out), full=True)
    assert history_tables.differing(out, rebuilt_out) == {}
    assert rebuilt.tables == {name: history_tables.rows(out, name) for name in rebuilt.tables}


def test_a_nightly_run_appends_the_new_nights_rows_to_the_per_snapshot_tables(
    spark: Any, week: Path, result: Any, tmp_path: Path
) -> None:
    """On the week's history, one more night: each per-snapshot metric table keeps its files as they were
    (not rewritten) and gains files holding the new night's rows alone, computed from its facts only. The
    incidents table, damaged by hand, does not stop the night: its incidents are found again whole."""
    from pyspark.sql import functions as F

    from zkstorm.jobs.metrics import PER_SNAPSHOT

    snapshots, out = tmp_path / "snapshots", _weeks_history(result, tmp_path)
    shutil.copytree(week, snapshots)
    for part in (out / "incidents").glob("part-*"):
        part.write_bytes(b"not parquet")
    before = {name: _parts(out / name) for name in PER_SNAPSHOT}
    assert all(before.values())
    _a_later_night(snapshots, DAYS + 1)
    nightly = run_history(spark, str(snapshots), out=str(out))
    assert (nightly.mode, nightly.incidents_read) == ("incremental", DAYS + 1)  # every incident found again
    new_night = {str(_day(DAYS + 1)).replace("+00:00", "")}
    times = {}
    for name in PER_SNAPSHOT:
        after = _parts(out / name)
        assert {part: after[part] for part in before[name]} == before[name], name  # untouched
        added = [str(out / name / part) for part in sorted(set(after) - set(before[name]))]
        assert added, name  # a night without rows of it (no executor moved) adds an empty file
        rows = spark.read.parquet(*added).select(F.col("snapshot_time").cast("string")).distinct().collect()
        times[name] = {r[0] for r in rows}
    assert all(found <= new_night for found in times.values()), times
    assert times["kafka_partition_health"] == times["zookeeper_subtrees"] == new_night
    assert not (out / "_history" / "pending").exists() or not any((out / "_history" / "pending").iterdir())
    _assert_equal_to_a_full_rebuild(spark, snapshots, out, tmp_path)


def test_a_run_killed_before_or_after_its_commit_leaves_the_tables_a_full_rebuild_would(
    spark: Any, week: Path, result: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed after staging its new rows but before its marker leaves nothing the tables show, and
    the next run does that night again; one killed after its marker but before it moved its rows into
    the tables has them moved by the next run, before it reads anything. Either way the tables end up a
    full rebuild's."""
    from zkstorm.jobs import store

    snapshots, out = tmp_path / "snapshots", _weeks_history(result, tmp_path)
    shutil.copytree(week, snapshots)
    kept = {name: _parts(out / name) for name in [m.name for m in METRICS if m.per_snapshot]}

    class Killed(Exception):
        pass

    def kill(*args: Any, **kwargs: Any) -> Any:
        raise Killed

    _a_later_night(snapshots, DAYS + 1)
    with monkeypatch.context() as m:
        m.setattr(store, "iso_utc", kill)  # the marker's first step, after the new rows are staged
        with pytest.raises(Killed):
            run_history(spark, str(snapshots), out=str(out))
    assert {name: _parts(out / name) for name in kept} == kept  # nothing of the killed run shows
    again = run_history(spark, str(snapshots), out=str(out))
    assert (again.mode, again.read) == ("incremental", 2)  # the new night and the one before it

    _a_later_night(snapshots, DAYS + 2)
    with monkeypatch.context() as m:
        m.setattr(store.HistoryStore, "publish", kill)
        with pytest.raises(Killed):
            run_history(spark, str(snapshots), out=str(out))
    settled = run_history(spark, str(snapshots), out=str(out))
    assert (settled.mode, settled.read) == ("incremental", 0)  # committed: published, not done again
    _assert_equal_to_a_full_rebuild(spark, snapshots, out, tmp_path)


# --- the report in a real browser -----------------------------------------------------------------------

REPORT_PROBE = """
const plots = Array.from(document.querySelectorAll('figure.chart .plot'));
const charts = plots.map(p => [p.closest('figure').id, !!p._fullLayout, p.querySelectorAll('svg.main-svg').length,
                               (p.data || []).length, p.getBoundingClientRect().height]);
const tables = Array.from(document.querySelectorAll('section.top')).map(s => s.id);
const links = Array.from(document.querySelectorAll('#timeline a')).map(a => a.getAttribute('href'));
const targets = links.filter(h => document.querySelector(h) !== null).length;
let hovered = null, zoomed = null;
const plot = plots.find(p => (p.data || []).length > 0 && p.data[0].x.length > 1);
if (plot) {
  Plotly.Fx.hover(plot, [{curveNumber: 0, pointNumber: 1}]);
  hovered = plot.querySelector('.hoverlayer').textContent;
  const xs = plot.data[0].x;
  Plotly.relayout(plot, {'xaxis.range': [xs[0], xs[1]]});
  zoomed = plot._fullLayout.xaxis.range.map(String);
}
return {charts, tables, links, targets, hovered, zoomed,
        timeline: document.querySelector('#timeline').innerText,
        requests: performance.getEntriesByType('resource').length};
"""


def browse(browser: tuple[str, str], html: Path, tmp_path: Path, *, screenshot: Path | None = None) -> dict[str, Any]:
    """Open the report in headless Chromium (the ``browser`` fixture's), run ``REPORT_PROBE`` in it, and
    return what it saw and the console errors (``errors``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = browser
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1500",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(html.as_uri())
        if screenshot is not None:
            driver.save_screenshot(str(screenshot))
        seen: dict[str, Any] = driver.execute_script(REPORT_PROBE)
        seen["errors"] = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    finally:
        driver.quit()
    return seen


def check_page(seen: dict[str, Any]) -> None:
    """What every report must do in a browser: no console error, nothing fetched (it is one file), every
    line chart drawn by Plotly, hover and zoom answering, every timeline link landing on its chart."""
    from zkstorm.jobs.report import CHARTS

    assert seen["errors"] == []
    assert seen["requests"] == 0
    lines = sorted(name for name, (kind, *_) in CHARTS.items() if kind == "lines")
    assert sorted(c[0] for c in seen["charts"]) == lines
    assert all(drawn and svgs > 0 and height > 0 for _, drawn, svgs, _, height in seen["charts"])
    assert {name for name, (kind, *_) in CHARTS.items() if kind == "top"} <= set(seen["tables"])
    assert seen["hovered"] and seen["zoomed"]
    assert seen["targets"] == len(seen["links"])


def test_the_html_report_in_headless_chromium(result: Any, browser: tuple[str, str], tmp_path: Path) -> None:
    """The week's report: the timeline names each staged incident's subjects, charts are interactive."""
    outcome, _, html = result
    seen = browse(browser, html, tmp_path)
    check_page(seen)
    drawn = {name: traces for name, _, _, traces, _ in seen["charts"]}
    assert drawn["kafka_partition_health"] == 4 and drawn["kafka_isr_shrinks"] >= 1
    for subject in ("broker 3", "h2", "C/sink", "broker 2"):
        assert subject in seen["timeline"]
    assert len(seen["links"]) == len(outcome.incidents)
    page = html.read_text()
    assert "Topics by replicas that left an ISR" in page and "A/parse (4)" in page


def test_history_command(spark: Any, week: Path, result: Any, tmp_path: Path) -> None:
    """The command in this process (on the suite's Spark session), on a copy of the week's history: the
    summary and the report of an incremental run that reads nothing new, then ``--full``. (A first run
    with ``--out``, and its mode, are ``test_incremental_runs_read_only_new_snapshots...``'s.)"""
    html = tmp_path / "r.html"
    out = _weeks_history(result, tmp_path)
    again = run("history", str(week), "--html", str(html), "--out", str(out), "--master", "local[1]")
    assert again.exit_code == 0, again.stderr
    assert "5 snapshots" in again.stdout and "Partition health" in again.stdout
    assert "incremental run, read 0" in again.stdout
    lines = sum(1 for m in METRICS if CHARTS[m.name][0] == "lines")
    assert html.read_text().count('<figure class="chart"') == lines
    assert "incidents" in again.stdout and "broker 3" in again.stdout
    forced = run("history", str(week), "--out", str(out), "--full", "--master", "local[1]")
    assert forced.exit_code == 0, forced.stderr
    assert "5 snapshots" in forced.stdout and "full run, read 5" in forced.stdout


def test_a_damaged_manifest_is_skipped_with_one_warning(
    spark: Any, week: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One damaged manifest does not stop the history of every other night; the warning names it. (Read
    from the log records: a CliRunner run in this process logs to the stderr of the first one.)"""
    broken = tmp_path / "broken"
    shutil.copytree(week, broken)
    (broken / "_manifests" / "c1@0.json").write_text('{"snapshot_id": "c1@0", "cluster": "c1", "snapsh')
    with caplog.at_level(logging.WARNING, logger="zkstorm"):
        result = run("history", str(broken), "--master", "local[1]")
    assert result.exit_code == 0, result.output
    assert "4 snapshots" in result.stdout and "Traceback" not in result.stderr
    (warning,) = [r.getMessage() for r in caplog.records if "c1@0.json" in r.getMessage()]
    assert warning == (
        f"file:{broken}/_manifests/c1@0.json: not a zkstorm snapshot "
        "manifest (not JSON: Unterminated string starting at: line 1 column 42 (char 41)); skipped"
    )


def test_history_errors_are_one_line(spark: Any, week: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(week, damaged)
    for part in (damaged / "kafka_partitions").rglob("*.parquet"):
        part.write_bytes(b"not parquet")
    result = run("history", str(damaged))
    assert result.exit_code == 1 and result.stderr.startswith("zkstorm: the history job failed: ")
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    marker = tmp_path / "out" / "_history" / "runs" / "r1" / "part-00000.txt"
    marker.parent.mkdir(parents=True)
    marker.write_text("{not json")  # a damaged run marker under --out
    result = run("history", str(week), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1 and "not a zkstorm history run marker" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --- diff -----------------------------------------------------------------------------------------------


def test_diff_of_two_fixture_snapshots(writer: KazooClient, zk_root: Chroot, tmp_path: Path) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    out = tmp_path / "snaps"
    args = ["--zk", zk_root.zk, "--kafka-root", "/"]
    assert run(*args, "snapshot", str(out), "--snapshot-id", "a").exit_code == 0
    brokers = sorted(writer.get_children(zk_root.path + "/brokers/ids"))
    writer.delete(f"{zk_root.path}/brokers/ids/{brokers[0]}")
    assert run(*args, "snapshot", str(out), "--snapshot-id", "b").exit_code == 0
    result = run("diff", str(out), "a", "b", "-f", "json")
    assert result.exit_code == 0, result.stderr
    by_table = {d["table"]: d for d in json.loads(result.stdout)}
    # the broker's registration is gone, but replica lists still name it: its row changes to alive = false
    assert (by_table["kafka_brokers"]["removed"], by_table["kafka_brokers"]["added"]) == (1, 1)
    (removed,) = by_table["kafka_brokers"]["removed_examples"]
    (added,) = by_table["kafka_brokers"]["added_examples"]
    assert removed["broker_id"] == added["broker_id"] == int(brokers[0])
    assert removed["alive"] is True and added["alive"] is False and added["host"] is None
    assert by_table["kafka_topics"]["added"] == by_table["kafka_topics"]["removed"] == 0
    live = run(*args, "diff", str(out), "b", "--live", "-f", "json")
    assert live.exit_code == 0, live.stderr
    assert {d["table"]: d["removed"] for d in json.loads(live.stdout)}["kafka_brokers"] == 0
    assert run("diff", str(out), "a", "nope").exit_code == 4
    assert run("diff", str(out), "a").exit_code == 2


# --- the demo's week ------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
SCREENSHOT = REPO / "docs" / "history-report.png"


@pytest.fixture(scope="module")
def demo_week(zk_server: Any, writer: KazooClient, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The demo's week (``scripts/demo_week.py``, unchanged) played on the synthetic sandbox cluster in a
    chroot of the suite's ZooKeeper, with what it stages: which broker dies, which broker's followers
    fall out of ISRs, which supervisor drops out, which topology bursts into errors."""
    import subprocess
    import sys
    import time

    from zkstorm.sandbox import synth

    chroot = "/demo-week"
    writer.ensure_path(chroot)
    pending = [
        writer.create_async(chroot + n.path, n.data, ephemeral=n.ephemeral, sequence=n.sequential)
        for n in synth.cluster(now=int(time.time()))
    ]
    for request in pending:
        request.get(timeout=30)
    zk = zk_server.connect_string + chroot
    brokers = sorted(writer.get_children(f"{chroot}/kafka/brokers/ids"), key=int)
    supervisors = json.loads(run("--zk", zk, "storm", "supervisors", "-f", "json").stdout)
    flapper = sorted(supervisors, key=lambda s: s["supervisor_id"])[0]["hostname"]
    staged = {
        "gone": f"broker {brokers[-1]}",
        "slow": f"broker {brokers[1]}",
        "supervisor": flapper,
        "burst": sorted(writer.get_children(f"{chroot}/storm/errors"))[0],
    }
    out = tmp_path_factory.mktemp("demo") / "week"
    subprocess.run([sys.executable, str(REPO / "scripts" / "demo_week.py"), zk, str(out)], check=True, timeout=600)
    return out, staged


def test_the_demo_weeks_report_names_its_staged_incidents(
    spark: Any, browser: tuple[str, str], demo_week: Any, tmp_path: Path
) -> None:
    """The report of the demo's week, in Chromium: each incident the demo staged is on the timeline
    with its subject. Its screenshot is docs/history.md's (rewritten with ZKSTORM_UPDATE_GOLDEN=1)."""
    import os

    week, staged = demo_week
    html = tmp_path / "report.html"
    outcome = run_history(spark, str(week), html=str(html))
    kinds = {(i.kind, tuple(i.subjects)) for i in outcome.incidents}
    assert ("broker_gone", (staged["gone"],)) in kinds
    assert ("supervisor_missing", (staged["supervisor"],)) in kinds
    assert any(k == "isr_shrink" and staged["slow"] in s for k, s in kinds)
    assert any(k == "error_burst" and s[0] == staged["burst"] for k, s in kinds)
    assert any(k == "leader_moves" for k, _ in kinds)
    screenshot = SCREENSHOT if os.environ.get("ZKSTORM_UPDATE_GOLDEN") else tmp_path / "report.png"
    seen = browse(browser, html, tmp_path, screenshot=screenshot)
    check_page(seen)
    for subject in staged.values():
        assert subject in seen["timeline"]
    assert screenshot.stat().st_size > 10_000


def test_every_fact_reads_tables_a_snapshot_writes(demo_week: Any) -> None:
    """A fact names its inputs by record type, resolved through the snapshot writer's own table names: every
    table a fact reads is one that the nightly snapshot of a real cluster (the demo's) writes. A renamed
    record fails at import; a table the writer names otherwise fails here, not as a fact that reads nothing."""
    from zkstorm.jobs.metrics import FACTS

    week, _ = demo_week
    written: set[str] = set()
    for path in (week / "_manifests").glob("*.json"):
        written |= set(json.loads(path.read_text())["tables"])
    for fact in FACTS:
        assert fact.reads and all(isinstance(t, type) for t in fact.reads), fact.name
        assert set(fact.tables) <= written, (fact.name, set(fact.tables) - written)


def test_the_docs_show_the_reports_screenshot() -> None:
    page = (REPO / "docs" / "history.md").read_text()
    assert f"]({SCREENSHOT.relative_to(REPO / 'docs')})" in page and SCREENSHOT.exists()


def test_the_snapshot_a_new_one_is_compared_with_is_the_one_just_before_it_in_time_then_id_order() -> None:
    """Two kept snapshots of a cluster taken at the same time: the later by id is the one before the new
    snapshot (the order every fact uses), whichever order the store lists them in."""
    from types import SimpleNamespace

    from zkstorm.jobs.history import _context

    at = datetime(2026, 3, 1, 2, 30, tzinfo=UTC)
    kept = [("c", "snap-b", at), ("c", "snap-a", at), ("c", "snap-0", at - timedelta(days=1))]
    new = [SimpleNamespace(cluster="c", snapshot_id="snap-z", snapshot_time=at + timedelta(days=1))]
    assert _context(kept, new) == {"snap-b"}
    assert _context(list(reversed(kept)), new) == {"snap-b"}
    same_time = [SimpleNamespace(cluster="c", snapshot_id="snap-c", snapshot_time=at)]  # after snap-b by id
    assert _context(kept, same_time) == {"snap-b"}


# --- two clusters of each system on one ensemble ----------------------------------------------------------


def test_a_read_of_few_snapshots_looks_their_columns_up_as_the_join_with_the_snapshot_frame_gives_them(
    spark: Any,
) -> None:
    """A nightly update reads few snapshots, and each row gets its snapshot's columns from a map in the plan
    (``Window.with_snapshot``); a read of many joins the snapshot frame. Both give each row the same
    columns, a ``next_id`` only where the next snapshot is read, and drop rows of snapshots not read."""
    from pyspark.testing import assertDataFrameEqual

    from zkstorm.jobs.facts import SNAPSHOT_COLUMNS, Window, snapshot_lookups
    from zkstorm.jobs.inputs import snapshot_frame, snapshot_rows

    at = datetime(2026, 3, 1, 2, 30, tzinfo=UTC)
    every = [("c1", "a", at), ("c1", "b", at + timedelta(days=1)), ("c1", "c", at + timedelta(days=2)), ("c2", "x", at)]
    reading = {"b", "c", "x"}  # "a" is kept, not read: b's previous snapshot all the same
    rows = spark.createDataFrame([("b", 1), ("c", 2), ("x", 3), ("a", 4)], "snapshot_id string, v int")
    frame = snapshot_frame(spark, every)
    joined = Window(None, frame.where(frame.snapshot_id.isin(sorted(reading))), None)  # type: ignore[arg-type]
    looked_up = Window(
        None,  # type: ignore[arg-type]
        None,
        None,  # type: ignore[arg-type]
        lookups=snapshot_lookups([row for row in snapshot_rows(every) if row[1] in reading]),
    )
    day = timedelta(days=1)
    expected = spark.createDataFrame(
        [
            ("b", 1, "c1", at + day, 1, "a", "c"),
            ("c", 2, "c1", at + 2 * day, 2, "b", None),
            ("x", 3, "c2", at, 0, None, None),
        ],
        "snapshot_id string, v int, cluster string, snapshot_time timestamp, idx int, prev_id string, next_id string",
    )
    for window in (joined, looked_up):
        got = window.with_snapshot(rows, *SNAPSHOT_COLUMNS)
        assert got.columns == ["snapshot_id", "v", *SNAPSHOT_COLUMNS]
        assertDataFrameEqual(got, expected)


def _two_roots_records(day: int) -> list[Any]:
    """Day 1: broker 3 of the Kafka at /kafka is gone and leaves t-0's ISR, supervisor h1 of the Storm
    at /storm-staging is missing; their namesakes under the other roots (/kafka-b, /storm) stay."""
    out: list[Any] = []
    for root in ("/kafka", "/kafka-b"):
        gone = day == 1 and root == "/kafka"
        for broker in (1, 2) if gone else (1, 2, 3):
            out.append(
                KafkaBroker(
                    root=root, broker_id=broker, alive=True, version=4, host=f"{root[1:]}-b{broker}", port=9092,
                    rack=None, jmx_port=None, timestamp_ms=10, registered_at=None, endpoints=(),
                    listener_protocols=(), features=(), broker_epoch=None, session_id=None,
                )
            )  # fmt: skip
        isr = (1, 2) if gone else (1, 2, 3)
        out.append(
            KafkaPartition(
                root=root, topic="t", partition=0, replicas=(1, 2, 3), adding_replicas=(), removing_replicas=(),
                leader=1, leader_epoch=0, isr=isr, controller_epoch=1, zk_version=0, leader_recovery_state=0,
                offline=False, under_replicated=len(isr) < 3, under_min_isr=False, at_min_isr=False,
                preferred_leader=True, min_isr=1, min_isr_source="assumed", pending_deletion=False,
                health="under_replicated" if len(isr) < 3 else "ok",
            )
        )  # fmt: skip
    for root in ("/storm", "/storm-staging"):
        if day == 1 and root == "/storm-staging":
            continue
        out.append(
            StormSupervisor(
                root=root, supervisor_id="h1-id", hostname="h1", assignment_id=None, time_secs=1,
                heartbeat_at=_day(day), uptime_secs=100 + day, used_ports=(), ports=(6700,), version=None,
                server_port=None, memory_capacity_mb=None, cpu_capacity_pct=None, resources=(), scheduler_meta=(),
            )
        )  # fmt: skip
    return out


def test_two_clusters_of_a_system_on_one_ensemble_are_two_histories(spark: Any, tmp_path: Path) -> None:
    """A broker id and a supervisor host that two clusters share are two subjects: one gone from its
    cluster is an incident of that root, though its namesake under the other root stays."""
    out = tmp_path / "snapshots"
    for day in range(3):
        with Snapshot(str(out), snapshot_id=f"c1@{day}", cluster="c1", snapshot_time=_day(day)) as snap:
            snap.add_all(_two_roots_records(day))
            snap.commit({})
    outcome = run_history(spark, str(out), out=str(tmp_path / "history"))
    gone = [(i.root, i.subjects, i.started, i.ended) for i in _incidents(outcome, "broker_gone")]
    assert gone == [("/kafka", ["broker 3"], _day(1), _day(2))]
    missing = [(i.root, i.subjects, i.started) for i in _incidents(outcome, "supervisor_missing")]
    assert missing == [("/storm-staging", ["h1"], _day(1))]
    shrinks = [(i.root, i.subjects) for i in _incidents(outcome, "isr_shrink")]
    assert shrinks == [("/kafka", ["broker 3", "t"])]
    brokers = spark.read.parquet(str(tmp_path / "history" / "kafka_brokers")).collect()
    per_root = sorted((r["root"], r["snapshot_time"].astimezone(UTC), r["brokers"]) for r in brokers)
    assert per_root == [("/kafka", _day(0), 3), ("/kafka", _day(1), 2), ("/kafka", _day(2), 3)] + [
        ("/kafka-b", _day(d), 3) for d in range(3)
    ]
    health = spark.read.parquet(str(tmp_path / "history" / "kafka_partition_health")).collect()
    assert sorted((r["root"], r["snapshot_time"].astimezone(UTC), r["partitions"]) for r in health) == [
        (root, _day(d), 1) for root in ("/kafka", "/kafka-b") for d in range(3)
    ]


def test_a_snapshot_written_before_rows_had_their_root_reads_as_its_manifests_root(tmp_path: Path) -> None:
    """A snapshot whose files lack the root column and whose manifest lists no ``roots`` reads, in diff
    and in the history job, as having the one root per system its manifest's source names."""
    import pyarrow.parquet as pq

    out = tmp_path / "snapshots"
    for snapshot_id, day in (("old", 0), ("new", 1)):
        with Snapshot(str(out), snapshot_id=snapshot_id, cluster="c1", snapshot_time=_day(day)) as snap:
            snap.add_all(r for r in _two_roots_records(0) if r.root in ("/kafka", "/storm"))
            snap.commit({"source": {"storm_roots": ["/storm"], "kafka_roots": ["/kafka"]}})
    manifest_path = out / "_manifests" / "old.json"
    manifest = json.loads(manifest_path.read_text())
    manifest.pop("roots", None)  # what take_snapshot lists now; the writer alone never did
    manifest_path.write_text(json.dumps(manifest))
    for relative in manifest["files"]:
        table = pq.read_table(out / relative)
        pq.write_table(table.drop_columns(["root"]), out / relative)
    from zkstorm.export.diff import diff_snapshots

    diffs = {d.table: d for d in diff_snapshots(str(out), "old", str(out), "new")}
    assert {name: (d.added, d.removed) for name, d in diffs.items()} == {
        "kafka_brokers": (0, 0),
        "kafka_partitions": (0, 0),
        "storm_supervisors": (0, 0),
    }


# --- exact incident times from a changes dataset (``zkstorm changes --out``) -----------------------------


def _incident_day(day: int) -> list[Any]:
    """Day 1: broker 3 is gone with t-0 offline (its only replica), supervisor h2 is missing, and the
    controller moved from broker 1 to broker 2. Days 0 and 2: all there."""
    out: list[Any] = []
    gone = day == 1
    for broker in (1, 2) if gone else (1, 2, 3):
        out.append(
            KafkaBroker(
                root="/kafka", broker_id=broker, alive=True, version=4, host=f"b{broker}", port=9092, rack=None,
                jmx_port=None, timestamp_ms=10, registered_at=None, endpoints=(), listener_protocols=(),
                features=(), broker_epoch=None, session_id=None,
            )
        )  # fmt: skip
    out.append(
        KafkaPartition(
            root="/kafka", topic="t", partition=0, replicas=(3,), adding_replicas=(), removing_replicas=(),
            leader=-1 if gone else 3, leader_epoch=0, isr=(3,), controller_epoch=1, zk_version=0,
            leader_recovery_state=0, offline=gone, under_replicated=False, under_min_isr=gone, at_min_isr=False,
            preferred_leader=not gone, min_isr=1, min_isr_source="assumed", pending_deletion=False,
            health="offline" if gone else "ok",
        )
    )  # fmt: skip
    controller = 1 if day == 0 else 2
    out.append(
        KafkaController(
            root="/kafka", broker_id=controller, version=1, timestamp_ms=None, elected_at=None,
            kraft_controller_epoch=None, ephemeral=True,
        )
    )  # fmt: skip
    out.append(KafkaControllerEpoch(epoch=5 if day == 0 else 6, zk_version=None, root="/kafka"))
    for host in ("h1", "h2"):
        if gone and host == "h2":
            continue
        out.append(
            StormSupervisor(
                root="/storm", supervisor_id=f"{host}-id", hostname=host, assignment_id=None, time_secs=1,
                heartbeat_at=_day(day), uptime_secs=100 + day, used_ports=(), ports=(6700,), version=None,
                server_port=None, memory_capacity_mb=None, cpu_capacity_pct=None, resources=(), scheduler_meta=(),
            )
        )  # fmt: skip
    return out


def _change(kind: type, at: datetime, zxid: int, path: str, root: str, **fields: Any) -> Any:
    time_ms = int(at.timestamp() * 1000)
    return kind(at=at, zxid=zxid, time_ms=time_ms, session_id=0x1000, path=path, root=root, **fields)


def test_incidents_take_their_exact_start_and_end_from_a_changes_dataset(spark: Any, tmp_path: Path) -> None:
    """Given the changes of the same period, a broker gone, a supervisor missing, partitions offline and a
    controller election start (and end) at the txns' times, to the millisecond, not at the nightly
    snapshots around them; a change outside the snapshots' bracket (an earlier flap) is not taken, and
    runs whose windows overlap count each change once."""
    from zkstorm.records import (
        KafkaBrokerGone,
        KafkaBrokerRegistered,
        KafkaControllerElected,
        KafkaPartitionChanged,
        StormSupervisorJoined,
        StormSupervisorLeft,
    )

    snapshots = tmp_path / "snapshots"
    for day in range(3):
        with Snapshot(str(snapshots), snapshot_id=f"c1@{day}", cluster="c1", snapshot_time=_day(day)) as snap:
            snap.add_all(_incident_day(day))
            snap.commit({})
    ms = timedelta(milliseconds=1)
    gone_at = _day(0) + timedelta(hours=3, minutes=12, seconds=4) + 120 * ms
    back_at = _day(1) + timedelta(hours=17, minutes=20, seconds=11) + 2 * ms
    offline_at, online_at = gone_at + 4900 * ms, back_at + 300 * ms
    left_at, joined_at = _day(0) + timedelta(hours=3, minutes=14), _day(1) + timedelta(hours=1)
    elected_at = gone_at + 500 * ms
    partition = {"topic": "t", "partition": 0, "isr_before": (3,), "isr": (3,), "isr_removed": (), "isr_added": ()}
    partition |= {"leader_epoch_before": 0, "leader_epoch": 1, "controller_epoch": 6}
    state = "/kafka/brokers/topics/t/partitions/0/state"
    broker = {"broker_id": 3, "host": "b3", "port": 9092}
    changes = [
        _change(KafkaBrokerGone, _day(0) - timedelta(hours=5), 1, "/kafka/brokers/ids/3", "/kafka", **broker,
                how="closed", registered_at=None),  # before the bracket: a flap the day before
        _change(KafkaBrokerRegistered, _day(0) - timedelta(hours=4), 2, "/kafka/brokers/ids/3", "/kafka", **broker,
                rack=None, endpoints=()),
        _change(KafkaBrokerGone, gone_at, 10, "/kafka/brokers/ids/3", "/kafka", **broker, how="expired",
                registered_at=None),
        _change(KafkaControllerElected, elected_at, 11, "/kafka/controller", "/kafka", broker_id=2, epoch=6,
                previous_broker_id=1),
        _change(KafkaPartitionChanged, offline_at, 12, state, "/kafka", **partition, leader_before=3, leader=-1,
                offline_before=False, offline=True),
        _change(StormSupervisorLeft, left_at, 13, "/storm/supervisors/h2-id", "/storm", supervisor_id="h2-id",
                hostname="h2", how="expired"),
        _change(StormSupervisorJoined, joined_at, 14, "/storm/supervisors/h2-id", "/storm", supervisor_id="h2-id",
                hostname="h2", slots=1),
        _change(KafkaBrokerRegistered, back_at, 15, "/kafka/brokers/ids/3", "/kafka", **broker, rack=None,
                endpoints=()),
        _change(KafkaPartitionChanged, online_at, 16, state, "/kafka", **partition, leader_before=-1, leader=3,
                offline_before=True, offline=False),
    ]  # fmt: skip
    out = tmp_path / "changes"
    for run_id, held in (("c1@a", changes[:6]), ("c1@b", changes[3:])):  # two runs: their windows overlap
        with Snapshot(str(out), snapshot_id=run_id, cluster="c1", snapshot_time=_day(2), dataset="changes") as snap:
            snap.add_all(held)
            snap.commit({})
    outcome = run_history(spark, str(snapshots), changes=str(out), out=str(tmp_path / "history"))
    (gone,) = _incidents(outcome, "broker_gone")
    assert (gone.started, gone.ended, gone.ongoing, gone.exact) == (gone_at, back_at, False, True)
    assert gone.summary.startswith(
        "broker 3 (b3:9092) gone 2026-11-01 05:42:04.120 (session expired), back 2026-11-02 19:50:11.002; "
    )
    (missing,) = _incidents(outcome, "supervisor_missing")
    assert (missing.started, missing.ended, missing.exact) == (left_at, joined_at, True)
    (offline,) = _incidents(outcome, "partitions_offline")
    assert (offline.started, offline.ended, offline.exact) == (offline_at, online_at, True)
    assert "partitions offline from 2026-11-01 05:42:09.020 to 2026-11-02 19:50:11.302" in offline.summary
    (election,) = _incidents(outcome, "controller_election")
    assert (election.started, election.exact) == (elected_at, True)
    stored = spark.read.parquet(str(tmp_path / "history" / "incidents")).collect()
    assert all(not r["exact"] for r in stored if r["kind"] == "leader_moves")  # no change tells them: kept
    assert {(r["kind"], r["started"].astimezone(UTC), r["exact"]) for r in stored if r["exact"]} == {
        ("broker_gone", gone_at, True),
        ("supervisor_missing", left_at, True),
        ("partitions_offline", offline_at, True),
        ("controller_election", elected_at, True),
    }
    from zkstorm.jobs.report import incident_line

    assert incident_line(gone).startswith("2026-11-01 05:42:04.120 critical")


def test_metrics_run_several_at_a_time_in_order_and_a_failure_stops_the_rest() -> None:
    """``concurrently`` keeps the items' order; once one fails, the work still queued is not started
    (an interrupted or failed history run does not go on through every metric first)."""
    import threading
    import time

    from zkstorm.jobs.history import JOBS_AT_ONCE, concurrently

    assert concurrently(lambda n: n * n, list(range(10))) == [n * n for n in range(10)]
    started: list[int] = []
    lock = threading.Lock()

    def work(n: int) -> int:
        with lock:
            started.append(n)
        if n == 1:
            raise RuntimeError("metric 1 failed")
        time.sleep(0.3)
        return n

    with pytest.raises(RuntimeError, match="metric 1 failed"):
        concurrently(work, list(range(40)))
    assert JOBS_AT_ONCE <= len(started) < 40


def test_a_nightly_update_starts_its_jvm_for_a_short_run(tmp_path: Path) -> None:
    """A history kept under a local --out, and no option asking for a full run: the driver JVM zkstorm
    starts is set for a short run (``BRIEF_RUN_JVM``); a first run, --full, a window, a remote store keep
    the JVM's defaults."""
    out = tmp_path / "history"
    assert not expects_update(out=str(out))
    (out / "_history" / "runs").mkdir(parents=True)
    assert expects_update(out=str(out), html="report.html")
    assert not expects_update(out=str(out), full=True)
    assert not expects_update(out=str(out), since=datetime(2026, 1, 1).date())
    assert not expects_update(out=f"s3a://bucket/{out.name}")
    assert not expects_update()
    brief = session_conf(None, "zkstorm-history", brief=True).get("spark.driver.extraJavaOptions")
    assert BRIEF_RUN_JVM in brief and "log4j2.configurationFile" in brief
    assert BRIEF_RUN_JVM not in session_conf(None, "zkstorm-history").get("spark.driver.extraJavaOptions")
    # on the client compiler alone the JVM reserves 48 MiB for compiled code, which an update fills (the
    # compiler is then switched off): the short run reserves the tiered default's 240 MiB
    assert "-XX:TieredStopAtLevel=1" in brief and "-XX:ReservedCodeCacheSize=240m" in brief
