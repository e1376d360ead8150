"""Kafka health benchmark: ``zkstorm kafka health`` over a synthetic cluster of ~100,000 partitions.

Seeds a throwaway server with the sandbox's Kafka cluster scaled to the asked number of partitions,
then, in this one process: the real ``zkstorm kafka health -f json`` command (one walk of the Kafka
root, decoding and health rules included) and a plain sequential kazoo walk (get + get_children per
znode) of the same root. The sequential walk would need minutes for the whole tree, so it is timed
over its first ``--baseline-znodes`` znodes, which is enough for a rate.
Usage: ``python bench/bench_kafka.py [--partitions N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from benchlib import sequential_kazoo_walk, write_result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--baseline-znodes", type=int, default=15_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from zkstorm.cli import cli
    from zkstorm.sandbox.seed import Sandbox, seed
    from zkstorm.sandbox.synth import KAFKA_PARTITIONS_PER_SCALE, kafka_cluster

    scale = max(1, math.ceil(args.partitions / KAFKA_PARTITIONS_PER_SCALE))
    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as state:
        box = Sandbox(Path(state) / "sandbox")
        box.start()
        try:
            seeded = seed(box.connect_string, kafka_cluster(scale=scale, now=int(time.time()), root="/kafka"))
            connect = box.connect_string + "/kafka"
            print(f"seeded {seeded.znodes:,} znodes in {seeded.seconds:.1f}s", file=sys.stderr)
            started = time.perf_counter()
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                try:
                    cli.main(
                        ["--zk", connect, "kafka", "health", "-f", "json"], prog_name="zkstorm", standalone_mode=False
                    )
                except SystemExit as exc:
                    if exc.code:
                        raise
            health_secs = time.perf_counter() - started
            base_count, base_secs = sequential_kazoo_walk(connect, args.baseline_znodes)
        finally:
            box.stop()
    partitions = scale * KAFKA_PARTITIONS_PER_SCALE + 50
    znodes = seeded.znodes + 1
    result = {
        "partitions": partitions,
        "kafka_root_znodes": znodes,
        "kafka_health_seconds": round(health_secs, 2),
        "kafka_health_znodes_per_s": round(znodes / health_secs),
        "sequential_kazoo_znodes_per_s": round(base_count / base_secs),
        "sequential_measured_over_znodes": base_count,
        "ratio": round((znodes / health_secs) / (base_count / base_secs), 2),
    }
    print(
        f"kafka health over {partitions:,} partitions ({znodes:,} znodes): {health_secs:.1f}s, "
        f"{result['kafka_health_znodes_per_s']:,} znodes/s; sequential kazoo walk "
        f"{result['sequential_kazoo_znodes_per_s']:,} znodes/s -> {result['ratio']}x"
    )
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
