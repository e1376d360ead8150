"""``changes --out DIR``: the change records as Parquet, one table per change kind (named by the kind:
``kafka_broker_gone``), written by the snapshot's own writer (``export.parquet.Snapshot``), so a changes
dataset has the snapshot's layout, atomic commit, lock and manifest, and Spark reads a month of runs as
it reads a month of snapshots (``history --changes``). The manifest says which window of which files it
holds (``changes``) and that it is a changes run (``dataset``): a folder holds snapshots or changes, never
both (``export.manifest``). Runs whose windows overlap hold the same changes twice; a change is one
(zxid, kind, path), which is how ``history`` counts each once."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..changes.lines import clock
from ..changes.reader import time_of
from .manifest import CHANGES
from .parquet import Snapshot, default_snapshot_id


def write_changes(
    log: Any,
    changes: Iterable[Any],
    out: str,
    *,
    cluster: str | None = None,
    snapshot_id: str | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """Stream ``changes`` (read from ``log``, a ``ChangeLog``) into one committed run under ``out``;
    returns its manifest. ``cluster`` defaults to this host (the files are the server's own), the id to
    ``CLUSTER@YYYY-MM-DD`` (a re-run the same day replaces it), ``at`` to now."""
    import socket

    at = at or datetime.now(UTC)
    cluster = cluster or socket.gethostname()
    snapshot_id = snapshot_id or default_snapshot_id(cluster, at)
    with Snapshot(out, snapshot_id=snapshot_id, cluster=cluster, snapshot_time=at, dataset=CHANGES) as run:
        for change in changes:
            run.add(change)
        stats = log.stats
        window = None
        if stats.first_zxid is not None:
            window = {
                "first_zxid": stats.first_zxid,
                "last_zxid": stats.last_zxid,
                "first_time": _iso(stats.first_time_ms),
                "last_time": _iso(stats.last_time_ms),
            }
        return run.commit(
            {
                "changes": {
                    "window": window,
                    "files": {
                        "snapshot": os.path.basename(stats.snapshot) if stats.snapshot else None,
                        "logs": [os.path.basename(p) for p in stats.logs],
                    },
                    "txns": stats.txns,
                    "problems": list(log.problems),
                },
                "roots": {
                    "storm": list(log.roots.storm) if log.roots else [],
                    "kafka": list(log.roots.kafka) if log.roots else [],
                },
            }
        )


def _iso(time_ms: int | None) -> str | None:
    if time_ms is None:
        return None
    moment = time_of(time_ms)
    return f"{clock(moment, date=True).replace(' ', 'T')}Z"
