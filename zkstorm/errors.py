"""Every exception zkstorm raises, and the exit codes they end in (as kazoo keeps its errors in one
``exceptions`` module: a caller finds them all in one place).

The library raises these and never prints or exits; the one handler in ``cli/app.py`` maps each to its
exit code, so a script can tell "ZooKeeper unreachable" from "topology not found" without parsing text.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum, StrEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    ZOOKEEPER = 3  # unreachable ensemble, refused auth, bad --zk
    NOT_FOUND = 4
    DECODE_FAILURES = 5  # only with --strict
    UNHEALTHY = 6  # only with --check
    FILES = 7  # offline ZooKeeper files missing, damaged or inconsistent
    HANGUP = 129  # SIGHUP: 128 + the signal's number, as a shell reports a process the signal ended
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM (systemd's stop, kill's default)


class ZkstormError(Exception):
    """Base class; ``exit_code`` says how the CLI ends when this escapes."""

    exit_code: ExitCode = ExitCode.ERROR


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP asked the command to stop. Raised in the main thread the way Ctrl-C raises
    ``KeyboardInterrupt`` (and a subclass of it, so whatever cleans up after Ctrl-C cleans up after these
    too: temporary files, the snapshot lock, the decode helper); the CLI exits 128 + the signal number."""

    def __init__(self, signal_name: str, exit_code: ExitCode) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.exit_code = exit_code


class UsageError(ZkstormError):
    exit_code = ExitCode.USAGE


class AmbiguousTopology(UsageError):
    """A topology name that matches several ids (a resubmitted topology, or two clusters' worth)."""


class ZookeeperError(ZkstormError):
    """The ensemble cannot be used: unreachable, auth refused, bad connect string, session lost."""

    exit_code = ExitCode.ZOOKEEPER


class BadConnectString(ZookeeperError):
    """A ``--zk`` value that cannot name an ensemble (exit 3, like an unreachable one)."""


class ReadOnlyViolation(ZkstormError):
    """Raised if anything tries to send a non-read request through the inspector's session."""


class NotAllowedError(ZookeeperError):
    """The server refused a read (NoAuth): fatal for the one znode a command asked for; a walk or a
    search for roots records it and goes on."""


class ReplyTooLargeError(ZookeeperError):
    """A server's reply claims more bytes than zkstorm accepts (``ZKSTORM_MAX_REPLY_BYTES``): refused before
    anything is allocated, since a broken or hostile endpoint can claim gigabytes in four bytes."""


class NotFoundError(ZkstormError):
    exit_code = ExitCode.NOT_FOUND


class RootNotFoundError(NotFoundError):
    """No Storm or Kafka cluster where one was asked for: the root (or the ``--zk`` chroot) does not exist,
    or holds nothing of its system. Never an empty, healthy-looking view; under ``--check`` it is
    unhealthy (``UnhealthyError``)."""


class UnhealthyError(ZkstormError):
    """A ``--check`` found the cluster unhealthy in a way that leaves nothing to show (no cluster at all)."""

    exit_code = ExitCode.UNHEALTHY


class OutOfMemoryError(ZkstormError):
    """The process ran out of memory (a reply or a tree too large for the memory it may use)."""


class FailureType(StrEnum):
    """Why a znode is a ``decode_failure``: one snake_case vocabulary for scripts, the CLI and the
    snapshot's ``failure_type`` column (each value is explained in docs/health.md, "Failure types")."""

    EMPTY_DATA = "empty_data"  # no bytes where a payload belongs
    UNKNOWN_ENCODING = "unknown_encoding"  # not gzip, zstd, Thrift, Java serialization or JSON where one is due
    DECOMPRESSION_ERROR = "decompression_error"  # a broken or truncated gzip/zstd stream
    EMPTY_AFTER_DECOMPRESSION = "empty_after_decompression"
    DECOMPRESSED_SIZE_LIMIT = "decompressed_size_limit"  # inflates past Storm's own cap
    THRIFT_TRUNCATED = "thrift_truncated"  # the struct ends before its fields do
    THRIFT_DECODE_ERROR = "thrift_decode_error"  # bytes that are not the TBinaryProtocol struct expected
    THRIFT_SCHEMA_MISMATCH = "thrift_schema_mismatch"  # a field of the wrong wire type
    MISSING_REQUIRED_FIELDS = "missing_required_fields"
    JAVA_DECODE_ERROR = "java_decode_error"  # a Java serialization stream that cannot be read
    WRONG_RECORD = "wrong_record"  # decodes, but to another record than the path holds
    JSON_SYNTAX = "json_syntax"
    INVALID_UTF8 = "invalid_utf8"
    NOT_AN_OBJECT = "not_an_object"  # JSON, but not the object the znode holds
    WRONG_TYPE = "wrong_type"  # a field of the wrong JSON type
    INVALID_NUMBER = "invalid_number"
    VALUE_OUT_OF_RANGE = "value_out_of_range"  # e.g. a time no clock can hold
    BAD_NODE_NAME = "bad_node_name"  # a znode name that cannot be what the layout says it is
    BAD_SIZE = "bad_size"  # a payload of the wrong length
    DECODER_ERROR = "decoder_error"  # the decoder itself failed on these bytes (a bug to report)
    MISSING_NODE = "missing_node"  # a znode the layout requires is absent (a partition's state)
    INVALID_TOPIC_ID = "invalid_topic_id"  # a topic_id Kafka's Uuid.fromString refuses
    INVALID_VALUE = "invalid_value"  # a value of the right type that Kafka refuses (an ACL operation Any)
    DECODE_ERROR = "decode_error"  # anything else

    @classmethod
    def of(cls, value: str) -> FailureType:
        """The member for ``value``, accepting the hyphenated spellings snapshots before schema 2 wrote
        (``thrift-truncated``); an unknown value raises ``ValueError``."""
        return cls(value.replace("-", "_"))


class DecodeError(ZkstormError):
    """A payload could not be decoded. Decoders raise only this (and subclasses).

    ``failure_type`` is a ``FailureType`` (a stable category for scripts and the snapshot); ``reason``
    says what exactly, for people. ``records`` are what the decoder read before a rule refused the
    znode (a ``topic_id`` Kafka's ``Uuid.fromString`` refuses, in a topic whose partitions read fine):
    the znode is still a failure, and the walk keeps these beside it, each record that stands for the
    znode carrying the failure type as its ``decode_status`` (``model.walk.decode_one``). Empty when
    nothing could be read.
    """

    def __init__(
        self,
        reason: str,
        *,
        failure_type: FailureType | str = FailureType.DECODE_ERROR,
        offset: int | None = None,
        records: Sequence[Any] = (),
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure_type = FailureType.of(failure_type)
        self.offset = offset
        self.records = list(records)


class FilesError(ZkstormError):
    """ZooKeeper's snapshot or log files cannot give a trustworthy tree: missing, damaged (checksum,
    truncation), or with txns missing between them. The message names the file and the offset."""

    exit_code = ExitCode.FILES


class UnusableSnapshotError(FilesError):
    """The snapshot file chosen failed its full check; the next older one is tried, as ZooKeeper would."""


class JuteError(ValueError):
    """The bytes of a ZooKeeper file do not hold the jute record expected here. The file's reader catches
    it and tells it as a ``FilesError`` naming the file and the offset; it never reaches the user as is."""


class SnapshotError(ZkstormError):
    """A snapshot dataset cannot be written or read: the lock is held, the filesystem refused a write
    (full, read-only), a file a manifest lists cannot be read. The message names the path."""


class DamagedManifestError(SnapshotError):
    """A manifest under ``OUT/_manifests`` cannot be read as one (truncated, not JSON, a required key
    missing or of the wrong type). Readers skip it with a warning; nothing it might list is deleted."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: not a zkstorm snapshot manifest ({reason})")
        self.path = path
        self.reason = reason


class ServerError(ZkstormError):
    """The local ZooKeeper server (sandbox, tests) could not be started."""
