"""History benchmark, cold, as a user runs it: every figure is a whole ``zkstorm history`` process (JVM
start, Spark session, job, report), timed from the outside.

1. **Two small snapshots** (the sandbox cluster, taken twice), against a bare Spark start in the same
   run (a process that starts the same local session and counts one row): target <= 60 s.
2. **A year**: 365 nightly snapshots of a 100,000-partition cluster, written with pyarrow from one real
   snapshot of the sandbox (its Kafka topics copied until there are that many partitions; ~1% of the
   partitions lose an ISR member each night, a broker is gone for three nights mid-year). Timed: the
   full history of the first 30 nights and of all 365 (target <= 10 minutes, time linear in nights:
   the slope and fixed part are printed), then the nightly update at 30 nights and at 365 (night 31
   added to a month's history, night 366 to the year's, the same partitions: target <= 30 s each, and
   within ``FLAT`` of each other, the update's cost flat in the history's length), then a full rebuild
   of the 366 nights (``--full``) whose tables must equal the incremental run's.

With ``--standalone N`` every history runs on a Spark standalone cluster the benchmark starts on
loopback from pyspark's own launcher (a master and N workers of one core each, ``tests/real/hadoop.py``),
with ``--master spark://…``: what the cluster path costs on one machine, beside ``local[2]``'s figures.

Usage: ``python -u bench/bench_history.py [--nights 365] [--partitions 100000] [--standalone N]
[--json FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchlib import suite_module, write_result

FIRST_NIGHT = datetime(2026, 1, 1, 2, 30, tzinfo=UTC)
GONE_NIGHTS = range(180, 183)  # the last broker is not registered on these nights
MONTH = 30  # the short history the year's update is compared with
FLAT = 0.25  # the update at MONTH nights and at the year's within this fraction of each other
CLUSTER = "bench"  # every row's cluster and the manifest's, as zkstorm snapshot writes them


def zkstorm(*args: str) -> float:
    """Seconds a whole ``zkstorm`` process took; its output is kept only when it fails."""
    return zkstorm_stages(*args)[0]


STAGE_LINE = re.compile(r"^zkstorm: info zkstorm\.progress: (.+): (\d+\.\d)s$", re.MULTILINE)


MASTER: list[str] = []  # ``--master URL`` for every history run, with --standalone
EXECUTOR_MEMORY = "3g"  # each one-core executor's, with --standalone (the local driver has 4g for both cores)


def zkstorm_stages(*args: str) -> tuple[float, list[tuple[str, float]]]:
    """Seconds a whole ``zkstorm -v`` process took, and each stage's seconds as its log says."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "zkstorm.cli", "-v", *args]
    if MASTER and args[0] == "history":
        command += MASTER
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"zkstorm {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, [(stage, float(secs)) for stage, secs in STAGE_LINE.findall(done.stderr)]


def bare_spark() -> float:
    """A process that starts the history's Spark session and counts one row: the floor under any job."""
    master = MASTER[1] if MASTER else "local[*]"
    code = f"from zkstorm.jobs.spark import session; session({master!r}).range(1).count()"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - started


def standalone(folder: Path, workers: int) -> Any:
    """A started standalone master and ``workers`` one-core workers; each history's executors get
    ``EXECUTOR_MEMORY`` (``PYSPARK_SUBMIT_ARGS``, which pyspark's launcher reads)."""
    SparkStandalone = suite_module("tests.real.hadoop").SparkStandalone
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--conf spark.executor.memory={EXECUTOR_MEMORY} pyspark-shell"
    return SparkStandalone(folder, cores=1, memory=EXECUTOR_MEMORY, workers=workers).start()


def sandbox_snapshots(out: Path, count: int, scale: int) -> None:
    """``count`` real ``zkstorm snapshot`` runs of a sandbox seeded at ``scale``."""
    from zkstorm.sandbox.seed import Sandbox

    box = Sandbox(out.parent / f"sandbox-{scale}")
    box.start()
    try:
        box.seed(scale=scale)
        for i in range(count):
            zkstorm(
                "--zk", box.connect_string, "--kafka-root", "/kafka", "snapshot", str(out), "--snapshot-id", f"s{i}"
            )
    finally:
        box.stop()


def year_of_nights(base: Path, target: Path, nights: range, partitions: int) -> dict[str, int]:
    """Write ``nights`` committed snapshots into ``target`` from the one snapshot under ``base``: the
    tables the history reads, Kafka's copied until it has ``partitions`` partitions."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from zkstorm.jobs.metrics import SNAPSHOT_TABLES

    (manifest_path,) = (base / "_manifests").glob("*.json")
    manifest = json.loads(manifest_path.read_text())
    tables = {
        name: pq.read_table(base / f) for f in manifest["files"] if (name := f.split("/", 1)[0]) in SNAPSHOT_TABLES
    }
    copies = max(1, round(partitions / max(1, tables["kafka_partitions"].num_rows)))

    def copied(table: pa.Table, column: str, rename: Any) -> pa.Table:
        parts = [table]
        for k in range(1, copies):
            field = table.schema.field(column)
            parts.append(table.set_column(table.schema.get_field_index(column), field, rename(table[column], k)))
        return pa.concat_tables(parts)

    tables["kafka_partitions"] = copied(
        tables["kafka_partitions"], "topic", lambda c, k: pc.binary_join_element_wise(c, pa.scalar(f"-{k}"), "")
    )
    tables["kafka_topics"] = copied(
        tables["kafka_topics"], "topic", lambda c, k: pc.binary_join_element_wise(c, pa.scalar(f"-{k}"), "")
    )
    topic_paths = pc.match_substring_regex(tables["znodes"]["path"], r"^/kafka/brokers/topics/[^/]+/")
    topic_znodes = tables["znodes"].filter(topic_paths)
    extra = [
        topic_znodes.set_column(
            topic_znodes.schema.get_field_index("path"),
            topic_znodes.schema.field("path"),
            pc.replace_substring_regex(topic_znodes["path"], r"^(/kafka/brokers/topics/[^/]+)", rf"\1-{k}"),
        )
        for k in range(1, copies)
    ]
    tables["znodes"] = pa.concat_tables([tables["znodes"], *extra])

    p = tables["kafka_partitions"]
    isr = p["isr"].to_pylist()
    shrunk = pa.array([i[:-1] if i and len(i) > 1 else i for i in isr], p.schema.field("isr").type)
    full_isr = p["isr"].combine_chunks()
    can_shrink = pa.array([bool(i) and len(i) > 1 for i in isr])
    brokers = tables["kafka_brokers"]
    last_broker = max(brokers["broker_id"].to_pylist())
    rng = random.Random(5)
    rows: dict[str, int] = {}
    for night in nights:
        at = FIRST_NIGHT + timedelta(days=night)
        snapshot_id = f"bench@{at:%Y-%m-%d}"
        picked = [False] * p.num_rows
        for i in rng.sample(range(p.num_rows), p.num_rows // 100):
            picked[i] = True
        mask = pc.and_(pa.array(picked), can_shrink)
        files = []
        for name, table in tables.items():
            if name == "kafka_partitions":
                table = table.set_column(table.schema.get_field_index("isr"), "isr", pc.if_else(mask, shrunk, full_isr))
                under = table.schema.get_field_index("under_replicated")
                table = table.set_column(under, "under_replicated", pc.or_(mask, table["under_replicated"]))
            if name == "kafka_brokers" and night in GONE_NIGHTS:
                table = table.filter(pc.not_equal(table["broker_id"], last_broker))
            n = table.num_rows
            table = table.set_column(
                table.schema.get_field_index("snapshot_id"), "snapshot_id", pa.array([snapshot_id] * n, pa.string())
            )
            table = table.set_column(table.schema.get_field_index("cluster"), "cluster", pa.array([CLUSTER] * n))
            table = table.set_column(
                table.schema.get_field_index("snapshot_time"),
                "snapshot_time",
                pa.array([at] * n, type=table.schema.field("snapshot_time").type),
            )
            relative = f"{name}/snapshot_date={at:%Y-%m-%d}/part-{snapshot_id}.parquet"
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, target / relative)
            files.append(relative)
            rows[name] = n
        (target / "_manifests").mkdir(parents=True, exist_ok=True)
        (target / "_manifests" / f"{snapshot_id}.json").write_text(
            json.dumps(
                {
                    "snapshot_id": snapshot_id,
                    "cluster": CLUSTER,
                    "snapshot_time": at.isoformat(),
                    "files": files,
                    "tables": rows,
                }
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--standalone", type=int, metavar="N", help="run on a standalone master, N one-core workers")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.nights <= MONTH:
        parser.error(f"--nights must be more than {MONTH}: the update at {MONTH} nights is compared with it")
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as scratch_dir, contextlib.ExitStack() as stack:
        scratch = Path(scratch_dir)
        if args.standalone:
            cluster = standalone(scratch / "spark", args.standalone)
            stack.callback(cluster.stop)
            MASTER[:] = ["--master", cluster.url]
            result["master"] = f"standalone, {args.standalone} workers of one core, {EXECUTOR_MEMORY} executors"
            print(f"on {cluster.url}: {result['master']}", flush=True)

        small = scratch / "small"
        sandbox_snapshots(small, 2, scale=1)
        spark_alone = bare_spark()
        two = zkstorm("history", str(small), "--out", str(scratch / "small-out"), "--html", str(scratch / "small.html"))
        print(
            f"two small snapshots: {two:.1f}s as a whole process (target <= 60 s); a bare Spark start: "
            f"{spark_alone:.1f}s ({two / spark_alone:.1f}x)",
            flush=True,
        )
        result["two_small_snapshots"] = {"seconds": round(two, 1), "bare_spark_seconds": round(spark_alone, 1)}

        base = scratch / "base"
        sandbox_snapshots(base, 1, scale=10)
        nights = scratch / "nights"
        started = time.perf_counter()
        rows = year_of_nights(base, nights, range(args.nights), args.partitions)
        print(
            f"{args.nights} nights written in {time.perf_counter() - started:.0f}s: "
            f"{rows['kafka_partitions']:,} partitions, {sum(rows.values()):,} rows per night",
            flush=True,
        )

        # the month has nights of its own (the year's first 30, written again), so that its update is a
        # plain incremental run as the year's is: --until would make every run of it a full one
        month_nights, month_out = scratch / "month-nights", scratch / "month"
        year_of_nights(base, month_nights, range(MONTH), args.partitions)
        month = zkstorm("history", str(month_nights), "--out", str(month_out))
        year_of_nights(base, month_nights, range(MONTH, MONTH + 1), args.partitions)
        update_month, month_stages = zkstorm_stages(
            "history", str(month_nights), "--out", str(month_out), "--html", str(scratch / "month.html")
        )
        year_out = scratch / "year"
        year = zkstorm("history", str(nights), "--out", str(year_out), "--html", str(scratch / "year.html"))
        slope = (year - month) / (args.nights - MONTH)
        print(
            f"full history: {MONTH} nights {month:.1f}s, {args.nights} nights {year:.1f}s (target <= 600 s); "
            f"{slope:.2f}s per night on top of {month - MONTH * slope:.1f}s",
            flush=True,
        )

        year_of_nights(base, nights, range(args.nights, args.nights + 1), args.partitions)
        update, stages = zkstorm_stages(
            "history", str(nights), "--out", str(year_out), "--html", str(scratch / "year.html")
        )
        rebuild_out = scratch / "rebuild"
        rebuild = zkstorm("history", str(nights), "--out", str(rebuild_out), "--full")
        differ = list(suite_module("tests.history_tables").differing(year_out, rebuild_out))
        print(
            f"nightly update at {MONTH} nights (night {MONTH + 1}): {update_month:.1f}s; at {args.nights} nights "
            f"(night {args.nights + 1}): {update:.1f}s ({update / update_month:.2f}x; target <= 30 s each, "
            f"within {FLAT:.0%} of each other); a full rebuild of {args.nights + 1} nights {rebuild:.1f}s "
            f"({rebuild / update:.1f}x the update); tables "
            + ("identical" if not differ else f"DIFFER: {', '.join(differ)}"),
            flush=True,
        )
        for nights_kept, seconds, its_stages in ((MONTH, update_month, month_stages), (args.nights, update, stages)):
            staged = sum(secs for _, secs in its_stages)
            print(
                f"  the update's stages at {nights_kept} nights: "
                + "; ".join(f"{stage} {secs:.1f}s" for stage, secs in its_stages)
                + f"; the rest (Python and imports, the process's end) {seconds - staged:.1f}s",
                flush=True,
            )
        result["year"] = {
            "nights": args.nights,
            "partitions": rows["kafka_partitions"],
            "rows_per_night": sum(rows.values()),
            "full_30_seconds": round(month, 1),
            "full_seconds": round(year, 1),
            "seconds_per_night": round(slope, 2),
            "update_seconds": round(update, 1),
            "update_stages": [{"stage": stage, "seconds": secs} for stage, secs in stages],
            "month_nights": MONTH,
            "update_month_seconds": round(update_month, 1),
            "update_month_stages": [{"stage": stage, "seconds": secs} for stage, secs in month_stages],
            "rebuild_seconds": round(rebuild, 1),
            "incremental_equals_full": not differ,
        }
    write_result(args.json, result)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
