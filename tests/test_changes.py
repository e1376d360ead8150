"""``zkstorm changes``: a real ZooKeeper driven through an incident, then its own data directory read back;
every real data directory the suite holds; damaged logs; ``--at``; the filters, formats and Parquet."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.fixtures import FIXTURES, zkfiles_expected
from tests.test_cli import run
from tests.test_zkfiles import ENDS, HOLES, damage_log, last_log
from zkstorm.errors import ExitCode, FilesError
from zkstorm.layout import Roots
from zkstorm.model.walk import decode_node
from zkstorm.records import StormComponent, StormExecutor, StormSupervisor, StormTopology
from zkstorm.sandbox.encode import kafka_json, storm_gzip
from zkstorm.sandbox.seed import rewritten
from zkstorm.sandbox.server import ZkServer
from zkstorm.sandbox.synth import SeedNode, cluster
from zkstorm.sources.base import RawNode, Stat
from zkstorm.sources.files.snapfile import name_zxid
from zkstorm.sources.files.txnlog import LogFile
from zkstorm.units import parse_utc

NOW = 1_770_000_000
ROOTS = Roots(storm=("/storm",), kafka=("/kafka",))
VICTIM = 3  # the broker whose session expires; it is the controller too
KILLED = "fraud-scorer-2-"  # the topology killed (ACTIVE in the sandbox: an assignment, worker heartbeats)
SESSION_MS = 2_000  # the broker's session: expired by the server this long after its process dies


def _ms() -> int:
    return int(time.time() * 1000)


def _seed(client: KazooClient, nodes: list[SeedNode]) -> None:
    """The sandbox's nodes, parents first, in multis (ephemerals owned by ``client``)."""
    for start in range(0, len(nodes), 500):
        transaction = client.transaction()
        for node in nodes[start : start + 500]:
            transaction.create(node.path, node.data, ephemeral=node.ephemeral, sequence=node.sequential)
        results = transaction.commit()
        assert not [r for r in results if isinstance(r, Exception)], results[:3]


def _records(path: str, data: bytes) -> list[Any]:
    stat = Stat(1, 1, 0, 0, 0, 0, 0, 0, len(data), 0, 1)
    return decode_node(RawNode(path, stat, data), roots=ROOTS)[1]


def _assignment(executors: list[StormExecutor], moved: dict[tuple[str, int], tuple[str, int, str]]) -> bytes:
    """An Assignment of ``executors``, those in a slot of ``moved`` put in its new (node, port, host)."""
    node_host: dict[str, str] = {}
    slots: dict[str, Any] = {}
    starts: dict[str, int] = {}
    resources: dict[str, Any] = {}
    for e in executors:
        node, port, host = moved.get((e.node, e.port), (e.node, e.port, e.host or e.node))
        node_host[node] = host
        slots[f"{e.start_task}-{e.end_task}"] = {"node": node, "port": [port]}
        starts[f"{e.start_task}-{e.end_task}"] = e.start_time_secs or 0
        resources[f"{node}:{port}"] = {"mem_on_heap": 1536.0, "mem_off_heap": 256.0, "cpu": 150.0}
    value = {
        "master_code_dir": "/data/storm/local",
        "node_host": node_host,
        "executor_node_port": slots,
        "executor_start_time_secs": starts,
        "worker_resources": resources,
    }
    return storm_gzip("Assignment", value)


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from kazoo.client import KazooClient
    client = KazooClient(sys.argv[1], timeout=float(sys.argv[2]) / 1000)
    client.start(timeout=30)
    for path, data in zip(sys.argv[3::2], sys.argv[4::2]):
        client.create(path, bytes.fromhex(data), ephemeral=True)
    print(hex(client.client_id[0]), flush=True)
    time.sleep(3600)
    """
)


@dataclass
class Incident:
    """A real server's data directory after the incident, and what the test did, in order."""

    data: Path
    since: int  # the first zxid of the incident's window
    until: int
    since_beats: int  # the heartbeat window
    until_beats: int
    victim_session: int
    expected: list[tuple[Any, ...]] = field(default_factory=list)
    brackets: list[tuple[int, int, str]] = field(default_factory=list)  # (wall ms before, after, kind)
    beats: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Incident]:
    """A dedicated server (a short tick, so a session expires in seconds) seeded with the sandbox's
    cluster, driven through an incident as Kafka's controller, Storm's Nimbus and their daemons would
    write it: broker 3, the controller, dies (its process killed: its session expires); broker 2 is
    elected; the partitions that had broker 3 drop it from their ISR and move their leader (those it led
    alone go offline); a supervisor stops (its session closed); Nimbus moves that supervisor's
    executors; a topology is killed and removed. Then a second window of worker heartbeats: one worker
    starts, two beat, one of them falls silent for longer than the threshold and comes back, the new
    one stops."""
    base = tmp_path_factory.mktemp("incident")
    server = ZkServer(base / "server", extra_config={"tickTime": "200", "minSessionTimeout": "400"}).start()
    owner = KazooClient(server.connect_string, timeout=60)
    owner.start(timeout=30)
    w = KazooClient(server.connect_string, timeout=60)
    w.start(timeout=30)
    holder = None
    try:
        nodes = list(cluster(scale=1, now=NOW))
        by_path = {n.path: n for n in nodes}
        supervisors = sorted(n.path for n in nodes if n.path.startswith("/storm/supervisors/"))
        leaving = supervisors[0]
        held_by_victim = [f"/kafka/brokers/ids/{VICTIM}", "/kafka/controller"]
        _seed(owner, [n for n in nodes if n.path not in (*held_by_victim, leaving)])
        # broker 3 and the controller it is, held by a process of their own; the supervisor by a client
        controller = kafka_json(
            {"version": 2, "brokerid": VICTIM, "timestamp": str(NOW * 1000), "kraftControllerEpoch": -1}
        )
        args = [f"/kafka/brokers/ids/{VICTIM}", by_path[f"/kafka/brokers/ids/{VICTIM}"].data.hex()]
        args += ["/kafka/controller", controller.hex()]
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, server.connect_string, str(SESSION_MS), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None
        victim_session = int(holder.stdout.readline(), 16)
        daemon = KazooClient(server.connect_string, timeout=10)
        daemon.start(timeout=30)
        daemon.create(leaving, by_path[leaving].data, ephemeral=True)
        supervisor_id = leaving.rsplit("/", 1)[1]
        supervisor_host = next(r for r in _records(leaving, by_path[leaving].data)).hostname

        found = Incident(base / "server" / "data", server.last_zxid() + 1, 0, 0, 0, victim_session)
        expect, brackets = found.expected, found.brackets

        def act(kinds: list[str]) -> Any:
            class Bracket:
                def __enter__(self) -> None:
                    self.started = _ms()

                def __exit__(self, *exc: object) -> None:
                    brackets.extend((self.started, _ms(), kind) for kind in kinds)

            return Bracket()

        # rewrites of two workers' heartbeats: no change (counted in the summary)
        live_beats = sorted(p for p in by_path if p.startswith("/storm/workerbeats/clickstream") and p.count("/") == 4)
        for path in live_beats[:2]:
            w.set(path, by_path[path].data)

        # broker 3 dies: its process is killed, the server expires its session and removes its ephemerals
        with act(["kafka_broker_gone", "kafka_controller_gone"]):
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            deadline = time.monotonic() + 30
            while w.exists(f"/kafka/brokers/ids/{VICTIM}") and time.monotonic() < deadline:
                time.sleep(0.05)
        assert not w.exists(f"/kafka/brokers/ids/{VICTIM}")
        expect.append(("kafka_broker_gone", VICTIM, "expired", victim_session))
        expect.append(("kafka_controller_gone", VICTIM, "expired"))

        # broker 2 wins the election: /controller and the epoch in one multi, as Kafka 2.2+ writes them
        with act(["kafka_controller_elected"]):
            elect = w.transaction()
            elect.create(
                "/kafka/controller", kafka_json({"version": 2, "brokerid": 2, "timestamp": str(_ms())}), ephemeral=True
            )
            elect.set_data("/kafka/controller_epoch", b"18")
            assert not [r for r in elect.commit() if isinstance(r, Exception)]
        expect.append(("kafka_controller_elected", 2, 18, VICTIM))

        # the new controller takes broker 3 out of every ISR and moves its leaderships
        registered = {1, 2}
        states = sorted(p for p in by_path if p.endswith("/state") and VICTIM in json.loads(by_path[p].data)["isr"])
        with act(["kafka_partition_changed"] * len(states)):
            for path in states:
                state = json.loads(w.get(path)[0])
                isr = [b for b in state["isr"] if b != VICTIM]
                leader = state["leader"] if state["leader"] != VICTIM else (isr[0] if isr else -1)
                write = w.transaction()
                write.check("/kafka/controller_epoch", 1)
                new = {**state, "leader": leader, "isr": isr or [VICTIM], "leader_epoch": state["leader_epoch"] + 1}
                new["controller_epoch"] = 18
                write.set_data(path, kafka_json(new))
                assert not [r for r in write.commit() if isinstance(r, Exception)]
                topic, partition = path.split("/")[4], int(path.split("/")[6])
                offline_before = state["leader"] not in registered
                offline = leader not in registered
                removed = (VICTIM,) if isr else ()
                expect.append(
                    (
                        "kafka_partition_changed",
                        topic,
                        partition,
                        state["leader"],
                        leader,
                        removed,
                        offline_before,
                        offline,
                    )
                )

        # a supervisor stops: its client closes its session
        with act(["storm_supervisor_left"]):
            daemon.stop()
            daemon.close()
        expect.append(("storm_supervisor_left", supervisor_id, "closed", supervisor_host))

        # Nimbus moves the executors that ran there to another supervisor's free slot
        target = supervisors[1]
        target_host = next(r for r in _records(target, by_path[target].data)).hostname
        moved_topology, moves = "", 0
        for path in sorted(p for p in by_path if p.startswith("/storm/assignments/") and p.count("/") == 3):
            executors = [r for r in _records(path, by_path[path].data) if isinstance(r, StormExecutor)]
            gone = {(e.node, e.port) for e in executors if e.node == supervisor_id}
            if gone and KILLED not in path:
                moved = {slot: (target.rsplit("/", 1)[1], 6790 + i, target_host) for i, slot in enumerate(sorted(gone))}
                with act(["storm_assignment_changed"]):
                    w.set(path, _assignment(executors, moved))
                moved_topology = path.rsplit("/", 1)[1]
                moves = sum(1 for e in executors if (e.node, e.port) in gone)
                expect.append(("storm_assignment_changed", moved_topology, moves, len(executors), len(executors)))
                break
        assert moves, "the sandbox put no executor on the supervisor that left"

        # two workers of one bolt fail alike in one second and their reportError calls race: b's e-node is
        # created after a's, but a's -last-error write lands last. Each copy is no second error.
        errors = next(p for p in by_path if p.startswith("/storm/errors/clickstream") and p.endswith("-last-error"))
        errors = errors[: -len("-last-error")]
        reports = [
            storm_gzip(
                "ErrorInfo",
                {"error": "java.io.IOException: region offline", "error_time_secs": NOW, "host": host, "port": 6700},
            )
            for host in ("wkr-a.example.org", "wkr-b.example.org")
        ]
        with act(["storm_error_reported"] * 2):
            created = [w.create(f"{errors}/e", report, sequence=True) for report in reports]
            for report in reversed(reports):
                w.set(f"{errors}-last-error", report)
        expect.extend(("storm_error_reported", path) for path in created)

        # a topology is killed (status KILLED), then removed: heartbeats, assignment, base
        killed = next(p for p in by_path if p.startswith(f"/storm/storms/{KILLED}"))
        topology_id = killed.rsplit("/", 1)[1]
        decoded = _records(killed, by_path[killed].data)
        base_record = next(r for r in decoded if isinstance(r, StormTopology))
        kill = {
            "name": base_record.name,
            "status": "KILLED",
            "num_workers": base_record.num_workers,
            "component_executors": {r.component: r.executors for r in decoded if isinstance(r, StormComponent)},
            "launch_time_secs": base_record.launch_time_secs,
            "owner": "svc-stream",
            "topology_action_options": {"kill_options": {"wait_secs": 30}},
            "prev_status": base_record.status,
        }
        with act(["storm_topology_status_changed"]):
            w.set(killed, storm_gzip("StormBase", kill))
        expect.append(("storm_topology_status_changed", topology_id, base_record.status, "KILLED"))
        workers = sorted(w.get_children(f"/storm/workerbeats/{topology_id}"))
        assert workers
        assignment_path = f"/storm/assignments/{topology_id}"
        executors = [
            r for r in _records(assignment_path, by_path[assignment_path].data) if isinstance(r, StormExecutor)
        ]
        with act(
            ["storm_worker_stopped"] * len(workers)
            + ["znode_deleted", "storm_assignment_changed", "storm_topology_removed"]
        ):
            for worker in workers:
                w.delete(f"/storm/workerbeats/{topology_id}/{worker}")
            w.delete(f"/storm/workerbeats/{topology_id}")
            w.delete(assignment_path)
            w.delete(killed)
        for worker in workers:
            expect.append(("storm_worker_stopped", topology_id, worker))
        expect.append(("znode_deleted", f"/storm/workerbeats/{topology_id}", "deleted"))
        expect.append(("storm_assignment_changed", topology_id, 0, len(executors), 0))
        expect.append(("storm_topology_removed", topology_id, "KILLED"))
        found.until = server.last_zxid()

        # the heartbeat window: the other workers' last beats are long past (stale before it)
        time.sleep(1.5)
        found.since_beats = server.last_zxid() + 1
        steady, silent = live_beats[:2]
        started = f"{steady.rsplit('/', 1)[0]}/0a0b0c0d-new-worker-6799"
        beat_times: dict[str, list[int]] = {steady: [], silent: []}
        w.create(started, by_path[steady].data)
        for i in range(14):
            w.set(steady, by_path[steady].data)
            beat_times[steady].append(server.last_zxid())
            if i < 2 or i >= 12:
                w.set(silent, by_path[silent].data)
                beat_times[silent].append(server.last_zxid())
            time.sleep(0.25)
        w.delete(started)
        found.until_beats = server.last_zxid()
        found.beats = {"steady": steady, "silent": silent, "started": started, "zxids": beat_times}
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
            holder.wait()
        for client in (w, owner):
            client.stop()
            client.close()
        server.stop()
    yield found


def _changes(data: Path, *args: str) -> list[dict[str, Any]]:
    result = run("--from-files", str(data), "changes", *args, "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return list(json.loads(result.stdout))


def _txn_times(data: Path) -> dict[int, int]:
    """zxid → the txn header's time, read from the server's own logs."""
    folder = data / "version-2"
    logs = sorted((p for p in folder.iterdir() if name_zxid(p.name, "log") is not None), key=lambda p: p.name)
    times: dict[int, int] = {}
    for path in logs:
        for txn in LogFile(str(path)).txns(after=max(times, default=-1)):
            times[txn.zxid] = txn.time_ms
    return times


def _key(c: dict[str, Any]) -> tuple[Any, ...]:
    """What the test says each change must be (compared with ``Incident.expected``)."""
    kind = c["kind"]
    if kind == "kafka_broker_gone":
        return (kind, c["broker_id"], c["how"], c["session_id"])
    if kind == "kafka_controller_gone":
        return (kind, c["broker_id"], c["how"])
    if kind == "kafka_controller_elected":
        return (kind, c["broker_id"], c["epoch"], c["previous_broker_id"])
    if kind == "kafka_partition_changed":
        return (kind, c["topic"], c["partition"], c["leader_before"], c["leader"], tuple(c["isr_removed"]),
                c["offline_before"], c["offline"])  # fmt: skip
    if kind == "storm_supervisor_left":
        return (kind, c["path"].rsplit("/", 1)[1], c["how"], c["hostname"])
    if kind == "storm_assignment_changed":
        return (kind, c["topology_id"], c["executors_moved"], c["executors_before"], c["executors"])
    if kind == "storm_topology_status_changed":
        return (kind, c["topology_id"], c["status_before"], c["status"])
    if kind == "storm_worker_stopped":
        return (kind, c["topology_id"], c["path"].rsplit("/", 1)[1])
    if kind == "znode_deleted":
        return (kind, c["path"], c["how"])
    if kind == "storm_topology_removed":
        return (kind, c["topology_id"], c["status_before"])
    return (kind, c["path"])


def test_the_incident_reads_back_change_by_change_in_order_at_its_txns_times(incident: Incident) -> None:
    """Each change of the incident, in the order written, nothing missing and nothing invented (the
    heartbeat rewrites are no change), each at its own txn's zxid and time, within the moment the test
    made it."""
    found = _changes(
        incident.data, "--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h"
    )
    keys = [_key(c) for c in found]
    # one closeSession removes broker 3's registration and /controller: in the order the txn lists them
    first_two = sorted(keys[:2], key=str)
    assert first_two == sorted(incident.expected[:2], key=str)
    assert keys[2:] == incident.expected[2:]
    times = _txn_times(incident.data)
    for change, (before, after, kind) in zip(found, incident.brackets, strict=True):
        assert change["kind"] == kind
        assert change["time_ms"] == times[change["zxid"]], change
        assert before - 50 <= change["time_ms"] <= after + 50, (change, before, after)
        # to the millisecond (a whole second is written without its fraction: 1 txn in 1,000)
        assert parse_utc(change["at"]) == datetime.fromtimestamp(change["time_ms"] / 1000, UTC), change
    assert [c["zxid"] for c in found] == sorted(c["zxid"] for c in found)
    assert len({c["zxid"] for c in found[:2]}) == 1  # the session's close


def test_the_summary_tells_the_incident(incident: Incident) -> None:
    result = run(
        "--from-files", str(incident.data), "changes", "--since", hex(incident.since), "--until", hex(incident.until),
        "--stale-after", "1h",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    gone = next(line for line in text.splitlines() if f"broker {VICTIM} (" in line)
    lost = sum(1 for e in incident.expected if e[0] == "kafka_partition_changed" and e[5])
    offline = sum(1 for e in incident.expected if e[0] == "kafka_partition_changed" and e[4] == -1)
    assert "(session expired)" in gone and f"{lost} partitions dropped it from their ISR over" in gone
    assert "not back" in gone
    assert "controller elected" in text and f"broker 2 (epoch 18), was broker {VICTIM}" in text
    moves = next(e for e in incident.expected if e[0] == "storm_assignment_changed")[2]
    assert f"Nimbus moved {moves} executors off it" in text or f"Nimbus moved {moves} executor off it" in text
    assert "ACTIVE->KILLED" in text and "removed" in text
    assert "worker heartbeats from" in text  # the rewrites: counted, not shown
    led = sum(1 for e in incident.expected if e[0] == "kafka_partition_changed" and e[3] == VICTIM)
    assert (
        f"{led - offline} leaderships moved to other brokers, {led} partitions offline, {led - offline} back by" in gone
    )
    assert offline and f", {offline} still offline" in gone


def test_worker_heartbeats_start_go_stale_resume_and_stop(incident: Incident) -> None:
    """A rewrite is no change; a silence longer than --stale-after is, found at the first txn past it."""
    beats = incident.beats
    found = _changes(
        incident.data, "--since", hex(incident.since_beats), "--until", hex(incident.until_beats), "--stale-after", "1s"
    )
    kinds = [(c["kind"], c["path"]) for c in found]
    steady, silent, started = beats["steady"], beats["silent"], beats["started"]
    assert kinds == [
        ("storm_worker_started", started),
        ("storm_worker_resumed", steady),  # their last beats were long before the window
        ("storm_worker_resumed", silent),
        ("storm_worker_stale", started),  # written once, at its start
        ("storm_worker_stale", silent),
        ("storm_worker_resumed", silent),
        ("storm_worker_stopped", started),
    ] or kinds == [
        ("storm_worker_started", started),
        ("storm_worker_resumed", steady),
        ("storm_worker_resumed", silent),
        ("storm_worker_stale", silent),
        ("storm_worker_stale", started),
        ("storm_worker_resumed", silent),
        ("storm_worker_stopped", started),
    ]
    times = _txn_times(incident.data)
    stale = next(c for c in found if c["kind"] == "storm_worker_stale" and c["path"] == silent)
    last = times[beats["zxids"][silent][1]]
    assert stale["last_beat_at"].endswith(f".{last % 1000:03d}000Z")
    # found at the first txn more than a second after that beat
    assert stale["time_ms"] > last + 1000
    assert max(t for z, t in times.items() if z < stale["zxid"]) <= last + 1000
    resumed = [c for c in found if c["kind"] == "storm_worker_resumed" and c["path"] == silent][-1]
    assert resumed["zxid"] == beats["zxids"][silent][2]
    assert resumed["silent_secs"] == pytest.approx((times[resumed["zxid"]] - last) / 1000)


def test_at_a_time_is_at_the_zxid_of_the_last_txn_at_or_before_it(incident: Incident) -> None:
    times = sorted(_txn_times(incident.data).items())

    def last_at_or_before(at: int) -> int:
        found = times[0][0]
        for zxid, time_ms in times:
            if time_ms > at:
                break
            found = zxid
        return found

    # in the incident: a txn followed by a later-stamped one; its time, the moment before the next, the next
    i = next(j for j, (z, _) in enumerate(times[:-1]) if z >= incident.since and times[j][1] < times[j + 1][1])
    for at in (times[i][1], times[i + 1][1] - 1, times[i + 1][1]):
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at // 1000)) + f".{at % 1000:03d}Z"
        zxid = last_at_or_before(at)
        for view in (["kafka", "brokers"], ["tree", "/kafka"], ["storm", "supervisors"]):
            by_time = run(
                "--from-files", str(incident.data), "--kafka-root", "/kafka", "--at", iso, *view, "-f", "json"
            )
            by_zxid = run(
                "--from-files",
                str(incident.data),
                "--kafka-root",
                "/kafka",
                "--at-zxid",
                hex(zxid),
                *view,
                "-f",
                "json",
            )
            assert by_time.exit_code == 0 and by_zxid.exit_code == 0, (by_time.stderr, by_zxid.stderr)
            assert json.loads(by_time.stdout) == json.loads(by_zxid.stdout), (view, at)
    import zkstorm

    at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=times[i][1])
    zxid = last_at_or_before(times[i][1])
    with (
        zkstorm.from_files(str(incident.data), at=at, kafka_root="/kafka") as by_time_cluster,
        zkstorm.from_files(str(incident.data), at_zxid=zxid, kafka_root="/kafka") as by_zxid_cluster,
    ):
        assert by_time_cluster.kafka.brokers() == by_zxid_cluster.kafka.brokers()
    before = run(
        "--from-files",
        str(incident.data),
        "--kafka-root",
        "/kafka",
        "--at-zxid",
        hex(incident.since),
        "kafka",
        "brokers",
        "-f",
        "json",
    )
    after = run(
        "--from-files",
        str(incident.data),
        "--kafka-root",
        "/kafka",
        "--at-zxid",
        hex(incident.until),
        "kafka",
        "brokers",
        "-f",
        "json",
    )
    alive = lambda r: {b["broker_id"] for b in json.loads(r.stdout) if b["alive"]}  # noqa: E731
    assert VICTIM in alive(before) and VICTIM not in alive(after)  # the views differ across the incident


def test_at_before_the_logs_and_with_at_zxid_are_refused(incident: Incident) -> None:
    early = run("--from-files", str(incident.data), "--at", "2001-01-01T00:00:00Z", "kafka", "brokers")
    assert early.exit_code == ExitCode.FILES and "no logged txn is that early" in early.stderr
    both = run("--from-files", str(incident.data), "--at", "2001-01-01T00:00:00Z", "--at-zxid", "0x5", "tree")
    assert both.exit_code == ExitCode.USAGE
    live = run("--zk", "127.0.0.1:1", "--at", "2001-01-01T00:00:00Z", "tree")
    assert live.exit_code == ExitCode.USAGE and "--from-files" in live.stderr


def test_the_library_reads_what_the_command_shows(incident: Incident) -> None:
    import zkstorm
    from zkstorm.model import ChangeFilter
    from zkstorm.output import json_bytes

    cluster = zkstorm.from_files(str(incident.data), kafka_root="/kafka")
    log = cluster.changes(since=incident.since, until=incident.until, stale_after_secs=3600)
    records = [json.loads(json_bytes(c)) for c in log]
    assert records == _changes(
        incident.data, "--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h"
    )
    assert any(s.subject == f"broker {VICTIM}" for s in log.summary())
    only = cluster.changes(since=incident.since, until=incident.until, select=ChangeFilter(brokers=(VICTIM,)))
    assert {type(c).__name__ for c in only} == {
        "KafkaBrokerGone",
        "KafkaControllerGone",
        "KafkaControllerElected",
        "KafkaPartitionChanged",
    }


def test_changes_need_the_files() -> None:
    result = run("--zk", "127.0.0.1:1", "changes")
    assert result.exit_code == ExitCode.USAGE and "--from-files" in result.stderr


@pytest.mark.parametrize(
    ("option", "wanted"),
    [
        (("--kind", "kafka_broker_*"), {"kafka_broker_gone"}),
        (
            ("--kind", "storm_topology_status_changed", "--kind", "storm_topology_removed"),
            {"storm_topology_status_changed", "storm_topology_removed"},
        ),
        (
            ("--broker", str(VICTIM)),
            {"kafka_broker_gone", "kafka_controller_gone", "kafka_controller_elected", "kafka_partition_changed"},
        ),
        (
            ("--topology", "fraud-scorer"),
            {
                "storm_topology_status_changed",
                "storm_worker_stopped",
                "znode_deleted",
                "storm_assignment_changed",
                "storm_topology_removed",
            },
        ),
        (("--path", "/kafka/brokers/ids"), {"kafka_broker_gone"}),
        (("--topic", "clickstream"), {"kafka_partition_changed"}),
    ],
)
def test_filters_keep_what_they_name(incident: Incident, option: tuple[str, ...], wanted: set[str]) -> None:
    everything = _changes(
        incident.data, "--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h"
    )
    found = _changes(
        incident.data, "--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h", *option
    )
    assert found and {c["kind"] for c in found} == wanted
    assert all(c in everything for c in found)
    if option[0] == "--topic":
        assert {c["topic"] for c in found} == {"clickstream"}
        assert len(found) == sum(1 for c in everything if c.get("topic") == "clickstream")


def test_csv_is_one_line_per_change_or_the_kinds_own_columns(incident: Incident) -> None:
    import csv
    import io

    window = ("--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h")
    every = run("--from-files", str(incident.data), "changes", *window, "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(every.stdout)))
    assert len(rows) == len(incident.expected)
    assert rows[0]["change"] in ("kafka_broker_gone", "kafka_controller_gone") and "broker 3" in rows[0]["detail"]
    one = run("--from-files", str(incident.data), "changes", *window, "-f", "csv", "--kind", "kafka_partition_changed")
    typed = list(csv.DictReader(io.StringIO(one.stdout)))
    assert {"isr_removed", "leader_before", "offline"} <= set(typed[0])


def test_out_writes_a_table_per_kind_with_the_snapshots_conventions(incident: Incident, tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    from zkstorm.export.parquet import list_manifests, open_filesystem

    out = tmp_path / "changes"
    window = ("--since", hex(incident.since), "--until", hex(incident.until), "--stale-after", "1h")
    result = run("--from-files", str(incident.data), "changes", *window, "--out", str(out), "--cluster", "lab")
    assert result.exit_code == 0, result.stderr
    (manifest,) = list_manifests(*open_filesystem(str(out)), "changes")
    assert manifest["dataset"] == "changes"
    counts: dict[str, int] = {}
    for kind, *_ in incident.expected:
        counts[kind] = counts.get(kind, 0) + 1
    assert manifest["tables"] == dict(sorted(counts.items()))
    assert manifest["changes"]["window"]["first_zxid"] == incident.since
    gone = ds.dataset(out / "kafka_broker_gone", partitioning="hive").to_table().to_pylist()
    assert [(r["broker_id"], r["how"], r["cluster"]) for r in gone] == [(VICTIM, "expired", "lab")]
    assert str(gone[0]["at"].tzinfo) in ("UTC", "+00:00")


# --- every real data directory the suite holds --------------------------------------------------------

EXPECTED = zkfiles_expected()
VARIANTS = sorted(EXPECTED["variants"])


def _folder(variant: str) -> Path:
    """A fixture's data directory (the folder holding its ``version-2``)."""
    folder = FIXTURES / "zkfiles" / EXPECTED["variants"][variant]["dir"]
    return folder.parent if folder.name == "version-2" else folder


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_real_data_directory_reads_without_a_traceback(variant: str, fmt: str) -> None:
    for extra in ((), ("--detail",)) if fmt == "table" else ((),):
        result = run("--from-files", str(_folder(variant)), "changes", "-f", fmt, *extra)
        assert result.exit_code == 0, result.stderr
        assert "Traceback" not in result.output and "internal error" not in result.stderr
        assert result.stdout.strip()


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_txns_after_the_newest_snapshot_are_each_a_change(variant: str) -> None:
    """The 18 txns the fixtures' README lists after the newest snapshot: each one that changed the tree is
    one change of the kind it is, in order; the failed ones and the sessions' own txns none."""
    var = EXPECTED["variants"][variant]
    since = name_zxid(var["newest_snapshot"], "snapshot")
    assert since is not None
    found = _changes(_folder(variant), "--since", hex(since + 1))
    assert [(c["kind"], c["path"].rsplit("/", 1)[1]) for c in found] == [
        ("kafka_partition_changed", "state"),
        ("kafka_partition_changed", "state"),
        ("kafka_broker_registered", "104"),
        ("znode_created", "config_change_0000000002"),
        ("znode_deleted", "e0000000000"),
        ("storm_error_reported", "e0000000002"),  # its -last-error copy is no second error
        ("znode_acl_changed", "zkfiles-extra"),
        ("storm_supervisor_joined", "5e7d1c20-9a8b-4c6d-b0e1-f2a3b4c5d6e7-172.16.5.32"),
        ("storm_supervisor_left", "5e7d1c20-9a8b-4c6d-b0e1-f2a3b4c5d6e7-172.16.5.32"),
        ("znode_created", "container2"),
        ("znode_created", "ttl-node2"),
        ("znode_created", "null-data-2"),
    ]
    assert found[2]["session_id"] == var["live_session_id"]
    assert found[8]["how"] == "closed"
    assert found[0]["leader_epoch"] == found[0]["leader_epoch_before"] + 1


def test_a_change_read_over_a_fuzzy_snapshot_has_the_state_before_zookeeper_had_or_none() -> None:
    """Over the older snapshot, which is fuzzy (dumped while the fixture was being loaded), every
    partition change's state before is the one ZooKeeper had (the last write the logs hold before it, or,
    for a znode the logs never wrote, the newest snapshot's, written before the logs begin), or none:
    never one the fuzzy snapshot caught from after the change."""
    from zkstorm.sources.files.source import FileSource

    variant = "zk395-plain"
    var = EXPECTED["variants"][variant]
    older = name_zxid(var["older_snapshot"], "snapshot")
    assert older is not None
    folder = _folder(variant)
    found = _changes(folder, "--since", hex(older + 1), "--kind", "kafka_partition_changed")
    txns: list[Any] = []
    for path in sorted((folder / "version-2").glob("log.*")):
        txns += list(LogFile(str(path)).txns(after=txns[-1].zxid if txns else -1))
    with FileSource([str(folder / "version-2" / var["newest_snapshot"])]) as newest:  # the snapshot alone
        settled = {raw.path: raw for raw in newest.walk("/")}
    written: dict[str, tuple[int, list[int]]] = {}  # path → (leader, isr) of its last logged write so far
    by_zxid = {c["zxid"]: c for c in found}
    checked = 0
    for txn in txns:
        ops = [txn.body] if hasattr(txn.body, "path") else [op for _, op in getattr(txn.body, "ops", [])]
        for op in ops:
            if not (getattr(op, "path", "").endswith("/state") and getattr(op, "data", None)):
                continue
            change = by_zxid.get(txn.zxid)
            if change is not None and change["path"] == op.path and change["leader_before"] is not None:
                truth = written.get(op.path)
                if truth is None:  # the logs never wrote it: unchanged since before them
                    raw = settled[op.path]
                    assert raw.stat.mzxid < txns[0].zxid
                    state = json.loads(raw.data or b"")
                    truth = (state["leader"], state["isr"])
                assert (change["leader_before"], change["isr_before"]) == truth, op.path
                checked += 1
            state = json.loads(op.data)
            written[op.path] = (state["leader"], state["isr"])
    assert checked >= 2


def test_a_damaged_log_is_one_line_and_exit_7_and_best_effort_reads_up_to_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(_folder("zk395-plain"), data)
    damaged = sorted((data / "version-2").glob("log.*"))[-1]
    zxids = [txn.zxid for txn in LogFile(str(damaged)).txns()]
    blob = bytearray(damaged.read_bytes())
    offset = 16  # the file header; then (checksum, length, payload, "B") per record
    for _ in range(7):
        offset += 12 + int.from_bytes(blob[offset + 8 : offset + 12], "big") + 1
    blob[offset + 40] ^= 0xFF  # inside the eighth record's payload: its checksum no longer holds
    damaged.write_bytes(bytes(blob))
    result = run("--from-files", str(data), "changes")
    assert result.exit_code == ExitCode.FILES
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
    assert damaged.name in result.stderr and "checksum" in result.stderr
    best = run("--from-files", str(data), "--best-effort", "changes", "-f", "json")
    assert best.exit_code == 0, best.stderr
    assert "warning" in best.stderr and damaged.name in best.stderr
    read = json.loads(best.stdout)
    assert read and max(c["zxid"] for c in read) < zxids[7]
    strict = run("--from-files", str(data), "--best-effort", "--strict", "changes", "-f", "json")
    assert strict.exit_code == ExitCode.DECODE_FAILURES


@pytest.mark.parametrize("how", HOLES)
def test_a_hole_in_a_log_is_one_line_and_exit_7_and_best_effort_reads_up_to_it(tmp_path: Path, how: str) -> None:
    """A record that cannot be read with whole records after it (test_zkfiles.py, ``damage_log``) is damage,
    not the log's end: before, the read stopped there at exit 0 (2 of the window's 12 changes shown)."""
    data = tmp_path / "data"
    shutil.copytree(_folder("zk395-plain"), data)
    damaged = last_log(data / "version-2")
    zxids = [txn.zxid for txn in LogFile(str(damaged)).txns()]
    since = hex(zxids[0])
    whole = _changes(data, "--since", since)
    at, after = damage_log(damaged, how)
    result = run("--from-files", str(data), "changes", "--since", since)
    assert result.exit_code == ExitCode.FILES
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
    line = result.stderr.strip()
    assert line.startswith(f"zkstorm: {damaged}: ")
    assert line.endswith(f" at byte {at}, but whole records follow from byte {after}: the log is damaged")
    best = run("--from-files", str(data), "--best-effort", "changes", "--since", since, "-f", "json")
    assert best.exit_code == 0, best.stderr
    assert line.replace("zkstorm: ", "zkstorm: warning: ", 1) in best.stderr.splitlines()
    assert json.loads(best.stdout) == [c for c in whole if c["zxid"] < zxids[3]]
    strict = run("--from-files", str(data), "--best-effort", "--strict", "changes", "--since", since)
    assert strict.exit_code == ExitCode.DECODE_FAILURES


@pytest.mark.parametrize("how", ENDS)
def test_zeros_to_the_end_of_a_log_end_the_changes_without_a_word(tmp_path: Path, how: str) -> None:
    """Zeros after a log's last whole record, or after a record cut short, are its end, as ZooKeeper reads
    it (the server had not appended more yet, or died while appending): no warning."""
    data = tmp_path / "data"
    shutil.copytree(_folder("zk395-plain"), data)
    log = last_log(data / "version-2")
    zxids = [txn.zxid for txn in LogFile(str(log)).txns()]
    since = hex(zxids[0])
    whole = _changes(data, "--since", since)
    damage_log(log, how)
    result = run("--from-files", str(data), "changes", "--since", since, "-f", "json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout) == [c for c in whole if c["zxid"] < zxids[3]]


def test_a_window_before_every_snapshot_is_refused_and_best_effort_starts_at_the_oldest() -> None:
    folder = _folder("zk395-plain")
    early = run("--from-files", str(folder), "changes", "--since", "0x1")
    assert early.exit_code == ExitCode.FILES and "no state before zxid 0x1" in early.stderr
    best = run("--from-files", str(folder), "--best-effort", "changes", "--since", "0x1", "-f", "json")
    assert best.exit_code == 0 and "warning" in best.stderr
    assert min(c["zxid"] for c in json.loads(best.stdout)) > name_zxid(
        EXPECTED["variants"]["zk395-plain"]["older_snapshot"], "snapshot"
    )


def test_a_window_by_time_and_by_span_back_from_the_last_txn() -> None:
    folder = _folder("zk395-gz")
    everything = _changes(folder)
    middle = everything[len(everything) // 2]
    by_time = _changes(folder, "--since", middle["at"], "--until", everything[-3]["at"])
    assert by_time[0]["time_ms"] >= middle["time_ms"] and by_time[-1]["time_ms"] <= everything[-3]["time_ms"]
    assert [c for c in everything if middle["time_ms"] <= c["time_ms"] <= everything[-3]["time_ms"]] == by_time
    last = max(_txn_times(folder).values())  # a span is back from the last logged txn
    span_ms = last - middle["time_ms"]
    back = _changes(folder, "--since", f"{span_ms / 1000:.3f}s")
    assert back == [c for c in everything if c["time_ms"] >= last - span_ms]
    bad = run("--from-files", str(folder), "changes", "--since", "yesterday")
    assert bad.exit_code == ExitCode.USAGE


def test_secrets_in_a_config_change_stay_redacted(tmp_path: Path) -> None:
    """A Kafka config change names the keys that changed; a secret's values are ``<redacted>``."""
    server = ZkServer(tmp_path / "server").start()
    try:
        client = KazooClient(server.connect_string, timeout=30)
        client.start(timeout=30)
        for node in cluster(scale=1, now=NOW):
            if node.path.startswith("/kafka") and not node.sequential:
                client.create(node.path, node.data)
        since = server.last_zxid() + 1
        path = "/kafka/config/brokers/<default>"
        secret = "s3cret-Passw0rd-xyz"
        value = {"min.insync.replicas": "1", "listener.name.internal.ssl.key.password": secret}
        client.set(path, kafka_json({"version": 1, "config": value}))
        client.stop()
        client.close()
    finally:
        server.stop()
    data = tmp_path / "server" / "data"
    found = _changes(data, "--since", hex(since))
    (change,) = found
    assert change["kind"] == "kafka_config_changed"
    assert change["keys_set"] == ["listener.name.internal.ssl.key.password", "min.insync.replicas"]
    assert "min.insync.replicas=2->1" in change["changes"]
    assert "listener.name.internal.ssl.key.password=(unset)-><redacted>" in change["changes"]
    for args in ((), ("-f", "jsonl"), ("-f", "csv"), ("--detail",)):
        result = run("--from-files", str(data), "changes", "--since", hex(since), *args)
        assert secret not in result.stdout and secret not in result.stderr
    shown = run("--from-files", str(data), "--show-secrets", "changes", "--since", hex(since), "-f", "json")
    assert secret in shown.stdout


def test_terminal_output_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    """A Storm error's first line comes from a worker: shown in the summary and the detail as escapes."""
    server = ZkServer(tmp_path / "server").start()
    try:
        client = KazooClient(server.connect_string, timeout=30)
        client.start(timeout=30)
        for path in ("/storm/storms", "/storm/assignments", "/storm/errors/t-1-1/bolt"):
            client.ensure_path(path)
        since = server.last_zxid() + 1
        error = {"error": "boom \x1b]52;c;aGk=\x07\x1b[2J here\n\tat x", "error_time_secs": NOW, "host": "h", "port": 1}
        client.create("/storm/errors/t-1-1/bolt/e", storm_gzip("ErrorInfo", error), sequence=True)
        client.stop()
        client.close()
    finally:
        server.stop()
    result = run("--from-files", str(tmp_path / "server" / "data"), "changes", "--since", hex(since), "--detail")
    assert result.exit_code == 0, result.stderr
    assert "boom \\x1b]52;c;aGk=\\x07\\x1b[2J here" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_reading_changes_holds_the_states_it_needs_not_the_tree_nor_the_txns(incident: Incident) -> None:
    """Bounded memory: the reader keeps a state for each znode the window touches and the few the change
    kinds read besides (``CONTEXT``), never the tree, and no heartbeat's bytes; txns are streamed."""
    from zkstorm.changes import read_changes
    from zkstorm.changes.reader import in_context

    log = read_changes(
        [str(incident.data)], since=incident.since_beats, until=incident.until_beats, kafka_root="/kafka"
    )
    changes = list(log)
    states = log.reader.states
    touched = {c.path for c in changes}
    assert set(states) <= {p for p in states if in_context(p)} | touched
    assert len(states) < len(list(cluster(scale=1, now=NOW))) / 4
    assert all(s.data is None for p, s in states.items() if "/workerbeats/" in p)
    assert log.stats.txns > len(touched)


def test_docs_document_the_change_kinds_columns() -> None:
    from zkstorm.export.parquet import schema_markdown, table_name
    from zkstorm.records import CHANGE_TYPES

    page = (Path(__file__).parents[1] / "docs" / "changes.md").read_text()
    documented = page.split("<!-- changes-schema:start -->\n", 1)[1].split("<!-- changes-schema:end -->", 1)[0]
    assert documented == schema_markdown(CHANGE_TYPES)
    assert all(f"`{table_name(t)}`" in page.split("## The change kinds", 1)[1] for t in CHANGE_TYPES)


# --- window bounds at every extreme: a usage error naming what is wrong, never an empty window or everything ---


@pytest.mark.parametrize(
    ("bound", "said"),
    [
        ("1e400d", "longer than ten thousand years"),
        ("100000000000d", "longer than ten thousand years"),
        ("-1", "a zxid is not negative"),
        ("-2h", "a duration is not negative"),
        ("-5s", "a duration is not negative"),
        ("nan", "not a number"),
        (hex(1 << 64), "past the largest zxid"),
        ("99999999999999999999", "past the largest zxid"),
        ("0001-01-01T00:00:00+14:00", "out of the range of times"),
    ],
)
@pytest.mark.parametrize("option", ["--since", "--until"])
def test_a_hostile_window_bound_is_a_usage_error(option: str, bound: str, said: str) -> None:
    result = run("--from-files", str(_folder(VARIANTS[0])), "changes", f"{option}={bound}")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert said in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize(
    "window",
    [
        ("--since", "0x100000010", "--until", "0x100000005"),  # two zxids
        ("--since", "2026-01-02T00:00Z", "--until", "2026-01-01T00:00Z"),  # two times
        ("--since", "1h", "--until", "2h"),  # two spans back: the end further back than the start
        ("--since", "1s", "--until", "0x1"),  # of two kinds, placed in the logs
    ],
)
def test_an_until_before_the_since_is_a_usage_error(window: tuple[str, ...]) -> None:
    result = run("--from-files", str(_folder(VARIANTS[0])), "changes", *window)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.strip() == "zkstorm: --until is before --since: the window is empty"


def test_a_zxid_past_a_long_is_refused_by_at_zxid_too() -> None:
    result = run("--from-files", str(_folder(VARIANTS[0])), "--at-zxid", hex(1 << 63), "tree", "/")
    assert result.exit_code == ExitCode.USAGE and "past the largest zxid" in result.stderr


# --- the fast path reads what the full parse reads ----------------------------------------------------
#
# ``changes`` reads a plain setData as a head (its path as bytes, its data sliced only where a change reads
# it) and hands a rewrite (a heartbeat, a supervisor's registration) over without a step
# (``zkstorm/changes/reader.py``); ``fast=False`` parses every txn whole and makes a step of each, as the
# reader did before. Every read below is made both ways, and must give the same records, summary, counts
# and problems: on every real data directory the suite holds, on the incident, and on a busy log.

_PARTS = ("records", "summary", "stats", "counters", "problems", "states")


def _read_all(data: Path | list[Path], *, fast: bool, **window: Any) -> tuple[Any, ...]:
    """Everything a read of ``window`` from ``data`` (a data directory, or files) gives: its records,
    summary, stats, counters and problems, and the states the reader kept, as they are at its end."""
    from zkstorm.changes import ChangeLog

    return _gathered(ChangeLog([str(p) for p in (data if isinstance(data, list) else [data])], fast=fast, **window))


def _gathered(log: Any) -> tuple[Any, ...]:
    """``_read_all`` of a ``ChangeLog`` made."""
    records = list(log)
    states = {
        path: (s.data, s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.aversion, s.owner)
        for path, s in log.reader.states.items()
    }
    return records, log.summary(), asdict(log.stats), asdict(log.counters), log.problems, states


def _difference(fast: tuple[Any, ...], full: tuple[Any, ...]) -> str | None:
    """Where the two reads differ first, or None."""
    for part, a, b in zip(_PARTS, fast, full, strict=True):
        if a == b:
            continue
        if part in ("records", "summary"):
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            got = a[at] if at < len(a) else "nothing"
            want = b[at] if at < len(b) else "nothing"
            return f"{part} [{at}] ({len(a)} against {len(b)}): fast {got!r}, full {want!r}"
        return f"{part}: fast {a!r}, full {b!r}"
    return None


def _fast_is_full(data: Path | list[Path], **window: Any) -> tuple[Any, ...]:
    """What a read of ``window`` gives (``_read_all``), the same both ways."""
    fast, full = _read_all(data, fast=True, **window), _read_all(data, fast=False, **window)
    difference = _difference(fast, full)
    assert difference is None, f"{data} {window}: {difference}"
    return fast


def _fixture_windows(variant: str) -> list[dict[str, Any]]:
    """Windows over a fixture's logs: all of them, from each snapshot, to their middle, by time."""
    var = EXPECTED["variants"][variant]
    older, newest = (name_zxid(var[key], "snapshot") for key in ("older_snapshot", "newest_snapshot"))
    assert older is not None and newest is not None
    times = _txn_times(_folder(variant))
    zxids = sorted(times)
    middle = zxids[len(zxids) // 2]
    back = timedelta(milliseconds=times[zxids[-1]] - times[middle])
    return [
        {},
        {"since": older + 1},
        {"since": newest + 1},
        {"since": older + 1, "until": middle},
        {"since": time_of_ms(times[middle]), "until": time_of_ms(times[zxids[-2]])},
        {"since": back},
    ]


def time_of_ms(time_ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=time_ms)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_fast_path_reads_every_real_data_directory_as_the_full_parse(variant: str) -> None:
    for window in _fixture_windows(variant):
        _fast_is_full(_folder(variant), **window)


def test_the_fast_path_reads_the_incident_as_the_full_parse(incident: Incident) -> None:
    """The incident's server wrote heartbeats too: rewrites, a worker silent and back, one started and
    stopped; with a threshold of a millisecond every worker goes stale between two of its beats."""
    windows: list[dict[str, Any]] = [
        {},
        {"since": incident.since, "until": incident.until},
        {"since": incident.since_beats, "until": incident.until_beats, "stale_after_secs": 1.0},
        {"since": incident.since_beats, "stale_after_secs": 0.001},
        {"until": incident.until_beats, "stale_after_secs": 0.001},
    ]
    found = [_fast_is_full(incident.data, **window)[0] for window in windows]
    kinds = {type(r).__name__ for r in found[2] + found[3]}
    assert {"StormWorkerResumed", "StormWorkerStale", "StormWorkerStarted", "StormWorkerStopped"} <= kinds


@dataclass
class Busy:
    """A real server's data directory after a busy stretch (``busy``)."""

    data: Path
    snapshots: list[int]  # the zxids of the snapshots it took meanwhile
    zxids: list[int]  # of every logged txn


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Busy]:
    """A server taking what a busy cluster writes, as the benchmark's writer (``bench/bench_changes.py``)
    does at a larger size: every worker's heartbeat rewritten, a quarter of the supervisors' registrations
    (with a new ``time_secs`` each time, as Storm's ``supervisorHeartbeat`` writes it), partition states
    shrinking and growing their ISR; a stretch in which two workers write nothing; a supervisor leaving
    near the end. A small ``snapCount`` makes the server roll its log and take snapshots (fuzzy ones: the
    writes go on) as it goes."""
    base = tmp_path_factory.mktemp("busy")
    server = ZkServer(base / "server", extra_config={"snapCount": "400"}).start()
    client = KazooClient(server.connect_string, timeout=60)
    client.start(timeout=30)
    try:
        _seed(client, list(cluster(scale=1, now=NOW)))
        busy = rewritten(client)
        beats, supervisors, states = busy.beats, busy.supervisors, busy.states
        silent = {path for path, _ in beats[:2]}
        pending: list[Any] = []
        for round_ in range(200):
            quiet = 80 <= round_ < 130
            for path, data in beats:
                if not (quiet and path in silent):
                    pending.append(client.set_async(path, data))
            for path, data in supervisors[: max(1, len(supervisors) // 4)]:
                (info,) = (r for r in _records(path, data) if isinstance(r, StormSupervisor))
                again = {"time_secs": NOW + round_, "hostname": info.hostname, "assignment_id": info.supervisor_id}
                again |= {"used_ports": [], "meta": [6700, 6701, 6702, 6703], "uptime_secs": 3600 + round_}
                pending.append(client.set_async(path, storm_gzip("SupervisorInfo", again)))
            for path in sorted(states)[round_ % 20 :: 20]:
                state = states[path]
                if len(state["isr"]) > 1 and round_ % 2:
                    state["isr"] = state["isr"][:-1]
                elif state["leader"] >= 0:
                    state["isr"] = sorted({*state["isr"], state["leader"]})
                state["leader_epoch"] += 1
                pending.append(client.set_async(path, kafka_json(state)))
            if round_ == 190:
                pending.append(client.delete_async(supervisors[-1][0]))
            for result in pending:
                result.get(timeout=60)
            pending.clear()
            time.sleep(0.01)
    finally:
        client.stop()
        client.close()
        server.stop()
    data = base / "server" / "data"
    folder = data / "version-2"
    snapshots = sorted(z for p in folder.iterdir() if (z := name_zxid(p.name, "snapshot")) is not None)
    yield Busy(data, snapshots, sorted(_txn_times(data)))


def test_the_fast_path_reads_a_busy_log_as_the_full_parse(busy: Busy) -> None:
    """Heartbeats and supervisors rewritten a few thousand times over logs that roll and snapshots taken
    meanwhile: from every snapshot (a fuzzy one holds heartbeats from after its zxid), to the middle, and
    with thresholds at which workers go stale and come back all the time, or only in the silent stretch."""
    assert len(busy.snapshots) >= 5
    middle = busy.zxids[len(busy.zxids) // 2]
    windows: list[dict[str, Any]] = [{}, {"stale_after_secs": 0.001}, {"stale_after_secs": 0.1}]
    some = busy.snapshots[1 :: max(1, len(busy.snapshots) // 4)]
    windows += [{"since": snapshot + 1, "stale_after_secs": 0.05} for snapshot in some]
    windows += [{"since": busy.snapshots[1] + 7, "until": middle}]
    found = [_fast_is_full(busy.data, **window)[0] for window in windows]
    kinds = {type(r).__name__ for r in found[1]}
    assert {"StormWorkerResumed", "StormWorkerStale", "KafkaPartitionChanged", "StormSupervisorLeft"} <= kinds
    # each snapshot alone, with the logs: a fuzzy one is the only state there is, and the heartbeats it
    # caught after its zxid are rewritten with their state before not known
    folder = busy.data / "version-2"
    logs = sorted(p for p in folder.iterdir() if name_zxid(p.name, "log") is not None)
    unknown = 0
    for snapshot in busy.snapshots[1:]:
        alone = [folder / f"snapshot.{snapshot:x}", *logs]
        unknown += _fast_is_full(alone, since=snapshot + 1, stale_after_secs=0.05)[2]["unknown_before"]
    assert unknown


def _broken_heads(change: Any) -> Any:
    """``LogFile.heads`` with ``change`` made to every setData head it yields."""
    heads = LogFile.heads

    def broken(self: LogFile, after: int = -1, *, verify: bool = True) -> Iterator[Any]:
        for head in heads(self, after, verify=verify):
            yield change(head) if head.body is None else head

    return broken


class _BrokenStructs:
    """The structs pass 3 reads a record's frame and a setData's ints with (``reader.FRAMED_SET`` and
    ``reader.INT``), made to read one field wrong: the time of a setData, or the second int after a
    frame (a setData's version, read after its data's length)."""

    def __init__(self, framed: Any, integer: Any, *, late: bool = False, version: bool = False) -> None:
        self.framed, self.integer, self.late, self.version = framed, integer, late, version
        self.ints = 0  # ints read since the last frame

    def frame(self, buf: bytes, pos: int = 0) -> tuple[Any, ...]:
        fields = list(self.framed.unpack_from(buf, pos))
        if self.late and fields[6] == 5:  # SET_DATA
            fields[5] += 1
        self.ints = 0
        return tuple(fields)

    def int(self, buf: bytes, pos: int = 0) -> tuple[int]:
        (value,) = self.integer.unpack_from(buf, pos)
        self.ints += 1
        return (value + 1,) if self.version and self.ints == 2 else (value,)


def _breaking(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    from types import SimpleNamespace

    from zkstorm.changes import reader
    from zkstorm.changes.kinds import Engine
    from zkstorm.changes.reader import ChangeReader

    if how in ("a setData head's time one ms late", "a setData head's version one more"):
        broken = _BrokenStructs(reader.FRAMED_SET, reader.INT, late="time" in how, version="version" in how)
        framed = SimpleNamespace(unpack_from=broken.frame, size=reader.FRAMED_SET.size)
        monkeypatch.setattr(reader, "FRAMED_SET", framed)
        monkeypatch.setattr(reader, "INT", SimpleNamespace(unpack_from=broken.int, size=reader.INT.size))
    elif how == "pass 1 not noting a setData head's path":
        monkeypatch.setattr(LogFile, "heads", _broken_heads(lambda h: h._replace(path=h.path + b"~")))
    elif how == "a rewrite's return left untold":
        rewritten = Engine.rewritten
        monkeypatch.setattr(
            Engine,
            "rewritten",
            lambda self, run, w: [r for r in rewritten(self, run, w) if type(r).__name__ != "StormWorkerResumed"],
        )
    elif how == "rewrites before the window counted":
        counted = ChangeReader._counted
        monkeypatch.setattr(ChangeReader, "_counted", lambda self, run, unknown, w: counted(self, run, unknown, True))
    elif how == "a supervisor's rewrite not keeping its data":
        route = ChangeReader._route
        keep, light = reader._REWRITE_KEEP, reader._REWRITE_LIGHT

        def no_data(self: Any, raw: bytes, rewrite: Any) -> tuple[str, int]:
            path, then = route(self, raw, rewrite)
            return path, light if then == keep else then

        monkeypatch.setattr(ChangeReader, "_route", no_data)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "a setData head's time one ms late",
        "a setData head's version one more",
        "pass 1 not noting a setData head's path",
        "a rewrite's return left untold",
        "rewrites before the window counted",
        "a supervisor's rewrite not keeping its data",
    ],
)
def test_a_broken_fast_path_is_told_from_the_full_parse(monkeypatch: pytest.MonkeyPatch, busy: Busy, how: str) -> None:
    """The comparison above is not blind: each way of breaking the fast path on purpose makes it fail,
    on the busy log, and (where the fixtures write what it breaks: setData txns, no rewrites) on them."""
    _breaking(monkeypatch, how)
    middle = busy.zxids[len(busy.zxids) // 2]  # (the supervisors' session closes at the end: their states go)
    since = busy.snapshots[1] + 1
    if how == "rewrites before the window counted":  # a window that starts midway between two snapshots,
        # so that pass 3 meets rewrites before it however the snapshots fell (the server times them by load)
        snapshots = busy.snapshots[1:]  # (the first is the empty server's, of another epoch)
        pairs = [(a, b) for a, b in pairwise(snapshots) if a >> 32 == b >> 32 and b - a > 40 and b < middle]
        since = (pairs[0][0] + pairs[0][1]) // 2
    window: dict[str, Any] = {"since": since, "until": middle, "stale_after_secs": 0.001}
    assert _difference(_read_all(busy.data, fast=True, **window), _read_all(busy.data, fast=False, **window))
    if how.startswith(("a setData", "pass 1")):
        variant = VARIANTS[0]
        for window in _fixture_windows(variant)[:1]:
            fast = _read_all(_folder(variant), fast=True, **window)
            assert _difference(fast, _read_all(_folder(variant), fast=False, **window))


@pytest.mark.parametrize(
    ("how", "told"),
    [
        ("zeros from a record on", "the logs end at zxid"),
        ("a length into the zeros", "no record at byte"),
        ("an unknown txn type", "cannot be read"),
    ],
)
def test_a_log_changed_between_the_passes_is_a_files_error(tmp_path: Path, how: str, told: str) -> None:
    """Pass 3's own loop finds again the records pass 1 read and checked, without their checksums: a log
    changed in between (cut short, a record's length, its txn type) is a ``FilesError`` (exit 7) naming
    the log, never changes read from what is not there."""
    from tests.test_zkfiles import record_starts
    from zkstorm.changes import ChangeLog

    data = tmp_path / "data"
    shutil.copytree(_folder("zk395-plain"), data)
    log = ChangeLog([str(data)])
    log.open()  # passes 1 and 2
    changed = last_log(data / "version-2")
    if how == "an unknown txn type":
        blob = bytearray(changed.read_bytes())
        at = record_starts(blob)[1]
        blob[at + 12 + 28 : at + 12 + 32] = (99).to_bytes(4, "big")  # the txn header's type
        changed.write_bytes(bytes(blob))
    else:
        damage_log(changed, how, record=1)
    with pytest.raises(FilesError) as raised:
        list(log)
    assert told in str(raised.value) and raised.value.exit_code == ExitCode.FILES
    assert "the file changed since it was read" in str(raised.value)


def _read_with(monkeypatch: pytest.MonkeyPatch, data: Path, *, helpers: bool, **window: Any) -> Any:
    """``_read_all`` with pass 1's logs read by two forked helpers (whatever the logs' size) or one by one
    here, and how many logs the helpers' reads stood for; or the ``FilesError`` the read ended in."""
    from zkstorm.changes import ChangeLog, reader

    monkeypatch.setattr(reader, "_parallel", lambda logs: 2 if helpers else 1)
    log = ChangeLog([str(data)], **window)
    try:
        return _gathered(log), log.reader.helped
    except FilesError as exc:
        return f"FilesError: {exc}", log.reader.helped


def test_pass_1_read_by_helper_processes_reads_as_one_by_one(monkeypatch: pytest.MonkeyPatch, busy: Busy) -> None:
    """Pass 1 reads big logs two at a time in forked helpers, each log alone, and merges what they found
    in order: the same records, summary, stats, counters, problems and states as reading them one by one,
    over every window bounded by zxids (a window with a time bound is read one by one either way)."""
    middle = busy.zxids[len(busy.zxids) // 2]
    windows: list[tuple[Path, dict[str, Any]]] = [
        (busy.data, {}),
        (busy.data, {"since": busy.snapshots[1] + 1, "until": middle, "stale_after_secs": 0.001}),
        (busy.data, {"since": middle}),
    ]
    for variant in VARIANTS:
        windows += [(_folder(variant), w) for w in _fixture_windows(variant)[:4]]
    for data, window in windows:
        by_helpers, helped = _read_with(monkeypatch, data, helpers=True, **window)
        one_by_one, none = _read_with(monkeypatch, data, helpers=False, **window)
        assert helped >= 2 and none == 0, (data, window)
        assert by_helpers == one_by_one, (data, window, _difference(by_helpers, one_by_one))


@pytest.mark.parametrize("first", [True, False], ids=["first log", "last log"])
@pytest.mark.parametrize("how", [*HOLES, *ENDS, "a checksum wrong", "a log gone"])
def test_pass_1_read_by_helpers_fails_as_one_by_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str, first: bool
) -> None:
    """A damaged log, a torn one, a log gone from between two others: the helpers' reads end as reading
    the logs one by one ends, with the same message, or (best effort) the same changes and problems."""
    data = tmp_path / "data"
    shutil.copytree(_folder("zk395-plain"), data)
    logs = sorted((data / "version-2").glob("log.*"), key=lambda p: int(p.name.split(".")[1], 16))
    if how == "a log gone":  # the second, or the one before the last
        (logs[1] if first else logs[-2]).unlink()
    elif how == "a checksum wrong":
        log = logs[0] if first else logs[-1]
        blob = bytearray(log.read_bytes())
        blob[16 + 12 + 20] ^= 0xFF  # inside the first record's txn header: its checksum no longer holds
        log.write_bytes(bytes(blob))
    else:
        damage_log(logs[0] if first else logs[-1], how, record=1)
    since = name_zxid(EXPECTED["variants"]["zk395-plain"]["older_snapshot"], "snapshot")
    assert since is not None
    for best_effort in (False, True):
        window = {"best_effort": best_effort, "since": since + 1}
        by_helpers, _ = _read_with(monkeypatch, data, helpers=True, **window)
        one_by_one, _ = _read_with(monkeypatch, data, helpers=False, **window)
        assert by_helpers == one_by_one, (how, best_effort)
