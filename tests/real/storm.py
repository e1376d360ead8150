"""A real Storm cluster: Storm 2.8.3's ``LocalCluster`` (Nimbus with its Thrift server on, two supervisors
of three slots each, real in-process workers) under its own ``storm.zookeeper.root`` of the suite's test
ZooKeeper, in one JVM on the pinned jars (``tests/real/pom.xml``, profile ``storm-2.8.3``) that also
answers with Nimbus's own Thrift API (``java/StormTruth.java``), spoken to a JSON line at a time.

``LocalCluster`` rather than separate Nimbus and supervisor processes: those launch each worker as
``java -cp <storm distribution>/lib…`` from a Storm distribution's layout, which Maven's jars are not;
``LocalCluster``'s Nimbus, supervisors and workers are Storm's own classes writing the same znodes (the
issue names it as acceptable). What differs is said where it matters: its workers are threads, so a
stopped supervisor's workers stop with it (``LocalCluster.killSupervisor``) rather than being orphaned.

The cluster is ready when Storm says so: Nimbus answers on its Thrift port (``getLeader``); a topology is
running when ``getTopologyInfo`` lists every executor with stats (the workers' executor heartbeats have
reached ZooKeeper, where Nimbus reads them). ``executor.metrics.frequency.secs`` is ``METRICS_SECS``: how
often a worker writes its executors' figures to ``workerbeats`` (60 s by default).
"""

from __future__ import annotations

import contextlib
import json
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zkstorm.sandbox.server import free_port

from .harness import Daemon, DaemonFailed, classpath, compile_java, jars, jvm

PROFILE = "storm-2.8.3"
VERSION = "2.8.3"
SOURCE = Path(__file__).parent / "java" / "StormTruth.java"
METRICS_SECS = 5  # short for a quick test, long enough for quiet moments between the beats
TOPOLOGY = "words"
SUPERVISOR_HOSTS = ("storm-host-1", "storm-host-2")  # each supervisor's hostname (java/StormTruth.java)

LOG4J2 = """\
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="file" fileName="{log}">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
"""


class StormFailed(Exception):
    """Storm answered a command with an error (its exception's class and message)."""


class StormCluster:
    """Storm's LocalCluster under ``root`` of the ZooKeeper at ``zk_connect`` (``host:port``)."""

    def __init__(self, zk_connect: str, root: str, run_dir: Path) -> None:
        self.zk_connect = zk_connect
        self.root = root
        self.run_dir = run_dir
        self.daemon: Daemon | None = None
        self._lock = threading.Lock()

    @property
    def log(self) -> Path:
        return self.run_dir / "storm.log"

    def start(self, timeout: float = 90.0) -> StormCluster:
        classes = compile_java(SOURCE, PROFILE)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        config = self.run_dir / "log4j2.xml"
        config.write_text(LOG4J2.format(log=self.log))
        # LocalCluster's Nimbus, supervisors and storm.home are folders under java.io.tmpdir (TmpPath):
        # under the run's folder, so a killed run leaves nothing in /tmp
        (self.run_dir / "tmp").mkdir(exist_ok=True)
        host, port = self.zk_connect.split(",")[0].rsplit(":", 1)
        self.daemon = Daemon(
            f"storm-{VERSION}",
            jvm(
                classpath(classes, jars(PROFILE)),
                "StormTruth",
                [host, port, self.root, str(METRICS_SECS), str(free_port())],
                heap="640m",
                options=[f"-Dlog4j.configurationFile={config}", f"-Djava.io.tmpdir={self.run_dir / 'tmp'}"],
            ),
            log=self.run_dir / "stderr.log",
            pipes=True,
            tail=self.log,
            cwd=self.run_dir,
        ).start()
        try:
            self.ask("truth", timeout=timeout)  # answers once LocalCluster is up and Nimbus leads
        except BaseException:
            self.stop()
            raise
        return self

    def ask(self, *command: Any, timeout: float = 60.0) -> Any:
        """One command, its answer's value; ``StormFailed`` when Storm threw, ``DaemonFailed`` when the JVM
        exited or did not answer within ``timeout``."""
        daemon = self.daemon
        process = daemon.process if daemon else None
        if daemon is None or process is None or process.stdin is None or process.stdout is None:
            raise DaemonFailed("the Storm JVM is not running")
        with self._lock:
            process.stdin.write(json.dumps(list(command)).encode() + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], timeout)
            line = process.stdout.readline() if ready else b""
        if not line:
            state = f"exited ({process.poll()})" if process.poll() is not None else f"silent for {timeout:g}s"
            raise DaemonFailed(f"the Storm JVM {state} on {command[0]}:\n{daemon.log_tail()}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise StormFailed(f"{command[0]}: {answer['error']}")
        return answer["value"]

    # Storm's own API ----------------------------------------------------------------------------------

    def truth(self) -> dict[str, Any]:
        return self.ask("truth")  # type: ignore[no-any-return]

    def submit(self, name: str = TOPOLOGY, workers: int = 2) -> None:
        self.ask("submit", name, workers)

    def rebalance(self, name: str, wait_secs: int, workers: int, component: str, executors: int) -> None:
        self.ask("rebalance", name, wait_secs, workers, component, executors)

    def deactivate(self, name: str) -> None:
        self.ask("deactivate", name)

    def activate(self, name: str) -> None:
        self.ask("activate", name)

    def kill(self, name: str, wait_secs: int) -> None:
        self.ask("kill", name, wait_secs)

    def kill_supervisor(self, supervisor_id: str) -> None:
        self.ask("kill_supervisor", supervisor_id, timeout=90)

    def wait(self, what: str, check: Callable[[dict[str, Any]], Any], timeout: float = 60.0) -> dict[str, Any]:
        """Storm's answer once ``check(answer)`` holds (polled), or ``DaemonFailed`` naming ``what``."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.truth()
            if check(answer):
                return answer
            if time.monotonic() > deadline:
                raise DaemonFailed(f"Storm: not {what} within {timeout:g}s:\n{self.log_tail()}")
            time.sleep(0.3)

    def stop(self) -> None:
        """Closing stdin ends the command loop: LocalCluster.close() (supervisors, workers, Nimbus, each
        closing its ZooKeeper session, so the ephemeral znodes go at once); SIGTERM, then SIGKILL, after."""
        if self.daemon is None:
            return
        process = self.daemon.process
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(Exception):
                process.wait(timeout=20)
        self.daemon.stop(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        return self.daemon.log_tail(lines) if self.daemon else ""


# what Storm's answer says, in the shapes the scenario waits on ---------------------------------------------


def topology(answer: dict[str, Any], name: str = TOPOLOGY) -> tuple[str, dict[str, Any]] | None:
    """(id, getTopologyInfo and pages) of the topology called ``name``, or None."""
    for summary in answer["cluster"].get("topologies", []):
        if summary["name"] == name:
            return summary["id"], answer["topologies"].get(summary["id"], {})
    return None


def summary(answer: dict[str, Any], name: str = TOPOLOGY) -> dict[str, Any] | None:
    return next((t for t in answer["cluster"].get("topologies", []) if t["name"] == name), None)


def beating(answer: dict[str, Any], name: str = TOPOLOGY, *, counting: bool = True) -> bool:
    """Every executor of ``name`` in getTopologyInfo with stats (its worker's executor heartbeat reached
    ZooKeeper since it was assigned) and, with ``counting``, the spouts' figures counting (an INACTIVE
    topology's spouts emit nothing). Not every executor must count: a shuffle grouping is locality-aware
    in 2.x (``LoadAwareShuffleGrouping``), so a bolt executor with no spout in its worker may see no tuple
    at all."""
    found = topology(answer, name)
    if not found or "info" not in found[1]:
        return False
    executors = found[1]["info"].get("executors", [])
    spouts = [e for e in executors if "spout" in e.get("stats", {}).get("specific", {})]
    counted = not counting or any(_counted(e["stats"]) for e in spouts)
    return bool(executors) and all("stats" in e for e in executors) and counted


def _counted(stats: dict[str, Any]) -> bool:
    return any(v > 0 for v in stats.get("emitted", {}).get(":all-time", {}).values())


def slots(answer: dict[str, Any], name: str = TOPOLOGY) -> set[tuple[str, int]]:
    """The (supervisor id, port) of every worker of ``name`` (getTopologyPageInfo's workers)."""
    found = topology(answer, name)
    if not found or "pages" not in found[1]:
        return set()
    return {(w["supervisor_id"], w["port"]) for w in found[1]["pages"]["600"].get("workers", [])}
