"""A real Kafka cluster in ZooKeeper mode: three brokers on loopback under a chroot of the test ZooKeeper,
on one pinned version's jars (``tests/real/pom.xml``), each a ``harness.Daemon`` with its log under the
run's folder, and the cluster ready when Kafka's own metadata says so: every broker in the controller's
metadata and a controller elected (AdminClient ``describeCluster``, through ``truth.KafkaTruth``).

The settings keep a three-broker cluster small and its scenarios quick on a shared 2-core machine: a
ZooKeeper session of 6 s (a ``kill -9``ed broker's registration goes within it; the server's minimum is
two ticks, 4 s), three ``__consumer_offsets`` partitions, no automatic leader rebalance (the scenario
moves leaders itself), no initial rebalance delay, and an authorizer (``AclAuthorizer``) with the
PLAINTEXT listeners' principal ``User:ANONYMOUS`` as super user, so the brokers and the tools are
allowed everything while the ACLs the scenario writes are stored and read for real.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkstorm.sandbox.server import free_port

from .harness import Daemon, DaemonFailed, classpath, jars, jvm, log4j1, port_open
from .truth import KafkaTruth


@dataclass(frozen=True)
class KafkaVersion:
    """One Kafka release the suite runs for real, and where its commands live in that release."""

    version: str
    topics: str
    reassign: str
    election: str
    configs: str = "kafka.admin.ConfigCommand"
    acls: str = "kafka.admin.AclCommand"
    producer_perf: str = "org.apache.kafka.tools.ProducerPerformance"

    @property
    def profile(self) -> str:
        return f"kafka-{self.version}"


VERSIONS = {
    # the last 3.9 Maven Central serves; 3.9 is the last line with ZooKeeper mode (3.9.3 is not served)
    "3.9.2": KafkaVersion(
        "3.9.2",
        topics="org.apache.kafka.tools.TopicCommand",
        reassign="org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        election="org.apache.kafka.tools.LeaderElectionCommand",
    ),
    # the older layout: the tools still in core, IBP 2.8
    "2.8.2": KafkaVersion(
        "2.8.2",
        topics="kafka.admin.TopicCommand",
        reassign="kafka.admin.ReassignPartitionsCommand",
        election="kafka.admin.LeaderElectionCommand",
    ),
}

SESSION_TIMEOUT_MS = 6000
PASSWORD_ENCODER_SECRET = "zkstorm-real-encoder-secret"


# Each broker has two listeners, as production brokers do: INTERNAL between brokers, CLIENT for clients
# (the tools, the AdminClient), both PLAINTEXT. The client listener's host differs per broker (an address,
# a name, IPv6 in brackets where the machine has ::1), and so does the rack: the registrations zkstorm reads
# carry every form a real one can.
CLIENT_HOSTS = {1: "127.0.0.1", 2: "localhost", 3: "[::1]"}
RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-a"}


def _ipv6() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@dataclass
class Broker:
    broker_id: int
    port: int  # the CLIENT listener's
    internal_port: int
    host: str
    folder: Path
    daemon: Daemon | None = None

    @property
    def config(self) -> Path:
        return self.folder / "server.properties"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def bind_host(self) -> str:
        return self.host.strip("[]")


@dataclass
class KafkaCluster:
    """Three brokers of ``version`` on loopback under ``chroot`` of the ZooKeeper at ``zk_connect``."""

    version: KafkaVersion
    zk_connect: str
    chroot: str
    run_dir: Path
    broker_ids: tuple[int, ...] = (1, 2, 3)
    brokers: dict[int, Broker] = field(default_factory=dict)
    truth: KafkaTruth | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(b.address for b in self.brokers.values())

    def start(self, timeout: float = 90.0) -> KafkaCluster:
        classes = classpath(jars(self.version.profile))
        ipv6 = _ipv6()
        for i in self.broker_ids:
            host = CLIENT_HOSTS.get(i, "127.0.0.1")
            host = host if ipv6 or not host.startswith("[") else "127.0.0.1"
            broker = Broker(i, free_port(), free_port(), host, self.run_dir / f"broker-{i}")
            self._write_config(broker)
            self.brokers[i] = broker
        try:
            for broker in self.brokers.values():
                self._launch(broker, classes)
            self.truth = KafkaTruth(self.version.profile, self.version, self.bootstrap, self.run_dir).start()
            self.wait_brokers(set(self.broker_ids), timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _write_config(self, broker: Broker) -> None:
        broker.folder.mkdir(parents=True, exist_ok=True)
        settings = {
            "broker.id": broker.broker_id,
            "zookeeper.connect": f"{self.zk_connect}{self.chroot}",
            "listeners": f"INTERNAL://127.0.0.1:{broker.internal_port},CLIENT://{broker.address}",
            "advertised.listeners": f"INTERNAL://127.0.0.1:{broker.internal_port},CLIENT://{broker.address}",
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "broker.rack": RACKS.get(broker.broker_id, "rack-a"),
            "log.dirs": broker.folder / "data",
            "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS,
            "offsets.topic.replication.factor": 3,
            "offsets.topic.num.partitions": 3,
            "transaction.state.log.replication.factor": 3,
            "transaction.state.log.min.isr": 2,
            "group.initial.rebalance.delay.ms": 0,
            "auto.leader.rebalance.enable": "false",
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "super.users": "User:ANONYMOUS",
            "password.encoder.secret": PASSWORD_ENCODER_SECRET,  # dynamic password configs need it
            "controlled.shutdown.enable": "false",  # a stop is quick; the scenario kills a broker itself
            "num.network.threads": 2,
            "num.io.threads": 2,
            "background.threads": 2,
            "num.recovery.threads.per.data.dir": 1,
            "log.cleaner.dedupe.buffer.size": 4 << 20,  # of the heap, at start (128 MiB by default)
            "replica.lag.time.max.ms": 5000,
            # a throttled reassignment stays in flight only if one fetch cannot move a partition whole: the
            # first fetch is never throttled (the quota is judged on what was fetched before)
            "replica.fetch.max.bytes": 65536,
            "replica.fetch.response.max.bytes": 65536,
            "replica.fetch.backoff.ms": 200,  # a throttled follower asks again soon once the throttle is lifted
        }
        broker.config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))

    def _launch(self, broker: Broker, classes: str) -> None:
        config = log4j1(broker.folder, broker.folder / "server.log")
        broker.daemon = Daemon(
            f"kafka-{self.version.version}-broker-{broker.broker_id}",
            jvm(
                classes,
                "kafka.Kafka",
                [str(broker.config)],
                heap="384m",
                options=[f"-Dlog4j.configuration=file:{config}", f"-Dkafka.logs.dir={broker.folder}"],
            ),
            log=broker.folder / "stdout.log",
            tail=broker.folder / "server.log",
        ).start()

    def wait_brokers(self, ids: set[int], timeout: float = 90.0) -> dict[str, Any]:
        """Until Kafka's metadata lists exactly ``ids`` and names a controller among them (every broker's
        own port open first, so the AdminClient is not asked while nothing listens)."""
        assert self.truth is not None
        deadline = time.monotonic() + timeout
        for i in sorted(ids):
            daemon = self.brokers[i].daemon
            assert daemon is not None
            daemon.wait_ready(
                lambda b=self.brokers[i]: port_open(b.port, b.bind_host), deadline - time.monotonic(), "listening"
            )

        def ready() -> dict[str, Any] | None:
            for i in ids:
                daemon = self.brokers[i].daemon
                if daemon is None or not daemon.running:
                    raise DaemonFailed(f"broker {i} exited:\n{daemon.log_tail() if daemon else ''}")
            try:
                answer = self.truth.cluster() if self.truth else None
            except Exception:
                return None
            if answer is None:
                return None
            listed = {b["id"] for b in answer["brokers"]}
            controller = answer.get("controller")
            return answer if listed == ids and controller and controller["id"] in ids else None

        return self.truth.daemon.wait_ready(
            ready, max(deadline - time.monotonic(), 1.0), f"brokers {sorted(ids)} in the metadata"
        )

    def controller_id(self) -> int:
        assert self.truth is not None
        return int(self.truth.cluster()["controller"]["id"])

    def kill(self, broker_id: int) -> None:
        """``kill -9`` one broker: its ZooKeeper session ends only when the server expires it."""
        daemon = self.brokers[broker_id].daemon
        assert daemon is not None
        daemon.kill()

    def restart(self, broker_id: int) -> None:
        self._launch(self.brokers[broker_id], classpath(jars(self.version.profile)))

    def stop(self) -> None:
        """Every broker (SIGTERM: each closes its ZooKeeper session, so its registration goes at once),
        then the AdminClient's JVM."""
        for broker in self.brokers.values():
            if broker.daemon is not None and broker.daemon.running:
                broker.daemon.process.send_signal(15)  # type: ignore[union-attr]
        for broker in self.brokers.values():
            if broker.daemon is not None:
                broker.daemon.stop(timeout=20)
        if self.truth is not None:
            with contextlib.suppress(Exception):
                self.truth.stop()

    def log_tails(self, lines: int = 30) -> str:
        parts = []
        for broker in self.brokers.values():
            tail = "\n".join(
                (broker.folder / "server.log").read_text(errors="replace").splitlines()[-lines:]
                if (broker.folder / "server.log").exists()
                else []
            )
            parts.append(f"--- broker {broker.broker_id} ({broker.folder / 'server.log'})\n{tail}")
        return "\n".join(parts)
