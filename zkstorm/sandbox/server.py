"""Start and stop throwaway local ZooKeeper servers (for the sandbox, the tests and the benchmarks).

The server is a one-member quorum (``QuorumPeerMain``) rather than a standalone server, with local
sessions enabled: then a client that only reads leaves the server's zxid untouched, which is how the
tests prove that zkstorm never writes (a standalone server logs every session create/close as a txn).
``ZkEnsemble`` starts several such servers as one ensemble on loopback (``server.N`` lines and a
``myid`` each), for the tests of ``zkstorm zk``: members are real processes, stopped for real.
The jars are the ZooKeeper 3.9 ones that pyspark ships, or the classpath in ``ZKSTORM_ZK_CLASSPATH``;
a member with the AdminServer needs Jetty 9.4 besides (``jetty_classpath``).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import ServerError

_JAR_PATTERNS = (
    "zookeeper-[0-9]*.jar",
    "zookeeper-jute-*.jar",
    "slf4j-api-*.jar",
    "log4j-slf4j2-impl-*.jar",
    "log4j-api-2*.jar",
    "log4j-core-2*.jar",
    "audience-annotations-*.jar",
    "commons-io-*.jar",
    "metrics-core-*.jar",
    "netty-*.jar",
    "snappy-java-*.jar",
)

_LOG4J2 = """\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{ISO8601}} %p %c{{1}}: %m%n
"""


# What ZooKeeper's AdminServer adds to them: it writes its answers with Jackson (pyspark ships it too).
_ADMIN_JAR_PATTERNS = ("jackson-core-2*.jar", "jackson-databind-2*.jar", "jackson-annotations-2*.jar")


def zookeeper_classpath(*, admin_server: bool = False) -> str:
    """``ZKSTORM_ZK_CLASSPATH``, else the ZooKeeper jars inside the installed pyspark (with ``admin_server``,
    Jackson from there and Jetty from ``jetty_classpath`` too)."""
    explicit = os.environ.get("ZKSTORM_ZK_CLASSPATH")
    if explicit:
        return explicit + (os.pathsep + jetty_classpath() if admin_server else "")
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "no ZooKeeper jars: install the 'spark' extra (pyspark ships them) or set ZKSTORM_ZK_CLASSPATH"
        )
    jars_dir = Path(next(iter(spec.submodule_search_locations))) / "jars"
    patterns = _JAR_PATTERNS + (_ADMIN_JAR_PATTERNS if admin_server else ())
    jars = [j for pattern in patterns for j in sorted(glob.glob(str(jars_dir / pattern)))]
    if not any(Path(j).name.startswith("zookeeper-jute") for j in jars):
        raise ServerError(f"no ZooKeeper jars in {jars_dir}; set ZKSTORM_ZK_CLASSPATH")
    return os.pathsep.join(jars) + (os.pathsep + jetty_classpath() if admin_server else "")


# The Jetty 9.4 jars ZooKeeper's AdminServer (JettyAdminServer) loads: pyspark ships only a shaded copy
# of Jetty, so a server with the AdminServer takes Debian's (libjetty9-java, libservlet-api-java).
_JETTY_JARS = (
    "jetty9-server.jar",
    "jetty9-servlet.jar",
    "jetty9-security.jar",
    "jetty9-http.jar",
    "jetty9-io.jar",
    "jetty9-util.jar",
    "jetty9-util-ajax.jar",
    "servlet-api.jar",
)


def jetty_classpath() -> str:
    """``ZKSTORM_JETTY_CLASSPATH``, else Debian's Jetty 9.4 jars in /usr/share/java (what the AdminServer
    needs); a ``ServerError`` naming the packages when they are missing."""
    explicit = os.environ.get("ZKSTORM_JETTY_CLASSPATH")
    if explicit:
        return explicit
    jars = [Path("/usr/share/java") / name for name in _JETTY_JARS]
    missing = [str(j) for j in jars if not j.exists()]
    if missing:
        raise ServerError(
            f"no Jetty for ZooKeeper's AdminServer ({', '.join(missing)}): apt-get install libjetty9-java "
            "libservlet-api-java, or set ZKSTORM_JETTY_CLASSPATH"
        )
    return os.pathsep.join(str(j) for j in jars)


def java_executable() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ServerError("java not found: install a JRE (17+) or set JAVA_HOME")
    return java


# Ports are taken below the kernel's ephemeral range (``ip_local_port_range``, 32768-60999 by default): a port
# the kernel picked and let go is the next one any outgoing connection on the machine may be given as its own
# end, and a server started on it a moment later fails with "Address already in use" (ZooKeeper's quorum
# port did, once, while a Kafka and a Storm cluster ran beside it). Below that range only a server binds.
LOWEST_PORT = 10000
_handed_out: set[int] = set()
_ports_lock = threading.Lock()
_next_port: list[int] = []  # where this process's walk is: it starts at random, once


def _ephemeral_ports() -> tuple[int, int]:
    try:
        low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default; elsewhere only a guess, and the bind below still checks


def free_port() -> int:
    """A loopback port nothing listens on now, below the ephemeral range and never handed out before in
    this process (two servers asked for ports before either starts get two). Each process walks up from a
    random start of its own, so two processes (the suite's workers) seldom hand out the same port at
    once; the kernel's own choice if that range is full."""
    low, _ = _ephemeral_ports()
    span = low - LOWEST_PORT
    if span > 0:
        with _ports_lock:
            if not _next_port:
                _next_port.append(random.randrange(span))
            for _ in range(span):
                port = LOWEST_PORT + _next_port[0] % span
                _next_port[0] += 1
                if port in _handed_out:
                    continue
                with socket.socket() as s:
                    try:
                        s.bind(("127.0.0.1", port))
                    except OSError:
                        continue
                _handed_out.add(port)
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def four_letter_word(port: int, word: str, timeout: float = 2.0) -> str:
    """Send a four-letter word (``srvr``, ``mntr``, ``ruok``) and return the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(word.encode())
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


class ZkServer:
    """One local ZooKeeper server on free loopback ports with its own data dir.

    ``detach=True`` starts it in its own session so it outlives this process (the sandbox). Alone it is a
    one-member quorum; as a member of a ``ZkEnsemble`` it has the ensemble's ``server.N`` lines
    (``servers``) and its own ``server_id``. ``admin_port`` starts ZooKeeper's AdminServer on that port
    (Jetty from ``jetty_classpath``); it is off otherwise.
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        port: int | None = None,
        detach: bool = False,
        extra_config: dict[str, str] | None = None,
        jvm_options: list[str] | None = None,
        heap: str = "512m",
        server_id: int = 1,
        servers: list[str] | None = None,
        admin_port: int | None = None,
        tick_ms: int = 2000,
    ):
        self._own_dir = data_dir is None
        self.extra_config = extra_config or {}
        self.jvm_options = jvm_options or []
        self.heap = heap
        self.base = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="zkstorm-zk-"))
        self.port = port or free_port()
        self.detach = detach
        self.server_id = server_id
        self.servers = servers
        self.admin_port = admin_port
        self.tick_ms = tick_ms
        self.process: subprocess.Popen[bytes] | None = None
        self.pid: int | None = None

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.base / "zookeeper.log"

    def _write_config(self) -> Path:
        data = self.base / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "myid").write_text(f"{self.server_id}\n")
        servers = self.servers or [f"server.{self.server_id}=127.0.0.1:{free_port()}:{free_port()}"]
        admin = (
            ["admin.enableServer=true", f"admin.serverPort={self.admin_port}", "admin.serverAddress=127.0.0.1"]
            if self.admin_port
            else ["admin.enableServer=false"]
        )
        config = self.base / "zoo.cfg"
        config.write_text(
            "\n".join(
                [
                    f"tickTime={self.tick_ms}",
                    "initLimit=10",
                    "syncLimit=5",
                    f"dataDir={data}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    *servers,
                    "standaloneEnabled=false",
                    "reconfigEnabled=false",
                    "localSessionsEnabled=true",
                    "localSessionsUpgradingEnabled=true",
                    "4lw.commands.whitelist=srvr,mntr,ruok,stat,cons",
                    *admin,
                    "forceSync=no",
                    "maxClientCnxns=0",
                    "jute.maxbuffer=4194304",
                    *(f"{k}={v}" for k, v in self.extra_config.items()),
                    "",
                ]
            )
        )
        (self.base / "log4j2.properties").write_text(_LOG4J2.format(log=self.log_path))
        return config

    def start(self, timeout: float = 60.0) -> ZkServer:
        self.launch()
        self.wait_serving(timeout)
        return self

    def launch(self) -> None:
        """Start the server's JVM without waiting for it to serve (an ensemble starts its members together:
        none serves before a quorum of them runs)."""
        config = self._write_config()
        # The serial collector suits a small throwaway server, unless the options choose a collector
        # (a benchmark timing the server's own loader runs it with the JVM's default, G1).
        chosen = any(o.startswith("-XX:+Use") and o.endswith("GC") for o in self.jvm_options)
        classpath = zookeeper_classpath(admin_server=bool(self.admin_port))
        command = [
            java_executable(),
            f"-Xmx{self.heap}",
            *([] if chosen else ["-XX:+UseSerialGC"]),
            f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
            *([] if self.admin_port else ["-Dzookeeper.admin.enableServer=false"]),
            "-Djute.maxbuffer=4194304",
            *self.jvm_options,
            "-cp",
            classpath,
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(config),
        ]
        out = open(self.base / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        self.process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=self.detach
        )
        out.close()
        self.pid = self.process.pid

    def wait_serving(self, timeout: float = 60.0) -> None:
        """Until ``srvr`` says the server leads or follows (it serves clients); stopped on a timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = self.process.returncode if self.process is not None else None
                raise ServerError(f"ZooKeeper exited with {code}:\n{self.log_tail()}")
            if self.mode() in _SERVING_MODES:
                return
            time.sleep(0.1)
        self.stop()
        raise ServerError(f"ZooKeeper did not start within {timeout:g}s:\n{self.log_tail()}")

    def mode(self) -> str | None:
        """The ``Mode:`` line of ``srvr`` (leader, follower, observer), or None while it does not serve."""
        try:
            match = re.search(r"^Mode: (\S+)", four_letter_word(self.port, "srvr", timeout=1.0), re.M)
        except OSError:
            return None
        return match.group(1) if match else None

    def stop(self, timeout: float = 10.0, *, keep_data: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL); its data dir goes too unless it was given or ``keep_data``
        (an ensemble's member is stopped and started again on the same data)."""
        if self.process is not None:
            terminate(self.process, timeout)
        self.process = None
        if self._own_dir and not keep_data:
            shutil.rmtree(self.base, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def last_zxid(self) -> int:
        """The server's last processed zxid, from ``srvr``."""
        match = re.search(r"^Zxid: (0x[0-9a-f]+)", four_letter_word(self.port, "srvr"), re.M)
        if not match:
            raise ServerError("srvr reply has no Zxid line")
        return int(match.group(1), 16)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


_SERVING_MODES = ("leader", "follower", "observer", "standalone")


class ZkEnsemble:
    """``size`` local ZooKeeper servers as one ensemble on loopback: each with a ``myid``, its own data
        dir under ``base`` and the same ``server.N=127.0.0.1:quorum:election;127.0.0.1:client`` lines (the
        client address in them, as a 3.5+ dynamic configuration writes it, is how the members name each
        other's client ports). ``member_config`` adds settings per server id (a limited
        ``4lw.commands.whitelist``), ``admin_ports`` starts the AdminServer on some members, ``jvm_options``
    adds JVM options per member (``-Dreadonlymode.enabled=true``). A small
        ``tick_ms`` keeps elections short; ``forceSync=no`` as for one server."""

    def __init__(
        self,
        base: str | Path,
        size: int = 3,
        *,
        member_config: dict[int, dict[str, str]] | None = None,
        admin_ports: dict[int, int] | None = None,
        jvm_options: dict[int, list[str]] | None = None,
        tick_ms: int = 200,
        heap: str = "256m",
    ) -> None:
        self.base = Path(base)
        ids = range(1, size + 1)
        ports = {i: free_port() for i in ids}
        servers = [f"server.{i}=127.0.0.1:{free_port()}:{free_port()};127.0.0.1:{ports[i]}" for i in ids]
        self.members = {
            i: ZkServer(
                self.base / f"member-{i}",
                port=ports[i],
                server_id=i,
                servers=servers,
                extra_config={
                    "initLimit": "50",
                    "syncLimit": "25",
                    "maxSessionTimeout": "60000",
                    **(member_config or {}).get(i, {}),
                },
                admin_port=(admin_ports or {}).get(i),
                jvm_options=(jvm_options or {}).get(i),
                tick_ms=tick_ms,
                heap=heap,
            )
            for i in ids
        }

    @property
    def connect_string(self) -> str:
        return ",".join(m.connect_string for m in self.members.values())

    def start(self, timeout: float = 90.0) -> ZkEnsemble:
        """Start every member at once, then wait for each to serve."""
        for member in self.members.values():
            member.launch()
        try:
            self.wait_serving(list(self.members), timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_serving(self, ids: list[int], timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        for i in ids:
            self.members[i].wait_serving(max(deadline - time.monotonic(), 1.0))

    def ensure(self, running: list[int], timeout: float = 90.0) -> None:
        """Exactly the members ``running`` running, the others stopped, and those running serving (a
        member started again takes the ensemble back once it has synced with the leader)."""
        for i, member in self.members.items():
            if i not in running and member.running:
                member.stop(keep_data=True)
        for i in running:
            if not self.members[i].running:
                self.members[i].launch()
        if len(running) * 2 > len(self.members):
            self.wait_serving(running, timeout)

    def leader(self) -> int | None:
        return next((i for i, m in self.members.items() if m.running and m.mode() == "leader"), None)

    def stop(self) -> None:
        for member in self.members.values():
            member.stop(keep_data=True)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(f"--- member {i}\n{m.log_tail(lines)}" for i, m in self.members.items())


def terminate(process: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM (a JVM daemon's own clean shutdown), then SIGKILL after ``timeout``; reaped either way."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
