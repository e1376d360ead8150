"""The real daemons behind ``make demo REAL=1``: the suite's own harness (``tests/real/``) starts a ZooKeeper,
three Kafka 3.9.2 brokers under ``/kafka`` and Storm 2.8.3's LocalCluster under ``/storm`` with the test
topology (``words``: spouts, a bolt that throws now and then) running and heartbeating, instead of the
sandbox's synthetic writers. Usage: ``demo_real.py RUN_DIR``.

It writes ``RUN_DIR/zk`` (the ZooKeeper's ``host:port``) once everything is ready, then holds the daemons
until SIGTERM or SIGINT (``scripts/demo.sh``'s trap sends SIGTERM on any exit, Ctrl-C included) and stops
them all by pid. The Kafka and Storm JVMs die with this process even if it is ``kill -9``ed
(``harness.Daemon``); the ZooKeeper (in a session of its own, so a Ctrl-C reaches this process first) is
stopped by the ``finally`` here, or by the trap from ``RUN_DIR/zk.pid`` if this process died. The server's
data directory is ``RUN_DIR/zk-server/data`` (the demo reads it with ``--from-files``)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.real import harness
from tests.real import storm as storm_real
from tests.real.kafka import VERSIONS, KafkaCluster
from zkstorm.sandbox.server import ZkServer

KAFKA = "3.9.2"
# topics of several shapes, and a SCRAM credential (which the demo shows redacted)
TOPICS = {"orders": (6, 3), "payments": (3, 2), "audit": (1, 1)}
SCRAM = "SCRAM-SHA-256=[iterations=4096,password=zkstorm-demo-pw]"


class Stopped(Exception):
    """SIGTERM or SIGINT: stop everything."""


def _stop(signum: int, frame: FrameType | None) -> None:
    # once: a second Ctrl-C, or the trap's SIGTERM after it, must not cut the stopping short
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stopped


def main(run_dir: Path) -> int:
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        harness.java()
        harness.javac()
        harness.jars(VERSIONS[KAFKA].profile)
        harness.jars(storm_real.PROFILE)
    except harness.Missing as exc:
        print(f"FATAL: {exc}", file=sys.stderr)
        return 2
    harness.sweep()
    zk = kafka = storm = None
    try:
        # its own session (detach): a Ctrl-C reaches this process, which stops Storm and Kafka first
        zk = ZkServer(run_dir / "zk-server", detach=True).start()
        if zk.process is not None:  # for demo.sh's trap, should this process die without its finally
            (run_dir / "zk.pid").write_text(str(zk.process.pid))
        print(f"ZooKeeper {zk.connect_string} ready; starting 3 Kafka {KAFKA} brokers under /kafka", flush=True)
        kafka = KafkaCluster(VERSIONS[KAFKA], zk.connect_string, "/kafka", run_dir / "kafka").start()
        assert kafka.truth is not None
        for topic, (partitions, replicas) in TOPICS.items():
            kafka.truth.topics(
                "--create", "--topic", topic, "--partitions", str(partitions), "--replication-factor", str(replicas)
            )
        kafka.truth.configs("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config", SCRAM)
        print(f"Kafka ready; starting Storm {storm_real.VERSION} (LocalCluster) under /storm", flush=True)
        storm = storm_real.StormCluster(zk.connect_string, "/storm", run_dir / "storm").start()
        storm.submit(storm_real.TOPOLOGY, workers=2)
        storm.wait("running and heartbeating", storm_real.beating, timeout=120)
        (run_dir / "zk").write_text(zk.connect_string)
        print(f"Storm topology {storm_real.TOPOLOGY} running; logs under {run_dir}", flush=True)
        while True:
            time.sleep(3600)
    except Stopped:
        return 130  # as a shell reports a Ctrl-C'd command
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for part in (storm, kafka, zk):
            if part is not None:
                part.stop()
        (run_dir / "zk.pid").unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
