"""Parquet snapshots: every decoded record of one walk, one dataset per record type.

Layout under OUT (a local path or any filesystem URI pyarrow supports)::

    OUT/<table>/snapshot_date=YYYY-MM-DD/part-<snapshot id>.parquet
    OUT/_manifests/<snapshot id>.json          the commit record of a snapshot
    OUT/_lock                                   held while a snapshot is written

Each table's file is streamed in bounded row groups to a hidden ``.part-….tmp`` beside its final
name and committed by one rename, atomic on a POSIX filesystem, so a reader never sees half a file;
re-running the same snapshot id replaces its files instead of adding rows. pyarrow and Spark skip
names starting with ``.`` and ``_``. The manifest is written last: readers that want whole snapshots
only (the history job) read the ids it lists. The snapshot id is not a partition directory, because
Spark refuses a column that is both in the data files and in a ``key=value`` path.

This module is the one place that maps record kinds to Arrow types (``arrow_schema``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from operator import attrgetter
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from . import __version__
from .errors import ZkstormError
from .records import DecodeFailure, Unreadable, Znode
from .schema import columns, kind_name

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
MANIFESTS = "_manifests"
LOCK = "_lock"
_ARROW = {
    "str": pa.string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "datetime": pa.timestamp("ms", tz="UTC"),
}
# the columns every table starts with, the same value in every row of a snapshot
_CONSTANT_TYPES = {"snapshot_id": pa.string(), "snapshot_time": _ARROW["datetime"], "cluster": pa.string()}
_SPECIAL_TABLES = {Znode: "znodes", DecodeFailure: "decode_failures", Unreadable: "unreadable_znodes"}
_SAFE = re.compile(r"[^A-Za-z0-9._@-]")


class SnapshotError(ZkstormError):
    """The snapshot could not be written (lock held, filesystem error)."""


def table_name(record_type: type) -> str:
    """The dataset of a record type: its kind in the plural (``storm_topology`` → ``storm_topologies``)."""
    special = _SPECIAL_TABLES.get(record_type)
    if special:
        return special
    kind = kind_name(record_type)
    if kind.endswith("stats"):  # already plural: storm_component_stats
        return kind
    if kind.endswith("y") and kind[-2:-1] not in "aeiou":
        return kind[:-1] + "ies"
    if kind.endswith(("s", "sh", "tch", "x")):  # latch → latches, but epoch → epochs
        return kind + "es"
    return kind + "s"


def arrow_type(kind: str) -> pa.DataType:
    if kind.startswith("list<"):
        return pa.list_(_ARROW[kind[5:-1]])
    return _ARROW[kind]


def arrow_schema(record_type: type) -> pa.Schema:
    """The Parquet schema of a record type: the snapshot columns, then the record's own fields."""
    fields = [pa.field(name, constant_type, nullable=False) for name, constant_type in _CONSTANT_TYPES.items()]
    for column in columns(record_type):
        fields.append(pa.field(column.name, arrow_type(column.kind), nullable=column.nullable))
    return pa.schema(
        fields, metadata={"zkstorm.kind": kind_name(record_type), "zkstorm.schema_version": str(SCHEMA_VERSION)}
    )


def safe_name(text: str) -> str:
    return _SAFE.sub("_", text)


def open_filesystem(out: str) -> tuple[pafs.FileSystem, str]:
    """A dataset location as (filesystem, base path): a local path, or any URI pyarrow supports."""
    if "://" in out:
        filesystem, base = pafs.FileSystem.from_uri(out)
        return filesystem, base
    return pafs.LocalFileSystem(), os.path.abspath(out)


def default_snapshot_id(cluster: str, at: datetime) -> str:
    """One snapshot per cluster per UTC day: a re-run the same day replaces it instead of adding rows."""
    return f"{safe_name(cluster)}@{at:%Y-%m-%d}"


@dataclass
class _Table:
    record_type: type
    schema: pa.Schema
    final_path: str
    tmp_path: str
    writer: pq.ParquetWriter | None = None
    buffer: list[Any] = field(default_factory=list)  # the records themselves, turned into columns per batch
    rows: int = 0


class Snapshot:
    """Writes one snapshot. Use ``with Snapshot(...) as snap: snap.add(record) …; snap.commit(manifest)``.

    Leaving the block without ``commit`` (an exception, Ctrl-C) deletes every temporary file.
    """

    def __init__(
        self, out: str, *, snapshot_id: str, cluster: str, snapshot_time: datetime, batch_rows: int = 4096
    ) -> None:
        self.filesystem, self.base = open_filesystem(out)
        self.out = out
        self.snapshot_id = snapshot_id
        self.cluster = cluster
        self.snapshot_time = snapshot_time.astimezone(timezone.utc)
        self.batch_rows = batch_rows
        self._tables: dict[type, _Table] = {}
        self._committed = False
        self._lock: Lock | None = None
        self._constants = {"snapshot_id": snapshot_id, "snapshot_time": self.snapshot_time, "cluster": cluster}
        self._constant_columns: list[pa.Array] = [pa.array([], type=_CONSTANT_TYPES[name]) for name in self._constants]

    def __enter__(self) -> Snapshot:
        self.filesystem.create_dir(self.base, recursive=True)
        self._lock = Lock(
            self.filesystem, f"{self.base}/{LOCK}", local=isinstance(self.filesystem, pafs.LocalFileSystem)
        )
        self._lock.acquire()
        roll_back_uncommitted(self.filesystem, self.base)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if not self._committed:
                self._discard()
        finally:
            if self._lock is not None:
                self._lock.release()

    def add(self, record: Any) -> None:
        table = self._tables.get(type(record))
        if table is None:
            table = self._open(type(record))
        table.buffer.append(record)
        if len(table.buffer) >= self.batch_rows:
            self._flush(table)

    def add_all(self, records: Iterable[Any]) -> None:
        for record in records:
            self.add(record)

    def _open(self, record_type: type) -> _Table:
        name = table_name(record_type)
        directory = f"{self.base}/{name}/snapshot_date={self.snapshot_time:%Y-%m-%d}"
        self.filesystem.create_dir(directory, recursive=True)
        file = f"part-{safe_name(self.snapshot_id)}.parquet"
        table = _Table(record_type, arrow_schema(record_type), f"{directory}/{file}", f"{directory}/.{file}.tmp")
        self._tables[record_type] = table
        return table

    def _flush(self, table: _Table) -> None:
        if not table.buffer:
            return
        if table.writer is None:
            sink = self.filesystem.open_output_stream(table.tmp_path)
            table.writer = pq.ParquetWriter(sink, table.schema, compression="zstd")
        rows = table.buffer
        # Column by column straight from the records' slots (attrgetter, so the loop over the rows is
        # pyarrow's and C's): a dict per row (from_pylist) cost more than the Parquet encoding itself for
        # the millions of executor-stat rows of a large cluster.
        arrays = self._constant_arrays(len(rows))
        for column in table.schema.names[len(self._constants) :]:
            arrays.append(pa.array(list(map(attrgetter(column), rows)), type=table.schema.field(column).type))
        table.writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=table.schema))
        table.rows += len(rows)
        table.buffer = []

    def _constant_arrays(self, n: int) -> list[pa.Array]:
        """The snapshot's own columns (id, time, cluster) for ``n`` rows: slices of arrays made once, since
        turning ``n`` copies of the time into a timestamp array cost a millisecond per batch (0.13 s over
        the 122 batches of the 35k-znode benchmark tree)."""
        if n > len(self._constant_columns[0]):
            self._constant_columns = [
                pa.repeat(pa.scalar(value, type=_CONSTANT_TYPES[name]), max(n, self.batch_rows))
                for name, value in self._constants.items()
            ]
        return [column.slice(0, n) for column in self._constant_columns]

    def counts(self) -> dict[str, int]:
        return {table_name(t.record_type): t.rows + len(t.buffer) for t in self._tables.values()}

    def commit(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Finish every file, rename each into place, then write the manifest (the commit record)."""
        for table in self._tables.values():
            self._flush(table)
            if table.writer is not None:
                table.writer.close()
        for table in self._tables.values():
            if table.writer is not None:
                self.filesystem.move(table.tmp_path, table.final_path)
        manifest = {
            **manifest,
            "snapshot_id": self.snapshot_id,
            "cluster": self.cluster,
            "snapshot_time": self.snapshot_time.isoformat().replace("+00:00", "Z"),
            "snapshot_date": f"{self.snapshot_time:%Y-%m-%d}",
            "tables": dict(sorted(self.counts().items())),
            "files": sorted(t.final_path[len(self.base) + 1 :] for t in self._tables.values() if t.writer is not None),
            "schema_version": SCHEMA_VERSION,
            "tool": f"zkstorm {__version__}",
        }
        self.filesystem.create_dir(f"{self.base}/{MANIFESTS}", recursive=True)
        tmp = f"{self.base}/{MANIFESTS}/.{safe_name(self.snapshot_id)}.json.tmp"
        with self.filesystem.open_output_stream(tmp) as stream:
            stream.write(json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n")
        self.filesystem.move(tmp, f"{self.base}/{MANIFESTS}/{safe_name(self.snapshot_id)}.json")
        self._committed = True
        return manifest

    def _discard(self) -> None:
        for table in self._tables.values():
            try:
                if table.writer is not None:
                    table.writer.close()
                self.filesystem.delete_file(table.tmp_path)
            except (OSError, pa.ArrowException):
                pass


@dataclass
class SnapshotRun:
    """What one ``take_snapshot`` wrote."""

    snapshot_id: str
    manifest: dict[str, Any]
    znodes: int
    failures: int
    unreadable: int
    filesystem: Any
    base: str


def take_snapshot(
    cluster: Any,
    out: str,
    *,
    name: str | None = None,
    snapshot_id: str | None = None,
    at: datetime | None = None,
    stale_after_secs: float = 30.0,
) -> SnapshotRun:
    """One walk of an open ``Cluster`` (``zkstorm.model``) into one committed snapshot under ``out``: the
    nightly job, and ``diff --live``. ``name`` is the cluster name stored in every row (the cluster's
    default name unless given). Progress is ``cluster.stats.znodes``, for whoever polls it."""
    at = at or datetime.now(timezone.utc)
    name = name or cluster.default_name()
    snapshot_id = snapshot_id or default_snapshot_id(name, at)
    started = datetime.now(timezone.utc)
    zxid_min: int | None = None  # the range of the znodes' last changes, kept as two numbers
    zxid_max: int | None = None
    failures = unreadable = 0
    with Snapshot(out, snapshot_id=snapshot_id, cluster=name, snapshot_time=at) as snap:
        for record in cluster.snapshot_records(stale_after_secs=stale_after_secs):
            snap.add(record)
            kind = type(record)
            if kind is Znode:
                zxid = max(record.mzxid, record.pzxid)
                if zxid_min is None or zxid < zxid_min:
                    zxid_min = zxid
                if zxid_max is None or zxid > zxid_max:
                    zxid_max = zxid
            elif kind is DecodeFailure:
                failures += 1
            elif kind is Unreadable:
                unreadable += 1
        manifest = snap.commit(
            {
                # every root the walk decoded under (the ones asked for, and every one it discovered): each
                # Storm and Kafka row says which of them it was read under (its ``root`` column)
                "roots": {"storm": list(cluster.walked_roots.storm), "kafka": list(cluster.walked_roots.kafka)},
                "source": {
                    **cluster.describe_source(),
                    "storm_roots": list(cluster.roots.storm),
                    "kafka_roots": list(cluster.roots.kafka),
                },
                "started": _iso(started),
                "finished": _iso(datetime.now(timezone.utc)),
                "data_as_of": _iso(datetime.fromtimestamp(cluster.now(), timezone.utc)),
                "zxid_min": zxid_min,
                "zxid_max": zxid_max,
                "znodes": cluster.stats.znodes,
                "vanished": cluster.stats.vanished,
                "decode_failures": failures,
                "unreadable": unreadable,
            }
        )
    return SnapshotRun(snapshot_id, manifest, cluster.stats.znodes, failures, unreadable, snap.filesystem, snap.base)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class Lock:
    """An exclusive lock file. Local: created with O_EXCL; a lock whose process is gone on this host is
    stale and taken over. Other filesystems cannot create exclusively: a best-effort check, documented."""

    def __init__(self, filesystem: pafs.FileSystem, path: str, *, local: bool) -> None:
        self.filesystem, self.path, self.local = filesystem, path, local
        self.held = False

    def acquire(self) -> None:
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        for _ in range(2):
            try:
                if self.local:
                    fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                    with os.fdopen(fd, "w") as fh:
                        json.dump(owner, fh)
                else:
                    if self.filesystem.get_file_info(self.path).type != pafs.FileType.NotFound:
                        raise FileExistsError(self.path)
                    with self.filesystem.open_output_stream(self.path) as stream:
                        stream.write(json.dumps(owner).encode())
                self.held = True
                return
            except FileExistsError:
                holder = self._holder()
                if self.local and holder.get("host") == owner["host"] and not _alive(holder.get("pid")):
                    log.warning("taking over a stale snapshot lock of pid %s", holder.get("pid"))
                    self.filesystem.delete_file(self.path)
                    continue
                raise SnapshotError(
                    f"another snapshot is being written to this OUT (lock {self.path}, pid {holder.get('pid')} on "
                    f"{holder.get('host')})"
                ) from None
        raise SnapshotError(f"cannot take the lock {self.path}")

    def _holder(self) -> dict[str, Any]:
        try:
            with self.filesystem.open_input_stream(self.path) as stream:
                return dict(json.loads(stream.read()))
        except (OSError, ValueError):
            return {}

    def release(self) -> None:
        if self.held:
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(self.path)
            self.held = False


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True


def list_manifests(filesystem: pafs.FileSystem, base: str) -> list[dict[str, Any]]:
    selector = pafs.FileSelector(f"{base}/{MANIFESTS}", allow_not_found=True)
    out = []
    for info in filesystem.get_file_info(selector):
        if info.is_file and info.base_name.endswith(".json") and not info.base_name.startswith("."):
            with filesystem.open_input_stream(info.path) as stream:
                out.append(json.loads(stream.read()))
    return sorted(out, key=lambda m: m["snapshot_time"])


def roll_back_uncommitted(filesystem: pafs.FileSystem, base: str) -> None:
    """Remove what a killed run left: hidden temporary files, and part files no manifest lists."""
    committed = {f for m in list_manifests(filesystem, base) for f in m.get("files", ())}
    selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
    for info in filesystem.get_file_info(selector):
        if not info.is_file:
            continue
        rel = info.path[len(base) + 1 :]
        if rel.startswith((MANIFESTS + "/", LOCK)):
            continue
        if info.base_name.startswith(".") and info.base_name.endswith(".tmp"):
            filesystem.delete_file(info.path)
        elif info.base_name.startswith("part-") and rel not in committed:
            log.warning("removing %s: written by a run that did not commit", rel)
            filesystem.delete_file(info.path)


def prune(filesystem: pafs.FileSystem, base: str, keep_days: int, today: date) -> list[str]:
    """Delete snapshot_date partitions (and their manifests) older than ``keep_days``."""
    cutoff = today - timedelta(days=keep_days)
    removed = []
    for info in filesystem.get_file_info(pafs.FileSelector(base, allow_not_found=True)):
        if info.type != pafs.FileType.Directory or info.base_name.startswith(("_", ".")):
            continue
        for part in filesystem.get_file_info(pafs.FileSelector(info.path, allow_not_found=True)):
            match = re.fullmatch(r"snapshot_date=(\d{4}-\d{2}-\d{2})", part.base_name)
            if match and date.fromisoformat(match.group(1)) < cutoff:
                filesystem.delete_dir(part.path)
                removed.append(part.path[len(base) + 1 :])
    for manifest in list_manifests(filesystem, base):
        if date.fromisoformat(manifest["snapshot_date"]) < cutoff:
            filesystem.delete_file(f"{base}/{MANIFESTS}/{safe_name(manifest['snapshot_id'])}.json")
    return removed


def manifest_root(manifest: dict[str, Any], table: str) -> str | None:
    """The root the rows of ``table`` were read under in a snapshot written before rows carried their
    ``root`` (a manifest without ``roots``): the one Storm or Kafka root its ``source`` names. Such a
    snapshot was taken with one root per system, and every row of a Storm or Kafka table reads as
    being under it (rows of other roots on the same ensemble, which it decoded too, cannot be told
    apart). None for a snapshot that has the column, a table of neither system, or no root named."""
    if "roots" in manifest:
        return None
    system = table.split("_", 1)[0]
    named = (manifest.get("source") or {}).get(f"{system}_roots") if system in ("storm", "kafka") else None
    return named[0] if isinstance(named, list) and len(named) == 1 and isinstance(named[0], str) else None


def schema_markdown() -> str:
    """The snapshot schema as Markdown (tables, columns, Arrow types), as the README documents it."""
    from .records import RECORD_TYPES, VIEW_ONLY_TYPES

    lines = [
        f"Schema version {SCHEMA_VERSION}. Every table starts with `snapshot_id` (string), `snapshot_time` "
        "(timestamp[ms, UTC]) and `cluster` (string); `snapshot_date` comes from the directory.",
        "",
    ]
    lines += ["| table | columns (type; `?` = nullable) |", "|---|---|"]
    for record_type in sorted(set(RECORD_TYPES) - set(VIEW_ONLY_TYPES), key=table_name):
        cols = ", ".join(
            f"`{c.name}` {c.kind.replace('str', 'string')}{'?' if c.nullable else ''}" for c in columns(record_type)
        )
        lines.append(f"| `{table_name(record_type)}` | {cols} |")
    return "\n".join(lines) + "\n"
