"""The sandbox: a throwaway local ZooKeeper seeded with synthetic Storm and Kafka clusters.

This is the only code in zkstorm that writes to ZooKeeper, and it only writes to a server it started
itself (the port and pid it recorded in its state file). Ephemeral nodes (supervisors, brokers, the
controller, errors) are created by a seeding session with a ten-day timeout that is left open when the
process exits, so they stay alive with a real owner, as a running daemon's would.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ServerError
from .server import ZkServer, four_letter_word
from .synth import SeedNode, cluster

SEED_SESSION_MS = 10 * 86400 * 1000
_BATCH = 1000  # creates per multi-op transaction
_IN_FLIGHT = 8
# Seeding sessions kept open (their ephemeral nodes stay) by this process, per connect string: a sandbox
# stopped from the same process (tests, benchmarks) closes them first, so they do not retry a server
# that is gone for the rest of the process.
_KEPT_SESSIONS: dict[str, list[Any]] = {}


def default_state_dir() -> Path:
    explicit = os.environ.get("ZKSTORM_SANDBOX_DIR")
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "zkstorm" / "sandbox"


@dataclass
class SeedCounts:
    znodes: int
    seconds: float


def seed(connect_string: str, nodes: Iterable[SeedNode], *, keep_session: bool = True) -> SeedCounts:
    """Create ``nodes`` (parents first) through multi-op transactions with several in flight.

    With ``keep_session`` the session is not closed, so its ephemeral nodes outlive this process
    until the session times out (ten days, or until the server stops).
    """
    from kazoo.client import KazooClient

    started = time.monotonic()
    client = KazooClient(connect_string, timeout=SEED_SESSION_MS / 1000)
    client.start(timeout=30)
    count = 0
    pending: list[Any] = []
    batch = client.transaction()
    size = 0
    for node in nodes:
        batch.create(node.path, node.data, ephemeral=node.ephemeral, sequence=node.sequential)
        size += 1
        count += 1
        if size == _BATCH:
            pending.append(batch.commit_async())
            batch, size = client.transaction(), 0
            if len(pending) >= _IN_FLIGHT:
                _check(pending.pop(0).get(timeout=60))
    if size:
        pending.append(batch.commit_async())
    for result in pending:
        _check(result.get(timeout=60))
    if keep_session:
        _KEPT_SESSIONS.setdefault(connect_string, []).append(client)
    else:
        client.stop()
        client.close()
    return SeedCounts(count, time.monotonic() - started)


@dataclass
class Rewritten:
    """What a busy cluster keeps rewriting, as a seeded sandbox holds it: every worker heartbeat and
    supervisor registration (path, bytes), and every Kafka partition state (path → its JSON), for a
    writer that replays a busy stretch (the ``changes`` tests and benchmark)."""

    beats: list[tuple[str, bytes]]
    supervisors: list[tuple[str, bytes]]
    states: dict[str, Any]


def rewritten(client: Any, storm: str = "/storm", kafka: str = "/kafka") -> Rewritten:
    """Read what a busy cluster rewrites from a seeded sandbox through ``client`` (a writable kazoo client
    of the test or benchmark: the sandbox is its own)."""
    beats = [
        (f"{storm}/workerbeats/{t}/{w}", client.get(f"{storm}/workerbeats/{t}/{w}")[0])
        for t in client.get_children(f"{storm}/workerbeats")
        for w in client.get_children(f"{storm}/workerbeats/{t}")
    ]
    supervisors = [
        (f"{storm}/supervisors/{s}", client.get(f"{storm}/supervisors/{s}")[0])
        for s in client.get_children(f"{storm}/supervisors")
    ]
    states = {}
    for topic in client.get_children(f"{kafka}/brokers/topics"):
        for partition in client.get_children(f"{kafka}/brokers/topics/{topic}/partitions"):
            path = f"{kafka}/brokers/topics/{topic}/partitions/{partition}/state"
            states[path] = json.loads(client.get(path)[0])
    return Rewritten(beats, supervisors, states)


def _check(results: list[Any]) -> None:
    for result in results:
        if isinstance(result, Exception):
            raise ServerError(f"seeding failed: {result!r}")


def _exited(pid: int) -> bool:
    """Whether process ``pid`` has exited. A server this process started (a sandbox started and stopped by
    one process: a test, a benchmark) is its child, a zombie that ``kill(pid, 0)`` still finds until it
    is reaped: reaped here. Another process's server is its parent's to reap."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass  # not this process's child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Sandbox:
    """A sandbox server living in ``state_dir`` (its data, log, and ``state.json`` with pid and port)."""

    def __init__(self, state_dir: str | Path | None = None) -> None:
        self.dir = Path(state_dir) if state_dir else default_state_dir()
        self._state_file = self.dir / "state.json"

    def _state(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self._state_file.read_text()))
        except (OSError, ValueError):
            return None

    @property
    def connect_string(self) -> str:
        state = self._state()
        if not state:
            raise ServerError("no sandbox state")
        return f"127.0.0.1:{state['port']}"

    def running(self) -> bool:
        state = self._state()
        if not state:
            return False
        try:
            os.kill(state["pid"], 0)
            return four_letter_word(state["port"], "ruok", timeout=1.0).startswith("imok")
        except OSError:
            return False

    def start(self, port: int | None = None) -> bool:
        """Start the server; False if one was already running here (it is left as it is)."""
        if self.running():
            return False
        self.stop()  # clear a stale state dir left by a killed sandbox
        self.dir.mkdir(parents=True, exist_ok=True)
        # A sandbox scaled for benchmarks holds hundreds of thousands of znodes: give it room.
        heap = os.environ.get("ZKSTORM_SANDBOX_HEAP", "2g")
        server = ZkServer(
            self.dir, port=port, detach=True, extra_config={"maxSessionTimeout": str(SEED_SESSION_MS)}, heap=heap
        )
        server.start()
        self._state_file.write_text(json.dumps({"pid": server.pid, "port": server.port, "started": time.time()}))
        return True

    def seed(self, *, scale: int = 1, now: int | None = None) -> SeedCounts:
        if not self.running():
            raise ServerError("the sandbox is not running")
        return seed(self.connect_string, cluster(scale=scale, now=int(now or time.time())))

    def stop(self) -> bool:
        state = self._state()
        was_running = False
        if state:
            for client in _KEPT_SESSIONS.pop(self.connect_string, []):
                client.stop()
                client.close()
            try:
                os.kill(state["pid"], signal.SIGTERM)
                was_running = True
                deadline = time.monotonic() + 10
                while not _exited(state["pid"]):
                    if time.monotonic() >= deadline:
                        os.kill(state["pid"], signal.SIGKILL)
                        break
                    time.sleep(0.1)
            except OSError:
                pass  # gone
        if self.dir.exists():
            shutil.rmtree(self.dir, ignore_errors=True)
        return was_running
