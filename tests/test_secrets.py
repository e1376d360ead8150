"""No secret in any output: ``-vv`` of every command, Kafka configs by any name, raw bytes of a znode whose
decoder redacted something, the snapshot's Parquet.

The secrets are seeded as their writers store them (Kafka's ``ConfigEntityZNode`` JSON, SCRAM's
``salt=…,stored_key=…`` form, Storm's Thrift ``Credentials`` and ``PrivateWorkerKey`` in gzip) into a chroot
of the real server, and read through a digest-authenticated session whose password is a secret too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click
import pyarrow.dataset as ds
import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from tests.conftest import Chroot, load_cluster
from tests.test_cli import ENV, run
from zkstorm.cli import cli
from zkstorm.sandbox.encode import kafka_json, storm_gzip
from zkstorm.sandbox.server import ZkServer

USER, PASSWORD = "ops", "digest-Pw-7Qx4"
SALT, STORED_KEY, SERVER_KEY = "c2FsdFNFQ1JFVDEx", "c3RvcmVkS2V5U0VDUkVU", "c2VydmVyS2V5U0VDUkVU"
BROKER_PASSWORD, ENCODER_SECRET = "broker-KeystorePw-81", "encoder-Secret-22"
JAAS_PASSWORD = "jaas-Pw-5501"
TOKEN_HMAC = "aG1hYy1TRUNSRVQtOTk="
STORM_CREDENTIAL = "storm-Cred-Ticket-31"
WORKER_KEY = b"worker-Key-Bytes-77"
SECRETS = [
    PASSWORD,
    SALT,
    STORED_KEY,
    SERVER_KEY,
    BROKER_PASSWORD,
    ENCODER_SECRET,
    JAAS_PASSWORD,
    TOKEN_HMAC,
    STORM_CREDENTIAL,
    WORKER_KEY.decode(),
    "kraft-capture-key-password",  # a broker's password config, in the clear in the KRaft captures' logs
]
# real KRaft metadata folders (tests/data/real): changes --from-kraft and kafka migration --kraft read them
KRAFT_4X = str(Path(__file__).parent / "data" / "real" / "kraft-4.x")
MIGRATED_KRAFT = str(Path(__file__).parent / "data" / "real" / "kraft-migration-3.9" / "kraft")
TOPOLOGY = "fraud-scorer-3-1751880000"  # of the storm2 fixture
JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" password="{JAAS_PASSWORD}";'
SECRET_PATHS = {
    "/locked": b"digest-protected, and readable with the credentials",
    "/config/users/alice": kafka_json(
        {
            "version": 1,
            "config": {"SCRAM-SHA-256": f"salt={SALT},stored_key={STORED_KEY},server_key={SERVER_KEY},iterations=4096"},
        }
    ),
    "/config/brokers/0": kafka_json(
        {
            "version": 1,
            "config": {
                "listener.name.internal.ssl.keystore.password": BROKER_PASSWORD,
                "password.encoder.secret": ENCODER_SECRET,
            },
        }
    ),
    "/config/topics/orders": kafka_json({"version": 1, "config": {"sasl.jaas.config": JAAS, "retention.ms": "-1"}}),
    "/delegation_token/tokens/DT1": kafka_json(
        {
            "owner": "User:alice",
            "tokenRequester": "User:alice",
            "renewers": [],
            "issueTimestamp": 1751880000000,
            "maxTimestamp": 1752484800000,
            "expiryTimestamp": 1751966400000,
            "tokenId": "DT1",
            "hmac": TOKEN_HMAC,  # not what Kafka writes there; what a careless tool might
        }
    ),
    f"/storm/credentials/{TOPOLOGY}": storm_gzip(
        "Credentials", {"creds": {"kerberos.ticket": STORM_CREDENTIAL}, "topoOwner": "etl"}
    ),
    f"/storm/secretkeys/NIMBUS/{TOPOLOGY}/0": storm_gzip(
        "PrivateWorkerKey", {"key": WORKER_KEY, "userName": "etl", "expirationTimeMillis": 1790000000000}
    ),
}


def seed_secrets(writer: KazooClient, chroot: Chroot) -> None:
    """The storm2 and Kafka 0.8 fixture clusters, with a secret in every place one is kept."""
    load_cluster(writer, chroot.path, "storm", "storm2")
    load_cluster(writer, chroot.path, "kafka", "cluster-08-root")
    for path, data in SECRET_PATHS.items():
        full = chroot.path + path
        acl = [make_digest_acl(USER, PASSWORD, read=True)] if path == "/locked" else None
        if writer.exists(full):
            writer.set(full, data)
        else:
            writer.create(full, data, acl=acl, makepath=True)


def leaks(output: str) -> list[str]:
    """The secrets ``output`` shows: as text, as hex, or in a hexdump's lines."""
    dumped = bytes.fromhex(
        "".join(m.group(1).replace(" ", "") for m in re.finditer(r"^[0-9a-f]{8}  ((?:[0-9a-f]{2} ?)+)", output, re.M))
    )
    found = []
    for secret in SECRETS:
        raw = secret.encode()
        if secret in output or raw.hex() in output or raw in dumped:
            found.append(secret)
    return found


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= _commands(command, (*prefix, name))
        else:
            found.add((*prefix, name))
    return found


# How each command is run under -vv, in this order (diff and history read the snapshot taken before them).
# A command that is not here nor exempt fails the test: a new command must be added.
SNAPSHOTS = "{snapshots}"
DATADIR, SINCE = "{datadir}", "{since}"  # the server's own files, from the zxid before the seeding
GET_PATHS = [*SECRET_PATHS, "/storm/storms/" + TOPOLOGY]
RUNS: dict[tuple[str, ...], list[list[str]]] = {
    ("tree",): [["tree", "/"], ["tree", "/", "-f", "jsonl"], ["tree", "/", "-f", "csv"]],
    ("get",): [
        *(["get", path, "--raw"] for path in GET_PATHS),
        *(["get", path, "--raw", "--json"] for path in GET_PATHS),
        ["get", "/config/topics/orders", "-f", "csv"],
        ["get", "/config/users/alice", "-f", "jsonl"],
    ],
    ("errors",): [["errors", TOPOLOGY, "--full"], ["errors", "no-such-topology"]],
    ("storm", "topologies"): [["storm", "topologies"]],
    ("storm", "supervisors"): [["storm", "supervisors"]],
    ("storm", "workers"): [["storm", "workers"], ["storm", "workers", "--stats", "-f", "jsonl"]],
    ("storm", "assignment"): [["storm", "assignment", TOPOLOGY]],
    ("storm", "components"): [["storm", "components", TOPOLOGY]],
    ("storm", "nimbus"): [["storm", "nimbus"]],
    ("storm", "roots"): [["storm", "roots"]],
    ("kafka", "brokers"): [["kafka", "brokers"]],
    ("kafka", "topics"): [["kafka", "topics"]],
    ("kafka", "partitions"): [["kafka", "partitions"]],
    ("kafka", "controller"): [["kafka", "controller"]],
    ("kafka", "configs"): [["kafka", "configs"], ["kafka", "configs", "-f", "json"], ["kafka", "configs", "-f", "csv"]],
    ("kafka", "acls"): [["kafka", "acls"]],
    ("kafka", "reassignments"): [["kafka", "reassignments"]],
    ("kafka", "consumers"): [["kafka", "consumers", "-f", "json"]],
    ("kafka", "health"): [["kafka", "health", "--detail"], ["kafka", "health", "-f", "prometheus"]],
    ("kafka", "roots"): [["kafka", "roots"]],
    ("kafka", "migration"): [["kafka", "migration", "--kraft", MIGRATED_KRAFT, "--every", "-f", "json"]],
    ("zk", "members"): [["zk", "members"], ["zk", "members", "-f", "prometheus"]],
    ("zk", "health"): [["zk", "health"], ["zk", "health", "-f", "json"]],
    ("zk", "usage"): [["zk", "usage", "/"], ["zk", "usage", "/", "-f", "jsonl", "--limit", "0"]],
    ("snapshot",): [["snapshot", SNAPSHOTS, "--snapshot-id", "s1"]],
    ("diff",): [["diff", SNAPSHOTS, "s1", "--live"]],
    ("history",): [["history", SNAPSHOTS, "--master", "local[1]"]],
    ("changes",): [
        ["--from-files", DATADIR, "changes", "--since", SINCE, "--detail"],
        ["--from-files", DATADIR, "changes", "--since", SINCE, "-f", "jsonl"],
        ["--from-files", DATADIR, "changes", "--since", SINCE, "-f", "csv"],
        ["--from-kraft", KRAFT_4X, "changes", "--detail"],
        ["--from-kraft", KRAFT_4X, "changes", "-f", "jsonl"],
    ],
}
EXEMPT = {
    ("sandbox", "start"): "starts and seeds a server of its own; reads no ensemble",
    ("sandbox", "status"): "reports on that server",
    ("sandbox", "stop"): "stops it",
}


# The commands that start Spark (in the child process): a test of their own, marked spark, so that
# make check runs every other command's.
SPARK_COMMANDS = [("history",)]


def _verbose(
    zk_server: ZkServer, writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> tuple[Callable[[tuple[str, ...], list[str]], None], dict[str, str]]:
    """Seed the secrets; a runner of one command with ``-vv`` (a child process) that checks its output,
    and the environment it runs in."""
    since = hex(zk_server.last_zxid() + 1)
    seed_secrets(writer, zk_root)
    env = {
        **os.environ,
        **ENV,
        "COLUMNS": "200",
        "ZKSTORM_ZK": zk_root.zk,
        "ZKSTORM_AUTH": "digest",
        "ZKSTORM_USER": USER,
        "ZKSTORM_PASSWORD": PASSWORD,
    }
    snapshots = str(tmp_path / "snapshots")

    def verbose(command: tuple[str, ...], args: list[str]) -> None:
        places = {SNAPSHOTS: snapshots, DATADIR: str(zk_server.base / "data"), SINCE: since}
        argv = [places.get(a, a) for a in args]
        result = subprocess.run(
            [sys.executable, "-m", "zkstorm.cli", "-vv", *argv], capture_output=True, text=True, env=env, timeout=600
        )
        output = result.stdout + result.stderr
        expected_code = 4 if argv[1:2] == ["no-such-topology"] else 0
        assert result.returncode == expected_code, (argv, output[-3000:])
        if command not in (("history",), ("changes",)):  # the ones that talk to ZooKeeper: kazoo's log is read
            assert "Sending request" in output and "Received response" in output, argv
            assert "(path='/" in output and "<_Said>" not in output, argv  # told by type and path
        assert leaks(output) == [], (argv, [line for line in output.splitlines() if leaks(line)][:5])

    return verbose, env


def test_vv_output_of_every_command_holds_no_secret(
    zk_server: ZkServer, writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    """Every command with ``-vv`` (kazoo's DEBUG log of every request and reply, zkstorm's own DEBUG lines,
    tracebacks) through a digest-authenticated session, and ``changes`` over the server's own logs of the
    seeding: no secret in stdout or stderr, as text, hex or hexdump. (``SPARK_COMMANDS``: the next test.)"""
    assert _commands(cli) == set(RUNS) | set(EXEMPT)  # a new command needs its run here
    verbose, env = _verbose(zk_server, writer, zk_root, tmp_path)
    # the reads side by side (they wait on ZooKeeper and on imports); then the snapshot and its readers
    ordered = [("snapshot",), ("diff",)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = [
            pool.submit(verbose, c, args)
            for c, variants in RUNS.items()
            if c not in ordered and c not in SPARK_COMMANDS
            for args in variants
        ]
        for run_ in runs:
            run_.result()
    for command in ordered:
        for args in RUNS[command]:
            verbose(command, args)
    # the digest credentials were used: the ACL'd node reads
    locked = subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", "get", "/locked", "--json"], capture_output=True, text=True, env=env
    )
    assert json.loads(locked.stdout)["value"].startswith("digest-protected")


@pytest.mark.spark  # Spark runs in the child process, out of the spark fixture's reach
def test_vv_output_of_the_commands_that_start_spark_holds_no_secret(
    zk_server: ZkServer, writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    """``SPARK_COMMANDS`` with ``-vv``, as in the test before, over a snapshot of the seeded secrets."""
    verbose, _ = _verbose(zk_server, writer, zk_root, tmp_path)
    for command in [("snapshot",), *SPARK_COMMANDS]:
        for args in RUNS[command]:
            verbose(command, args)


# --- Kafka configs: redacted whatever the key is called ------------------------------------------------

SECRET_KEYS = [
    "basic.auth.user.info",  # Schema Registry's user:password
    "ftp.pass",
    "passwd",
    "s3.access",
    "webhook.secret",
    "sasl.oauthbearer.client.secret",
    "connector.api.key",
    "apiKey",
    "clientSecret",
    "vault.token",
    "refresh_token_file",
    "gcs.credentials.json",
    "listener.name.sasl_ssl.plain.sasl.jaas.config",
    "ssl.keystore.key",
    "ssl.truststore.certificates",
    "remote.admin.password",
    "delegation.token.master.key",
]
PLAIN_KEYS = {
    "retention.ms": "-1",
    "min.insync.replicas": "2",
    "cleanup.policy": "compact",
    "delegation.token.max.lifetime.ms": "604800000",
    "password.encoder.iterations": "4096",
    "ssl.client.auth": "required",
}


def _secret_for(key: str) -> str:
    return "v4lue-of-" + re.sub(r"\W", "-", key)


def test_config_secrets_are_redacted_by_any_name(writer: KazooClient, zk_root: Chroot, tmp_path: Path) -> None:
    """``kafka configs`` (table, JSON, CSV), ``get`` and the snapshot's ``kafka_configs`` table hide every
    secret-named key's value of a topic config, and show the ordinary ones."""
    config = {**{key: _secret_for(key) for key in SECRET_KEYS}, **PLAIN_KEYS}
    writer.create(f"{zk_root.path}/config/topics/payments", kafka_json({"version": 1, "config": config}), makepath=True)
    writer.create(f"{zk_root.path}/brokers/ids", makepath=True)  # a Kafka cluster, if one with no broker up
    zk = ("--zk", zk_root.zk)
    rows = json.loads(run(*zk, "kafka", "configs", "-f", "json").stdout)
    shown = {r["key"]: r["value"] for r in rows}
    assert {key for key in SECRET_KEYS if shown[key] != "<redacted>"} == set()
    assert {key: shown[key] for key in PLAIN_KEYS} == PLAIN_KEYS
    for args in (("kafka", "configs"), ("kafka", "configs", "-f", "csv"), ("get", "/config/topics/payments")):
        out = run(*zk, *args, env={"COLUMNS": "300"}).stdout
        assert [key for key in SECRET_KEYS if _secret_for(key) in out] == [], args
    assert run(*zk, "snapshot", str(tmp_path / "snaps")).exit_code == 0
    table = ds.dataset(tmp_path / "snaps" / "kafka_configs", format="parquet", partitioning="hive").to_table()
    stored = dict(zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True))
    assert [key for key in SECRET_KEYS if stored[key] != "<redacted>"] == []
    assert {key: stored[key] for key in PLAIN_KEYS} == PLAIN_KEYS
    revealed = json.loads(run(*zk, "--show-secrets", "kafka", "configs", "-f", "json").stdout)
    assert {r["key"]: r["value"] for r in revealed} == config


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_raw_bytes_are_hidden_where_a_decoder_redacted(writer: KazooClient, zk_root: Chroot, fmt: str) -> None:
    """``get --raw`` of a topic config whose ``sasl.jaas.config`` the decoded rows redact: the hexdump,
    ``raw_hex`` and value do not show the password either; ``--show-secrets`` shows the bytes."""
    data = SECRET_PATHS["/config/topics/orders"]
    writer.create(f"{zk_root.path}/config/topics/orders", data, makepath=True)
    hidden = run("--zk", zk_root.zk, "get", "/config/topics/orders", "--raw", "-f", fmt)
    assert hidden.exit_code == 0, hidden.output
    assert leaks(hidden.stdout) == [] and "retention.ms" in hidden.stdout and "show-secrets" in hidden.stdout
    shown = run("--zk", zk_root.zk, "--show-secrets", "get", "/config/topics/orders", "--raw", "-f", "json")
    assert json.loads(shown.stdout)["raw_hex"] == data.hex()


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_raw_bytes_are_hidden_where_a_config_cannot_be_decoded(writer: KazooClient, zk_root: Chroot, fmt: str) -> None:
    """A topic config that does not decode (a value of the wrong JSON type beside a JAAS password) was
    redacted by nothing: ``get --raw`` shows neither its hexdump nor its plain value."""
    config = {"sasl.jaas.config": f'x required password="{JAAS_PASSWORD}";', "retention.ms": ["not", "a", "string"]}
    writer.create(f"{zk_root.path}/config/topics/broken", kafka_json({"version": 1, "config": config}), makepath=True)
    hidden = run("--zk", zk_root.zk, "get", "/config/topics/broken", "--raw", "-f", fmt)
    assert hidden.exit_code == 0, hidden.output
    assert leaks(hidden.stdout) == [] and "show-secrets" in hidden.stdout


def test_exception_text_hides_quoted_values() -> None:
    """A decoder's bug on a secret (the reason of a ``decoder_error`` and the "internal error" line) names
    the exception and the shape of its message, not the value it quotes."""
    from zkstorm.redact import exception_text

    try:
        int(JAAS_PASSWORD)
    except ValueError as exc:
        text = exception_text(exc)
    assert JAAS_PASSWORD not in text and text.startswith("ValueError: invalid literal for int()")
    assert exception_text(KeyError(STORM_CREDENTIAL)) == f"KeyError: <{len(STORM_CREDENTIAL)} chars>"


def test_kazoo_log_records_carry_no_payload() -> None:
    """The records kazoo logs for requests and replies, made by kazoo's own request types, through the
    filter the live session puts on kazoo's logger."""
    import logging

    from kazoo.protocol.serialization import Auth, GetData

    from zkstorm.redact import PayloadFilter, kazoo_logger

    logger = kazoo_logger()
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Keep()
    handler.addFilter(PayloadFilter())  # as the CLI's handler has it: records pass the filter twice
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("Sending request(xid=%s): %s", None, Auth(0, "digest", f"{USER}:{PASSWORD}"))
        logger.debug("Received response(xid=%s): %r", 7, (JAAS.encode(), None))
        logger.debug("Sending request(xid=%s): %s", 8, GetData("/config/topics/orders", None))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert all(leaks(line) == [] for line in seen), seen
    assert "scheme='digest'" in seen[0] and f"<{len(JAAS.encode())} bytes>" in seen[1]
    assert "path='/config/topics/orders'" in seen[2]
