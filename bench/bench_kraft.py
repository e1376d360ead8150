"""A KRaft metadata log of a million partitions read by zkstorm, against ``kafka-dump-log
--cluster-metadata-decoder`` decoding the same log, in the same rounds.

The log is written by Kafka's own writer (``scripts/KraftBigLog.java`` on the Kafka 3.9.2 jars ``make jars``
fetches: raft's ``BatchBuilder`` over ``MetadataRecordSerde``, appended by ``FileRecords``, CRC32C and all):
30 brokers registered and unfenced, ``--partitions`` partitions in topics of 100 (each topic one batch of a
``TopicRecord``, a ``ConfigRecord`` and its ``PartitionRecord``s, as CreateTopics writes it, a
``NoOpRecord`` batch between topics), then ``--changes`` ``PartitionChangeRecord``s in batches of ten (ISR
shrunk and grown, leaders moved). One segment and no snapshot, so both readers decode every record.

Then, rounds alternating, on the same folder:
- Kafka's reader: ``java -cp <kafka 3.9.2 jars> kafka.tools.DumpLogSegments --cluster-metadata-decoder
  --files <segment>`` (what ``kafka-dump-log.sh`` runs; the decoder prints every record), stdout to /dev/null.
- ``zkstorm --from-kraft DIR kafka partitions -f jsonl > /dev/null``, a new process (interpreter start and
  imports included), with its peak RSS and CPU seconds (``wait4``, from a small launcher, as the dumper's
  are taken; on a busy machine the CPU seconds say more than the wall's): what an operator runs to read
  the cluster's partitions from the log, and the whole read: every record decoded and replayed into the
  image, every partition's state served, decoded and judged as the ZooKeeper ones are, every row written.
  Its output grows with the partitions, as the dumper's grows with the records.
- the same ``--at-offset`` half of the change records: the same million partitions, half the log's
  changes; its peak RSS beside the whole log's says whether memory follows the state or the log.
- the library's read alone, in this process: ``KraftSource(DIR).connect()`` (decode and replay).
Rates are records per second over the log's records (control records included, as the dumper prints them).

``--profile`` profiles one cold command instead of timing rounds (cProfile, in the command's own process)
and prints the functions that took the most time.

Usage: ``python -u bench/bench_kraft.py [--partitions N] [--changes N] [--rounds N] [--state DIR] [--json
FILE] [--profile]`` (``--state`` keeps the written log in DIR and reuses it; ``--partitions 100000`` makes a
small log to iterate on).
"""

from __future__ import annotations

import argparse
import json
import os
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
KAFKA = "kafka-3.9.2"
PER_TOPIC = 100
BROKERS = 30
DUMPER = "kafka.tools.DumpLogSegments"  # kafka-dump-log.sh's class in 3.9 (org.apache.kafka.tools from 4.0)


def kafka_classpath() -> str:
    """The Kafka 3.9.2 jars ``make jars`` fetched (``.cache/jars/kafka-3.9.2``, or ``ZKSTORM_JARS_DIR``)."""
    jars = Path(os.environ.get("ZKSTORM_JARS_DIR") or REPO / ".cache" / "jars") / KAFKA
    if not (jars / ".complete").exists():
        raise SystemExit(f"no Kafka jars in {jars}: run `make jars` first")
    return f"{jars}/*"


def prepare(out: Path, partitions: int, changes: int) -> dict[str, Any]:
    """The log, written by Kafka's own writer (``scripts/KraftBigLog.java``); what it holds."""
    from zkstorm.sandbox.server import java_executable

    started = time.monotonic()
    done = subprocess.run(
        [java_executable(), "-cp", kafka_classpath(), str(REPO / "scripts" / "KraftBigLog.java"), str(out)]
        + [str(n) for n in (partitions, PER_TOPIC, BROKERS, changes)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"KraftBigLog.java exited with {done.returncode}: {done.stderr[-800:]}")
    return {"partitions": partitions, "changes": changes, "write_secs": round(time.monotonic() - started, 1)}


def segment_of(folder: Path) -> Path:
    return next((folder / "__cluster_metadata-0").glob("*.log"))


def log_facts(segment: Path) -> tuple[int, int, int]:
    """(records, batches, last offset) of the segment, from its batch headers."""
    from zkstorm.sources.kraft.batches import BatchProblem, read_batches

    records = batches = 0
    last = -1
    for batch in read_batches(str(segment), wanted=lambda _o, _c: False):
        if isinstance(batch, BatchProblem):
            raise SystemExit(f"the written log does not read: {batch.line()}")
        records += batch.last_offset - batch.base_offset + 1
        batches += 1
        last = batch.last_offset
    return records, batches, last


def dump_with_kafka(segment: Path) -> tuple[float, int, float]:
    """``kafka-dump-log --cluster-metadata-decoder`` over the segment, to /dev/null: ``launched``'s figures."""
    from zkstorm.sandbox.server import java_executable

    return launched(
        [java_executable(), "-cp", kafka_classpath(), DUMPER, "--cluster-metadata-decoder", "--files", str(segment)]
    )


def partitions_command(folder: Path, *extra: str) -> tuple[float, int, float]:
    """``zkstorm --from-kraft DIR kafka partitions -f jsonl``, to /dev/null: ``launched``'s figures."""
    return launched(_command(folder, *extra))


def _command(folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "zkstorm", "--from-kraft", str(folder), *extra, "kafka", "partitions", "-f", "jsonl"]


def library_read(folder: Path) -> float:
    """Seconds of ``KraftSource(folder).connect()``: every record decoded and replayed into the image."""
    from zkstorm.sources.kraft.source import KraftSource

    started = time.perf_counter()
    source = KraftSource(str(folder))
    source.connect()
    return time.perf_counter() - started


def profile_command(folder: Path, out: Path, top: int = 30) -> None:
    """One cold ``kafka partitions -f jsonl`` under cProfile: ``benchlib.profiled``."""
    profiled(_command(folder)[3:], out, top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=100_000, help="PartitionChangeRecords after the topics")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--state", type=Path, help="keep the written log here and reuse it")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--profile", action="store_true", help="profile one cold command instead of timing rounds")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-kraft-") as scratch:
        state = args.state or Path(scratch)
        folder = state / "kraft"
        made_file = state / "prepared.json"
        wanted = {"partitions": args.partitions, "changes": args.changes}
        made = json.loads(made_file.read_text()) if made_file.exists() else {}
        if not (folder / "__cluster_metadata-0").is_dir() or {k: made.get(k) for k in wanted} != wanted:
            shutil.rmtree(folder, ignore_errors=True)
            state.mkdir(parents=True, exist_ok=True)
            made = prepare(folder, args.partitions, args.changes)
            made_file.write_text(json.dumps(made))
        segment = segment_of(folder)
        records, batches, last = log_facts(segment)
        size_mib = segment.stat().st_size / 2**20
        half = last - args.changes // 2  # the change records are the log's tail
        print(
            f"{records:,} records in {batches:,} batches ({size_mib:,.0f} MiB, one segment, no snapshot): "
            f"{args.partitions:,} partitions, {args.changes:,} partition changes; written by Kafka's own "
            f"writer in {made['write_secs']} s"
        )
        if args.profile:
            profile_command(folder, Path(scratch) / "kraft.prof")
            return 0
        dumper, dumper_cpu, command, command_cpu, rss, half_rss, inside = [], [], [], [], [], [], []
        for _ in range(args.rounds):
            secs, _, cpu = dump_with_kafka(segment)
            dumper.append(secs)
            dumper_cpu.append(cpu)
            secs, peak, cpu = partitions_command(folder)
            command.append(secs)
            command_cpu.append(cpu)
            rss.append(peak)
            half_rss.append(partitions_command(folder, "--at-offset", str(half))[1])
            inside.append(library_read(folder))
            print(
                f"  round: kafka-dump-log {dumper[-1]:.1f} s ({records / dumper[-1]:,.0f} records/s, CPU "
                f"{dumper_cpu[-1]:.1f} s), zkstorm kafka partitions {command[-1]:.1f} s ({records / command[-1]:,.0f} "
                f"records/s, {dumper[-1] / command[-1]:.2f}x, CPU {command_cpu[-1]:.1f} s, peak RSS "
                f"{rss[-1] / 1024:.0f} MiB; half the changes {half_rss[-1] / 1024:.0f} MiB), library read "
                f"{inside[-1]:.1f} s",
                file=sys.stderr,
            )
    theirs = records / statistics.median(dumper)
    ours = records / statistics.median(command)
    result = {
        "records": records,
        "batches": batches,
        "segment_mib": round(size_mib),
        "rounds": args.rounds,
        "dump_log_secs": [round(s, 2) for s in dumper],
        "partitions_command_secs": [round(s, 2) for s in command],
        "library_read_secs": [round(s, 2) for s in inside],
        "dump_log_records_per_s": round(theirs),
        "partitions_records_per_s": round(ours),
        "library_read_records_per_s": round(records / statistics.median(inside)),
        "partitions_vs_dump_log": round(ours / theirs, 2),
        "partitions_vs_dump_log_per_round": [round(d / c, 2) for c, d in zip(command, dumper, strict=True)],
        "library_read_vs_dump_log": round(statistics.median(dumper) / statistics.median(inside), 2),
        "dump_log_cpu_secs": [round(s, 2) for s in dumper_cpu],
        "partitions_command_cpu_secs": [round(s, 2) for s in command_cpu],
        "partitions_vs_dump_log_cpu": round(statistics.median(dumper_cpu) / statistics.median(command_cpu), 2),
        "partitions_peak_rss_mib": round(statistics.median(rss) / 1024),
        "partitions_peak_rss_mib_per_round": [round(r / 1024) for r in rss],
        "half_changes_peak_rss_mib": round(statistics.median(half_rss) / 1024),
        **made,
    }
    print(
        f"kafka-dump-log --cluster-metadata-decoder: {theirs:,.0f} records/s; zkstorm --from-kraft kafka "
        f"partitions -f jsonl: {ours:,.0f} records/s ({ours / theirs:.2f}x), the library's read alone "
        f"{result['library_read_records_per_s']:,} records/s ({result['library_read_vs_dump_log']:.2f}x); peak RSS "
        f"{result['partitions_peak_rss_mib']} MiB (half the changes: {result['half_changes_peak_rss_mib']} MiB)"
    )
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
