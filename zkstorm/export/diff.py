"""``zkstorm diff``: what changed between two committed snapshots, table by table.

Rows are compared whole (without the snapshot's own id, time and cluster columns) as multisets, so a
row that changed shows as one removed and one added; the examples let a person see which. Reading
goes through the manifests: exactly the files a snapshot's manifest lists are compared. A snapshot
whose manifest or files cannot be read is one line naming the file (exit 1). Plain pyarrow: two
snapshots fit in one process, no Spark needed.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ..errors import FailureType, NotFoundError, SnapshotError
from .lock import os_reason
from .manifest import SNAPSHOT, manifest_name, of_kind
from .parquet import manifest_root, open_filesystem, scan_manifests

log = logging.getLogger(__name__)

META = ("snapshot_id", "snapshot_time", "cluster", "snapshot_date")
EXAMPLES = 5


@dataclass
class TableDiff:
    table: str
    rows_a: int
    rows_b: int
    added: int
    removed: int
    added_examples: list[dict[str, Any]] = field(default_factory=list)
    removed_examples: list[dict[str, Any]] = field(default_factory=list)


def find_manifest(filesystem: pafs.FileSystem, base: str, snapshot_id: str) -> dict[str, Any]:
    """The committed manifest of ``snapshot_id``. Its manifest damaged: ``SnapshotError`` (exit 1: the
    snapshot is there, but cannot be read); no manifest at all: ``NotFoundError`` (exit 4)."""
    scan = scan_manifests(filesystem, base)
    snapshots = of_kind(list(scan.manifests.values()), base, SNAPSHOT)  # a changes folder: one line
    for manifest in snapshots:
        if manifest["snapshot_id"] == snapshot_id:
            return manifest
    for damaged in scan.damaged:
        if damaged.path.endswith(f"/{manifest_name(snapshot_id)}"):
            raise SnapshotError(f"snapshot {snapshot_id!r} cannot be compared: {damaged}")
    for damaged in scan.damaged:  # one of them may be the snapshot meant
        log.warning("%s; skipped", str(damaged))
    known = ", ".join(m["snapshot_id"] for m in snapshots[-10:]) or "none"
    raise NotFoundError(f"no committed snapshot {snapshot_id!r} under {base}; newest: {known}")


def _rows(filesystem: pafs.FileSystem, base: str, manifest: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {}
    for relative in manifest["files"]:
        name = relative.split("/", 1)[0]
        try:
            table = pq.read_table(f"{base}/{relative}", filesystem=filesystem)
        except (OSError, pa.ArrowException) as exc:
            reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            raise SnapshotError(
                f"cannot read {base}/{relative} of snapshot {manifest['snapshot_id']!r}: {reason}"
            ) from None
        keep = [c for c in table.column_names if c not in META]
        rows = table.select(keep).to_pylist()
        legacy_root = manifest_root(manifest, name) if "root" not in table.column_names else None
        if legacy_root is not None:  # written before rows carried their root: the one its manifest names
            for row in rows:
                row["root"] = legacy_root
        if name == "decode_failures":  # older snapshots spelled failure types with hyphens
            for row in rows:
                row["failure_type"] = FailureType.of(row["failure_type"]).value
        tables.setdefault(name, []).extend(rows)
    return tables


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(row.items()))


def diff_snapshots(out_a: str, id_a: str, out_b: str, id_b: str, *, tables: set[str] | None = None) -> list[TableDiff]:
    """Per table present in either snapshot: row counts, and rows only in B (added) or only in A."""
    fs_a, base_a = open_filesystem(out_a)
    fs_b, base_b = open_filesystem(out_b)
    rows_a = _rows(fs_a, base_a, find_manifest(fs_a, base_a, id_a))
    rows_b = _rows(fs_b, base_b, find_manifest(fs_b, base_b, id_b))
    out = []
    for name in sorted(set(rows_a) | set(rows_b)):
        if tables and name not in tables:
            continue
        a = Counter(_key(r) for r in rows_a.get(name, []))
        b = Counter(_key(r) for r in rows_b.get(name, []))
        added, removed = b - a, a - b
        out.append(
            TableDiff(
                table=name,
                rows_a=sum(a.values()),
                rows_b=sum(b.values()),
                added=sum(added.values()),
                removed=sum(removed.values()),
                added_examples=[dict(k) for k in sorted(added, key=repr)[:EXAMPLES]],
                removed_examples=[dict(k) for k in sorted(removed, key=repr)[:EXAMPLES]],
            )
        )
    return out


def diff_live(cluster: Any, out: str, snapshot_id: str, *, tables: set[str] | None = None) -> list[TableDiff]:
    """The committed snapshot ``snapshot_id`` under ``out`` against the source as it is now: the open
    ``cluster`` is snapshotted into a scratch directory (removed after), then the two are compared as any
    two snapshots are."""
    import tempfile

    from .parquet import take_snapshot

    with tempfile.TemporaryDirectory(prefix="zkstorm-diff-") as scratch:
        run = take_snapshot(cluster, scratch, snapshot_id="live")
        return diff_snapshots(out, snapshot_id, scratch, run.snapshot_id, tables=tables)
