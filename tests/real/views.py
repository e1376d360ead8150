"""zkstorm's Kafka views of one moment, as its CLI prints them (click's runner, in this process): each
view as JSON for the comparison, and every view in every human and machine format for the secrets check.

``facts(views, kafka)`` is every fact of a moment (``compare.py``); ``secret_strings`` the secrets the
moment's znodes hold (the SCRAM salts and keys, the broker's encrypted password) beside the plaintexts
the scenario wrote, none of which may appear in any output."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from click.testing import CliRunner

from zkstorm.cli import cli

from . import compare
from .compare import Fact

ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "ZKSTORM_DECODE_HELPER": "0"}

VIEWS: dict[str, tuple[str, ...]] = {
    "brokers": ("kafka", "brokers"),
    "controller": ("kafka", "controller"),
    "topics": ("kafka", "topics"),
    "partitions": ("kafka", "partitions"),
    "partitions --offline": ("kafka", "partitions", "--offline"),
    "partitions --under-replicated": ("kafka", "partitions", "--under-replicated"),
    "partitions --under-min-isr": ("kafka", "partitions", "--under-min-isr"),
    "configs": ("kafka", "configs"),
    "acls": ("kafka", "acls"),
    "reassignments": ("kafka", "reassignments"),
    "consumers": ("kafka", "consumers"),
    "health": ("kafka", "health"),
}


@dataclass
class Shown:
    rows: list[dict[str, Any]]
    stderr: str
    table: str = ""  # the same view as a table, for the notes a table carries


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env=ENV, catch_exceptions=False)


def read_views(where: list[str], tree: str = "/") -> dict[str, Shown]:
    """Every view as JSON (``where``: ``--zk …`` or ``--from-files DIR --kafka-root …``; ``tree``: the path
    the tree is read under, the Kafka root)."""
    shown = {}
    for name, args in VIEWS.items():
        result = run(*where, *args, "-f", "json")
        if result.exit_code != 0:
            raise AssertionError(f"zkstorm {' '.join(args)} exited {result.exit_code}: {result.stderr}")
        rows = json.loads(result.stdout) if result.stdout.strip() else []
        shown[name] = Shown(rows if isinstance(rows, list) else [rows], result.stderr)
    consumers = run(*where, *VIEWS["consumers"], "-f", "table")
    shown["consumers"].table = consumers.stdout + consumers.stderr
    # one topic at a time (it reads that topic's znode alone), the tree, the Prometheus counts
    topics = [run(*where, "kafka", "topics", "--topic", t["topic"], "-f", "json") for t in shown["topics"].rows]
    shown["topics --topic"] = Shown(
        [row for r in topics for row in json.loads(r.stdout)], "".join(r.stderr for r in topics)
    )
    listed = run(*where, "tree", tree, "-f", "json")
    shown["tree"] = Shown(json.loads(listed.stdout), listed.stderr)
    for name in ("health", "brokers"):
        text = run(*where, "kafka", name, "-f", "prometheus")
        shown[f"{name} -f prometheus"] = Shown([], text.stderr, table=text.stdout)
    return shown


def facts(views: dict[str, Shown], kafka: dict[str, Any], znodes: Iterable[Any]) -> list[Fact]:
    """Every fact of one moment: ``views`` as zkstorm showed them, ``kafka`` as Kafka answered, ``znodes``
    as the test's own client read them (only to know which topics Kafka is deleting)."""
    gone = compare.deleting(kafka, znodes)
    deleted_rows = [r for r in views["partitions"].rows if r["topic"] in gone]
    out: list[Fact] = []
    out += compare.brokers(views["brokers"].rows, kafka)
    out += compare.controller(views["controller"].rows, kafka)
    out += compare.topics(views["topics"].rows, kafka, gone)
    out += compare.topics(views["topics --topic"].rows, kafka, gone, "topics --topic")
    out += compare.tree(views["tree"].rows)
    for name in ("health -f prometheus", "brokers -f prometheus"):
        out += compare.prometheus(name, views[name].table, kafka, gone, deleted_rows)
    out += compare.partitions(views["partitions"].rows, kafka, gone)
    for name, verdict in (
        ("partitions --offline", "unavailable"),
        ("partitions --under-replicated", "under_replicated"),
        ("partitions --under-min-isr", "under_min_isr"),
    ):
        out += compare.partition_filter(name, views[name].rows, kafka, verdict)
    out += compare.configs(views["configs"].rows, kafka, gone)
    out += compare.acls(views["acls"].rows, kafka)
    out += compare.reassignments(views["reassignments"].rows, kafka)
    out += compare.health(views["health"].rows, kafka, gone)
    consumers = views["consumers"]
    out += compare.consumers(consumers.rows, consumers.stderr + consumers.table, kafka)
    for name, shown in views.items():
        out += compare.notes(name, shown.stderr)
    return out


def disagreements(found: Iterable[Fact]) -> list[str]:
    return [str(f) for f in found if not f.equal]


# --- secrets ----------------------------------------------------------------------------------------------

SECRET_PATHS = ("/config/brokers/1", "/config/users/alice", "/config/users/bob")


def every_output(where: list[str]) -> list[tuple[str, str]]:
    """Every Kafka view in table, JSON and CSV, and ``get`` (``--raw`` too) and ``tree`` of the secret
    znodes: (what ran, stdout and stderr)."""
    outputs = []
    commands = [args for args in VIEWS.values()]
    commands += [("get", path, *raw) for path in SECRET_PATHS for raw in ((), ("--raw",))]
    commands += [("tree", "/config")]
    for args in commands:
        for fmt in ("table", "json", "csv") if args[0] == "kafka" else ("table", "json"):
            result = run(*where, *args, "-f", fmt)
            outputs.append((" ".join((*args, "-f", fmt)), result.stdout + result.stderr))
    return outputs


_SCRAM_PART = re.compile(r"(?:salt|stored_key|server_key)=([^,]+)")


def secret_strings(znodes: Iterable[Any], plaintexts: Iterable[str]) -> list[str]:
    """The plaintext secrets the scenario set, and the secret forms Kafka stored for them: each SCRAM
    salt, stored and server key (``/config/users``), each encrypted broker password (``/config/brokers``,
    ``…encryptedPassword:…``) whole and its encrypted part."""
    found = list(plaintexts)
    for node in znodes:
        if not node.data or not node.path.startswith(("/config/users/", "/config/brokers/")):
            continue
        config = json.loads(node.data).get("config", {})
        for value in config.values():
            found += _SCRAM_PART.findall(value)
            if "encryptedPassword" in value:
                found.append(value)
                found += [part.split(":", 1)[1] for part in value.split(",") if part.startswith("encryptedPassword:")]
    return sorted(set(found))
