"""S3 round trip: ``snapshot``, ``diff`` and ``history`` over ``s3://`` against a real S3-protocol server
(moto on loopback, ``tests/s3server.py``), each beside the same command on a local folder, in the same run.

The sandbox cluster at ``--scale`` is snapshotted twice (two snapshot ids) into a local folder and into
a bucket; then ``diff`` of the two, and ``history --out`` (Spark, local master; over S3 through pyarrow
and a local staging folder, see ``zkstorm/export/objectstore.py``). Every command is a new process.
Usage: ``python -u bench/bench_s3.py [--scale 10] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import suite_module, write_result


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"zkstorm {' '.join(args)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    S3Server = suite_module("tests.s3server").S3Server
    from zkstorm.sandbox.seed import Sandbox

    s3 = S3Server()
    s3.client().create_bucket(Bucket="zkstorm-bench")
    env = {**os.environ, **s3.env}
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="zkstorm-bench-s3-") as state:
            box = Sandbox(Path(state) / "sandbox")
            box.start()
            try:
                box.seed(scale=args.scale)
                live = ["--zk", box.connect_string, "--kafka-root", "/kafka"]
                for where, snaps, out in (
                    ("local", str(Path(state) / "snaps"), str(Path(state) / "hist")),
                    ("s3", "s3://zkstorm-bench/snaps", "s3://zkstorm-bench/hist"),
                ):
                    row = results[where] = {}
                    for snapshot_id in ("a", "b"):
                        row[f"snapshot {snapshot_id}"] = timed(
                            [*live, "snapshot", snaps, "--snapshot-id", snapshot_id], env
                        )
                    row["diff a b"] = timed(["diff", snaps, "a", "b", "-f", "json"], env)
                    row["history --out"] = timed(["history", snaps, "--out", out], env)
                    row["history --out, incremental"] = timed(["history", snaps, "--out", out], env)
            finally:
                box.stop()
    finally:
        s3.stop()
    print(f"sandbox at scale {args.scale}; seconds per command, local folder and s3:// (moto on loopback):")
    for name in results["local"]:
        local, remote = results["local"][name], results["s3"][name]
        print(f"  {name:<28} local {local:6.1f}s   s3 {remote:6.1f}s   ({remote / local:.2f}x)")
    write_result(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
