"""What one ``make bench`` run measured, against the targets, with the machine it ran on: read from the
JSON each benchmark wrote (``bench-results/``), so every figure here comes from that one run.

Printed: the machine (CPU, cores, memory, Python, Java) and the commit each benchmark measured;
``snapshot`` and ``tree`` against the sequential walk (median of the rounds, and each round's ratio), and
the snapshot with no reads; the nightly history update of a year of 100,000 partitions; the largest
tree's commands with their peak RSS and µs per znode at both sizes; the S3 round trip; ``changes`` against
ZooKeeper's own log dumper (TxnLogToolkit), with its peak RSS; a KRaft log of a million partitions read
against ``kafka-dump-log --cluster-metadata-decoder``, with its peak RSS at the whole log and at half its
changes. A target missed is printed as missed, with
the figure.

Usage: ``python bench/summary.py [bench-results]``.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_history import FLAT as UPDATE_FLAT
from bench_scale import STREAMING, STREAMING_RSS_MIB
from benchlib import read_result

SNAPSHOT_RATIO = 20.0  # snapshot and tree, each this many times the sequential walk's rate
NIGHTLY_UPDATE_SECONDS = 30.0  # a year of 100,000 partitions, one night added
CHANGES_RATIO = 10.0  # zkstorm changes, this many times TxnLogToolkit's dump rate on the same logs
KRAFT_RATIO = 1.0  # a KRaft log of a million partitions read at least as fast as kafka-dump-log decodes it
KRAFT_RSS_APART = 0.10  # its peak RSS at half the log's changes within this of the whole log's: bounded by the state


def machine() -> str:
    """One line: CPU model, cores, memory, Python, Java, the commit measured."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    java = _output(["java", "-version"], stderr=True).splitlines()[:1]
    return (
        f"{model}, {os.cpu_count()} cores{memory}; Python {platform.python_version()}; {java[0] if java else 'no java'}"
    )


def _output(command: list[str], *, stderr: bool = False) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stderr if stderr else done.stdout


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def walk_lines(walk: dict[str, Any]) -> list[str]:
    lines = [
        f"sequential kazoo walk of {walk['znodes']:,} znodes: {walk['sequential_kazoo_seconds']:.2f}s "
        f"(median of {walk['rounds']}, measured in the same rounds)"
    ]
    for name in ("tree", "snapshot"):
        ratio = walk[f"{name}_ratio"]
        rounds = walk[f"{name}_ratios_per_round"]
        lines.append(
            f"{name}: {walk[f'{name}_seconds']:.2f}s, {ratio:.1f}x (rounds {min(rounds):.1f}-{max(rounds):.1f}x), "
            f"client CPU {walk[f'{name}_client_cpu_seconds']:.2f}s; target {SNAPSHOT_RATIO:.0f}x "
            f"{verdict(ratio >= SNAPSHOT_RATIO)}"
        )
    if "snapshot_without_reads_seconds" in walk:
        own = {k: walk[f"snapshot_without_reads_{k}"] for k in ("seconds", "ratio", "client_cpu_seconds")}
        lines.append(
            f"snapshot with no reads (the tree served from memory): {own['seconds']:.2f}s, {own['ratio']:.1f}x, "
            f"client CPU {own['client_cpu_seconds']:.2f}s: its own work, the most a faster read could give it"
        )
    return lines


def history_lines(history: dict[str, Any]) -> list[str]:
    year = history["year"]
    update = year["update_seconds"]
    small = history["two_small_snapshots"]
    return [
        f"a year of {year['partitions']:,} partitions ({year['nights']} nights): full history "
        f"{year['full_seconds']:.1f}s ({year['seconds_per_night']:.2f}s per night); nightly update "
        f"{update:.1f}s, target {NIGHTLY_UPDATE_SECONDS:.0f}s {verdict(update <= NIGHTLY_UPDATE_SECONDS)}; "
        f"full rebuild {year['rebuild_seconds']:.1f}s; tables "
        + ("identical" if year["incremental_equals_full"] else "DIFFER"),
        *_flat_lines(year),
        "the update's stages: "
        + ("; ".join(f"{s['stage']} {s['seconds']:.1f}s" for s in year.get("update_stages", [])) or "not logged"),
        *_update_why_not(year),
        f"two small snapshots {small['seconds']:.1f}s against a bare Spark start of {small['bare_spark_seconds']:.1f}s",
    ]


def _flat_lines(year: dict[str, Any]) -> list[str]:
    """The update at a month's nights against the year's: both under the target, and within
    ``UPDATE_FLAT`` of each other (the update's cost flat in the history's length)."""
    if "update_month_seconds" not in year:
        return ["nightly update at 30 nights: not measured (a result from before it was)"]
    month, update = year["update_month_seconds"], year["update_seconds"]
    apart = abs(update - month) / min(update, month)
    return [
        f"nightly update at {year['month_nights']} nights {month:.1f}s, target {NIGHTLY_UPDATE_SECONDS:.0f}s "
        f"{verdict(month <= NIGHTLY_UPDATE_SECONDS)}; at {year['nights']} nights {update:.1f}s, {apart:.0%} apart, "
        f"target within {UPDATE_FLAT:.0%} {verdict(apart <= UPDATE_FLAT)}"
    ]


def _update_why_not(year: dict[str, Any]) -> list[str]:
    """Why a missed update took what it took, from its own stages: the metrics and incidents are computed
    again over every night's facts (what keeps the tables identical to a full rebuild's), so together with
    the start they are a floor that no faster fact step can lower."""
    stages = {s["stage"]: s["seconds"] for s in year.get("update_stages", [])}
    if year["update_seconds"] <= NIGHTLY_UPDATE_SECONDS or not stages:
        return []
    whole = sum(secs for stage, secs in stages.items() if "metrics" in stage or "incidents" in stage)
    start = sum(secs for stage, secs in stages.items() if stage.startswith(("starting", "reading")))
    return [
        f"why not: the metrics and incidents are recomputed over all {year['nights'] + 1} nights' facts every run "
        f"({whole:.1f}s); with Spark's start and the manifests ({start:.1f}s) that is {whole + start:.1f}s, "
        f"not counting the new night's facts and the rest ({year['update_seconds'] - whole - start:.1f}s)"
    ]


def scale_lines(sizes: list[dict[str, Any]]) -> list[str]:
    lines = []
    large = sizes[-1]
    small = sizes[0] if len(sizes) > 1 else None
    lines.append(
        f"{large['partitions']:,} partitions, {large['znodes']:,} znodes (sequential walk "
        f"{large['sequential_us_per_znode']:.0f} µs/znode):"
    )
    for name, b in large["commands"].items():
        a = small["commands"].get(name) if small else None
        per_znode = ""
        if "us_per_znode" in b:
            before = f"{a['us_per_znode']:.1f} -> " if a and "us_per_znode" in a else ""
            per_znode = f", µs/znode {before}{b['us_per_znode']:.1f} ({b['vs_sequential']:.1f}x sequential)"
        bound = ""
        if name in STREAMING:
            bound = f", bound {STREAMING_RSS_MIB} MiB {verdict(b['peak_rss_mib'] <= STREAMING_RSS_MIB)}"
        elif a and name.startswith("kafka"):
            added = (b["peak_rss_mib"] - a["peak_rss_mib"]) * 1024 * 1024
            bound = f", {added / (large['partitions'] - small['partitions']):,.0f} bytes per added partition"  # type: ignore[index]
        lines.append(f"  {name}: {b['seconds']:.1f}s, peak RSS {b['peak_rss_mib']} MiB{per_znode}{bound}")
    return lines


def s3_lines(s3: dict[str, Any]) -> list[str]:
    lines = []
    for name, local in s3["local"].items():
        remote = s3["s3"][name]
        lines.append(f"  {name}: local {local:.1f}s, s3 {remote:.1f}s ({remote / local:.2f}x)")
    return lines


def changes_lines(changes: dict[str, Any]) -> list[str]:
    ratio = changes["changes_vs_txnlogtoolkit"]
    rounds = changes.get("changes_vs_txnlogtoolkit_per_round")
    spread = f"rounds {min(rounds):.1f}-{max(rounds):.1f}x, " if rounds else ""
    checked = changes.get("fast_equals_full_records")
    half = changes["changes_half_window_peak_rss_mib"]
    return [
        f"{changes['window_txns']:,} logged txns ({changes['logs']} logs), {changes['changes']:,} changes: "
        f"zkstorm changes {changes['changes_txns_per_s']:,} txns/s against TxnLogToolkit's "
        f"{changes['txnlogtoolkit_txns_per_s']:,} txns/s: {ratio:.1f}x ({spread}median of {changes['rounds']}); "
        f"target {CHANGES_RATIO:.0f}x {verdict(ratio >= CHANGES_RATIO)}",
        f"peak RSS {changes['changes_peak_rss_mib']} MiB (half the window: {half} MiB); "
        f"in process {changes['changes_in_process_txns_per_s']:,} txns/s; fast path against the full parse: "
        + ("not checked" if checked is None else f"the same {checked:,} records"),
    ]


def kraft_lines(kraft: dict[str, Any]) -> list[str]:
    ratio = kraft["partitions_vs_dump_log"]
    rounds = kraft["partitions_vs_dump_log_per_round"]
    whole, half = kraft["partitions_peak_rss_mib"], kraft["half_changes_peak_rss_mib"]
    apart = abs(whole - half) / max(min(whole, half), 1)
    return [
        f"{kraft['records']:,} records ({kraft['partitions']:,} partitions, {kraft['changes']:,} changes, "
        f"{kraft['segment_mib']} MiB): zkstorm --from-kraft kafka partitions -f jsonl "
        f"{kraft['partitions_records_per_s']:,} records/s against kafka-dump-log --cluster-metadata-decoder's "
        f"{kraft['dump_log_records_per_s']:,}: {ratio:.2f}x (rounds {min(rounds):.2f}-{max(rounds):.2f}x, median "
        f"of {kraft['rounds']}); target {KRAFT_RATIO:.0f}x {verdict(ratio >= KRAFT_RATIO)}",
        f"the library's read alone (decode and replay) {kraft['library_read_records_per_s']:,} records/s, "
        f"{kraft['library_read_vs_dump_log']:.2f}x kafka-dump-log's; CPU seconds (every thread) "
        f"{_range(kraft['partitions_command_cpu_secs'])} against kafka-dump-log's "
        f"{_range(kraft['dump_log_cpu_secs'])}: "
        f"{kraft['partitions_vs_dump_log_cpu']:.2f}x",
        f"peak RSS {whole} MiB, at half the changes {half} MiB ({apart:.0%} apart): memory follows the state, "
        f"not the log, target within {KRAFT_RSS_APART:.0%} {verdict(apart <= KRAFT_RSS_APART)}",
    ]


def _range(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}s" if min(values) != max(values) else f"{values[0]:.1f}s"


SECTIONS = (
    ("walk.json", "Walk and snapshot, cold processes", walk_lines),
    ("history.json", "History", history_lines),
    ("scale.json", "The largest tree", scale_lines),
    ("s3.json", "S3 round trip (moto on loopback)", s3_lines),
    ("changes.json", "Changes from the transaction logs, against ZooKeeper's TxnLogToolkit", changes_lines),
    ("kraft.json", "A KRaft metadata log of a million partitions, against kafka-dump-log", kraft_lines),
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "bench-results")
    print(f"machine: {machine()}")
    read = {file: read_result(folder / file) for file, _, _ in SECTIONS if (folder / file).exists()}
    commits = {measured["commit"] for _, measured in read.values()}
    if not commits:
        print(f"no results in {folder}")
    elif len(commits) == 1:
        print(f"commit measured: {commits.pop()}")
    else:  # figures from different code: each says which
        print("commits measured: " + ", ".join(f"{file} {measured['commit']}" for file, (_, measured) in read.items()))
    for file, title, lines in SECTIONS:
        if file not in read:
            print(f"{title}: not run ({folder / file} missing)")
            continue
        result, measured = read[file]
        print(f"{title} (finished {measured['finished']}):")
        for line in lines(result):
            print(f"  {line}" if not line.startswith("  ") else line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
