"""Real JVM daemons for the tests, any system: jars, processes, readiness, cleanup.

- **Jars.** ``jars(profile)`` is the classpath of one profile of ``tests/real/pom.xml`` (``kafka-3.9.2``),
  copied by ``make jars`` into ``.cache/jars/<profile>/`` (``ZKSTORM_JARS_DIR``) once; its ``.complete``
  stamp makes every later run offline. A missing folder is fetched through the same ``make jars``.
- **Daemons.** ``Daemon`` starts one command with its output in a log file under the run's folder, in a
  process group of its own, with ``PR_SET_PDEATHSIG`` set to SIGKILL: when the test run dies, even by
  ``kill -9``, the kernel kills the daemon. Each daemon also leaves a pid file in ``.cache/real-pids``
  naming a token of its command line; ``sweep()`` (at the start of a run) kills what a dead run left and
  only that (the token is checked in ``/proc/<pid>/cmdline``, so a reused pid is never touched).
  ``wait_ready`` polls the daemon's own readiness check and fails at once, with its log's tail, when
  the process exits.
- **Java sources** (``compile_java``): compiled once per source and classpath into the cache.

A prerequisite missing (Java 17+, a JDK's ``javac``, Maven for the first fetch) is ``Missing``: one line
naming what to install.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from zkstorm.sandbox.server import terminate

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
JARS_DIR = Path(os.environ.get("ZKSTORM_JARS_DIR") or CACHE / "jars")
CLASSES_DIR = CACHE / "classes"
PIDS_DIR = CACHE / "real-pids"
TOKEN_PROPERTY = "zkstorm.real.daemon"  # -Dzkstorm.real.daemon=<token> on every JVM this module starts


class Missing(Exception):
    """A prerequisite of the real-cluster tests is not installed: the message names what to install."""


class DaemonFailed(Exception):
    """A daemon exited or did not become ready: the message ends with its log's tail."""


# --- prerequisites --------------------------------------------------------------------------------------


def java() -> str:
    """The ``java`` of ``JAVA_HOME`` or the PATH, version 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    path = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not path or not Path(path).exists():
        raise Missing("Java 17+ is needed for the real-cluster tests: apt-get install openjdk-17-jdk-headless")
    out = subprocess.run([path, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < 17:
        raise Missing(f"Java 17+ is needed for the real-cluster tests, found {out.splitlines()[:1]}")
    return path


def javac() -> str:
    path = str(Path(java()).with_name("javac"))
    if not Path(path).exists():
        path = shutil.which("javac") or ""
    if not path:
        raise Missing("a JDK's javac is needed for the real-cluster tests: apt-get install openjdk-17-jdk-headless")
    return path


def jars(profile: str) -> list[Path]:
    """The jars of ``profile``, fetched first (``make jars``) when its folder is not complete."""
    folder = JARS_DIR / profile
    if not (folder / ".complete").exists():
        if not shutil.which("mvn"):
            raise Missing(f"Maven is needed once to fetch the {profile} jars: apt-get install maven (then make jars)")
        result = subprocess.run(
            ["make", "--no-print-directory", "-C", str(REPO), "jars", f"JARS_DIR={JARS_DIR}"],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0 or not (folder / ".complete").exists():
            raise Missing(f"make jars could not fetch {profile}: {(result.stderr or result.stdout).strip()[-800:]}")
    found = sorted(folder.glob("*.jar"))
    if not found:
        raise Missing(f"{folder} holds no jars: remove it and run make jars")
    return found


def classpath(*parts: Path | Sequence[Path]) -> str:
    flat: list[str] = []
    for part in parts:
        flat += [str(p) for p in part] if isinstance(part, list | tuple) else [str(part)]
    return os.pathsep.join(flat)


def compile_java(source: Path, profile: str) -> Path:
    """``source`` compiled against ``profile``'s jars, once: the classes folder (cached by the source's and
    the jars' names' hash)."""
    found = jars(profile)
    digest = hashlib.sha256(source.read_bytes() + "\n".join(p.name for p in found).encode()).hexdigest()[:12]
    out = CLASSES_DIR / f"{source.stem}-{profile}-{digest}"
    if (out / ".complete").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    building = out.with_name(out.name + f".{os.getpid()}")
    building.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [javac(), "-nowarn", "-encoding", "UTF-8", "-d", str(building), "-cp", classpath(found), str(source)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise DaemonFailed(f"javac {source.name} against {profile} failed:\n{result.stderr[-3000:]}")
    (building / ".complete").touch()
    with contextlib.suppress(OSError):
        building.rename(out)
    return out if out.exists() else building


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


# --- daemons ---------------------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> Callable[[], None]:
    """In the child, before exec: SIGKILL when the parent dies (kept across exec), and exit at once if it
    already has (the fork raced its death)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def setup() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return setup


def _started(pid: int) -> str | None:
    """When ``pid`` started (``/proc/<pid>/stat``'s start time, in clock ticks since boot): with the pid, it
    names one process, whatever reused the pid since; None when no such process runs."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def sweep() -> list[int]:
    """Kill what a test run that died left running (its pid files), and only that: the pids killed. A
    daemon whose run is alive (another session's, on the same checkout) is left alone; one whose pid now
    names another process (its token not on the command line) is not touched."""
    killed = []
    PIDS_DIR.mkdir(parents=True, exist_ok=True)
    for file in PIDS_DIR.glob("*.json"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            entry = json.loads(file.read_text())
            if _started(entry["owner"]) == entry["owner_started"]:
                continue  # its run is alive: its own finalizers stop it
            cmdline = Path(f"/proc/{entry['pid']}/cmdline").read_bytes()
            if entry["token"].encode() in cmdline:
                os.kill(entry["pid"], signal.SIGKILL)
                killed.append(entry["pid"])
        file.unlink(missing_ok=True)
    return killed


class Daemon:
    """One long-running process of a test run: ``argv`` started with its output in ``log`` (or piped, for
    a daemon spoken to on stdin and stdout), dying with this process, stopped by pid."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log: Path,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        pipes: bool = False,
        tail: Path | None = None,
    ) -> None:
        self.name = name
        self.token = f"{name}-{uuid.uuid4().hex[:12]}"
        self.argv = [a.replace("{token}", self.token) for a in argv]
        self.log = log
        self.cwd = cwd
        self.env = env
        self.pipes = pipes
        self.tail = tail  # the log whose tail a failure shows, when not ``log`` (a daemon's own log file)
        self.process: subprocess.Popen[bytes] | None = None
        self._pid_file = PIDS_DIR / f"{self.token}.json"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> Daemon:
        if self.token not in " ".join(self.argv):
            raise ValueError(f"{self.name}: the command line must carry its token ({{token}}) for the sweep")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        PIDS_DIR.mkdir(parents=True, exist_ok=True)
        out: IO[bytes] = open(self.log, "ab")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE if self.pipes else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.pipes else out,
                stderr=out,
                cwd=self.cwd,
                env={**os.environ, **(self.env or {})},
                start_new_session=True,  # its own process group: a Ctrl-C of the run reaches the run only
                preexec_fn=_die_with_parent(os.getpid()),
            )
        finally:
            out.close()
        owner = os.getpid()
        self._pid_file.write_text(
            json.dumps(
                {
                    "pid": self.process.pid,
                    "token": self.token,
                    "name": self.name,
                    "owner": owner,
                    "owner_started": _started(owner),
                }
            )
        )
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_ready(self, ready: Callable[[], Any], timeout: float, what: str) -> Any:
        """Poll ``ready`` until it returns something true, and return it; ``DaemonFailed`` with the log's
        tail when the process exits first or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.running:
                raise DaemonFailed(f"{self.name} exited ({self.exit_code()}) before {what}:\n{self.log_tail()}")
            answer = ready()
            if answer:
                return answer
            if time.monotonic() > deadline:
                raise DaemonFailed(f"{self.name}: not {what} within {timeout:g}s:\n{self.log_tail()}")
            time.sleep(0.1)

    def exit_code(self) -> int | None:
        return self.process.poll() if self.process else None

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (the daemon's own clean shutdown), SIGKILL after ``timeout``."""
        if self.process is not None:
            terminate(self.process, timeout)
        self._forget()

    def kill(self) -> None:
        """``kill -9``: no shutdown at all, as a crash or the OOM killer would leave it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._forget()

    def _forget(self) -> None:
        if self.process is not None and self.process.stdin:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        if self.process is not None and self.process.stdout:
            with contextlib.suppress(OSError):
                self.process.stdout.close()
        self._pid_file.unlink(missing_ok=True)

    def log_tail(self, lines: int = 40) -> str:
        texts = []
        for log in dict.fromkeys(p for p in (self.log, self.tail) if p is not None):
            try:
                texts.append(f"--- {log}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:]))
            except OSError:
                texts.append(f"--- {log}: none")
        return "\n".join(texts)


def jvm(
    classes: str,
    main: str,
    args: Sequence[str] = (),
    *,
    heap: str = "384m",
    options: Sequence[str] = (),
) -> list[str]:
    """A JVM command line for a small test daemon: the serial collector and the client compiler (a faster
    start and less CPU on a shared 2-core machine), and the token the sweep recognises it by."""
    return [
        java(),
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        f"-D{TOKEN_PROPERTY}={{token}}",
        *options,
        "-cp",
        classes,
        main,
        *args,
    ]


LOG4J1 = """\
log4j.rootLogger={level}, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={log}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


def log4j1(folder: Path, log: Path, level: str = "INFO") -> Path:
    """A log4j 1.x (reload4j) configuration writing ``log`` at ``level``: the ``-Dlog4j.configuration`` of a
    daemon whose jars log through it (Kafka through 3.9, Storm 1.x)."""
    path = folder / "log4j.properties"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(LOG4J1.format(level=level, log=log))
    return path
