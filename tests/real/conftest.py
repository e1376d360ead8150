"""Fixtures of the real-cluster tests: ``real_cluster`` (what every one needs: Java 17+ with javac, no daemon
left by a dead run, the run's folder), and ``kafka``: ONE real cluster per Kafka version for the whole
module, started under a chroot of the suite's test ZooKeeper (``zk_server``) and stopped when the
module's tests of that version are done, before the next version starts and before any other test
runs (a cluster running beside them would move the zxid the read-only proofs watch).

A prerequisite missing is one line naming what to install: a failure under CI (``CI=true``), a skip with
that line elsewhere. ``storm``: ONE Storm 2.8.3 LocalCluster for the Storm module, under a root of its
own in the same ZooKeeper. ``ZKSTORM_REAL_CAPTURE=DIR`` writes every moment there too
(``scripts/capture_kafka_real.py``). The facts compared are counted per version and view, written to
the run's folder (``facts.json``) and summed up at the end of the run.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.real import harness
from tests.real import storm as storm_real
from tests.real.kafka import VERSIONS, KafkaCluster
from tests.real.scenario import HISTORY_VERSION, KafkaScenario
from tests.real.storm_scenario import StormScenario

RUNNING: list[KafkaCluster] = []
STORMS: list[storm_real.StormCluster] = []
FACTS: dict[tuple[str, str], list[int]] = {}  # (profile, view) -> [compared, equal]
TIMINGS: dict[str, Any] = {}  # profile -> ({step: (acting s, moment s)}, {step: retries})
_ROOTS = itertools.count()


def _missing(message: str) -> None:
    """A part the real clusters need is missing: one line naming what to install, and a failure, never a
    skip (a skip under make test would hide the missing part); make check leaves these tests out."""
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The run's folder for real daemons, once Java (with javac) is there and what a killed run left
    running is gone (``harness.sweep``)."""
    try:
        harness.java()
        harness.javac()
    except harness.Missing as exc:
        _missing(str(exc))
    harness.sweep()
    folder = tmp_path_factory.mktemp("real")
    yield folder
    (folder / "facts.json").write_text(
        json.dumps([{"profile": p, "view": v, "compared": c, "equal": e} for (p, v), (c, e) in sorted(FACTS.items())])
    )


@pytest.fixture(scope="module", params=sorted(VERSIONS, reverse=True), ids=lambda v: f"kafka-{v}")
def kafka(request: pytest.FixtureRequest, real_cluster: Path, zk_server: Any, writer: Any) -> Iterator[KafkaScenario]:
    """One three-broker cluster of the version for all the module's tests, and its scenario."""
    version = VERSIONS[request.param]
    try:
        harness.jars(version.profile)
    except harness.Missing as exc:
        _missing(str(exc))
    chroot = f"/real/{version.profile}-{next(_ROOTS)}"
    cluster = KafkaCluster(version, zk_server.connect_string, chroot, real_cluster / version.profile)
    RUNNING.append(cluster)
    scenario = None
    started_zxid = zk_server.last_zxid()
    try:
        cluster.start()
        capture = os.environ.get("ZKSTORM_REAL_CAPTURE")
        scenario = KafkaScenario(cluster, zk_server, writer, capture=Path(capture) if capture else None)
        scenario.started_zxid = started_zxid
        if version.version == HISTORY_VERSION:  # one small history run a session: this version's snapshots
            scenario.snapshots = real_cluster / version.profile / "snapshots"
        yield scenario
    finally:
        TIMINGS[version.profile] = (scenario.timings, scenario.retries) if scenario else ({}, {})
        cluster.stop()
        RUNNING.remove(cluster)
        _wait_unregistered(writer, chroot)


@pytest.fixture(scope="module")
def storm(real_cluster: Path, zk_server: Any, writer: Any) -> Iterator[StormScenario]:
    """ONE Storm LocalCluster (Nimbus with Thrift, two supervisors) for all the module's tests, under a
    root of its own in the suite's ZooKeeper, and its scenario; stopped (every ephemeral znode gone) before
    any other test runs."""
    try:
        harness.jars(storm_real.PROFILE)
    except harness.Missing as exc:
        _missing(str(exc))
    root = f"/real/{storm_real.PROFILE}-{next(_ROOTS)}"
    cluster = storm_real.StormCluster(zk_server.connect_string, root, real_cluster / storm_real.PROFILE)
    STORMS.append(cluster)
    scenario = None
    started_zxid = zk_server.last_zxid()
    try:
        cluster.start()
        capture = os.environ.get("ZKSTORM_REAL_CAPTURE")
        scenario = StormScenario(cluster, zk_server, writer, capture=Path(capture) if capture else None)
        scenario.started_zxid = started_zxid
        scenario.snapshots = real_cluster / storm_real.PROFILE / "snapshots"  # the one Storm history run's
        yield scenario
    finally:
        TIMINGS[storm_real.PROFILE] = (scenario.timings, scenario.retries) if scenario else ({}, {})
        cluster.stop()
        STORMS.remove(cluster)
        _wait_no_sessions(writer, root)


def _wait_no_sessions(writer: Any, root: str, timeout: float = 20.0) -> None:
    """Until no ephemeral znode of the stopped Storm cluster is left (supervisors, nimbuses, the leader
    latch, errors): no write of theirs may land while the next tests watch the zxid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [
            sub
            for sub in ("supervisors", "nimbuses", "leader-lock")
            if writer.exists(f"{root}/{sub}") and writer.get_children(f"{root}/{sub}")
        ]
        if not left:
            return
        time.sleep(0.2)


HISTORY_TEST = "test_history_names_the_broker_kill_between_the_right_snapshots"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The Kafka history test exists for the ``HISTORY_VERSION`` cluster only (one history run a session,
    on the one cluster that takes snapshots): its instance for another version is not generated, rather
    than skipped, so a skip under ``make test`` always means something is missing."""
    other = [
        i
        for i in items
        if getattr(i, "originalname", "") == HISTORY_TEST and f"[kafka-{HISTORY_VERSION}]" not in i.nodeid
    ]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [i for i in items if i not in other]


def _wait_unregistered(writer: Any, chroot: str, timeout: float = 20.0) -> None:
    """Until no broker of the stopped cluster holds a session (a killed one's expires by itself): no
    write of theirs may land while the next tests watch the zxid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ids = writer.get_children(f"{chroot}/brokers/ids") if writer.exists(f"{chroot}/brokers/ids") else []
        if not ids and not writer.exists(f"{chroot}/controller"):
            return
        time.sleep(0.2)


def count(profile: str, facts: list[Any]) -> None:
    for fact in facts:
        entry = FACTS.setdefault((profile, fact.view), [0, 0])
        entry[0] += 1
        entry[1] += fact.equal


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and RUNNING:
        report.sections.append(("Kafka broker logs (tails)", RUNNING[-1].log_tails(25)))
    if report.failed and STORMS:
        report.sections.append(("Storm log (tail)", STORMS[-1].log_tail(40)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FACTS:
        return
    terminalreporter.section("real clusters: seconds per step (acting, then its moment; retries)")
    for profile, (timings, retries) in TIMINGS.items():
        line = ", ".join(
            f"{s} {a:.1f}+{m:.1f}" + (f" ({retries[s]}x)" if retries.get(s) else "") for s, (a, m) in timings.items()
        )
        terminalreporter.write_line(f"{profile}: {line}")
    terminalreporter.section("real clusters: facts compared with Kafka's and Storm's own answers")
    for (profile, view), (compared, equal) in sorted(FACTS.items()):
        terminalreporter.write_line(f"{profile:12} {view:32} {compared:6} compared {equal:6} equal")
