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
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import ZkstormError
from ..units import iso_utc, parse_utc
from .inputs import text_files

STORE = "_history"
VERSION = 4  # a store of another version is rebuilt, not read (3: facts keyed by root too; 4: topologies by id)
COMPACT_AFTER = 8  # runs kept side by side before they are merged into one


@dataclass(frozen=True)
class Run:
    run_id: str
    snapshots: tuple[tuple[str, str, datetime], ...]  # (cluster, snapshot_id, snapshot_time)
    facts: tuple[str, ...]
    replaces: tuple[str, ...]
    version: int


class HistoryStore:
    def __init__(self, spark: Any, out: str) -> None:
        self.spark = spark
        self.base = f"{out.rstrip('/')}/{STORE}"
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
        """Write ``facts`` (name → DataFrame) as run ``run_id``, ``writers`` at a time (each a Spark job
        from a thread of its own), and commit it; with ``replace_all`` it replaces every run before it
        (a full rebuild)."""

        def write(name: str) -> None:
            frame = facts[name].coalesce(partitions).sortWithinPartitions("snapshot_id")
            frame.write.mode("overwrite").parquet(f"{self.base}/facts/{name}/run={run_id}")

        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, facts))  # list: a failed write raises here
        replaced = [run.run_id for run in self.runs] if replace_all else []
        marker = {
            "run": run_id,
            "version": VERSION,
            "snapshots": [{"cluster": c, "snapshot_id": i, "snapshot_time": iso_utc(t)} for c, i, t in snapshots],
            "facts": sorted(facts),
            "replaces": replaced,
        }
        self.spark.createDataFrame([(json.dumps(marker),)], "value string").coalesce(1).write.mode("overwrite").text(
            f"{self.base}/runs/{run_id}"
        )
        self._remove(replaced)
        self.runs = self._live_runs()
        self._read.clear()

    def compact(self, run_id: str) -> bool:
        """Merge the live runs into one when there are more than ``COMPACT_AFTER``."""
        if len(self.runs) <= COMPACT_AFTER:
            return False
        names = sorted({name for run in self.runs for name in run.facts})
        facts = {name: self.table(name) for name in names}
        merged = self.snapshots()
        # read through before the folders it reads from go: the new run is written first, then they are
        self.append(run_id, facts, merged, replace_all=True)
        return True

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
