"""``zkstorm changes`` against ZooKeeper's own log dumper, on the logs of a busy day.

The logs are written by a real server: the sandbox's Storm and Kafka cluster (``--scale``), then a
writer that does what a busy cluster does to ZooKeeper, ``--txns`` times: every worker rewrites its
heartbeat (most of the txns, as in production), supervisors rewrite their registrations, and partition
states change (ISR shrinks and expands, leaders move); halfway, a few workers stop writing for longer
than the stale threshold. ``snapCount`` is ZooKeeper's default (100,000), so the logs roll and
snapshots are taken (fuzzily) while the writer runs, as on a production server.

Then, rounds alternating, on the same files:
- ZooKeeper's dumper: ``java -cp <the ZooKeeper jars in pyspark> org.apache.zookeeper.server.persistence.
  TxnLogToolkit <log>`` for every log file, stdout to /dev/null (its dump mode: one line per txn).
  ``LogFormatter``, which the issue names, is this tool's predecessor and was removed from ZooKeeper
  in 3.7 (ZOOKEEPER-3666, "remove the deprecated LogFormatter tool"); the 3.9 jars have TxnLogToolkit
  only. The JVM starts once per file, as a user runs it over a day's files.
- ``zkstorm --from-files DIR changes -f jsonl > /dev/null``, a new process (interpreter start and imports
  included), over every txn after the oldest snapshot, decoding every change; its peak RSS (``wait4``, the
  command started from a small launcher: see ``benchlib.launched``); and the same up to the window's middle
  (``--until``), to show memory does not grow with the txns.
- zkstorm's ``read_changes`` in this process, for the rate without the process's start.
Rates are txns per second over the txns each read: the dumper reads every txn of its files, zkstorm
the txns after its state's snapshot (the tail of the first log before it is skipped). Each round's
peak RSS is printed beside its rate.

Before the rounds, the records of the fast path (setData heads, rewrites handed over without a step) are
checked against a read that parses every txn whole (``ChangeLog(fast=False)``) on these busy logs: the
same records, summary and counts, or the benchmark stops (``--no-check`` skips it).

``--profile`` profiles one cold command instead of timing rounds (cProfile, in the command's own process:
``python -m cProfile -o FILE -m zkstorm --from-files DIR changes -f jsonl``) and prints the functions that
took the most time, their own and with what they called; ``--profile-out FILE`` keeps the profile for
``pstats`` (cProfile's overhead per call inflates call-heavy code: compare the lists, not the seconds).
A sampler has none: ``py-spy record -r 1000 -f raw --subprocesses -o FILE -- python -m zkstorm --from-files
DIR changes -f jsonl > /dev/null`` (py-spy from PyPI, not a dependency; ``--subprocesses`` follows pass 1's
helpers) gave the profile issue 41's cuts followed (at 3ff439e+, samples of the cold command): pass 3 30%,
pass 1 17%, the changes' decoding 28% (partition states 23%), imports 10% (4% compiling them), the
heartbeats' timing 6%, output 3%.

The commands load zkstorm's bytecode compiled before the rounds (``compiled``), as an installed zkstorm
does. Pass 1 reads big logs in two forked helpers (``changes/reader.py``): a command's peak RSS is the
largest of its processes' (``wait4``), and each helper holds a log's chunk and what it found in it.

Usage: ``python -u bench/bench_changes.py [--scale N] [--txns N] [--rounds N] [--state DIR] [--json FILE]
[--no-check] [--profile [--profile-out FILE]]`` (``--state`` keeps the written files in DIR and reuses them
on the next run; ``--txns 40000`` makes a small set to iterate on).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import launched, profiled, write_result

REPO = Path(__file__).resolve().parent.parent
_SILENT = 6  # workers that stop beating halfway, for a while


def dumper_classpath() -> str:
    """The ZooKeeper jars the tests use (inside pyspark), and the commons-cli jar TxnLogToolkit needs."""
    import glob

    from zkstorm.sandbox.server import zookeeper_classpath

    classpath = zookeeper_classpath()
    jars = Path(classpath.split(os.pathsep)[0]).parent
    extra = sorted(glob.glob(str(jars / "commons-cli-*.jar")))
    if not extra:
        raise SystemExit(f"no commons-cli jar beside the ZooKeeper jars in {jars}: TxnLogToolkit needs it")
    return os.pathsep.join([classpath, *extra])


def prepare(base: Path, scale: int, txns: int) -> dict[str, Any]:
    """A server's data directory after a busy stretch (see the module docstring); the server is stopped."""
    from kazoo.client import KazooClient

    from zkstorm.sandbox.seed import SEED_SESSION_MS, rewritten, seed
    from zkstorm.sandbox.server import ZkServer
    from zkstorm.sandbox.synth import cluster

    config = {"maxSessionTimeout": str(SEED_SESSION_MS), "snapCount": "100000"}
    server = ZkServer(base, heap="2g", extra_config=config).start()
    seeded = seed(server.connect_string, cluster(scale=scale, now=int(time.time())))
    client = KazooClient(server.connect_string, timeout=30)
    client.start(timeout=30)
    rng = random.Random(5)
    written = 0
    started = time.monotonic()
    try:
        busy = rewritten(client)
        beats, supervisors, states = busy.beats, busy.supervisors, busy.states
        state_paths = sorted(states)
        silent = {path for path, _ in rng.sample(beats, min(_SILENT, len(beats)))}
        pending: list[Any] = []
        while written < txns:
            halfway = txns // 2 <= written < txns // 2 + txns // 5  # a stretch of silence, some workers
            for path, data in beats:
                if not (halfway and path in silent):
                    pending.append(client.set_async(path, data))
                    written += 1
            for path, data in supervisors[: max(1, len(supervisors) // 4)]:
                pending.append(client.set_async(path, data))
                written += 1
            for path in rng.sample(state_paths, max(1, len(beats) // 8)):
                state = states[path]
                isr = state["isr"]
                if len(isr) > 1 and rng.random() < 0.5:
                    state["isr"] = isr[:-1]
                elif state["leader"] >= 0:
                    state["isr"] = sorted({*isr, state["leader"]})
                state["leader_epoch"] += 1
                pending.append(client.set_async(path, json.dumps(state, separators=(",", ":")).encode()))
                written += 1
            if len(pending) >= 2048:
                for result in pending:
                    result.get(timeout=60)
                pending.clear()
        for result in pending:
            result.get(timeout=60)
    finally:
        client.stop()
        client.close()
        server.stop()
    return {"seeded_znodes": seeded.znodes, "written_txns": written, "write_secs": round(time.monotonic() - started, 1)}


def logs_of(data: Path) -> list[Path]:
    from zkstorm.sources.files.snapfile import name_zxid

    folder = data / "version-2"
    return sorted((p for p in folder.iterdir() if name_zxid(p.name, "log") is not None), key=lambda p: p.name)


def count_txns(logs: list[Path]) -> int:
    from zkstorm.sources.files.txnlog import LogFile

    total = 0
    last = -1
    for path in logs:
        for txn in LogFile(str(path)).txns(after=last):
            total += 1
            last = txn.zxid
    return total


def dump_with_zookeeper(classpath: str, logs: list[Path]) -> float:
    """Wall seconds of ZooKeeper's TxnLogToolkit dumping every log (a JVM per file), to /dev/null."""
    from zkstorm.sandbox.server import java_executable

    started = time.perf_counter()
    for path in logs:
        done = subprocess.run(
            [java_executable(), "-cp", classpath, "org.apache.zookeeper.server.persistence.TxnLogToolkit", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"TxnLogToolkit {path} exited with {done.returncode}: {done.stderr.decode()[-400:]}")
    return time.perf_counter() - started


def compiled() -> None:
    """zkstorm's modules compiled once, into their ``__pycache__`` (ignored by git), as pip compiles an
    installed package's: the commands then load bytecode, as an installed zkstorm does, where a checkout
    under ``PYTHONDONTWRITEBYTECODE`` (which this machine's sessions set) would compile its 60-odd modules
    again in every cold command (about 0.1 CPU-s, measured here). A module edited since is compiled
    again when imported, as Python checks each against its source."""
    import compileall

    compileall.compile_dir(str(REPO / "zkstorm"), quiet=1)


def changes_command(data: Path, *extra: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of ``zkstorm --from-files DATA changes -f jsonl`` to /dev/null."""
    command = [sys.executable, "-m", "zkstorm", "--from-files", str(data), "changes", "-f", "jsonl", *extra]
    seconds, peak, _ = launched(command)
    return seconds, peak


def profile_command(data: Path, out: Path, top: int = 25) -> None:
    """One cold ``changes -f jsonl`` under cProfile: ``benchlib.profiled``."""
    profiled(["--from-files", str(data), "changes", "-f", "jsonl"], out, top)


def fast_equals_full(data: Path) -> int:
    """The changes of the whole window read by the fast path and by a read that parses every txn whole:
    their records, summary, stats and counters, which must be the same. Returns how many records."""
    from zkstorm.changes import ChangeLog

    read = []
    for fast in (True, False):
        log = ChangeLog([str(data)], fast=fast)
        records = list(log)
        read.append(
            (records, log.summary(), dataclasses.asdict(log.stats), dataclasses.asdict(log.counters), log.problems)
        )
    if read[0] != read[1]:
        names = ("records", "summary", "stats", "counters", "problems")
        differ = [name for name, a, b in zip(names, *read, strict=True) if a != b]
        raise SystemExit(f"the fast path and the full parse differ on {data}: {', '.join(differ)}")
    return len(read[0][0])


def in_process(data: Path) -> tuple[float, int, int, dict[str, int]]:
    """Seconds, txns read and changes of ``read_changes`` over the whole window, and the changes by kind."""
    from zkstorm.changes import read_changes

    started = time.perf_counter()
    log = read_changes([str(data)])
    kinds: dict[str, int] = {}
    for change in log:
        name = type(change).__name__
        kinds[name] = kinds.get(name, 0) + 1
    return time.perf_counter() - started, log.stats.txns, sum(kinds.values()), kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=20, help="sandbox scale (20: 180 workers, 1,110 partitions)")
    parser.add_argument("--txns", type=int, default=400_000, help="txns the writer logs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--state", type=Path, help="keep the written files here and reuse them")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-check", action="store_true", help="skip comparing the fast path with the full parse")
    parser.add_argument("--profile", action="store_true", help="profile one cold command instead of timing rounds")
    parser.add_argument("--profile-out", type=Path, help="where --profile keeps its profile (default: a temp file)")
    args = parser.parse_args(argv)

    import logging

    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
    classpath = dumper_classpath()
    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as scratch:
        state = args.state or Path(scratch)
        data = state / "server" / "data"
        made_file = state / "prepared.json"
        if not (data / "version-2").is_dir() or not made_file.exists():
            shutil.rmtree(state / "server", ignore_errors=True)
            state.mkdir(parents=True, exist_ok=True)
            made = prepare(state / "server", args.scale, args.txns)
            made_file.write_text(json.dumps(made))
        made = json.loads(made_file.read_text())
        logs = logs_of(data)
        logged = count_txns(logs)
        size_mib = sum(p.stat().st_size for p in logs) / 2**20
        print(
            f"{logged:,} txns in {len(logs)} logs ({size_mib:,.0f} MiB with their preallocation); "
            f"written {made['written_txns']:,} in {made['write_secs']} s over {made['seeded_znodes']:,} znodes"
        )
        compiled()
        if args.profile:
            profile_command(data, args.profile_out or Path(scratch) / "changes.prof")
            return 0
        checked = None
        if not args.no_check:
            checked = fast_equals_full(data)
            print(f"the fast path and the full parse: the same {checked:,} records, summary and counts")
        _, window_txns, changes, kinds = in_process(data)
        middle = _middle_zxid(logs)
        dumper, command, command_half, inside, rss, rss_half = [], [], [], [], [], []
        for _ in range(args.rounds):
            dumper.append(dump_with_zookeeper(classpath, logs))
            secs, peak = changes_command(data)
            command.append(secs)
            rss.append(peak)
            secs, peak = changes_command(data, "--until", hex(middle))
            command_half.append(secs)
            rss_half.append(peak)
            inside.append(in_process(data)[0])
            print(
                f"  round: TxnLogToolkit {dumper[-1]:.1f} s ({logged / dumper[-1]:,.0f} txns/s), "
                f"zkstorm changes {command[-1]:.1f} s ({window_txns / command[-1]:,.0f} txns/s, "
                f"{(window_txns / command[-1]) / (logged / dumper[-1]):.1f}x, peak RSS {rss[-1] / 1024:.0f} MiB), "
                f"in process {inside[-1]:.1f} s ({window_txns / inside[-1]:,.0f} txns/s)",
                file=sys.stderr,
            )
    zk = logged / statistics.median(dumper)
    ours = window_txns / statistics.median(command)
    result = {
        "logged_txns": logged,
        "logs": len(logs),
        "window_txns": window_txns,
        "changes": changes,
        "changes_by_kind": kinds,
        "rounds": args.rounds,
        "txnlogtoolkit_secs": [round(s, 2) for s in dumper],
        "changes_command_secs": [round(s, 2) for s in command],
        "changes_in_process_secs": [round(s, 2) for s in inside],
        "txnlogtoolkit_txns_per_s": round(zk),
        "changes_txns_per_s": round(ours),
        "changes_in_process_txns_per_s": round(window_txns / statistics.median(inside)),
        "changes_vs_txnlogtoolkit": round(ours / zk, 2),
        "changes_vs_txnlogtoolkit_per_round": [
            round((window_txns / c) / (logged / d), 2) for c, d in zip(command, dumper, strict=True)
        ],
        "changes_peak_rss_mib_per_round": [round(r / 1024) for r in rss],
        "fast_equals_full_records": checked,
        "changes_peak_rss_mib": round(statistics.median(rss) / 1024),
        "changes_half_window_peak_rss_mib": round(statistics.median(rss_half) / 1024),
        "changes_half_window_secs": [round(s, 2) for s in command_half],
        **made,
    }
    print(
        f"ZooKeeper's TxnLogToolkit (LogFormatter's successor): {zk:,.0f} txns/s; zkstorm changes -f jsonl: "
        f"{ours:,.0f} txns/s ({ours / zk:.2f}x), in process {result['changes_in_process_txns_per_s']:,} txns/s; "
        f"{changes:,} changes from {window_txns:,} txns; peak RSS {result['changes_peak_rss_mib']} MiB "
        f"(half the window: {result['changes_half_window_peak_rss_mib']} MiB)"
    )
    write_result(args.json, result)
    return 0


def _middle_zxid(logs: list[Path]) -> int:
    from zkstorm.sources.files.txnlog import LogFile

    zxids: list[int] = []
    last = -1
    for path in logs:
        for txn in LogFile(str(path)).txns(after=last):
            last = txn.zxid
            if len(zxids) < 2:
                zxids.append(txn.zxid)
    first = zxids[0] if zxids else 0
    return first + (last - first) // 2


if __name__ == "__main__":
    sys.exit(main())
