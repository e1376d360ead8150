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


def session(master: str | None = None, app_name: str = "zkstorm-history") -> Any:
    """The active session if there is one (spark-submit, tests), else a new quiet one on ``master``."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    config = os.path.join(tempfile.gettempdir(), "zkstorm-spark-log4j2.properties")
    with open(config, "w") as f:
        f.write(_QUIET_LOG4J2)
    builder = (
        SparkSession.builder.appName(app_name)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{config}")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if master:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
