"""The cluster model: ``connect`` to an ensemble or open ZooKeeper's files ``from_files``, then ask the
``Cluster`` for records (``cluster.storm.workers()``, ``cluster.kafka.health()``, ``cluster.get(path)``).

These two are the only way to open a cluster: the command line opens every one through them, so what a
command can do with a source a library caller can do too (credentials and TLS from the environment, the
decode helper as the CLI runs it).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..defaults import KAFKA_ROOT, STORM_ROOT, TIMEOUT_SECS, ZK
from ..ensemble import Ensemble, Thresholds
from ..ensemble.usage import usage_rows
from ..units import epoch_ms
from .cluster import Cluster, ZnodeDetail
from .kafka import KafkaCluster, KafkaHealth
from .kafka_migration import MigrationReport, check_migration
from .storm import StormCluster

if TYPE_CHECKING:
    from ..changes import ChangeFilter, ChangeLog


def __getattr__(name: str) -> Any:
    """``ChangeFilter`` and ``ChangeLog`` on first use: the transaction-log readers are a tenth of a second
    of imports that a walk (every view, the snapshot) never needs."""
    if name in ("ChangeFilter", "ChangeLog"):
        from .. import changes

        return getattr(changes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ChangeFilter",
    "ChangeLog",
    "Cluster",
    "Ensemble",
    "KafkaCluster",
    "KafkaHealth",
    "MigrationReport",
    "StormCluster",
    "Thresholds",
    "ZnodeDetail",
    "check_migration",
    "connect",
    "from_files",
    "from_kraft",
    "usage_rows",
]

TLS_KEY_PASSWORD_ENV = "ZKSTORM_TLS_KEY_PASSWORD"  # a client key's password: from the environment, never argv
DECODE_HELPER_ENV = "ZKSTORM_DECODE_HELPER"  # 0, false, no or off: never start the decode helper


def connect(
    zk: str = ZK,
    *,
    storm_root: str = STORM_ROOT,
    kafka_root: str = KAFKA_ROOT,
    timeout: float = TIMEOUT_SECS,
    credentials: Any = None,
    tls: Any = None,
    tls_ca: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    show_secrets: bool = False,
    decode_helper: bool | None = False,
    max_reply: int | None = None,
) -> Cluster:
    """A ``Cluster`` on a live ensemble (``host:port[,host:port…][/chroot]``), read-only by construction. Use
    it as a context manager, or call ``open()`` and ``close()``.

    ``credentials`` is a ``zkstorm.sources.live.Credentials``, or an auth scheme (``digest``,
    ``sasl-digest``, ``sasl-gssapi``) whose user and password come from ``ZKSTORM_USER`` and
    ``ZKSTORM_PASSWORD[_FILE]`` (``Credentials.from_env``). ``tls`` is a ``zkstorm.sources.live.TlsOptions``,
    or True for TLS with the system's CAs; ``tls_ca``, ``tls_cert`` and ``tls_key`` (paths) also turn it on,
    the key's password read from ``ZKSTORM_TLS_KEY_PASSWORD``. ``decode_helper`` lets walks decode
    Java-serialized payloads in a helper process, on a second core (``model.decode_helper``): off by
    default, since a library should not start processes behind its caller's back; None leaves it to
    ``ZKSTORM_DECODE_HELPER`` (on unless ``0``, ``false``, ``no`` or ``off``), as the CLI does.
    ``max_reply`` is the largest reply read from a server in bytes (default ``ZKSTORM_MAX_REPLY_BYTES``, else
    256 MiB).
    """
    from ..sources.live import Credentials, ReadOnlySession, TlsOptions

    if isinstance(credentials, str):
        credentials = Credentials.from_env(scheme=credentials)
    if not isinstance(tls, TlsOptions) and (tls or tls_ca or tls_cert):
        tls = TlsOptions(
            ca=tls_ca, certfile=tls_cert, keyfile=tls_key, keyfile_password=os.environ.get(TLS_KEY_PASSWORD_ENV)
        )
    session = ReadOnlySession(zk, timeout=timeout, credentials=credentials, tls=tls or None, max_reply=max_reply)
    return _cluster(session, storm_root, kafka_root, show_secrets, decode_helper)


def from_files(
    *paths: str,
    at_zxid: int | None = None,
    at: datetime | None = None,
    best_effort: bool = False,
    verify_digest: bool = False,
    storm_root: str = STORM_ROOT,
    kafka_root: str = KAFKA_ROOT,
    show_secrets: bool = False,
    decode_helper: bool | None = False,
) -> Cluster:
    """A ``Cluster`` on a ZooKeeper server's own files: a dataDir (or its ``version-2``), a snapshot, or a
    snapshot and logs, replayed to the end, to ``at_zxid``, or to the last txn at or before ``at`` (UTC
    unless it says otherwise; ``best_effort``: up to a damaged file, which
    ``Cluster.source_problems`` then names). No load on the ensemble. ``verify_digest`` checks a whole-tree
    read against the digest the server logged. ``decode_helper``: as for ``connect``. Its
    ``changes(since=..., until=...)`` reads what the logs say changed (``zkstorm.changes``)."""
    from ..sources.files.source import FileSource

    at_time_ms = None if at is None else epoch_ms(at)
    source = FileSource(
        list(paths), at_zxid=at_zxid, at_time_ms=at_time_ms, best_effort=best_effort, verify_digest=verify_digest
    )
    return _cluster(source, storm_root, kafka_root, show_secrets, decode_helper)


def from_kraft(
    folder: str,
    *,
    at_offset: int | None = None,
    at: datetime | None = None,
    best_effort: bool = False,
    show_secrets: bool = False,
) -> Cluster:
    """A ``Cluster`` on a KRaft controller's or broker's metadata folder (``__cluster_metadata-0``, or the
    log dir holding it): its newest usable snapshot and the log after it, replayed to the end, to the record
    at ``at_offset``, or to the last record appended at or before ``at``, served as the znodes ZooKeeper-mode
    Kafka kept under the Kafka root ``kraft:`` (``zkstorm.sources.kraft``), so ``cluster.kafka``'s views,
    health and the snapshot read it as they read ZooKeeper. ``best_effort``: up to a damaged batch, which
    ``Cluster.source_problems`` then names."""
    from ..sources.kraft.source import ROOT, KraftSource

    at_time_ms = None if at is None else epoch_ms(at)
    source = KraftSource(folder, at_offset=at_offset, at_time_ms=at_time_ms, best_effort=best_effort)
    cluster = Cluster(source, storm_root=ROOT + "/storm", kafka_root=ROOT, show_secrets=show_secrets)
    cluster.roots = cluster.walked_roots = source.declared_roots  # Kafka's metadata only: no Storm root
    return cluster


def _cluster(source: Any, storm_root: str, kafka_root: str, show_secrets: bool, decode_helper: bool | None) -> Cluster:
    """The cluster on ``source``; ``decode_helper`` None is what ``ZKSTORM_DECODE_HELPER`` says: on unless
    ``0``, ``false``, ``no`` or ``off``."""
    if decode_helper is None:
        decode_helper = os.environ.get(DECODE_HELPER_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    return Cluster(
        source, storm_root=storm_root, kafka_root=kafka_root, show_secrets=show_secrets, decode_helper=decode_helper
    )
