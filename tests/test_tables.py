"""Tables that fit: at 80 columns no line of any view is wider than the terminal; columns are kept by
priority and the rest named; long values end in an ellipsis instead of wrapping into letters; numbers
are never cut; one record is shown vertically; --wide shows every column; machine formats unchanged."""

from __future__ import annotations

import json
import os

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
    # the leading columns stay (a header wraps between its words where its values are narrower)
    assert "host" in header and "port" in header and "beat" in header and "age" in header
    footer = " ".join(line.strip() for line in lines if not line.startswith(("┏", "┃", "┡", "│", "└")))
    assert "more:" in footer and "time_secs" in footer and "--wide" in footer
    wide = table(both, "storm", "workers", "--wide", columns=250)
    assert "decode status" in " ".join(wide[:5]) and "time secs" in " ".join(wide[:5])
    assert not any("more:" in line for line in wide)


def test_names_are_whole_and_numbers_are_whole(both: list[str]) -> None:
    workers = json.loads(run(*both, "storm", "workers", "-f", "json").stdout)
    lines = table(both, "storm", "workers")
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == len(workers)  # one line per worker: nothing wrapped onto a second line
    assert "…" not in "".join(rows)  # no name cut
    for worker in workers:  # every host and port whole
        assert any(f" {worker['host']} " in row and f" {worker['port']} " in row for row in rows)


# --- the views as an operator reads them: names whole, human columns, one line per thing ----------------

WIDTHS = (80, 100, 120, 200)
# view → (JSON field of its key, other fields that appear whole)
KEYED = {
    ("storm", "topologies"): ("name", ("status",)),
    ("storm", "workers"): ("host", ()),
    ("storm", "supervisors"): ("hostname", ()),
    ("storm", "nimbus"): ("host", ()),
    ("storm", "assignment", TOPOLOGY): ("host", ()),
    ("storm", "components", TOPOLOGY): ("component", ()),
    ("kafka", "brokers"): ("host", ()),
    ("kafka", "topics"): ("topic", ()),
    ("kafka", "partitions"): ("topic", ("health",)),
    ("zk", "usage", "/"): ("key", ()),
}
# epoch times a default view must show as an age or a time, never as seconds
EPOCHS = ("launch_time_secs", "time_secs", "started_secs", "start_time_secs", "timestamp_ms")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("view", KEYED, ids=" ".join)
def test_every_name_and_status_appears_whole(both: list[str], view: tuple[str, ...], width: int) -> None:
    """On a real console of each width: every key value (a name, host, topic, path) and status appears
    whole in the table, and no default view has a column of epoch seconds."""
    key, others = KEYED[view]
    rows = json.loads(run(*both, *view, "-f", "json").stdout)
    assert rows
    text = "\n".join(table(both, *view, columns=width))
    cells = {c.strip() for line in text.splitlines() for c in line.split("│")[1:-1]}
    # a name wider than the terminal wraps in its column (the first): read down that column
    first_column = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    for row in rows:
        for field in (key, *others):
            value = row.get(field)
            if value not in (None, ""):
                assert str(value) in cells or (len(str(value)) > width - 8 and str(value) in first_column), (
                    field,
                    value,
                    width,
                )
        for field in EPOCHS:
            if isinstance(row.get(field), int) and row[field] > 1_000_000_000:
                assert str(row[field]) not in cells, (field, width)
    assert not any(h in text for h in ("time secs", "timestamp ms", "started secs")), text[:400]
    assert not any(len(line) > width for line in text.splitlines())


@pytest.mark.parametrize("width", (80, 100))
def test_partitions_are_one_line_each(both: list[str], width: int) -> None:
    """As ``kafka-topics --describe``: N partitions are N rows of one line, one offline partition too."""
    partitions = json.loads(run(*both, "kafka", "partitions", "-f", "json").stdout)
    rows = [line for line in table(both, "kafka", "partitions", columns=width) if line.startswith("│")]
    assert len(rows) == len(partitions)
    offline = json.loads(run(*both, "kafka", "partitions", "--offline", "-f", "json").stdout)
    lines = table(both, "kafka", "partitions", "--offline", columns=width)
    assert len([line for line in lines if line.startswith("│")]) == len(offline) >= 1
    assert "offline" in "".join(lines) and not any(line.startswith("partition ") for line in lines)


def test_decode_status_and_root_only_when_they_say_something(
    writer: KazooClient, zk_root: Chroot, both: list[str]
) -> None:
    """``decode status`` is a column only when a row is not ``ok`` (and a line under the table counts
    them); ``root`` only when the rows come from more than one root."""
    lines = " ".join(table(both, "kafka", "brokers", columns=200))
    assert "decode status" not in lines and "root" not in lines
    writer.create(f"{zk_root.path}/kafka-prod/brokers/ids/999", b"{not json", makepath=True)
    lines = " ".join(table(both, "kafka", "brokers", columns=200))
    assert "decode status" in lines and "json_syntax" in lines and "1 of " in lines
    usage = " ".join(table(both, "zk", "usage", "/", columns=200))
    assert "/storm" in usage and "/kafka-prod" in usage  # subtrees of two roots: the root column says which


GOLDEN_VIEWS = {
    "storm-topologies": ("storm", "topologies"),
    "storm-workers": ("storm", "workers"),
    "kafka-brokers": ("--kafka-root", "/kafka-prod", "kafka", "brokers"),
    "kafka-partitions-under-replicated": ("--kafka-root", "/kafka-prod", "kafka", "partitions", "--under-replicated"),
}


@pytest.mark.parametrize("name", GOLDEN_VIEWS)
def test_views_at_80_columns_match_golden_text(name: str) -> None:
    """Read from a real data directory, so every age counts from the files' own time and stays put."""
    from tests.test_changes import VARIANTS, _folder
    from tests.test_cli import GOLDEN

    result = run("--from-files", str(_folder(VARIANTS[0])), *GOLDEN_VIEWS[name], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"view-{name}.txt"
    if os.environ.get("ZKSTORM_UPDATE_GOLDEN"):
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()


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
