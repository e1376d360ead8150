"""The read-only session and the walker, against the real test server."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from tests.conftest import SASL_PASSWORD, SASL_USER, Chroot, load_cluster
from tests.fixtures import SERVER_NODES, all_clusters, manifest
from zkstorm.errors import NotFoundError, ZookeeperError
from zkstorm.sources.live import Credentials, Denied, RawNode, ReadOnlySession, ReadOnlyViolation, WalkStats, ZkTarget


def _walk(zk: str, path: str = "/", **kwargs: object) -> tuple[list[RawNode | Denied], WalkStats]:
    stats = WalkStats()
    with ReadOnlySession(zk, timeout=10) as session:
        items = list(session.walk(path, stats=stats, **kwargs))  # type: ignore[arg-type]
    return items, stats


@pytest.mark.parametrize("multiread", [True, False], ids=["multiread", "pipelined"])
@pytest.mark.parametrize(("system", "name"), all_clusters())
def test_every_fixture_cluster_walks_completely(
    writer: KazooClient, zk_root: Chroot, system: str, name: str, multiread: bool
) -> None:
    load_cluster(writer, zk_root.path, system, name)
    items, stats = _walk(zk_root.zk, multiread=multiread)
    nodes = {item.path: item for item in items if isinstance(item, RawNode)}
    expected = {n.path: n for n in manifest(system, name)}
    # Every fixture path and nothing else (the chroot hides the server's own /zookeeper nodes).
    assert set(nodes) == {"/"} | (set(expected) - set(SERVER_NODES))
    assert stats.vanished == stats.unreadable == 0
    children: dict[str, int] = {}
    for path in expected:
        if path not in SERVER_NODES:
            parent = path.rsplit("/", 1)[0] or "/"
            children[parent] = children.get(parent, 0) + 1
    for path, node in expected.items():
        if path in SERVER_NODES:
            continue
        got = nodes[path]
        assert (got.data or b"") == (node.data or b""), path
        assert got.stat.dataLength == len(node.data or b""), path
        assert got.stat.numChildren == children.get(path, 0), path
        assert (got.stat.ephemeralOwner != 0) == node.ephemeral, path


def test_walk_order_is_breadth_first_and_sorted(writer: KazooClient, zk_root: Chroot) -> None:
    for path in ("/b/y", "/b/x", "/a/z", "/c"):
        writer.ensure_path(zk_root.path + path)
    items, _ = _walk(zk_root.zk, batch_size=2, in_flight=1)
    assert [i.path for i in items] == ["/", "/a", "/b", "/c", "/a/z", "/b/x", "/b/y"]


def test_depth_limits_the_walk_but_keeps_child_counts(writer: KazooClient, zk_root: Chroot) -> None:
    writer.ensure_path(zk_root.path + "/a/b/c")
    items, _ = _walk(zk_root.zk, max_depth=1)
    assert [(i.path, i.stat.numChildren) for i in items if isinstance(i, RawNode)] == [("/", 1), ("/a", 1)]


def test_node_deleted_between_list_and_get_is_counted_and_skipped(writer: KazooClient, zk_root: Chroot) -> None:
    for i in range(5):
        writer.create(f"{zk_root.path}/n{i}", b"x")
    stats = WalkStats()
    with ReadOnlySession(zk_root.zk) as session:
        # One op per request and one request in flight: the walk reads lazily, so a node listed with
        # its siblings can be deleted by another client before its own get is sent.
        walk = session.walk("/", batch_size=1, in_flight=1, stats=stats)
        assert next(walk).path == "/"
        assert next(walk).path == "/n0"
        writer.delete(f"{zk_root.path}/n3")
        rest = [item.path for item in walk]
    assert rest == ["/n1", "/n2", "/n4"]
    assert stats.vanished == 1


def test_noauth_znode_becomes_unreadable_and_the_walk_goes_on(writer: KazooClient, zk_root: Chroot) -> None:
    writer.create(zk_root.path + "/open", b"o")
    writer.create(zk_root.path + "/secret", b"s", acl=[make_digest_acl("owner", "pw", all=True)])
    writer.create(zk_root.path + "/zz", b"z")
    items, stats = _walk(zk_root.zk)
    assert Denied("/secret", "NoAuth") in items
    assert {i.path for i in items if isinstance(i, RawNode)} == {"/", "/open", "/zz"}
    assert stats.unreadable == 1


def test_digest_credentials_open_a_protected_znode(
    writer: KazooClient, zk_root: Chroot, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer.create(zk_root.path + "/secret", b"s", acl=[make_digest_acl("owner", "pw", all=True)])
    creds = Credentials.from_env({"ZKSTORM_AUTH": "digest", "ZKSTORM_USER": "owner", "ZKSTORM_PASSWORD": "pw"})
    with ReadOnlySession(zk_root.zk, credentials=creds) as session:
        assert session.get("/secret").data == b"s"


def test_sasl_digest_login_works_and_a_wrong_password_is_refused(zk_root: Chroot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = Credentials(scheme="sasl-digest", user=SASL_USER, password=SASL_PASSWORD)
    with ReadOnlySession(zk_root.zk, credentials=good, timeout=5) as session:
        assert session.exists("/")
    bad = Credentials(scheme="sasl-digest", user=SASL_USER, password="wrong")
    started = time.monotonic()
    with pytest.raises(ZookeeperError, match="refused"):
        ReadOnlySession(zk_root.zk, credentials=bad, timeout=5).connect()
    assert time.monotonic() - started < 6


def test_password_file_is_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    creds = Credentials.from_env({"ZKSTORM_AUTH": "digest", "ZKSTORM_USER": "u", "ZKSTORM_PASSWORD_FILE": str(secret)})
    assert creds is not None and creds.password == "from-file"
    assert "from-file" not in repr(creds)


def test_chroot_paths_are_relative_to_it(writer: KazooClient, zk_root: Chroot) -> None:
    writer.ensure_path(zk_root.path + "/kafka/brokers/ids")
    items, _ = _walk(zk_root.zk + "/kafka")
    assert [i.path for i in items] == ["/", "/brokers", "/brokers/ids"]


def test_missing_start_path_is_not_found(zk_root: Chroot) -> None:
    with pytest.raises(NotFoundError), ReadOnlySession(zk_root.zk) as session:
        list(session.walk("/nope"))


def test_unreachable_ensemble_fails_within_the_timeout() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connections are refused
        started = time.monotonic()
        with pytest.raises(ZookeeperError, match="cannot connect"):
            ReadOnlySession(f"127.0.0.1:{port}", timeout=1.5).connect()
        assert time.monotonic() - started < 4


@pytest.mark.parametrize("bad", ["", "host:99999", "a b:1", "h:1//x", "h:1/a/../b", ":"])
def test_bad_connect_strings_are_refused(bad: str) -> None:
    with pytest.raises(ZookeeperError):
        ZkTarget.parse(bad)


def test_connect_string_forms() -> None:
    target = ZkTarget.parse("zk1:2181,zk2,[::1]:2182/kafka/")
    assert target.hosts == (("zk1", 2181), ("zk2", 2181), ("::1", 2182))
    assert target.chroot == "/kafka"
    assert str(target) == "zk1:2181,zk2:2181,[::1]:2182/kafka"


def test_the_session_refuses_to_send_writes(zk_server, writer: KazooClient, zk_root: Chroot) -> None:  # type: ignore[no-untyped-def]
    before = zk_server.last_zxid()
    with ReadOnlySession(zk_root.zk) as session:
        client = session.client_for_reads
        for attempt in (
            lambda: client.create("/x", b""),
            lambda: client.set("/", b"x"),
            lambda: client.delete("/"),
            lambda: client.set_acls("/", []),
            lambda: client.transaction().commit(),
            lambda: client.sync("/"),
        ):
            with pytest.raises(ReadOnlyViolation):
                attempt()
    assert zk_server.last_zxid() == before


class _DroppingProxy:
    """A loopback TCP proxy that can cut every connection: a real network fault on demand."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.stalled = threading.Event()  # when set: connections stay open but nothing reaches the client
        self.held: set[socket.socket] = set()  # clients whose requests are swallowed (see hold())
        self.swallowed = 0  # bytes of held requests
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b, b is client), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, to_client: bool) -> None:
        try:
            while data := src.recv(65536):
                if to_client and self.stalled.is_set():
                    continue  # swallow replies: a server that has stopped answering
                if src in self.held:
                    self.swallowed += len(data)
                    continue  # swallow requests: they stay in flight until the connection is cut
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def hold(self) -> None:
        """From now on, requests on the open connections never reach the server; new ones pass."""
        with self.lock:
            self.held = set(self.sockets[0::2])  # each connection is stored as (client side, upstream)

    def drop_all(self) -> None:
        with self.lock:
            for s in self.sockets:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self.sockets.clear()

    def close(self) -> None:
        self.listener.close()
        self.drop_all()


@pytest.mark.parametrize("multiread", [True, False], ids=["multiread", "pipelined"])
def test_connection_loss_mid_walk_is_retried_and_the_walk_completes(
    zk_server, writer: KazooClient, zk_root: Chroot, multiread: bool
) -> None:  # type: ignore[no-untyped-def]
    for i in range(40):
        writer.create(f"{zk_root.path}/n{i:02d}", b"v")
    proxy = _DroppingProxy(zk_server.port)
    try:
        stats = WalkStats()
        with ReadOnlySession(f"127.0.0.1:{proxy.port}{zk_root.path}", timeout=10) as session:
            walk = session.walk("/", batch_size=4, in_flight=2, stats=stats, multiread=multiread)
            seen = [next(walk).path for _ in range(6)]
            # Cut the connection while a walk request is certainly in flight: requests from now on are
            # held at the proxy, the rest of the walk is read in a thread, and the cut comes once a held
            # request (longer than a 12-byte ping) has been sent. Cutting at an idle moment would let
            # kazoo reconnect before the walk noticed anything.
            proxy.hold()
            rest: list[str] = []
            reader = threading.Thread(target=lambda: rest.extend(item.path for item in walk), daemon=True)
            reader.start()
            deadline = time.monotonic() + 10
            while proxy.swallowed <= 12 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert proxy.swallowed > 12, "the walk sent no request after the first six znodes"
            proxy.drop_all()
            reader.join(30)
            assert not reader.is_alive()
            seen += rest
    finally:
        proxy.close()
    assert sorted(seen) == sorted(["/"] + [f"/n{i:02d}" for i in range(40)])
    assert stats.retries >= 1


def test_a_server_that_stops_answering_ends_the_walk_with_a_clear_error(
    zk_server, writer: KazooClient, zk_root: Chroot
) -> None:  # type: ignore[no-untyped-def]
    for i in range(40):
        writer.create(f"{zk_root.path}/n{i:02d}", b"v")
    proxy = _DroppingProxy(zk_server.port)
    started = time.monotonic()
    try:
        with ReadOnlySession(f"127.0.0.1:{proxy.port}{zk_root.path}", timeout=2) as session:
            walk = session.walk("/", batch_size=4, in_flight=2)
            next(walk)
            proxy.stalled.set()
            with pytest.raises(ZookeeperError, match=r"stopped answering|could not reconnect|lost"):
                list(walk)
    finally:
        proxy.close()
    assert time.monotonic() - started < 30
