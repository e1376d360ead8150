"""The KRaft metadata image: the records of a snapshot and the log after it, replayed as Kafka's
``MetadataDelta`` replays them (``metadata/src/main/java/org/apache/kafka/image/`` in apache/kafka), into
plain state; and that state as the znodes ZooKeeper-mode Kafka kept for the same things (``tree``).

Replay, record by record (what each does to the image is Kafka's own rule, cited per record below):
brokers registered, fenced and unfenced, in controlled shutdown, unregistered; topics created and removed
(with their partitions and configs); partitions created and changed (``PartitionRegistration.merge``: a
new leader bumps the leader epoch, every change the partition epoch); configs, client quotas, SCRAM
credentials (their iterations only: the salt and keys are dropped as they are read), ACLs, delegation
tokens, features and the metadata version, producer id blocks, controller registrations, the migration
state. Records inside a metadata transaction (``BeginTransactionRecord`` .. ``EndTransactionRecord``) are
held until it ends, and dropped when it aborts (KIP-868); one still open at the end is not applied.

Every entity keeps the offset and append time of the record that created it and of the last that changed
it: they become the znodes' ``czxid``/``ctime`` and ``mzxid``/``mtime``, so ages, "last changed" and the
broker epoch (a KRaft broker epoch *is* the offset of its registration, as a ZooKeeper one is the
registration's czxid) read as they do over ZooKeeper.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...decode.kafka import ACL_OPERATIONS, ACL_PERMISSIONS
from ..base import Stat

# Kafka's enums by code (apache/kafka clients/src/main/java/org/apache/kafka/common/…)
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}  # SecurityProtocol
# ResourceType, as its ZooKeeper path segment (SecurityUtils.resourceTypeName)
RESOURCE_TYPES = {
    0: "Unknown",
    1: "Any",
    2: "Topic",
    3: "Group",
    4: "Cluster",
    5: "TransactionalId",
    6: "DelegationToken",
    7: "User",
}
PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}  # PatternType
CONFIG_RESOURCES = {2: "topics", 4: "brokers", 8: "broker_loggers", 16: "client_metrics", 32: "groups"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}  # ScramMechanism
PRODUCER_ID_BLOCK = 1000  # ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.Leader's default


@dataclass(slots=True)
class Stamp:
    """Where an entity was created and last changed: log offsets and append times (epoch ms)."""

    created_offset: int
    created_ms: int
    changed_offset: int
    changed_ms: int
    changes: int = 0

    def touch(self, offset: int, time_ms: int) -> None:
        self.changed_offset, self.changed_ms = offset, time_ms
        self.changes += 1


@dataclass(slots=True)
class Broker:
    broker_id: int
    epoch: int
    incarnation_id: str
    endpoints: list[tuple[str, str, int, int]]  # name, host, port, security protocol
    features: list[tuple[str, int, int]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    stamp: Stamp


@dataclass(slots=True)
class Partition:
    replicas: list[int]
    isr: list[int]
    removing: list[int]
    adding: list[int]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    elr: list[int] | None  # None: the registration carries no ELR (a metadata version before KIP-966's)
    last_known_elr: list[int] | None
    raft_epoch: int  # the epoch of the controller whose record last changed it
    stamp: Stamp


@dataclass(slots=True)
class Topic:
    name: str
    topic_id: str
    stamp: Stamp
    partitions: dict[int, Partition] = field(default_factory=dict)


@dataclass(slots=True)
class Leader:
    """The raft leader: the active controller, its epoch, and when it was elected (its
    ``LeaderChangeMessage``), or what ``quorum-state`` says."""

    node_id: int
    epoch: int
    elected_ms: int | None
    offset: int | None


@dataclass
class Image:
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, Topic] = field(default_factory=dict)  # by topic id
    names: dict[str, str] = field(default_factory=dict)  # topic name -> id
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    config_stamps: dict[tuple[int, str], Stamp] = field(default_factory=dict)
    quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    quota_stamps: dict[tuple[tuple[str, str | None], ...], Stamp] = field(default_factory=dict)
    scram: dict[tuple[str, int], int] = field(default_factory=dict)  # (user, mechanism) -> iterations
    scram_stamps: dict[str, Stamp] = field(default_factory=dict)
    acls: dict[str, dict[str, Any]] = field(default_factory=dict)  # by ACL id
    acl_stamps: dict[str, Stamp] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    feature_stamp: Stamp | None = None
    producer_ids: tuple[int, int, int] | None = None  # broker, broker epoch, next producer id
    producer_stamp: Stamp | None = None
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    migration_state: int | None = None
    leader: Leader | None = None
    epoch: int = -1  # the raft epoch of the last batch applied
    offset: int = -1  # the last record applied
    time_ms: int | None = None  # its append time
    records: int = 0  # records applied
    first_ms: int | None = None


class Replayer:
    """Applies metadata records to an ``Image``, one at a time, in log order."""

    def __init__(self, image: Image | None = None) -> None:
        self.image = image or Image()
        self._txn: list[tuple[str, int, dict[str, Any], int, int, int]] | None = None
        self.unknown: dict[str, int] = {}  # records of a type the replay has no rule for: counted

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    def apply(self, name: str, version: int, value: dict[str, Any], offset: int, time_ms: int, epoch: int) -> None:
        image = self.image
        image.offset, image.time_ms, image.epoch = offset, time_ms, epoch
        if image.first_ms is None:
            image.first_ms = time_ms
        if name == "BeginTransactionRecord":
            self._txn = []
            return
        if name == "EndTransactionRecord":
            held, self._txn = self._txn or [], None
            for args in held:
                self._apply(*args)
            return
        if name == "AbortTransactionRecord":
            self._txn = None
            return
        if self._txn is not None:
            self._txn.append((name, version, value, offset, time_ms, epoch))
            return
        self._apply(name, version, value, offset, time_ms, epoch)

    def _apply(self, name: str, version: int, value: dict[str, Any], offset: int, time_ms: int, epoch: int) -> None:
        self.image.records += 1
        rule = _RULES.get(name)
        if rule is None:
            self.unknown[name] = self.unknown.get(name, 0) + 1
            return
        rule(self.image, value, offset, time_ms, epoch, version)

    def leader_change(self, leader_id: int, epoch: int, offset: int, time_ms: int) -> None:
        """A ``LeaderChangeMessage`` control record: the raft leader of ``epoch`` (-1: none yet)."""
        self.image.leader = Leader(leader_id, epoch, time_ms, offset)
        self.image.epoch = max(self.image.epoch, epoch)


def _stamp(offset: int, time_ms: int) -> Stamp:
    return Stamp(offset, time_ms, offset, time_ms)


# --- the rules, one per record type -----------------------------------------------------------------------


def _register_broker(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # BrokerRegistration.fromRecord: a registration replaces the broker's previous one whole
    image.brokers[v["BrokerId"]] = Broker(
        broker_id=v["BrokerId"],
        epoch=v["BrokerEpoch"],
        incarnation_id=v["IncarnationId"],
        endpoints=[(e["Name"], e["Host"], e["Port"], e["SecurityProtocol"]) for e in v["EndPoints"]],
        features=[(f["Name"], f["MinSupportedVersion"], f["MaxSupportedVersion"]) for f in v["Features"]],
        rack=v["Rack"],
        fenced=v["Fenced"],
        in_controlled_shutdown=v["InControlledShutdown"],
        stamp=_stamp(offset, ms),
    )


def _unregister_broker(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.brokers.pop(v["BrokerId"], None)


def _fencing(fenced: bool) -> Any:
    def rule(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
        broker = image.brokers.get(v["Id"])
        if broker is not None:
            broker.fenced = fenced
            broker.stamp.touch(offset, ms)

    return rule


def _broker_change(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # BrokerRegistration.cloneWith: Fenced -1 unfenced, 0 no change, 1 fenced; InControlledShutdown 1 starts it
    broker = image.brokers.get(v["BrokerId"])
    if broker is None:
        return
    fenced = v.get("Fenced") or 0
    if fenced == 1:
        broker.fenced = True
    elif fenced == -1:
        broker.fenced = False
    if v.get("InControlledShutdown") == 1:
        broker.in_controlled_shutdown = True
    broker.stamp.touch(offset, ms)


def _topic(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.topics[v["TopicId"]] = Topic(v["Name"], v["TopicId"], _stamp(offset, ms))
    image.names[v["Name"]] = v["TopicId"]


def _remove_topic(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # TopicsDelta.replay(RemoveTopicRecord), and ConfigurationsDelta's: the topic's configs go with it
    topic = image.topics.pop(v["TopicId"], None)
    if topic is not None:
        image.names.pop(topic.name, None)
        image.configs.pop((2, topic.name), None)
        image.config_stamps.pop((2, topic.name), None)


def _partition(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    topic = image.topics.get(v["TopicId"])
    if topic is None:
        return
    topic.partitions[v["PartitionId"]] = Partition(
        replicas=v["Replicas"],
        isr=v["Isr"],
        removing=v["RemovingReplicas"],
        adding=v["AddingReplicas"],
        leader=v["Leader"],
        leader_recovery_state=v["LeaderRecoveryState"],
        leader_epoch=v["LeaderEpoch"],
        partition_epoch=v["PartitionEpoch"],
        # PartitionRegistration(PartitionRecord): from version 2 (KIP-966) a null ELR is an empty one
        elr=(v["EligibleLeaderReplicas"] or []) if version >= 2 else None,
        last_known_elr=(v["LastKnownElr"] or []) if version >= 2 else None,
        raft_epoch=epoch,
        stamp=_stamp(offset, ms),
    )


def _partition_change(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # PartitionRegistration.merge: a null list is no change; a leader other than -2 is a new leader and a
    # new leader epoch; every change is a new partition epoch; LeaderRecoveryState -1 is no change
    topic = image.topics.get(v["TopicId"])
    p = topic.partitions.get(v["PartitionId"]) if topic is not None else None
    if p is None:
        return
    if v["Replicas"] is not None:
        p.replicas = v["Replicas"]
    if v["Isr"] is not None:
        p.isr = v["Isr"]
    if v["RemovingReplicas"] is not None:
        p.removing = v["RemovingReplicas"]
    if v["AddingReplicas"] is not None:
        p.adding = v["AddingReplicas"]
    if v["Leader"] != NO_LEADER_CHANGE:
        p.leader = v["Leader"]
        p.leader_epoch += 1
    if v["LeaderRecoveryState"] != -1:
        p.leader_recovery_state = v["LeaderRecoveryState"]
    if version >= 2:
        if v.get("EligibleLeaderReplicas") is not None:
            p.elr = v["EligibleLeaderReplicas"]
        elif p.elr is None:
            p.elr = []
        if v.get("LastKnownElr") is not None:
            p.last_known_elr = v["LastKnownElr"]
        elif p.last_known_elr is None:
            p.last_known_elr = []
    p.partition_epoch += 1
    p.raft_epoch = epoch
    p.stamp.touch(offset, ms)


def _clear_elr(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # ClearElrRecord: the ELRs of one topic's partitions, or of every topic's when the name is empty
    topic_ids = [image.names.get(v["TopicName"])] if v["TopicName"] else list(image.topics)
    for topic_id in topic_ids:
        topic = image.topics.get(topic_id) if topic_id else None
        for p in topic.partitions.values() if topic else ():
            p.elr, p.last_known_elr = [], []
            p.stamp.touch(offset, ms)


def _config(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # ConfigurationDelta.replay: a null value deletes the key; an entity without keys is gone
    key = (v["ResourceType"], v["ResourceName"])
    _set_entry(image.configs, image.config_stamps, key, v["Name"], v["Value"], offset, ms)


def _quota(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    entity = tuple(sorted((e["EntityType"], e["EntityName"]) for e in v["Entity"]))
    _set_entry(image.quotas, image.quota_stamps, entity, v["Key"], None if v["Remove"] else v["Value"], offset, ms)


def _set_entry(
    entities: dict[Any, dict[str, Any]], stamps: dict[Any, Any], key: Any, name: str, value: Any, offset: int, ms: int
) -> None:
    """One key of an entity's configs or quotas set (``value`` None: removed), its entity's stamp touched;
    an entity left without keys is gone, as Kafka's images drop it."""
    entries = entities.setdefault(key, {})
    if value is None:
        entries.pop(name, None)
    else:
        entries[name] = value
    stamp = stamps.get(key)
    if stamp is None:
        stamps[key] = _stamp(offset, ms)
    else:
        stamp.touch(offset, ms)
    if not entries:
        del entities[key]
        stamps.pop(key, None)


def _scram(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # the salt, stored key and server key are read (the schema has them) and dropped here: never kept
    image.scram[(v["Name"], v["Mechanism"])] = v["Iterations"]
    stamp = image.scram_stamps.get(v["Name"])
    if stamp is None:
        image.scram_stamps[v["Name"]] = _stamp(offset, ms)
    else:
        stamp.touch(offset, ms)


def _remove_scram(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.scram.pop((v["Name"], v["Mechanism"]), None)
    if not any(user == v["Name"] for user, _ in image.scram):
        image.scram_stamps.pop(v["Name"], None)


def _acl(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.acls[v["Id"]] = v
    image.acl_stamps[v["Id"]] = _stamp(offset, ms)


def _remove_acl(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.acls.pop(v["Id"], None)
    image.acl_stamps.pop(v["Id"], None)


def _feature(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    # FeaturesDelta.replay: level 0 removes a feature (metadata.version is never removed)
    if v["FeatureLevel"] == 0 and v["Name"] != "metadata.version":
        image.features.pop(v["Name"], None)
    else:
        image.features[v["Name"]] = v["FeatureLevel"]
    if image.feature_stamp is None:
        image.feature_stamp = _stamp(offset, ms)
    else:
        image.feature_stamp.touch(offset, ms)


def _producer_ids(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.producer_ids = (v["BrokerId"], v["BrokerEpoch"], v["NextProducerId"])
    if image.producer_stamp is None:
        image.producer_stamp = _stamp(offset, ms)
    else:
        image.producer_stamp.touch(offset, ms)


def _token(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.tokens[v["TokenId"]] = {**v, "_stamp": _stamp(offset, ms)}


def _remove_token(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.tokens.pop(v["TokenId"], None)


def _register_controller(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.controllers[v["ControllerId"]] = v


def _unregister_controller(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.controllers.pop(v["ControllerId"], None)


def _migration(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    image.migration_state = v["ZkMigrationState"]


def _nothing(image: Image, v: dict[str, Any], offset: int, ms: int, epoch: int, version: int) -> None:
    pass


_RULES = {
    "RegisterBrokerRecord": _register_broker,
    "UnregisterBrokerRecord": _unregister_broker,
    "FenceBrokerRecord": _fencing(True),
    "UnfenceBrokerRecord": _fencing(False),
    "BrokerRegistrationChangeRecord": _broker_change,
    "TopicRecord": _topic,
    "RemoveTopicRecord": _remove_topic,
    "PartitionRecord": _partition,
    "PartitionChangeRecord": _partition_change,
    "ClearElrRecord": _clear_elr,
    "ConfigRecord": _config,
    "ClientQuotaRecord": _quota,
    "UserScramCredentialRecord": _scram,
    "RemoveUserScramCredentialRecord": _remove_scram,
    "AccessControlEntryRecord": _acl,
    "RemoveAccessControlEntryRecord": _remove_acl,
    "FeatureLevelRecord": _feature,
    "ProducerIdsRecord": _producer_ids,
    "DelegationTokenRecord": _token,
    "RemoveDelegationTokenRecord": _remove_token,
    "RegisterControllerRecord": _register_controller,
    "UnregisterControllerRecord": _unregister_controller,
    "ZkMigrationStateRecord": _migration,
    "NoOpRecord": _nothing,
}
RECORDS_REPLAYED = tuple(sorted(_RULES))


# --- the image as ZooKeeper-mode Kafka's znodes -----------------------------------------------------------


def sanitize(name: str) -> str:
    """A user or client id as Kafka's ``Sanitizer.sanitize`` puts it in a ZooKeeper path: URL-encoded
    (``URLEncoder``: letters, digits and ``.-_`` kept), ``*`` as ``%2A``, a space as ``%20``."""
    out = []
    for byte in name.encode("utf-8"):
        char = chr(byte)
        out.append(char if char.isascii() and (char.isalnum() or char in ".-_") else f"%{byte:02X}")
    return "".join(out)


def _json(value: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, keys in the order given, as ``json.dumps(separators=(",", ":"),
    ensure_ascii=False)`` writes it; orjson writes the same bytes for these documents (strings, whole
    numbers, lists and objects with string keys) several times faster, which a million partition states
    feel. Copied to bytes of their own size: orjson's bytes keep the 4 KiB buffer it wrote into
    (measured with tracemalloc: 4,097 bytes held for a 109-byte partition state), and ``changes`` keeps
    the state of every znode it touched."""
    try:
        return bytes(memoryview(orjson.dumps(value)))
    except TypeError:  # an integer past 64 bits, say: the standard library writes what orjson will not
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _stat(stamp: Stamp | None, data: bytes | None, children: int, version: int | None = None) -> Stat:
    if stamp is None:
        stamp = Stamp(0, 0, 0, 0)
    return Stat(
        czxid=stamp.created_offset,
        mzxid=stamp.changed_offset,
        ctime=stamp.created_ms,
        mtime=stamp.changed_ms,
        version=stamp.changes if version is None else version,
        cversion=0,
        aversion=0,
        ephemeralOwner=0,
        dataLength=len(data) if data else 0,
        numChildren=children,
        pzxid=stamp.changed_offset,
    )


Node = tuple[Stat, bytes | None]


class Tree:
    """The image as a tree of znodes under a root (``kraft:``), in the JSON forms Kafka wrote to ZooKeeper
    (``ZkData.scala``; docs/kafka-layout.md), computed when asked for, so a walk holds no second copy of
    the image. Paths are relative to the root here (``brokers/ids/1``); ``""`` is the root itself."""

    def __init__(self, image: Image, cluster_id: str | None) -> None:
        self.image = image
        self.cluster_id = cluster_id
        self._entities: dict[str, dict[str, tuple[dict[str, str], Stamp | None]]] | None = None
        self._groups: dict[tuple[str, str, str], list[dict[str, Any]]] | None = None

    # what each node holds ---------------------------------------------------------------------------------

    def children(self, rel: str) -> list[str] | None:
        """The child names of ``rel``, sorted; None when there is no such node."""
        image = self.image
        parts = rel.split("/") if rel else []
        depth = len(parts)
        if depth == 0:
            top = ["brokers", "config", "feature", "kafka-acl", "kafka-acl-extended", "cluster", "controller_epoch"]
            if image.leader is not None and image.leader.node_id >= 0:
                top.append("controller")
            if image.producer_ids is not None:
                top.append("latest_producer_id_block")
            if image.tokens:
                top.append("delegation_token")
            return sorted(top)
        head = parts[0]
        if head == "brokers":
            return self._brokers_children(parts)
        if head == "config":
            return self._config_children(parts)
        if head in ("kafka-acl", "kafka-acl-extended"):
            return self._acl_children(parts)
        if head == "cluster":
            if depth == 1:
                return ["id"] if self.cluster_id else []
            return self._leaf(rel)
        if head == "delegation_token" and image.tokens:
            if depth == 1:
                return ["tokens"]
            if depth == 2 and parts[1] == "tokens":
                return sorted(image.tokens)
            return self._leaf(rel)
        return self._leaf(rel)

    def _leaf(self, rel: str) -> list[str] | None:
        """No children: a node that holds data (``node`` answers for it without asking ``children``)."""
        if rel in _LEAVES or rel.startswith(("cluster/", "delegation_token/tokens/")):
            return [] if self.data(rel) is not None else None
        return None

    def _brokers_children(self, parts: list[str]) -> list[str] | None:
        image = self.image
        depth = len(parts)
        if depth == 1:
            return ["ids", "topics"]
        if parts[1] == "ids":
            if depth == 2:
                return [str(b) for b in sorted(image.brokers)]
            return [] if depth == 3 and _int(parts[2]) in image.brokers else None
        if parts[1] != "topics":
            return None
        if depth == 2:
            return sorted(image.names)
        topic = self._topic(parts[2])
        if topic is None:
            return None
        if depth == 3:
            return ["partitions"]
        if parts[3] != "partitions":
            return None
        if depth == 4:
            return [str(p) for p in sorted(topic.partitions)]
        if _int(parts[4]) not in topic.partitions:
            return None
        if depth == 5:
            return ["state"]
        return [] if depth == 6 and parts[5] == "state" else None

    def _config_entities(self) -> dict[str, dict[str, tuple[dict[str, str], Stamp | None]]]:
        """``config/<type>/<name>``: every entity's settings as ZooKeeper kept them (``ConfigEntityZNode``):
        topic and broker configs, client quotas (by sanitized user and client id), SCRAM credentials (in
        their user's node, as ``SCRAM-SHA-256`` = ``salt=…,iterations=N``, the secret parts never held).
        Worked out once: the image does not change under a tree."""
        if self._entities is None:
            self._entities = self._every_config_entity()
        return self._entities

    def _every_config_entity(self) -> dict[str, dict[str, tuple[dict[str, str], Stamp | None]]]:
        image = self.image
        out: dict[str, dict[str, tuple[dict[str, str], Stamp | None]]] = {"topics": {}, "brokers": {}}
        for name, topic_id in image.names.items():  # every topic has its config znode, overrides or not
            out["topics"][name] = ({}, image.topics[topic_id].stamp)
        for (kind, name), configs in image.configs.items():
            folder = CONFIG_RESOURCES.get(kind, f"resource_type_{kind}")
            entity = "<default>" if kind == 4 and name == "" else name
            out.setdefault(folder, {})[entity] = (dict(configs), image.config_stamps.get((kind, name)))
        for quota_entity, quotas in image.quotas.items():
            names = dict(quota_entity)
            values = {k: _quota_text(v) for k, v in quotas.items()}
            stamp = image.quota_stamps.get(quota_entity)
            user = names.get("user", _ABSENT)
            client = names.get("client-id", _ABSENT)
            if "ip" in names:
                out.setdefault("ips", {})[names["ip"] or "<default>"] = (values, stamp)
            elif user is not _ABSENT and client is not _ABSENT:
                path = f"{_entity(user)}/clients/{_entity(client)}"
                out.setdefault("users/clients", {})[path] = (values, stamp)
            elif user is not _ABSENT:
                held = out.setdefault("users", {}).get(_entity(user), ({}, stamp))[0]
                out["users"][_entity(user)] = ({**held, **values}, stamp)
            elif client is not _ABSENT:
                out.setdefault("clients", {})[_entity(client)] = (values, stamp)
        for (user, mechanism), iterations in image.scram.items():
            name = SCRAM_MECHANISMS.get(mechanism, f"SCRAM-{mechanism}")
            # ScramCredentialUtils.credentialToString's form, the salt and keys left out: never held
            value = f"salt=<redacted>,stored_key=<redacted>,server_key=<redacted>,iterations={iterations}"
            held, stamp = out.setdefault("users", {}).get(sanitize(user), ({}, image.scram_stamps.get(user)))
            out["users"][sanitize(user)] = ({**held, name: value}, stamp or image.scram_stamps.get(user))
        return out

    def _config_entity(self, kind: str, name: str) -> tuple[dict[str, str], Stamp | None] | None:
        """One topic's or broker's entry of ``_every_config_entity`` (its settings and stamp), worked out
        alone: ``changes --from-kraft`` reads the config znodes a record touches before and after it, and
        working out every entity for each was quadratic in the topics (a log creating 1,000 topics spent
        three quarters of its time there: bench/bench_kraft.py's log, profiled)."""
        image = self.image
        key = (2, name) if kind == "topics" else (4, "" if name == "<default>" else name)
        configs = image.configs.get(key)
        if configs is not None:
            return dict(configs), image.config_stamps.get(key)
        if kind == "topics" and name in image.names:  # every topic has its config znode, overrides or not
            return {}, image.topics[image.names[name]].stamp
        return None

    def _config_children(self, parts: list[str]) -> list[str] | None:
        entities = self._config_entities()
        depth = len(parts)
        if depth == 1:
            return sorted({kind.split("/")[0] for kind in entities})
        kind = parts[1]
        if depth == 2:
            names = set(entities.get(kind, {}))
            if kind == "users":
                names |= {path.split("/")[0] for path in entities.get("users/clients", {})}
            return sorted(names) if kind in entities or names else None
        name = parts[2]
        if kind == "users":
            nested = {p.split("/", 2)[2] for p in entities.get("users/clients", {}) if p.split("/")[0] == name}
            if depth == 3:
                exists = name in entities.get("users", {}) or nested
                return (["clients"] if nested else []) if exists else None
            if depth == 4 and parts[3] == "clients" and nested:
                return sorted(nested)
            if depth == 5 and parts[3] == "clients" and parts[4] in nested:
                return []
            return None
        return [] if depth == 3 and name in entities.get(kind, {}) else None

    def _acl_groups(self) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
        """ACLs by (pattern type, resource type, resource name), each as ``AclEntry`` writes it (once)."""
        if self._groups is not None:
            return self._groups
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for acl in self.image.acls.values():
            pattern = PATTERN_TYPES.get(acl["PatternType"], "UNKNOWN")
            kind = RESOURCE_TYPES.get(acl["ResourceType"], "Unknown")
            entry = {
                "principal": acl["Principal"],
                "permissionType": _named(ACL_PERMISSIONS, acl["PermissionType"]),
                "operation": _named(ACL_OPERATIONS, acl["Operation"]),
                "host": acl["Host"],
            }
            groups.setdefault((pattern, kind, acl["ResourceName"]), []).append(entry)
        self._groups = groups
        return groups

    def _acl_children(self, parts: list[str]) -> list[str] | None:
        groups = self._acl_groups()
        extended = parts[0] == "kafka-acl-extended"
        if extended:
            if len(parts) == 1:
                return ["prefixed"]
            if parts[1] != "prefixed":
                return None
            parts = parts[1:]
        pattern = "PREFIXED" if extended else "LITERAL"
        mine = {(kind, name) for (p, kind, name) in groups if p == pattern}
        if len(parts) == 1:  # the authorizer created every resource type's node (docs/kafka-layout.md §3.14)
            return sorted(
                {"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"} | {k for k, _ in mine}
            )
        if len(parts) == 2:
            return sorted(n for k, n in mine if k == parts[1])
        if len(parts) == 3:
            return [] if (parts[1], parts[2]) in mine else None
        return None

    def data(self, rel: str) -> bytes | None:
        """The bytes of a node that holds data; None for a folder or no such node."""
        found = self.node(rel)
        return found[1] if found is not None else None

    def node(self, rel: str) -> Node | None:
        """(stat, data) of ``rel``, or None when there is no such node."""
        image = self.image
        parts = rel.split("/") if rel else []
        if parts[:2] == ["brokers", "ids"] and len(parts) == 3:
            broker = image.brokers.get(_int(parts[2]))
            return None if broker is None else self._broker(broker)
        if parts[:2] == ["brokers", "topics"] and len(parts) in (3, 6):
            topic = self._topic(parts[2])
            if topic is None:
                return None
            if len(parts) == 3:
                return self._topic_node(topic)
            p = topic.partitions.get(_int(parts[4]))
            if p is None or parts[3] != "partitions" or parts[5] != "state":
                return None
            return self._state(p)
        if rel == "controller":
            leader = image.leader
            if leader is None or leader.node_id < 0:
                return None
            body: dict[str, Any] = {"version": 2, "brokerid": leader.node_id}
            if leader.elected_ms is not None:
                body["timestamp"] = str(leader.elected_ms)
            body["kraftControllerEpoch"] = leader.epoch
            data = _json(body)
            at = leader.offset if leader.offset is not None else image.offset
            ms = leader.elected_ms or 0
            return _stat(Stamp(at, ms, at, ms), data, 0), data
        if rel == "controller_epoch":
            epoch = image.leader.epoch if image.leader is not None else image.epoch
            data = str(max(epoch, 0)).encode()
            where, when = (image.leader.offset, image.leader.elected_ms) if image.leader is not None else (None, None)
            elected = Stamp(where or 0, when or 0, where or 0, when or 0)
            return _stat(elected, data, 0, version=max(epoch, 0)), data
        if rel == "cluster/id":
            if not self.cluster_id:
                return None
            data = _json({"version": "1", "id": self.cluster_id})
            return _stat(None, data, 0), data
        if rel == "feature":
            features = {name: {"max_version_level": level} for name, level in sorted(image.features.items())}
            data = _json({"features": features, "version": 2, "status": 1})
            return _stat(image.feature_stamp, data, 0), data
        if rel == "latest_producer_id_block" and image.producer_ids is not None:
            owner, _, next_id = image.producer_ids
            start = max(next_id - PRODUCER_ID_BLOCK, 0)
            data = _json(
                {"version": 1, "broker": owner, "block_start": str(start), "block_end": str(max(next_id - 1, 0))}
            )
            return _stat(image.producer_stamp, data, 0), data
        if parts[:2] == ["delegation_token", "tokens"] and len(parts) == 3:
            token = image.tokens.get(parts[2])
            if token is None:
                return None
            data = _json(
                {
                    "version": 3,
                    "owner": token["Owner"],
                    "tokenRequester": token["Requester"],
                    "renewers": token["Renewers"],
                    "issueTimestamp": token["IssueTimestamp"],
                    "maxTimestamp": token["MaxTimestamp"],
                    "expiryTimestamp": token["ExpirationTimestamp"],
                    "tokenId": token["TokenId"],
                }
            )
            return _stat(token["_stamp"], data, 0), data
        if parts[:1] == ["config"] and len(parts) == 3 and parts[1] in _ONE_BY_ONE and self._entities is None:
            found = self._config_entity(parts[1], parts[2])  # without working out every other entity
            if found is None:
                return None
            data = _json({"version": 1, "config": dict(sorted(found[0].items()))})
            return _stat(found[1], data, 0), data
        if parts[:1] == ["config"] and len(parts) in (3, 5):
            entities = self._config_entities()
            if len(parts) == 5 and parts[1] == "users" and parts[3] == "clients":
                found = entities.get("users/clients", {}).get(f"{parts[2]}/clients/{parts[4]}")
            else:
                found = entities.get(parts[1], {}).get(parts[2])
            if found is None:
                return None if self.children(rel) is None else self._folder(rel)
            configs, config_stamp = found
            data = _json({"version": 1, "config": dict(sorted(configs.items()))})
            return _stat(config_stamp, data, len(self.children(rel) or ())), data
        if parts[:1] in (["kafka-acl"], ["kafka-acl-extended"]) and len(parts) == (3 if parts[0] == "kafka-acl" else 4):
            pattern = "LITERAL" if parts[0] == "kafka-acl" else "PREFIXED"
            kind, name = parts[-2], parts[-1]
            if parts[0] == "kafka-acl-extended" and parts[1] != "prefixed":
                return None
            entries = self._acl_groups().get((pattern, kind, name))
            if entries is None:
                return None
            data = _json({"version": 1, "acls": entries})
            stamps = [
                image.acl_stamps[i]
                for i, a in image.acls.items()
                if a["ResourceName"] == name and RESOURCE_TYPES.get(a["ResourceType"]) == kind
            ]
            return _stat(_merged(stamps), data, 0), data
        if rel in _LEAVES or rel.startswith(("cluster/", "delegation_token/tokens/")):
            return None  # a leaf this image does not have (no producer id block yet)
        return self._folder(rel)

    def _folder(self, rel: str) -> Node | None:
        names = self.children(rel)
        if names is None:
            return None
        return _stat(None, None, len(names)), None

    def _topic(self, name: str) -> Topic | None:
        topic_id = self.image.names.get(name)
        return self.image.topics.get(topic_id) if topic_id is not None else None

    def _broker(self, b: Broker) -> Node:
        # BrokerIdZNode.encode, version 5, from the registration; "fenced" and "in_controlled_shutdown" are
        # KRaft's own (no ZooKeeper-mode Kafka writes them): KafkaBroker's fields of those names
        endpoints = [f"{name}://{_host(host)}:{port}" for name, host, port, _ in b.endpoints]
        protocols = {name: SECURITY_PROTOCOLS.get(code, str(code)) for name, _, _, code in b.endpoints}
        plain = next(((h, p) for n, h, p, c in b.endpoints if c == 0), None)
        body: dict[str, Any] = {
            "features": {name: {"min_version": low, "max_version": high} for name, low, high in sorted(b.features)},
            "listener_security_protocol_map": protocols,
            "endpoints": endpoints,
            "jmx_port": -1,
            "port": plain[1] if plain else -1,
            "host": plain[0] if plain else None,
            "version": 5,
            "timestamp": str(b.stamp.created_ms),
        }
        if b.rack is not None:
            body["rack"] = b.rack
        body["fenced"] = b.fenced
        body["in_controlled_shutdown"] = b.in_controlled_shutdown
        data = _json(body)
        # the broker epoch is the offset of the registration record, as a ZooKeeper one is its czxid
        stamp = Stamp(b.epoch, b.stamp.created_ms, b.stamp.changed_offset, b.stamp.changed_ms, b.stamp.changes)
        return _stat(stamp, data, 0), data

    def _topic_node(self, topic: Topic) -> Node:
        # TopicZNode.encode, version 3: the replicas in full (adding ones included), the moves beside them
        partitions = topic.partitions
        body = {
            "partitions": {str(p): partitions[p].replicas for p in sorted(partitions)},
            "topic_id": topic.topic_id,
            "adding_replicas": {str(p): partitions[p].adding for p in sorted(partitions) if partitions[p].adding},
            "removing_replicas": {str(p): partitions[p].removing for p in sorted(partitions) if partitions[p].removing},
            "version": 3,
        }
        data = _json(body)
        changed = max((p.stamp.changed_offset for p in partitions.values()), default=topic.stamp.changed_offset)
        stamp = Stamp(topic.stamp.created_offset, topic.stamp.created_ms, changed, topic.stamp.changed_ms)
        return _stat(stamp, data, 1), data

    def _state(self, p: Partition) -> Node:
        # TopicPartitionStateZNode.encode; its controller_epoch is the raft epoch of the controller whose
        # record last changed the partition, and its zkVersion (the stat's version) the partition epoch, as
        # the ZooKeeper one was; the ELR keys are KRaft's own (KIP-966), present when the registration has them
        body: dict[str, Any] = {
            "controller_epoch": p.raft_epoch,
            "leader": p.leader,
            "version": 1,
            "leader_epoch": p.leader_epoch,
            "isr": p.isr,
        }
        if p.leader_recovery_state:
            body["leader_recovery_state"] = p.leader_recovery_state
        if p.elr is not None:
            body["eligible_leader_replicas"] = p.elr
        if p.last_known_elr is not None:
            body["last_known_elr"] = p.last_known_elr
        data = _json(body)
        return _stat(p.stamp, data, 0, version=p.partition_epoch), data

    # walking ----------------------------------------------------------------------------------------------

    def walk(self, rel: str, max_depth: int | None) -> Iterator[tuple[str, Node]]:
        """(rel, node) of ``rel`` and everything under it to ``max_depth``, each node after its subtree (as
        the files source yields them), children in name order."""
        top = self.node(rel)
        if top is None:
            return
        stack: list[tuple[str, int, bool]] = [(rel, 0, False)]
        while stack:
            path, depth, expanded = stack.pop()
            if expanded or (max_depth is not None and depth >= max_depth):
                found = self.node(path)
                if found is not None:
                    yield path, found
                continue
            if max_depth is None or depth + 2 <= max_depth:
                topic = self._partitions_folder(path)
                if topic is not None:
                    yield from self._walk_partitions(path, topic)
                    continue
            stack.append((path, depth, True))
            for name in reversed(self.children(path) or ()):
                stack.append((f"{path}/{name}" if path else name, depth + 1, False))

    def _partitions_folder(self, rel: str) -> Topic | None:
        """The topic whose ``brokers/topics/<topic>/partitions`` ``rel`` is, or None."""
        if not rel.startswith("brokers/topics/") or not rel.endswith("/partitions"):
            return None
        name = rel[len("brokers/topics/") : -len("/partitions")]
        return None if "/" in name else self._topic(name)

    def _walk_partitions(self, rel: str, topic: Topic) -> Iterator[tuple[str, Node]]:
        """A topic's ``partitions`` subtree, as ``walk`` gives it (each partition's ``state``, the
        partition, then the folder) without asking ``children`` and ``node`` of each path: nine tenths
        of a large cluster's znodes are here, and parsing each path back was a third of a walk's time
        (bench/bench_kraft.py's profile). ``test_kraft.py`` holds it to the generic walk."""
        partitions = topic.partitions
        for p in sorted(partitions):
            yield f"{rel}/{p}/state", self._state(partitions[p])
            yield f"{rel}/{p}", (_stat(None, None, 1), None)
        yield rel, (_stat(None, None, len(partitions)), None)


_ABSENT: Any = object()
_LEAVES = frozenset({"controller", "controller_epoch", "feature", "latest_producer_id_block"})
_ONE_BY_ONE = frozenset({"topics", "brokers"})  # config entity kinds a tree can render one by one (_config_entity)


def _entity(name: str | None) -> str:
    return "<default>" if name is None else sanitize(name)


def _quota_text(value: float) -> str:
    """A quota as ZooKeeper kept it (the string kafka-configs wrote): integral values without ``.0``."""
    return str(int(value)) if value == int(value) else repr(value)


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _named(names: tuple[str, ...], code: int) -> str:
    return names[code] if 0 <= code < len(names) else "Unknown"


def _int(text: str) -> int:
    """A znode name as a broker or partition id; -1 (none there is) when it is not a number."""
    return int(text) if text.lstrip("-").isdigit() else -1


def _merged(stamps: list[Stamp]) -> Stamp | None:
    if not stamps:
        return None
    first = min(stamps, key=lambda s: s.created_offset)
    last = max(stamps, key=lambda s: s.changed_offset)
    return Stamp(first.created_offset, first.created_ms, last.changed_offset, last.changed_ms, len(stamps))
