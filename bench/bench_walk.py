"""Walk benchmark: ``zkstorm tree / -f jsonl`` against a plain sequential kazoo walk of the same tree.

Both run in this one process against one throwaway server seeded with the sandbox cluster, alternating
(baseline, zkstorm, baseline, zkstorm, …) so machine noise hits both alike; the ratio of the medians
is the result. Usage: ``python bench/bench_walk.py [--scale N] [--rounds N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import sequential_kazoo_walk, write_result


def zkstorm_tree_jsonl(connect: str, multiread: bool = True) -> int:
    """The real ``zkstorm tree / -f jsonl`` command, in this process, output to /dev/null."""
    from zkstorm.cli import cli

    os.environ["ZKSTORM_MULTIREAD"] = "1" if multiread else "0"
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        try:
            cli.main(["--zk", connect, "tree", "/", "-f", "jsonl"], prog_name="zkstorm", standalone_mode=False)
        except SystemExit as exc:
            if exc.code:
                raise
    return -1  # counted by the caller from the server side


def storm_walk_and_decode(connect: str) -> tuple[int, float, float]:
    """Walk the Storm root keeping the raw nodes (walk time), then decode each (decode time)."""
    from zkstorm.collect import decode_node
    from zkstorm.layout import Roots
    from zkstorm.sources.live import RawNode, ReadOnlySession

    roots = Roots(storm=("/storm",), kafka=())
    with ReadOnlySession(connect, timeout=30) as session:
        started = time.perf_counter()
        nodes = [n for n in session.walk("/storm") if isinstance(n, RawNode)]
        walked = time.perf_counter() - started
    started = time.perf_counter()
    for node in nodes:
        decode_node(node, roots=roots)
    decoded = time.perf_counter() - started
    return len(nodes), walked, decoded


# Views that read only what they show, each against one `get` of a znode they read: as processes (cold,
# as a user runs them) and in this process (where the tree's size would show if a view walked it).
POINT_VIEWS = {
    "kafka controller": (["--kafka-root", "/kafka", "kafka", "controller"], ["get", "/kafka/controller"]),
    "storm nimbus": (["storm", "nimbus"], ["get", "/storm/nimbuses"]),
}


def zkstorm_process(connect: str, args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "zkstorm", "--zk", connect, *args, "-f", "json"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def zkstorm_in_process(connect: str, args: list[str]) -> float:
    from zkstorm.cli import cli

    started = time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        cli.main(["--zk", connect, *args, "-f", "json"], prog_name="zkstorm", standalone_mode=False)
    return time.perf_counter() - started


def point_views(connect: str, rounds: int) -> dict[str, Any]:
    """Median time of each point view over the median time of its ``get``, alternated per round."""
    out: dict[str, Any] = {}
    for name, (view, get) in POINT_VIEWS.items():
        for how, run in (("process", zkstorm_process), ("in_process", zkstorm_in_process)):
            views, gets = [], []
            for _ in range(rounds):
                gets.append(run(connect, get))
                views.append(run(connect, view))
            ratio = statistics.median(views) / statistics.median(gets)
            out[f"{name.replace(' ', '_')}_to_get_{how}"] = round(ratio, 2)
            print(
                f"{name:<18}{how:<12}{statistics.median(views) * 1000:>8.0f} ms, one get "
                f"{statistics.median(gets) * 1000:>6.0f} ms: {ratio:.2f}x (target <= 2x)"
            )
    return out


def timed(fn: Any, *args: Any) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=110, help="sandbox scale (110 ≈ 31,000 znodes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from zkstorm.sandbox import Sandbox

    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as state:
        box = Sandbox(Path(state) / "sandbox")
        box.start()
        try:
            seeded = box.seed(scale=args.scale)
            connect = box.connect_string
            znodes, _ = sequential_kazoo_walk(connect)  # also warms the server's JIT and page cache
            print(f"tree: {znodes:,} znodes (seeded {seeded.znodes:,} in {seeded.seconds:.1f}s)", file=sys.stderr)
            storm = [storm_walk_and_decode(connect) for _ in range(args.rounds)]
            baseline, ours, pipelined = [], [], []
            for _ in range(args.rounds):
                baseline.append(sequential_kazoo_walk(connect)[1])
                ours.append(timed(zkstorm_tree_jsonl, connect))
                pipelined.append(timed(zkstorm_tree_jsonl, connect, False))
            points = point_views(connect, args.rounds)
        finally:
            box.stop()

    base_rate = znodes / statistics.median(baseline)
    our_rate = znodes / statistics.median(ours)
    pipelined_rate = znodes / statistics.median(pipelined)
    result = {
        "znodes": znodes,
        "rounds": args.rounds,
        "sequential_kazoo_znodes_per_s": round(base_rate),
        "zkstorm_tree_jsonl_znodes_per_s": round(our_rate),
        "ratio": round(our_rate / base_rate, 2),
        "zkstorm_without_multiread_znodes_per_s": round(pipelined_rate),
        "ratio_without_multiread": round(pipelined_rate / base_rate, 2),
        "target_ratio": 4.0,
        "cpus": os.cpu_count(),
        **points,
    }
    print(f"{'walk':<28}{'median s':>10}{'znodes/s':>12}")
    print(f"{'sequential kazoo':<28}{statistics.median(baseline):>10.2f}{base_rate:>12,.0f}")
    print(f"{'zkstorm tree / -f jsonl':<28}{statistics.median(ours):>10.2f}{our_rate:>12,.0f}")
    print(f"{'  same, ZKSTORM_MULTIREAD=0':<28}{statistics.median(pipelined):>10.2f}{pipelined_rate:>12,.0f}")
    print(
        f"ratio {result['ratio']:.2f}x (target >= {result['target_ratio']:.0f}x); "
        f"without multiRead {result['ratio_without_multiread']:.2f}x"
    )
    storm_nodes = storm[0][0]
    walk_us = statistics.median(s[1] for s in storm) / storm_nodes * 1e6
    decode_us = statistics.median(s[2] for s in storm) / storm_nodes * 1e6
    sequential_us = statistics.median(baseline) / znodes * 1e6
    result.update(
        storm_znodes=storm_nodes,
        storm_walk_us_per_znode=round(walk_us, 1),
        storm_decode_us_per_znode=round(decode_us, 1),
        storm_decode_to_walk=round(decode_us / walk_us, 3),
        sequential_kazoo_us_per_znode=round(sequential_us, 1),
        storm_decode_to_sequential_walk=round(decode_us / sequential_us, 3),
        storm_decode_target=0.25,
    )
    print(
        f"storm subtree: {storm_nodes:,} znodes; decode {decode_us:.1f} µs/znode = "
        f"{decode_us / walk_us:.2f} of zkstorm's multiRead walk ({walk_us:.1f} µs/znode), "
        f"{decode_us / sequential_us:.3f} of the sequential kazoo walk ({sequential_us:.0f} µs/znode); "
        "target < 0.25"
    )
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
