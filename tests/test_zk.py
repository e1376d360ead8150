"""The read-only session and the walker, against the real test server."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
import warnings
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from tests.conftest import SASL_PASSWORD, SASL_USER, Chroot, HugeReplyServer, load_cluster
from tests.fixtures import SERVER_NODES, all_clusters, manifest
from zkstorm.errors import NotFoundError, ReadOnlyViolation, ReplyTooLargeError, RootNotFoundError, ZookeeperError
from zkstorm.sandbox.server import four_letter_word
from zkstorm.sources.live import Credentials, Denied, RawNode, ReadOnlySession, WalkStats, ZkTarget


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


def test_walk_order_is_depth_first_in_batches_and_sorted(writer: KazooClient, zk_root: Chroot) -> None:
    """A parent before its children, siblings in name order; what a batch names is read before what
    waits: /c (listed with /a and /b, but left out of their batch of two) comes after their children."""
    for path in ("/b/y", "/b/x", "/a/z", "/c"):
        writer.ensure_path(zk_root.path + path)
    items, _ = _walk(zk_root.zk, batch_size=2, in_flight=1)
    assert [i.path for i in items] == ["/", "/a", "/b", "/a/z", "/b/x", "/b/y", "/c"]


def test_the_reads_waiting_stay_within_one_path_of_the_tree(writer: KazooClient, zk_root: Chroot) -> None:
    """40 topics of 40 partitions with a state each: breadth first, the walk held a level's 1,600 paths at
    once (a million, for a million partitions); depth first, it holds the unread siblings along the path
    it reads, and the children of what one round of batches listed (here one batch of 4 listings)."""
    transaction = writer.transaction()
    for t in range(40):
        transaction.create(f"{zk_root.path}/t{t:02d}", b"")
        for p in range(40):
            transaction.create(f"{zk_root.path}/t{t:02d}/{p}", b"")
            transaction.create(f"{zk_root.path}/t{t:02d}/{p}/state", b"{}")
    assert not [r for r in transaction.commit() if isinstance(r, Exception)]
    items, stats = _walk(zk_root.zk, batch_size=4, in_flight=1)
    assert len(items) == 1 + 40 + 2 * 40 * 40
    assert stats.pending_max <= 40 + 4 * 40 + 2 * 4, stats.pending_max


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
    # the front door takes the scheme alone and the rest from the environment, as the CLI's --auth does
    monkeypatch.setenv("ZKSTORM_USER", "owner")
    monkeypatch.setenv("ZKSTORM_PASSWORD", "pw")
    import zkstorm

    with zkstorm.connect(zk_root.zk, credentials="digest") as cluster:
        assert cluster.get("/secret").data == b"s"


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


@pytest.mark.parametrize("quiet_secs", [0, 3, pytest.param(7, marks=pytest.mark.slow)])  # 7: a long run
def test_closing_a_session_whose_server_stopped_answering_is_bounded_by_the_timeout(
    zk_server, writer: KazooClient, zk_root: Chroot, quiet_secs: float
) -> None:  # type: ignore[no-untyped-def]
    """After a complete read the server stops answering, at once or while the command is still writing
    its output (``quiet_secs``: kazoo is reconnecting by then): closing the session ends within
    --timeout, not kazoo's own wait of at least ten seconds for its connection thread."""
    for i in range(5):
        writer.create(f"{zk_root.path}/n{i}", b"v")
    proxy = _DroppingProxy(zk_server.port)
    try:
        session = ReadOnlySession(f"127.0.0.1:{proxy.port}{zk_root.path}", timeout=2)
        with session:
            assert len(list(session.walk("/"))) == 6
            proxy.stalled.set()
            time.sleep(quiet_secs)
            started = time.monotonic()
        took = time.monotonic() - started
    finally:
        proxy.close()
    assert took < 3, took


# --- a hostile world: refusals, names that do not resolve, servers that do not answer -------------------


def test_an_ensemble_that_refuses_every_connection_is_told_at_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connections are refused
        started = time.monotonic()
        with pytest.raises(ZookeeperError, match=rf"^cannot connect .*: connection refused by 127\.0\.0\.1:{port}$"):
            ReadOnlySession(f"127.0.0.1:{port}", timeout=10).connect()
        assert time.monotonic() - started < 3  # not the whole --timeout


# Host names glibc refuses to look up (a label may not begin with a hyphen): they fail at once, without a
# query. Names under .invalid (RFC 2606) go to this machine's resolver, which now and then takes 5 s to
# answer NXDOMAIN: they serve the test of the timeout bound below, not of an answer "at once".
NOT_HOST_NAMES = [f"-zk{i}.invalid" for i in range(100)]


def test_hosts_that_do_not_resolve_are_told_at_once() -> None:
    started = time.monotonic()
    zk = ",".join(f"{name}:2181" for name in NOT_HOST_NAMES)
    with pytest.raises(ZookeeperError) as caught:
        ReadOnlySession(zk, timeout=10).connect()
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert message.startswith("cannot connect to ZooKeeper at -zk0.invalid:2181,-zk1.invalid:2181,")
    assert (
        "… (100 hosts)" in message
        and "cannot resolve hosts -zk0.invalid, -zk1.invalid, -zk2.invalid and 97 more" in message
    )
    with pytest.raises(ZookeeperError, match=r"cannot resolve host -zk0\.invalid \("):
        ReadOnlySession("-zk0.invalid:2181", timeout=10).connect()


def test_refused_and_unresolvable_hosts_are_named_together() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(ZookeeperError) as caught:
            ReadOnlySession(f"127.0.0.1:{port},-zk.invalid:2181", timeout=10).connect()
        assert time.monotonic() - started < 3
    assert f"connection refused by 127.0.0.1:{port}; cannot resolve host -zk.invalid" in str(caught.value)


@contextlib.contextmanager
def _full_backlog() -> Iterator[int]:
    """A listening socket whose accept queue is full: the kernel drops further SYNs, so a connect waits
    for its timeout, as it does for a host that has vanished from the network."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.2)
    try:
        yield port
    finally:
        for sock in [*fillers, listener]:
            sock.close()


@contextlib.contextmanager
def _silent() -> Iterator[int]:
    """A server that accepts connections and never answers the handshake."""
    with socket.create_server(("127.0.0.1", 0), backlog=16) as listener:
        yield listener.getsockname()[1]


@pytest.mark.parametrize("blackhole", [_full_backlog, _silent], ids=["full-backlog", "silent"])
def test_the_timeout_bounds_a_connection_to_a_server_that_never_answers(blackhole) -> None:  # type: ignore[no-untyped-def]
    # kazoo waits its session timeout (at least 4 s) for a socket connect or a handshake reply, whatever
    # --timeout says; the bound here is generous for a loaded machine and still below that.
    with blackhole() as port:
        started = time.monotonic()
        with pytest.raises(ZookeeperError, match=rf"within 1s \(127\.0\.0\.1:{port}: no answer\)$"):
            ReadOnlySession(f"127.0.0.1:{port}", timeout=1).connect()
        assert time.monotonic() - started < 1 + 1.5


def test_a_missing_chroot_is_not_found_without_kazoos_warning(zk_root: Chroot) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(RootNotFoundError, match=rf"^no znode {re.escape(zk_root.path)}/nope on .*chroot in --zk"):
            ReadOnlySession(zk_root.zk + "/nope", timeout=10).connect()
    assert [str(w.message) for w in seen] == []


def test_a_reply_claiming_more_than_the_bound_is_refused_before_it_is_read(huge_reply_server: HugeReplyServer) -> None:
    started = time.monotonic()
    with pytest.raises(ReplyTooLargeError) as caught:
        ReadOnlySession(f"127.0.0.1:{huge_reply_server.port}", timeout=10).connect()
    assert time.monotonic() - started < 3
    assert str(caught.value) == (
        f"ZooKeeper at 127.0.0.1:{huge_reply_server.port} sent a reply of 1,500,000,000 bytes, more than the "
        "256 MiB zkstorm reads (ZKSTORM_MAX_REPLY_BYTES): refused"
    )


def test_the_walk_keeps_its_batches_under_the_reply_bound(writer: KazooClient, zk_root: Chroot) -> None:
    """Twelve znodes of 200 kB (2.4 MB) walk under a 512 KiB bound, a batch at a time; one znode of 600 kB
    is refused with the server's name, and the session ends on it."""
    for i in range(12):
        writer.create(f"{zk_root.path}/blobs/b{i:02d}", bytes([i]) * 200_000, makepath=True)
    writer.create(f"{zk_root.path}/big", b"y" * 600_000)
    stats = WalkStats()
    with ReadOnlySession(zk_root.zk, timeout=10, max_reply=512 << 10) as session:
        sizes = {i.path: len(i.data or b"") for i in session.walk("/blobs", stats=stats) if isinstance(i, RawNode)}
        assert sizes == {"/blobs": 0} | {f"/blobs/b{i:02d}": 200_000 for i in range(12)}
        assert stats.retries == 0
        with pytest.raises(ReplyTooLargeError, match=r"^ZooKeeper at 127\.0\.0\.1:\d+ sent a reply of 600,\d{3} bytes"):
            session.get("/big")


def _received(port: int) -> int:
    """Packets the server has received from every client (``srvr``)."""
    found = re.search(r"^Received: (\d+)$", four_letter_word(port, "srvr"), re.MULTILINE)
    assert found
    return int(found[1])


def test_root_discovery_reads_a_wide_level_in_batches(zk_server, writer: KazooClient, zk_root: Chroot) -> None:  # type: ignore[no-untyped-def]
    """3,000 children of one znode, a Kafka chroot three levels down under one of them and a Storm root
    under another: both are found, with a few dozen requests (one per znode would be 3,000)."""
    import zkstorm

    wide = f"{zk_root.path}/tenants"
    transaction = writer.transaction()
    transaction.create(wide)
    for i in range(3000):
        transaction.create(f"{wide}/t{i:04d}")
    assert not [r for r in transaction.commit() if isinstance(r, Exception)]
    writer.ensure_path(f"{wide}/t1234/kafka/brokers/ids")
    writer.ensure_path(f"{wide}/t2345/storms")
    writer.ensure_path(f"{wide}/t2345/assignments")
    before = _received(zk_server.port)
    with zkstorm.connect(zk_root.zk) as cluster:
        roots = cluster.discovered_roots
    used = _received(zk_server.port) - before
    assert roots.kafka == ("/tenants/t1234/kafka",) and roots.storm == ("/tenants/t2345",)
    assert used < 200, used
