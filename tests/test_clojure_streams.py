"""Storm 0.9's Java-serialized Clojure data, from streams a real Clojure wrote (tests/data/clojure,
made by scripts/clojure_streams.clj): every collection class read by its field names, and a 0.9
topology's assignment, supervisor and worker heartbeat through the views, with figures worked by hand
from the values the script wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot
from tests.test_cli import run
from zkstorm.decode import java
from zkstorm.errors import DecodeError

STREAMS = Path(__file__).parent / "data" / "clojure"
TOPOLOGY = "wordcount-1-1400000000"


def stream(name: str) -> bytes:
    return (STREAMS / f"{name}.bin").read_bytes()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("array-map", {":a": 1, "b": 2, 3: "c"}),
        ("hash-map", {i: f"v{i}" for i in range(20)}),
        ("hash-map-with-nil-key", {None: "nothing", ":k": "v"}),
        ("vector-large", list(range(100))),
        ("vector-deep", list(range(1100))),
        ("list", [1, "two", ":three"]),
        ("empty-list", []),
        ("hash-set", [6700, 6701, 6702]),
        ("sorted-set", [1, 2, 3]),
        ("sorted-map", {"a": 1, "b": 2, "c": 3}),
        ("lazy-seq", [2, 3, 4]),
        ("cons", [0, 1, 2]),
        ("array-seq", ["x", "y", "z"]),
        ("key-seq", [6700, 6701]),
        ("key-seq-without-iterable", [6703]),
        ("val-seq", ["one", "two"]),
        ("map-seq", [[":a", 1], [":b", 2]]),
        ("chunked-seq", list(range(40))),
        ("long-range", [6700, 6701, 6702, 6703]),
        ("queue", [1, 2, 3]),
        ("map-entry", [":k", "v"]),
        ("java-hash-map", {"x": 1}),
        ("java-array-list", [1, "two"]),
        ("java-hash-set", ["a", "b"]),
        ("with-meta", [1, 2]),
    ],
)
def test_each_clojure_collection_reads_as_plain_data(name: str, value: Any) -> None:
    assert java.loads(stream(name)) == value


def test_the_keys_of_a_hash_map_are_all_there() -> None:
    assert sorted(java.loads(stream("key-seq-of-hash-map"))) == list(range(6700, 6712))
    assert sorted(java.loads(stream("hash-map-seq"))) == [[i, 100 + i] for i in range(12)]


def test_an_unrealized_lazy_seq_is_a_decode_error_not_an_empty_list() -> None:
    with pytest.raises(DecodeError, match="unrealized lazy seq"):
        java.loads(stream("unrealized-lazy-seq"))


def test_a_record_keeps_its_fields_by_name_and_its_extra_keys_aside() -> None:
    assignment = java.loads(stream("assignment"))
    assert assignment["_record"] == "backtype.storm.daemon.common.Assignment"
    assert assignment["master-code-dir"] == "/var/storm/nimbus/stormdist/wordcount-1-1400000000"
    assert assignment["executor->node+port"] == {
        (1, 1): ["sup-a", 6700],
        (2, 3): ["sup-a", 6700],
        (4, 4): ["sup-b", 6701],
    }
    assert assignment["_extmap"] == {":scheduler-note": "packed by hand"}
    assert not any(k.startswith("-") for k in assignment)  # __hash, __hasheq, __meta are not fields


@pytest.fixture
def storm09(writer: KazooClient, zk_root: Chroot) -> list[str]:
    root = f"{zk_root.path}/storm09"
    for path, name in [
        (f"storms/{TOPOLOGY}", "stormbase"),
        (f"assignments/{TOPOLOGY}", "assignment"),
        ("supervisors/sup-a", "supervisor"),
        (f"workerbeats/{TOPOLOGY}/sup-a-6700", "workerbeat"),
    ]:
        writer.create(f"{root}/{path}", stream(name), makepath=True)
    return ["--zk", zk_root.zk, "--storm-root", "/storm09"]


def view(zk: list[str], *args: str) -> Any:
    result = run(*zk, *args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_09_assignment_and_supervisor_through_the_views(storm09: list[str]) -> None:
    executors = view(storm09, "storm", "assignment", TOPOLOGY)
    assert [(e["start_task"], e["end_task"], e["node"], e["port"]) for e in executors] == [
        (1, 1, "sup-a", 6700),
        (2, 3, "sup-a", 6700),
        (4, 4, "sup-b", 6701),
    ]
    assert {e["master_code_dir"] for e in executors} == {"/var/storm/nimbus/stormdist/wordcount-1-1400000000"}
    (supervisor,) = view(storm09, "storm", "supervisors")
    assert supervisor["used_ports"] == [6700, 6701]  # a KeySeq of the port → LocalAssignment map
    assert supervisor["ports"] == [6700, 6701, 6702, 6703]
    detail = view(storm09, "get", "/storm09/supervisors/sup-a")
    assert detail["znode"]["decode_status"] == "decoded"
    assert detail["records"][0]["used_ports"] == [6700, 6701]


# 0.9's stats maps as the script wrote them, worked by hand: window scale s is 1, 10, 50, 100 for 600,
# 10800, 86400 and :all-time; sentences emits 100·s on default (and on __ack_init, a system stream),
# acks 90·s, fails 3·s, complete latency 10 + s; split's executor [2 3] executed 60·s with execute
# latency 1.5 and process latency 3.0, emitted 120·s; split's executor [4 4] has no heartbeat.
@pytest.mark.parametrize(("flag", "scale"), [("10m", 1), ("3h", 10), ("1d", 50), ("all", 100)])
def test_components_from_09_heartbeats(storm09: list[str], flag: str, scale: int) -> None:
    rows = {
        r["component"]: r
        for r in view(storm09, "storm", "components", TOPOLOGY, "--window", flag, "--stale-after", "10000w")
    }
    assert set(rows) == {"sentences", "split"}
    sentences, split = rows["sentences"], rows["split"]
    assert (sentences["component_type"], sentences["executors"], sentences["tasks"]) == ("spout", 1, 1)
    assert (sentences["emitted"], sentences["transferred"]) == (100 * scale, 100 * scale)
    assert (sentences["acked"], sentences["failed"]) == (90 * scale, 3 * scale)
    assert sentences["complete_latency_ms"] == pytest.approx(10.0 + scale)
    assert sentences["stale_executors"] == 0
    assert (split["component_type"], split["executors"], split["tasks"]) == ("bolt", 1, 2)
    assert (split["emitted"], split["acked"], split["failed"], split["executed"]) == (
        120 * scale,
        60 * scale,
        0,
        60 * scale,
    )
    assert split["execute_latency_ms"] == pytest.approx(1.5)
    assert split["process_latency_ms"] == pytest.approx(3.0)
    # capacity reads the 10-minute window whatever --window says: 60 × 1.5 ms over 600 s (uptime 700 s)
    assert split["capacity"] == pytest.approx(60 * 1.5 / (600 * 1000))
    assert split["stale_executors"] == 1  # [4 4] on sup-b:6701 has no heartbeat


def test_09_worker_stats_keep_their_windows(storm09: list[str]) -> None:
    stats = view(storm09, "storm", "workers", TOPOLOGY, "--stats")
    windows = {s["window"] for s in stats}
    assert windows == {"600", "10800", "86400", ":all-time"}
    acked = {
        (s["source_component"], s["stream"], s["window"]): s["value"]
        for s in stats
        if s["metric"] == "acked" and s["start_task"] == 2
    }
    assert acked[("sentences", "default", ":all-time")] == 6000


def _java_payloads() -> list[tuple[str, bytes]]:
    """Every Java-serialized stream the suite has: the Clojure-written ones and the fixture clusters'."""
    from tests import fixtures

    out = [(p.stem, p.read_bytes()) for p in sorted(STREAMS.glob("*.bin"))]
    for system, name in fixtures.all_clusters():
        out += [(n.path, n.data) for n in fixtures.manifest(system, name) if n.data and n.data[:2] == b"\xac\xed"]
    return out


def _stock(data: bytes) -> Any:
    """What javaobj-py3's own ``loads`` (its own stream reader) gives, converted as zkstorm converts."""
    import javaobj.v2 as javaobj

    return java.convert(javaobj.loads(data))


def _outcome(read: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "value", read(data)
    except Exception:
        return "failed", None


def test_the_fast_reader_gives_what_javaobjs_own_reader_gives() -> None:
    """zkstorm parses with javaobj's parser reading through a faster stream reader: on every stream the
    suite holds, whole and cut short at many points, both give the same value or both fail."""
    payloads = _java_payloads()
    assert len(payloads) >= 36
    compared = 0
    for name, data in payloads:
        for cut in sorted({len(data), *range(0, len(data), max(1, len(data) // 13))}):
            ours, stock = _outcome(java.loads, data[:cut]), _outcome(_stock, data[:cut])
            assert ours == stock, f"{name} cut at {cut}"
            compared += ours[0] == "value"
    assert compared >= len(payloads)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x03abc",
        b"\x00\x02\xc3\xa9",
        b"\x00\x02\xc0\x80",
        b"\x00\x06\xed\xa0\xbd\xed\xb8\x80",
        b"\x00\x05ab",
        b"\x00\x03a\x00b",
    ],
    ids=["ascii", "two-byte", "modified-nul", "surrogate-pair", "short", "raw-nul"],
)
def test_the_fast_reader_decodes_strings_and_primitives_as_javaobj_does(data: bytes) -> None:
    import io

    from javaobj.v2.stream import DataStreamReader

    ours = _outcome(lambda raw: java._reader_class()(io.BytesIO(raw)).read_UTF(), data)
    assert ours == _outcome(lambda raw: DataStreamReader(io.BytesIO(raw)).read_UTF(), data)
    if b"a\x00b" in data:  # a NUL written raw (Modified UTF-8 writes C0 80) is damage to both readers
        assert ours[0] == "failed"
    whole = bytes(range(0xFF, 0xD0, -1)) + data  # signed and unsigned readings differ on these
    fast, stock = java._reader_class()(io.BytesIO(whole)), DataStreamReader(io.BytesIO(whole))
    for method in ("read_byte", "read_ubyte", "read_bool", "read_short", "read_ushort", "read_int", "read_long"):
        assert getattr(fast, method)() == getattr(stock, method)(), method
    fast, stock = java._reader_class()(io.BytesIO(b"\x01")), DataStreamReader(io.BytesIO(b"\x01"))
    for reader in (fast, stock):
        with pytest.raises(EOFError):
            reader.read_int()
