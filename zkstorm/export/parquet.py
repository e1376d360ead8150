"""Parquet snapshots: every decoded record of one walk, one dataset per record type.

Layout under OUT (a local path or any filesystem URI pyarrow supports)::

    OUT/<table>/snapshot_date=YYYY-MM-DD/part-<snapshot id>-<run token>.parquet
    OUT/_manifests/<snapshot id>.json          the commit record of a snapshot
    OUT/_lock                                   held while a snapshot is written (``zkstorm.export.lock``)

A snapshot commits in one atomic step: the rename of its manifest. Each table's file is streamed in
bounded row groups to a hidden ``.part-….tmp`` (pyarrow and Spark skip names starting with ``.`` and
``_``), renamed to a name of this run's own (the run token) when whole, and synced; then the manifest,
which lists exactly those files, is written beside its final name, synced, and renamed over the
previous one (a re-run of the same snapshot id); only then are the files the previous manifest listed
removed. Until that rename a reader of the manifests sees the committed snapshot unchanged, whenever
the run fails or is killed; the next run removes what a stopped one left. Readers read exactly the
files a manifest lists (``zkstorm.export.manifest``). Where the filesystem cannot rename (object stores)
pyarrow copies, then deletes: each file is still whole, and the manifest is still written last. The
snapshot id is not a partition directory, because Spark refuses a column that is both in the data files
and in a ``key=value`` path.

This module is the one place that maps record kinds to Arrow types (``arrow_schema``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import re
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from operator import attrgetter
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .. import __version__
from ..defaults import LOCK_STALE_AFTER_SECS
from ..errors import DamagedManifestError, SnapshotError
from ..records import CHANGE_TYPES, DecodeFailure, KafkaClusterId, Unreadable, ZkUsage, Znode
from ..schema import columns, kind_name
from ..units import iso_utc
from .lock import LOCK, UNREADABLE_GRACE_SECS, Lock, os_reason
from .manifest import (
    MANIFESTS,
    SNAPSHOT,
    dataset_of,
    is_manifest_name,
    manifest_name,
    manifest_time,
    may_list,
    of_kind,
    other_kind_error,
    parse_manifest,
    part_file_name,
    safe_name,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_ARROW = {
    "str": pa.string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "datetime": pa.timestamp("ms", tz="UTC"),
}
# the columns every table starts with, the same value in every row of a snapshot
_CONSTANT_TYPES = {"snapshot_id": pa.string(), "snapshot_time": _ARROW["datetime"], "cluster": pa.string()}
_SPECIAL_TABLES = {
    Znode: "znodes",
    DecodeFailure: "decode_failures",
    Unreadable: "unreadable_znodes",
    ZkUsage: "zk_usage",  # a mass noun: one table of what fills ZooKeeper
}


def table_name(record_type: type) -> str:
    """The dataset of a record type: its kind in the plural (``storm_topology`` → ``storm_topologies``)."""
    special = _SPECIAL_TABLES.get(record_type)
    if special:
        return special
    kind = kind_name(record_type)
    if record_type in CHANGE_TYPES:  # an event, named as one: kafka_broker_gone, not kafka_broker_gones
        return kind
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


def open_filesystem(out: str) -> tuple[pafs.FileSystem, str]:
    """A dataset location as (filesystem, base path): a local path, or any URI pyarrow supports.

    ``s3://`` takes its credentials from the standard AWS environment variables (pyarrow reads them, and
    nothing of them reaches an output or a log); its endpoint from ``AWS_ENDPOINT_URL_S3`` or
    ``AWS_ENDPOINT_URL`` (for MinIO, Ceph, a test server), read here because pyarrow 23 ignores them and
    sends the requests to AWS (apache/arrow issue 49643; 26 reads them)."""
    if "://" not in out:
        return pafs.LocalFileSystem(), os.path.abspath(out)
    if out.startswith("s3a://"):
        # Hadoop's name for the same bucket (its S3A connector): one URL for the nightly snapshot and for
        # the history job on a Spark cluster with hadoop-aws; pyarrow knows it as s3://
        out = "s3://" + out[len("s3a://") :]
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if out.startswith("s3://") and endpoint and "?" not in out:  # a query in the URI says it all itself
        return pafs.S3FileSystem(endpoint_override=endpoint), out[len("s3://") :].rstrip("/")
    filesystem, base = pafs.FileSystem.from_uri(out)
    return filesystem, base


def default_snapshot_id(cluster: str, at: datetime) -> str:
    """One snapshot per cluster per UTC day: a re-run the same day replaces it instead of adding rows."""
    return f"{safe_name(cluster)}@{at:%Y-%m-%d}"


@dataclass
class _Table:
    record_type: type
    schema: pa.Schema
    final_path: str
    tmp_path: str
    sink: Any = None  # the output stream, closed by us: ParquetWriter.close leaves a stream it was given open
    writer: pq.ParquetWriter | None = None
    buffer: list[Any] = field(default_factory=list)  # the records themselves, turned into columns per batch
    # or rows that came as columns (``StormExecutorStatColumns``): their columns, extended batch by batch
    column_buffer: dict[str, list[Any]] = field(default_factory=dict)
    column_rows: int = 0
    rows: int = 0
    placed: bool = False  # renamed to its final name (not committed until the manifest lists it)


@contextlib.contextmanager
def _io(action: str, path: str) -> Iterator[None]:
    """A filesystem's refusal (full, read-only, no permission) as one line naming the path, not a trace."""
    try:
        yield
    except OSError as exc:
        raise SnapshotError(f"cannot {action} {path}: {os_reason(exc)}") from None


class Snapshot:
    """Writes one snapshot. Use ``with Snapshot(...) as snap: snap.add(record) …; snap.commit(manifest)``.

    Entering takes the lock and removes what a stopped run left. Leaving the block without ``commit``
    (an error, a full disk, Ctrl-C, SIGTERM) deletes every file this run wrote; the committed snapshot of
    the same id, if any, is never touched before the commit.
    """

    def __init__(
        self,
        out: str,
        *,
        snapshot_id: str,
        cluster: str,
        snapshot_time: datetime,
        batch_rows: int = 4096,
        lock_stale_after_secs: float = LOCK_STALE_AFTER_SECS,
        dataset: str = SNAPSHOT,
    ) -> None:
        self.filesystem, self.base = open_filesystem(out)
        self.dataset = dataset  # the kind of dataset OUT holds (``export.manifest``): snapshot or changes
        self.out = out
        self.snapshot_id = snapshot_id
        self.cluster = cluster
        self.snapshot_time = snapshot_time.astimezone(UTC)
        self.batch_rows = batch_rows
        self.lock_stale_after_secs = lock_stale_after_secs
        self.run_token = secrets.token_hex(4)
        self._local = isinstance(self.filesystem, pafs.LocalFileSystem)
        self._manifest_path = f"{self.base}/{MANIFESTS}/{manifest_name(snapshot_id)}"
        self._manifest_tmp = f"{self.base}/{MANIFESTS}/.{manifest_name(snapshot_id)}.tmp"
        self._tables: dict[type, _Table] = {}
        self._columnar: dict[type, _Table] = {}  # a type of columns (``ROW_TYPE``) → its rows' table
        self._committed = False
        self._commit_tried = False  # the manifest's rename was attempted: only then can a failure be a commit
        self._lock: Lock | None = None
        self._constants = {"snapshot_id": snapshot_id, "snapshot_time": self.snapshot_time, "cluster": cluster}
        self._constant_columns: list[pa.Array] = [pa.array([], type=_CONSTANT_TYPES[name]) for name in self._constants]

    def __enter__(self) -> Snapshot:
        with _io("create", self.base):
            self.filesystem.create_dir(self.base, recursive=True)
        self._lock = Lock(
            self.filesystem, f"{self.base}/{LOCK}", local=self._local, stale_after_secs=self.lock_stale_after_secs
        )
        self._lock.acquire()
        try:
            self._refuse_other_kind()  # before roll-back: the other kind's files are not this run's to judge
            self._replaced_files()  # a damaged manifest of this id stops the run now, not after the walk
            roll_back_uncommitted(self.filesystem, self.base)
        except BaseException:
            self._lock.release()
            raise
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
            table = self._columnar.get(type(record)) or self._open(type(record))
        if table.record_type is not type(record):  # rows that come as columns
            self._add_columns(table, record)
            return
        if table.column_rows:
            self._flush(table)  # rows in the order they came
        table.buffer.append(record)
        if len(table.buffer) >= self.batch_rows:
            self._flush(table)

    def _add_columns(self, table: _Table, batch: Any) -> None:
        """The rows of a batch of columns (``StormExecutorStatColumns``): its columns extend the table's,
        with no Python object per row."""
        if table.buffer:
            self._flush(table)
        columns = batch.columns()
        if not table.column_buffer:
            table.column_buffer = {name: [] for name in columns}
        for name, values in columns.items():
            table.column_buffer[name] += values
        table.column_rows += len(batch)
        if table.column_rows >= self.batch_rows:
            self._flush(table)

    def add_all(self, records: Iterable[Any]) -> None:
        for record in records:
            self.add(record)

    def _open(self, record_type: type) -> _Table:
        row_type = getattr(record_type, "ROW_TYPE", None)
        if row_type is not None:  # columns of another type's rows: that type's table
            table = self._tables.get(row_type) or self._open(row_type)
            self._columnar[record_type] = table
            return table
        name = table_name(record_type)
        directory = f"{self.base}/{name}/snapshot_date={self.snapshot_time:%Y-%m-%d}"
        with _io("create", directory):
            self.filesystem.create_dir(directory, recursive=True)
        file = part_file_name(self.snapshot_id, self.run_token)
        table = _Table(record_type, arrow_schema(record_type), f"{directory}/{file}", f"{directory}/.{file}.tmp")
        self._tables[record_type] = table
        return table

    def _flush(self, table: _Table) -> None:
        if table.column_rows:
            n = table.column_rows
            names = table.schema.names[len(self._constants) :]
            arrays = self._constant_arrays(n)
            arrays += [pa.array(table.column_buffer[c], type=table.schema.field(c).type) for c in names]
            table.column_buffer, table.column_rows = {}, 0
            self._write(table, arrays, n)
        if not table.buffer:
            return
        rows = table.buffer
        # Column by column straight from the records' slots (attrgetter, so the loop over the rows is
        # pyarrow's and C's): a dict per row (from_pylist) cost more than the Parquet encoding itself for
        # the millions of executor-stat rows of a large cluster.
        arrays = self._constant_arrays(len(rows))
        for column in table.schema.names[len(self._constants) :]:
            arrays.append(pa.array(list(map(attrgetter(column), rows)), type=table.schema.field(column).type))
        table.buffer = []
        self._write(table, arrays, len(rows))

    def _write(self, table: _Table, arrays: list[pa.Array], n: int) -> None:
        with _io("write", table.tmp_path):
            if table.writer is None:
                table.sink = self.filesystem.open_output_stream(table.tmp_path)
                table.writer = pq.ParquetWriter(table.sink, table.schema, compression="zstd")
            table.writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=table.schema))
        table.rows += n

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
        return {table_name(t.record_type): t.rows + len(t.buffer) + t.column_rows for t in self._tables.values()}

    def commit(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Finish and place every file under this run's names, then commit by renaming the manifest that
        lists them over the previous one; then remove the files the previous one listed."""
        for table in self._tables.values():
            self._finish(table)
        for table in self._tables.values():
            if table.writer is not None:
                with _io("write", table.final_path):
                    self.filesystem.move(table.tmp_path, table.final_path)
                table.placed = True
        replaced = self._replaced_files()
        manifest = {
            **manifest,
            "snapshot_id": self.snapshot_id,
            "cluster": self.cluster,
            "snapshot_time": iso_utc(self.snapshot_time),
            "snapshot_date": f"{self.snapshot_time:%Y-%m-%d}",
            "tables": dict(sorted(self.counts().items())),
            "files": self._files(),
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "tool": f"zkstorm {__version__}",
        }
        self._write_manifest(manifest)
        self._committed = True
        self._remove_replaced(replaced, set(manifest["files"]))
        return manifest

    def _files(self) -> list[str]:
        """This run's files, relative to OUT, as the manifest lists them."""
        return sorted(t.final_path[len(self.base) + 1 :] for t in self._tables.values() if t.writer is not None)

    def _finish(self, table: _Table) -> None:
        """Write what is buffered and the footer, close the stream, and sync the file to disk: a committed
        manifest must not outlive, in a power cut, the data of a file it lists."""
        self._flush(table)
        if table.writer is None:
            return
        with _io("write", table.tmp_path):
            table.writer.close()
            table.sink.close()
            self._sync(table.tmp_path)

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        """The commit: the manifest written whole beside its name, synced, then renamed over it."""
        with _io("create", f"{self.base}/{MANIFESTS}"):
            self.filesystem.create_dir(f"{self.base}/{MANIFESTS}", recursive=True)
        with _io("write", self._manifest_tmp):
            with self.filesystem.open_output_stream(self._manifest_tmp) as stream:
                stream.write(json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n")
            self._sync(self._manifest_tmp)
        self._commit_tried = True
        with _io("write", self._manifest_path):
            self.filesystem.move(self._manifest_tmp, self._manifest_path)

    def _sync(self, path: str) -> None:
        if self._local:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _refuse_other_kind(self) -> None:
        """A folder holding the other kind of dataset is refused before anything is written or removed: a
        snapshot and a changes run of one id would replace each other's manifest and files."""
        others = [
            m for m in scan_manifests(self.filesystem, self.base).manifests.values() if dataset_of(m) != self.dataset
        ]
        if others:
            raise SnapshotError(other_kind_error(self.out, self.dataset, dataset_of(others[0]), len(others)))

    def _replaced_files(self) -> list[str]:
        """The files the committed manifest of this snapshot id lists (none if there is none). A damaged one
        stops the run: replacing it would leave the files it lists looking like any run's leftovers."""
        try:
            previous = read_manifest(self.filesystem, self._manifest_path)
        except DamagedManifestError as exc:
            raise SnapshotError(
                f"cannot re-run snapshot {self.snapshot_id!r}: its manifest {exc.path} is damaged ({exc.reason}); "
                "its files are kept. Repair or move that manifest aside to re-run it, or give another --snapshot-id"
            ) from None
        return [] if previous is None else list(previous["files"])

    def _remove_replaced(self, replaced: list[str], kept: set[str]) -> None:
        """After the commit: the previous run's files, which no manifest lists any more. One that cannot be
        removed now is a leftover the next run removes."""
        for relative in replaced:
            if relative in kept:
                continue
            try:
                self.filesystem.delete_file(f"{self.base}/{relative}")
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("cannot remove %s/%s, replaced by this run: %s", self.base, relative, os_reason(exc))

    def _discard(self) -> None:
        """Remove what this run wrote: its temporary files and the files it placed. Not the placed files if
        the manifest lists them after all (stopped between the commit's rename and its bookkeeping)."""
        for table in self._tables.values():
            with contextlib.suppress(OSError, pa.ArrowException):
                if table.writer is not None:
                    table.writer.close()  # fails again on a full disk: the file is deleted all the same
            with contextlib.suppress(OSError, pa.ArrowException):
                if table.sink is not None:
                    table.sink.close()
        placed = [t.final_path for t in self._tables.values() if t.placed]
        if placed and self._commit_tried and self._committed_after_all():
            return
        for path in [t.tmp_path for t in self._tables.values()] + placed + [self._manifest_tmp]:
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(path)

    def _committed_after_all(self) -> bool:
        try:
            committed = read_manifest(self.filesystem, self._manifest_path)
        except (DamagedManifestError, OSError):
            return True  # cannot tell: keep them; the next run's roll-back decides under its rules
        return committed is not None and bool(set(committed["files"]) & set(self._files()))


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
    lock_stale_after_secs: float = LOCK_STALE_AFTER_SECS,
) -> SnapshotRun:
    """One walk of an open ``Cluster`` (``zkstorm.model``) into one committed snapshot under ``out``: the
    nightly job, and ``diff --live``. ``name`` is the cluster name stored in every row (the cluster's
    default name unless given). Progress is ``cluster.stats.znodes``, for whoever polls it.
    ``lock_stale_after_secs``: when another host's lock is taken over (``zkstorm.export.lock``)."""
    at = at or datetime.now(UTC)
    name = name or cluster.default_name()
    snapshot_id = snapshot_id or default_snapshot_id(name, at)
    started = datetime.now(UTC)
    zxid_min: int | None = None  # the range of the znodes' last changes, kept as two numbers
    zxid_max: int | None = None
    failures = unreadable = 0
    kafka_cluster_ids: dict[str, str] = {}  # Kafka root → its cluster id (/cluster/id), for the history
    with Snapshot(
        out, snapshot_id=snapshot_id, cluster=name, snapshot_time=at, lock_stale_after_secs=lock_stale_after_secs
    ) as snap:
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
            elif kind is KafkaClusterId and record.cluster_id:
                kafka_cluster_ids[record.root] = record.cluster_id
        manifest = snap.commit(
            {
                # every root the walk decoded under (the ones asked for, and every one it discovered): each
                # Storm and Kafka row says which of them it was read under (its ``root`` column)
                "roots": {"storm": list(cluster.walked_roots.storm), "kafka": list(cluster.walked_roots.kafka)},
                # the id of each Kafka cluster read: one cluster is one history across its move from
                # ZooKeeper to KRaft (its root changes, its id does not: ``jobs.inputs.kafka_series``)
                "kafka_cluster_ids": dict(sorted(kafka_cluster_ids.items())),
                "source": {
                    **cluster.describe_source(),
                    "storm_roots": list(cluster.roots.storm),
                    "kafka_roots": list(cluster.roots.kafka),
                },
                "started": iso_utc(started),
                "finished": iso_utc(datetime.now(UTC)),
                "data_as_of": iso_utc(datetime.fromtimestamp(cluster.now(), UTC)),
                "zxid_min": zxid_min,
                "zxid_max": zxid_max,
                "znodes": cluster.stats.znodes,
                "vanished": cluster.stats.vanished,
                "decode_failures": failures,
                "unreadable": unreadable,
            }
        )
    return SnapshotRun(snapshot_id, manifest, cluster.stats.znodes, failures, unreadable, snap.filesystem, snap.base)


def read_manifest(filesystem: pafs.FileSystem, path: str) -> dict[str, Any] | None:
    """The manifest at ``path``, checked (``zkstorm.export.manifest.parse_manifest``); None if there is none. One
    that cannot be read, even for an I/O error, is damaged: what it lists must not look unlisted."""
    try:
        # asked first: not every filesystem (object stores) reports a missing file as FileNotFoundError
        if filesystem.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        with filesystem.open_input_stream(path) as stream:
            data = stream.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DamagedManifestError(path, f"cannot read it: {os_reason(exc)}") from None
    return parse_manifest(path, data)


@dataclass
class ManifestScan:
    """Every manifest under OUT: the readable ones (by path, oldest snapshot first) and the damaged."""

    manifests: dict[str, dict[str, Any]]
    damaged: list[DamagedManifestError]


def scan_manifests(filesystem: pafs.FileSystem, base: str) -> ManifestScan:
    directory = f"{base}/{MANIFESTS}"
    with _io("list", directory):
        infos = filesystem.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
    found: list[tuple[str, dict[str, Any]]] = []
    damaged = []
    for info in infos:
        if info.type == pafs.FileType.Directory or not is_manifest_name(info.base_name):
            continue
        try:
            manifest = read_manifest(filesystem, info.path)
        except DamagedManifestError as exc:
            damaged.append(exc)
            continue
        if manifest is not None:
            found.append((info.path, manifest))
    found.sort(key=lambda item: (manifest_time(item[1]), item[1]["snapshot_id"]))
    return ManifestScan(dict(found), sorted(damaged, key=lambda d: d.path))


def list_manifests(filesystem: pafs.FileSystem, base: str, dataset: str = SNAPSHOT) -> list[dict[str, Any]]:
    """The committed manifests of one kind of dataset (snapshots, or changes runs), oldest first; each
    damaged one is skipped with a warning, a folder of the other kind refused (``manifest.of_kind``)."""
    scan = scan_manifests(filesystem, base)
    for damaged in scan.damaged:
        log.warning("%s; skipped", str(damaged))
    return of_kind(list(scan.manifests.values()), base, dataset)


def roll_back_uncommitted(filesystem: pafs.FileSystem, base: str) -> None:
    """Remove what a stopped run left, under the lock (so no run is writing): temporary files, and part
    files that are provably uncommitted: listed by no manifest, and of no snapshot id whose manifest is
    damaged (whatever such a manifest listed is kept until it is repaired or moved aside)."""
    scan = scan_manifests(filesystem, base)
    committed = {f for m in scan.manifests.values() for f in m["files"]}
    guarded = [posixpath.basename(d.path)[: -len(".json")] for d in scan.damaged]
    for damaged in scan.damaged:
        log.warning("%s; skipped, and the part files of its snapshot id are kept", str(damaged))
    with _io("list", base):
        infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    for info in infos:
        if info.type == pafs.FileType.Directory:
            continue
        relative = info.path[len(base) + 1 :]
        kind = _leftover_kind(relative)
        if kind == "part" and (relative in committed or any(may_list(stem, info.base_name) for stem in guarded)):
            continue
        if kind == "part":
            log.warning("removing %s: written by a run that did not commit", relative)
        if kind == "lock-temporary" and time.time() - (info.mtime_ns or 0) / 1e9 < UNREADABLE_GRACE_SECS:
            continue  # a run starting now is between writing its lock's owner and linking it into place
        if kind is not None:
            with _io("remove", info.path), contextlib.suppress(FileNotFoundError):
                filesystem.delete_file(info.path)


def _leftover_kind(relative: str) -> str | None:
    """What a path under OUT is, for roll-back: a run's temporary file (``temporary``; a lock's owner
    before it is linked into place, ``lock-temporary``), a table's part file (``part``), or nothing
    roll-back touches (manifests, the lock, anything not zkstorm's)."""
    parts = relative.split("/")
    name = parts[-1]
    temporary = name.startswith(".") and name.endswith(".tmp")
    if len(parts) == 1:
        return "lock-temporary" if temporary and name.startswith(f".{LOCK}-") else None
    if len(parts) == 2:
        return "temporary" if temporary and parts[0] == MANIFESTS else None
    if len(parts) != 3 or parts[0][:1] in ("_", ".") or not parts[1].startswith("snapshot_date="):
        return None
    if temporary and name.startswith(".part-"):
        return "temporary"
    return "part" if name.startswith("part-") and name.endswith(".parquet") else None


def prune(filesystem: pafs.FileSystem, base: str, keep_days: int, today: date) -> list[str]:
    """Delete snapshot_date partitions older than ``keep_days``, their manifests first: a manifest never
    outlives the files it lists, whenever the run stops. A damaged manifest is left alone."""
    cutoff = today - timedelta(days=keep_days)
    for path, manifest in scan_manifests(filesystem, base).manifests.items():
        if date.fromisoformat(manifest["snapshot_date"]) < cutoff:
            with _io("remove", path):
                filesystem.delete_file(path)
    removed = []
    with _io("list", base):
        tables = filesystem.get_file_info(pafs.FileSelector(base, allow_not_found=True))
    for info in tables:
        if info.type != pafs.FileType.Directory or info.base_name.startswith(("_", ".")):
            continue
        for part in filesystem.get_file_info(pafs.FileSelector(info.path, allow_not_found=True)):
            match = re.fullmatch(r"snapshot_date=(\d{4}-\d{2}-\d{2})", part.base_name)
            if match and date.fromisoformat(match.group(1)) < cutoff:
                with _io("remove", part.path):
                    filesystem.delete_dir(part.path)
                removed.append(part.path[len(base) + 1 :])
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


def schema_markdown(record_types: tuple[type, ...] | None = None) -> str:
    """The snapshot schema as Markdown (tables, columns, Arrow types), as docs/snapshots.md documents it; or that
    of ``record_types`` (the change kinds that ``changes --out`` writes with the same writer)."""
    from ..records import RECORD_TYPES, VIEW_ONLY_TYPES

    lines = [
        f"Schema version {SCHEMA_VERSION}. Every table starts with `snapshot_id` (string), `snapshot_time` "
        "(timestamp[ms, UTC]) and `cluster` (string); `snapshot_date` comes from the directory.",
        "",
    ]
    lines += ["| table | columns (type; `?` = nullable) |", "|---|---|"]
    if record_types is None:
        record_types = tuple(set(RECORD_TYPES) - set(VIEW_ONLY_TYPES) - set(CHANGE_TYPES))
    for record_type in sorted(record_types, key=table_name):
        cols = ", ".join(
            f"`{c.name}` {c.kind.replace('str', 'string')}{'?' if c.nullable else ''}" for c in columns(record_type)
        )
        lines.append(f"| `{table_name(record_type)}` | {cols} |")
    return "\n".join(lines) + "\n"
