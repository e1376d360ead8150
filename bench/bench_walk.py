"""Walk benchmark: ``zkstorm tree / -f jsonl`` and ``zkstorm snapshot`` against a plain sequential kazoo
walk of the same tree, and against what the ZooKeeper server itself can serve.

The tree is about 35,000 znodes of real-format payloads: the fixture clusters' exact Storm and Kafka bytes,
their topologies and topics copied under new ids (``benchlib.real_format_nodes``). Each zkstorm command
runs cold, as a user runs it: a new ``python -m zkstorm.cli`` process, output to /dev/null. Rounds
alternate (baseline, tree, snapshot, …) so machine noise hits all alike; ratios are of the medians.

A fourth run, ``snapshot, no reads``, is the snapshot with its reads taken away: a cold process reads the
whole tree into memory first (untimed), then snapshots it from there (``snapshot_without_reads``). What it
takes is the snapshot's own work (start, decoding, joins, Parquet); its ratio is the most any faster way
of reading ZooKeeper could give the snapshot on this machine.

The server's CPU time (utime + stime of its JVM, ``/proc/<pid>/stat``) is read around every run: its CPU
per znode gives the rate a client could reach if the server were the only limit (znodes / server CPU
seconds), and the fraction of it each command reaches says how client-bound it still is.

Usage: ``python bench/bench_walk.py [--znodes N] [--rounds N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import process_cpu_seconds, real_format_nodes, sequential_kazoo_walk, write_result

TARGET_RATIO = 20.0


# A command runs as an installed zkstorm does: from compiled bytecode (pip compiles it at install time).
# The bytecode goes to a cache of this run's own, so nothing is written beside the sources, and a
# PYTHONDONTWRITEBYTECODE in the caller's environment does not make every run compile every module.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


_CLIENT_CPU: list[float] = []  # user + system CPU seconds of each zkstorm process, in run order


def timed_child(
    argv: list[str], env: dict[str, str] | None = None, *, capture: bool = False
) -> tuple[float, bytes, float]:
    """(wall seconds, stdout if ``capture`` else nothing (it goes to /dev/null), CPU seconds from ``wait4``)
    of one ``python ARGV`` process; its stderr goes to a file (no pipe to fill while its stdout is read),
    quoted if it fails."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, *argv],
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=errors,
            env={**_CHILD_ENV, **(env or {})},
        )
        stdout = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(argv)} exited {child.returncode}: {errors.read().decode()[-2000:]}")
    return seconds, stdout, usage.ru_utime + usage.ru_stime


def cold(connect: str, args: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one ``python -m zkstorm.cli --zk CONNECT ARGS`` process, stdout to /dev/null; its
    CPU seconds are appended to ``_CLIENT_CPU``."""
    seconds, _, cpu = timed_child(["-m", "zkstorm.cli", "--zk", connect, *args], env)
    _CLIENT_CPU.append(cpu)
    return seconds


def snapshot_without_reads(connect: str, out: str) -> dict[str, float]:
    """In a process of its own (``--snapshot-without-reads``): read the whole tree into memory, then run
    ``zkstorm snapshot OUT --cluster bench`` as the command line does, its walk of the tree served from
    memory (every other read, such as the roots' listing, is live). Returns the seconds and CPU seconds
    spent reading, which the caller takes off the process's own."""
    import resource

    from zkstorm.cli import cli
    from zkstorm.sources.live import ReadOnlySession

    def cpu() -> float:
        own, helper = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + helper.ru_utime + helper.ru_stime

    started, cpu_before = time.perf_counter(), cpu()
    with ReadOnlySession(connect, timeout=30) as session:
        nodes = list(session.walk("/"))
    read, read_cpu = time.perf_counter() - started, cpu() - cpu_before
    live_walk = ReadOnlySession.walk

    def walk(self: Any, path: str = "/", *, max_depth: int | None = None, stats: Any = None) -> Any:
        if path != "/" or max_depth is not None:
            yield from live_walk(self, path, max_depth=max_depth, stats=stats)
            return
        for node in nodes:
            if stats is not None:
                stats.znodes += 1
            yield node

    ReadOnlySession.walk = walk  # type: ignore[method-assign]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        cli.main(["--zk", connect, "snapshot", out, "--cluster", "bench"], prog_name="zkstorm", standalone_mode=False)
    return {"read_seconds": read, "read_cpu_seconds": read_cpu}


def cold_without_reads(connect: str, out: str) -> float:
    """Wall seconds of a ``snapshot_without_reads`` process less its reading; its CPU less the reading's
    is appended to ``_CLIENT_CPU``."""
    seconds, stdout, cpu = timed_child([__file__, "--snapshot-without-reads", connect, out], capture=True)
    reading = json.loads(stdout)
    _CLIENT_CPU.append(cpu - reading["read_cpu_seconds"])
    return seconds - reading["read_seconds"]


def storm_walk_and_decode(connect: str) -> tuple[int, float, float]:
    """Walk the Storm root keeping the raw nodes (walk time), then decode each (decode time)."""
    from zkstorm.layout import Roots
    from zkstorm.model.walk import decode_node
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
    "kafka controller": (["--kafka-root", "/kafka-prod", "kafka", "controller"], ["get", "/kafka-prod/controller"]),
    "storm nimbus": (["storm", "nimbus"], ["get", "/storm/nimbuses"]),
}


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
        for how in ("process", "in_process"):
            views, gets = [], []
            for _ in range(rounds):
                for args, into in ((get, gets), (view, views)):
                    into.append(
                        cold(connect, [*args, "-f", "json"]) if how == "process" else zkstorm_in_process(connect, args)
                    )
            ratio = statistics.median(views) / statistics.median(gets)
            out[f"{name.replace(' ', '_')}_to_get_{how}"] = round(ratio, 2)
            print(
                f"{name:<18}{how:<12}{statistics.median(views) * 1000:>8.0f} ms, one get "
                f"{statistics.median(gets) * 1000:>6.0f} ms: {ratio:.2f}x (target <= 2x)"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--znodes", type=int, default=35_000, help="size of the real-format tree")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-pipelined", action="store_true", help="skip the ZKSTORM_MULTIREAD=0 runs")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--snapshot-without-reads", nargs=2, metavar=("CONNECT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.snapshot_without_reads:  # the child of ``cold_without_reads``
        print(json.dumps(snapshot_without_reads(*args.snapshot_without_reads)))
        return 0

    from zkstorm.sandbox.seed import Sandbox, seed

    runs: dict[str, list[tuple[float, float, float]]] = {
        "sequential": [],
        "tree": [],
        "snapshot": [],
        "snapshot_without_reads": [],
        "pipelined": [],
    }
    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as state:
        _CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(state) / "pycache")
        box = Sandbox(Path(state) / "sandbox")
        box.start()
        try:
            connect = box.connect_string
            server = int(json.loads((box.dir / "state.json").read_text())["pid"])
            seeded = seed(connect, real_format_nodes(args.znodes))
            znodes, _ = sequential_kazoo_walk(connect)  # also warms the server's JIT and page cache
            cold(connect, ["tree", "/", "-f", "jsonl"])  # and compiles the bytecode the runs use
            cold(connect, ["snapshot", str(Path(state) / "warm"), "--cluster", "bench"])
            print(
                f"tree: {znodes:,} znodes of real-format payloads (seeded {seeded.znodes:,} in "
                f"{seeded.seconds:.1f}s); server pid {server}",
                file=sys.stderr,
            )
            startup = [cold(connect, ["--help"]) for _ in range(args.rounds)]
            storm = [storm_walk_and_decode(connect) for _ in range(args.rounds)]

            def measured(name: str, fn: Any, *fn_args: Any, **kwargs: Any) -> None:
                cpu = process_cpu_seconds(server)
                before = len(_CLIENT_CPU)
                started = time.perf_counter()
                fn(*fn_args, **kwargs)
                client = _CLIENT_CPU[-1] if len(_CLIENT_CPU) > before else float("nan")
                runs[name].append((time.perf_counter() - started, process_cpu_seconds(server) - cpu, client))

            for r in range(args.rounds):
                measured("sequential", sequential_kazoo_walk, connect)
                measured("tree", cold, connect, ["tree", "/", "-f", "jsonl"])
                out = Path(state) / f"snapshots-{r}"
                measured("snapshot", cold, connect, ["snapshot", str(out), "--cluster", "bench"])
                measured("snapshot_without_reads", cold_without_reads, connect, str(Path(state) / f"in-memory-{r}"))
                if not args.no_pipelined:
                    measured("pipelined", cold, connect, ["tree", "/", "-f", "jsonl"], env={"ZKSTORM_MULTIREAD": "0"})
                print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f}s" for k, v in runs.items() if v))
            points = point_views(connect, args.rounds)
        finally:
            box.stop()

    def median(name: str, i: int) -> float:
        return statistics.median(run[i] for run in runs[name])

    base_rate = znodes / median("sequential", 0)
    result: dict[str, Any] = {
        "znodes": znodes,
        "tree": "real-format (benchlib.real_format_nodes)",
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "target_ratio": TARGET_RATIO,
        "startup_seconds": round(statistics.median(startup), 3),
        "sequential_kazoo_seconds": round(median("sequential", 0), 2),
        "sequential_kazoo_znodes_per_s": round(base_rate),
        "sequential_kazoo_server_cpu_us_per_znode": round(median("sequential", 1) / znodes * 1e6, 1),
    }
    print(f"{'run (median of ' + str(args.rounds) + ')':<34}{'wall s':>8}{'znodes/s':>10}{'vs seq':>8}"
          f"{'server µs/znode':>17}{'server-bound/s':>16}{'reached':>9}{'client CPU s':>14}")  # fmt: skip
    for name, label in (
        ("sequential", "sequential kazoo get+get_children"),
        ("tree", "zkstorm tree / -f jsonl"),
        ("snapshot", "zkstorm snapshot OUT"),
        ("snapshot_without_reads", "  snapshot, no reads (from memory)"),
        ("pipelined", "  tree, ZKSTORM_MULTIREAD=0"),
    ):
        if not runs[name]:
            continue
        wall, cpu, client = median(name, 0), median(name, 1), median(name, 2)
        rate = znodes / wall
        bound = znodes / cpu if cpu > 0 else float("inf")
        server = name != "snapshot_without_reads"  # its server CPU is the untimed read's
        print(
            f"{label:<34}{wall:>8.2f}{rate:>10,.0f}{rate / base_rate:>7.1f}x"
            + (
                f"{cpu / znodes * 1e6:>17.1f}{bound:>16,.0f}{rate / bound:>8.0%}"
                if server
                else f"{'-':>17}{'-':>16}{'-':>9}"
            )
            + f"{'' if client != client else f'{client:.2f}':>14}"
        )
        if name != "sequential":
            if server:
                result.update(
                    {
                        f"{name}_server_cpu_us_per_znode": round(cpu / znodes * 1e6, 1),
                        f"{name}_server_bound_znodes_per_s": round(bound),
                        f"{name}_fraction_of_server_bound": round(rate / bound, 3),
                    }
                )
            result.update(
                {
                    f"{name}_seconds": round(wall, 2),
                    f"{name}_znodes_per_s": round(rate),
                    f"{name}_ratio": round(rate / base_rate, 2),
                    f"{name}_client_cpu_seconds": round(client, 2),
                    f"{name}_ratios_per_round": [
                        round(base[0] / run[0], 1) for base, run in zip(runs["sequential"], runs[name], strict=True)
                    ],
                }
            )
    print(
        f"process start (zkstorm --help) {result['startup_seconds'] * 1000:.0f} ms; "
        f"targets: tree {result['tree_ratio']:.1f}x, snapshot {result['snapshot_ratio']:.1f}x "
        f"(each >= {TARGET_RATIO:.0f}x the sequential walk); the snapshot with no reads at all "
        f"{result['snapshot_without_reads_ratio']:.1f}x, the most a faster read could give it"
    )
    storm_nodes = storm[0][0]
    walk_us = statistics.median(s[1] for s in storm) / storm_nodes * 1e6
    decode_us = statistics.median(s[2] for s in storm) / storm_nodes * 1e6
    sequential_us = median("sequential", 0) / znodes * 1e6
    result.update(
        storm_znodes=storm_nodes,
        storm_walk_us_per_znode=round(walk_us, 1),
        storm_decode_us_per_znode=round(decode_us, 1),
        storm_decode_to_walk=round(decode_us / walk_us, 3),
        sequential_kazoo_us_per_znode=round(sequential_us, 1),
        storm_decode_to_sequential_walk=round(decode_us / sequential_us, 3),
        **points,
    )
    print(
        f"storm subtree: {storm_nodes:,} znodes; decode {decode_us:.1f} µs/znode = "
        f"{decode_us / walk_us:.2f} of zkstorm's multiRead walk ({walk_us:.1f} µs/znode), "
        f"{decode_us / sequential_us:.3f} of the sequential kazoo walk ({sequential_us:.0f} µs/znode)"
    )
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
