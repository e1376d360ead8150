"""History benchmark: the PySpark job over 30 and over 60 daily snapshots of a ~50,000-partition cluster.

One real ``zkstorm snapshot`` of a sandbox holding the synthetic cluster at ~50,000 Kafka partitions is
taken, then cloned into 60 nights: each clone gets its own id and time, and ~1% of its partitions lose
an ISR member (so the ISR-shrink, under-replication and chronic metrics have work to do). The job runs
on local[*] over the newest 30, then over all 60; the ratio of the two times is the result (target
<= 2.2x). Usage: ``python bench/bench_history.py [--partitions N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from benchlib import write_result

HISTORY_TABLES = {
    "storm_topologies",
    "storm_errors",
    "storm_supervisors",
    "storm_workers",
    "storm_executors",
    "kafka_brokers",
    "kafka_controllers",
    "kafka_controller_epochs",
    "kafka_partitions",
    "kafka_topics",
    "znodes",
}


def base_snapshot(out: Path, partitions: int) -> dict:
    from zkstorm.sandbox import Sandbox
    from zkstorm.synth import KAFKA_PARTITIONS_PER_SCALE

    box = Sandbox(out.parent / "sandbox")
    box.start()
    try:
        box.seed(scale=max(1, math.ceil(partitions / KAFKA_PARTITIONS_PER_SCALE)))
        command = [sys.executable, "-m", "zkstorm.cli", "--zk", box.connect_string, "--kafka-root", "/kafka"]
        subprocess.run([*command, "snapshot", str(out), "--snapshot-id", "base"], check=True)
    finally:
        box.stop()
    return json.loads((out / "_manifests" / "base.json").read_text())


def clone_nights(base_dir: Path, manifest: dict, target: Path, nights: int) -> int:
    """Write ``nights`` committed snapshots into ``target``, each a perturbed copy of the base one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(5)
    first = datetime(2026, 1, 1, 2, 30, tzinfo=timezone.utc)
    tables = {
        name: pq.read_table(base_dir / f)
        for f in manifest["files"]
        if (name := f.split("/", 1)[0]) in HISTORY_TABLES  # what the job reads; the rest would only be copied
    }
    rows = 0
    for night in range(nights):
        at = first + timedelta(days=night)
        snapshot_id = f"bench@{at:%Y-%m-%d}"
        files = []
        for name, table in tables.items():
            n = table.num_rows
            table = table.set_column(
                table.schema.get_field_index("snapshot_id"), "snapshot_id", pa.array([snapshot_id] * n)
            )
            table = table.set_column(
                table.schema.get_field_index("snapshot_time"),
                "snapshot_time",
                pa.array([at] * n, type=table.schema.field("snapshot_time").type),
            )
            if name == "kafka_partitions":
                isr = table.column("isr").to_pylist()
                under = table.column("under_replicated").to_pylist()
                for i in rng.sample(range(n), n // 100):
                    if len(isr[i]) > 1:
                        isr[i] = isr[i][:-1]
                        under[i] = True
                table = table.set_column(
                    table.schema.get_field_index("isr"), "isr", pa.array(isr, pa.list_(pa.int64()))
                )
                table = table.set_column(
                    table.schema.get_field_index("under_replicated"), "under_replicated", pa.array(under)
                )
            relative = f"{name}/snapshot_date={at:%Y-%m-%d}/part-{snapshot_id}.parquet"
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, target / relative)
            files.append(relative)
            rows += n
        (target / "_manifests").mkdir(parents=True, exist_ok=True)
        (target / "_manifests" / f"{snapshot_id}.json").write_text(
            json.dumps(
                {
                    "snapshot_id": snapshot_id,
                    "cluster": "bench",
                    "snapshot_time": at.isoformat(),
                    "files": files,
                    "tables": {k: v.num_rows for k, v in tables.items()},
                }
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=50_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from zkstorm.jobs.history import run_history
    from zkstorm.jobs.spark import session

    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as scratch:
        base_dir = Path(scratch) / "base"
        manifest = base_snapshot(base_dir, args.partitions)
        partitions = manifest["tables"].get("kafka_partitions", 0)
        results = []
        spark = session("local[*]")
        for nights in (30, 60):
            target = Path(scratch) / f"nights-{nights}"
            rows = clone_nights(base_dir, manifest, target, nights)
            run_history(spark, str(target))  # warm-up: JIT, caches, file listing
            started = time.perf_counter()
            result = run_history(spark, str(target), out=str(Path(scratch) / f"metrics-{nights}"))
            seconds = time.perf_counter() - started
            results.append({"snapshots": result.snapshots, "rows": rows, "seconds": round(seconds, 1)})
            print(
                f"{result.snapshots} snapshots x {partitions:,} partitions: {seconds:6.1f}s  "
                f"{rows / seconds:>10,.0f} rows/s",
                flush=True,
            )
    ratio = results[1]["seconds"] / results[0]["seconds"]
    print(f"60 snapshots took {ratio:.2f}x the time of 30 (target <= 2.2x)")
    write_result(args.json, {"partitions": partitions, "runs": results, "ratio": round(ratio, 2)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
