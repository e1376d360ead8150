"""The files reader against hostile shapes: a path 1,500 levels deep, a znode with 100,000 children, an
older snapshot replayed through thousands of session-owned ephemerals, random replays at depth and
width, and length fields that lie.

Real servers write the data directories (a dedicated ZooKeeper per scenario, with its own dataDir, so
that what only the log holds stays there); zkstorm reads them in process and through the CLI and must
give what the live server had. Work is asserted as a count of replayed ops (``Replay.ops_replayed``),
never as time: a read stays linear in the logs however the ops are shaped.
"""

from __future__ import annotations

import gzip
import json
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import tracemalloc
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cramjam
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

import zkstorm
from tests.test_cli import run
from tests.test_zkfiles import EXPECTED, FIXTURES, VARIANTS, file_records, folder
from zkstorm.errors import ExitCode, FilesError, NotFoundError
from zkstorm.records import Znode
from zkstorm.sandbox.server import ZkServer
from zkstorm.sources.base import RawNode, Stat
from zkstorm.sources.files.jute import MAX_FIELD
from zkstorm.sources.files.replay import Replay
from zkstorm.sources.files.snapfile import SnapshotFile, name_zxid
from zkstorm.sources.files.source import FileSource
from zkstorm.sources.files.txnlog import (
    CLOSE_SESSION,
    CREATE,
    CREATE2,
    DELETE,
    ERROR,
    MULTI,
    SET_DATA,
    CloseSession,
    Create,
    Delete,
    Failed,
    Multi,
    SetData,
    Txn,
)
from zkstorm.sources.live import ReadOnlySession

# Each op the logs hold is replayed for its own path, for its parent, and once more for a node that may
# vanish or has created children; a session close up to three times per node its session creates (each
# a logged op). Anything quadratic (a multi or a close re-applied whole per node it names) is far above.
OPS_PER_LOGGED_OP = 6


@dataclass(frozen=True)
class Scenario:
    data: Path  # the server's dataDir
    live: dict[str, RawNode]  # what a live walk of the server read just before it stopped


@contextmanager
def _server(base: Path, **config: str) -> Iterator[ZkServer]:
    server = ZkServer(base, extra_config=config).start()
    try:
        yield server
    finally:
        server.stop()


def _client(server: ZkServer) -> KazooClient:
    """A writable client of the tests' own (zkstorm never writes)."""
    client = KazooClient(server.connect_string, timeout=30)
    client.start(timeout=30)
    return client


def _creates(client: KazooClient, paths: list[str], *, ephemeral: bool = False, batch: int = 1_000) -> None:
    """Create ``paths`` in multis of ``batch``, eight in flight: 100,000 znodes in seconds."""
    pending = []
    for start in range(0, len(paths), batch):
        transaction = client.transaction()
        for path in paths[start : start + batch]:
            transaction.create(path, b"v", ephemeral=ephemeral)
        pending.append(transaction.commit_async())
        if len(pending) >= 8:
            _settle(pending)
    _settle(pending)


def _deletes(client: KazooClient, paths: list[str]) -> None:
    transaction = client.transaction()
    for path in paths:
        transaction.delete(path)
    _settle([transaction.commit_async()])


def _settle(pending: list[Any]) -> None:
    for result in pending:
        outcome = result.get(timeout=60)
        failed = [r for r in outcome if isinstance(r, Exception)] if isinstance(outcome, list) else []
        assert not failed, failed[:3]
    pending.clear()


def _live(server: ZkServer) -> dict[str, RawNode]:
    with ReadOnlySession(server.connect_string) as session:
        return {raw.path: raw for raw in session.walk("/") if isinstance(raw, RawNode)}


def _offline(*paths: Path, best_effort: bool = False) -> tuple[dict[str, RawNode], FileSource]:
    with FileSource([str(p) for p in paths], best_effort=best_effort) as source:
        return {raw.path: raw for raw in source.walk("/")}, source


def _same(offline: dict[str, RawNode], live: dict[str, RawNode]) -> None:
    assert offline.keys() == live.keys()
    for path, raw in live.items():
        assert (offline[path].stat, offline[path].data) == (raw.stat, raw.data), path


def _snapshots(version2: Path) -> list[Path]:
    """The data directory's snapshots, newest first."""
    found = [p for p in version2.iterdir() if name_zxid(p.name, "snapshot") is not None]
    return sorted(found, key=lambda p: name_zxid(p.name, "snapshot") or 0, reverse=True)


def _truncate(snapshot: Path) -> None:
    """Damage a snapshot as a crash mid-write leaves it: cut short."""
    snapshot.write_bytes(snapshot.read_bytes()[: snapshot.stat().st_size // 2])


def _linear(source: FileSource) -> None:
    replay = source._replay
    assert replay is not None and replay.ops
    assert replay.ops_replayed <= OPS_PER_LOGGED_OP * len(replay.ops), (replay.ops_replayed, len(replay.ops))


def _jsonl_paths(*args: str) -> list[str]:
    result = run(*args, "tree", "/", "-f", "jsonl")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return [json.loads(line)["path"] for line in result.stdout.splitlines()]


# --- a path 1,500 levels deep -------------------------------------------------------------------------

DEPTH = 1_500


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """A 1,500-deep chain written with a small snapCount: snapshots taken (fuzzily) while it grew, so
    its lower levels are only in the logs; an ephemeral at the bottom whose session closed, so that the
    close names a 3,000-character path; data set on the deepest node."""
    base = tmp_path_factory.mktemp("deep")
    with _server(base, snapCount="400") as server:
        client = _client(server)
        path, pending = "", []
        for _ in range(DEPTH):
            path += "/d"
            pending.append(client.create_async(path, b"x"))  # in order: one session's requests are
        _settle(pending)
        owner = _client(server)
        owner.create(path + "/gone", b"", ephemeral=True)
        owner.stop()
        owner.close()
        client.set(path, b"bottom")
        live = _live(server)
        client.stop()
        client.close()
    return Scenario(base / "data", live)


@pytest.mark.slow
def test_a_deep_path_reads_as_the_live_server_had_it(deep: Scenario, tmp_path: Path) -> None:
    """Read as the server left it (its newest snapshot holds the upper levels, the logs the rest), then
    with every snapshot but the empty first one cut short: the whole chain comes from the logs, through
    a create per level that needs its parent, and the close of a session that names the bottom."""
    bottom = "/d" * DEPTH
    assert len(_snapshots(deep.data / "version-2")) >= 3  # snapshot.0 and some taken while the chain grew
    offline, source = _offline(deep.data)
    assert source.plan is not None and source.plan.txns_applied  # the newest snapshot lacks the bottom
    _same(offline, deep.live)
    assert offline[bottom].data == b"bottom" and bottom + "/gone" not in offline

    data = tmp_path / "data"
    shutil.copytree(deep.data, data)
    *newer, first = _snapshots(data / "version-2")
    for snapshot in newer:
        _truncate(snapshot)
    offline, source = _offline(data)
    assert source.plan is not None and Path(source.plan.snapshot) == first
    assert source.plan.txns_applied > DEPTH
    _same(offline, deep.live)
    _linear(source)
    with zkstorm.from_files(str(data)) as cluster:
        znodes = {z.path: z for z in cluster.tree("/") if isinstance(z, Znode)}
    assert znodes.keys() == deep.live.keys() and znodes[bottom].data_length == len(b"bottom")
    assert sorted(_jsonl_paths("--from-files", str(data))) == sorted(deep.live)


# --- a znode with 100,000 children -------------------------------------------------------------------

WIDTH = 100_000


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """``/w`` and 100,000 children created in multis of 1,000 after the start's snapshot (so only the
    log holds them), 1,000 more that a session owned and took with it when it closed, 1,000 deleted in
    one multi."""
    base = tmp_path_factory.mktemp("wide")
    with _server(base) as server:
        client = _client(server)
        client.create("/w", b"")
        _creates(client, [f"/w/c{i:06d}" for i in range(WIDTH)])
        owner = _client(server)
        _creates(owner, [f"/w/e{i:04d}" for i in range(1_000)], ephemeral=True)
        owner.stop()
        owner.close()
        _deletes(client, [f"/w/c{i:06d}" for i in range(0, WIDTH, 100)])
        client.set("/w", b"set")
        live = _live(server)
        client.stop()
        client.close()
    return Scenario(base / "data", live)


@pytest.mark.slow
def test_a_node_with_100000_children_reads_as_the_live_server_had_it(wide: Scenario) -> None:
    offline, source = _offline(wide.data)
    assert source.plan is not None and source.plan.txns_applied >= WIDTH // 1_000
    assert offline["/w"].stat.numChildren == WIDTH - WIDTH // 100
    _same(offline, wide.live)
    _linear(source)


@pytest.mark.slow
def test_the_tree_command_lists_a_node_with_100000_children(wide: Scenario) -> None:
    paths = _jsonl_paths("--from-files", str(wide.data))
    assert len(paths) == len(set(paths)) and set(paths) == wide.live.keys()


# --- an older snapshot replayed through sessions that owned thousands of ephemerals -------------------

SESSIONS, EPHEMERALS, PERSISTENT = 4, 2_000, 4_000


@pytest.fixture(scope="module")
def closing(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """Three starts of one server. The first writes a persistent tree; the second's start writes it to
    a snapshot, then four sessions create 2,000 ephemerals each (some beside the snapshot's nodes), some
    of those nodes change, and three of the sessions close (each close lists its 2,000 paths); the
    fourth is still open when the server stops. The third start writes the newest snapshot."""
    base = tmp_path_factory.mktemp("closing")
    with _server(base / "server") as server:
        client = _client(server)
        client.create("/p", b"")
        _creates(client, [f"/p/n{i:05d}" for i in range(PERSISTENT)])
        client.stop()
        client.close()
    with _server(base / "server") as server:
        client = _client(server)
        owners = [_client(server) for _ in range(SESSIONS)]
        for k, owner in enumerate(owners):
            client.create(f"/e{k}", b"")
            _creates(owner, [f"/e{k}/x{i:05d}" for i in range(EPHEMERALS - 100)], ephemeral=True)
            _creates(owner, [f"/p/n{i:05d}/eph{k}" for i in range(100)], ephemeral=True)
        _deletes(client, [f"/p/n{i:05d}" for i in range(PERSISTENT - 500, PERSISTENT)])
        client.set("/p/n00000", b"changed")
        for owner in owners[:-1]:
            owner.stop()
            owner.close()
        live = _live(server)
        client.stop()
        client.close()
    owners[-1].stop()  # after the server: its session is still open in the files
    owners[-1].close()
    with _server(base / "server"):
        pass
    return Scenario(base / "server" / "data", live)


@pytest.mark.slow
def test_replay_from_an_older_snapshot_takes_each_close_once(closing: Scenario, tmp_path: Path) -> None:
    """The newest snapshot cut short (as a crash leaves it): the reader falls back to the older one and
    replays every create and close after it; the tree is the live one, the work linear in the ops."""
    data = tmp_path / "data"
    shutil.copytree(closing.data, data)
    newest, older, *_ = _snapshots(data / "version-2")
    _truncate(newest)
    offline, source = _offline(data)
    assert source.plan is not None and Path(source.plan.snapshot) == older
    assert newest.name in source.plan.skipped[0]
    _same(offline, closing.live)
    survivors = [p for p in offline if "/eph" in p or p.startswith("/e3/")]
    assert len(survivors) == EPHEMERALS and all(offline[p].stat.ephemeralOwner for p in survivors)
    _linear(source)
    best, _ = _offline(data, best_effort=True)  # the older snapshot is whole: best effort reads the same
    _same(best, closing.live)
    assert sorted(_jsonl_paths("--from-files", str(data))) == sorted(closing.live)
    pristine, _ = _offline(closing.data)  # the newest snapshot, whole: the same tree
    _same(pristine, closing.live)


# --- random replays at any depth and width = ZooKeeper's plain algorithm ------------------------------

_SNAPSHOT = FIXTURES / "zk395-plain" / "version-2" / "snapshot.1c8"
_SESSION = 0x0100_0000_0000_0000


def _data_tree(snapshot: Path, txns: list[Txn]) -> dict[str, tuple[Stat, bytes | None]]:
    """The oracle, written apart from the reader: ZooKeeper's ``DataTree`` as a flat map of every node,
    each txn applied to it by the rules of ``DataTree.processTxn`` (a create needs its parent, a
    delete raises the parent's pzxid, a close deletes the paths it lists and then whatever the session
    still owns), then what the root reaches, as a client reads it."""
    tree: dict[str, list[Any]] = {}
    for path, data, fields, _ in file_records(SnapshotFile(str(snapshot))):
        tree[path] = [*fields[1:], data]  # czxid mzxid ctime mtime version cversion aversion owner pzxid data
    for txn in txns:
        body = txn.body
        if isinstance(body, Multi):
            if body.failed:
                continue
            ops = body.ops
        elif isinstance(body, CloseSession):
            ops = [(DELETE, Delete(path)) for path in body.paths or ()]
            ops += [(DELETE, Delete(path)) for path, node in sorted(tree.items()) if node[7] == txn.session]
        else:
            ops = [(txn.type, body)]
        for kind, op in ops:
            if op.path == "/" and isinstance(op, (Create, Delete)):
                continue  # the root is there from the start: no request creates or deletes it
            parent = tree.get(op.path.rsplit("/", 1)[0] or "/")
            if isinstance(op, Create):
                if parent is None:
                    continue
                cversion = parent[5] + 1 if op.parent_cversion == -1 else op.parent_cversion
                if op.path in tree:
                    if kind == CREATE and cversion > parent[5]:
                        parent[5], parent[8] = cversion, txn.zxid
                    continue
                owner = txn.session if op.kind == "ephemeral" else 0
                tree[op.path] = [txn.zxid, txn.zxid, txn.time_ms, txn.time_ms, 0, 0, 0, owner, txn.zxid, op.data]
                if cversion > parent[5]:
                    parent[5], parent[8] = cversion, txn.zxid
            elif isinstance(op, Delete):
                if parent is not None:
                    parent[8] = max(parent[8], txn.zxid)
                tree.pop(op.path, None)
            elif isinstance(op, SetData) and op.path in tree:
                node = tree[op.path]
                node[9], node[4], node[1], node[3] = op.data, op.version, txn.zxid, txn.time_ms
    reached = {"/"}
    for path in sorted(tree, key=lambda p: p.count("/")):  # parents first
        if path != "/" and (path.rsplit("/", 1)[0] or "/") in reached:
            reached.add(path)
    children: dict[str, int] = {}
    for path in reached - {"/"}:
        parent_path = path.rsplit("/", 1)[0] or "/"
        children[parent_path] = children.get(parent_path, 0) + 1
    client = {}
    for path in reached:
        czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid, data = tree[path]
        n = children.get(path, 0)
        stat = Stat(
            czxid, mzxid, ctime, mtime, version, 2 * cversion - n, aversion, max(owner, 0), len(data or b""), n, pzxid
        )
        client[path] = (stat, data)
    return client


class _Log:
    """Txns as a server logs them, one zxid each, for a property test to draw."""

    def __init__(self, zxid: int) -> None:
        self.zxid = zxid
        self.txns: list[Txn] = []

    def add(self, session: int, kind: int, body: Any) -> None:
        self.zxid += 1
        self.txns.append(Txn(self.zxid, session, len(self.txns), 1_900_000_000_000 + self.zxid, kind, body, None))

    def ops(self, session: int, ops: list[tuple[int, Any]], per_multi: int, failed: bool = False) -> None:
        """``ops`` as single txns (``per_multi`` 1) or in multis of ``per_multi``; a failed multi ends in
        an error and changes nothing."""
        for start in range(0, len(ops), per_multi):
            chunk = ops[start : start + per_multi]
            if per_multi == 1 and not failed:
                self.add(session, *chunk[0])
            else:
                self.add(session, MULTI, Multi([*chunk, *([(ERROR, Failed(-101))] if failed else [])]))


def _draw_log(data: st.DataObject, snapshot_paths: list[str], zxid: int) -> list[Txn]:
    """A log of deep chains, wide fans, deletes (of leaves and of whole subtrees' tops), data changes
    and session closes (listing their paths or, as before 3.6, not), over the snapshot's own nodes and
    new ones, in single txns and multis of any size."""
    log = _Log(zxid)
    known = list(snapshot_paths)
    owned: dict[int, list[str]] = {}
    sessions = [_SESSION + k for k in range(3)]
    closed: set[int] = set()
    for step in range(data.draw(st.integers(1, 8))):
        action = data.draw(st.sampled_from(["chain", "fan", "delete", "set", "close"]))
        base = data.draw(st.sampled_from(known))
        top = "" if base == "/" else base
        session = data.draw(st.sampled_from([s for s in sessions if s not in closed] or [1]))
        per_multi = data.draw(st.sampled_from([1, 7, 1_000]))
        failed = data.draw(st.booleans()) and data.draw(st.booleans())
        if action == "chain":
            length = data.draw(st.one_of(st.integers(1, 20), st.integers(1_000, 1_500)))
            paths = [top + f"/c{step}" * (i + 1) for i in range(length)]
            ephemeral_leaf = data.draw(st.booleans())
            ops = [(CREATE, Create(p, b"c", [], "persistent", -1)) for p in paths]
            if ephemeral_leaf:
                ops[-1] = (CREATE2, Create(paths[-1], b"e", [], "ephemeral", -1))
                owned.setdefault(session, []).append(paths[-1])
            log.ops(session, ops, per_multi, failed)
        elif action == "fan":
            width = data.draw(st.one_of(st.integers(1, 20), st.integers(1_000, 3_000)))
            paths = [top + f"/f{step}-{i}" for i in range(width)]
            kind = data.draw(st.sampled_from(["persistent", "ephemeral"]))
            ops = [(CREATE, Create(p, None, [], kind, -1)) for p in paths]
            if kind == "ephemeral":
                owned.setdefault(session, []).extend(paths)
            log.ops(session, ops, per_multi, failed)
        elif action == "delete":  # (of the root too: a damaged log's, ignored as ZooKeeper cannot log it)
            victims = data.draw(st.lists(st.sampled_from(known), min_size=1, max_size=5))
            log.ops(session, [(DELETE, Delete(p)) for p in victims], per_multi)
        elif action == "set":
            targets = data.draw(st.lists(st.sampled_from(known), min_size=1, max_size=5))
            log.ops(session, [(SET_DATA, SetData(p, b"s%d" % step, step)) for p in targets], per_multi)
        elif session in owned:
            listing = data.draw(st.sampled_from(["all", "none", "some"]))
            paths = {"all": owned[session], "none": None, "some": owned[session][::2]}[listing]
            log.add(session, CLOSE_SESSION, CloseSession(paths))
            closed.add(session)  # ZooKeeper logs one close per session
        if action in ("chain", "fan") and not failed:
            known.extend(paths[:: max(1, len(paths) // 50)])
            known.append(paths[-1])
    return log.txns


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_replay_node_by_node_equals_the_plain_algorithm_at_any_depth_and_width(data: st.DataObject) -> None:
    """Random logs over a real snapshot: chains to 1,500 levels, fans to 3,000 children, in single
    txns and multis, deleted, changed and closed with their sessions. The streamed, node-by-node read
    equals the oracle's tree field for field, and its work stays linear in the logged ops."""
    records = file_records(SnapshotFile(str(_SNAPSHOT)))
    with FileSource([str(_SNAPSHOT)]) as source:
        assert source.plan is not None and source._replay is not None
        txns = _draw_log(data, [path for path, *_ in records], source.plan.zxid)
        source._replay = Replay(txns, source._replay.sessions)
        got = {raw.path: (raw.stat, raw.data) for raw in source.walk("/")}
        replay = source._replay
    want = _data_tree(_SNAPSHOT, txns)
    assert got.keys() == want.keys()
    for path, node in want.items():
        assert got[path] == node, path
    assert replay.ops_replayed <= OPS_PER_LOGGED_OP * max(len(replay.ops), 1), (replay.ops_replayed, len(replay.ops))


# --- length fields that lie ---------------------------------------------------------------------------

_INT = struct.Struct(">i")
_GIB_AND_A_HALF = 1_610_612_736
_PEAK_BYTES = 128 << 20  # what a read of these small files may hold at once, far below any claim here


def _plain_snapshot_lengths(stream: bytes) -> list[int]:
    """Offsets of every length and count a decompressed snapshot stream holds: the session count, the
    ACL cache's sizes and strings, each node's path and data lengths (docs/zookeeper-files.md §3)."""
    found = [16]
    pos = 20 + 12 * _INT.unpack_from(stream, 16)[0]
    found.append(pos)
    (acl_lists,) = _INT.unpack_from(stream, pos)
    pos += 4
    for _ in range(acl_lists):
        pos += 8
        found.append(pos)
        (acls,) = _INT.unpack_from(stream, pos)
        pos += 4
        for _ in range(acls):
            pos += 4
            for _ in ("scheme", "id"):
                found.append(pos)
                pos += 4 + _INT.unpack_from(stream, pos)[0]
    while not (_INT.unpack_from(stream, pos)[0] == 1 and stream[pos + 4 : pos + 5] == b"/"):
        found.append(pos)
        pos += 4 + _INT.unpack_from(stream, pos)[0]
        found.append(pos)
        pos += 4 + max(_INT.unpack_from(stream, pos)[0], 0) + 68  # data, ACL key, StatPersisted
    return found


def _log_lengths(blob: bytes) -> list[tuple[int, tuple[int, int] | None]]:
    """Offsets of a log's record lengths (no checksum covers them), and of the lengths and counts
    inside each record with the record's payload span (whose checksum a sealed mutation recomputes):
    a body's first field, a create's or setData's data length, a multi's count and sub-record lengths."""
    found: list[tuple[int, tuple[int, int] | None]] = []
    pos = 16
    while pos + 12 <= len(blob) and (length := _INT.unpack_from(blob, pos + 8)[0]) > 0:
        start, end = pos + 12, pos + 12 + length
        found.append((pos + 8, None))
        (kind,) = _INT.unpack_from(blob, start + 24)
        body = start + 28
        if body + 4 <= end:
            found.append((body, (start, end)))
        if kind in (CREATE, CREATE2, SET_DATA) and body + 4 <= end:
            found.append((body + 4 + _INT.unpack_from(blob, body)[0], (start, end)))
        if kind == MULTI:
            sub = body + 4
            for _ in range(_INT.unpack_from(blob, body)[0]):
                found.append((sub + 4, (start, end)))
                sub += 8 + _INT.unpack_from(blob, sub + 4)[0]
        pos = end + 1
    return found


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes([*out, value])


def _snappy_blocks(blob: bytes) -> list[tuple[int, bytes]]:
    """(offset, raw block) of each block of a snappy-java stream."""
    blocks, pos = [], 16
    while pos < len(blob):
        (length,) = _INT.unpack_from(blob, pos)
        blocks.append((pos, blob[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    return blocks


def _stream_of(name: str, blob: bytes) -> bytes:
    if name.endswith(".gz"):
        return gzip.decompress(blob)
    if name.endswith(".snappy"):
        return b"".join(bytes(cramjam.snappy.decompress_raw(block)) for _, block in _snappy_blocks(blob))
    return blob


def _file_of(name: str, stream: bytes) -> bytes:
    if name.endswith(".gz"):
        return gzip.compress(stream, mtime=0)
    if name.endswith(".snappy"):
        blocks = (bytes(cramjam.snappy.compress_raw(stream[i : i + 32768])) for i in range(0, len(stream), 32768))
        return SNAPPY_HEADER + b"".join(_INT.pack(len(b)) + b for b in blocks)
    return stream


SNAPPY_HEADER = b"\x82SNAPPY\x00" + _INT.pack(1) + _INT.pack(1)


def _reseal(stream: bytearray, payloads: list[int]) -> None:
    """Recompute a snapshot stream's seals (seal 1, then one after each trailer payload) in place, so
    that a lying length meets the parser, not the checksum."""
    seal = len(stream) - sum(13 + n for n in payloads) - 13
    for n in (0, *payloads):
        seal += n
        struct.pack_into(">q", stream, seal, zlib.adler32(bytes(stream[:seal])))
        seal += 13


_LIES = [-(1 << 31), -2, -1, 0, MAX_FIELD, MAX_FIELD + 1, _GIB_AND_A_HALF, (1 << 31) - 1]


@dataclass(frozen=True)
class _Lie:
    """One length or count replaced by a lie in a fixture file."""

    variant: str
    name: str
    where: str  # "stream": a snapshot's decompressed stream; "file": a log's or a snappy container's bytes;
    # "preamble": the inflated size a snappy block states
    offset: int
    value: int
    sealed: bool  # the snapshot's seals, or the log record's checksum, recomputed over the lie


@st.composite
def _lies(draw: st.DrawFn) -> _Lie:
    """A lie in any length of any fixture file: mostly the telling values (negative, zero, one either side
    of the bytes left, 512 MiB, 1.5 GiB), sometimes any int."""
    variant = draw(st.sampled_from(VARIANTS))
    var = EXPECTED["variants"][variant]
    name = draw(st.sampled_from([var["newest_snapshot"], *var["logs"]]))
    blob = (folder(variant) / name).read_bytes()
    if name.startswith("snapshot"):
        where = draw(st.sampled_from(["stream", "file", "preamble"] if name.endswith(".snappy") else ["stream"]))
        if where == "stream":
            stream = _stream_of(name, blob)
            offset = draw(st.sampled_from(_plain_snapshot_lengths(stream)))
            left = len(stream) - offset - 4
        else:
            offset, block = draw(st.sampled_from(_snappy_blocks(blob)))
            left = len(blob) - offset - 4
            if where == "preamble":
                claim = draw(st.sampled_from([_GIB_AND_A_HALF, (1 << 32) - 1, 23 * len(block), 64 * len(block)]))
                return _Lie(variant, name, where, offset, claim, False)
    else:
        where = "file"
        offset, record = draw(st.sampled_from(_log_lengths(blob)))
        left = (record[1] if record else len(blob)) - offset - 4
    telling = st.sampled_from([*_LIES, left - 1, left, left + 1])
    value = draw(st.one_of(telling, telling, telling, st.integers(-(1 << 31), (1 << 31) - 1)))
    return _Lie(variant, name, where, offset, value, draw(st.booleans()))


def _lying_file(lie: _Lie) -> bytes:
    blob = (folder(lie.variant) / lie.name).read_bytes()
    if lie.where == "preamble":
        return _snappy_claiming(blob, lie.offset, dict(_snappy_blocks(blob))[lie.offset], lie.value)
    if lie.where == "stream":
        stream = bytearray(_stream_of(lie.name, blob))
        struct.pack_into(">i", stream, lie.offset, lie.value)
        if lie.sealed:
            snap = SnapshotFile(str(folder(lie.variant) / lie.name))
            snap.verify()
            _reseal(stream, [20] * (snap.info.digest is not None) + [8] * (snap.info.last_processed_zxid is not None))
        return _file_of(lie.name, bytes(stream))
    changed = bytearray(blob)
    struct.pack_into(">i", changed, lie.offset, lie.value)
    record = dict(_log_lengths(blob)).get(lie.offset) if lie.name.startswith("log") else None
    if lie.sealed and record is not None:
        struct.pack_into(">q", changed, record[0] - 12, zlib.adler32(bytes(changed[record[0] : record[1]])))
    return bytes(changed)


def _read(paths: list[Path], best_effort: bool) -> tuple[int | None, BaseException | None, int]:
    """Read the files whole: (znodes read or None, the error it ended in, peak bytes allocated)."""
    tracemalloc.start()
    try:
        with FileSource([str(p) for p in paths], best_effort=best_effort) as source:
            return sum(1 for _ in source.walk("/")), None, tracemalloc.get_traced_memory()[1]
    except (FilesError, NotFoundError) as exc:  # NotFound: a best-effort read with nothing before the damage
        return None, exc, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _check_lie(tmp_path: Path, lie: _Lie) -> None:
    """Read the lying file alone (a snapshot) and in its data directory, strictly and with best effort:
    each read ends in a tree or a one-line ``FilesError`` naming the file, and allocates nothing near
    what the lie claims."""
    target = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: the fixture is the test's
    shutil.copytree(folder(lie.variant), target / "version-2")
    damaged = target / "version-2" / lie.name
    damaged.write_bytes(_lying_file(lie))
    reads = [[damaged]] if lie.name.startswith("snapshot") else []
    reads.append([target])  # a snapshot: falls back to the older one; a log: replayed
    for paths in reads:
        for best_effort in (False, True):
            count, error, peak = _read(paths, best_effort)
            assert peak < _PEAK_BYTES, (paths, best_effort, peak)
            if error is not None:
                message = str(error)
                assert "\n" not in message and message.strip()
                assert len(message) < 500, message[:500]  # one line is a short line: no lying length's worth of path
                if isinstance(error, FilesError):
                    assert lie.name in message or "missing from the logs" in message, message
            else:
                assert count


_LAST_LOG = FIXTURES / "zk395-plain" / "version-2" / "log.1c9"
_LAST_RECORD = [at for at, record in _log_lengths(_LAST_LOG.read_bytes()) if record is None][-1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lie=_lies())
# what it found: a path length that leaves a node path without a slash (the tree closed its root: an
# IndexError), and the newest log's last record claiming 512 MiB (read whole before its end was checked)
@example(lie=_Lie("zk38-plain", "snapshot.1cd", "stream", 2263, 863, False))
@example(lie=_Lie("zk395-plain", _LAST_LOG.name, "file", _LAST_RECORD, MAX_FIELD, False))
def test_lying_length_fields_end_in_one_line_or_a_tree(tmp_path: Path, lie: _Lie) -> None:
    """A length or count in a real snapshot (plain, gz or snappy; its seals recomputed or not) or log
    (its record's checksum recomputed or not) replaced by a lie: negative, zero, one past the end, 512
    MiB, 1.5 GiB."""
    _check_lie(tmp_path, lie)


def test_a_path_length_that_swallows_the_rest_of_the_stream_is_named_in_a_short_line(tmp_path: Path) -> None:
    """The node path a lying length makes of every byte after it (a megabyte, in a large snapshot) is
    quoted cut to a line, not whole."""
    name = "snapshot.1cd"
    stream = _stream_of(name, (folder("zk38-plain") / name).read_bytes())
    for offset in (61, 106):  # the first node's path length; its data's: 80k and 232k characters quoted whole
        left = len(stream) - offset - 4 - 200  # all but the tail: the path is the rest of the tree
        _check_lie(tmp_path, _Lie("zk38-plain", name, "stream", offset, left, False))
        _check_lie(tmp_path, _Lie("zk38-plain", name, "stream", offset, 2000, False))


def test_a_snapshot_cut_inside_its_acl_cache_is_damage(tmp_path: Path) -> None:
    """A real snapshot's head up to its first ACL key, then the end-of-tree seal (so that the cheap
    check passes): the key cut short is damage named with its offset, not an internal error."""
    var = EXPECTED["variants"]["zk395-plain"]
    blob = (folder("zk395-plain") / var["newest_snapshot"]).read_bytes()
    acl_cache = 20 + 12 * _INT.unpack_from(blob, 16)[0]
    assert _INT.unpack_from(blob, acl_cache)[0] > 0
    target = tmp_path / var["newest_snapshot"]
    target.write_bytes(blob[: acl_cache + 4] + b"\x00\x00\x00\x01/")
    for options in ([], ["--best-effort"]):
        result = run("--from-files", str(target), *options, "tree", "/", "-f", "jsonl")
        assert result.exit_code == ExitCode.FILES, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert target.name in line and f"stream byte {acl_cache + 4}" in line, line


def _cli_under_a_memory_limit(*args: str) -> subprocess.CompletedProcess[str]:
    """``zkstorm`` in a new process that may map 512 MiB at most (it reads these files in half that): an
    allocation of what a lying length claims fails there (a Python MemoryError, or an abort in native
    code) instead of passing unseen."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    return subprocess.run(
        [sys.executable, "-m", "zkstorm", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        cwd=Path(__file__).resolve().parent.parent,
        check=False,
    )


def _snappy_claiming(blob: bytes, offset: int, block: bytes, claim: int) -> bytes:
    """A snappy-java stream whose block at ``offset`` states ``claim`` inflated bytes in its preamble
    (a varint of up to 5 bytes) instead of its own size."""
    preamble = next(i for i, byte in enumerate(block[:5], 1) if byte < 0x80)
    changed = _varint(claim) + block[preamble:]
    return blob[:offset] + _INT.pack(len(changed)) + changed + blob[offset + 4 + len(block) :]


@pytest.mark.parametrize(
    ("variant", "which", "lie"),
    [
        ("zk395-snappy", "snapshot", "inflated size"),
        ("zk395-snappy", "snapshot", "block length"),
        ("zk395-plain", "log", "record length"),
    ],
)
def test_a_length_claiming_more_than_memory_holds_is_damage(tmp_path: Path, variant: str, which: str, lie: str) -> None:
    """Under a 512 MiB memory limit, lengths claiming 512 MiB and 1.5 GiB end in exit 7 and one line
    naming the file and offset (or, with --best-effort, in what precedes them), never in an allocation
    (a MemoryError, or cramjam's abort)."""
    var = EXPECTED["variants"][variant]
    files = tmp_path / "version-2"
    shutil.copytree(folder(variant), files)
    if which == "snapshot":
        target = files / var["newest_snapshot"]
        blob = target.read_bytes()
        if lie == "inflated size":
            blob = _snappy_claiming(blob, *_snappy_blocks(blob)[0], _GIB_AND_A_HALF)
        else:
            blob = blob[:16] + _INT.pack(MAX_FIELD) + blob[20:]
        target.write_bytes(blob)
        read = [str(target)]
    else:
        target = files / sorted(var["logs"], key=lambda n: int(n.split(".")[1], 16))[-1]
        buf = bytearray(target.read_bytes())
        at, _ = _log_lengths(bytes(buf))[-2]  # the last record's length: a torn tail, nothing read for it
        struct.pack_into(">i", buf, at, MAX_FIELD)
        target.write_bytes(bytes(buf))
        read = [str(files)]
    for options in ([], ["--best-effort"]):
        done = _cli_under_a_memory_limit("--from-files", *read, *options, "tree", "/", "-f", "jsonl")
        assert done.returncode in (ExitCode.OK, ExitCode.FILES), done.stderr[-2000:]
        if done.returncode == ExitCode.FILES:
            (line,) = done.stderr.strip().splitlines()
            assert target.name in line and "byte" in line, line
        else:
            assert done.stdout.count("\n") > 100 and "Traceback" not in done.stderr
