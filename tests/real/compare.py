"""zkstorm's Kafka views held against Kafka's own answer about the same moment, fact by fact.

Each function takes what a view printed (``-f json``, parsed) and what Kafka said (``kafka`` of a
``capture.Moment``: the AdminClient's ``describe`` and ``kafka-topics --describe``'s ``verdicts``) and
returns ``Fact``s: one subject (a broker, a topic, a partition, a config key, an ACL…), one field, the
value each side gives. A fact whose sides differ is a disagreement; ``facts()`` gives every fact of a
moment, and the README's table counts them per view.

What is compared, and against which API:

- ``kafka brokers``: describeCluster's nodes (which brokers are alive, each one's rack, the address the
  client reached it at among those registered) and describeConfigs of each broker (its advertised
  listeners in order, their protocols, and so the host and port of its first PLAINTEXT one).
- ``kafka controller``: describeCluster's controller.
- ``kafka topics`` (and ``--topic T``): ``kafka-topics --describe``'s topic lines (partition count,
  replication factor, topic id), listTopics (which topics Kafka serves, internal ones too),
  listPartitionReassignments (partitions moving).
- ``kafka partitions`` (and ``--offline``, ``--under-replicated``, ``--under-min-isr``): describeTopics
  (leader, replicas in order, ISR in order), listOffsets (the leader's epoch),
  listPartitionReassignments (adding and removing replicas), ``kafka-topics --describe
  --unavailable-partitions / --under-replicated-partitions / --under-min-isr-partitions /
  --at-min-isr-partitions`` (Kafka's verdicts), describeConfigs (the effective ``min.insync.replicas``
  and where it comes from), and the preferred leader (the first replica, as ``kafka-leader-election``
  takes it).
- ``kafka configs``: describeConfigs' dynamic entries (topic overrides, per-broker and cluster-default
  broker configs, sensitive ones as Kafka hides them), describeUserScramCredentials (mechanism and
  iterations), describeClientQuotas.
- ``kafka acls``: describeAcls.
- ``kafka reassignments``: listPartitionReassignments (target replicas).
- ``kafka health``: each finding's subjects against the verdicts above (offline, under-replicated,
  under and at min ISR, preferred-leader imbalance, reassignments, dead brokers in replica lists, the
  controller, topics being deleted); a finding of any other kind, and any decode note on stderr, is a
  disagreement (Kafka reads every znode it wrote).
- ``kafka health -f prometheus`` and ``kafka brokers -f prometheus``: every count, against the same
  count of Kafka's answer.
- ``kafka consumers``: listConsumerGroups: the groups of the Java consumer are not in ZooKeeper, and the
  view says so instead of an empty table.
- ``tree``: every znode Kafka wrote that zkstorm has a decoder for decodes.

A topic being deleted is the one place where ZooKeeper and Kafka's metadata part: the controller drops
the topic from every broker's metadata as its deletion starts, and removes its znodes only when every
replica is deleted (a replica on a dead broker stalls it). Kafka then serves no such topic; zkstorm lists
it marked ``pending_deletion`` (as ``kafka-topics --zookeeper`` listed it, "marked for deletion"), judges
its partitions on the state the controller left, and names it in ``topic_deletion_pending`` with what
blocks it. Those partitions are held to that (marked, and named), not to verdicts Kafka no longer gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_MISSING = "(absent)"


@dataclass(frozen=True)
class Fact:
    view: str
    subject: str
    field: str
    zkstorm: Any
    kafka: Any

    @property
    def equal(self) -> bool:
        return bool(self.zkstorm == self.kafka)

    def __str__(self) -> str:
        mark = "==" if self.equal else "!="
        return f"{self.view}: {self.subject} {self.field}: zkstorm {self.zkstorm!r} {mark} Kafka {self.kafka!r}"


def _tp(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def _live(kafka: dict[str, Any]) -> set[int]:
    return {b["id"] for b in kafka["describe"]["cluster"]["brokers"]}


def _moves(kafka: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(m["topic"], m["partition"]): m for m in kafka["describe"]["reassignments"]}


def _kafka_partitions(kafka: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(topic, p["partition"]): p for topic, t in kafka["describe"]["topics"].items() for p in t["partitions"]}


def _verdict(kafka: dict[str, Any], name: str) -> set[tuple[str, int]]:
    return {(t, p) for t, p in kafka["verdicts"][name]}


def deleting(kafka: dict[str, Any], znodes: Any) -> dict[str, dict[int, list[int]]]:
    """The topics being deleted, from Kafka's own writes: a topic znode Kafka still keeps in ZooKeeper
    (``brokers/topics/<t>``, as the test's own client read it) whose topic Kafka's metadata no longer
    serves (a deletion started: the controller drops its partitions from every broker's metadata at
    once, and deletes the znodes when every replica is gone, so a replica on a dead broker stalls it).
    Each with its replica lists as the znode holds them."""
    listed = kafka["describe"]["topics"]
    out: dict[str, dict[int, list[int]]] = {}
    for node in znodes:
        parts = node.path.split("/")
        if len(parts) == 4 and parts[1:3] == ["brokers", "topics"] and parts[3] not in listed and node.data:
            assignment = json.loads(node.data).get("partitions", {})
            out[parts[3]] = {int(p): replicas for p, replicas in assignment.items()}
    return out


# --- per view -----------------------------------------------------------------------------------------


def _endpoint(text: str) -> tuple[str, str, int]:
    """``NAME://host:port`` (an IPv6 host in brackets) as Kafka's ``EndPoint`` parses it."""
    name, _, address = text.partition("://")
    host, _, port = address.rpartition(":")
    return name, host.strip("[]"), int(port)


def brokers(rows: list[dict[str, Any]], kafka: dict[str, Any]) -> list[Fact]:
    by_id = {r["broker_id"]: r for r in rows}
    nodes = {b["id"]: b for b in kafka["describe"]["cluster"]["brokers"]}
    configured = kafka["describe"].get("broker_listeners", {})
    facts = []
    for broker in sorted(set(by_id) | set(nodes)):
        row = by_id.get(broker)
        subject = f"broker {broker}"
        facts.append(Fact("brokers", subject, "alive", bool(row and row["alive"]), broker in nodes))
        if broker not in nodes or row is None:
            continue
        node = nodes[broker]
        facts.append(Fact("brokers", subject, "rack", row["rack"], node["rack"]))
        # the address the client reached the broker at (its CLIENT listener) is one of those registered
        registered = {(host, port) for _, host, port in map(_endpoint, row["endpoints"])}
        facts.append(
            Fact("brokers", subject, "client address registered", (node["host"], node["port"]) in registered, True)
        )
        config = configured.get(str(broker))
        if not config:
            continue
        advertised = config["advertised.listeners"].split(",")
        protocols = dict(item.split(":", 1) for item in config["listener.security.protocol.map"].split(","))
        facts.append(Fact("brokers", subject, "endpoints", row["endpoints"], advertised))
        used = [_endpoint(e)[0] for e in advertised]
        facts.append(
            Fact(
                "brokers",
                subject,
                "listener_protocols",
                sorted(row["listener_protocols"]),
                sorted(f"{n}={protocols[n]}" for n in used),
            )
        )
        # BrokerIdZNode: host and port are those of the first endpoint whose protocol is PLAINTEXT
        plaintext = next((_endpoint(e) for e in advertised if protocols[_endpoint(e)[0]] == "PLAINTEXT"), None)
        if plaintext is not None:
            facts += [
                Fact("brokers", subject, "host", row["host"], plaintext[1]),
                Fact("brokers", subject, "port", row["port"], plaintext[2]),
            ]
    return facts


def controller(rows: list[dict[str, Any]], kafka: dict[str, Any]) -> list[Fact]:
    said = kafka["describe"]["cluster"]["controller"]
    return [Fact("controller", "cluster", "controller", rows[0]["broker_id"] if rows else None, said and said["id"])]


def topics(
    rows: list[dict[str, Any]], kafka: dict[str, Any], gone: dict[str, Any] | None = None, view: str = "topics"
) -> list[Fact]:
    by_name = {r["topic"]: r for r in rows}
    described = kafka["verdicts"]["topics"]
    listed = kafka["describe"]["topics"]
    moving: dict[str, int] = {}
    for topic, _ in _moves(kafka):
        moving[topic] = moving.get(topic, 0) + 1
    facts = []
    for topic in sorted(set(by_name) | set(listed) | set(described)):
        row = by_name.get(topic)
        subject = f"topic {topic}"
        being_deleted = bool(row and row.get("pending_deletion"))
        facts.append(
            Fact(
                view,
                subject,
                "served (listed, not being deleted)",
                row is not None and not being_deleted,
                topic in listed,
            )
        )
        if row is not None:
            facts.append(Fact(view, subject, "pending_deletion", being_deleted, topic in (gone or {})))
        if row is None or topic not in described:
            continue
        facts += [
            Fact(view, subject, "partition_count", row["partition_count"], described[topic]["partition_count"]),
            Fact(
                view, subject, "replication_factor", row["replication_factor"], described[topic]["replication_factor"]
            ),
            Fact(view, subject, "topic_id", row["topic_id"], listed[topic]["topic_id"]),
            Fact(view, subject, "reassigning_partitions", row["reassigning_partitions"], moving.get(topic, 0)),
        ]
    return facts


_SOURCES = {
    "DYNAMIC_TOPIC_CONFIG": "topic_override",
    "DYNAMIC_DEFAULT_BROKER_CONFIG": "dynamic_cluster_default",
    "DEFAULT_CONFIG": "assumed_kafka_default",  # server.properties does not set it: Kafka's default, 1
}


def partitions(rows: list[dict[str, Any]], kafka: dict[str, Any], gone: dict[str, Any] | None = None) -> list[Fact]:
    by_tp = {(r["topic"], r["partition"]): r for r in rows}
    said = _kafka_partitions(kafka)
    moves = _moves(kafka)
    verdicts = {
        name: _verdict(kafka, name) for name in ("unavailable", "under_replicated", "under_min_isr", "at_min_isr")
    }
    min_isr = kafka["describe"]["min_isr"]
    facts = []
    for key in sorted(set(by_tp) | set(said)):
        row, p = by_tp.get(key), said.get(key)
        subject = f"partition {_tp(*key)}"
        served = row is not None and not row["pending_deletion"]
        facts.append(Fact("partitions", subject, "served (listed, not being deleted)", served, p is not None))
        if row is not None:
            facts.append(
                Fact("partitions", subject, "pending_deletion", row["pending_deletion"], key[0] in (gone or {}))
            )
        if row is not None and key[0] in (gone or {}):
            facts.append(Fact("partitions", subject, "replicas", row["replicas"], (gone or {})[key[0]].get(key[1])))
        if row is None or p is None:
            continue
        move = moves.get(key, {"adding": [], "removing": []})
        leader = row["leader"] if row["leader"] is not None and row["leader"] >= 0 else None
        facts += [
            Fact("partitions", subject, "leader", leader, p["leader"]),
            Fact("partitions", subject, "replicas", row["replicas"], p["replicas"]),
            Fact("partitions", subject, "isr", row["isr"], p["isr"]),
            Fact("partitions", subject, "adding_replicas", row["adding_replicas"], move["adding"]),
            Fact("partitions", subject, "removing_replicas", row["removing_replicas"], move["removing"]),
            Fact("partitions", subject, "offline", row["offline"], key in verdicts["unavailable"]),
            Fact(
                "partitions", subject, "under_replicated", row["under_replicated"], key in verdicts["under_replicated"]
            ),
            Fact("partitions", subject, "under_min_isr", row["under_min_isr"], key in verdicts["under_min_isr"]),
            Fact("partitions", subject, "at_min_isr", row["at_min_isr"], key in verdicts["at_min_isr"]),
        ]
        if p.get("leader_epoch") is not None:
            facts.append(Fact("partitions", subject, "leader_epoch", row["leader_epoch"], p["leader_epoch"]))
        if p["leader"] is not None and p["replicas"]:
            facts.append(
                Fact(
                    "partitions", subject, "preferred_leader", row["preferred_leader"], p["leader"] == p["replicas"][0]
                )
            )
        effective = min_isr.get(key[0])
        if effective is not None:
            facts += [
                Fact("partitions", subject, "min_isr", row["min_isr"], int(effective["value"])),
                Fact(
                    "partitions",
                    subject,
                    "min_isr_source",
                    row["min_isr_source"],
                    _SOURCES.get(effective["source"], effective["source"]),
                ),
            ]
    return facts


def partition_filter(view: str, rows: list[dict[str, Any]], kafka: dict[str, Any], verdict: str) -> list[Fact]:
    """``kafka partitions --offline`` (``--under-replicated``, ``--under-min-isr``): the partitions it lists
    against the ones ``kafka-topics --describe`` lists with the matching filter."""
    listed = {(r["topic"], r["partition"]) for r in rows if not r["pending_deletion"]}  # Kafka serves none of those
    wanted = _verdict(kafka, verdict)
    return [
        Fact(view, f"partition {_tp(*key)}", "listed", key in listed, key in wanted) for key in sorted(listed | wanted)
    ] or [Fact(view, "cluster", "partitions listed", 0, 0)]


_REDACTED = "<redacted>"
_ITERATIONS = re.compile(r"iterations=(\d+)")


def configs(rows: list[dict[str, Any]], kafka: dict[str, Any], gone: dict[str, Any] | None = None) -> list[Fact]:
    live = {str(b) for b in _live(kafka)}
    said: dict[tuple[str, str], dict[str, Any]] = {}
    for entity_type, entities in kafka["describe"]["configs"].items():
        for name, entries in entities.items():
            said[(entity_type, name)] = entries
    shown: dict[tuple[str, str], dict[str | None, dict[str, Any]]] = {}
    for r in rows:
        shown.setdefault((r["entity_type"], r["entity_name"]), {})[r["key"]] = r
    facts = []
    # topics and brokers: describeConfigs' dynamic entries (a dead broker's own configs cannot be asked)
    for entity in sorted(k for k in set(said) | set(shown) if k[0] in ("topics", "brokers")):
        if entity[0] == "brokers" and entity[1] != "<default>" and entity[1] not in live:
            continue
        subject = f"{entity[0]} {entity[1]}"
        if entity[0] == "topics" and entity[1] in (gone or {}):
            # a topic being deleted keeps its config znode until the deletion ends; Kafka describes none
            facts.append(Fact("configs", subject, "kept while the topic is being deleted", entity in shown, True))
            continue
        mine = {k: v for k, v in shown.get(entity, {}).items() if k is not None}
        theirs = said.get(entity, {})
        for key in sorted(set(mine) | set(theirs)):
            row, entry = mine.get(key), theirs.get(key)
            facts.append(Fact("configs", subject, f"{key} set", row is not None, entry is not None))
            if row is None or entry is None:
                continue
            facts.append(Fact("configs", subject, f"{key} sensitive", row["sensitive"], entry["sensitive"]))
            kafka_value = _REDACTED if entry["sensitive"] else entry["value"]
            facts.append(Fact("configs", subject, f"{key} value", row["value"], kafka_value))
        if not mine and not theirs and entity in shown:
            facts.append(Fact("configs", subject, "dynamic configs", 0, 0))
    # users: SCRAM credentials (describeUserScramCredentials) and quotas (describeClientQuotas)
    scram = {
        (user, c["mechanism"]): c["iterations"] for user, creds in kafka["describe"]["scram"].items() for c in creds
    }
    mine_scram = {
        (name, key): row
        for (t, name), keys in shown.items()
        if t == "users"
        for key, row in keys.items()
        if key and key.startswith("SCRAM-")
    }
    for user, mechanism in sorted(set(scram) | set(mine_scram)):
        row = mine_scram.get((user, mechanism))
        subject = f"users {user}"
        facts.append(Fact("configs", subject, f"{mechanism} set", row is not None, (user, mechanism) in scram))
        if row is None or (user, mechanism) not in scram:
            continue
        found = _ITERATIONS.search(row["value"] or "")
        facts += [
            Fact(
                "configs",
                subject,
                f"{mechanism} iterations",
                int(found.group(1)) if found else None,
                scram[(user, mechanism)],
            ),
            Fact("configs", subject, f"{mechanism} sensitive", row["sensitive"], True),
            Fact("configs", subject, f"{mechanism} value redacted", (row["value"] or "").startswith(_REDACTED), True),
        ]
    quotas: dict[tuple[str, str], dict[str, float]] = {}
    for q in kafka["describe"]["quotas"]:
        entity = q["entity"]
        if set(entity) == {"user"}:
            place = ("users", entity["user"] or "<default>")
        elif set(entity) == {"client-id"}:
            place = ("clients", entity["client-id"] or "<default>")
        elif set(entity) == {"user", "client-id"}:
            place = ("users/clients", f"{entity['user'] or '<default>'}/clients/{entity['client-id'] or '<default>'}")
        else:
            place = ("ips", entity.get("ip") or "<default>")
        quotas[place] = q["quotas"]
    mine_quotas = {
        (t, name, key): row
        for (t, name), keys in shown.items()
        if t in ("users", "clients", "users/clients", "ips")
        for key, row in keys.items()
        if key and not key.startswith("SCRAM-")
    }
    theirs_quotas = {(t, name, key): value for (t, name), values in quotas.items() for key, value in values.items()}
    for place in sorted(set(mine_quotas) | set(theirs_quotas)):
        row, value = mine_quotas.get(place), theirs_quotas.get(place)
        subject = f"{place[0]} {place[1]}"
        facts.append(Fact("configs", subject, f"{place[2]} set", row is not None, value is not None))
        if row is not None and value is not None:
            facts.append(Fact("configs", subject, f"{place[2]} value", float(row["value"]), float(value)))
    return facts


# Kafka's enum names (AclOperation, ResourceType, AclPermissionType) from the names the znodes spell
def _enum(name: str | None) -> str | None:
    if name is None:
        return None
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()


def acls(rows: list[dict[str, Any]], kafka: dict[str, Any]) -> list[Fact]:
    def key(a: dict[str, Any]) -> tuple[Any, ...]:
        return (
            a["pattern_type"].upper(),
            _enum(a["resource_type"]),
            a["resource_name"],
            a["principal"],
            _enum(a["permission_type"]),
            _enum(a["operation"]),
            a["host"],
        )

    mine = {key(r) for r in rows if r["principal"] is not None}
    theirs = {key(a) for a in kafka["describe"]["acls"]}
    facts = [Fact("acls", " ".join(map(str, k)), "exists", k in mine, k in theirs) for k in sorted(mine | theirs)]
    return facts or [Fact("acls", "cluster", "ACLs", 0, 0)]


def reassignments(rows: list[dict[str, Any]], kafka: dict[str, Any]) -> list[Fact]:
    mine = {(r["topic"], r["partition"]): r for r in rows}
    theirs = _moves(kafka)
    facts = []
    for key in sorted(set(mine) | set(theirs)):
        row, move = mine.get(key), theirs.get(key)
        subject = f"partition {_tp(*key)}"
        facts.append(Fact("reassignments", subject, "moving", row is not None, move is not None))
        if row is not None and move is not None:
            target = [r for r in move["replicas"] if r not in move["removing"]]
            facts.append(Fact("reassignments", subject, "target_replicas", row["target_replicas"], target))
    return facts or [Fact("reassignments", "cluster", "partitions moving", 0, 0)]


# findings whose subjects Kafka's answer gives, and how
_PARTITION_FINDINGS = {
    "offline_partition": "unavailable",
    "under_replicated": "under_replicated",
    "under_min_isr": "under_min_isr",
}


def health(findings: list[dict[str, Any]], kafka: dict[str, Any], gone: dict[str, Any] | None = None) -> list[Fact]:
    """The findings' subjects against Kafka's verdicts. The partitions of a topic being deleted (``gone``)
    are not Kafka's any more: their findings (zkstorm judges them as the controller left their state,
    flagged "the topic is being deleted") are set aside, and ``topic_deletion_pending`` must name the topic,
    with the dead brokers that hold replicas of it."""
    gone = gone or {}
    said = _kafka_partitions(kafka)
    live = _live(kafka)
    by_kind: dict[str, set[Any]] = {}
    for f in findings:
        if f["partition"] is not None:
            if f["topic"] in gone:
                continue
            subject: Any = (f["topic"], f["partition"])
        else:
            subject = f["broker_id"] if f["broker_id"] is not None else f["topic"]
        by_kind.setdefault(f["finding"], set()).add(subject)
    expected: dict[str, set[Any]] = {kind: _verdict(kafka, name) for kind, name in _PARTITION_FINDINGS.items()}
    # zkstorm names a partition at min ISR only when it is not under it (one finding, the worse)
    expected["at_min_isr"] = _verdict(kafka, "at_min_isr") - _verdict(kafka, "under_min_isr")
    imbalanced = {
        k for k, p in said.items() if p["leader"] is not None and p["replicas"] and p["leader"] != p["replicas"][0]
    }
    expected["preferred_leader_imbalance"] = imbalanced
    expected["leader_imbalance"] = {said[k]["leader"] for k in imbalanced}
    expected["reassignment_in_flight"] = set(_moves(kafka))
    named = {b for p in said.values() for b in p["replicas"]} | {
        b for t in gone.values() for r in t.values() for b in r
    }
    expected["unregistered_broker"] = named - live
    expected["topic_deletion_pending"] = set(gone)
    expected["unregistered_replicas"] = {k for k, p in said.items() if set(p["replicas"]) - live}
    controller = kafka["describe"]["cluster"]["controller"]
    expected["missing_controller"] = set() if controller else {None}
    facts = []
    for kind in sorted(set(expected) | set(by_kind)):
        mine, theirs = by_kind.get(kind, set()), expected.get(kind, set())
        for subject in sorted(mine | theirs, key=str):
            where = (
                f"partition {_tp(*subject)}"
                if isinstance(subject, tuple)
                else f"topic {subject}"
                if isinstance(subject, str)
                else f"broker {subject}"
            )
            facts.append(Fact("health", where, kind, subject in mine, subject in theirs))
    return facts or [Fact("health", "cluster", "findings", 0, 0)]


def consumers(rows: list[dict[str, Any]], note: str, kafka: dict[str, Any]) -> list[Fact]:
    """The Java consumer's groups (listConsumerGroups) are in ``__consumer_offsets``: none is an old
    ZooKeeper group, and the view says where they are rather than showing an empty table as the answer."""
    groups = [g["group_id"] for g in kafka["describe"]["consumer_groups"]]
    old = {r["group"] for r in rows if r.get("group")}
    facts = [Fact("consumers", f"group {g}", "listed as a ZooKeeper group", g in old, False) for g in groups]
    facts.append(
        Fact(
            "consumers",
            "view",
            "says the Java consumer's groups are in __consumer_offsets",
            "__consumer_offsets" in note,
            True,
        )
    )
    return facts


def notes(view: str, stderr: str) -> list[Fact]:
    """A decode note or warning about a znode Kafka wrote and reads: a disagreement."""
    lines = [line for line in stderr.splitlines() if line.startswith("zkstorm: ") and "__consumer_offsets" not in line]
    return [Fact(view, "stderr", "notes", line, None) for line in lines]


def secrets(outputs: Iterable[tuple[str, str]], secrets: Iterable[str]) -> list[Fact]:
    """Every output (what, text) against every secret: none may appear, as text or as hex."""
    found = []
    secret_list = [s for s in secrets if s]
    for what, text in outputs:
        for secret in secret_list:
            leaked = secret in text or secret.encode().hex() in text
            found.append(Fact("secrets", what, f"{secret[:6]}… shown", leaked, False))
    return found


def tree(rows: list[dict[str, Any]]) -> list[Fact]:
    """``tree / -f json``: every znode Kafka wrote that zkstorm has a decoder for decodes (Kafka reads it)."""
    facts = []
    for r in rows:
        if r.get("kind") != "znode":
            facts.append(Fact("tree", r.get("path", "?"), r["kind"], r.get("failure_type") or r.get("warning"), None))
        elif r["decode_status"] != "not-decoded":
            facts.append(Fact("tree", r["path"], "decode_status", r["decode_status"], "decoded"))
    return facts


def prometheus(
    view: str, text: str, kafka: dict[str, Any], gone: dict[str, Any] | None = None, deleted_rows: Any = ()
) -> list[Fact]:
    """``-f prometheus``: each count zkstorm exports, against the same count of Kafka's answer. The
    partitions of topics being deleted (``deleted_rows``, as zkstorm's partitions view judges them) are
    taken out of zkstorm's totals first: Kafka serves none of them."""
    from prometheus_client.parser import text_string_to_metric_families

    values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "root"))
            values[(sample.name, labels)] = sample.value
    deleted = list(deleted_rows)
    for name, flag in (
        ("zkstorm_kafka_partitions", None),
        ("zkstorm_kafka_partitions_offline", "offline"),
        ("zkstorm_kafka_partitions_under_replicated", "under_replicated"),
        ("zkstorm_kafka_partitions_under_min_isr", "under_min_isr"),
        ("zkstorm_kafka_partitions_at_min_isr", "at_min_isr"),
    ):
        if (name, ()) in values:
            values[(name, ())] -= sum(1 for r in deleted if flag is None or r[flag])
    if ("zkstorm_kafka_partitions_not_preferred_leader", ()) in values:
        values[("zkstorm_kafka_partitions_not_preferred_leader", ())] -= sum(
            r["preferred_leader"] is False for r in deleted
        )
    for r in deleted:
        for broker in r["replicas"]:
            key = ("zkstorm_kafka_broker_replica_partitions", (("broker_id", str(broker)),))
            if key in values:
                values[key] -= 1
        key = ("zkstorm_kafka_broker_leader_partitions", (("broker_id", str(r["leader"])),))
        if key in values and r["leader"] is not None and r["leader"] >= 0:
            values[key] -= 1
    said = _kafka_partitions(kafka)
    live = _live(kafka)
    named = {b for p in said.values() for b in p["replicas"]} | {
        b for t in (gone or {}).values() for r in t.values() for b in r
    }
    verdicts = {
        name: _verdict(kafka, name) for name in ("unavailable", "under_replicated", "under_min_isr", "at_min_isr")
    }
    imbalanced = {
        k for k, p in said.items() if p["leader"] is not None and p["replicas"] and p["leader"] != p["replicas"][0]
    }
    expected: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {
        ("zkstorm_kafka_brokers", ()): len(live),
        ("zkstorm_kafka_brokers_unregistered", ()): len(named - live),
    }
    for broker in sorted(live | named):
        key = (("broker_id", str(broker)),)
        expected[("zkstorm_kafka_broker_registered", key)] = float(broker in live)
    if view.startswith("health"):
        expected.update(
            {
                ("zkstorm_kafka_partitions", ()): len(said),
                ("zkstorm_kafka_partitions_offline", ()): len(verdicts["unavailable"]),
                ("zkstorm_kafka_partitions_under_replicated", ()): len(verdicts["under_replicated"]),
                ("zkstorm_kafka_partitions_under_min_isr", ()): len(verdicts["under_min_isr"]),
                ("zkstorm_kafka_partitions_at_min_isr", ()): len(verdicts["at_min_isr"]),
                ("zkstorm_kafka_partitions_not_preferred_leader", ()): len(imbalanced),
            }
        )
        for topic in kafka["describe"]["topics"]:
            key = (("topic", topic),)
            of_topic = {k for k in said if k[0] == topic}
            expected[("zkstorm_kafka_topic_partitions", key)] = len(of_topic)
            expected[("zkstorm_kafka_topic_offline_partitions", key)] = len(of_topic & verdicts["unavailable"])
            expected[("zkstorm_kafka_topic_under_replicated_partitions", key)] = len(
                of_topic & verdicts["under_replicated"]
            )
            expected[("zkstorm_kafka_topic_under_min_isr_partitions", key)] = len(of_topic & verdicts["under_min_isr"])
        for broker in sorted(live | named):
            key = (("broker_id", str(broker)),)
            expected[("zkstorm_kafka_broker_leader_partitions", key)] = sum(
                p["leader"] == broker for p in said.values()
            )
            expected[("zkstorm_kafka_broker_replica_partitions", key)] = sum(
                broker in p["replicas"] for p in said.values()
            )
    return [
        Fact(view, name + "".join(f"{{{k}={v}}}" for k, v in labels), "value", values.get((name, labels)), float(value))
        for (name, labels), value in sorted(expected.items())
    ]
