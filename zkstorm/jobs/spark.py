"""A SparkSession that keeps Spark's console noise off the user's terminal.

Under ``spark-submit`` the session already exists (the cluster's own settings win) and is reused;
locally the JVM starts with a log4j2 configuration that only lets errors through, no progress bars and
no web UI.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

_QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = zkstorm: spark %p %c{1}: %m%n
"""


# The driver JVM of a short run (a nightly update: a minute at most) on the client compiler alone and the
# parallel collector. Its work is many small Spark jobs on a JVM that starts cold: C2's compiling costs it
# more than it gains, and G1's concurrent work competes for the few cores. Measured, cold, the nightly
# update of night 31 of the benchmark's 100,000-partition history (bench/bench_history.py's nights), three
# runs each: 34.6-34.8 s by default, 30.5-30.6 s on C1 alone, 27.1-29.1 s with both. A long run (a full
# rebuild of a year) keeps the JVM's defaults: there C2's faster code pays back its compiling.
#
# On the client compiler alone the JVM reserves 48 MiB for compiled code (C2's tiers reserve 240 MiB), and a
# nightly update fills it: "CodeCache is full. Compiler has been disabled." in the Spark log, 37 s into an
# update, and every method first called after that stays interpreted. So the short run reserves as much as
# the tiered default. Measured, cold, the update at night 366 of the same history: 48.7 s with 48 MiB
# (JVM CPU 76.7 s), 43.7 s with 240 MiB (67.7 s); at night 31, 44.9 s and 42.7 s.
BRIEF_RUN_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseParallelGC"


# PySpark 4 sends the Python call site of every column function and operator to the JVM, for error
# messages (``pyspark/errors/utils.py``: ``_with_origin``): three more Py4J round trips each. A history
# run builds thousands of columns, and its errors are told in one line (``spark_error``) anyway. The
# nightly update of night 31 of ``bench/bench_history.py``'s history, cold: 31,685 Py4J calls with it,
# 25,162 without; 33.0-33.5 s against 32.4-33.3 s, three runs each, alternating.
NO_CALL_SITES = ("spark.python.sql.dataFrameDebugging.enabled", "false")


def session(master: str | None = None, app_name: str = "zkstorm-history", *, brief: bool = False) -> Any:
    """The active session if there is one (spark-submit, tests), else a new quiet one on ``master``;
    ``brief`` when the run is expected to be short (``BRIEF_RUN_JVM``).

    The local JVM's own stderr (launcher notes, Spark's startup banner) goes to ``spark_log()``; what
    the job needs to say comes back through Python exceptions and the summary.
    """
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    conf = session_conf(master, app_name, brief=brief)
    log = open(spark_log(), "ab")  # noqa: SIM115 - the JVM child writes to it for its whole life
    gateway = launch_gateway(conf, popen_kwargs={"stderr": log, "stdout": log})
    context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel("ERROR")
    return SparkSession(context)


def session_conf(master: str | None, app_name: str, *, brief: bool = False) -> Any:
    """The configuration a new local session starts with (``session``)."""
    from pyspark import SparkConf

    config = os.path.join(tempfile.gettempdir(), "zkstorm-spark-log4j2.properties")
    with open(config, "w") as f:
        f.write(_QUIET_LOG4J2)
    driver_jvm = f"-Dlog4j2.configurationFile=file:{config}" + (f" {BRIEF_RUN_JVM}" if brief else "")
    conf = (
        SparkConf()
        .setAppName(app_name)
        .set("spark.driver.extraJavaOptions", driver_jvm)
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.ui.enabled", "false")
        .set("spark.sql.session.timeZone", "UTC")
        .set(*NO_CALL_SITES)
        # a year of a large cluster's facts is built in one pass; Spark's local default of 1 GiB spills it
        .set("spark.driver.memory", os.environ.get("ZKSTORM_SPARK_MEMORY", "4g"))
    )
    if master:
        conf.setMaster(master)
    return conf


def spark_error(exc: BaseException) -> str:
    """One line for a Spark failure: the Java exception's own message, not the Py4J call trace."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.toString()).splitlines()[0]
        except Exception:
            pass
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def spark_log() -> str:
    """Where a local Spark's JVM writes its console output."""
    return os.path.join(tempfile.gettempdir(), f"zkstorm-spark-{os.getuid()}.log")
