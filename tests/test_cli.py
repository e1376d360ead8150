"""The command line against fixture clusters loaded into the real server."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from tests.conftest import Chroot, HugeReplyServer, load_cluster
from tests.fixtures import SERVER_NODES, manifest
from zkstorm.cli import cli
from zkstorm.errors import ExitCode

GOLDEN = Path(__file__).parent / "golden"
ENV = {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner()
    return runner.invoke(cli, list(args), env={**ENV, **(env or {})}, catch_exceptions=False)


@pytest.fixture
def kafka08(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    return zk_root


@pytest.fixture
def storm2(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    return zk_root


@pytest.mark.parametrize(
    ("system", "name", "path"),
    [("kafka", "cluster-08-root", "/"), ("storm", "storm2", "/storm"), ("storm", "encodings", "/")],
)
def test_tree_matches_golden_text(writer: KazooClient, zk_root: Chroot, system: str, name: str, path: str) -> None:
    load_cluster(writer, zk_root.path, system, name)
    result = run("--zk", zk_root.zk, "tree", path)
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"tree-{system}-{name}.txt"
    if os.environ.get("ZKSTORM_UPDATE_GOLDEN"):
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()


def test_tree_jsonl_lists_every_znode_with_its_stat(kafka08: Chroot) -> None:
    result = run("--zk", kafka08.zk, "tree", "/", "-f", "jsonl")
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["kind"] for r in rows} == {"znode"}
    paths = {r["path"] for r in rows}
    assert paths == {"/"} | {n.path for n in manifest("kafka", "cluster-08-root")} - set(SERVER_NODES)
    broker = next(r for r in rows if r["path"] == "/brokers/ids/0")
    assert broker["ephemeral"] is True and broker["encoding"] == "json" and broker["data_length"] > 0
    assert {"czxid", "mzxid", "pzxid", "ctime_ms", "mtime_ms", "version", "cversion", "num_children"} <= set(broker)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_tree_json_and_csv_agree_with_jsonl(kafka08: Chroot, fmt: str) -> None:
    lines = run("--zk", kafka08.zk, "tree", "/brokers", "-f", "jsonl").stdout.splitlines()
    expected = {json.loads(line)["path"]: json.loads(line) for line in lines}
    out = run("--zk", kafka08.zk, "tree", "/brokers", "-f", fmt).stdout
    if fmt == "json":
        rows = {r["path"]: r for r in json.loads(out)}
        assert rows == expected
    else:
        rows = {r["path"]: r for r in csv.DictReader(io.StringIO(out))}
        assert set(rows) == set(expected)
        for path, row in rows.items():
            assert int(row["data_length"]) == expected[path]["data_length"]
            assert row["ephemeral"] == ("true" if expected[path]["ephemeral"] else "false")


def test_json_shorthand(kafka08: Chroot) -> None:
    assert json.loads(run("--zk", kafka08.zk, "tree", "/brokers", "--json").stdout) == json.loads(
        run("--zk", kafka08.zk, "tree", "/brokers", "-f", "json").stdout
    )


def test_missing_path_prints_nothing_on_stdout(kafka08: Chroot) -> None:
    for fmt in ("json", "jsonl", "csv", "tree"):
        result = run("--zk", kafka08.zk, "tree", "/cluster", "-f", fmt)
        assert result.exit_code == ExitCode.NOT_FOUND and result.stdout == "", fmt


def test_tree_depth(kafka08: Chroot) -> None:
    rows = [
        json.loads(x) for x in run("--zk", kafka08.zk, "tree", "/", "--depth", "1", "-f", "jsonl").stdout.splitlines()
    ]
    assert all(r["path"].count("/") <= 1 for r in rows)
    assert any(r["num_children"] > 0 and r["path"] != "/" for r in rows)


def test_unreadable_znode_warns_exits_0_and_5_with_strict(writer: KazooClient, zk_root: Chroot) -> None:
    writer.create(zk_root.path + "/locked", b"x", acl=[make_digest_acl("o", "p", all=True)])
    writer.create(zk_root.path + "/open", b"y")
    result = run("--zk", zk_root.zk, "tree", "/", "-f", "jsonl")
    assert result.exit_code == 0
    rows = [json.loads(x) for x in result.stdout.splitlines()]
    assert {"kind": "unreadable", "path": "/locked", "reason": "NoAuth", "detail": ""} in rows
    assert "/locked: unreadable (NoAuth)" in result.stderr
    assert run("--zk", zk_root.zk, "--strict", "tree", "/").exit_code == ExitCode.DECODE_FAILURES
    tree = run("--zk", zk_root.zk, "tree", "/").stdout
    assert "locked  unreadable: NoAuth" in tree


def test_get_shows_stat_encoding_and_value(kafka08: Chroot) -> None:
    result = run("--zk", kafka08.zk, "get", "/brokers/ids/0", "-f", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["znode"]["path"] == "/brokers/ids/0" and doc["znode"]["ephemeral"] is True
    (broker,) = doc["records"]
    assert broker["kind"] == "kafka_broker" and broker["version"] == 1 and broker["broker_id"] == 0
    assert doc["value"] is None and doc["raw_hex"] is None
    table = run("--zk", kafka08.zk, "get", "/controller_epoch", "--raw").stdout
    assert "encoding" in table and "00000000  " in table


def test_get_raw_hexdump_matches_the_bytes(storm2: Chroot) -> None:
    path = "/storm/blobstoremaxkeysequencenumber"
    child = sorted(n.path for n in manifest("storm", "storm2") if n.path.startswith(path + "/"))[0]
    data = next(n.data for n in manifest("storm", "storm2") if n.path == child)
    doc = json.loads(run("--zk", storm2.zk, "get", child, "--raw", "--json").stdout)
    assert doc["raw_hex"] == data.hex() and doc["znode"]["encoding"] == "binary"


def test_get_hides_secret_subtrees_unless_asked(storm2: Chroot) -> None:
    path = next(n.path for n in manifest("storm", "storm2") if n.path.startswith("/storm/credentials/") and n.data)
    data = next(n.data for n in manifest("storm", "storm2") if n.path == path)
    hidden = run("--zk", storm2.zk, "get", path, "--raw", "--json")
    assert data.hex() not in hidden.stdout and "show-secrets" in hidden.stdout
    shown = run("--zk", storm2.zk, "--show-secrets", "get", path, "--raw", "--json")
    assert json.loads(shown.stdout)["raw_hex"] == data.hex()


def test_secrets_are_hidden_whatever_the_kafka_root(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    users = [n for n in manifest("kafka", "cluster-2x-chroot") if "/config/users/" in n.path and n.data]
    assert users
    for node in users:
        for args in (("get", node.path), ("get", node.path, "--json", "--raw")):
            out = run("--zk", zk_root.zk, *args).stdout  # default --kafka-root is "/", not /kafka-prod
            assert "salt=" not in out and node.data.hex() not in out, node.path  # type: ignore[union-attr]
            assert "show-secrets" in out


def test_get_missing_znode_exits_4(zk_root: Chroot) -> None:
    result = run("--zk", zk_root.zk, "get", "/nope")
    assert result.exit_code == ExitCode.NOT_FOUND
    assert result.stderr.strip() == "zkstorm: no znode at /nope"


def test_chroot_in_zk_string(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "kafka", "cluster-2x-chroot")
    rows = [
        json.loads(x) for x in run("--zk", zk_root.zk + "/kafka-prod", "tree", "/", "-f", "jsonl").stdout.splitlines()
    ]
    assert {"/brokers/ids", "/controller", "/config/brokers/<default>"} <= {r["path"] for r in rows}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _zkstorm(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ENV}
    return subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_unreachable_ensemble_exits_3_with_one_line_and_no_traceback() -> None:
    started = time.monotonic()
    result = _zkstorm("--zk", f"127.0.0.1:{_closed_port()}", "--timeout", "1", "tree", "/")
    assert result.returncode == ExitCode.ZOOKEEPER
    assert time.monotonic() - started < 15
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("zkstorm: cannot connect")
    assert result.stdout == ""


@pytest.mark.parametrize("bad", ["host:notaport", "a,,b", "h:1//x"])
def test_bad_zk_value_exits_3(bad: str) -> None:
    result = _zkstorm("--zk", bad, "tree")
    assert result.returncode == ExitCode.ZOOKEEPER
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_refused_auth_exits_3(zk_root: Chroot) -> None:
    env = {**os.environ, **ENV, "ZKSTORM_AUTH": "sasl-digest", "ZKSTORM_USER": "zkstorm", "ZKSTORM_PASSWORD": "no"}
    result = subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", "--zk", zk_root.zk, "--timeout", "5", "tree"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == ExitCode.ZOOKEEPER
    assert "refused the credentials" in result.stderr and "Traceback" not in result.stderr


def test_bad_flag_is_a_usage_error() -> None:
    result = _zkstorm("tree", "--depth", "-3")
    assert result.returncode == ExitCode.USAGE and "Traceback" not in result.stderr
    assert _zkstorm("tree", "-f", "yaml").returncode == ExitCode.USAGE
    assert _zkstorm("no-such-command").returncode == ExitCode.USAGE


def test_relative_path_is_a_usage_error(zk_root: Chroot) -> None:
    result = run("--zk", zk_root.zk, "tree", "brokers")
    assert result.exit_code == ExitCode.USAGE and "start with '/'" in result.stderr


def test_help_lists_exit_codes() -> None:
    out = _zkstorm("--help").stdout
    assert "Exit codes" in out and "tree" in out and "sandbox" in out


READ_COMMANDS = [
    ("tree", "/"),
    ("tree", "/", "-f", "jsonl"),
    ("tree", "/", "-f", "csv"),
    ("tree", "/storm", "-f", "json", "--depth", "2"),
    ("get", "/storm/storms"),
    ("get", "/storm/supervisors", "--raw", "--json"),
    ("--show-secrets", "get", "/storm", "--raw"),
    ("zk", "members"),
    ("zk", "health"),
    ("zk", "usage", "/", "--limit", "0", "-f", "json"),
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_read_only_proof_zxid_unchanged(zk_server, storm2: Chroot, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    before = zk_server.last_zxid()
    result = run("--zk", storm2.zk, *args)
    assert result.exit_code == 0, result.output
    assert zk_server.last_zxid() == before


def test_get_takes_jsonl_and_csv(writer: KazooClient, zk_root: Chroot) -> None:
    """`get -f jsonl`: the znode, then each decoded record; `-f csv`: one row per decoded record with the
    stat columns first; a znode no decoder claims gives one row with its value."""
    from zkstorm.sandbox.encode import kafka_json

    assignment = {"version": 1, "partitions": {"0": [3, 1], "1": [1, 2]}}
    writer.create(f"{zk_root.path}/brokers/topics/ledger", kafka_json(assignment), makepath=True)
    writer.create(f"{zk_root.path}/notes", b'{"owner": "ops", "ticket": 42}')
    lines = run("--zk", zk_root.zk, "get", "/brokers/topics/ledger", "-f", "jsonl").stdout.splitlines()
    objects = [json.loads(line) for line in lines]
    assert objects[0]["kind"] == "znode" and objects[0]["path"] == "/brokers/topics/ledger"
    replicas = {o["partition"]: o["replicas"] for o in objects if o["kind"] == "kafka_replica_assignment"}
    assert replicas == {0: [3, 1], 1: [1, 2]}
    assert any(o["kind"] == "kafka_topic" and o["partition_count"] == 2 for o in objects)

    rows = list(
        csv.DictReader(io.StringIO(run("--zk", zk_root.zk, "get", "/brokers/topics/ledger", "-f", "csv").stdout))
    )
    by_kind: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_kind.setdefault(row["record_kind"], []).append(row)
    assert {r["partition"]: r["replicas"] for r in by_kind["kafka_replica_assignment"]} == {"0": "3 1", "1": "1 2"}
    assert all(r["path"] == "/brokers/topics/ledger" and r["data_length"] for r in rows)
    assert by_kind["kafka_topic"][0]["topic"] == "ledger"

    (plain,) = csv.DictReader(io.StringIO(run("--zk", zk_root.zk, "get", "/notes", "-f", "csv").stdout))
    assert json.loads(plain["value"]) == {"owner": "ops", "ticket": 42} and plain["path"] == "/notes"


def test_an_empty_nested_list_keeps_its_parent(writer: KazooClient, zk_root: Chroot) -> None:
    """A record whose nested list is empty still gives its parent's row: a topology's credentials with
    no credential keep the owner; a config with no key left, an ACL znode with no ACL and a log config
    with no logger keep their entity."""
    from zkstorm.sandbox.encode import kafka_json, storm_gzip

    storm = f"{zk_root.path}/storm"
    creds = storm_gzip("Credentials", {"creds": {}, "topoOwner": "etl"})
    writer.create(f"{storm}/credentials/audit-2-1790000000", creds, makepath=True)
    levels = storm_gzip("LogConfig", {"named_logger_level": {}})
    writer.create(f"{storm}/logconfigs/audit-2-1790000000", levels, makepath=True)
    writer.create(f"{zk_root.path}/config/topics/ledger", kafka_json({"version": 1, "config": {}}), makepath=True)
    writer.create(f"{zk_root.path}/kafka-acl/Topic/ledger", kafka_json({"version": 1, "acls": []}), makepath=True)
    writer.ensure_path(f"{zk_root.path}/brokers/ids")  # a Kafka cluster's root holds it (else the views exit 4)

    def records(path: str) -> list[dict[str, Any]]:
        result = run("--zk", zk_root.zk, "get", path, "-f", "jsonl")
        assert result.exit_code == 0, result.output
        return [r for r in map(json.loads, result.stdout.splitlines()) if r["kind"] != "znode"]

    (cred,) = records("/storm/credentials/audit-2-1790000000")
    assert (cred["kind"], cred["topology_id"], cred["owner"], cred["key"]) == (
        "storm_credential",
        "audit-2-1790000000",
        "etl",
        None,
    )
    (level,) = records("/storm/logconfigs/audit-2-1790000000")
    assert (level["topology_id"], level["logger"]) == ("audit-2-1790000000", None)
    (config,) = records("/config/topics/ledger")
    assert (config["entity_type"], config["entity_name"], config["key"]) == ("topics", "ledger", None)
    (acl,) = records("/kafka-acl/Topic/ledger")
    assert (acl["resource_type"], acl["resource_name"], acl["principal"]) == ("Topic", "ledger", None)
    configs = json.loads(run("--zk", zk_root.zk, "kafka", "configs", "-f", "json").stdout)
    assert [(c["entity_name"], c["key"]) for c in configs] == [("ledger", None)]


def test_a_reader_that_goes_away_is_not_a_failure() -> None:
    """``zkstorm … | head``: the reader closes the pipe after its first lines; zkstorm stops quietly with
    exit 0 (click alone would exit 1), so a script under ``set -o pipefail`` does not fail on it."""
    from tests.fixtures import folder

    files = folder("zkfiles", "zk395-plain")
    child = subprocess.Popen(
        [sys.executable, "-m", "zkstorm.cli", "--from-files", str(files), "tree", "/", "-f", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.read(100).startswith(b'{"kind":"znode"')  # the output is far larger than a pipe holds
    child.stdout.close()
    errors = child.stderr.read()
    assert child.wait(timeout=60) == 0
    assert errors == b""


# --- a hostile world: roots that are not there, servers that lie, names that do not resolve -------------

KAFKA_VIEWS = [
    ("kafka", "brokers"),
    ("kafka", "topics"),
    ("kafka", "topics", "--topic", "t"),
    ("kafka", "partitions"),
    ("kafka", "controller"),
    ("kafka", "configs"),
    ("kafka", "acls"),
    ("kafka", "reassignments"),
    ("kafka", "consumers"),
    ("kafka", "health"),
    ("kafka", "health", "-f", "prometheus"),
    ("kafka", "partitions", "-f", "prometheus"),
    ("kafka", "brokers", "-f", "prometheus"),
]
STORM_VIEWS = [
    ("storm", "topologies"),
    ("storm", "supervisors"),
    ("storm", "workers"),
    ("storm", "workers", "t"),
    ("storm", "assignment", "t"),
    ("storm", "components", "t"),
    ("storm", "nimbus"),
    ("errors", "t"),
    ("storm", "topologies", "-f", "prometheus"),
    ("storm", "supervisors", "-f", "prometheus"),
    ("storm", "workers", "-f", "prometheus"),
    ("storm", "components", "t", "-f", "prometheus"),
]


@pytest.mark.parametrize("view", KAFKA_VIEWS + STORM_VIEWS, ids=" ".join)
def test_a_view_of_a_root_that_is_not_there_exits_4_in_one_line(zk_root: Chroot, view: tuple[str, ...]) -> None:
    """A mistyped root is not an empty, healthy cluster: one line, exit 4, nothing on stdout (a Prometheus
    scrape of it writes nothing, so a textfile collector keeps the last good file and its timestamp)."""
    system = "kafka" if view[0] == "kafka" else "storm"
    result = run("--zk", zk_root.zk, f"--{system}-root", "/nonexist", *view)
    assert result.exit_code == ExitCode.NOT_FOUND, result.output
    assert result.stdout == ""
    name = "Kafka" if system == "kafka" else "Storm"
    assert (
        result.stderr == f"zkstorm: no {name} cluster at /nonexist: no such znode (zkstorm {system} roots lists them)\n"
    )
    # a root that exists but holds nothing of the system: the chroot itself
    result = run("--zk", zk_root.zk, f"--{system}-root", "/", *view)
    assert result.exit_code == ExitCode.NOT_FOUND and result.stdout == ""
    holds = "it holds neither brokers/ids nor brokers/topics" if system == "kafka" else "it has no storms znode"
    assert f"no {name} cluster at /: {holds}" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("fmt", ["table", "json", "prometheus"])
def test_health_check_of_a_missing_root_is_unhealthy(zk_root: Chroot, fmt: str) -> None:
    result = run("--zk", zk_root.zk, "--kafka-root", "/nonexist", "kafka", "health", "--check", "-f", fmt)
    assert result.exit_code == ExitCode.UNHEALTHY
    assert result.stdout == "" and result.stderr.startswith("zkstorm: no Kafka cluster at /nonexist")


def test_a_missing_chroot_in_zk_is_one_line_without_kazoos_warning(zk_root: Chroot) -> None:
    for args, code in (
        (("kafka", "health"), ExitCode.NOT_FOUND),
        (("tree", "/"), ExitCode.NOT_FOUND),
        (("kafka", "health", "--check"), ExitCode.UNHEALTHY),
    ):
        result = _zkstorm("--zk", zk_root.zk + "/nonexist", *args)
        assert result.returncode == code, args
        assert result.stderr == (
            f"zkstorm: no znode {zk_root.path}/nonexist on {zk_root.server.connect_string}: "
            "the chroot in --zk does not exist\n"
        )
        assert result.stdout == ""


def test_a_kafka_cluster_with_no_broker_registered_is_unhealthy(writer: KazooClient, zk_root: Chroot) -> None:
    writer.ensure_path(f"{zk_root.path}/brokers/ids")
    result = run("--zk", zk_root.zk, "kafka", "health", "--check", "-f", "json")
    assert result.exit_code == ExitCode.UNHEALTHY
    (finding,) = json.loads(result.stdout)
    assert (finding["finding"], finding["level"]) == ("no_broker_registered", "error")
    assert finding["detail"].startswith("no broker is registered under /brokers/ids")
    assert "no_broker_registered" in run("--zk", zk_root.zk, "kafka", "health").stdout


# Runs a command under an address-space limit and writes its exit code and peak RSS (KiB, ``wait4``) to a
# file. Started as a small interpreter of its own, so that the command is forked from it: Linux keeps a
# process's largest RSS across fork and exec, and a command forked from a pytest worker that has run
# Spark reports the worker's size, not its own.
_LIMITED = """
import os, resource, subprocess, sys
memory, report, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
child = subprocess.Popen(command, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory)))
_, status, usage = os.wait4(child.pid, 0)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def _limited_run(
    args: list[str], tmp_path: Path, *, memory: int, env: dict[str, str] | None = None
) -> tuple[int, str, str, int]:
    """The CLI in a child process whose address space is limited to ``memory`` bytes: its exit code,
    stdout, stderr and peak RSS in bytes (``wait4``, this child's alone: ``_LIMITED``)."""
    out, err, report = tmp_path / "out", tmp_path / "err", tmp_path / "report"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        subprocess.run(
            [sys.executable, "-c", _LIMITED, str(memory), str(report), sys.executable, "-m", "zkstorm.cli", *args],
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, **ENV, **(env or {})},
            check=True,
        )
    code, peak_kib = map(int, report.read_text().split())
    return code, out.read_text(), err.read_text(), peak_kib * 1024


def test_a_reply_claiming_gigabytes_is_refused_in_one_line_with_bounded_memory(
    huge_reply_server: HugeReplyServer, tmp_path: Path
) -> None:
    server = f"127.0.0.1:{huge_reply_server.port}"
    code, out, err, peak = _limited_run(["--zk", server, "--timeout", "5", "tree", "/"], tmp_path, memory=1 << 30)
    assert code == ExitCode.ZOOKEEPER
    assert err == (
        f"zkstorm: ZooKeeper at {server} sent a reply of 1,500,000,000 bytes, more than the 256 MiB zkstorm reads "
        "(ZKSTORM_MAX_REPLY_BYTES): refused\n"
    )
    assert out == "" and peak < 256 << 20


def test_running_out_of_memory_is_one_line(huge_reply_server: HugeReplyServer, tmp_path: Path) -> None:
    """Past a raised bound, the allocation fails under the memory limit: one line, not a traceback."""
    args = ["--zk", f"127.0.0.1:{huge_reply_server.port}", "--timeout", "5", "tree", "/"]
    code, out, err, _ = _limited_run(args, tmp_path, memory=1 << 30, env={"ZKSTORM_MAX_REPLY_BYTES": "2G"})
    assert code == ExitCode.ERROR
    assert err == f"zkstorm: out of memory reading a reply of 1,500,000,000 bytes from ZooKeeper at {args[1]}\n"
    assert out == ""


def test_the_reply_bound_is_configurable(writer: KazooClient, zk_root: Chroot) -> None:
    writer.create(f"{zk_root.path}/big", b"y" * 100_000)
    result = run("--zk", zk_root.zk, "get", "/big", env={"ZKSTORM_MAX_REPLY_BYTES": "64K"})
    assert result.exit_code == ExitCode.ZOOKEEPER
    assert result.stderr.startswith(f"zkstorm: ZooKeeper at {zk_root.server.connect_string} sent a reply of 100,")
    assert "more than the 65,536 bytes zkstorm reads" in result.stderr and result.stderr.count("\n") == 1
    assert run("--zk", zk_root.zk, "get", "/big", env={"ZKSTORM_MAX_REPLY_BYTES": "1M"}).exit_code == 0
    bad = run("--zk", zk_root.zk, "get", "/big", env={"ZKSTORM_MAX_REPLY_BYTES": "lots"})
    assert bad.exit_code == ExitCode.USAGE and "ZKSTORM_MAX_REPLY_BYTES='lots'" in bad.stderr


def test_the_timeout_bounds_host_lookups() -> None:
    """100 names under .invalid (RFC 2606) with --timeout 2: this machine's resolver answers most at once
    and now and then takes 5 s; whichever it does, the command ends within the timeout (and the time a
    process takes to start), naming the hosts it could not resolve."""
    zk = ",".join(f"zk{i}.invalid:2181" for i in range(100))
    started = time.monotonic()
    result = _zkstorm("--zk", zk, "--timeout", "2", "tree", "/")
    assert time.monotonic() - started < 2 + 3
    assert result.returncode == ExitCode.ZOOKEEPER and result.stdout == ""
    assert result.stderr.startswith(
        "zkstorm: cannot connect to ZooKeeper at zk0.invalid:2181,zk1.invalid:2181,zk2.invalid:2181,… (100 hosts): "
        "cannot resolve hosts zk"
    )
    assert result.stderr.count("\n") == 1


def test_a_refused_connection_says_so_at_once() -> None:
    port = _closed_port()
    started = time.monotonic()
    result = _zkstorm("--zk", f"127.0.0.1:{port}", "--timeout", "20", "tree", "/")
    assert time.monotonic() - started < 10
    assert result.returncode == ExitCode.ZOOKEEPER
    assert (
        result.stderr
        == f"zkstorm: cannot connect to ZooKeeper at 127.0.0.1:{port}: connection refused by 127.0.0.1:{port}\n"
    )
