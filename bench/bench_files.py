"""Offline-files benchmark: read a live sandbox server's own snapshot + logs vs walk it over the network.

One throwaway server holding the sandbox cluster at ~310,000 znodes (scale 1100), restarted once so
that its tree is in a snapshot, then changed by 20,000 logged txns, as a production data directory
looks between two snapshots. In this one process, alternating rounds time:
- ``FileSource`` on that data directory: choose the snapshot, verify its seals, replay the logs after
  it, and stream every znode as the walker's ``RawNode`` (and, separately, as ``Znode`` records);
- zkstorm's live walk (multiRead, pipelined) of the same tree;
- a plain sequential kazoo walk (get + get_children per znode) of the same tree, timed over its first
  ``--baseline-znodes`` znodes, since the whole tree would take minutes.
The ratios of the medians are the result. Usage: ``python bench/bench_files.py [--scale N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import sequential_kazoo_walk, write_result


def offline_read(data_dir: Path, as_znodes: bool) -> tuple[int, float, dict]:
    from zkstorm.collect import to_znode
    from zkstorm.decode.sniff import detect_encoding
    from zkstorm.sources.files.source import FileSource

    started = time.perf_counter()
    count = 0
    with FileSource([str(data_dir)]) as source:
        for raw in source.walk("/"):
            if as_znodes:
                to_znode(raw, detect_encoding(raw.data))
            count += 1
        plan = source.plan
    seconds = time.perf_counter() - started
    assert plan is not None
    return count, seconds, plan.describe()


def live_walk(connect: str) -> tuple[int, float]:
    from zkstorm.sources.live import ReadOnlySession

    started = time.perf_counter()
    with ReadOnlySession(connect, timeout=30) as session:
        count = sum(1 for _ in session.walk("/"))
    return count, time.perf_counter() - started


def prepare(data_dir: Path, scale: int, changes: int) -> Any:
    """A server whose files look like production's: the tree in a snapshot, then ``changes`` logged
    setData txns after it (ISR-style updates of partition states)."""
    import logging

    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # the restart's reconnect chatter
    from zkstorm.sandbox import SEED_SESSION_MS, seed
    from zkstorm.synth import cluster
    from zkstorm.zkserver import ZkServer

    # The seeding session owns the cluster's ~86,000 ephemerals (supervisors, 2.x errors, blob holders,
    # brokers); the sandbox's ten-day session timeout keeps them through the restart, as the same tree
    # would be kept on a real ensemble whose clients reconnect. With ZooKeeper's default 40 s cap they
    # would expire during the rounds and the tree would shrink under the benchmark.
    config = {"maxSessionTimeout": str(SEED_SESSION_MS)}
    server = ZkServer(data_dir, heap="2g", extra_config=config).start()
    seed(server.connect_string, cluster(scale=scale, now=int(time.time())))
    server.stop()
    # a restarting leader writes a snapshot of its tree
    server = ZkServer(data_dir, heap="2g", extra_config=config).start()
    from kazoo.client import KazooClient

    client = KazooClient(server.connect_string, timeout=30)
    client.start(timeout=30)
    try:
        topics = client.get_children("/kafka/brokers/topics")
        pending = []
        for i in range(changes):
            topic = topics[i % len(topics)]
            path = f"/kafka/brokers/topics/{topic}/partitions/0/state"
            pending.append(
                client.set_async(
                    path, b'{"controller_epoch":2,"leader":1,"version":1,"leader_epoch":%d,"isr":[1,2]}' % i
                )
            )
            if len(pending) >= 512:
                for result in pending:
                    result.get(timeout=30)
                pending.clear()
        for result in pending:
            result.get(timeout=30)
    finally:
        client.stop()
        client.close()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1100, help="sandbox scale (1100 ≈ 310k znodes)")
    parser.add_argument("--changes", type=int, default=20_000, help="txns logged after the snapshot")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-znodes", type=int, default=15_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="zkstorm-bench-") as state:
        server = prepare(Path(state), args.scale, args.changes)
        try:
            data_dir = Path(state) / "data"
            raw_rates, znode_rates, live_rates, plain_rates = [], [], [], []
            for _ in range(args.rounds):
                plain_count, plain_secs = sequential_kazoo_walk(server.connect_string, args.baseline_znodes)
                plain_rates.append(plain_count / plain_secs)
                live_count, live_secs = live_walk(server.connect_string)
                count, secs, source = offline_read(data_dir, as_znodes=False)
                zcount, zsecs, _ = offline_read(data_dir, as_znodes=True)
                if not live_count == count == zcount:
                    raise SystemExit(
                        f"counts differ: live {live_count}, files {count}, files as Znode {zcount}; read from {source}"
                    )
                live_rates.append(live_count / live_secs)
                raw_rates.append(count / secs)
                znode_rates.append(zcount / zsecs)
        finally:
            server.stop()
    raw, znode, live, plain = (statistics.median(r) for r in (raw_rates, znode_rates, live_rates, plain_rates))
    snapshot = Path(source["files"]["snapshot"])
    result = {
        "znodes": count,
        "snapshot_file": snapshot.name,
        "snapshot_mib": round(snapshot.stat().st_size / 2**20, 1) if snapshot.exists() else None,
        "txns_replayed": source["txns_applied"],
        "digest_verified": source["digest_verified"],
        "files_raw_znodes_per_s": round(raw),
        "files_znode_records_per_s": round(znode),
        "live_walk_znodes_per_s": round(live),
        "ratio_raw": round(raw / live, 1),
        "ratio_znode_records": round(znode / live, 1),
        "sequential_kazoo_znodes_per_s": round(plain),
        "ratio_znode_records_vs_sequential": round(znode / plain, 1),
    }
    print(
        f"{count:,} znodes, {snapshot.name} + {len(source['files']['logs'])} logs "
        f"({source['txns_applied']:,} txns replayed, digest verified: {source['digest_verified']})\n"
        f"  files -> RawNode:      {raw:>9,.0f} znodes/s  ({raw / live:.1f}x the live walk)\n"
        f"  files -> Znode record: {znode:>9,.0f} znodes/s  ({znode / live:.1f}x the live walk)\n"
        f"  live walk (multiRead): {live:>9,.0f} znodes/s\n"
        f"  sequential kazoo walk: {plain:>9,.0f} znodes/s  (Znode records: {znode / plain:.0f}x this walk)\n"
        f"  targets: >= 300,000 znodes/s and >= 20x the live walk"
    )
    write_result(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
