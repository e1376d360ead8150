"""The helper process for costly decodes (``model.decode_helper``): a walk that sends Java-serialized payloads to
it gives exactly what a walk that decodes everything itself gives, in the same order, whatever the
helper does: answers, falls behind, cannot start, or is killed in the middle of the walk."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.test_cli import run
from tests.test_snapshot import read
from zkstorm.model import Cluster
from zkstorm.model import decode_helper as helper_module
from zkstorm.records import Znode
from zkstorm.sources.live import ReadOnlySession

STREAMS = Path(__file__).parent / "data" / "clojure"
ROOT = "/legacy-storm"
COPIES = 12  # topologies copied: 12 x 4 Java payloads, around the Kafka cluster's JSON ones


@pytest.fixture
def legacy(zk_root: Chroot, writer: KazooClient) -> Chroot:
    """Storm 0.9's fixture cluster, its topology's Java payloads copied under new ids (streams a real
    Clojure wrote: assignment, storm base, supervisor, worker heartbeat), next to a Kafka 0.8 cluster."""
    load_cluster(writer, zk_root.path, "storm", "legacy09")
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    payloads = {name: (STREAMS / f"{name}.bin").read_bytes() for name in ("assignment", "stormbase", "supervisor")}
    heartbeat = (STREAMS / "workerbeat.bin").read_bytes()
    for k in range(COPIES):
        topology = f"copy{k}-{k + 1}-1400000000"
        base = f"{zk_root.path}{ROOT}"
        writer.create(f"{base}/assignments/{topology}", payloads["assignment"])
        writer.create(f"{base}/storms/{topology}", payloads["stormbase"])
        writer.create(f"{base}/supervisors/sup-{k}", payloads["supervisor"])
        writer.create(f"{base}/workerbeats/{topology}/node-{k}-6700", heartbeat, makepath=True)
    return zk_root


def walked(zk: str, *, helper: bool, kill_helper: bool = False) -> tuple[list[Any], Any]:
    """Every record of a walk of the whole tree (znodes, decoded records, failures) and the helper."""
    with Cluster(ReadOnlySession(zk), storm_root=ROOT, kafka_root="/", decode_helper=helper) as cluster:
        records = []
        for record in cluster.walk("/"):
            records.append(record)
            if kill_helper and cluster.helper.pid is not None and not cluster.helper.given_up:
                os.kill(cluster.helper.pid, signal.SIGKILL)
                kill_helper = False
        return records, cluster.helper


def java_znodes(records: list[Any]) -> int:
    return sum(1 for r in records if type(r) is Znode and r.encoding == "java-serialized")


@pytest.mark.parametrize(
    ("start_after", "window", "window_bytes", "pipe_room"),
    [
        (0, 16384, 1 << 20, None),
        (0, 3, 1 << 20, None),
        (5, 1, 1 << 20, None),
        (0, 16384, 2000, None),
        (16, 16384, 1 << 20, None),
        (0, 16384, 1 << 20, 4000),
    ],
    ids=[
        "helper-from-the-first",
        "small-window",
        "window-of-one",
        "window-of-one-heartbeats-bytes",
        "as-shipped",
        "heartbeats-too-big-for-the-pipe",
    ],
)
def test_a_walk_with_the_helper_gives_what_a_walk_without_it_gives(
    legacy: Chroot,
    monkeypatch: pytest.MonkeyPatch,
    start_after: int,
    window: int,
    window_bytes: int,
    pipe_room: int | None,
) -> None:
    """``pipe_room``: a pipe that holds less than a worker heartbeat (5 KiB), so those are decoded here
    and the smaller payloads wait for room in the helper's stdin."""
    monkeypatch.setattr(helper_module, "START_AFTER", start_after)
    monkeypatch.setattr(helper_module, "WINDOW", window)
    monkeypatch.setattr(helper_module, "WINDOW_BYTES", window_bytes)
    if pipe_room is not None:
        monkeypatch.setattr(helper_module, "_pipe_room", lambda fd: pipe_room)
    most_unread: list[int] = [0]
    submit = helper_module.DecodeHelper.submit

    def watched(self: Any, *args: Any) -> Any:
        ticket = submit(self, *args)
        most_unread[0] = max(most_unread[0], sum(self._pending))
        assert sum(self._pending) <= self._room  # a write to the helper never waits
        return ticket

    monkeypatch.setattr(helper_module.DecodeHelper, "submit", watched)
    alone, _ = walked(legacy.zk, helper=False)
    assert java_znodes(alone) >= 4 * COPIES
    helped, used = walked(legacy.zk, helper=True)
    assert helped == alone
    if start_after == 0 and window > 3:
        assert used.decoded > 0  # the helper did decode some of them
    if pipe_room is not None:
        assert 0 < most_unread[0] <= pipe_room
    assert used._process is None  # and it was stopped with the cluster


def slow_decode(raw: Any, **options: Any) -> Any:
    """``decode_node`` in a helper that has fallen behind: a helper slower than the walk's own thread is
    a matter of timing that real payloads give only on some runs, so it is made certain here."""
    import time

    from zkstorm.model.walk import decode_node

    time.sleep(0.02)
    return decode_node(raw, **options)


def test_a_helper_behind_holds_no_more_than_the_window_of_payload_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the helper is behind, the walk's own thread holds what it decoded after the payload the helper
    has not answered: never more than ``WINDOW_BYTES`` of payloads (and one more), however few znodes
    that is, and the walk still gives every item, in order, as without a helper."""
    from zkstorm.layout import Roots
    from zkstorm.model.walk import decode_node
    from zkstorm.sources.base import RawNode, Stat

    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    monkeypatch.setattr(helper_module, "WINDOW_BYTES", 4 * 1768)  # four assignments
    roots = Roots(storm=(ROOT,), kafka=())
    payload = (STREAMS / "assignment.bin").read_bytes()
    stat = Stat(1, 1, 0, 0, 0, 0, 0, 0, len(payload), 0, 1)
    nodes = [RawNode(f"{ROOT}/assignments/t{k}-{k + 1}-1400000000", stat, payload) for k in range(60)]
    pulled = [0]

    def counted() -> Any:
        for node in nodes:
            pulled[0] += 1
            yield node

    def decode(raw: RawNode) -> Any:
        return decode_node(raw, roots=roots)

    helper = helper_module.DecodeHelper(slow_decode)
    out, most_held = [], 0
    try:
        for item, (znode, records) in helper_module.in_walk_order(counted(), decode, helper, {"roots": roots}):
            most_held = max(most_held, (pulled[0] - len(out)) * len(payload))
            out.append((item.path, znode, records))
        assert helper.decoded > 0
    finally:
        helper.close()
    assert out == [(n.path, *decode(n)) for n in nodes]
    assert most_held <= helper_module.WINDOW_BYTES + len(payload)


def test_a_helper_killed_in_the_middle_of_the_walk_costs_nothing_but_speed(
    legacy: Chroot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    alone, _ = walked(legacy.zk, helper=False)
    helped, used = walked(legacy.zk, helper=True, kill_helper=True)
    assert used.pid is not None and used.given_up
    assert helped == alone


def test_a_helper_that_cannot_start_costs_nothing_but_speed(legacy: Chroot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where no process can be started (here: the interpreter's path does not exist)."""
    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    alone, _ = walked(legacy.zk, helper=False)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    helped, used = walked(legacy.zk, helper=True)
    assert used.pid is None and used.given_up
    assert helped == alone


def test_the_cli_uses_the_helper_unless_told_not_to(legacy: Chroot, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tree -f jsonl`` prints the same lines with the helper (the CLI's default) and without it."""
    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    started: list[int] = []
    submit = helper_module.DecodeHelper.submit
    monkeypatch.setattr(helper_module.DecodeHelper, "submit", lambda self, *a: started.append(1) or submit(self, *a))
    args = ("--zk", legacy.zk, "--storm-root", ROOT, "tree", "/", "-f", "jsonl")
    helped = run(*args)
    assert started
    started.clear()
    alone = run(*args, env={"ZKSTORM_DECODE_HELPER": "0"})
    assert not started
    assert helped.exit_code == alone.exit_code == 0
    assert helped.output == alone.output
    assert '"encoding":"java-serialized"' in alone.output


def test_what_was_read_before_the_source_failed_comes_out_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A source that fails in the middle of a walk (ZooKeeper stops answering: faked here by a generator
    that raises, since the suite's one server cannot be stopped for one test) gives every item it read
    before, in order, then its error, with the helper as without it."""
    from zkstorm.errors import ZookeeperError
    from zkstorm.layout import Roots
    from zkstorm.model.walk import decode_node
    from zkstorm.sources.base import RawNode, Stat

    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    roots = Roots(storm=(ROOT,), kafka=())
    payload = (STREAMS / "assignment.bin").read_bytes()
    stat = Stat(1, 1, 0, 0, 0, 0, 0, 0, len(payload), 0, 1)
    nodes = [RawNode(f"{ROOT}/assignments/t{k}-{k + 1}-1400000000", stat, payload) for k in range(40)]
    nodes[1::3] = [RawNode(f"{ROOT}/supervisors/s{k}", stat, b"") for k in range(len(nodes[1::3]))]

    def failing() -> Any:
        yield from nodes
        raise ZookeeperError("ZooKeeper at 127.0.0.1:1 stopped answering")

    def decode(raw: RawNode) -> Any:
        return decode_node(raw, roots=roots)

    options = {"roots": roots, "show_secrets": False, "detail": False}
    for helper in (None, helper_module.DecodeHelper(decode_node)):
        out: list[Any] = []
        with pytest.raises(ZookeeperError):
            for item, (znode, records) in helper_module.in_walk_order(failing(), decode, helper, options):
                out.append((item.path, znode, records))
        assert out == [(n.path, *decode(n)) for n in nodes]
        if helper is not None:
            assert helper.decoded > 0
            helper.close()


def test_a_walk_given_up_half_way_leaves_the_next_one_whole(legacy: Chroot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller that stops reading a walk while the helper has requests in hand, then walks again on the
    same cluster (closed and opened again, as a notebook might): the second walk is exact."""
    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    alone, _ = walked(legacy.zk, helper=False)
    cluster = Cluster(ReadOnlySession(legacy.zk), storm_root=ROOT, kafka_root="/", decode_helper=True)
    with cluster:
        walk = cluster.walk("/")
        for _ in walk:
            if cluster.helper.busy:
                break
        assert cluster.helper.busy
        walk.close()
    before = cluster.helper.decoded
    with cluster:
        assert list(cluster.walk("/")) == alone
        assert cluster.helper.decoded > before and not cluster.helper.given_up  # a helper that kept working


def test_a_registry_with_decoders_of_the_callers_own_is_not_sent_to_the_helper(
    legacy: Chroot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper knows only the decoders zkstorm registers: once a caller adds one, the walk decodes
    everything itself, so the caller's decoder is used wherever it applies."""
    from zkstorm.decode.registry import REGISTRY

    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    monkeypatch.setattr(type(REGISTRY), "__len__", lambda self: 10_000)  # as if the caller had registered more
    helped, used = walked(legacy.zk, helper=True)
    assert used.pid is None and used.decoded == 0
    assert helped == walked(legacy.zk, helper=False)[0]


def test_a_snapshot_sends_worker_heartbeats_to_the_helper_and_writes_what_it_writes_without_it(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot decodes every worker heartbeat whole (its executor counters as columns, and the figures
    they sum to): Thrift ones too go to the helper, and every table is the same as without it."""
    load_cluster(writer, zk_root.path, "storm", "storm2")
    monkeypatch.setattr(helper_module, "START_AFTER", 0)
    sent: list[str] = []
    submit = helper_module.DecodeHelper.submit
    monkeypatch.setattr(
        helper_module.DecodeHelper, "submit", lambda self, raw, *a: sent.append(raw.path) or submit(self, raw, *a)
    )
    outs = {}
    for name, env in (("helped", {}), ("alone", {"ZKSTORM_DECODE_HELPER": "0"})):
        outs[name] = tmp_path / name
        result = run("--zk", zk_root.zk, "snapshot", str(outs[name]), "--cluster", "test", env=env)
        assert result.exit_code == 0, result.output
        if name == "helped":
            assert any("/workerbeats/" in path for path in sent)
    tables = sorted(p.name for p in outs["alone"].iterdir() if not p.name.startswith(("_", ".")))
    assert {"storm_executor_stats", "storm_component_stats", "storm_workers"} <= set(tables)
    assert tables == sorted(p.name for p in outs["helped"].iterdir() if not p.name.startswith(("_", ".")))
    for table in tables:
        if table == "zk_members":
            continue  # the server's own figures (latency, connections) as each run reads them
        helped, alone = (
            [{k: v for k, v in row.items() if k not in ("snapshot_time", "age_secs")} for row in read(out, table)]
            for out in (outs["helped"], outs["alone"])
        )
        assert helped == alone, table
        assert helped, table
