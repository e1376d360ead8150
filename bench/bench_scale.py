"""Scale benchmark: a Kafka cluster of 1,000,000 partitions (about 3.1M znodes) and one of 100,000 (about
310,000), each with a Storm cluster of 200 topologies plus one of 500 executors (``scale_cluster.py``),
loaded into a real ZooKeeper through a snapshot file.

Each command runs cold, as a user runs it: a new ``python -m zkstorm.cli`` process, output to /dev/null,
its wall time, peak RSS and CPU (``wait4``'s, from a small launcher process; a reaped helper's CPU
included) taken from outside:
``snapshot``, ``tree / -f jsonl``, ``kafka health``, ``kafka partitions --offline``, ``storm components``
of the 500-executor topology, and over the server's own data directory ``--from-files DIR tree / -f
jsonl`` and ``--from-files DIR snapshot``. The sequential kazoo walk (get + get_children) over the first
``--baseline-znodes`` znodes of the same tree gives the baseline rate, in the same run. Printed per
size: µs per znode (linear time keeps it flat from one size to the other) and peak RSS; then, from the
two sizes, what the views that hold the whole Kafka state (``kafka health``, ``kafka partitions``) add
per partition.

Usage: ``python -u bench/bench_scale.py [--partitions 100000,1000000] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import sequential_kazoo_walk, write_result
from scale_cluster import BIG_TOPOLOGY, build, start_server

STORM_SCALE = 50  # 200 topologies, and BIG_TOPOLOGY
ONE_TOPOLOGY = {"storm components"}  # reads one topology, not the tree: no cost per znode
# streaming commands: their memory must not grow with the tree (at most STREAMING_RSS_MIB at 3M znodes)
STREAMING = ("snapshot", "tree -f jsonl", "--from-files tree -f jsonl", "--from-files snapshot")
STREAMING_RSS_MIB = 400


# A child's ru_maxrss starts from its parent's RSS at the fork (Linux keeps the larger high-water mark
# across fork and exec), and this process held the generated tree: each command is started by a small
# launcher process of its own, whose wait4 gives the command's own peak (its floor is the launcher's
# ~10 MiB, not this process's hundreds).
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
"""


def run_cold(args: list[str]) -> dict[str, Any]:
    """One ``zkstorm ARGS`` process, stdout to /dev/null: wall seconds, peak RSS (MiB) and CPU seconds (a
    reaped helper process's included); fails loudly."""
    with tempfile.NamedTemporaryFile("r", suffix=".rusage") as report:
        started = time.perf_counter()
        launcher = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, report.name, sys.executable, "-m", "zkstorm.cli", *args],
            stderr=subprocess.PIPE,
            text=True,
        )
        seconds = time.perf_counter() - started
        code, maxrss_kib, cpu = report.read().split()
    if launcher.returncode != 0 or int(code) != 0:
        raise SystemExit(f"zkstorm {' '.join(args)} exited {code}: {launcher.stderr[-2000:]}")
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(int(maxrss_kib) / 1024),
        "cpu_seconds": round(float(cpu), 2),
    }


def commands(connect: str, files: Path, out: Path) -> dict[str, list[str]]:
    live = ["--zk", connect, "--kafka-root", "/kafka"]
    return {
        "snapshot": [*live, "snapshot", str(out / "live"), "--cluster", "scale"],
        "tree -f jsonl": [*live, "tree", "/", "-f", "jsonl"],
        "kafka health": [*live, "kafka", "health"],
        "kafka partitions --offline": [*live, "kafka", "partitions", "--offline"],
        "storm components": [*live, "storm", "components", BIG_TOPOLOGY[0]],
        "--from-files tree -f jsonl": ["--from-files", str(files), "tree", "/", "-f", "jsonl"],
        "--from-files snapshot": [
            "--from-files",
            str(files),
            "--kafka-root",
            "/kafka",
            "snapshot",
            str(out / "files"),
            "--cluster",
            "scale",
        ],
    }


def one_size(partitions: int, baseline_znodes: int, heap: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="zkstorm-scale-") as state:
        base = Path(state)
        znodes, build_secs = build(base / "server", partitions, STORM_SCALE)
        print(f"{partitions:,} partitions: {znodes:,} znodes written in {build_secs:.1f}s", flush=True)
        started = time.perf_counter()
        server = start_server(base / "server", heap=heap)
        try:
            load_secs = time.perf_counter() - started
            # the server's own snapshot, written as it starts leading (under the same name as ours: the
            # zxid is the same), is what --from-files reads: a data directory ZooKeeper wrote itself
            while "Snapshot taken in" not in server.log_path.read_text(errors="replace"):
                time.sleep(0.5)
            files = base / "files"
            shutil.copytree(base / "server" / "data" / "version-2", files / "version-2")
            print(f"  ZooKeeper loaded it and is leading after {load_secs:.1f}s", flush=True)
            base_count, base_secs = sequential_kazoo_walk(server.connect_string, baseline_znodes)
            baseline_us = base_secs / base_count * 1e6
            print(f"  sequential kazoo walk: {baseline_us:.0f} µs/znode over its first {base_count:,}", flush=True)
            results: dict[str, Any] = {}
            for name, args in commands(server.connect_string, files, base / "out").items():
                result = run_cold(args)
                results[name] = result
                rate = ""
                if name not in ONE_TOPOLOGY:  # reads the whole tree (the views: the Kafka root's, most of it)
                    result["us_per_znode"] = round(result["seconds"] / znodes * 1e6, 2)
                    result["vs_sequential"] = round(baseline_us / result["us_per_znode"], 1)
                    rate = f"{result['us_per_znode']:6.1f} µs/znode ({result['vs_sequential']:5.1f}x sequential)"
                print(
                    f"  {name:<28} {result['seconds']:8.1f}s  {rate:<38}  peak RSS {result['peak_rss_mib']:>5} MiB  "
                    f"CPU {result['cpu_seconds']:.0f}s",
                    flush=True,
                )
        finally:
            server.stop()
    return {
        "partitions": partitions,
        "znodes": znodes,
        "load_seconds": round(load_secs, 1),
        "sequential_us_per_znode": round(baseline_us, 1),
        "commands": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", default="100000,1000000", help="Kafka partitions per size")
    parser.add_argument("--baseline-znodes", type=int, default=15_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    sizes = []
    for partitions in (int(p) for p in args.partitions.split(",")):
        sizes.append(one_size(partitions, args.baseline_znodes, heap="6g" if partitions > 300_000 else "2g"))
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        growth = large["znodes"] / small["znodes"]
        print(f"from {small['znodes']:,} to {large['znodes']:,} znodes ({growth:.1f}x):")
        for name in large["commands"]:
            a, b = small["commands"][name], large["commands"][name]
            added = (b["peak_rss_mib"] - a["peak_rss_mib"]) * 1024 * 1024
            per_partition = added / (large["partitions"] - small["partitions"])
            cost = f"µs/znode {a['us_per_znode']:.1f} -> {b['us_per_znode']:.1f}" if "us_per_znode" in a else ""
            print(
                f"  {name:<28} time {b['seconds'] / a['seconds']:5.1f}x  {cost:<24} peak RSS {a['peak_rss_mib']} -> "
                f"{b['peak_rss_mib']} MiB ({per_partition:,.0f} bytes per added partition)"
            )
    write_result(args.json, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
