"""The cluster model: ``connect`` to an ensemble or open ZooKeeper's files ``from_files``, then ask the
``Cluster`` for records (``cluster.storm.workers()``, ``cluster.kafka.health()``, ``cluster.get(path)``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from .cluster import Cluster, ZnodeDetail
from .kafka import KafkaCluster
from .storm import AmbiguousTopology, StormCluster

__all__ = ["AmbiguousTopology", "Cluster", "KafkaCluster", "StormCluster", "ZnodeDetail", "connect", "from_files"]


def connect(
    zk: str = "127.0.0.1:2181",
    *,
    storm_root: str = "/storm",
    kafka_root: str = "/",
    timeout: float = 10.0,
    credentials: Any = None,
    tls: Any = None,
    show_secrets: bool = False,
    decode_helper: bool = False,
    max_reply: int | None = None,
) -> Cluster:
    """A ``Cluster`` on a live ensemble (``host:port[,host:port…][/chroot]``), read-only by construction.

    ``credentials`` is a ``zkstorm.sources.live.Credentials`` (``Credentials.from_env()`` reads ``ZKSTORM_AUTH``,
    ``ZKSTORM_USER`` and ``ZKSTORM_PASSWORD[_FILE]``), ``tls`` a ``zkstorm.sources.live.TlsOptions``. Use it as a
    context manager, or call ``open()`` and ``close()``. ``decode_helper`` lets walks decode Java-serialized
    payloads in a helper process, on a second core (``zkstorm.helper``; the CLI's default). ``max_reply`` is
    the largest reply read from a server in bytes (default ``ZKSTORM_MAX_REPLY_BYTES``, else 256 MiB).
    """
    from ..sources.live import ReadOnlySession

    session = ReadOnlySession(zk, timeout=timeout, credentials=credentials, tls=tls, max_reply=max_reply)
    return Cluster(
        session, storm_root=storm_root, kafka_root=kafka_root, show_secrets=show_secrets, decode_helper=decode_helper
    )


def from_files(
    *paths: str,
    at_zxid: int | None = None,
    at: datetime | None = None,
    best_effort: bool = False,
    verify_digest: bool = False,
    storm_root: str = "/storm",
    kafka_root: str = "/",
    show_secrets: bool = False,
    decode_helper: bool = False,
) -> Cluster:
    """A ``Cluster`` on a ZooKeeper server's own files: a dataDir (or its ``version-2``), a snapshot, or a
    snapshot and logs, replayed to the end, to ``at_zxid``, or to the last txn at or before ``at`` (UTC
    unless it says otherwise). No load on the ensemble. ``decode_helper``: as for ``connect``. Its
    ``changes(since=..., until=...)`` reads what the logs say changed (``zkstorm.changes``)."""
    from ..sources.files.source import FileSource

    at_time_ms = None
    if at is not None:
        moment = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
        at_time_ms = (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)
    source = FileSource(
        list(paths), at_zxid=at_zxid, at_time_ms=at_time_ms, best_effort=best_effort, verify_digest=verify_digest
    )
    return Cluster(
        source, storm_root=storm_root, kafka_root=kafka_root, show_secrets=show_secrets, decode_helper=decode_helper
    )
