"""A cluster at the scale of the largest users, loaded into a real ZooKeeper fast: written as one snapshot file.

The tree (``nodes``): a Kafka cluster (chroot ``/kafka``) of ``partitions`` partitions in topics of 1 to
200 partitions (about 20 topics per 1,000 partitions; replication factor 3, some 1 and 2), 60 brokers of
which two are dead but still named in replica lists (their partitions under-replicated, a few offline),
a topic config per topic (some with ``min.insync.replicas``), the cluster-wide dynamic default, and old
ZooKeeper-based consumer groups whose committed offsets cover as many partitions again
(``/consumers/<group>/offsets/<topic>/<partition>``, what 0.8-era consumers write): so about three
znodes per partition. Payloads are in the forms the fixture clusters hold (Kafka 2.x/3.x JSON as
``tests/data/fixtures/kafka/cluster-2x-chroot`` has it, written by ``zkstorm.sandbox.encode.kafka_json``). The
Storm cluster is ``zkstorm.sandbox.synth``'s (Storm 2.8 Thrift in gzip, heartbeats with executor stats) at
``storm_scale`` (4 topologies each), plus one topology of 500 executors on 25 workers.

``write_snapshot`` streams the nodes into ``snapshot.<zxid>`` in the layout ZooKeeper's ``FileSnap``
writes (header, one session owning the ephemerals, the ACL cache, the nodes parents first, the
terminator and the Adler-32 seal; no digest, as a 3.5 server writes it, which 3.9 loads): ZooKeeper
then loads three million znodes in seconds, where seeding them through a client takes an hour. The
server started on it (``start_server``) writes its own snapshot as it starts leading, so its data
directory is a real one for ``--from-files``.

Usage: ``python bench/scale_cluster.py --partitions 1000000 --dir DIR`` (writes ``DIR/data/version-2``).
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from zkstorm.sandbox.encode import kafka_json  # noqa: E402
from zkstorm.sandbox.synth import SeedNode, broker_registration, storm_cluster  # noqa: E402

BROKERS = 60
DEAD = (7, 44)  # registered nowhere, still in replica lists
TOPIC_SIZES = (12, 24, 50, 100, 200, 6, 3, 1, 30, 64)  # partitions per topic, in turn (49 on average)
BIG_TOPOLOGY = (
    "events-pipeline",
    "ACTIVE",
    25,
    {"events-spout": 50, "parse": 100, "enrich": 150, "score": 100, "sink": 100},
)
SESSION = 0x1000000ABCDEF01  # owns every ephemeral; kept alive by the snapshot's session table
SESSION_TIMEOUT_MS = 2**31 - 1  # as long as a session can be: the benchmark's brokers stay registered


def kafka_nodes(partitions: int, *, now: int, root: str = "/kafka", seed: int = 31) -> Iterator[SeedNode]:
    """The Kafka cluster, parents first."""
    rng = random.Random(seed)
    now_ms = now * 1000
    yield SeedNode(root)
    for rel in ("brokers", "brokers/ids", "brokers/topics", "brokers/seqid", "admin", "admin/delete_topics"):
        yield SeedNode(f"{root}/{rel}")
    for rel in ("config", "config/topics", "config/brokers", "config/changes", "cluster", "consumers"):
        yield SeedNode(f"{root}/{rel}")
    brokers = list(range(1, BROKERS + 1))
    for b in brokers:
        if b in DEAD:
            continue
        yield SeedNode(f"{root}/brokers/ids/{b}", broker_registration(b, now_ms, rng), ephemeral=True)
    controller = {"version": 2, "brokerid": 1, "timestamp": str(now_ms - 86400_000), "kraftControllerEpoch": -1}
    yield SeedNode(f"{root}/controller", kafka_json(controller), ephemeral=True)
    yield SeedNode(f"{root}/controller_epoch", b"42")
    yield SeedNode(f"{root}/cluster/id", kafka_json({"version": "1", "id": "c2NhbGUtY2x1c3Rlci0wMQ"}))
    yield SeedNode(
        f"{root}/config/brokers/<default>", kafka_json({"version": 1, "config": {"min.insync.replicas": "2"}})
    )

    topics: list[tuple[str, int]] = []
    left, n = partitions, 0
    while left > 0:
        size = min(TOPIC_SIZES[n % len(TOPIC_SIZES)], left)
        topics.append((f"events.{n // 100:03d}.stream-{n:05d}", size))
        left -= size
        n += 1
    cursor = 0
    for t, (topic, size) in enumerate(topics):
        rf = 1 if t % 97 == 0 else 2 if t % 13 == 0 else 3
        assignment = {str(p): [brokers[(cursor + p + r) % BROKERS] for r in range(rf)] for p in range(size)}
        cursor += 7
        topic_id = rng.getrandbits(128).to_bytes(16, "big")
        znode = {
            "partitions": assignment,
            "topic_id": _base64url(topic_id),
            "adding_replicas": {},
            "removing_replicas": {},
            "version": 3,
        }
        yield SeedNode(f"{root}/brokers/topics/{topic}", kafka_json(znode))
        yield SeedNode(f"{root}/brokers/topics/{topic}/partitions")
        for key, replicas in assignment.items():
            live = [b for b in replicas if b not in DEAD]
            leader = live[0] if live else -1
            isr = live if live else replicas[:1]  # offline: ZooKeeper keeps the last (dead) ISR member
            state = {"controller_epoch": 42, "leader": leader, "version": 1, "leader_epoch": rng.randint(0, 40)}
            state["isr"] = isr
            yield SeedNode(f"{root}/brokers/topics/{topic}/partitions/{key}")
            yield SeedNode(f"{root}/brokers/topics/{topic}/partitions/{key}/state", kafka_json(state))
        config = {"retention.ms": "604800000", "cleanup.policy": "delete"}
        if t % 5 == 0:
            config["min.insync.replicas"] = "2"
        yield SeedNode(f"{root}/config/topics/{topic}", kafka_json({"version": 1, "config": config}))

    # old consumer groups (ZooKeeper offsets): each consumes a run of topics, together every partition once
    groups = max(1, len(topics) // 100)
    per_group = -(-len(topics) // groups)
    for g in range(groups):
        group = f"legacy-consumer-{g:03d}"
        yield SeedNode(f"{root}/consumers/{group}")
        for sub in ("ids", "owners", "offsets"):
            yield SeedNode(f"{root}/consumers/{group}/{sub}")
        for topic, size in topics[g * per_group : (g + 1) * per_group]:
            yield SeedNode(f"{root}/consumers/{group}/offsets/{topic}")
            for p in range(size):
                offset = str(rng.randint(0, 10**9)).encode()
                yield SeedNode(f"{root}/consumers/{group}/offsets/{topic}/{p}", offset)


def _base64url(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def nodes(partitions: int, storm_scale: int, *, now: int) -> Iterator[SeedNode]:
    """The whole tree: Storm under ``/storm``, Kafka under ``/kafka``, parents first."""
    yield from storm_cluster(scale=storm_scale, now=now, extra=[BIG_TOPOLOGY])
    yield from kafka_nodes(partitions, now=now)


# --- ZooKeeper's snapshot format (FileSnap.serialize, SerializeUtils.serializeSnapshot, DataTree.serialize) ---

_MAGIC = 0x5A4B534E  # "ZKSN", FileSnap.SNAP_MAGIC
_ACL_ALL = 1  # the ACL cache key of [ALL, world:anyone], as a server numbers its first list
_STAT = struct.Struct(">qqqqiiiqq")  # StatPersisted: czxid mzxid ctime mtime version cversion aversion owner pzxid


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">i", len(raw)) + raw


def write_snapshot(seed: Iterable[SeedNode], version2: Path, *, epoch: int = 1) -> tuple[int, int, Path]:
    """``seed`` (parents first) as ``version2/snapshot.<zxid>``: (znodes, last zxid, file). Each node gets
    the next zxid of ``epoch`` as czxid and mzxid, a parent's pzxid is its newest child's and its cversion
    its child count (each child created once); sequential nodes get their parent's next sequence."""
    now_ms = int(time.time() * 1000)
    tree: list[list[Any]] = []  # [path, data, owner, children]
    index: dict[str, int] = {}
    for top in ("/", "/zookeeper", "/zookeeper/quota"):
        index[top] = len(tree)
        tree.append([top, b"", 0, 0])
    for node in seed:
        parent = node.path.rsplit("/", 1)[0] or "/"
        path = node.path
        if node.sequential:
            path = f"{path}{tree[index[parent]][3]:010d}"
        tree[index[parent]][3] += 1
        index[path] = len(tree)
        tree.append([path, node.data, SESSION if node.ephemeral else 0, 0])
    first = (epoch << 32) + 1
    last = first + len(tree) - 1
    pzxid = [first + i for i in range(len(tree))]
    for i, (path, _, _, _) in enumerate(tree[1:], 1):
        parent = index[path.rsplit("/", 1)[0] or "/"]
        pzxid[parent] = max(pzxid[parent], first + i)
    version2.mkdir(parents=True, exist_ok=True)
    target = version2 / f"snapshot.{last:x}"
    checksum = 1  # Adler-32's start
    with open(target, "wb", buffering=1 << 20) as f:

        def write(chunk: bytes) -> None:
            nonlocal checksum
            checksum = zlib.adler32(chunk, checksum)
            f.write(chunk)

        write(struct.pack(">iiq", _MAGIC, 2, -1))
        write(struct.pack(">iqi", 1, SESSION, SESSION_TIMEOUT_MS))
        acl = struct.pack(">i", 31) + _string("world") + _string("anyone")
        write(struct.pack(">iqi", 1, _ACL_ALL, 1) + acl)
        batch: list[bytes] = []
        for i, (path, data, owner, children) in enumerate(tree):
            zxid = first + i
            name = "" if path == "/" else path
            acl_key = -1 if path in ("/", "/zookeeper", "/zookeeper/quota") else _ACL_ALL
            stat = _STAT.pack(zxid, zxid, now_ms, now_ms, 0, children, 0, owner, pzxid[i])
            batch.append(_string(name) + struct.pack(">i", len(data)) + data + struct.pack(">q", acl_key) + stat)
            if len(batch) >= 4096:
                write(b"".join(batch))
                batch.clear()
        write(b"".join(batch))
        write(_string("/"))
        seal = struct.pack(">q", checksum) + _string("/")  # FileSnap's seal: the checksum so far, then "/"
        f.write(seal)
    return len(tree), last, target


def start_server(base: Path, *, heap: str = "6g") -> Any:
    """A ZooKeeper on ``base`` (whose ``data/version-2`` holds the snapshot), started and leading."""
    from zkstorm.sandbox.server import ZkServer

    server = ZkServer(base, heap=heap, extra_config={"snapCount": "10000000"})
    return server.start(timeout=900)


def build(base: Path, partitions: int, storm_scale: int) -> tuple[int, float]:
    """Write the cluster's snapshot under ``base/data/version-2``: (znodes, seconds)."""
    started = time.perf_counter()
    count, _, _ = write_snapshot(nodes(partitions, storm_scale, now=int(time.time())), base / "data" / "version-2")
    return count, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--storm-scale", type=int, default=50, help="4 topologies each, plus the big one")
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--start", action="store_true", help="start a ZooKeeper on it and leave it running")
    args = parser.parse_args(argv)
    count, seconds = build(args.dir, args.partitions, args.storm_scale)
    print(f"{count:,} znodes written in {seconds:.1f}s to {args.dir / 'data' / 'version-2'}")
    if args.start:
        server = start_server(args.dir)
        print(f"ZooKeeper pid {server.pid} at {server.connect_string}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
