"""Snapshot benchmark: peak RSS and znodes/s of ``zkstorm snapshot`` for ~30,000 and ~300,000 znodes.

Each size gets a throwaway sandbox; the snapshot runs as a child process so its peak RSS can be read
from ``wait4``. The sequential kazoo walk (get + get_children per znode) of the same tree is timed over
its first ``--baseline-znodes`` znodes for a rate, in the same run.
Usage: ``python bench/bench_snapshot.py [--scales 110,1100] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import sequential_kazoo_walk, write_result


def run_snapshot(connect: str, out: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS in MiB, znodes) of one ``zkstorm snapshot`` child process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkstorm.cli",
            "--zk",
            connect,
            "--kafka-root",
            "/kafka",
            "snapshot",
            str(out),
            "--cluster",
            "bench",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    stderr = child.stderr.read() if child.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"snapshot failed: {stderr}")
    (manifest,) = [json.loads(p.read_text()) for p in (out / "_manifests").glob("*.json")]
    return seconds, usage.ru_maxrss // 1024, int(manifest["znodes"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scales", default="110,1100", help="sandbox scales (110 ≈ 31k znodes, 1100 ≈ 310k)")
    parser.add_argument("--baseline-znodes", type=int, default=15_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from zkstorm.sandbox.seed import Sandbox

    results = []
    for scale in (int(s) for s in args.scales.split(",")):
        with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as state:
            box = Sandbox(Path(state) / "sandbox")
            box.start()
            try:
                box.seed(scale=scale)
                seconds, rss, znodes = run_snapshot(box.connect_string, Path(state) / "out")
                base_count, base_secs = sequential_kazoo_walk(box.connect_string, args.baseline_znodes)
            finally:
                box.stop()
        results.append(
            {
                "scale": scale,
                "znodes": znodes,
                "seconds": round(seconds, 1),
                "peak_rss_mib": rss,
                "znodes_per_s": round(znodes / seconds),
                "sequential_znodes_per_s": round(base_count / base_secs),
                "ratio": round((znodes / seconds) / (base_count / base_secs), 2),
            }
        )
        print(
            f"{znodes:>9,} znodes: {seconds:6.1f}s  {znodes / seconds:>8,.0f} znodes/s  peak RSS {rss} MiB  "
            f"({results[-1]['ratio']}x the sequential walk's {results[-1]['sequential_znodes_per_s']:,} znodes/s)"
        )
    if len(results) >= 2:
        growth = results[-1]["peak_rss_mib"] / results[0]["peak_rss_mib"]
        print(
            f"peak RSS grew {growth:.2f}x for {results[-1]['znodes'] / results[0]['znodes']:.1f}x the znodes "
            f"(target <= 1.5x); snapshot speed target >= 3x the sequential walk"
        )
    write_result(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
