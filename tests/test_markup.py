"""Values from ZooKeeper print as they are in every table and tree: rich must not read ``[...]`` in a
component id, host, error line, topic name or config value as a style tag."""

from __future__ import annotations

import time

from kazoo.client import KazooClient

from tests.conftest import Chroot
from tests.test_cli import run
from zkstorm.sandbox.encode import kafka_json, storm_gzip

COMPONENT = "enrich [geo]"
HOST = "wkr-[bold]1[/bold].example.org"
ERROR = "java.lang.IllegalStateException: bad row [red]x[/red] in [link=http://e.x]feed[/link]"
TOPIC = "orders[blue]"
CONFIG = "[i]lz4[/i]"
RACK = "[bold]rack-1[/bold]"
TOPOLOGY = "tagged-1-1790000000"


def seed(writer: KazooClient, chroot: str) -> None:
    storm = f"{chroot}/storm"
    writer.create(
        f"{storm}/storms/{TOPOLOGY}",
        storm_gzip("StormBase", {"name": "tagged [x]", "status": "ACTIVE", "num_workers": 1, "launch_time_secs": 1}),
        makepath=True,
    )
    info = storm_gzip(
        "ErrorInfo", {"error": ERROR, "error_time_secs": int(time.time()) - 5, "host": HOST, "port": 6700}
    )
    writer.create(f"{storm}/errors/{TOPOLOGY}/enrich+%5Bgeo%5D/e0000000001", info, makepath=True)
    kafka = f"{chroot}/kafka"
    registration = {"version": 4, "host": "b1.example.org", "port": 9092, "jmx_port": -1, "rack": RACK,
                    "endpoints": ["PLAINTEXT://b1.example.org:9092"], "timestamp": "1"}  # fmt: skip
    writer.create(f"{kafka}/brokers/ids/1", kafka_json(registration), makepath=True)
    writer.create(
        f"{kafka}/brokers/topics/{TOPIC}", kafka_json({"version": 1, "partitions": {"0": [1]}}), makepath=True
    )
    writer.create(
        f"{kafka}/brokers/topics/{TOPIC}/partitions/0/state",
        kafka_json({"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1]}),
        makepath=True,
    )
    writer.create(
        f"{kafka}/config/topics/{TOPIC}",
        kafka_json({"version": 1, "config": {"compression.type": CONFIG}}),
        makepath=True,
    )


def test_values_print_literally_everywhere(writer: KazooClient, zk_root: Chroot) -> None:
    seed(writer, zk_root.path)
    wide = {"COLUMNS": "400"}
    zk = ("--zk", zk_root.zk)
    kafka = (*zk, "--kafka-root", "/kafka", "kafka")
    cases = {
        ("errors", TOPOLOGY): [COMPONENT, HOST, ERROR],
        ("storm", "topologies"): ["tagged [x]"],
        ("tree", "/"): [TOPIC, "enrich+%5Bgeo%5D"],
        ("get", f"/kafka/config/topics/{TOPIC}"): [CONFIG, TOPIC],
    }
    for args, wanted in cases.items():
        out = run(*zk, *args, env=wide)
        assert out.exit_code == 0, out.output
        for text in wanted:
            assert text in out.stdout, (args, text, out.stdout)
    for args, wanted in {
        ("brokers",): [RACK],
        ("topics",): [TOPIC],
        ("partitions",): [TOPIC],
        ("configs",): [CONFIG, TOPIC],
    }.items():
        out = run(*kafka, *args, env=wide)
        assert out.exit_code == 0, out.output
        for text in wanted:
            assert text in out.stdout, (args, text, out.stdout)
