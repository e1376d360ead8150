"""Pass 1's helper processes (``zkstorm/changes/forked.py``) attacked as a user's machine attacks them: a
helper killed with ``kill -9``, the command killed with ``kill -9`` or stopped with SIGTERM while its
helpers read, and a read from inside a ``multiprocessing`` pool's worker. Each runs the real command or
reader in a process of its own (so a hang is a timeout here, not a hung suite), on the fixture data
directory zk395-plain (six logs), with the helpers forced on whatever the logs' size."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.fixtures import FIXTURES
from zkstorm.errors import ExitCode

DATA = FIXTURES / "zkfiles" / "zk395-plain"
ROOT = Path(__file__).resolve().parent.parent

# The CLI with pass 1's helpers forced on (``_parallel``: whatever the logs' size), each helper running
# ``HELPER`` (the environment's Python statement, with ``job`` and ``Path`` at hand) before reading its log.
_COMMAND = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    from zkstorm.changes import reader
    from zkstorm.cli import cli

    parent, scan = os.getpid(), reader._scan_log

    def helper_scan(job):
        if os.getpid() != parent:
            exec(os.environ.get("HELPER", ""))
        return scan(job)

    reader._parallel = lambda logs: 2
    reader._scan_log = helper_scan
    cli(sys.argv[1:], prog_name="zkstorm")
    """
)


def _command(helper: str = "", **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "HELPER": helper, "NO_COLOR": "1", "COLUMNS": "200"}
    args = [sys.executable, "-c", _COMMAND, "--from-files", str(DATA), "changes", "-f", "jsonl"]
    return subprocess.Popen(args, env=env, cwd=ROOT, text=True, **kwargs)  # type: ignore[call-overload]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead and not reaped yet by whoever adopted it, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _helpers_started(pids: Path, count: int) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [int(p.name) for p in pids.iterdir()]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{count} helpers did not start: {list(pids.iterdir())}")


def _gone(pids: list[int], within: float = 10.0) -> list[int]:
    """Those of ``pids`` still running after ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and [p for p in pids if _alive(p)]:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def test_a_helper_killed_is_read_in_the_command() -> None:
    """A helper killed with ``kill -9`` (or by the OOM killer) mid-read: its log is read again in the
    command, the output is the one without helpers byte for byte, one warning on stderr, exit 0 (with a
    ``multiprocessing.Pool`` the lost task was waited for forever)."""
    alone = subprocess.run(
        [sys.executable, "-m", "zkstorm", "--from-files", str(DATA), "changes", "-f", "jsonl"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    kill = "if job.path.endswith(sorted(Path(job.path).parent.glob('log.*'))[1].name): os.kill(os.getpid(), 9)"
    command = _command(kill, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = command.communicate(timeout=120)
    finally:
        command.kill()
    assert command.returncode == 0, err
    assert out == alone.stdout and out
    assert err.splitlines() == ["zkstorm: warning: a helper of pass 1 ended without its result: its log is read here"]


def test_helpers_die_with_the_command_killed(tmp_path: Path) -> None:
    """``kill -9`` of the command while its helpers read: no helper goes on reading (PR_SET_PDEATHSIG)."""
    pids = tmp_path / "pids"
    pids.mkdir()
    slow = f"Path({str(pids)!r}, str(os.getpid())).touch(); time.sleep(120)"
    command = _command(slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        helpers = _helpers_started(pids, 2)
        command.send_signal(signal.SIGKILL)
        command.wait(timeout=30)
        assert not _gone(helpers), "helpers outlived the command"
    finally:
        command.kill()


def test_sigterm_ends_the_command_and_its_helpers(tmp_path: Path) -> None:
    """SIGTERM while the helpers read: the command stops as documented (143, one line) and ends them."""
    pids = tmp_path / "pids"
    pids.mkdir()
    slow = f"Path({str(pids)!r}, str(os.getpid())).touch(); time.sleep(120)"
    command = _command(slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        helpers = _helpers_started(pids, 2)
        command.send_signal(signal.SIGTERM)
        out, err = command.communicate(timeout=30)
        assert command.returncode == ExitCode.TERMINATED and out == ""
        assert err.splitlines() == ["zkstorm: interrupted by SIGTERM"]
        assert not _gone(helpers, within=5.0)
    finally:
        command.kill()


def _read_in_a_worker(path: str) -> tuple[int, int, int]:
    from zkstorm.changes.reader import ChangeReader

    reader = ChangeReader([path], workers=2)
    reader.open()
    return reader.helped, reader.stats.txns_scanned, len(reader.states)


def test_a_read_inside_a_pool_worker_reads_the_logs_itself() -> None:
    """A library caller's ``multiprocessing`` pool worker is daemonic, and a daemonic process may start
    no process: there the logs are read one by one, the same (no ``AssertionError``)."""
    helped, scanned, states = _read_in_a_worker(str(DATA))  # here: helpers (this process is no daemon)
    assert helped == 6
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_read_in_a_worker, (str(DATA),)) == (0, scanned, states)
