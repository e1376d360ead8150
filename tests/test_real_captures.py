"""Real Kafka clusters' znodes, read back with no Kafka, no Java and no ZooKeeper: every moment the
real-cluster tests took (tests/real, issue 39), kept in tests/data/real (its README says which daemon and
version wrote them and how to capture them again), served to the CLI exactly as ZooKeeper held them
(``MemorySource``), and every Kafka view compared fact by fact with what Kafka's own API answered at that
moment, as the live tests compare them. A decoder or model change that a real cluster would disagree
with fails here, in every run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import zkstorm.model
from tests.real import compare, views
from tests.real.capture import DATA, MemorySource, Moment, captured
from tests.real.scenario import BROKER_PASSWORD, SCRAM_PASSWORDS, STEPS
from zkstorm.model.cluster import Cluster

PROFILES = ("kafka-3.9.2", "kafka-2.8.2")
MOMENTS = [folder for profile in PROFILES for folder in captured(profile)]
WHERE = ["--zk", "127.0.0.1:9"]  # never dialled: the cluster is served from memory


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``serve(moment)``: the CLI's clusters read that moment's znodes from memory instead of an ensemble."""

    def serve(moment: Moment) -> None:
        source = MemorySource(moment.znodes, moment.as_of_ms)

        def connect(zk: str, **options: Any) -> Cluster:
            return Cluster(
                source,
                storm_root=options["storm_root"],
                kafka_root=options["kafka_root"],
                show_secrets=options["show_secrets"],
            )

        monkeypatch.setattr(zkstorm.model, "connect", connect)

    yield serve


def test_every_moment_of_every_version_is_kept() -> None:
    for profile in PROFILES:
        assert [p.name for p in captured(profile)] == list(STEPS), f"{DATA / profile}: capture it again"
        assert (DATA / profile / "events.json").exists()


@pytest.mark.parametrize("folder", MOMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_view_agrees_with_kafka(served: Any, folder: Path) -> None:
    moment = Moment.load(folder)
    served(moment)
    found = views.facts(views.read_views(WHERE), moment.kafka, moment.znodes)
    wrong = [str(f) for f in found if not f.equal]
    assert not wrong, f"{len(wrong)} disagreements with Kafka:\n" + "\n".join(wrong[:60])
    assert len(found) >= 20


@pytest.mark.parametrize("profile", PROFILES)
def test_secrets_stay_redacted_in_every_output(served: Any, profile: str) -> None:
    moment = Moment.load(DATA / profile / "configs")
    served(moment)
    secrets = views.secret_strings(moment.znodes, [BROKER_PASSWORD, *SCRAM_PASSWORDS.values()])
    assert len(secrets) >= 9, secrets
    leaks = [str(f) for f in compare.secrets(views.every_output(WHERE), secrets) if not f.equal]
    assert not leaks, "\n".join(leaks[:20])


def test_a_fresh_clusters_empty_producer_id_block_is_no_fault(served: Any) -> None:
    """Kafka 3.x creates ``latest_producer_id_block`` empty and its controller fills it when a producer id
    is first needed (2.8's brokers claim a block as they start): zkstorm used to note the empty znode as
    ``empty_data`` (no data where a payload belongs) on every view of a fresh 3.9 cluster."""
    moment = Moment.load(DATA / "kafka-3.9.2" / "started")
    block = next(n for n in moment.znodes if n.path == "/latest_producer_id_block")
    assert not block.data
    served(moment)
    result = views.run(*WHERE, "get", "/latest_producer_id_block", "-f", "json")
    assert result.exit_code == 0 and "empty_data" not in result.stdout + result.stderr
    assert json.loads(result.stdout)["records"] == []
    health = views.run(*WHERE, "kafka", "health", "-f", "json")
    assert health.stderr == "" and json.loads(health.stdout) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_a_real_producer_id_block_reads_as_kafka_wrote_it(served: Any, profile: str) -> None:
    moment = Moment.load(DATA / profile / "data")
    block = json.loads(next(n for n in moment.znodes if n.path == "/latest_producer_id_block").data or b"{}")
    served(moment)
    (record,) = json.loads(views.run(*WHERE, "get", "/latest_producer_id_block", "-f", "json").stdout)["records"]
    assert (record["broker_id"], record["block_start"], record["block_end"]) == (
        block["broker"],
        int(block["block_start"]),
        int(block["block_end"]),
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_consumers_says_where_the_java_consumers_groups_are(served: Any, profile: str) -> None:
    """A group of the Java consumer (``billing``, which Kafka lists) is not in ZooKeeper: the view says so,
    in every format, rather than show an empty table as the answer."""
    moment = Moment.load(DATA / profile / "data")
    assert [g["group_id"] for g in moment.kafka["describe"]["consumer_groups"]] == ["billing"]
    served(moment)
    for fmt in ("table", "json", "csv"):
        result = views.run(*WHERE, "kafka", "consumers", "-f", fmt)
        assert "__consumer_offsets" in result.stderr and "kafka-consumer-groups" in result.stderr, fmt
        assert "billing" not in result.stdout
