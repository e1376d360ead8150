"""Synthetic but realistic Storm 2.x and Kafka 3.x clusters, as the znodes their daemons would write.

Pure and deterministic for a given ``seed`` and ``now``: yields ``SeedNode``s parents first, which the
sandbox writes into a server it started. ``scale`` multiplies everything (topologies, supervisors,
topics, brokers), so benchmarks can grow the same cluster shape to hundreds of thousands of znodes.

The Storm cluster (2.8, root ``/storm``) has active, inactive and rebalancing topologies, heartbeats
with real executor stats, stored errors with stack traces, two nimbuses, blobs, credentials (fake
secrets) and secret keys. The Kafka cluster (3.6 in ZooKeeper mode, chroot ``/kafka``) has a dead broker
still named in replica lists, an offline partition, under-replicated partitions, a dynamic
``min.insync.replicas`` default, quotas, a SCRAM user (fake), ACLs and a reassignment in flight.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from .encode import kafka_json, storm_gzip

DIR = b"\x07"
WINDOWS = ("600", "10800", "86400", ":all-time")


@dataclass(frozen=True, slots=True)
class SeedNode:
    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequential: bool = False  # path is then the prefix; the server appends the 10-digit sequence


def java_url_encode(text: str) -> str:
    """``java.net.URLEncoder.encode(text, "UTF-8")``: like quote_plus but ``*`` stays and ``~`` does not."""
    return quote(text, safe="*-._").replace("~", "%7E").replace("%20", "+")


# --- Storm --------------------------------------------------------------------------------------------

_TOPOLOGIES = (
    # name, status, workers, {component: executors}, spouts
    ("clickstream-enrich", "ACTIVE", 4, {"kafka-spout": 4, "parse|json": 6, "enrich~geo": 8, "hbase-sink": 4}),
    ("fraud-scorer", "ACTIVE", 3, {"payments-spout": 2, "features": 6, "score~v2": 6, "alert*sink": 2}),
    ("billing-aggregator", "REBALANCING", 2, {"usage-spout": 2, "rollup": 4, "top-5%": 1, "jdbc-writer": 2}),
    ("log-indexer", "INACTIVE", 2, {"syslog-spout": 2, "dédup": 2, "ship→es": 4}),
)
_ERRORS = (
    "java.lang.RuntimeException: java.net.SocketTimeoutException: Read timed out\n"
    "\tat org.apache.storm.utils.Utils.wrapInRuntime(Utils.java:1187)\n"
    "\tat com.example.stream.{cls}.execute({cls}.java:{line})\n"
    "\tat org.apache.storm.executor.bolt.BoltExecutor.tupleActionFn(BoltExecutor.java:236)\n"
    "Caused by: java.net.SocketTimeoutException: Read timed out\n"
    "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n",
    "java.lang.IllegalStateException: Schema mismatch for record version {line}\n"
    "\tat com.example.stream.{cls}.decode({cls}.java:{line})\n"
    "\tat org.apache.storm.daemon.Task.sendUnanchored(Task.java:131)\n",
    "org.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired before the position "
    "for partition events-{line} could be determined\n"
    "\tat com.example.stream.{cls}.nextTuple({cls}.java:97)\n",
    "java.lang.OutOfMemoryError: Java heap space\n"
    "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n"
    "\tat com.example.stream.{cls}.flush({cls}.java:{line})\n",
)


def _executor_ranges(components: dict[str, int]) -> dict[str, list[tuple[int, int]]]:
    """Task ids from 1 over sorted component ids; each component's tasks cut into its executor count."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    task = 1
    for component in sorted(components):
        executors = components[component]
        tasks = executors  # topology.tasks defaults to the parallelism
        base, extra = divmod(tasks, executors)
        ranges[component] = []
        for i in range(executors):
            size = base + (1 if i < extra else 0)
            ranges[component].append((task, task + size - 1))
            task += size
    return ranges


def _stats(rng: random.Random, streams: list[str], rate: float, uptime: int) -> dict[str, dict[str, int]]:
    """window → stream → sampled count: multiples of the sampling rate, growing with the window."""
    out: dict[str, dict[str, int]] = {}
    per_sec = {s: rng.randint(5, 400) for s in streams}
    for window in WINDOWS:
        seconds = uptime if window == ":all-time" else min(int(window), uptime)
        out[window] = {s: int(per_sec[s] * seconds / rate) * int(rate) for s in streams}
    return out


def _averages(rng: random.Random, keys: list[Any]) -> dict[str, dict[Any, float]]:
    return {w: {k: round(rng.uniform(0.2, 40.0), 3) for k in keys} for w in WINDOWS}


@dataclass(eq=False)
class _Supervisor:
    sid: str
    host: str
    ip: str
    used: list[int]


def storm_cluster(
    *,
    scale: int = 1,
    now: int,
    seed: int = 7,
    root: str = "/storm",
    extra: Sequence[tuple[str, str, int, dict[str, int]]] = (),
) -> Iterator[SeedNode]:
    """The Storm cluster ``scale`` times over, then the ``extra`` topologies (name, status, workers,
    executors per component; a component named ``…spout…`` is a spout), e.g. one of 500 executors."""
    rng = random.Random(seed)
    uid = lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))  # noqa: E731
    yield SeedNode(root, DIR)
    for sub in (
        "assignments",
        "storms",
        "supervisors",
        "workerbeats",
        "errors",
        "credentials",
        "blobstore",
        "blobstoremaxkeysequencenumber",
        "nimbuses",
        "logconfigs",
        "profilerconfigs",
        "backpressure",
        "secretkeys",
    ):
        yield SeedNode(f"{root}/{sub}", DIR)
    yield SeedNode(f"{root}/leader-lock")  # a Curator container: no data
    yield SeedNode(f"{root}/secretkeys/NIMBUS", DIR)

    nimbus_hosts = ["nimbus-1.prod.example.com", "nimbus-2.prod.example.com"]
    for i, host in enumerate(nimbus_hosts):
        summary = {
            "host": host,
            "port": 6627,
            "uptime_secs": now - 86400 * (3 + i),
            "isLeader": False,
            "version": "2.8.8",
            "tlsPort": 0,
        }
        yield SeedNode(f"{root}/nimbuses/{host}", storm_gzip("NimbusSummary", summary), ephemeral=True)
        latch = f"{root}/leader-lock/_c_{uid()}-latch-"
        yield SeedNode(latch, f"{host}:6627:0".encode(), ephemeral=True, sequential=True)

    supervisors: list[_Supervisor] = []
    for i in range(4 * scale):
        ip = f"10.20.{i // 250}.{i % 250 + 10}"
        supervisors.append(_Supervisor(f"{uid()}-{ip}", f"storm-wkr-{i + 1:03d}.prod.example.com", ip, []))
    slots = [(s, port) for port in (6700, 6701, 6702, 6703) for s in supervisors]
    rng.shuffle(slots)

    for n in range(scale):
        for t, (name, status, workers, components) in enumerate(_TOPOLOGIES):
            topo_name = name if scale == 1 else f"{name}-{n + 1}"
            launched = now - rng.randint(2, 40) * 3600
            topo = f"{topo_name}-{n * len(_TOPOLOGIES) + t + 1}-{launched}"
            yield from _storm_topology(
                rng, root, topo, topo_name, status, workers, components, launched, now, slots, nimbus_hosts
            )
    for t, (name, status, workers, components) in enumerate(extra):
        launched = now - rng.randint(2, 40) * 3600
        topo = f"{name}-{scale * len(_TOPOLOGIES) + t + 1}-{launched}"
        yield from _storm_topology(
            rng, root, topo, name, status, workers, components, launched, now, slots, nimbus_hosts
        )

    for s in supervisors:
        info = {
            "time_secs": now - rng.randint(0, 4),
            "hostname": s.host,
            "assignment_id": s.sid,
            "used_ports": sorted(s.used),
            "meta": [6700, 6701, 6702, 6703],
            "uptime_secs": rng.randint(3600, 9 * 86400),
            "version": "2.8.8",
            "resources_map": {"memory.mb": 16384.0, "cpu.pcore.percent": 800.0},
            "server_port": 6628,
        }
        yield SeedNode(f"{root}/supervisors/{s.sid}", storm_gzip("SupervisorInfo", info), ephemeral=True)


def _storm_topology(
    rng: random.Random,
    root: str,
    topo: str,
    name: str,
    status: str,
    workers: int,
    components: dict[str, int],
    launched: int,
    now: int,
    slots: list[tuple[_Supervisor, int]],
    nimbus_hosts: list[str],
) -> Iterator[SeedNode]:
    all_components = {**components, "__acker": workers, "__system": 0}
    base: dict[str, Any] = {
        "name": name,
        "status": status,
        "num_workers": workers,
        "component_executors": all_components,
        "launch_time_secs": launched,
        "owner": "svc-stream",
        "principal": "svc-stream@PROD.EXAMPLE.COM",
        "component_debug": {},
        "topology_version": "1.4.2",
    }
    if status == "REBALANCING":
        base["topology_action_options"] = {"rebalance_options": {"wait_secs": 60, "num_workers": workers + 1}}
        base["prev_status"] = "ACTIVE"
    yield SeedNode(f"{root}/storms/{topo}", storm_gzip("StormBase", base))

    ranges = _executor_ranges({c: n for c, n in all_components.items() if n > 0})
    # Deactivating a topology stops its spouts but keeps its assignment, so every status has slots.
    taken = [slots.pop() for _ in range(min(workers, len(slots)))]
    executor_slot: dict[tuple[int, int], tuple[_Supervisor, int]] = {}
    for i, executor in enumerate(e for c in sorted(ranges) for e in ranges[c]):
        executor_slot[executor] = taken[i % len(taken)]
    for sup, port in taken:
        sup.used.append(port)
    start_times = {e: launched + rng.choice([0, 0, 0, 45]) for e in executor_slot}
    assignment = {
        "master_code_dir": "/data/storm/local",
        "node_host": {s.sid: s.host for s, _ in dict.fromkeys(taken)},
        "executor_node_port": {f"{a}-{b}": {"node": s.sid, "port": [p]} for (a, b), (s, p) in executor_slot.items()},
        "executor_start_time_secs": {f"{a}-{b}": t for (a, b), t in start_times.items()},
        "worker_resources": {
            f"{s.sid}:{p}": {
                "mem_on_heap": 1536.0,
                "mem_off_heap": 256.0,
                "cpu": 150.0,
                "shared_mem_on_heap": 0.0,
                "shared_mem_off_heap": 0.0,
                "resources": {"onheap.memory.mb": 1536.0, "offheap.memory.mb": 256.0, "cpu.pcore.percent": 150.0},
                "shared_resources": {},
            }
            for s, p in taken
        },
        "total_shared_off_heap": {},
        "owner": "svc-stream",
    }
    yield SeedNode(f"{root}/assignments/{topo}", storm_gzip("Assignment", assignment))

    spouts = {c for c in components if "spout" in c}
    yield SeedNode(f"{root}/workerbeats/{topo}", DIR)
    if status != "INACTIVE":
        for sup, port in taken:
            uptime = now - max(start_times[e] for e, slot in executor_slot.items() if slot == (sup, port))
            stale = rng.random() < 0.1
            executor_stats: dict[str, Any] = {}
            for (a, b), slot in executor_slot.items():
                if slot != (sup, port):
                    continue
                component = next(c for c, rs in ranges.items() if (a, b) in rs)
                executor_stats[f"{a}-{b}"] = _executor_stats(
                    rng, component, component in spouts, sorted(components), uptime
                )
            executor_stats["-1--1"] = _executor_stats(rng, "__system", False, [], uptime)
            beat = {
                "storm_id": topo,
                "executor_stats": executor_stats,
                "time_secs": now - (rng.randint(120, 900) if stale else rng.randint(0, 3)),
                "uptime_secs": uptime,
            }
            yield SeedNode(f"{root}/workerbeats/{topo}/{sup.sid}-{port}", storm_gzip("ClusterWorkerHeartbeat", beat))

    yield SeedNode(f"{root}/errors/{topo}", DIR)
    for component in sorted(components):
        if rng.random() < 0.5:
            continue
        comp_dir = f"{root}/errors/{topo}/{java_url_encode(component)}"
        yield SeedNode(comp_dir, DIR)
        count = rng.randint(1, 12)
        times = sorted(now - rng.randint(60, 30000) for _ in range(min(count, 10)))  # Storm keeps the newest 10
        info: dict[str, Any] = {}
        for when in times:
            sup, port = rng.choice(taken)
            text = rng.choice(_ERRORS).format(cls=_class_name(component), line=rng.randint(40, 900))
            info = {"error": text, "error_time_secs": when, "host": sup.host, "port": port}
            yield SeedNode(comp_dir + "/e", storm_gzip("ErrorInfo", info), ephemeral=True, sequential=True)
        yield SeedNode(comp_dir + "-last-error", storm_gzip("ErrorInfo", info))

    token = base64.b64encode(hashlib.sha256(f"worker-token-{topo}".encode()).digest() * 3).decode()
    creds = {
        "creds": {"STORM_WORKER_TOKEN_NIMBUS": token, "TGT": base64.b64encode(b"fake-tgt-" + topo.encode()).decode()},
        "topoOwner": "svc-stream",
    }
    yield SeedNode(f"{root}/credentials/{topo}", storm_gzip("Credentials", creds))
    if name.startswith("fraud"):
        levels = {
            "named_logger_level": {
                "ROOT": {"action": "UNCHANGED", "target_log_level": "INFO", "reset_log_level_timeout_secs": 0},
                "com.example.fraud": {
                    "action": "UPDATE",
                    "target_log_level": "DEBUG",
                    "reset_log_level_timeout_secs": 600,
                    "reset_log_level_timeout_epoch": (now + 600) * 1000,
                    "reset_log_level": "INFO",
                },
            }
        }
        yield SeedNode(f"{root}/logconfigs/{topo}", storm_gzip("LogConfig", levels))
    yield SeedNode(f"{root}/profilerconfigs/{topo}", DIR)
    yield SeedNode(f"{root}/backpressure/{topo}", DIR)
    key_dir = f"{root}/secretkeys/NIMBUS/{topo}"
    yield SeedNode(key_dir, DIR)
    key = {
        "key": hashlib.sha256(f"key-{topo}".encode()).hexdigest(),
        "userName": "svc-stream",
        "expirationTimeMillis": (now + 7 * 86400) * 1000,
    }
    yield SeedNode(f"{key_dir}/0", storm_gzip("PrivateWorkerKey", key))
    for suffix in ("stormjar.jar", "stormcode.ser", "stormconf.ser"):
        blob = f"{topo}-{suffix}"
        yield SeedNode(f"{root}/blobstore/{blob}", DIR)
        for host in nimbus_hosts:
            yield SeedNode(f"{root}/blobstore/{blob}/{host}:6627:0-1", ephemeral=True)
        yield SeedNode(f"{root}/blobstoremaxkeysequencenumber/{blob}", struct.pack(">i", 1))


def _class_name(component: str) -> str:
    return "".join(part.capitalize() for part in "".join(c if c.isalnum() else " " for c in component).split()) + "Bolt"


def _executor_stats(rng: random.Random, component: str, spout: bool, components: list[str], uptime: int) -> Any:
    rate = 20.0
    streams = ["default"] if component != "__system" else ["__metrics"]
    stats: dict[str, Any] = {
        "emitted": _stats(rng, streams + ["__ack_init"] * spout, rate, uptime),
        "transferred": _stats(rng, streams, rate, uptime),
        "rate": rate,
    }
    if spout:
        stats["specific"] = {
            "spout": {
                "acked": _stats(rng, ["default"], rate, uptime),
                "failed": _stats(rng, ["default"], rate, max(uptime // 1000, 1)),
                "complete_ms_avg": _averages(rng, ["default"]),
            }
        }
    else:
        upstream = [c for c in components if c < component][-1:] or ["__system"]
        keys = [f"{u}:default" for u in upstream]
        counts = {w: {k: v["default"] for k in keys} for w, v in _stats(rng, ["default"], rate, uptime).items()}
        stats["specific"] = {
            "bolt": {
                "acked": counts,
                "failed": {w: {k: 0 for k in keys} for w in WINDOWS},
                "process_ms_avg": _averages(rng, keys),
                "executed": counts,
                "execute_ms_avg": _averages(rng, keys),
            }
        }
    return stats


# --- Kafka --------------------------------------------------------------------------------------------

_TOPICS = (
    # name, partitions, replication factor, config overrides
    ("orders", 12, 3, {"min.insync.replicas": "2", "retention.ms": "604800000"}),
    ("payments", 6, 3, {"min.insync.replicas": "2", "cleanup.policy": "delete"}),
    ("clickstream", 24, 2, {"retention.ms": "86400000", "compression.type": "zstd"}),
    ("inventory-updates", 8, 3, {"cleanup.policy": "compact"}),
    ("audit-log", 3, 1, {"retention.ms": "2592000000"}),
    (
        "__consumer_offsets",
        50,
        3,
        {"cleanup.policy": "compact", "segment.bytes": "104857600", "compression.type": "producer"},
    ),
)


# Partitions one unit of ``scale`` adds (every topic but __consumer_offsets, which exists once).
KAFKA_PARTITIONS_PER_SCALE = sum(partitions for name, partitions, _, _ in _TOPICS if name != "__consumer_offsets")


def _topic_id(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


def broker_registration(broker: int, now_ms: int, rng: random.Random) -> bytes:
    """A version 5 broker registration (``brokers/ids/{id}``) as a 2.x+ broker writes it, two listeners
    and a rack of three, registered up to 30 days before ``now_ms``."""
    host = f"kafka-{broker:03d}.prod.example.com"
    registration = {
        "features": {},
        "listener_security_protocol_map": {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SASL_SSL"},
        "endpoints": [f"INTERNAL://{host}:9092", f"EXTERNAL://{host}:9094"],
        "rack": f"use1-az{broker % 3 + 1}",
        "jmx_port": 9999,
        "port": 9092,
        "host": host,
        "version": 5,
        "timestamp": str(now_ms - rng.randint(3600, 30 * 86400) * 1000),
    }
    return kafka_json(registration)


def kafka_cluster(*, scale: int = 1, now: int, seed: int = 11, root: str = "/kafka") -> Iterator[SeedNode]:
    rng = random.Random(seed)
    now_ms = now * 1000
    p = (lambda rel: f"{root}/{rel}") if root != "/" else (lambda rel: f"/{rel}")
    if root != "/":
        yield SeedNode(root)
    for rel in (
        "brokers",
        "brokers/ids",
        "brokers/topics",
        "brokers/seqid",
        "admin",
        "admin/delete_topics",
        "config",
        "config/topics",
        "config/clients",
        "config/users",
        "config/brokers",
        "config/ips",
        "config/changes",
        "isr_change_notification",
        "log_dir_event_notification",
        "consumers",
        "cluster",
        "kafka-acl",
        "kafka-acl-changes",
        "kafka-acl-extended",
        "kafka-acl-extended/prefixed",
        "kafka-acl-extended-changes",
    ):
        yield SeedNode(p(rel))

    brokers = list(range(1, 4 * scale + 1))
    dead = {b for b in brokers if b % 4 == 0}  # one broker in four is down but still in replica lists
    for b in brokers:
        if b in dead:
            continue
        yield SeedNode(p(f"brokers/ids/{b}"), broker_registration(b, now_ms, rng), ephemeral=True)
    alive = [b for b in brokers if b not in dead]
    controller = alive[0]
    yield SeedNode(
        p("controller"),
        kafka_json(
            {
                "version": 2,
                "brokerid": controller,
                "timestamp": str(now_ms - 5 * 86400 * 1000),
                "kraftControllerEpoch": -1,
            }
        ),
        ephemeral=True,
    )
    yield SeedNode(p("controller_epoch"), b"17")
    yield SeedNode(p("cluster/id"), kafka_json({"version": "1", "id": _topic_id(rng)}))
    yield SeedNode(p("feature"), kafka_json({"features": {}, "version": 2, "status": 1}))
    block = 1000 * rng.randint(40, 400)
    yield SeedNode(
        p("latest_producer_id_block"),
        kafka_json({"version": 1, "broker": controller, "block_start": str(block), "block_end": str(block + 999)}),
    )

    cursor = 0
    for n in range(scale):
        for name, partitions, rf, overrides in _TOPICS:
            if name == "__consumer_offsets" and n > 0:
                continue
            topic = name if n == 0 else f"{name}.{n}"
            assignment: dict[str, list[int]] = {}
            for part in range(partitions):
                assignment[str(part)] = [brokers[(cursor + part + r) % len(brokers)] for r in range(rf)]
            cursor += 1
            if rf == 1 and dead:  # an unreplicated partition on a dead broker: offline, last ISR the dead one
                assignment["0"] = [min(dead)]
            adding: dict[str, list[int]] = {}
            removing: dict[str, list[int]] = {}
            if name == "payments" and n == 0:  # a KIP-455 move off the dead broker, in flight
                old = assignment["0"]
                target = [b for b in brokers if b not in old and b not in dead][:1]
                if target and any(b in dead for b in old):
                    leaving = [b for b in old if b in dead][:1]
                    assignment["0"] = [b for b in old if b not in leaving] + target + leaving
                    adding["0"], removing["0"] = target, leaving
            topic_znode = {
                "partitions": assignment,
                "topic_id": _topic_id(rng),
                "adding_replicas": adding,
                "removing_replicas": removing,
                "version": 3,
            }
            yield SeedNode(p(f"brokers/topics/{topic}"), kafka_json(topic_znode))
            yield SeedNode(p(f"brokers/topics/{topic}/partitions"))
            for key, replicas in assignment.items():
                live = [b for b in replicas if b not in dead and b not in adding.get(key, [])]
                if live:
                    leader = live[0] if rng.random() > 0.15 else live[-1]
                    isr = live if rng.random() > 0.1 or len(live) == 1 else live[:-1]
                else:
                    leader, isr = -1, replicas[:1]  # offline: ZooKeeper keeps the last (dead) ISR member
                state = {
                    "controller_epoch": 17,
                    "leader": leader,
                    "version": 1,
                    "leader_epoch": rng.randint(0, 30),
                    "isr": isr,
                }
                yield SeedNode(p(f"brokers/topics/{topic}/partitions/{key}"))
                yield SeedNode(p(f"brokers/topics/{topic}/partitions/{key}/state"), kafka_json(state))
            yield SeedNode(p(f"config/topics/{topic}"), kafka_json({"version": 1, "config": overrides}))

    yield SeedNode(p("admin/delete_topics/legacy-events"))
    yield SeedNode(p("config/brokers/<default>"), kafka_json({"version": 1, "config": {"min.insync.replicas": "2"}}))
    yield SeedNode(
        p(f"config/brokers/{controller}"),
        kafka_json(
            {"version": 1, "config": {"listener.name.external.ssl.key.password": "[encrypted]AAAAAQAAAB" + "x" * 40}}
        ),
    )
    yield SeedNode(
        p("config/clients/<default>"), kafka_json({"version": 1, "config": {"producer_byte_rate": "10485760"}})
    )
    yield SeedNode(
        p("config/users/svc-billing"),
        kafka_json(
            {
                "version": 1,
                "config": {
                    "SCRAM-SHA-512": "salt=ZmFrZS1zYWx0LWZvci1zYW5kYm94,stored_key=ZmFrZS1zdG9yZWQta2V5,"
                    "server_key=ZmFrZS1zZXJ2ZXIta2V5,iterations=4096",
                    "consumer_byte_rate": "20971520",
                },
            }
        ),
    )
    yield SeedNode(
        p("config/changes/config_change_"), kafka_json({"version": 2, "entity_path": "topics/orders"}), sequential=True
    )
    yield SeedNode(
        p("isr_change_notification/isr_change_"),
        kafka_json({"version": 1, "partitions": [{"topic": "clickstream", "partition": 3}]}),
        sequential=True,
    )
    for resource in ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"):
        yield SeedNode(p(f"kafka-acl/{resource}"))
    acl = lambda principal, op: {"principal": principal, "permissionType": "Allow", "operation": op, "host": "*"}  # noqa: E731
    yield SeedNode(
        p("kafka-acl/Topic/orders"),
        kafka_json({"version": 1, "acls": [acl("User:svc-orders", "Write"), acl("User:svc-billing", "Read")]}),
    )
    yield SeedNode(p("kafka-acl/Group/*"), kafka_json({"version": 1, "acls": [acl("User:*", "Read")]}))
    yield SeedNode(p("kafka-acl/Cluster/kafka-cluster"), kafka_json({"version": 1, "acls": [acl("User:admin", "All")]}))
    yield SeedNode(p("kafka-acl-extended/prefixed/Topic"))
    yield SeedNode(
        p("kafka-acl-extended/prefixed/Topic/clickstream."),
        kafka_json({"version": 1, "acls": [acl("User:svc-analytics", "Read")]}),
    )
    yield SeedNode(p("kafka-acl-changes/acl_changes_"), b"TOPIC:orders", sequential=True)


def cluster(*, scale: int = 1, now: int) -> Iterator[SeedNode]:
    """The sandbox's whole tree: Storm under ``/storm`` and Kafka under ``/kafka``."""
    yield from storm_cluster(scale=scale, now=now)
    yield from kafka_cluster(scale=scale, now=now)
