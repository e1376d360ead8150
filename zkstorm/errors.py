"""The error tree and exit codes.

The library raises these and never prints or exits; the one handler in ``cli.py`` maps each to its
exit code, so a script can tell "ZooKeeper unreachable" from "topology not found" without parsing text.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    ZOOKEEPER = 3  # unreachable ensemble, refused auth, bad --zk
    NOT_FOUND = 4
    DECODE_FAILURES = 5  # only with --strict
    UNHEALTHY = 6  # only with --check
    FILES = 7  # offline ZooKeeper files missing, damaged or inconsistent
    INTERRUPTED = 130


class ZkstormError(Exception):
    """Base class; ``exit_code`` says how the CLI ends when this escapes."""

    exit_code: ExitCode = ExitCode.ERROR


class UsageError(ZkstormError):
    exit_code = ExitCode.USAGE


class ZookeeperError(ZkstormError):
    """The ensemble cannot be used: unreachable, auth refused, bad connect string, session lost."""

    exit_code = ExitCode.ZOOKEEPER


class NotFoundError(ZkstormError):
    exit_code = ExitCode.NOT_FOUND


class DecodeError(ZkstormError):
    """A payload could not be decoded. Decoders raise only this (and subclasses).

    ``failure_type`` is a stable category for scripts and the snapshot (``thrift-truncated``,
    ``thrift-schema-mismatch``, ``missing-required-fields``, ``unknown-encoding``,
    ``decompression-error``, ``empty-after-decompression``, ``decompressed-size-limit``,
    ``java-decode-error``, ``json-syntax``, …); ``reason`` says what exactly, for people.
    """

    def __init__(self, reason: str, *, failure_type: str = "decode-error", offset: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure_type = failure_type
        self.offset = offset


class FilesError(ZkstormError):
    """ZooKeeper's snapshot or log files cannot give a trustworthy tree: missing, damaged (checksum,
    truncation), or with txns missing between them. The message names the file and the offset."""

    exit_code = ExitCode.FILES


class ServerError(ZkstormError):
    """The local ZooKeeper server (sandbox, tests) could not be started."""
