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
from tests.real import compare, storm_views, views
from tests.real.capture import DATA, MemorySource, Moment, captured
from tests.real.scenario import BROKER_PASSWORD, SCRAM_PASSWORDS, STEPS
from tests.real.storm_scenario import STEPS as STORM_STEPS
from zkstorm.model.cluster import Cluster
from zkstorm.sources.base import RawNode

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


# --- Storm ------------------------------------------------------------------------------------------------

STORM_PROFILE = "storm-2.8.3"
STORM_MOMENTS = captured(STORM_PROFILE)


def _storm_served(served: Any, moment: Moment) -> list[str]:
    """Serve a Storm moment's znodes under the root they were read from: the ``--zk``/``--storm-root``
    options that read them."""
    root = moment.chroot
    nodes = [RawNode(root + (n.path if n.path != "/" else ""), n.stat, n.data) for n in moment.znodes]
    served(Moment(moment.profile, moment.name, root, moment.as_of_ms, moment.zxid, nodes, moment.kafka))
    return [*WHERE, "--storm-root", root]


def test_every_storm_moment_is_kept() -> None:
    assert [p.name for p in STORM_MOMENTS] == list(STORM_STEPS), f"{DATA / STORM_PROFILE}: capture it again"


@pytest.mark.parametrize("folder", STORM_MOMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_storm_view_agrees_with_nimbus(served: Any, folder: Path) -> None:
    """Each moment a real Storm 2.8.3 cluster went through (``storm.json``: Nimbus's getClusterInfo,
    getLeader, getTopologyInfo, getTopologyPageInfo and getComponentPageInfo of that moment), every Storm
    view held to it fact by fact: among them the executor with no counter yet that Storm still counts
    (``rebalanced``) and the topology page's latencies added in whole milliseconds per executor."""
    moment = Moment.load(folder)
    where = _storm_served(served, moment)
    found = storm_views.facts(storm_views.read_views(where, storm_views.live_ids(moment.kafka)), moment.kafka)
    wrong = [str(f) for f in found if not f.equal]
    assert not wrong, f"{len(wrong)} disagreements with Storm:\n" + "\n".join(wrong[:60])
    assert len(found) >= (15 if folder.name == "removed" else 300)


def test_storm_keeps_counting_an_executor_with_no_counter_yet(served: Any) -> None:
    """After the rebalance one ``split`` executor's beat holds no counter (2.x's shuffle grouping prefers
    the spout's own worker, so no tuple reached it): Storm counts it, its executor and its two tasks, and
    so does ``storm components`` (it used to drop it: 2 executors and 2 tasks where Storm said 3 and 4)."""
    moment = Moment.load(DATA / STORM_PROFILE / "rebalanced")
    (tid,) = storm_views.live_ids(moment.kafka)
    empty = [e for e in moment.kafka["topologies"][tid]["info"]["executors"] if not e["stats"].get("emitted")]
    assert [e["component_id"] for e in empty] == ["split"], "the capture lost its empty executor"
    where = _storm_served(served, moment)
    rows = storm_views.read_views(where, [tid])[f"components {tid} 10m"].rows
    (split,) = [r for r in rows if r["component"] == "split"]
    assert (split["executors"], split["tasks"]) == (3, 4)


def test_a_last_error_whose_e_node_went_with_its_worker_is_still_one_of_storms_errors(served: Any) -> None:
    """In 2.x an error's e-node is ephemeral: it goes with the worker that reported it (a stopped
    supervisor's workers go), and getTopologyInfo lists it no more, while the component's ``-last-error``
    and so the topology page's last error still hold it. zkstorm lists it once, from ``-last-error``, and
    the comparison counts it as Storm's. Made from the stored ``started`` moment by what a worker's end does
    to it: the e-node that ``-last-error`` repeats removed, and its entry in Nimbus's list (the stored
    capture is not changed)."""
    import copy

    moment = Moment.load(DATA / STORM_PROFILE / "started")
    (tid,) = storm_views.live_ids(moment.kafka)
    truth = copy.deepcopy(moment.kafka)
    page = next(iter(truth["topologies"][tid]["pages"].values()))
    components = {**page["id_to_spout_agg_stats"], **page["id_to_bolt_agg_stats"]}
    component, last = next((name, s["last_error"]) for name, s in components.items() if s.get("last_error"))
    listed = truth["topologies"][tid]["info"]["errors"][component]
    truth["topologies"][tid]["info"]["errors"][component] = [e for e in listed if e != last]
    assert len(truth["topologies"][tid]["info"]["errors"][component]) == len(listed) - 1
    folder = f"/errors/{tid}/{component}"
    (repeated,) = [n.data for n in moment.znodes if n.path == f"{folder}-last-error"]
    gone = [n for n in moment.znodes if n.path.startswith(f"{folder}/") and n.data == repeated]
    assert len(gone) == 1
    nodes = [n for n in moment.znodes if n is not gone[0]]
    where = _storm_served(
        served, Moment(moment.profile, moment.name, moment.chroot, moment.as_of_ms, moment.zxid, nodes, truth)
    )
    shown = storm_views.read_views(where, [tid])
    assert len(shown[f"errors {tid}"].rows) == len(listed)  # every error once, the last from -last-error
    found = [f for f in storm_views.facts(shown, truth) if f.view == "errors"]
    wrong = [str(f) for f in found if not f.equal]
    assert found and not wrong, "\n".join(wrong)
