"""Session-wide real ZooKeeper, a writable client to seed it, and a fresh chroot per test.

Missing Java or ZooKeeper jars fail the run loudly: a skipped ZooKeeper test would hide a missing part.
The server log is attached to the report of every failing test.

Markers say what a test needs beyond Python and the test ZooKeeper: ``spark``, ``browser`` (headless
Chromium) and ``real_cluster``. They follow from the fixtures a test uses, directly or through other
fixtures (``pytest_collection_modifyitems``), so a new test cannot forget them; a test that starts Spark
in a child process says ``@pytest.mark.spark`` itself, and one that starts Spark unmarked fails
(``_spark_only_where_marked``). ``make check`` runs the tests that need none of them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import re
import shutil
import socket
import stat
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kazoo.protocol.connection as kazoo_connection
import pytest
from kazoo.client import KazooClient

from tests.fixtures import SERVER_NODES, manifest
from tests.s3server import S3Server
from zkstorm.jobs.spark import BRIEF_RUN_JVM, NO_CALL_SITES
from zkstorm.sandbox.server import ZkServer

# kazoo's connection thread draws its ping jitter from the global ``random`` each time it wakes
# (kazoo/protocol/connection.py, ``_connect_attempt``), and the suite's clients live through the property
# tests: Hypothesis takes a change of the global random state while it draws an example for a strategy
# using ``random`` (a HypothesisDeprecationWarning now, on whichever test a wake-up happens to fall). A
# generator of kazoo's own gives the same jitter and leaves the global state to Hypothesis.
kazoo_connection.random = random.Random()  # type: ignore[assignment]

# A Spark driver the suite starts for one run (the CLI's, spark-submit's) runs its JVM on the client compiler
# alone, as the harness's daemons do: C2's compiling costs more than it gains in one small job (a first
# history run in a new session: 26 s -> 20 s); and on the parallel collector, as the CLI's brief runs are
# (``zkstorm.jobs.spark.BRIEF_RUN_JVM``; tests/test_s3.py's and test_secrets.py's Spark tests: 70 s -> 63 s).
# The suite's own session (``spark``) keeps both compilers: it
# serves every Spark test of its worker, where C2's code pays (tests/test_history.py alone: 261 s with it,
# 310 s without). Spark's launcher adds ``SPARK_SUBMIT_OPTS`` to the driver's command line; a setting of the
# caller's own is kept.
ONE_RUN_DRIVER = BRIEF_RUN_JVM  # the client compiler, its code cache as large as the tiered default's
os.environ.setdefault("SPARK_SUBMIT_OPTS", ONE_RUN_DRIVER)

SASL_USER, SASL_PASSWORD = "zkstorm", "sasl-s3cret"
_JAAS = """Server {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  user_%s="%s";
};
"""


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZkServer]:
    base = tmp_path_factory.mktemp("zk")
    jaas = base / "jaas.conf"
    jaas.write_text(_JAAS % (SASL_USER, SASL_PASSWORD))
    server = ZkServer(
        base / "server",
        extra_config={"authProvider.sasl": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"},
        jvm_options=[f"-Djava.security.auth.login.config={jaas}"],
    )
    server.start()
    _SERVERS.append(server)
    yield server
    server.stop()


_SERVERS: list[ZkServer] = []


@pytest.fixture(scope="session")
def writer(zk_server: ZkServer) -> Iterator[KazooClient]:
    """The tests' own writable client; the code under test never gets it."""
    client = KazooClient(zk_server.connect_string, timeout=30)
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


@dataclass(frozen=True)
class Chroot:
    server: ZkServer
    path: str

    @property
    def zk(self) -> str:
        return f"{self.server.connect_string}{self.path}"


_counter = itertools.count()


@pytest.fixture
def zk_root(request: pytest.FixtureRequest, zk_server: ZkServer, writer: KazooClient) -> Chroot:
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80]
    path = f"/t/{next(_counter):04d}-{name}"
    writer.ensure_path(path)
    return Chroot(zk_server, path)


def load_cluster(writer: KazooClient, chroot: str, system: str, name: str) -> int:
    """Create a fixture folder's znodes under ``chroot`` (ephemerals held by the writer's session)."""
    transaction = writer.transaction()
    count = 0
    for node in manifest(system, name):
        if node.path in SERVER_NODES:
            continue
        transaction.create(chroot + node.path, node.data or b"", ephemeral=node.ephemeral)
        count += 1
    for result in transaction.commit():
        if isinstance(result, Exception):
            raise result
    return count


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and _SERVERS:
        report.sections.append(("ZooKeeper server log (tail)", _SERVERS[0].log_tail(80)))
    if report.failed and ENSEMBLES:
        report.sections.append(("ZooKeeper ensemble logs (tails)", ENSEMBLES[-1].log_tail(30)))


ENSEMBLES: list[Any] = []  # the running test ensembles (tests/test_ensemble.py), whose logs a failure shows


# --- markers ------------------------------------------------------------------------------------------

# fixture → the marker of every test that uses it, directly or through another fixture
FIXTURE_MARKERS = {"spark": "spark", "browser": "browser", "real_cluster": "real_cluster"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))  # the closure: fixtures of fixtures too
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in used:
                item.add_marker(marker)
    _heaviest_files_first(items)


# A file's weight, by the heaviest marker of its tests: the real clusters take minutes, Spark and the browser
# tens of seconds, a slow test seconds, the rest less.
_FILE_WEIGHTS = ("real_cluster", "spark", "browser", "slow")


def _heaviest_files_first(items: list[pytest.Item]) -> None:
    """Order the files by weight, keeping each file's tests in their order. ``make test`` runs the files on
    two workers (pytest-xdist, ``--dist loadfile --no-loadscope-reorder``), which hand files out in this
    order: the files that take minutes start first, and the many short ones fill in beside them, instead of
    one worker starting a real cluster after the other has run out of work. (xdist's default reorder, by
    tests per file, handed the three-test cluster file out 44th of 50: a tail of minutes on one worker.)"""

    def weight(item: pytest.Item) -> int:
        names = {m.name for m in item.iter_markers()}
        return next((i for i, name in enumerate(_FILE_WEIGHTS) if name in names), len(_FILE_WEIGHTS))

    def file(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    by_file: dict[str, int] = {}
    for item in items:
        by_file[file(item)] = min(by_file.get(file(item), len(_FILE_WEIGHTS)), weight(item))
    items.sort(key=lambda item: by_file[file(item)])  # stable: a file's own order is kept


_FAKE_SPARK_SUBMIT = """#!/bin/sh
echo "$0 $*" >> "$(dirname "$0")/../started"
echo "zkstorm tests: this test starts Spark but is not marked spark" >&2
exit 1
"""


@pytest.fixture(scope="session")
def _no_spark_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SPARK_HOME whose spark-submit only notes that it was called and fails."""
    home = tmp_path_factory.mktemp("no-spark")
    (home / "bin").mkdir()
    submit = home / "bin" / "spark-submit"
    submit.write_text(_FAKE_SPARK_SUBMIT)
    submit.chmod(submit.stat().st_mode | stat.S_IXUSR)
    return home


@pytest.fixture(autouse=True)
def _spark_only_where_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test not marked ``spark`` that starts Spark, in this process or a child (pyspark launches the JVM
    through ``$SPARK_HOME/bin/spark-submit``), fails saying so: under ``make check`` it would start a JVM
    there is no time for, and ``-m "not spark"`` would not leave it out."""
    if request.node.get_closest_marker("spark") is not None:
        yield
        return
    home = request.getfixturevalue("_no_spark_home")
    started = home / "started"
    started.unlink(missing_ok=True)
    monkeypatch.setenv("SPARK_HOME", str(home))
    yield
    if started.exists():
        pytest.fail(
            f"{request.node.nodeid} starts Spark but is not marked spark: use the spark fixture, or "
            "@pytest.mark.spark when Spark runs in a child process (tests/conftest.py)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession for the whole run, UTC, quiet."""
    from pyspark.sql import SparkSession

    one_run = os.environ.get("SPARK_SUBMIT_OPTS") == ONE_RUN_DRIVER
    if one_run:
        del os.environ["SPARK_SUBMIT_OPTS"]  # this session serves many jobs: both compilers
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("zkstorm-tests")
            .config("spark.sql.session.timeZone", "UTC")
            .config(*NO_CALL_SITES)
            .config("spark.ui.enabled", "false")
            # a task per shuffle: the tests' tables are a few rows, their tasks mostly overhead (the week's
            # night-by-night test: 58 s with two, 53 s with one)
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.driver.memory", "1g")
            # the parallel collector: G1's concurrent work competes with the suite's for two cores (the history
            # tests' three slowest, alone, two runs each: 139-146 s with G1, 124-125 s with it)
            .config("spark.driver.extraJavaOptions", "-XX:+UseParallelGC")
            .getOrCreate()
        )
    finally:
        if one_run:
            os.environ["SPARK_SUBMIT_OPTS"] = ONE_RUN_DRIVER  # the CLI's and spark-submit's drivers, later
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def browser() -> tuple[str, str]:
    """Debian's headless Chromium and its driver (``scripts/test-deps.sh`` installs them): their paths.
    Missing, the test fails in one line, not skipped."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail(
            "Chromium or ChromeDriver is missing: apt-get install chromium chromium-driver "
            "(make test installs them when run as root)",
            pytrace=False,
        )
    return chromium, driver


class HugeReplyServer:
    """A fake ZooKeeper that answers every connection's first request with a reply whose length prefix
    claims ``claimed`` bytes, and nothing more. A fake, because no real server can be made to send such a
    reply on demand: it stands for a broken or hostile endpoint (a port scanner's honeypot, a proxy gone
    wrong) that makes a client allocate whatever four bytes claim."""

    def __init__(self, claimed: int = 1_500_000_000) -> None:
        self.claimed = claimed
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(5)
            conn.recv(4096)  # the ConnectRequest
            conn.sendall(struct.pack("!i", self.claimed) + bytes(16))

    def close(self) -> None:
        self.listener.close()
        for conn in self.connections:
            with contextlib.suppress(OSError):
                conn.close()


@pytest.fixture
def huge_reply_server() -> Iterator[HugeReplyServer]:
    server = HugeReplyServer()
    yield server
    server.close()


# --- a real S3-protocol server (tests/s3server.py) ---------------------------------------------------


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server()
    yield server
    server.stop()


_buckets = itertools.count()


@pytest.fixture
def s3(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[S3Server, str]]:
    """A fresh bucket on the suite's S3 server, and its endpoint and credentials in the standard AWS
    environment variables (for this process and the CLI processes it starts)."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    bucket = f"zkstorm-{next(_buckets)}"
    s3_server.client().create_bucket(Bucket=bucket)
    yield s3_server, bucket
