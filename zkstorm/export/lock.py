"""``OUT/_lock``: one snapshot writer per dataset, and no night stopped by a lock an earlier night left.

The lock file holds its owner as JSON: pid, host, the host's boot id, a token of its own, since when.
On a local filesystem the owner is written whole to a hidden temporary file that is then hard-linked to
the lock's name: ``link`` fails if the name exists (exclusive, like ``O_EXCL``) and the name never
appears empty or cut short, since a full disk fails the temporary file's write before the name exists.

A lock nobody holds any more is stale and taken over, with a warning:

- one of this host whose process is gone, or whose host restarted since (its pid may be anybody's
  now; a restarted container even gives its pid to the next run);
- one of another host older than ``stale_after_secs``: its process cannot be asked, so the bound is
  a snapshot's longest plausible run (``defaults.LOCK_STALE_AFTER_SECS``, ``--lock-stale-after``);
- one whose owner cannot be read older than ``UNREADABLE_GRACE_SECS``: only a writer that failed
  half-way leaves one (zkstorm before this lock, on a full disk), and that writer has given up.

Other filesystems (object stores) cannot link or create exclusively: the lock is a check, then a
write, so two writers starting at the same moment can both pass. Best effort, documented.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import posixpath
import secrets
import socket
import time
from typing import Any

import pyarrow.fs as pafs

from ..defaults import LOCK_STALE_AFTER_SECS
from ..errors import SnapshotError
from ..units import duration_text

log = logging.getLogger(__name__)

LOCK = "_lock"
UNREADABLE_GRACE_SECS = 60.0  # a writer of ours takes milliseconds between creating and filling a lock
_held_tokens: set[str] = set()  # the locks this process holds (a holder with our pid and another token is not us)


class Lock:
    """An exclusive lock file at ``path``; ``local`` when ``filesystem`` is the local one."""

    def __init__(
        self,
        filesystem: pafs.FileSystem,
        path: str,
        *,
        local: bool,
        stale_after_secs: float = LOCK_STALE_AFTER_SECS,
    ) -> None:
        self.filesystem, self.path, self.local = filesystem, path, local
        self.stale_after_secs = stale_after_secs
        self.token = secrets.token_hex(8)
        self.owner: dict[str, Any] = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "boot": _boot_id(),
            "token": self.token,
            "since": time.time(),
        }
        self.held = False

    def acquire(self) -> None:
        """Take the lock, taking over a stale one; raise ``SnapshotError`` naming the lock if it is held."""
        for _ in range(3):
            if self._create():
                self.held = True
                _held_tokens.add(self.token)
                return
            data, age = self._look()
            if age is None:  # released between our try and our look
                continue
            holder = _owner(data)
            stale = self._stale(holder, age)
            if stale is None:
                raise SnapshotError(self._busy(holder, age))
            log.warning("taking over the snapshot lock %s: %s", self.path, stale)
            self._remove_if_unchanged(data)
        raise SnapshotError(f"cannot take the lock {self.path}: other runs keep taking it; is a snapshot job looping?")

    def release(self) -> None:
        """Remove the lock if it is still ours: another host may have taken it over as stale meanwhile."""
        if not self.held:
            return
        self.held = False
        _held_tokens.discard(self.token)
        try:
            data, _ = self._look()
            holder = _owner(data)
            if holder is not None and holder.get("token") != self.token:
                log.warning("leaving %s in place: another run took it over while this one held it", self.path)
            elif data is not None:
                self.filesystem.delete_file(self.path)
        except (OSError, SnapshotError) as exc:  # the next run judges what is left; this run's own error matters more
            log.warning("cannot remove the lock %s: %s", self.path, exc)

    def _create(self) -> bool:
        """Create the lock holding our owner; False if the name exists."""
        body = json.dumps(self.owner).encode()
        try:
            if not self.local:
                if self.filesystem.get_file_info(self.path).type != pafs.FileType.NotFound:
                    return False
                with self.filesystem.open_output_stream(self.path) as stream:
                    stream.write(body)
                return True
            return _link_new(self.path, body, self.token)
        except OSError as exc:
            raise SnapshotError(f"cannot write {self.path}: {os_reason(exc)}") from None

    def _look(self) -> tuple[bytes | None, float | None]:
        """The lock's bytes (None if they cannot be read) and age in seconds (None if it is gone)."""
        try:
            info = self.filesystem.get_file_info(self.path)
            if info.type == pafs.FileType.NotFound:
                return None, None
            age = time.time() - (info.mtime_ns or 0) / 1e9
        except OSError as exc:
            raise SnapshotError(f"cannot read {self.path}: {os_reason(exc)}") from None
        try:
            with self.filesystem.open_input_stream(self.path) as stream:
                return stream.read(), age
        except FileNotFoundError:
            return None, None
        except OSError:
            return None, age

    def _stale(self, holder: dict[str, Any] | None, age: float) -> str | None:
        """Why the lock is stale, or None while its holder may still be writing."""
        if holder is None:
            if age > UNREADABLE_GRACE_SECS:
                return f"its owner cannot be read (an empty or cut-short lock) and it is {duration_text(age)} old"
            return None
        pid, host = holder["pid"], holder["host"]
        if host != self.owner["host"]:
            if age > self.stale_after_secs:
                return f"pid {pid} on {host} took it {duration_text(age)} ago, longer than a snapshot runs"
            return None
        if holder.get("boot") and self.owner["boot"] and holder["boot"] != self.owner["boot"]:
            return f"pid {pid} took it before this host restarted"
        if pid == os.getpid() and holder.get("token") not in _held_tokens:
            return f"pid {pid} (now this process) took it in an earlier life of this host's pids"
        if not _alive(pid):
            return f"pid {pid} of this host is gone"
        return None

    def _busy(self, holder: dict[str, Any] | None, age: float) -> str:
        """The one line for a lock held: who holds it, until when it is respected, and what to do."""
        if holder is None:
            return (
                f"another snapshot may be starting in this OUT: {self.path} is {duration_text(age)} old and its owner "
                f"cannot be read yet; if no snapshot is running, delete {self.path}"
            )
        held = f"{self.path} is held by pid {holder['pid']}"
        if holder["host"] == self.owner["host"]:
            return (
                f"another snapshot is being written to this OUT: {held} on this host, for {duration_text(age)}; "
                "wait for it to end, or stop that process (its lock is then released or taken over)"
            )
        return (
            f"another snapshot is being written to this OUT: {held} on {holder['host']}, for {duration_text(age)}; "
            f"it is taken over once older than {duration_text(self.stale_after_secs)} (--lock-stale-after); "
            f"if that run is gone, delete {self.path}"
        )

    def _remove_if_unchanged(self, judged: bytes | None) -> None:
        """Remove the stale lock, unless another run put its own in its place since we judged it."""
        data, age = self._look()
        if age is None or data != judged:
            return
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_file(self.path)


def _link_new(path: str, body: bytes, token: str) -> bool:
    """Write ``body`` whole to a temporary file beside ``path``, then link it to ``path``: False if
    ``path`` exists. Where the filesystem has no hard links, an exclusive create, then the write."""
    temporary = posixpath.join(posixpath.dirname(path), f".{LOCK}-{token}.tmp")
    try:
        with open(temporary, "wb") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        except FileNotFoundError:
            # our temporary file is gone: the run holding the lock removed it with what stopped runs left
            # (its roll-back, under the lock) between our write and our link, so the lock is taken
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            return _create_exclusive(path, body)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP}  # FAT, some FUSE and SMB mounts


def _create_exclusive(path: str, body: bytes) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(body)
    return True


def _owner(data: bytes | None) -> dict[str, Any] | None:
    """The lock's owner, or None when its bytes are not one (empty, cut short, not ours)."""
    try:
        owner = json.loads(data) if data else None
    except ValueError:
        return None
    if not isinstance(owner, dict) or not isinstance(owner.get("host"), str) or not isinstance(owner.get("pid"), int):
        return None
    return owner


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except (OSError, OverflowError):
        return False
    return True


def _boot_id() -> str | None:
    """This boot of this host (Linux), so a lock from before a restart is known stale whatever its pid."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def os_reason(exc: OSError) -> str:
    """The system's words for a filesystem's refusal (``No space left on device``), without pyarrow's
    wrapping of them."""
    if exc.errno:
        return os.strerror(exc.errno)
    if isinstance(exc, FileNotFoundError):  # pyarrow's dataset reader raises it with the path alone
        return os.strerror(errno.ENOENT)
    return str(exc)
