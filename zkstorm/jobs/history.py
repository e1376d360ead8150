"""The history job: metrics over every committed snapshot, as Parquet tables and a report.

Runs the same way under ``zkstorm history`` (a local SparkSession) and under ``spark-submit`` on a
cluster, where this file is the application:

    spark-submit --master yarn --py-files zkstorm.zip zkstorm/jobs/history.py \\
        hdfs:///zkstorm/snapshots --out hdfs:///zkstorm/history --html history.html

Imports are absolute so that the file also runs as a script.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from typing import Any, TypeVar

from zkstorm.errors import UsageError
from zkstorm.export.objectstore import Staging
from zkstorm.jobs import incidents as incident_rules
from zkstorm.jobs import recheck
from zkstorm.jobs.facts import LOOKUP_SNAPSHOTS, Fact, Window, snapshot_lookups
from zkstorm.jobs.incidents import Incident
from zkstorm.jobs.inputs import SnapshotSet, snapshot_frame, snapshot_rows
from zkstorm.jobs.metrics import COLUMNS_READ, FACTS, METRICS, PER_SNAPSHOT, SNAPSHOT_TABLES, History, Metric
from zkstorm.jobs.report import ChartData, empty, html_page, incident_line, summarize, summary_line
from zkstorm.jobs.store import STORE, HistoryStore
from zkstorm.jobs.store import VERSION as STORE_VERSION
from zkstorm.progress import NO_PROGRESS, Progress
from zkstorm.units import iso_utc

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class HistoryResult:
    snapshots: int
    clusters: list[str]
    first: datetime | None
    last: datetime | None
    charts: list[ChartData] = field(default_factory=list)
    tables: dict[str, int] = field(default_factory=dict)  # metric → rows written
    incidents: list[Incident] = field(default_factory=list)
    read: int = 0  # snapshots whose tables this run read
    incidents_read: int = 0  # snapshots the incident rules read (a nightly run's: those from its cutoffs on)
    mode: str = "full"  # "full", "incremental", or "full (why not incremental)"


@dataclass
class _Facts:
    """Facts held in memory (no ``--out`` to keep them in), cached as they are computed."""

    frames: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> Any | None:
        return self.frames.get(name)


@dataclass
class _Snapshots:
    """The snapshot tables of the snapshots a run reads, each read once and cached when several facts
    read it."""

    selected: SnapshotSet
    ids: set[str]
    readers: dict[str, int]
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the columns read, where few are
    frames: dict[str, Any] = field(default_factory=dict)

    lock: Any = field(default_factory=threading.RLock)  # facts are planned in writers' threads

    def table(self, name: str) -> Any | None:
        with self.lock:
            if name not in self.frames:
                frame = self.selected.table(name, self.ids)
                if frame is not None and name in self.columns:
                    frame = frame.select(*self.columns[name])
                if frame is not None and self.readers.get(name, 0) > 1:
                    frame = frame.persist()
                self.frames[name] = frame
            return self.frames[name]

    def release(self) -> None:
        for frame in self.frames.values():
            if frame is not None:
                frame.unpersist()


def run_history(
    spark: Any,
    snapshots: str,
    *,
    since: date | None = None,
    until: date | None = None,
    out: str | None = None,
    html: str | None = None,
    full: bool = False,
    changes: str | None = None,
    progress: Progress = NO_PROGRESS,
) -> HistoryResult:
    """Compute every metric over the committed snapshots under ``snapshots``, then the incidents; write
    each as Parquet under ``out`` and the report to ``html`` when given.

    With ``out`` the facts of each snapshot are kept there (``jobs/store.py``), and a later run reads
    only the snapshots committed since (incremental); ``full``, ``since``/``until``, a store of another
    version or a new snapshot older than the newest kept one make it a full rebuild. ``changes``, a
    changes dataset of the same period (``zkstorm changes --out``), gives incidents their exact start and
    end from ZooKeeper's logs instead of the snapshots' bracket. ``progress`` hears one stage per step.

    A location Spark cannot open (``s3://`` without an S3 connector) is read and written through pyarrow
    and a local staging folder (``export.objectstore.Staging``), removed at the end.

    ``out`` is a folder of its own: the history written into the snapshots' (or the changes') folder
    would sit among the tables their writer rolls back and prunes (``export.manifest``: one kind a folder)."""
    for other, what in ((snapshots, "SNAPSHOTS"), (changes, "--changes")):
        if out and other and out.rstrip("/") == other.rstrip("/"):
            raise UsageError(f"--out {out} is the {what} folder: give the history a folder of its own")
    with Staging(spark, store=STORE) as staging:
        progress.stage("reading the manifests")
        selected = SnapshotSet(spark, snapshots, since=since, until=until, staging=staging)
        result = _run(
            spark, selected, staging.out(out) if out else None, html, full=full, changes=changes, progress=progress
        )
        staging.publish()
    return result


def _run(
    spark: Any,
    selected: SnapshotSet,
    out: str | None,
    html: str | None,
    *,
    full: bool,
    changes: str | None,
    progress: Progress,
) -> HistoryResult:
    from pyspark.sql.functions import broadcast

    since_or_until = selected.since is not None or selected.until is not None
    store = HistoryStore(spark, out) if out else None
    kept, mode = _kept(store, selected, full=full, window=since_or_until)
    kept_ids = {s[1] for s in kept}
    new = [r for r in selected.snapshots if r.snapshot_id not in kept_ids]
    arriving = [(r.cluster, r.snapshot_id, r.snapshot_time) for r in new]
    every = kept + arriving
    result = HistoryResult(
        snapshots=len(every),
        clusters=sorted({s[0] for s in every}),
        first=min((s[2] for s in every), default=None),
        last=max((s[2] for s in every), default=None),
        mode=mode,
    )
    if not every:
        return result
    frame = snapshot_frame(spark, every).cache()
    steps = 3 + bool(html)

    # stage 1: the facts of the new snapshots, compared with the kept snapshot just before them
    progress.stage(f"facts of {len(new):,} new snapshots (1/{steps})")
    facts: Any = store if (store is not None and kept) else _Facts()
    new_error_days: dict[str, frozenset[date]] = {}
    if new:
        context = _context(kept, new)
        reading = {r.snapshot_id for r in new} | context
        result.read = len(reading)
        small = _plan_for(
            spark,
            sum(r.rows.get(t, 0) for r in selected.snapshots if r.snapshot_id in reading for t in SNAPSHOT_TABLES),
        )
        readers = {t: sum(t in fact.tables for fact in FACTS) for t in SNAPSHOT_TABLES}
        tables = _Snapshots(selected, reading, readers, COLUMNS_READ)
        seen = store if (store is not None and kept) else _Facts()  # a full rebuild de-duplicates afresh
        snaps = frame.where(frame.snapshot_id.isin(sorted(reading)))
        read_rows = [row for row in snapshot_rows(every) if row[1] in reading]
        lookups = snapshot_lookups(read_rows) if small and len(read_rows) <= LOOKUP_SNAPSHOTS else None
        window = Window(tables, snaps if small else broadcast(snaps), seen, sorted(context), lookups=lookups)
        new_ids = sorted(r.snapshot_id for r in new)
        planned = {fact.name: partial(_new_rows, fact, window, new_ids) for fact in FACTS}
        if store is not None:
            run_id, writers = _run_id(), SMALL_READ_WRITERS if small else 1
            schemas = store.write(run_id, planned, writers=writers, large=not small)
            latest = sorted(snapshot_id for _, snapshot_id in _newest(every).values())
            renewed = sorted({r.cluster for r in new})
            written = History(store.written(run_id, schemas), frame, latest, renewed=renewed)
            added = _per_snapshot_rows(written, full=not kept)
            folded = _folded_tables(store, written, full=not kept)
            store.commit(
                run_id,
                list(schemas),
                arriving,
                replace_all=not kept,
                tables={**added, **folded},
                replacing=list(folded) if kept else [*added, *folded],  # a full rebuild replaces them all
                writers=writers,
            )
            new_error_days = recheck.error_days(written.fact("storm_errors_unique")) if kept else {}
            store.compact(_run_id(), PER_SNAPSHOT)
            facts = store
        else:
            computed = {name: plan() for name, plan in planned.items()}
            facts.frames = {name: rows.cache() for name, rows in computed.items() if rows is not None}
        window.release()
        tables.release()

    # stage 2: the metrics of the whole history, from the facts alone (small), several at a time
    _plan_for(spark, 0)  # facts are small
    history = History(facts, frame, sorted(snapshot_id for _, snapshot_id in _newest(every).values()))
    progress.stage(f"{len(METRICS)} metrics (2/{steps})")

    def metric_table(metric: Metric) -> tuple[Any, int, ChartData]:
        # committed with the facts, whole: appended to, or folded
        appended = store is not None and (metric.per_snapshot or metric.fold is not None)
        spark.sparkContext.setJobDescription(f"metric {metric.name}")  # names its jobs in Spark's UI
        table = store.metric_table(metric.name) if appended else metric.compute(history)  # type: ignore[union-attr]
        if table is None:
            return None, 0, empty(metric.name, metric.system, metric.title)
        table = table.cache()
        collected = table.toArrow()  # its rows, for the chart; the cache, for the incident rules and the write
        if out and not appended:
            table.write.mode("overwrite").parquet(f"{out.rstrip('/')}/{metric.name}")
        return table, collected.num_rows, summarize(metric.name, metric.system, metric.title, collected)

    for metric, (table, rows, chart) in zip(METRICS, concurrently(metric_table, METRICS), strict=True):
        result.charts.append(chart)
        if table is not None:
            result.tables[metric.name] = rows
            history.computed[metric.name] = table
    progress.stage(f"incidents ({steps - bool(html)}/{steps})")
    result.incidents, result.incidents_read = _incidents(
        history, store, kept, arriving, new_error_days, changes=changes, spark=spark
    )
    for table in history.computed.values():
        table.unpersist()
    if store is not None:
        covered = {"version": STORE_VERSION, "through": _through(every), "changes": bool(changes)}
        store.write_incidents(_run_id(), incident_rules.frame(spark, result.incidents), covered)
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
                    f"made by zkstorm history on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
                )
            )
    return result


def _incidents(
    history: History,
    store: HistoryStore | None,
    kept: list[tuple[str, str, datetime]],
    arriving: list[tuple[str, str, datetime]],
    error_days: dict[str, frozenset[date]],
    *,
    changes: str | None,
    spark: Any,
) -> tuple[list[Incident], int]:
    """Every incident of the history (``kept`` snapshots and this run's ``arriving`` ones), and how many
    snapshots the rules read to find them. A nightly run whose store keeps the incidents found through
    the snapshots it kept finds again only those its new snapshots may change (``jobs/recheck.py``);
    otherwise every incident is found, and with ``changes`` timed by its logs."""
    every = kept + arriving
    stored = store.incidents() if (store is not None and kept and not changes) else None
    if stored is not None:
        rows, covered = stored
        try:
            before = [Incident.from_row(row) for row in rows]
        except (TypeError, KeyError, ValueError):  # not rows of an Incident: found again whole
            covered = {}
        if covered == {"version": STORE_VERSION, "through": _through(kept), "changes": False}:
            plan = recheck.plan(before, kept, arriving, error_days, recheck.spark_zone(spark))
            found = []
            if plan.after:

                def stretch(kind: str) -> History:
                    return plan.stretch(history, every, kind)

                found = incident_rules.find_incidents(history, concurrently, stretch)
            return incident_rules.ordered(plan.merge(before, found)), plan.read(every, list(incident_rules.RULES))
    found = incident_rules.find_incidents(history, concurrently)
    if changes:
        taken: dict[str, list[datetime]] = {}
        for cluster, _, at in every:
            taken.setdefault(cluster, []).append(at)
        times = incident_rules.read_change_times(spark, changes)
        found = incident_rules.timed_by_changes(found, times, taken)
    return found, len(every)


def _new_rows(fact: Fact, window: Window, new_ids: list[str]) -> Any | None:
    """``fact``'s rows of the new snapshots (the window has the kept one before them too, to compare
    with); planned when called, in the thread that writes it (``HistoryStore.write``)."""
    rows = fact.compute(window)
    return None if rows is None else rows.where(rows.snapshot_id.isin(new_ids))


def _through(snapshots: list[tuple[str, str, datetime]]) -> dict[str, list[str]]:
    """Per cluster, the time and id of its newest snapshot, as the incidents' ``_covered`` says them."""
    return {cluster: [iso_utc(at), snapshot_id] for cluster, (at, snapshot_id) in sorted(_newest(snapshots).items())}


def _per_snapshot_rows(new: History, *, full: bool) -> dict[str, Any | None]:
    """The rows of the per-snapshot metrics (``Metric.per_snapshot``) that ``new`` (the facts of this
    run's new snapshots) makes: appended to their tables, or with ``full`` the tables' new content (None:
    the metric has no rows, its table goes). An incremental run leaves a table its snapshots have no
    rows for as it is."""
    rows = {metric.name: metric.compute(new) for metric in METRICS if metric.per_snapshot}
    return rows if full else {name: frame for name, frame in rows.items() if frame is not None}


def _folded_tables(store: HistoryStore, new: History, *, full: bool) -> dict[str, Any | None]:
    """The new content of the folded metrics' tables (``Metric.fold``): each made from its committed
    table and ``new`` (this run's new facts); with ``full``, from ``new`` alone, which is every fact (None:
    the metric has no rows, its table goes). A table the new nights give no rows stays as it is."""
    if full:
        return {metric.name: metric.compute(new) for metric in METRICS if metric.fold is not None}
    tables = {}
    for metric in METRICS:
        if metric.fold is not None:
            rows = metric.fold(store.metric_table(metric.name), new)
            if rows is not None:
                tables[metric.name] = rows
    return tables


def _kept(
    store: HistoryStore | None, selected: SnapshotSet, *, full: bool, window: bool
) -> tuple[list[tuple[str, str, datetime]], str]:
    """The snapshots whose facts the store already holds and this run builds on, and the run's mode."""
    if store is None:
        return [], "full"
    if full:
        return [], "full"
    if not store.runs:
        return [], "full (no earlier history under --out)"
    if window:
        return [], "full (--since/--until select a window)"
    if not store.usable:
        return [], "full (the history under --out was written by another version)"
    missing = store.missing_tables()
    if missing:
        return [], f"full (the table {missing[0]} under --out is gone)"
    kept = store.snapshots()
    ids = {s[1] for s in kept}
    newest = _newest(kept)
    for ref in selected.snapshots:
        if ref.snapshot_id not in ids and ref.cluster in newest and ref.snapshot_time <= newest[ref.cluster][0]:
            return [], f"full (snapshot {ref.snapshot_id} is older than the newest one kept)"
    return kept, "incremental"


def _newest(snapshots: list[tuple[str, str, datetime]]) -> dict[str, tuple[datetime, str]]:
    """Per cluster, the time and id of its newest snapshot."""
    newest: dict[str, tuple[datetime, str]] = {}
    for cluster, snapshot_id, at in snapshots:
        if cluster not in newest or (at, snapshot_id) > newest[cluster]:
            newest[cluster] = (at, snapshot_id)
    return newest


def _context(kept: list[tuple[str, str, datetime]], new: list[Any]) -> set[str]:
    """Per cluster, the kept snapshot just before its first new one: what the new one is compared with.
    Snapshots are ordered by (time, id), as the facts order them, so two taken at the same time agree."""
    first_new: dict[str, tuple[datetime, str]] = {}
    for ref in new:
        key = (ref.snapshot_time, ref.snapshot_id)
        first_new[ref.cluster] = min(key, first_new.get(ref.cluster, key))
    before: dict[str, tuple[datetime, str]] = {}
    for cluster, snapshot_id, at in kept:
        key = (at, snapshot_id)
        if cluster in first_new and key < first_new[cluster] and (cluster not in before or key > before[cluster]):
            before[cluster] = key
    return {snapshot_id for _, snapshot_id in before.values()}


ROWS_PER_SHUFFLE_PARTITION = 1_000_000
SMALL_ROWS = 1_000_000  # a read this small is planned for few jobs, not for data
# A small read's facts are written this many at a time. Each fact is a Spark job that is mostly the driver
# planning it and scheduling small stages, so a second one alongside keeps the executors busy meanwhile
# (a year's nightly update: its facts 29 s -> 26 s). A large read's jobs are the data: one at a time.
SMALL_READ_WRITERS = 2
# Metrics and incident rules run this many at a time: each is a few Spark jobs of small stages over the
# facts, so a job's scheduling and planning overlap another's work.
JOBS_AT_ONCE = 4


def concurrently(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[work(item) for item in items]``, ``JOBS_AT_ONCE`` at a time (each Spark job from a thread of its
    own; PySpark's pinned threads keep each one's job properties apart), in the order of ``items``; the
    first failure raises, and an interruption (Ctrl-C) waits only for the jobs already running."""
    with ThreadPoolExecutor(JOBS_AT_ONCE) as pool:
        return list(pool.map(work, items))  # map cancels what is still queued once a result raises


def _plan_for(spark: Any, rows: int) -> bool:
    """Size Spark's plans to the rows read, unless its configuration says otherwise; True if the read is
    small (under ``SMALL_ROWS``).

    Shuffle partitions: Spark's default of 200 costs more in task overhead than the work itself on a
    night's snapshot. Adaptive execution submits every stage as a job of its own (it would coalesce
    shuffle partitions, which are sized here already), and broadcasting a join's small side is one more
    job each time: on a small read they are most of the time taken. So adaptive execution is off, and
    Spark never broadcasts on its own (Parquet file sizes understate tables many times over, and its
    automatic broadcasts ran the driver out of memory at 50,000 partitions x 30 nights); on a large
    read the per-snapshot frame is broadcast explicitly.

    Whole-stage code generation compiles Java for every stage; on a small read that compiling is more than
    the stage's work, so it is off there and on for a large read. A week of small snapshots, three history
    runs in one session: 58, 37 and 29 s without it against 70, 45 and 38 s with it."""
    conf = spark.sparkContext.getConf()
    small = rows < SMALL_ROWS
    if not conf.contains("spark.sql.codegen.wholeStage"):
        spark.conf.set("spark.sql.codegen.wholeStage", "false" if small else "true")
    if not conf.contains("spark.sql.shuffle.partitions"):
        partitions = max(spark.sparkContext.defaultParallelism, min(200, rows // ROWS_PER_SHUFFLE_PARTITION))
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    if not conf.contains("spark.sql.autoBroadcastJoinThreshold"):
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    if not conf.contains("spark.sql.adaptive.enabled"):
        spark.conf.set("spark.sql.adaptive.enabled", "false")
    return small


def _run_id() -> str:
    import uuid

    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


SHOWN_INCIDENTS = 15


def _day(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d") if value else "-"


def run(master: str, snapshots: str, **options: Any) -> HistoryResult:
    """``run_history(session, snapshots, **options)`` on a Spark session of ``master`` (the active one under
    spark-submit), its failures told in one line: PySpark missing, or the Java exception's own message
    instead of Py4J's trace."""
    from zkstorm.errors import ZkstormError

    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ZkstormError("history needs PySpark: pip install 'zkstorm[spark]'") from None
    from zkstorm.jobs.spark import session, spark_error

    try:
        return run_history(session(master, brief=expects_update(**options)), snapshots, **options)
    except ZkstormError:
        raise
    except Exception as exc:
        raise ZkstormError(f"the history job failed: {spark_error(exc)}") from None


def expects_update(
    *, out: str | None = None, full: bool = False, since: date | None = None, until: date | None = None, **_: Any
) -> bool:
    """Whether a run with these options will most likely be a nightly update (short: ``spark.session``'s
    ``brief``): a history is already kept under a local ``out``, and nothing asks for a full run. Told
    before Spark starts, from the folder alone; a store on a remote filesystem counts as a long run. If
    the run turns out to be a full one after all (the store is of another version), it is only slower."""
    if not out or full or since or until or "://" in out:
        return False
    return os.path.isdir(os.path.join(out, STORE, "runs"))


def summary(result: HistoryResult) -> Any:
    """The run for a terminal: one line per metric, grouped by system, then the newest incidents (drawn by
    ``zkstorm.render``, as every text that came from ZooKeeper is)."""
    from zkstorm.render import history_summary

    if not result.snapshots:
        return "no committed snapshots in that range"
    heading = (
        f"{result.snapshots} snapshots of {', '.join(result.clusters)}, "
        f"{_day(result.first)} to {_day(result.last)}; {result.mode} run, read {result.read:,}"
    )
    metrics = [
        (chart.system, chart.title, result.tables.get(chart.name, 0), summary_line(chart)) for chart in result.charts
    ]
    shown = result.incidents[-SHOWN_INCIDENTS:]
    more = len(result.incidents) - len(shown)
    if not result.incidents:
        incidents_heading = "no incidents"
    else:
        incidents_heading = f"{len(result.incidents)} incidents" + (f", the newest {len(shown)}:" if more else ":")
    return history_summary(heading, metrics, [incident_line(i) for i in shown], incidents_heading)


def print_summary(result: HistoryResult, console: Any) -> None:
    """``summary`` on ``console`` (spark-submit's stderr)."""
    console.print(summary(result))


def _date(value: str) -> date:
    return date.fromisoformat(value)


def main(argv: list[str] | None = None) -> int:
    """Entry point under spark-submit (the session comes from the submit)."""
    from zkstorm.jobs.spark import session
    from zkstorm.output import terminal

    parser = argparse.ArgumentParser(prog="history.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshots")
    parser.add_argument("--since", type=_date)
    parser.add_argument("--until", type=_date)
    parser.add_argument("--out")
    parser.add_argument("--html")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--changes")
    args = parser.parse_args(argv)
    spark = session()
    result = run_history(
        spark,
        args.snapshots,
        since=args.since,
        until=args.until,
        out=args.out,
        html=args.html,
        full=args.full,
        changes=args.changes,
    )
    print_summary(result, terminal(sys.stderr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
