"""Progress on long work: a rich display on stderr when a person watches (a real pseudo-terminal),
nothing at all in a pipe or under cron. The stages of ``history`` are tested in test_history.py."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _zkstorm_with_terminal_stderr(*args: str, tty: bool) -> tuple[int, str, str]:
    """Run the CLI as a user would: stdout a pipe (``| jq``), stderr a real terminal when ``tty``;
    returns the exit code, stdout and what the terminal showed (escape sequences removed)."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "ZKSTORM_PROGRESS_DELAY": "0"}
    env.pop("NO_COLOR", None)
    if not tty:
        done = subprocess.run(
            [sys.executable, "-m", "zkstorm.cli", *args], capture_output=True, text=True, env=env, timeout=120
        )
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "zkstorm.cli", *args], stdout=subprocess.PIPE, stderr=follower, env=env
        )
        os.close(follower)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the process is done with it
                break
            if not chunk:
                break
            shown += chunk
        stdout = process.stdout.read().decode() if process.stdout else ""
        code = process.wait(timeout=120)
    finally:
        os.close(leader)
    return code, stdout, ANSI.sub("", shown.decode(errors="replace"))


@pytest.fixture
def storm2(writer: KazooClient, zk_root: Chroot) -> tuple[Chroot, int]:
    znodes = load_cluster(writer, zk_root.path, "storm", "storm2")
    return zk_root, znodes


def test_a_walk_shows_znodes_read_and_the_rate_on_a_terminal(storm2: tuple[Chroot, int]) -> None:
    chroot, _ = storm2
    code, stdout, shown = _zkstorm_with_terminal_stderr("--zk", chroot.zk, "tree", "/", "-f", "jsonl", tty=True)
    assert code == 0
    assert stdout.count("\n") > 10  # the data still went to stdout, whole
    counts = [int(n.replace(",", "")) for n in re.findall(r"reading \S+\s+([\d,]+) znodes\s+[\d,]+/s", shown)]
    assert counts, shown
    walked = stdout.count('"kind":"znode"')
    assert max(counts) == walked  # the last frame counts every znode the walk read
    assert re.search(r"\d+:\d\d", shown)  # elapsed


def test_no_progress_in_a_pipe(storm2: tuple[Chroot, int]) -> None:
    chroot, _ = storm2
    code, stdout, stderr = _zkstorm_with_terminal_stderr("--zk", chroot.zk, "tree", "/", "-f", "jsonl", tty=False)
    assert code == 0 and stdout
    assert stderr == ""


def test_a_snapshot_shows_what_it_has_read(storm2: tuple[Chroot, int], tmp_path: Path) -> None:
    chroot, _ = storm2
    code, _, shown = _zkstorm_with_terminal_stderr("--zk", chroot.zk, "snapshot", str(tmp_path / "out"), tty=True)
    assert code == 0
    assert re.search(r"reading \S+\s+[\d,]+ znodes\s+[\d,]+/s", shown), shown


def test_with_v_each_stage_says_how_long_it_took(storm2: tuple[Chroot, int], tmp_path: Path) -> None:
    """``-v`` turns the display off (the log is on stderr); the log then says what each stage took, a
    cron job's mail included (stderr is not a terminal here)."""
    chroot, _ = storm2
    code, _, stderr = _zkstorm_with_terminal_stderr("-v", "--zk", chroot.zk, "snapshot", str(tmp_path), tty=False)
    assert code == 0, stderr
    assert re.search(rf"zkstorm: info zkstorm\.progress: reading {re.escape(chroot.zk)}: \d+\.\ds\n", stderr), stderr


def test_the_stage_log_times_each_stage_when_the_next_begins_or_the_work_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from zkstorm.progress import StageLog

    log = StageLog()
    with caplog.at_level("INFO", logger="zkstorm.progress"):
        log.stage("reading the manifests")
        log.stage("facts of 2 new snapshots (1/4)")
        assert [r.getMessage().rsplit(":", 1)[0] for r in caplog.records] == ["reading the manifests"]
        log.stop()
        log.stop()  # a second stop logs nothing more
    assert [r.getMessage().rsplit(":", 1)[0] for r in caplog.records] == [
        "reading the manifests",
        "facts of 2 new snapshots (1/4)",
    ]
    assert all(re.fullmatch(r".*: \d+\.\ds", r.getMessage()) for r in caplog.records)
