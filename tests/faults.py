"""Real filesystem faults for tests: a small disk that fills up or turns read-only, and the CLI run as a
process of its own under them.

``SmallDisk`` is a tmpfs the test mounts (the suite runs as root) and unmounts in its ``finally``.
Where mounting is not permitted it falls back to ``ulimit -f`` (``RLIMIT_FSIZE``) on the CLI's
process: then every file that process writes stops at the limit (``File too large``) instead of the
disk filling (``No space left on device``); ``mode`` says which, and every test using it prints it.
A read-only disk needs the mount: without one the test fails loudly, as a missing ZooKeeper does.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.test_cli import ENV

REASON = {"tmpfs": "No space left on device", "ulimit": "File too large"}


def zkstorm_process(*args: str, file_size_limit: int | None = None, **popen: Any) -> subprocess.Popen[str]:
    """``python -m zkstorm.cli ARGS`` as a process of its own (a signal or a kill reaches it alone), with
    every file it writes limited to ``file_size_limit`` bytes when given (SIGXFSZ ignored, so a write
    past the limit fails with EFBIG instead of ending the process)."""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.Popen(
        [sys.executable, "-m", "zkstorm.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ENV},
        preexec_fn=limit_file_size if file_size_limit is not None else None,
        **popen,
    )


def zkstorm(*args: str, file_size_limit: int | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the CLI to completion in a process of its own: its stderr as an operator sees it (warnings
    included, which a CliRunner in this process shows only for its first run's logging setup)."""
    process = zkstorm_process(*args, file_size_limit=file_size_limit)
    stdout, stderr = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


class SmallDisk:
    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size
        self.mode = ""
        self.file_size_limit: int | None = None  # ulimit mode: what ``fill`` sets
        self._filler = path / ".filler"

    def mount(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        forced = os.environ.get("ZKSTORM_TEST_DISK")  # "ulimit" runs the fallback where mounting works too
        if forced != "ulimit" and _mount("-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)):
            self.mode = "tmpfs"
        else:
            self.mode = "ulimit"
        print(f"disk faults by {self.mode} at {self.path}")

    def unmount(self) -> None:
        if self.mode == "tmpfs" and not _mount(str(self.path), command="umount"):
            _mount("-l", str(self.path), command="umount")

    def fill(self, leave: int = 0) -> None:
        """tmpfs: take every free byte but ``leave`` (rounded down to pages); ulimit: no file the CLI
        writes may grow past ``leave`` bytes."""
        if self.mode == "ulimit":
            self.file_size_limit = leave
            return
        stat = os.statvfs(self.path)
        take = stat.f_bavail * stat.f_frsize - leave
        with open(self._filler, "ab") as fh:
            os.posix_fallocate(fh.fileno(), os.fstat(fh.fileno()).st_size, take)

    def free(self) -> None:
        self.file_size_limit = None
        self._filler.unlink(missing_ok=True)

    @contextmanager
    def read_only(self) -> Iterator[None]:
        assert self.mode == "tmpfs", "a read-only OUT needs a tmpfs this test can mount: run the suite as root"
        assert _mount("-o", "remount,ro", str(self.path)), "cannot remount the test's tmpfs read-only"
        try:
            yield
        finally:
            _mount("-o", "remount,rw", str(self.path))

    def zkstorm(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the CLI to completion under this disk's faults."""
        return zkstorm(*args, file_size_limit=self.file_size_limit)


def _mount(*args: str, command: str = "mount") -> bool:
    return subprocess.run([command, *args], capture_output=True).returncode == 0


@contextmanager
def small_disk(path: Path, size: int) -> Iterator[SmallDisk]:
    disk = SmallDisk(path, size)
    disk.mount()
    try:
        yield disk
    finally:
        disk.unmount()


class OddPeer:
    """A member that answers ``srvr``, ``mntr`` and ``conf`` with the texts it is given, on a free loopback
    port, and closes any other connection at once. A fake, and only for what a real server cannot be made
    to print on demand: figures no counter holds (``1e400``, ``NaN``, ``-5``, a number of 5,000 digits)."""

    def __init__(self, answers: dict[str, str]) -> None:
        import socket
        import threading

        self.answers = answers
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True, name="odd-peer")
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    word = conn.recv(4).decode("ascii", "replace")
                    if word in self.answers:
                        conn.sendall(self.answers[word].encode())
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@contextmanager
def odd_peer(answers: dict[str, str]) -> Iterator[OddPeer]:
    peer = OddPeer(answers)
    try:
        yield peer
    finally:
        peer.close()
