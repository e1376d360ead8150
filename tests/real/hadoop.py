"""A Spark standalone cluster and an HDFS on loopback, for the history job's cluster path.

- **Spark**: a master and a worker started from pyspark's own launcher (``$SPARK_HOME/bin/spark-class``,
  what ``sbin/start-master.sh`` and ``start-worker.sh`` run, in the foreground so the harness owns the
  pids), and jobs sent with pyspark's own ``bin/spark-submit``. The worker's executors run the driver's
  Python (``PYSPARK_PYTHON``), the venv the tests run in.
- **HDFS**: Hadoop's own ``MiniHadoopClusterManager`` (the class behind ``mapred minicluster``) from
  ``hadoop-client-minicluster`` at the Hadoop version pyspark ships (profile ``hadoop-3.4.1`` of
  ``tests/real/pom.xml``), with a NameNode and one DataNode and no MapReduce; it writes its configuration
  (``fs.defaultFS``) to a file once it is up.
- **Copies**: ``hdfs dfs -put`` is Hadoop's ``FsShell``, run here from the same jars, as an operator runs
  it next to a nightly snapshot (the documented way a snapshot reaches HDFS: pyarrow's HDFS needs
  ``libhdfs.so`` from a Hadoop release, which no package ships).

Each process is a ``harness.Daemon``: its log under the run's folder, killed with the test run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.real import harness
from zkstorm.sandbox.server import free_port

HADOOP_PROFILE = "hadoop-3.4.1"  # the Hadoop of pyspark 4.0's jars (hadoop-client-api-3.4.1.jar)
HADOOP_AWS = "org.apache.hadoop:hadoop-aws:3.4.1"  # --packages: hadoop-aws at that version, as Spark users add it


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def hadoop_jars() -> list[Path]:
    """The minicluster's jars (the profile copies neither hadoop-aws nor its SDK: they are for --packages)."""
    return harness.jars(HADOOP_PROFILE)


def _spark_env() -> dict[str, str]:
    return {
        "SPARK_HOME": str(spark_home()),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_NO_DAEMONIZE": "1",
    }


class SparkStandalone:
    """A master and ``workers`` workers of ``cores`` cores each on loopback: ``url`` is the master's
    ``spark://``."""

    def __init__(self, folder: Path, cores: int = 1, memory: str = "1g", workers: int = 1) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        launcher = str(spark_home() / "bin" / "spark-class")
        # the token rides in the name of an (empty) properties file both daemons accept
        props = folder / "{token}.properties"
        # the client compiler alone, as the harness's other daemons (``harness.jvm``): a faster start, less CPU
        daemons = {**_spark_env(), "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
        folder.mkdir(parents=True, exist_ok=True)
        self.master = harness.Daemon(
            "spark-master",
            [launcher, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port),
             "--webui-port", str(free_port()), "--properties-file", str(props)],
            log=folder / "master.log", cwd=folder, env=daemons,
        )  # fmt: skip
        self.workers = [self._worker(n, launcher, cores, memory, str(props), daemons) for n in range(workers)]

    def _worker(
        self, n: int, launcher: str, cores: int, memory: str, props: str, env: dict[str, str]
    ) -> harness.Daemon:
        return harness.Daemon(
            "spark-worker",
            [launcher, "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1", "--cores", str(cores),
             "--memory", memory, "--work-dir", str(self.folder / f"work{n}"), "--webui-port", str(free_port()),
             "--properties-file", props],
            log=self.folder / ("worker.log" if n == 0 else f"worker{n}.log"), cwd=self.folder, env=env,
        )  # fmt: skip

    @property
    def worker(self) -> harness.Daemon:
        return self.workers[0]

    def start(self) -> SparkStandalone:
        for daemon in (self.master, *self.workers):
            Path(str(self.folder / "{token}.properties").replace("{token}", daemon.token)).write_text("")
        self.master.start()
        self.master.wait_ready(lambda: "Starting Spark master at" in _read(self.master.log), 120, "a master")
        for worker in self.workers:
            worker.start()
        for worker in self.workers:
            worker.wait_ready(lambda w=worker: "Successfully registered with master" in _read(w.log), 120, "registered")
        return self

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.master.stop()

    def executors_launched(self) -> int:
        """How many executors the workers have started (their logs' own lines): proof a job ran on them."""
        return sum(_read(worker.log).count("Asked to launch executor") for worker in self.workers)


class MiniHdfs:
    """A NameNode and a DataNode on loopback: ``url`` is ``hdfs://localhost:<port>``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config = folder / "minicluster-conf.xml"
        self.url = ""
        folder.mkdir(parents=True, exist_ok=True)
        self.daemon = harness.Daemon(
            "hdfs",
            harness.jvm(
                harness.classpath(hadoop_jars()),
                "org.apache.hadoop.mapreduce.MiniHadoopClusterManager",
                ["-nomr", "-format", "-datanodes", "1", "-nnport", str(free_port()), "-nnhttpport", "0",
                 "-writeConfig", str(self.config), "-D", f"hdfs.minidfs.basedir={folder / 'data'}"],
                heap="512m",
                options=[f"-Dtest.build.data={folder / 'data'}"],
            ),
            log=folder / "hdfs.log", cwd=folder,
        )  # fmt: skip

    def start(self) -> MiniHdfs:
        self.daemon.start()
        self.url = self.daemon.wait_ready(self._default_fs, 180, "serving HDFS")
        # the client's configuration folder, as a Hadoop release's etc/hadoop is on its shell's classpath
        (self.folder / "etc").mkdir(exist_ok=True)
        (self.folder / "etc" / "core-site.xml").write_text(
            f"<configuration><property><name>fs.defaultFS</name><value>{self.url}</value></property></configuration>\n"
        )
        return self

    def _default_fs(self) -> str | None:
        match = re.search(r"<name>fs.defaultFS</name><value>(hdfs://[^<]+)</value>", _read(self.config))
        return match.group(1) if match else None

    def stop(self) -> None:
        self.daemon.stop()

    def shell(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``hdfs dfs ARGS`` against this HDFS: Hadoop's ``FsShell`` from the same jars."""
        command = [
            harness.java(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
            "-cp", harness.classpath(self.folder / "etc", hadoop_jars()),
            "org.apache.hadoop.fs.FsShell", *args,
        ]  # fmt: skip
        return subprocess.run(command, capture_output=True, text=True, timeout=300)


def spark_submit(argv: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """pyspark's own ``bin/spark-submit ARGV``, with the tests' venv as the Python of driver and executors."""
    command = [str(spark_home() / "bin" / "spark-submit"), *argv]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=900, env={**os.environ, **_spark_env(), **(env or {})}
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
