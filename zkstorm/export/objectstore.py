"""Locations Spark cannot open, read and written through pyarrow: ``s3://`` on a Spark without an S3 connector.

pyspark ships Hadoop's client but no S3 connector: ``s3a://`` needs the hadoop-aws jar and the AWS SDK,
which come from Maven Central only (neither PyPI nor Debian packages them), and ``s3://`` has no Hadoop
filesystem at all outside EMR. pyarrow opens ``s3://`` itself (``export.parquet.open_filesystem``,
endpoint and credentials from the standard AWS environment variables). So for a location Spark's Hadoop
cannot open but pyarrow can, the history job goes through a local staging folder:

- snapshots: the manifests are read with pyarrow, and the files a run reads are copied to the staging
  folder table by table, just before Spark reads them (streamed: memory stays pyarrow's copy buffer; disk
  holds the tables of the snapshots this run reads, at most what the bucket holds of them);
- ``--out``: the history's store (``jobs/store.py``'s ``_history``: facts and run markers, small) is
  copied down first; the job writes to the staging folder as it writes to any folder; then the store's
  new facts are uploaded, its run markers (the commit) after them, what the run replaced is removed, and
  every metric table is replaced. A run that dies before its markers are up leaves nothing the next run
  reads, as locally.

A location Spark can open (a local path, ``hdfs://``, ``s3a://`` with the connector, EMR's ``s3://``) is
Spark's, as before. The staging folder lives in the driver's temporary directory (``TMPDIR``), so this
works with a local master only; on a cluster the executors could not read it, and the job says so.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from ..errors import ZkstormError

log = logging.getLogger(__name__)


def spark_can_open(spark: Any, location: str) -> bool:
    """Whether Spark's Hadoop has a filesystem for ``location``'s scheme (a plain path always: local)."""
    scheme = urlparse(location).scheme
    if "://" not in location or scheme in ("", "file"):
        return True
    jvm = spark.sparkContext._jvm
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, spark.sparkContext._jsc.hadoopConfiguration())
    except Exception:  # Py4J: UnsupportedFileSystemException ("No FileSystem for scheme"), or the class missing
        return False
    return True


def hadoop_aws(spark: Any) -> str:
    """The S3A connector's Maven coordinates for this Spark: hadoop-aws at the version of its own Hadoop
    (the two must match; hadoop-aws brings the AWS SDK it was built with)."""
    try:
        version = str(spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion())
    except Exception:  # Py4J: no Hadoop on this Spark's classpath at all
        version = "<your Spark's Hadoop version>"
    return f"org.apache.hadoop:hadoop-aws:{version}"


class Staging:
    """The local copies of one history run's remote locations; removed when the run ends.

    ``snapshots(base)`` and ``out(location)`` say how the job reaches a location: as it is when Spark can
    open it, else through this staging folder."""

    def __init__(self, spark: Any, *, store: str) -> None:
        self.spark = spark
        self.store = store  # the folder of the history's store under --out (facts, then run markers)
        self._folder: str | None = None
        self._published: list[tuple[str, str]] = []  # (local folder, remote location) to upload at the end

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def needed(self, location: str) -> bool:
        """True when ``location`` goes through pyarrow and this folder; refused on a cluster master."""
        if spark_can_open(self.spark, location):
            return False
        master = str(self.spark.sparkContext.master)
        if not master.startswith("local"):
            scheme = urlparse(location).scheme
            raise ZkstormError(
                f"Spark cannot open {scheme}:// here (no Hadoop filesystem for it), and a local copy is readable "
                f"by a local master only, not {master}: use s3a:// with --packages {hadoop_aws(self.spark)} "
                "(spark.jars.packages), or run zkstorm history with a local master"
            )
        return True

    def folder(self, name: str) -> str:
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="zkstorm-history-")
        path = os.path.join(self._folder, name)
        os.makedirs(path, exist_ok=True)
        return path

    # snapshots ----------------------------------------------------------------------------------------

    def fetch(self, base: str, relative: list[str]) -> list[str]:
        """Local copies of the files ``relative`` (to ``base``), copied now unless already here, in the
        same layout (``<table>/snapshot_date=…/part-….parquet``, which Spark reads its partition from)."""
        from .parquet import open_filesystem

        filesystem, remote = open_filesystem(base)
        local = self.folder("snapshots")
        paths = []
        for file in relative:
            target = os.path.join(local, *file.split("/"))
            if not os.path.exists(target):
                _copy_file(filesystem, f"{remote}/{file}", target)
            paths.append(target)
        return paths

    # --out ----------------------------------------------------------------------------------------------

    def out(self, location: str) -> str:
        """Where the job writes ``location``: itself, or a staging folder holding a copy of it (``publish``
        uploads it): its history store and its tables, which a nightly run appends to (``jobs/store.py``)."""
        if not self.needed(location):
            return location
        from .parquet import open_filesystem

        filesystem, remote = open_filesystem(location)
        local = self.folder("out")
        for info in _files_under(filesystem, remote):
            _copy_file(filesystem, info.path, os.path.join(local, *info.path[len(remote) + 1 :].split("/")))
        self._published.append((local, location))
        return local

    def publish(self) -> None:
        """Upload each staged ``--out``: the store's facts, then its run markers (the commit), then remove what
        the run replaced, then replace each metric table."""
        for local, location in self._published:
            _publish(local, location, self.store)


def _publish(local: str, location: str, store_folder: str) -> None:
    import pyarrow.fs as pafs

    from .parquet import open_filesystem

    filesystem, remote = open_filesystem(location)
    staged = _local_files(local)
    store = [f for f in staged if f.startswith(f"{store_folder}/")]
    there = {info.path[len(remote) + 1 :] for info in _files_under(filesystem, f"{remote}/{store_folder}")}
    for relative in sorted(store, key=lambda f: f.startswith(f"{store_folder}/runs/")):  # facts first, markers last
        if relative not in there:
            _upload(filesystem, os.path.join(local, relative), f"{remote}/{relative}")
    for relative in sorted(there - set(store)):  # the runs this one replaced (a rebuild, a compaction)
        with contextlib.suppress(FileNotFoundError):
            filesystem.delete_file(f"{remote}/{relative}")
    tables = sorted({f.split("/", 1)[0] for f in staged if "/" in f and not f.startswith(f"{store_folder}/")})
    for table in tables:
        if filesystem.get_file_info(f"{remote}/{table}").type != pafs.FileType.NotFound:
            filesystem.delete_dir(f"{remote}/{table}")
        for relative in (f for f in staged if f.startswith(f"{table}/")):
            _upload(filesystem, os.path.join(local, relative), f"{remote}/{relative}")


def _local_files(folder: str) -> list[str]:
    """Every file under ``folder``, relative, without Spark's hidden checksums (``.part-….crc``)."""
    found = []
    for directory, _, names in os.walk(folder):
        for name in names:
            if not name.startswith("."):
                found.append(os.path.relpath(os.path.join(directory, name), folder).replace(os.sep, "/"))
    return sorted(found)


def _files_under(filesystem: Any, path: str) -> Iterator[Any]:
    import pyarrow.fs as pafs

    for info in filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True)):
        if info.type == pafs.FileType.File:
            yield info


_COPY_CHUNK = 8 << 20


def _copy_file(filesystem: Any, source: str, target: str) -> None:
    """One remote file to a local path, in chunks (memory stays one chunk whatever the file's size)."""
    os.makedirs(posixpath.dirname(target) or ".", exist_ok=True)
    with filesystem.open_input_stream(source) as stream, open(target, "wb") as sink:
        while chunk := stream.read(_COPY_CHUNK):
            sink.write(chunk)


def _upload(filesystem: Any, source: str, target: str) -> None:
    with open(source, "rb") as local, filesystem.open_output_stream(target) as sink:
        while chunk := local.read(_COPY_CHUNK):
            sink.write(chunk)
