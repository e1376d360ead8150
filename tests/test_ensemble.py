"""`zkstorm zk`: the ensemble's members and health against a real three-member ensemble on loopback, what
fills ZooKeeper (usage) live and over its files, and the parsers on what real servers printed.

The ensemble (one per module, started from the jars the suite uses) is mixed on purpose: member 1 allows
srvr, mntr, conf and isro; member 2 allows srvr only but runs the AdminServer (and may go read-only);
member 3 allows srvr only, the 3.5+ default. Members are stopped for real, by their process.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ENSEMBLES, Chroot
from tests.test_cli import run
from zkstorm.decode.registry import REGISTRY
from zkstorm.ensemble.fourletter import (
    NotServing,
    WordRefused,
    checked,
    monitor_values,
    parse_admin,
    parse_conf,
    parse_config,
    parse_mntr,
    parse_srvr,
    voting_view_peers,
)
from zkstorm.ensemble.health import (
    LargeZnode,
    Thresholds,
    even_ensemble,
    file_descriptors,
    findings,
    followers_behind,
    mixed_versions,
    quorum_at_risk,
    slow_members,
)
from zkstorm.ensemble.members import EnsembleState, transactions_behind
from zkstorm.ensemble.usage import KIND_MEANINGS, UsageTally, describe_znode, kind_of
from zkstorm.errors import ExitCode
from zkstorm.layout import Roots
from zkstorm.records import ZkMember
from zkstorm.sandbox.seed import seed
from zkstorm.sandbox.server import ZkEnsemble, free_port
from zkstorm.sandbox.synth import cluster

DATA = Path(__file__).parent / "data" / "fourletter"
FULL_WORDS = "srvr,mntr,conf,isro"
NOW = 1_790_000_000


def text(name: str) -> str:
    return (DATA / name).read_text()


# --- the parsers, on what real servers printed ----------------------------------------------------------


def test_srvr_of_a_leader_a_follower_and_a_read_only_member() -> None:
    leader = parse_srvr(text("srvr-leader.txt"))
    assert (leader.version, leader.mode, leader.read_only) == ("3.9.3", "leader", False)
    assert leader.zxid == 0x100000009 and leader.node_count == 12
    assert (leader.latency_min_ms, leader.latency_max_ms) == (0, 0) and leader.latency_avg_ms == 0.0
    assert (leader.connections, leader.outstanding) == (1, 0)
    assert parse_srvr(text("srvr-follower.txt")).mode == "follower"
    read_only = parse_srvr(text("srvr-read-only.txt"))
    assert (read_only.mode, read_only.read_only) == ("read-only", True)
    assert text("isro-read-only.txt").strip() == "ro" and text("isro-leader.txt").strip() == "rw"


def test_refused_and_not_serving_answers_are_told_apart() -> None:
    for word in ("mntr", "conf", "isro"):
        with pytest.raises(WordRefused):
            checked(word, text(f"{word}-refused.txt"))
    for word in ("srvr", "mntr"):
        with pytest.raises(NotServing):
            checked(word, text(f"{word}-not-serving.txt"))
    assert checked("srvr", text("srvr-refused.txt")).startswith("Zookeeper version")  # srvr is always allowed


def test_mntr_and_the_admin_servers_monitor_give_the_same_figures() -> None:
    leader = parse_mntr(text("mntr-leader.txt"))
    assert (leader["server_state"], leader["learners"], leader["synced_followers"]) == ("leader", "2", "2")
    follower = parse_mntr(text("mntr-follower.txt"))
    assert follower["server_state"] == "follower" and "learners" not in follower
    monitor = monitor_values(parse_admin(text("admin-monitor.json")))
    assert monitor["server_state"] == "follower"
    # the follower's monitor and mntr, read a moment apart: the same keys, and the figures that stay put equal
    assert set(follower) <= set(monitor) | {"local_sessions"}
    for key in ("znode_count", "watch_count", "ephemerals_count", "approximate_data_size", "max_file_descriptor_count"):
        assert monitor[key] == follower[key], key
    assert monitor_values(parse_admin(text("admin-monitor-read-only.json")))["server_state"] == "read-only"


def test_conf_and_zookeeper_config_name_the_same_members() -> None:
    conf = parse_conf(text("conf-leader.txt"))
    assert conf.server_id == 3 and conf.config_version == 0
    peers, version = parse_config(text("zookeeper-config.txt"))
    assert conf.peers == peers and version == 0
    assert [p.server_id for p in peers] == [1, 2, 3]
    assert all(p.client_host == "127.0.0.1" and p.client_port and p.learner_type == "participant" for p in peers)
    assert conf.client_port == next(p.client_port for p in peers if p.server_id == 3)
    assert voting_view_peers(json.loads(text("admin-voting_view.json"))) == peers
    static = parse_conf(text("conf-static.txt"))  # a static zoo.cfg's line names no client address
    assert [(p.server_id, p.client_host, p.client_port) for p in static.peers] == [(1, None, None)]


def test_server_lines_of_every_form() -> None:
    (peer,), _ = parse_config("server.7=[::1]:2888:3888:observer;[::1]:2181\nversion=1a")
    assert (peer.host, peer.quorum_port, peer.learner_type, peer.client_host, peer.client_port) == (
        "::1",
        2888,
        "observer",
        "::1",
        2181,
    )
    (wild,), version = parse_config("server.2=zk2:2888:3888|zk2b:2889:3889;2181\nversion=100000000")
    assert (wild.host, wild.client_host, wild.client_port, version) == ("zk2", "0.0.0.0", 2181, 0x100000000)
    assert parse_config("group.1=1:2:3\nweight.1=1\nserver.x=y\nserver.3=nonsense")[0] == []


def test_transactions_behind_the_leader_count_within_an_epoch() -> None:
    assert transactions_behind(0x10000000A, 0x100000004) == 6
    assert transactions_behind(0x100000000, 0x0) == 0  # the new epoch's mark: no transaction yet
    assert transactions_behind(0x200000005, 0x100000FFF) == 5  # still in the old epoch: behind all of the new
    assert transactions_behind(0x100000004, 0x100000009) == 0  # read a moment after the leader


# --- the rules on hand-built members --------------------------------------------------------------------


def member(**fields: Any) -> ZkMember:
    values: dict[str, Any] = {f.name: None for f in dataclasses.fields(ZkMember)}
    values.update(host="zk", port=2181, mode="follower", serving=True, source="4lw", named_in="zk")
    values.update(fields)
    return ZkMember(**values)


def test_member_rules_on_their_thresholds() -> None:
    limits = Thresholds()
    state = EnsembleState(
        [
            member(host="a", mode="leader", learner_type="participant", version="3.9.3"),
            member(host="b", zxid_lag=1001, latency_avg_ms=150.0, outstanding_requests=101, version="3.8.4"),
            member(host="c", zxid_lag=1000, latency_avg_ms=100.0, outstanding_requests=100, version="3.9.3"),
            member(host="d", open_file_descriptors=800, max_file_descriptors=1000, version="3.9.3"),
        ],
        voting=4,
        membership_source="conf of a:2181",
    )
    assert [f.member for f in followers_behind(state, limits)] == ["b:2181"]
    assert [(f.finding, f.member) for f in slow_members(state, limits)] == [
        ("high_latency", "b:2181"),
        ("outstanding_requests", "b:2181"),
    ]
    assert [f.member for f in file_descriptors(state, limits)] == ["d:2181"]
    assert "3.8.4 on b:2181; 3.9.3 on a:2181, c:2181, d:2181" in mixed_versions(state, limits)[0].detail
    assert even_ensemble(state, limits)[0].detail.startswith("4 voting members survive the loss of 1, as 3 would")
    assert quorum_at_risk(state, limits) == []  # 4 of 4 serve: one may go
    three = EnsembleState([*state.members[:2], member(host="x", mode="unreachable", serving=False)], 3, "conf")
    assert [f.finding for f in quorum_at_risk(three, limits)] == ["quorum_at_risk"]
    assert even_ensemble(three, limits) == []


def test_a_znode_near_or_past_jute_maxbuffer_is_a_finding_named_by_its_meaning() -> None:
    limits = Thresholds(jute_maxbuffer=1000)
    state = EnsembleState([member(mode="leader")], 1, "conf")
    found = findings(
        state,
        limits,
        [LargeZnode("/a", 899, "small"), LargeZnode("/b", 900, "near"), LargeZnode("/c", 1000, "past")],
    )
    assert [(f.finding, f.level, f.path) for f in found if f.path] == [
        ("znode_over_jute_maxbuffer", "error", "/c"),
        ("znode_near_jute_maxbuffer", "warning", "/b"),
    ]


# --- usage: kinds, meanings, subtrees --------------------------------------------------------------------


def test_every_registered_kind_has_a_meaning() -> None:
    kinds = {d.kind for d in REGISTRY.decoders()}
    assert {"storm_assignment", "storm_worker", "kafka_partition_state", "kafka_consumer_offset"} <= kinds
    assert kinds <= set(KIND_MEANINGS)


def test_znodes_are_named_by_their_storm_and_kafka_meaning() -> None:
    roots = Roots(storm=("/storm",), kafka=("/kafka",))

    def named(path: str) -> str:
        return describe_znode(path, kind_of(path, roots))

    assert (
        named("/storm/assignments/wordcount-3-1700000000")
        == "assignment of topology wordcount (wordcount-3-1700000000)"
    )
    assert named("/storm/workerbeats/wc-1-2/node-6700") == "heartbeat of worker node-6700 of topology wc (wc-1-2)"
    assert named("/storm/errors/wc-1-2/my%20bolt/e0000000001") == "errors of component my bolt of topology wc (wc-1-2)"
    assert named("/kafka/admin/reassign_partitions") == "reassignment JSON (admin/reassign_partitions)"
    assert named("/kafka/brokers/topics/orders/partitions/3/state") == "state of partition orders-3"
    assert named("/kafka/consumers/g1/offsets/orders/3") == "offset of old consumer group g1 on orders-3"
    assert named("/storm/workerbeats/wc-1-2") == "Storm subtrees' own znodes (not decoded) (workerbeats/wc-1-2)"
    assert named("/zookeeper/quota") == "ZooKeeper's own (quotas, configuration)"
    assert named("/elsewhere") == "outside any Storm or Kafka root"


def test_the_walks_kind_lookup_agrees_with_the_registry_znode_by_znode() -> None:
    """``KindLookup`` shares a kind among siblings: over every fixture cluster and the sandbox, in several
    orders (so that each sibling is sometimes the first met), it gives what the registry's own lookup gives."""
    import random

    from tests.fixtures import all_clusters, manifest
    from zkstorm.ensemble.usage import KindLookup

    roots = Roots(
        storm=("/storm", "/storm1", "/storm-next", "/legacy-storm"),
        kafka=("/", "/kafka", "/kafka-prod", "/clusters/analytics"),
    )
    paths = sorted({n.path for system, name in all_clusters() for n in manifest(system, name)})
    paths += [n.path for n in cluster(scale=2, now=NOW)]
    for seed_ in range(3):
        random.Random(seed_).shuffle(paths)
        lookup = KindLookup(roots)
        for path in paths:
            claimed = REGISTRY.lookup(path, roots) is not None
            assert lookup(path, claimed) == kind_of(path, roots), path
    assert len(KindLookup(roots)._siblings) == 0  # made fresh: nothing shared before a walk


def test_subtrees_partition_the_read_and_an_empty_root_is_not_a_cluster() -> None:
    roots = Roots(storm=("/storm",), kafka=("/",))  # the default Kafka root, where there is no Kafka
    tally = UsageTally("/", depth=2, largest=2)
    for path, size in [("/", 0), ("/storm", 0), ("/storm/storms", 0), ("/storm/storms/t-1-2", 7), ("/x", 3)]:
        tally.add(path, size, False, kind_of(path, roots))
    subtrees = {r.key: (r.znodes, r.data_bytes) for r in tally.subtree_rows()}
    assert subtrees == {"/": (1, 0), "/storm": (1, 0), "/storm/storms": (2, 7), "/x": (1, 3)}
    kinds = {(r.key, r.root): r.znodes for r in tally.kind_rows()}
    assert kinds == {("storm_topology", "/storm"): 1, ("storm_other", "/storm"): 2, ("other", None): 2}
    assert [(r.key, r.data_bytes) for r in tally.znode_rows()] == [("/storm/storms/t-1-2", 7), ("/x", 3)]


# --- a real three-member ensemble ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZkEnsemble]:
    admin = free_port()
    started = ZkEnsemble(
        tmp_path_factory.mktemp("ensemble"),
        member_config={
            1: {"4lw.commands.whitelist": FULL_WORDS},
            2: {"4lw.commands.whitelist": "srvr"},
            3: {"4lw.commands.whitelist": "srvr"},
        },
        admin_ports={2: admin},
        jvm_options={2: ["-Dreadonlymode.enabled=true"]},
    )
    started.admin_port = admin  # type: ignore[attr-defined]
    ENSEMBLES.append(started)
    try:
        yield started.start()
    finally:
        started.stop()
        ENSEMBLES.remove(started)


def zk(ensemble: ZkEnsemble, *args: str, members: tuple[int, ...] = (1, 2, 3), admin: bool = True) -> Any:
    hosts = ",".join(ensemble.members[i].connect_string for i in members)
    admin_port = str(ensemble.admin_port) if admin else "0"  # type: ignore[attr-defined]
    return run("--zk", hosts, "--timeout", "5", "zk", *args, "--admin-port", admin_port)


def by_id(result: Any) -> dict[int | None, dict[str, Any]]:
    assert result.exit_code == 0, result.output
    return {m["server_id"]: m for m in json.loads(result.stdout)}


def notes(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("zkstorm: note: ")]


def test_every_member_is_shown_with_its_mode_from_one_host_and_the_configuration(ensemble: ZkEnsemble) -> None:
    """--zk names member 1 only: the other two come from its conf; each is read its own way."""
    ensemble.ensure([1, 2, 3])
    result = zk(ensemble, "members", "-f", "json", members=(1,))
    members = by_id(result)
    assert sorted(members) == [1, 2, 3]
    leader = ensemble.leader()
    assert {i: m["mode"] for i, m in members.items()} == {i: "leader" if i == leader else "follower" for i in (1, 2, 3)}
    assert [members[i]["named_in"] for i in (1, 2, 3)] == ["zk", "config", "config"]
    assert all(m["serving"] and m["read_only"] is False and m["version"] == "3.9.3" for m in members.values())
    assert members[leader]["zxid_lag"] == 0 and all(m["zxid_lag"] is not None for m in members.values())
    for i, m in members.items():
        assert m["port"] == ensemble.members[i].port and m["learner_type"] == "participant"
    assert members[1]["source"] == "4lw" and members[1]["watch_count"] is not None
    assert members[1]["problem"] is None and members[1]["advice"] is None
    # member 2 allows srvr only; its AdminServer gives mntr's figures
    assert members[2]["source"] == "admin" and members[2]["approximate_data_bytes"] is not None
    assert "read through the AdminServer" in members[2]["problem"] and members[2]["advice"] is None
    # member 3 allows srvr only and has no AdminServer (the one on --admin-port is member 2's)
    assert members[3]["source"] == "srvr" and members[3]["watch_count"] is None
    assert members[3]["znode_count"] is not None and members[3]["latency_max_ms"] is not None
    assert "is the one of client port" in members[3]["problem"]
    (note,) = notes(result)  # the one-line advice, for member 3 only
    assert note.startswith(f"zkstorm: note: 127.0.0.1:{ensemble.members[3].port}: mntr, conf not in ")
    assert note.endswith(
        "no AdminServer (the AdminServer on port "
        f"{ensemble.admin_port} is the one of client port {ensemble.members[2].port}): add mntr and conf to "  # type: ignore[attr-defined]
        "4lw.commands.whitelist in its zoo.cfg (4lw.commands.whitelist=srvr,mntr,conf,isro) and restart it, or "
        "enable its AdminServer (admin.enableServer=true), which zkstorm reads on --admin-port"
    )


def test_members_come_from_zookeeper_config_when_no_member_prints_conf(ensemble: ZkEnsemble) -> None:
    ensemble.ensure([1, 2, 3])
    result = zk(ensemble, "members", "-f", "json", members=(3,), admin=False)
    members = by_id(result)
    assert sorted(members) == [1, 2, 3] and [members[i]["named_in"] for i in (1, 2, 3)] == ["config", "config", "zk"]
    assert {members[i]["source"] for i in (2, 3)} == {"srvr"}  # no AdminServer asked
    assert len(notes(result)) == 2  # members 2 and 3


def test_health_of_the_whole_ensemble_and_its_metrics(ensemble: ZkEnsemble) -> None:
    ensemble.ensure([1, 2, 3])
    result = zk(ensemble, "health", "-f", "json", "--members-only", "--check")
    assert result.exit_code == 0, result.output
    found = [(f["finding"], f["level"], f["member"]) for f in json.loads(result.stdout)]
    assert found == [("four_letter_words_not_allowed", "warning", ensemble.members[3].connect_string)]
    scrape = zk(ensemble, "health", "-f", "prometheus", "--members-only")
    assert scrape.exit_code == 0, scrape.output
    metrics: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(scrape.stdout):
        for sample in family.samples:
            metrics.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    assert metrics["zkstorm_zk_members"][()] == 3 and metrics["zkstorm_zk_quorum"][()] == 1
    assert metrics["zkstorm_zk_members_serving"][()] == 3
    assert sorted(metrics["zkstorm_zk_member_up"].values()) == [1, 1, 1]
    assert sum(metrics["zkstorm_zk_member_leader"].values()) == 1
    watched = {dict(k)["member"] for k in metrics["zkstorm_zk_member_watches"]}
    assert watched == {ensemble.members[i].connect_string for i in (1, 2)}  # member 3 does not say
    assert metrics["zkstorm_zk_findings"] == {(("finding", "four_letter_words_not_allowed"), ("level", "warning")): 1}


def test_a_member_named_twice_is_one_member(ensemble: ZkEnsemble) -> None:
    """--zk naming member 1 by its address and by localhost: the same server id, one member."""
    ensemble.ensure([1, 2, 3])
    port = ensemble.members[1].port
    result = run("--zk", f"127.0.0.1:{port},localhost:{port}", "zk", "members", "-f", "json", "--admin-port", "0")
    assert result.exit_code == 0, result.output
    assert sorted(m["server_id"] for m in json.loads(result.stdout)) == [1, 2, 3]


def test_a_member_that_hangs_costs_no_more_than_the_timeout(ensemble: ZkEnsemble) -> None:
    """A member stopped with SIGSTOP accepts connections (the kernel completes them) and answers nothing:
    it is unreachable after --timeout, while the others are read in parallel all the same."""
    import os
    import signal

    ensemble.ensure([1, 2, 3])
    hung = next(i for i in (3, 2) if i != ensemble.leader())
    process = ensemble.members[hung].process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        hosts = ",".join(m.connect_string for m in ensemble.members.values())
        result = run("--zk", hosts, "--timeout", "2", "zk", "members", "-f", "json", "--admin-port", "0")
        took = time.monotonic() - started
    finally:
        os.kill(process.pid, signal.SIGCONT)
    assert result.exit_code == 0, result.output
    members = {m["port"]: m for m in json.loads(result.stdout)}
    stuck = members[ensemble.members[hung].port]
    assert (stuck["mode"], stuck["problem"]) == ("unreachable", "no answer within --timeout")
    assert sum(m["serving"] for m in members.values()) == 2
    assert took < 5, took


def test_one_member_stopped_is_unreachable_and_the_quorum_holds(ensemble: ZkEnsemble) -> None:
    leader = ensemble.leader()
    down = next(i for i in (2, 1, 3) if i != leader)
    ensemble.ensure([i for i in (1, 2, 3) if i != down])
    members = by_id(zk(ensemble, "members", "-f", "json"))
    assert (members[down]["mode"], members[down]["problem"], members[down]["serving"]) == (
        "unreachable",
        "connection refused",
        False,
    )
    assert sorted(m["mode"] for i, m in members.items() if i != down) == ["follower", "leader"]
    result = zk(ensemble, "health", "-f", "json", "--members-only", "--check")
    assert result.exit_code == 0, result.output  # warnings only: the ensemble serves
    found = {f["finding"]: f for f in json.loads(result.stdout)}
    assert found["member_unreachable"]["member"] == ensemble.members[down].connect_string
    assert found["quorum_at_risk"]["detail"].startswith("2 of 3 voting members serve")
    assert "no_quorum" not in found


def test_two_members_stopped_is_no_quorum_and_check_exits_6(ensemble: ZkEnsemble) -> None:
    ensemble.ensure([1])
    listed = zk(ensemble, "members", "-f", "json")
    assert listed.exit_code == 0, listed.output
    modes = Counter((m["port"], m["mode"]) for m in json.loads(listed.stdout))
    assert modes == {(ensemble.members[1].port, "not-serving"): 1} | {
        (ensemble.members[i].port, "unreachable"): 1 for i in (2, 3)
    }
    result = zk(ensemble, "health", "--check", "-f", "json")
    assert result.exit_code == ExitCode.UNHEALTHY, result.output
    found = {f["finding"]: f for f in json.loads(result.stdout)}
    assert found["no_quorum"]["level"] == "error"
    assert found["no_quorum"]["detail"].startswith("no member leads: 1 of 3 members answer")
    assert found["member_not_serving"]["member"] == ensemble.members[1].connect_string
    assert found["sizes_not_checked"]["level"] == "info"  # no session can walk the tree
    table = zk(ensemble, "health", "--check")
    assert table.exit_code == ExitCode.UNHEALTHY and "no_quorum" in table.stdout


def test_a_member_cut_off_in_read_only_mode_serves_reads_only(ensemble: ZkEnsemble) -> None:
    ensemble.ensure([2])
    deadline = time.monotonic() + 60
    while ensemble.members[2].mode() != "read-only":
        assert time.monotonic() < deadline, "member 2 did not go read-only"
        time.sleep(0.2)
    members = by_id(zk(ensemble, "members", "-f", "json"))
    assert (members[2]["mode"], members[2]["serving"], members[2]["read_only"]) == ("read-only", True, True)
    found = {f["finding"] for f in json.loads(zk(ensemble, "health", "-f", "json", "--members-only").stdout)}
    assert {"no_quorum", "member_read_only"} <= found


# --- jute.maxbuffer, on the suite's server --------------------------------------------------------------


def test_znodes_near_jute_maxbuffer_are_named_by_their_topology(writer: KazooClient, zk_root: Chroot) -> None:
    topology = "wordcount-3-1700000000"
    writer.create(f"{zk_root.path}/storm/storms/{topology}", b"", makepath=True)
    writer.create(f"{zk_root.path}/storm/assignments/{topology}", b"\x1f" * 1_000_000, makepath=True)
    writer.create(f"{zk_root.path}/storm/assignments/small-1-1", b"x", makepath=True)
    writer.create(f"{zk_root.path}/kafka/brokers/topics/t", b"{}", makepath=True)
    writer.create(f"{zk_root.path}/kafka/admin/reassign_partitions", b"{" + b" " * 960_000 + b"}", makepath=True)
    result = run("--zk", zk_root.zk, "zk", "health", "-f", "json", "--check")
    assert result.exit_code == 0, result.output  # near the limit is a warning
    near = {f["path"]: f for f in json.loads(result.stdout) if f["finding"] == "znode_near_jute_maxbuffer"}
    assert set(near) == {f"/storm/assignments/{topology}", "/kafka/admin/reassign_partitions"}
    assert near[f"/storm/assignments/{topology}"]["detail"].startswith(
        "assignment of topology wordcount (wordcount-3-1700000000): 1,000,000 bytes, 95% of jute.maxbuffer"
    )
    assert near["/kafka/admin/reassign_partitions"]["detail"].startswith(
        "reassignment JSON (admin/reassign_partitions)"
    )
    assert near["/kafka/admin/reassign_partitions"]["size"] == 960_002
    writer.create(f"{zk_root.path}/storm/assignments/big-2-1700000000", b"x" * 1_100_000)
    over = run("--zk", zk_root.zk, "zk", "health", "-f", "json", "--check")
    assert over.exit_code == ExitCode.UNHEALTHY
    (past,) = [f for f in json.loads(over.stdout) if f["finding"] == "znode_over_jute_maxbuffer"]
    assert past["level"] == "error" and past["detail"].startswith("assignment of topology big (big-2-1700000000)")
    raised = run("--zk", zk_root.zk, "zk", "health", "-f", "json", "--jute-maxbuffer", "4194304")
    assert not [f for f in json.loads(raised.stdout) if "jute" in f["finding"]]
    quick = run("--zk", zk_root.zk, "zk", "health", "-f", "json", "--members-only")
    assert not [f for f in json.loads(quick.stdout) if "jute" in f["finding"]]


# --- usage, live and over the server's files -----------------------------------------------------------


def _subtree_of(path: str, depth: int = 2) -> str:
    parts = path.strip("/").split("/")
    return "/" + "/".join(parts[:depth]) if path != "/" else "/"


def test_usage_live_and_from_files_agree_on_every_subtree(zk_root: Chroot) -> None:
    nodes = list(cluster(scale=1, now=NOW))
    seed(zk_root.zk, nodes)
    live = run("--zk", zk_root.zk, "zk", "usage", "/", "--limit", "0", "-f", "json")
    assert live.exit_code == 0, live.output
    data_dir = str(zk_root.server.base / "data")
    files = run("--from-files", data_dir, "zk", "usage", zk_root.path, "--limit", "0", "-f", "json")
    assert files.exit_code == 0, files.output

    def rows(result: Any, prefix: str) -> dict[tuple[str, str], tuple[Any, ...]]:
        out = {}
        for r in json.loads(result.stdout):
            key = r["key"][len(prefix) :] or "/" if r["by"] != "record_kind" else r["key"]
            root = (r["root"] or "")[len(prefix) :] or ("/" if r["root"] else "")
            out[(r["by"], key, root)] = (
                r["znodes"],
                r["data_bytes"],
                r["ephemerals"],
                r["meaning"],
                r["largest_bytes"],
            )
        return out

    from_live, from_files = rows(live, ""), rows(files, zk_root.path)
    assert from_live == from_files
    # and both agree with the seeded tree, summed here by path (the chroot itself is one more znode)
    expected: dict[str, list[int]] = {"/": [1, 0]}
    for node in nodes:
        sums = expected.setdefault(_subtree_of(node.path), [0, 0])
        sums[0] += 1
        sums[1] += len(node.data)
    subtrees = {key: [n, size] for (by, key, _), (n, size, *_) in from_live.items() if by == "subtree"}
    assert subtrees == expected
    kinds = {key: n for (by, key, _), (n, *_) in from_live.items() if by == "record_kind"}
    assert kinds["storm_worker"] == sum("/workerbeats/" in n.path and n.path.count("/") == 4 for n in nodes)
    assert kinds["kafka_partition_state"] == sum(n.path.endswith("/state") for n in nodes)
    assert kinds["kafka_isr_change"] == sum("/isr_change_notification/" in n.path for n in nodes)
    meanings = {key: meaning for (by, key, _), (*_, meaning, _) in from_live.items() if by == "subtree"}
    assert meanings["/storm/workerbeats"] == "Storm worker heartbeats"
    assert meanings["/kafka/brokers"] == "Kafka partition states (leader, ISR)"


def test_usage_limits_and_groupings(writer: KazooClient, zk_root: Chroot) -> None:
    for i in range(5):
        writer.create(f"{zk_root.path}/a/n{i}", b"x" * (10 * (i + 1)), makepath=True)
    top = run("--zk", zk_root.zk, "zk", "usage", "/a", "--by", "znode", "--limit", "2", "-f", "json")
    assert [(r["key"], r["data_bytes"]) for r in json.loads(top.stdout)] == [("/a/n4", 50), ("/a/n3", 40)]
    deep = run("--zk", zk_root.zk, "zk", "usage", "/", "--by", "subtree", "--depth", "1", "-f", "json")
    assert {r["key"]: r["znodes"] for r in json.loads(deep.stdout)} == {"/": 1, "/a": 6}
    table = run("--zk", zk_root.zk, "zk", "usage", "/a")
    assert table.exit_code == 0 and "6 znodes, 150 data bytes under /a" in table.stdout
    assert run("--zk", zk_root.zk, "zk", "usage", "/nope").exit_code == ExitCode.NOT_FOUND


def test_members_need_a_live_ensemble(tmp_path: Path) -> None:
    files = str(Path(__file__).parent / "data" / "fixtures" / "zkfiles" / "zk395-plain")
    result = run("--from-files", files, "zk", "members")
    assert result.exit_code == ExitCode.USAGE and "live ensemble" in result.stderr


def test_the_nightly_snapshot_keeps_usage_and_the_members(zk_root: Chroot, tmp_path: Path) -> None:
    """``zk_usage`` as ``zk usage`` shows it (the same walk's stats), and ``zk_members`` on a live
    ensemble only: ZooKeeper's files have no members."""
    import pyarrow.dataset as ds

    seed(zk_root.zk, cluster(scale=1, now=NOW))
    out = tmp_path / "out"
    snap = run("--zk", zk_root.zk, "snapshot", str(out), "--cluster", "live")
    assert snap.exit_code == 0, snap.output

    def table(base: Path, name: str) -> list[dict[str, Any]]:
        return ds.dataset(str(base / name), format="parquet", partitioning="hive").to_table().to_pylist()

    usage = table(out, "zk_usage")
    view = json.loads(run("--zk", zk_root.zk, "zk", "usage", "/", "--limit", "0", "-f", "json").stdout)
    columns = ("by", "key", "meaning", "root", "znodes", "data_bytes", "ephemerals", "largest_path")

    def grouped(rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
        return {tuple(r[c] for c in columns) for r in rows if r["by"] in ("subtree", "record_kind")}

    assert grouped(usage) == grouped(view)
    largest = [r for r in usage if r["by"] == "znode"]
    assert len(largest) == 100 and largest[0]["data_bytes"] == max(r["data_bytes"] for r in view if r["by"] == "znode")
    (member,) = table(out, "zk_members")
    assert (member["port"], member["mode"], member["serving"]) == (zk_root.server.port, "leader", True)
    offline = tmp_path / "offline"
    files = run("--from-files", str(zk_root.server.base / "data"), "snapshot", str(offline), "--cluster", "files")
    assert files.exit_code == 0, files.output
    assert table(offline, "zk_usage") and not (offline / "zk_members").exists()


def test_an_empty_answer_is_no_answer() -> None:
    with pytest.raises(OSError, match="needs TLS"):
        checked("srvr", "")


def test_only_the_read_words_are_ever_sent() -> None:
    """``wchp``, ``dump``, ``cons`` list every watch, session or connection of a big ensemble; ``srst``,
    ``crst``, ``stmk`` change the server: ``ask`` refuses them before any connection is made."""
    from zkstorm.ensemble.fourletter import ask

    for word in ("wchp", "wchc", "dump", "cons", "srst", "crst", "stmk", "envi"):
        with pytest.raises(ValueError, match="not a read-only four-letter word"):
            ask("127.0.0.1", 1, word, deadline=time.monotonic() + 1)


# --- a peer's odd figures: its own problem, never the command's end ------------------------------------------

ODD = {
    "znode_count": "1e400",
    "watch_count": "NaN",
    "ephemerals_count": "-5",
    "approximate_data_size": "9" * 5000,
    "open_file_descriptor_count": "99999999999999999999",
    "avg_latency": "inf",
}


def _odd_answers() -> dict[str, str]:
    """A follower's real ``srvr`` with its node count and latency made absurd, and a real ``mntr`` with the
    figures of ``ODD``."""
    srvr = re.sub(r"Node count: \d+", "Node count: 1e400", text("srvr-follower.txt"))
    srvr = re.sub(r"Latency min/avg/max: [^\n]*", "Latency min/avg/max: -1/nan/1e999", srvr)
    mntr = text("mntr-follower.txt")
    for key, value in ODD.items():
        mntr = re.sub(rf"zk_{key}\t[^\n]*", f"zk_{key}\t{value}", mntr)
    return {"srvr": srvr, "mntr": mntr}


def test_a_members_odd_figures_are_its_finding_not_the_commands_end(zk_root: Chroot, tmp_path: Path) -> None:
    """A member printing 1e400, NaN, a negative count or a number no long holds (a fake peer: no real
    server prints these on demand) beside a healthy real one: ``zk members``, ``zk health --check`` and
    the nightly ``snapshot`` all finish; the odd figures are None, kept as text in ``odd_figures``, and
    the member has a ``member_odd_figures`` finding; the real member's figures are untouched."""
    import pyarrow.dataset as ds

    from tests.faults import odd_peer

    with odd_peer(_odd_answers()) as peer:
        hosts = f"{zk_root.server.connect_string},127.0.0.1:{peer.port}"
        members = run("--zk", hosts, "zk", "members", "-f", "json", "--admin-port", "0")
        assert members.exit_code == 0, members.output
        by_port = {m["port"]: m for m in json.loads(members.stdout)}
        odd, real = by_port[peer.port], by_port[zk_root.server.port]
        assert odd["znode_count"] is None and odd["watch_count"] is None and odd["ephemerals_count"] is None
        assert odd["approximate_data_bytes"] is None and odd["open_file_descriptors"] is None
        # srvr's absurd latencies are odd figures; mntr's sound ones stand in for them (its average is absurd too)
        assert odd["latency_avg_ms"] is None and odd["latency_min_ms"] == 1
        for key in (
            "min latency=-1",
            "avg latency=nan",
            "avg_latency=inf",
            "Node count=1e400",
            "watch_count=NaN",
            "ephemerals_count=-5",
            "open_file_descriptor_count=",
        ):
            assert key in odd["odd_figures"], odd["odd_figures"]
        assert len(odd["odd_figures"]) < 400  # a 5,000-digit figure is cut, not repeated whole
        assert real["odd_figures"] is None and real["znode_count"] > 0
        health = run("--zk", hosts, "zk", "health", "--members-only", "--check", "-f", "json")
        assert health.exit_code in (0, ExitCode.UNHEALTHY), health.output
        assert "internal error" not in health.stderr
        (finding,) = [f for f in json.loads(health.stdout) if f["finding"] == "member_odd_figures"]
        assert finding["member"] == f"127.0.0.1:{peer.port}" and "1e400" in finding["detail"]
        for fmt in ("table", "csv", "prometheus"):
            shown = run("--zk", hosts, "zk", "members", "-f", fmt, "--admin-port", "0")
            assert shown.exit_code == 0 and "internal error" not in shown.stderr, (fmt, shown.output)
        out = tmp_path / "out"
        snap = run("--zk", f"{hosts}{zk_root.path}", "snapshot", str(out), "--cluster", "odd")
        assert snap.exit_code == 0, snap.output
        rows = ds.dataset(str(out / "zk_members"), format="parquet", partitioning="hive").to_table().to_pylist()
        assert {r["port"]: r["odd_figures"] for r in rows}[peer.port] == odd["odd_figures"]


def test_peer_numbers_out_of_range_are_never_raised() -> None:
    """Every parser of a peer's answer: an absurd number is no number (or an odd figure), never an
    exception; ports past 65535 and ids past a long are not taken."""
    from zkstorm.ensemble.fourletter import OddFigure, counter, measure

    srvr = parse_srvr(_odd_answers()["srvr"])
    assert srvr.node_count is None and srvr.latency_avg_ms is None and "Node count=1e400" in srvr.odd
    for bad in ("1e400", "nan", "-5", "1.5", "9" * 5000, "0x" + "f" * 17, "ten"):
        with pytest.raises(OddFigure):
            counter(bad, 16 if bad.startswith("0x") else 10)
    assert counter("12.0") == 12 and counter("0x1f", 16) == 31 and counter("") is None
    for bad in ("inf", "-1", "nan", "1e400"):
        with pytest.raises(OddFigure):
            measure(bad)
    peers, _ = parse_config(
        "server.1=a:70000:3888;2181\nserver.99999999999999999999999=b:2888:3888;2181\n"
        + "server."
        + "9" * 5000
        + "=c:2888:3888;2181\nserver.2=d:2888:3888;99999\nserver.3=e:2888:3888;2181"
    )
    assert [p.server_id for p in peers] == [3]
    assert voting_view_peers({"current_config": {"9" * 5000: {}, "1e400": {}}}) == []
