"""What the history keeps between runs, under ``OUT/_history``, so a nightly run reads only new snapshots.

Each run appends the facts (``metrics.FACTS``) of the snapshots it processed, one Parquet folder per
fact and run (``facts/<fact>/run=<id>``), then commits by writing its marker (``runs/<id>``: the
snapshots it covers, the facts it wrote, the runs it replaces). A run without a marker (it died) is not
there for the next one. A full rebuild, and a compaction (every ``COMPACT_AFTER`` runs, so the facts
stay a few files each), write one run that replaces all before it; the replaced folders are removed
once the new marker is written. Everything goes through Spark and Hadoop's FileSystem, so OUT may be
any path Spark can write (``hdfs://``, ``s3a://``, a local folder).

Each fact's file is sorted by ``snapshot_id``. A nightly run reads the kept rows of one night (the
night before the new one, ``facts.Window.seen_at_context``); sorted, Parquet's page statistics let the
``snapshot_id IN (...)`` filter skip every other night's pages, so that read costs one night and not
the year. Spark's event log (``internal.metrics.input.recordsRead``) of a nightly update's read of the
kept under-replicated partitions, 100,000 partitions, 63,776 rows wanted: unsorted, 2,551,035 read at 40
nights (every night's; the year grows it), sorted 71,035; out of a 360-night file, 79,315. The sort costs
little on a night's rows and more on a compaction's rewrite of the year's. A store written unsorted
reads the same, only slower, until its next compaction or rebuild sorts it.

The metric tables (``OUT/<metric>``, read by anyone) are committed with the run too, so that a nightly
run adds the new nights' rows to the per-snapshot ones instead of rewriting the year, and replaces the
folded ones (``metrics.Metric.fold``: a running state made from the committed table and the new nights'
facts) with nothing read but those: the run writes its
rows to ``pending/<id>/<metric>``, writes its marker (which names each table and whether the run
``append``s to it, ``replace``s it or ``remove``s it), then publishes: moves the pending files into
``OUT/<metric>`` (Spark names each part file with its write's UUID, so an appended file never takes
another's name) and removes ``pending/<id>``. A run that died before its marker leaves a pending folder
with no marker, which the next run removes; one that died after it leaves one with a marker, which the
next run publishes before it reads anything. A compaction rewrites each such table as one run too.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import ZkstormError
from ..units import iso_utc, parse_utc
from .inputs import text_files

STORE = "_history"
# a store of another version is rebuilt, not read (3: facts keyed by root too; 4: topologies by id; 5: the
# per-snapshot metric tables are appended to and committed with the run, so a store of 4 may sit beside
# tables a later run cannot append to; and a Kafka cluster's series goes on across its move to KRaft, with
# its ``kafka_sources`` fact; 6: the metrics that are a running state are folded night by night, from
# facts that carry their state: ``storm_supervisor_status``, ``storm_busy_streaks``; 7: runs of offline
# partitions carried night by night, ``kafka_offline_runs`` for ``kafka_offline_topics``)
VERSION = 7
COMPACT_AFTER = 8  # runs kept side by side before they are merged into one
INCIDENTS = "incidents"  # the incidents table under OUT
COVERED = "_covered"  # in its folder: what its incidents were found through (``recheck``)


@dataclass(frozen=True)
class Run:
    run_id: str
    snapshots: tuple[tuple[str, str, datetime], ...]  # (cluster, snapshot_id, snapshot_time)
    facts: tuple[str, ...]
    replaces: tuple[str, ...]
    version: int
    tables: tuple[tuple[str, str], ...] = ()  # (metric table, "append" | "replace" | "remove")
    present: tuple[str, ...] = ()  # every metric table under OUT once this run is published


class HistoryStore:
    def __init__(self, spark: Any, out: str) -> None:
        self.spark = spark
        self.out = out.rstrip("/")
        self.base = f"{self.out}/{STORE}"
        self._settle()
        self.runs = self._live_runs()
        self._read: dict[str, Any] = {}

    def _markers(self) -> list[Run]:
        runs = []
        for path, text in text_files(self.spark, f"{self.base}/runs/*/part-*"):
            try:
                m = json.loads(text)
                runs.append(
                    Run(
                        m["run"],
                        tuple((s["cluster"], s["snapshot_id"], parse_utc(s["snapshot_time"])) for s in m["snapshots"]),
                        tuple(m["facts"]),
                        tuple(m.get("replaces", ())),
                        int(m.get("version", 0)),
                        tuple((name, how) for name, how in sorted(m.get("tables", {}).items())),
                        tuple(m.get("present", ())),
                    )
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ZkstormError(
                    f"{path}: not a zkstorm history run marker ({type(exc).__name__}: {exc}); "
                    f"remove {self.base} to rebuild the history"
                ) from None
        return runs

    def _live_runs(self) -> list[Run]:
        """The committed runs that no later run replaced."""
        runs = self._markers()
        replaced = {r for run in runs for r in run.replaces}
        return sorted((run for run in runs if run.run_id not in replaced), key=lambda run: run.run_id)

    @property
    def usable(self) -> bool:
        return bool(self.runs) and all(run.version == VERSION for run in self.runs)

    def snapshots(self) -> list[tuple[str, str, datetime]]:
        return [s for run in self.runs for s in run.snapshots]

    def table(self, name: str) -> Any | None:
        """Every kept row of one fact, or None if no run wrote it."""
        if name not in self._read:
            paths = [f"{self.base}/facts/{name}/run={run.run_id}" for run in self.runs if name in run.facts]
            self._read[name] = self.spark.read.parquet(*paths) if paths else None
        return self._read[name]

    def write(
        self,
        run_id: str,
        facts: dict[str, Any],
        *,
        partitions: int = 1,
        writers: int = 1,
        large: bool = False,
    ) -> dict[str, Any]:
        """Write ``facts`` (name → DataFrame, or a function that plans it and may find nothing: None) as
        run ``run_id``'s, ``writers`` at a time (each a Spark job from a thread of its own); nothing reads
        them before ``commit``, but ``written``. Returns the schema of each fact written.

        A fact planned in its writer's thread is planned while another is written: planning a night's
        thirty facts one after another on the driver took 2 s before the first was written.

        Each file is sorted by snapshot. A ``large`` read's facts are shuffled into their files: coalesced
        instead, a fact would be computed in as many tasks as it has files, and a year's under-replicated
        partitions, their runs (a window) and the file's sort in one task ran out of memory (the year's
        full run of ``bench/bench_history.py``, 100,000 partitions a night). A small read's are coalesced,
        which spares a nightly update a stage per fact."""

        def write(name: str) -> tuple[str, Any]:
            self.spark.sparkContext.setJobDescription(f"fact {name}")  # names the job in Spark's UI
            planned = facts[name]() if callable(facts[name]) else facts[name]
            if planned is None:
                return name, None
            rows = planned.repartition(partitions) if large else planned.coalesce(partitions)
            frame = rows.sortWithinPartitions("snapshot_id")
            frame.write.mode("overwrite").parquet(f"{self.base}/facts/{name}/run={run_id}")
            return name, planned.schema

        with ThreadPoolExecutor(writers) as pool:
            written = list(pool.map(write, facts))  # list: a failed write raises here
        return {name: schema for name, schema in written if schema is not None}

    def written(self, run_id: str, schemas: dict[str, Any]) -> RunFacts:
        """The facts run ``run_id`` wrote (name → the schema it wrote them with), before it is committed:
        the new nights' alone."""
        return RunFacts(self.spark, {name: f"{self.base}/facts/{name}/run={run_id}" for name in schemas}, dict(schemas))

    def commit(
        self,
        run_id: str,
        facts: list[str],
        snapshots: list[tuple[str, str, datetime]],
        *,
        replace_all: bool = False,
        tables: dict[str, Any | None] | None = None,
        replacing: Collection[str] = (),
        writers: int = 1,
    ) -> None:
        """Commit run ``run_id`` (its ``facts`` written by ``write``): stage ``tables`` (metric name →
        its rows, appended to ``OUT/<name>``, or replacing it when named in ``replacing``; None
        removes it), write the marker, then publish the tables. With ``replace_all``
        the run replaces every run before it (a full rebuild, a compaction)."""
        tables = tables or {}
        rows = {name: frame for name, frame in tables.items() if frame is not None}

        def stage(name: str) -> None:
            self.spark.sparkContext.setJobDescription(f"metric {name}")  # names the job in Spark's UI
            # as computed: coalesced to one file, all the work before it would run in one task (see ``write``)
            rows[name].write.mode("overwrite").parquet(f"{self.base}/pending/{run_id}/{name}")

        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(stage, rows))  # list: a failed write raises here
        staged = {
            name: ("remove" if name not in rows else "replace" if name in replacing else "append") for name in tables
        }
        replaced = [run.run_id for run in self.runs] if replace_all else []
        before = set(self.runs[-1].present) if self.runs else set()
        present = (before | {name for name, how in staged.items() if how != "remove"}) - {
            name for name, how in staged.items() if how == "remove"
        }
        marker = {
            "run": run_id,
            "version": VERSION,
            "snapshots": [{"cluster": c, "snapshot_id": i, "snapshot_time": iso_utc(t)} for c, i, t in snapshots],
            "facts": sorted(facts),
            "replaces": replaced,
            "tables": staged,
            "present": sorted(present),
        }
        self.spark.createDataFrame([(json.dumps(marker),)], "value string").coalesce(1).write.mode("overwrite").text(
            f"{self.base}/runs/{run_id}"
        )
        self.publish(run_id, staged)
        self._remove(replaced)
        self.runs = self._live_runs()
        self._read.clear()

    def append(
        self,
        run_id: str,
        facts: dict[str, Any],
        snapshots: list[tuple[str, str, datetime]],
        *,
        replace_all: bool = False,
        partitions: int = 1,
        writers: int = 1,
    ) -> None:
        """``write`` then ``commit`` ``facts`` (name → DataFrame), with no metric tables."""
        self.write(run_id, facts, partitions=partitions, writers=writers)
        self.commit(run_id, list(facts), snapshots, replace_all=replace_all)

    def compact(self, run_id: str, tables: Sequence[str] = ()) -> bool:
        """Merge the live runs into one when there are more than ``COMPACT_AFTER``, and rewrite each of
        the metric tables ``tables`` that exists (appended to night by night) as one run's files."""
        if len(self.runs) <= COMPACT_AFTER:
            return False
        names = sorted({name for run in self.runs for name in run.facts})
        facts = {name: self.table(name) for name in names}
        merged = self.snapshots()
        # read through before the folders it reads from go: the new run is written first, then they are
        self.write(run_id, facts)
        kept = {name: frame.coalesce(1) for name in tables if (frame := self.metric_table(name)) is not None}
        self.commit(run_id, names, merged, replace_all=True, tables=kept, replacing=list(kept))
        return True

    def missing_tables(self) -> list[str]:
        """The metric tables the last run left under OUT that are not there now (removed by hand, or by
        a lifecycle rule): a nightly run would append to or fold into nothing, and lose their past."""
        if not self.runs:
            return []
        fs = self._fs()
        return [name for name in self.runs[-1].present if not fs.exists(self._path(f"{self.out}/{name}"))]

    def incidents(self) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
        """The rows of the incidents table under OUT and what they were found through (``write_incidents``),
        or None when there are none, or none that say so (a table written before they did)."""
        found = text_files(self.spark, f"{self.out}/{INCIDENTS}/{COVERED}/part-*")
        try:
            covered = json.loads(found[0][1]) if len(found) == 1 else None
        except ValueError:
            covered = None
        if not isinstance(covered, dict):
            return None
        try:
            rows = self.spark.read.parquet(f"{self.out}/{INCIDENTS}").collect()
        except Exception:  # a damaged table is found again whole, and rewritten: it never blocks a night
            return None
        return [row.asDict() for row in rows], covered

    def write_incidents(self, run_id: str, frame: Any, covered: dict[str, Any]) -> None:
        """Replace the incidents table under OUT with ``frame``, and ``covered`` (what the incidents were
        found through, as JSON) in its folder's ``_covered``, which readers of the table skip. Both are
        written under ``pending`` first and moved into place together: a run killed before leaves the old
        table, one killed in the move leaves none, and the next run finds every incident again."""
        pending = f"{self.base}/pending/{run_id}-{INCIDENTS}"
        frame.coalesce(1).write.mode("overwrite").parquet(pending)
        self.spark.createDataFrame([(json.dumps(covered),)], "value string").coalesce(1).write.mode("overwrite").text(
            f"{pending}/{COVERED}"
        )
        fs, target = self._fs(), self._path(f"{self.out}/{INCIDENTS}")
        fs.delete(target, True)
        fs.mkdirs(target.getParent())
        if not fs.rename(self._path(pending), target):
            raise ZkstormError(f"could not move the incidents into {self.out}/{INCIDENTS}")

    def metric_table(self, name: str) -> Any | None:
        """Every committed row of metric table ``OUT/<name>``, or None if there is none."""
        path = f"{self.out}/{name}"
        if not self._fs().exists(self._path(path)):
            return None
        return self.spark.read.parquet(path)

    def publish(self, run_id: str, tables: dict[str, str]) -> None:
        """Move run ``run_id``'s pending tables into place (``tables``: name → how, from its marker).
        Each step can be repeated, so a run that died half-way is published again by the next."""
        fs = self._fs()
        pending = f"{self.base}/pending/{run_id}"
        for name, how in sorted(tables.items()):
            source, target = self._path(f"{pending}/{name}"), self._path(f"{self.out}/{name}")
            if how == "remove":
                fs.delete(target, True)
            elif how == "replace" and fs.exists(source):
                fs.delete(target, True)
                fs.rename(source, target)
            elif how == "append" and fs.exists(source):
                fs.mkdirs(target)
                for status in fs.listStatus(source) or []:
                    part = status.getPath()
                    if part.getName().startswith("part-"):
                        fs.rename(part, self._path(f"{self.out}/{name}/{part.getName()}"))
        fs.delete(self._path(pending), True)

    def _settle(self) -> None:
        """Publish the pending tables of a committed run that died before it published them; remove
        those of a run that died before its marker."""
        fs = self._fs()
        folders = fs.globStatus(self._path(f"{self.base}/pending/*")) or []
        if not folders:
            return
        committed = {run.run_id: dict(run.tables) for run in self._markers()}
        for folder in folders:
            run_id = folder.getPath().getName()
            if run_id in committed:
                self.publish(run_id, committed[run_id])
            else:
                fs.delete(folder.getPath(), True)

    def _path(self, path: str) -> Any:
        return self.spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path)

    def _fs(self) -> Any:
        conf = self.spark.sparkContext._jsc.hadoopConfiguration()
        return self._path(self.base).getFileSystem(conf)

    def _remove(self, run_ids: list[str]) -> None:
        if not run_ids:
            return
        jvm = self.spark.sparkContext._jvm
        conf = self.spark.sparkContext._jsc.hadoopConfiguration()
        root = jvm.org.apache.hadoop.fs.Path(self.base)
        fs = root.getFileSystem(conf)
        for run_id in run_ids:
            for folder in fs.globStatus(jvm.org.apache.hadoop.fs.Path(f"{self.base}/facts/*/run={run_id}")) or []:
                fs.delete(folder.getPath(), True)
            fs.delete(jvm.org.apache.hadoop.fs.Path(f"{self.base}/runs/{run_id}"), True)


@dataclass
class RunFacts:
    """The facts one run wrote (name → folder): what the new nights' per-snapshot metrics are computed
    from, read before the run is committed."""

    spark: Any
    folders: dict[str, str]
    schemas: dict[str, Any]  # as written: Spark need not read a file's footer to learn it (a job each)

    def table(self, name: str) -> Any | None:
        folder = self.folders.get(name)
        return None if folder is None else self.spark.read.schema(self.schemas[name]).parquet(folder)
