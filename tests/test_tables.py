"""Tables that fit: at 80 columns no line of any view is wider than the terminal; columns are kept by
priority and the rest named; long values end in an ellipsis instead of wrapping into letters; numbers
are never cut; one record is shown vertically; --wide shows every column; machine formats unchanged."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.test_cli import run

TOPOLOGY = "fraud-scorer-3-1751880000"


@pytest.fixture
def both(writer: KazooClient, zk_root: Chroot) -> list[str]:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    return ["--zk", zk_root.zk, "--kafka-root", "/kafka-prod"]


def table(zk: list[str], *args: str, columns: int = 80) -> list[str]:
    result = run(*zk, *args, env={"COLUMNS": str(columns)})
    assert result.exit_code in (0, 4), result.output
    return result.stdout.splitlines()


VIEWS = [
    ("storm", "topologies"),
    ("storm", "workers"),
    ("storm", "supervisors"),
    ("storm", "assignment", TOPOLOGY),
    ("storm", "nimbus"),
    ("storm", "components", TOPOLOGY),
    ("errors", TOPOLOGY),
    ("kafka", "brokers"),
    ("kafka", "topics"),
    ("kafka", "partitions"),
    ("kafka", "health"),
    ("kafka", "health", "--detail"),
    ("kafka", "configs"),
    ("kafka", "acls"),
    ("get", f"/storm/storms/{TOPOLOGY}"),
    ("get", "/kafka-prod/brokers/ids/101"),
    ("tree", "/storm", "--depth", "2"),
]


@pytest.mark.parametrize("view", VIEWS, ids=" ".join)
def test_no_line_is_wider_than_80_columns(both: list[str], view: tuple[str, ...]) -> None:
    lines = table(both, *view)
    assert lines
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)


def test_columns_are_kept_by_priority_and_the_rest_named(both: list[str]) -> None:
    lines = table(both, "storm", "workers")
    header = " ".join(lines[:5])
    assert "host" in header and "port" in header  # the leading columns stay
    assert any("more:" in line and "decode_status" in line and "--wide" in line for line in lines)
    wide = table(both, "storm", "workers", "--wide", columns=250)
    assert "decode status" in " ".join(wide[:5])
    assert not any("more:" in line for line in wide)


def test_long_values_end_in_an_ellipsis_and_numbers_are_whole(both: list[str]) -> None:
    workers = json.loads(run(*both, "storm", "workers", "-f", "json").stdout)
    lines = table(both, "storm", "workers")
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == len(workers)  # one line per worker: nothing wrapped onto a second line
    assert all("…" in row for row in rows)  # the hosts are longer than their column
    for worker in workers:  # every port and uptime appears whole
        assert any(f" {worker['port']} " in row and f" {worker['uptime_secs']} " in row for row in rows)


def test_one_record_is_shown_vertically(both: list[str]) -> None:
    lines = table(both, "get", "/kafka-prod/brokers/ids/101")
    start = next(i for i, line in enumerate(lines) if "KafkaBroker" in line)
    fields = [line.split()[0] for line in lines[start + 1 :] if line.strip() and not line.startswith(" ")]
    for name in ("broker_id", "host", "port", "alive", "endpoints"):
        assert name in fields, name  # field, value lines, one field each
    assert not any(line.startswith(("┏", "│")) for line in lines[start:])  # no table of one row
    one_topic = table(both, "kafka", "topics", "--topic", "invoices.v2")
    assert any(line.split()[:2] == ["partition_count", "6"] for line in one_topic)


def test_machine_formats_are_not_fitted(both: list[str]) -> None:
    narrow = run(*both, "kafka", "brokers", "-f", "csv", env={"COLUMNS": "40"}).stdout
    wide = run(*both, "kafka", "brokers", "-f", "csv", env={"COLUMNS": "400"}).stdout
    assert narrow == wide and "…" not in narrow and "INTERNAL://b101.prod.kafka.example.net:9091" in narrow
