"""The history job on a Spark standalone cluster, over ``s3a://`` and ``hdfs://`` for real.

A master and a worker started from pyspark's own launcher, the job sent with pyspark's ``spark-submit``
exactly as the docs' line says (``--packages`` hadoop-aws for ``s3a://``, the package zipped for the
executors), reading snapshots from moto's S3 server through Hadoop's S3A connector and from an HDFS of
Hadoop's own minicluster, writing its history there: a full run of three nights, then an incremental run
adding two, and every table equal to a local run over local copies of the same snapshots. The settings
the test adds to the docs' line are the test environment's: moto's endpoint for S3A, and one shuffle
partition: each executor has one core, and each task is mostly its scheduling (a full run of three nights
on it: 799 tasks with two partitions, 533 with one, as Spark's event log counts them); one core per job
(``spark.cores.max``), so that the s3a and the hdfs jobs run at once on the worker's two; and the client
compiler alone for the executors (``CLIENT_COMPILER``).

The two filesystems' runs go on at the same time (``pipelines``): a job's driver, not its one executor, is
most of its time (Spark's event log of the s3a full run: 42 s, of which jobs 21 s), so two of them share
the machine's two cores well. The local run they are compared with is made meanwhile, on the suite's own
session. This file alone on this machine: 264 s with the runs one after the other, 191 s with them at once.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest

from tests.real import harness
from tests.real.hadoop import HADOOP_AWS, HADOOP_PROFILE, MiniHdfs, SparkStandalone
from tests.real.hadoop import spark_submit as submit
from tests.s3server import S3Server
from zkstorm.export.parquet import Snapshot
from zkstorm.jobs.spark import BRIEF_RUN_JVM

pytestmark = pytest.mark.spark  # every test here starts Spark (spark-submit, or the CLI's own session)

REPO = Path(__file__).resolve().parents[2]
NIGHTS = 5  # nights 0-2 in the full run, 3-4 added by the incremental one
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# The executors' JVMs as a brief run's driver's (``BRIEF_RUN_JVM``, ``SPARK_SUBMIT_OPTS`` in
# ``tests/conftest.py``): the client compiler alone and the parallel collector. Each lives for one short
# job, whose compiling with C2 costs more than it gains (the s3a test's two runs, driver and executor:
# 142 s -> 114 s)
CLIENT_COMPILER = [f"spark.executor.extraJavaOptions={BRIEF_RUN_JVM}"]


def documented_submit() -> list[str]:
    """The spark-submit line the docs give for a standalone cluster over s3a://, as argv with its
    placeholders (``MASTER``, ``SNAPSHOTS``, ``HISTORY``) kept for the test to fill in."""
    for page in DOCS:
        for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", page.read_text(), re.S):
            if "spark-submit" in block and HADOOP_AWS in block:
                line = block[block.index("spark-submit") :].replace("\\\n", " ")
                return shlex.split(line.splitlines()[0])
    raise AssertionError(f"no page of the docs shows spark-submit with --packages {HADOOP_AWS}")


@pytest.fixture(scope="module")
def standalone(real_cluster: Path) -> Iterator[SparkStandalone]:
    # two cores and room for two executors: the s3a and the hdfs jobs run at once, one core each
    cluster = SparkStandalone(real_cluster / "spark", cores=2, memory="2g").start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def hdfs(real_cluster: Path) -> Iterator[MiniHdfs]:
    try:
        harness.jars(HADOOP_PROFILE)
    except harness.Missing as exc:
        pytest.fail(str(exc), pytrace=False)
    cluster = MiniHdfs(real_cluster / "hdfs").start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _write_nights(base: str, nights: range) -> None:
    """The history tests' week of a Storm and Kafka cluster (``tests/test_history.py``), written by the
    snapshot writer ``zkstorm snapshot`` uses, one committed snapshot per night."""
    from tests.test_history import _day, _records

    for i in nights:
        with Snapshot(base, snapshot_id=f"c1@{i}", cluster="c1", snapshot_time=_day(i)) as snap:
            for record in _records(i):
                snap.add(record)
            snap.commit({})


@pytest.fixture(scope="module")
def local_history(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tables of a full local run over the five nights: what each cluster run must equal."""
    from zkstorm.jobs.history import run_history

    folder = tmp_path_factory.mktemp("local-history")
    _write_nights(str(folder / "snapshots"), range(NIGHTS))
    run_history(spark, str(folder / "snapshots"), out=str(folder / "history"))
    return _tables(spark, folder / "history")


def _tables(spark: Any, out: Path | str) -> dict[str, Any]:
    """Every metric table and the incidents of the history under ``out`` (a folder or an hdfs:// URL)."""
    from zkstorm.jobs.metrics import METRICS

    return {name: spark.read.parquet(f"{out}/{name}") for name in [m.name for m in METRICS] + ["incidents"]}


def _run(standalone: SparkStandalone, package: Path, snapshots: str, history: str, *conf: str) -> str:
    """The documented spark-submit line, placeholders filled, the test's settings added before the job."""
    argv = documented_submit()
    filled = [
        a.replace("MASTER", standalone.url.removeprefix("spark://")).replace("SNAPSHOTS", snapshots)
        .replace("HISTORY", history).replace("zkstorm.zip", str(package))
        .replace("zkstorm/jobs/history.py", str(REPO / "zkstorm" / "jobs" / "history.py"))
        for a in argv[1:]
    ]  # fmt: skip
    job = next(i for i, a in enumerate(filled) if a.endswith("history.py"))
    test_settings = [
        "spark.sql.shuffle.partitions=1",
        "spark.ui.showConsoleProgress=false",
        "spark.cores.max=1",
        *CLIENT_COMPILER,
        *conf,
    ]
    settings = [x for c in test_settings for x in ("--conf", c)]
    done = submit([*filled[:job], *settings, *filled[job:]])
    assert done.returncode == 0, f"spark-submit failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``zkstorm.zip`` for the executors, made as the docs say (``python -m zipfile -c zkstorm.zip zkstorm``)."""
    import zipfile

    out = tmp_path_factory.mktemp("package") / "zkstorm.zip"
    with zipfile.ZipFile(out, "w") as zf:
        for file in sorted((REPO / "zkstorm").rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                zf.write(file, file.relative_to(REPO))
    return out


def _assert_equal(spark: Any, kept: dict[str, Any], expected: dict[str, Any]) -> None:
    from pyspark.testing import assertDataFrameEqual

    assert set(kept) == set(expected)
    for name, table in expected.items():
        assertDataFrameEqual(kept[name], table)


@dataclass
class Pipeline:
    """What one filesystem's runs printed (the full run's summary, then the incremental run's) and where
    its history is, or the error that stopped them."""

    first: str = ""
    second: str = ""
    history: str = ""
    error: BaseException | None = None

    def result(self) -> Pipeline:
        if self.error is not None:
            raise self.error
        return self


def _full_then_incremental(
    standalone: SparkStandalone, package: Path, put: Callable[[range], None], where: str, *conf: str
) -> Pipeline:
    """Three nights ``put`` under ``where``/zkstorm and a full run, then two more and an incremental run,
    the history written to ``where``/zkstorm-history."""
    snapshots, history = f"{where}/zkstorm", f"{where}/zkstorm-history"
    put(range(3))
    first = _run(standalone, package, snapshots, history, *conf)
    put(range(3, NIGHTS))
    second = _run(standalone, package, snapshots, history, *conf)
    return Pipeline(first, second, history)


def _s3a_pipeline(standalone: SparkStandalone, package: Path, s3: tuple[S3Server, str]) -> Pipeline:
    """Snapshots written to ``s3a://`` by the snapshot writer (pyarrow, the same bucket and keys), the
    history read and written by the executors through S3A (hadoop-aws from ``--packages``)."""
    server, bucket = s3
    endpoint = (f"spark.hadoop.fs.s3a.endpoint={server.endpoint}", "spark.hadoop.fs.s3a.path.style.access=true")

    def put(nights: range) -> None:
        _write_nights(f"s3a://{bucket}/zkstorm", nights)

    return _full_then_incremental(standalone, package, put, f"s3a://{bucket}", *endpoint)


def _hdfs_pipeline(standalone: SparkStandalone, package: Path, hdfs: MiniHdfs, local: Path) -> Pipeline:
    """Snapshots written locally and put on HDFS with ``hdfs dfs -put`` (tables first, the manifests that
    commit them last, as the docs say), the history written to HDFS by the executors."""
    done = hdfs.shell("-mkdir", "-p", "/zkstorm/_manifests")
    assert done.returncode == 0, done.stderr[-2000:]

    def put(nights: range) -> None:
        _write_nights(str(local), nights)
        tables = [str(p) for p in sorted(local.iterdir()) if p.is_dir() and p.name != "_manifests"]
        for step in (
            ["-put", "-f", *tables, "/zkstorm/"],
            ["-put", "-f", *map(str, (local / "_manifests").iterdir()), "/zkstorm/_manifests/"],
        ):
            done = hdfs.shell(*step)
            assert done.returncode == 0, done.stderr[-2000:]

    return _full_then_incremental(standalone, package, put, hdfs.url)


@pytest.fixture(scope="module")
def s3_for_module(s3_server: S3Server) -> Iterator[tuple[S3Server, str]]:
    """What the ``s3`` fixture gives a test (a fresh bucket, the server's endpoint and credentials in the
    AWS environment variables), for the module's runs."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in s3_server.env.items():
            env.setenv(name, value)
        for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
            env.delenv(name, raising=False)
        bucket = "zkstorm-cluster-runs"
        s3_server.client().create_bucket(Bucket=bucket)
        yield s3_server, bucket


@dataclass
class Pipelines:
    """The s3a and the hdfs runs, going on in the background (``runs``: name → its future), and how many
    executors the worker had launched before them."""

    runs: dict[str, Future[Pipeline]]
    standalone: SparkStandalone
    launched: int

    def result(self, name: str) -> Pipeline:
        """``name``'s runs, once both filesystems' are done; every job that ran had an executor of the
        worker (its log's own lines), so its tasks ran there."""
        done = {other: run.result() for other, run in self.runs.items()}
        ran = self.standalone.executors_launched() - self.launched
        jobs = 2 * sum(p.error is None for p in done.values())
        assert ran >= jobs, f"{ran} executors launched for {jobs} jobs"
        return done[name].result()


@pytest.fixture(scope="module")
def pipelines(
    standalone: SparkStandalone,
    s3_for_module: tuple[S3Server, str],
    hdfs: MiniHdfs,
    package: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Pipelines]:
    """The s3a and the hdfs runs, started at once on the worker's two cores and going on while the
    local run they are compared with (``local_history``) is made; each test waits for its own."""
    local = tmp_path_factory.mktemp("hdfs-snapshots")
    launched = standalone.executors_launched()
    work: dict[str, Callable[[], Pipeline]] = {
        "s3a": lambda: _s3a_pipeline(standalone, package, s3_for_module),
        "hdfs": lambda: _hdfs_pipeline(standalone, package, hdfs, local),
    }

    def attempt(name: str) -> Pipeline:
        try:
            return work[name]()
        except BaseException as exc:
            return Pipeline(error=exc)  # raised again by the test of that filesystem

    with ThreadPoolExecutor(len(work)) as pool:
        yield Pipelines({name: pool.submit(attempt, name) for name in work}, standalone, launched)


def _assert_runs(pipeline: Pipeline) -> None:
    assert re.search(r"; full \(.*\) run, read 3\b", " ".join(pipeline.first.split())), pipeline.first
    assert "; incremental run, read 3 " in " ".join(pipeline.second.split()), pipeline.second


def test_history_over_s3a_on_a_standalone_cluster_equals_a_local_run(
    spark: Any,
    pipelines: Pipelines,
    s3_for_module: tuple[S3Server, str],
    local_history: dict[str, Any],
    tmp_path: Path,
) -> None:
    """The s3a run (``_s3a_pipeline``): its summaries, and its tables, copied from the bucket, equal to a
    local run's."""
    pipeline = pipelines.result("s3a")
    _assert_runs(pipeline)
    server, bucket = s3_for_module
    local = tmp_path / "history"
    s3fs = pafs.S3FileSystem(endpoint_override=server.endpoint)
    pafs.copy_files(f"{bucket}/zkstorm-history", str(local), source_filesystem=s3fs)
    _assert_equal(spark, _tables(spark, local), local_history)


def test_history_over_hdfs_on_a_standalone_cluster_equals_a_local_run(
    spark: Any, pipelines: Pipelines, local_history: dict[str, Any]
) -> None:
    """The hdfs run (``_hdfs_pipeline``): its summaries, and its tables as Spark reads them from HDFS in
    this process (pyspark's Hadoop has HDFS's client), equal to a local run's."""
    pipeline = pipelines.result("hdfs")
    _assert_runs(pipeline)
    _assert_equal(spark, _tables(spark, pipeline.history), local_history)


def test_s3_through_a_staging_folder_is_refused_on_a_cluster_master_naming_the_package(
    standalone: SparkStandalone, s3: tuple[S3Server, str], tmp_path: Path
) -> None:
    """``s3://`` goes through a staging folder on the driver's disk, which executors elsewhere cannot read:
    on a cluster master the job says so in one line and names the package to add instead."""
    import subprocess
    import sys

    _, bucket = s3
    _write_nights(f"s3://{bucket}/zkstorm", range(1))
    done = subprocess.run(
        [sys.executable, "-m", "zkstorm", "history", f"s3://{bucket}/zkstorm", "--master", standalone.url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "local master only" in line and f"--packages {HADOOP_AWS}" in line, done.stderr
