"""Start and stop a throwaway local ZooKeeper server (for the sandbox, the tests and the benchmarks).

The server is a one-member quorum (``QuorumPeerMain``) rather than a standalone server, with local
sessions enabled: then a client that only reads leaves the server's zxid untouched, which is how the
tests prove that zkstorm never writes (a standalone server logs every session create/close as a txn).
The jars are the ZooKeeper 3.9 ones that pyspark ships, or the classpath in ``ZKSTORM_ZK_CLASSPATH``.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

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


def zookeeper_classpath() -> str:
    """``ZKSTORM_ZK_CLASSPATH``, else the ZooKeeper jars inside the installed pyspark."""
    explicit = os.environ.get("ZKSTORM_ZK_CLASSPATH")
    if explicit:
        return explicit
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "no ZooKeeper jars: install the 'spark' extra (pyspark ships them) or set ZKSTORM_ZK_CLASSPATH"
        )
    jars_dir = Path(next(iter(spec.submodule_search_locations))) / "jars"
    jars = [j for pattern in _JAR_PATTERNS for j in sorted(glob.glob(str(jars_dir / pattern)))]
    if not any(Path(j).name.startswith("zookeeper-jute") for j in jars):
        raise ServerError(f"no ZooKeeper jars in {jars_dir}; set ZKSTORM_ZK_CLASSPATH")
    return os.pathsep.join(jars)


def java_executable() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ServerError("java not found: install a JRE (17+) or set JAVA_HOME")
    return java


def free_port() -> int:
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

    ``detach=True`` starts it in its own session so it outlives this process (the sandbox).
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
    ):
        self._own_dir = data_dir is None
        self.extra_config = extra_config or {}
        self.jvm_options = jvm_options or []
        self.heap = heap
        self.base = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="zkstorm-zk-"))
        self.port = port or free_port()
        self.detach = detach
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
        (data / "myid").write_text("1\n")
        quorum, election = free_port(), free_port()
        config = self.base / "zoo.cfg"
        config.write_text(
            "\n".join(
                [
                    "tickTime=2000",
                    "initLimit=10",
                    "syncLimit=5",
                    f"dataDir={data}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    f"server.1=127.0.0.1:{quorum}:{election}",
                    "standaloneEnabled=false",
                    "reconfigEnabled=false",
                    "localSessionsEnabled=true",
                    "localSessionsUpgradingEnabled=true",
                    "4lw.commands.whitelist=srvr,mntr,ruok,stat,cons",
                    "admin.enableServer=false",
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
        config = self._write_config()
        # The serial collector suits a small throwaway server, unless the options choose a collector
        # (a benchmark timing the server's own loader runs it with the JVM's default, G1).
        chosen = any(o.startswith("-XX:+Use") and o.endswith("GC") for o in self.jvm_options)
        command = [
            java_executable(),
            f"-Xmx{self.heap}",
            *([] if chosen else ["-XX:+UseSerialGC"]),
            f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
            "-Dzookeeper.admin.enableServer=false",
            "-Djute.maxbuffer=4194304",
            *self.jvm_options,
            "-cp",
            zookeeper_classpath(),
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(config),
        ]
        out = open(self.base / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        self.process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=self.detach
        )
        out.close()
        self.pid = self.process.pid
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"ZooKeeper exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if "Mode: leader" in four_letter_word(self.port, "srvr", timeout=1.0):
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise ServerError(f"ZooKeeper did not start within {timeout:g}s:\n{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._own_dir:
            shutil.rmtree(self.base, ignore_errors=True)

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
