"""A week of nightly snapshots of the demo sandbox, with incidents staged between the nights.

The demo plays the cluster: it writes to the sandbox's ZooKeeper with its own kazoo client (zkstorm
itself never writes), then runs ``zkstorm snapshot`` as the nightly job would, dated one day apart.
Usage: ``python scripts/demo_week.py ZK OUT``.

Nights: 0 baseline · 1 ISRs shrink · 2 a broker dies · 3 a burst of topology errors · 4 a supervisor
drops out · 5 it is back and partition leadership is moved around (a rebalance) · 6 the broker returns.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kazoo.client import KazooClient

# This checkout's zkstorm, whatever else the interpreter has installed: run as a file, the script's own folder
# leads sys.path, not the checkout (its ``python -m zkstorm.cli`` runs take the checkout from the working dir).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from zkstorm.sandbox.encode import storm_gzip

KAFKA = "/kafka"
STORM = "/storm"
ERRORS = [
    "java.lang.OutOfMemoryError: GC overhead limit exceeded",
    "org.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired before the position "
    "for partition clicks-{n} could be determined",
    "java.net.ConnectException: Connection refused (Connection refused) to redis-{n}.internal:6379",
]


def partition_states(zk: KazooClient) -> dict[str, dict]:
    out = {}
    for topic in zk.get_children(f"{KAFKA}/brokers/topics"):
        base = f"{KAFKA}/brokers/topics/{topic}/partitions"
        if not zk.exists(base):
            continue
        for partition in zk.get_children(base):
            path = f"{base}/{partition}/state"
            data, _ = zk.get(path)
            out[path] = json.loads(data)
    return out


def write_state(zk: KazooClient, path: str, state: dict, **changes: object) -> None:
    state = {**state, **changes, "leader_epoch": int(state.get("leader_epoch", 0)) + 1}
    zk.set(path, json.dumps(state, separators=(",", ":")).encode())


def main() -> int:
    zk_hosts, out = sys.argv[1], sys.argv[2]
    rng = random.Random(3)
    zk = KazooClient(zk_hosts, timeout=30)
    zk.start(timeout=30)
    zkstorm = [sys.executable, "-m", "zkstorm.cli", "--zk", zk_hosts, "--kafka-root", KAFKA]
    first = datetime.now(UTC).replace(hour=2, minute=30, second=0, microsecond=0) - timedelta(days=6)
    brokers = sorted(zk.get_children(f"{KAFKA}/brokers/ids"), key=int)
    victim = brokers[-1]
    victim_data, _ = zk.get(f"{KAFKA}/brokers/ids/{victim}")
    supervisors = sorted(zk.get_children(f"{STORM}/supervisors"))
    flapper = supervisors[0]
    flapper_data, _ = zk.get(f"{STORM}/supervisors/{flapper}")
    try:
        for night in range(7):
            states = partition_states(zk)
            if night == 1:  # ISRs shrink: a slow follower falls out of some ISRs
                slow = int(brokers[1])
                for path, state in rng.sample(sorted(states.items()), min(40, len(states))):
                    if slow in state["isr"] and len(state["isr"]) > 1:
                        write_state(zk, path, state, isr=[b for b in state["isr"] if b != slow])
            elif night == 2:  # a broker dies: its registration goes, it leaves every ISR, leaders move
                zk.delete(f"{KAFKA}/brokers/ids/{victim}")
                dead = int(victim)
                for path, state in states.items():
                    if dead in state["isr"] and len(state["isr"]) > 1:
                        isr = [b for b in state["isr"] if b != dead]
                        leader = isr[0] if state["leader"] == dead else state["leader"]
                        write_state(zk, path, state, isr=isr, leader=leader)
            elif night == 3:  # a burst of errors in one topology
                topology = sorted(zk.get_children(f"{STORM}/errors"))[0]
                children = zk.get_children(f"{STORM}/errors/{topology}")
                components = sorted(c for c in children if not c.endswith("-last-error")) or ["__system"]
                when = int((first + timedelta(days=night, hours=-3)).timestamp())
                for i in range(40):
                    component = components[i % len(components)]
                    text = (
                        rng.choice(ERRORS).format(n=rng.randint(0, 31))
                        + "\n\tat org.example.Worker.run(Worker.java:42)"
                    )
                    info = {"error": text, "error_time_secs": when + i * 37, "host": "wkr-a01", "port": 6700}
                    path = f"{STORM}/errors/{topology}/{component}/e"
                    zk.create(path, storm_gzip("ErrorInfo", info), sequence=True, makepath=True)
            elif night == 4:  # a supervisor drops out
                zk.delete(f"{STORM}/supervisors/{flapper}")
            elif night == 5:  # it comes back; partition leadership is moved around
                zk.create(f"{STORM}/supervisors/{flapper}", flapper_data)
                for path, state in rng.sample(sorted(states.items()), min(60, len(states))):
                    if len(state["isr"]) > 1:
                        write_state(zk, path, state, leader=state["isr"][1])
            elif night == 6:  # the broker returns (a new registration) and catches up
                registration = json.loads(victim_data)
                registration["timestamp"] = str(int(time.time() * 1000))
                zk.create(f"{KAFKA}/brokers/ids/{victim}", json.dumps(registration).encode())
                back = int(victim)
                for path, state in states.items():
                    assignment_path = path.rsplit("/partitions/", 1)[0]
                    replicas = json.loads(zk.get(assignment_path)[0])["partitions"].get(path.split("/")[-2], [])
                    if back in replicas and back not in state["isr"]:
                        write_state(zk, path, state, isr=[*state["isr"], back])
            at = first + timedelta(days=night)
            subprocess.run(
                [*zkstorm, "snapshot", out, "--cluster", "sandbox", "--snapshot-time", at.isoformat()],
                check=True,
            )
    finally:
        zk.stop()
        zk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
