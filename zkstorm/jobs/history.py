"""The history job: metrics over every committed snapshot, as Parquet tables and a report.

Runs the same way under ``zkstorm history`` (a local SparkSession) and under ``spark-submit`` on a
cluster, where this file is the application:

    spark-submit --master yarn --py-files zkstorm.zip zkstorm/jobs/history.py \\
        hdfs:///zkstorm/snapshots --out hdfs:///zkstorm/history --html history.html

Imports are absolute so that the file also runs as a script.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from zkstorm.jobs import incidents as incident_rules
from zkstorm.jobs.incidents import Incident, Inputs
from zkstorm.jobs.metrics import METRICS
from zkstorm.jobs.report import ChartData, empty, html_page, incident_line, summarize, summary_line
from zkstorm.jobs.snapshots import SnapshotSet
from zkstorm.progress import NO_PROGRESS, Progress


@dataclass
class HistoryResult:
    snapshots: int
    clusters: list[str]
    first: datetime | None
    last: datetime | None
    charts: list[ChartData] = field(default_factory=list)
    tables: dict[str, int] = field(default_factory=dict)  # metric → rows written
    incidents: list[Incident] = field(default_factory=list)


def run_history(
    spark: Any,
    snapshots: str,
    *,
    since: date | None = None,
    until: date | None = None,
    out: str | None = None,
    html: str | None = None,
    progress: Progress = NO_PROGRESS,
) -> HistoryResult:
    """Compute every metric over the committed snapshots under ``snapshots``, then the incidents; write
    each as Parquet under ``out`` and the report to ``html`` when given. ``progress`` hears one stage
    per metric."""
    progress.stage("reading the manifests")
    selected = SnapshotSet(spark, snapshots, since=since, until=until)
    refs = selected.snapshots
    result = HistoryResult(
        snapshots=len(refs),
        clusters=sorted({r.cluster for r in refs}),
        first=min((r.snapshot_time for r in refs), default=None),
        last=max((r.snapshot_time for r in refs), default=None),
    )
    if not refs:
        return result
    # File sizes understate Parquet tables many times over, so Spark's automatic broadcast joins ran the
    # driver out of memory at 50,000 partitions x 30 nights. Only the per-snapshot frame (one row per
    # snapshot) is broadcast, explicitly.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    from pyspark.sql.functions import broadcast

    frame = broadcast(selected.frame()).cache()
    inputs = Inputs(selected, frame)
    steps = len(METRICS) + 1 + bool(html)
    for step, metric in enumerate(METRICS, 1):
        progress.stage(f"{metric.title} ({step}/{steps})")
        table = metric.compute(selected, frame)
        if table is None:
            result.charts.append(empty(metric.name, metric.system, metric.title))
            continue
        table = table.cache()
        result.tables[metric.name] = table.count()
        if out:
            table.write.mode("overwrite").parquet(f"{out.rstrip('/')}/{metric.name}")
        result.charts.append(summarize(metric.name, metric.system, metric.title, table, result.tables[metric.name]))
        if metric.name in incident_rules.NEEDS:
            inputs.metrics[metric.name] = table
        else:
            table.unpersist()
    progress.stage(f"incidents ({len(METRICS) + 1}/{steps})")
    result.incidents = incident_rules.find_incidents(inputs)
    for table in inputs.metrics.values():
        table.unpersist()
    if out:
        incident_rules.frame(spark, result.incidents).write.mode("overwrite").parquet(f"{out.rstrip('/')}/incidents")
    result.tables["incidents"] = len(result.incidents)
    if html:
        progress.stage(f"the report ({steps}/{steps})")
        with open(html, "w", encoding="utf-8") as f:
            f.write(
                html_page(
                    result.charts,
                    result.incidents,
                    title=f"ZooKeeper metadata history: {', '.join(result.clusters)}",
                    subtitle=f"{result.snapshots} snapshots, {_day(result.first)} to {_day(result.last)}, "
                    f"made by zkstorm history on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
                )
            )
    return result


SHOWN_INCIDENTS = 15


def _day(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d") if value else "-"


def print_summary(result: HistoryResult, console: Any) -> None:
    """The rich summary: one line per metric, grouped by system."""
    from rich.markup import escape
    from rich.table import Table

    if not result.snapshots:
        console.print("no committed snapshots in that range")
        return
    console.print(
        f"[bold]{result.snapshots} snapshots[/bold] of {', '.join(result.clusters)}, "
        f"{_day(result.first)} to {_day(result.last)}"
    )
    table = Table(show_header=True, header_style="bold", expand=False)
    table.add_column("system")
    table.add_column("metric")
    table.add_column("rows", justify="right")
    table.add_column("what it shows")
    for chart in result.charts:
        table.add_row(chart.system, chart.title, f"{result.tables.get(chart.name, 0):,}", escape(summary_line(chart)))
    console.print(table)
    if result.incidents:
        shown = result.incidents[-SHOWN_INCIDENTS:]
        more = len(result.incidents) - len(shown)
        console.print(
            f"[bold]{len(result.incidents)} incidents[/bold]" + (f", the newest {len(shown)}:" if more else ":")
        )
        for incident in shown:
            console.print(escape(incident_line(incident)), highlight=False)
    else:
        console.print("no incidents")


def _date(value: str) -> date:
    return date.fromisoformat(value)


def main(argv: list[str] | None = None) -> int:
    """Entry point under spark-submit (the session comes from the submit)."""
    from rich.console import Console

    from zkstorm.jobs.spark import session

    parser = argparse.ArgumentParser(prog="history.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshots")
    parser.add_argument("--since", type=_date)
    parser.add_argument("--until", type=_date)
    parser.add_argument("--out")
    parser.add_argument("--html")
    args = parser.parse_args(argv)
    spark = session()
    result = run_history(spark, args.snapshots, since=args.since, until=args.until, out=args.out, html=args.html)
    print_summary(result, Console(stderr=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
