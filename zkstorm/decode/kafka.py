"""Kafka znodes → records, for every schema version from 0.8 to 3.9, under any chroot, as Kafka's own
``ZkData.scala`` (``core/src/main/scala/kafka/zk/``) writes and reads them (``docs/kafka-layout.md``).

JSON is read as Kafka's Jackson reader reads it (``jackson``); each leniency used yields a
``DecodeWarning`` record. Types are not coerced: a string where Kafka wants a number (or the reverse) is
a ``wrong_type`` failure naming every offending field. Importing this module registers the decoders in
``registry.REGISTRY``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from itertools import pairwise
from typing import Any

import orjson

from ..errors import DecodeError, FailureType
from ..layout import KAFKA
from ..records import (
    DecodeWarning,
    KafkaAcl,
    KafkaAclChange,
    KafkaBroker,
    KafkaClusterId,
    KafkaConfig,
    KafkaConfigChange,
    KafkaConsumerMember,
    KafkaConsumerOffset,
    KafkaConsumerOwner,
    KafkaController,
    KafkaControllerEpoch,
    KafkaDelegationToken,
    KafkaFeature,
    KafkaIsrChange,
    KafkaLogDirEvent,
    KafkaMigration,
    KafkaPartitionState,
    KafkaPreferredElection,
    KafkaProducerIdBlock,
    KafkaReassignment,
    KafkaReplicaAssignment,
    KafkaTopic,
    KafkaTopicDeletion,
)
from ..redact import REDACTED
from .jackson import DIGITS, Fields, Json, json_object, json_type, load_json, orjson_reads_as_stdlib
from .registry import REGISTRY, DecodeContext, utc

_ENDPOINT = re.compile(
    r"^(?P<listener>[A-Za-z0-9_.-]+)://(?:\[(?P<v6>[0-9A-Fa-f:.%]+)\]|(?P<host>[^:\[\]]*)):(?P<port>-?\d+)$"
)


def _warnings(
    context: DecodeContext, kind: str, parsed: Json | None, extra: Sequence[tuple[str, str]] = ()
) -> list[Any]:
    found = (parsed.warnings if parsed else []) + list(extra)
    return [DecodeWarning(path=context.path, record_kind=kind, warning=w, detail=d) for w, d in found]


def _version_warning(fields: Fields, version: int | None, newest: int, what: str) -> list[tuple[str, str]]:
    unknown = fields.unknown()
    if (version is not None and version > newest) or unknown:
        detail = f"{what} version {version} (newest known {newest})"
        if unknown:
            detail += f"; unknown fields kept aside: {', '.join(unknown)}"
        return [("unknown_version", detail)]
    return []


def _ms(value: int | None) -> datetime | None:
    """Kafka's epoch milliseconds as a UTC datetime (``registry.utc``: out of range is ``value_out_of_range``)."""
    return None if value is None else utc(value / 1000)


_SHARED_LIMIT = 1 << 16
_shared_ids: dict[tuple[int, ...], tuple[int, ...]] = {}


def shared_ids(ids: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple object per distinct list of broker ids (a replica set, an ISR). A million partitions
    name a few thousand distinct replica sets among their brokers, and the views that judge every
    partition hold them all (``model.kafka_state.KafkaState``): shared, each costs a pointer instead of a tuple.
    The cache is bounded (cleared when full), so a long-running process does not grow with it."""
    found = _shared_ids.get(ids)
    if found is None:
        if len(_shared_ids) >= _SHARED_LIMIT:
            _shared_ids.clear()
        found = _shared_ids[ids] = ids
    return found


def _sequence(name: str) -> int:
    digits = name[-10:]
    return int(digits) if digits.isdigit() else -1


Decoder = Callable[[DecodeContext, bytes | None], list[Any]]


def _payload(kind: str) -> Callable[[Callable[[DecodeContext, Json], list[Any]]], Decoder]:
    """Wrap a JSON decoder: empty data is an ``empty_data`` warning (the node is kept, nothing decoded)."""

    def wrap(fn: Callable[[DecodeContext, Json], list[Any]]) -> Decoder:
        def decode(context: DecodeContext, data: bytes | None) -> list[Any]:
            if not data:
                return _warnings(context, kind, None, [("empty_data", "no data where a payload belongs")])
            parsed = load_json(data)
            records = fn(context, parsed)
            context.encoding = parsed.encoding
            return records

        decode.__name__ = fn.__name__
        return decode

    return wrap


# --- brokers ------------------------------------------------------------------------------------------


def parse_endpoint(text: str) -> tuple[str, str, int]:
    match = _ENDPOINT.match(text)
    if not match:
        raise ValueError(text)
    return match["listener"], match["v6"] or match["host"], int(match["port"])


@_payload("kafka_broker")
def decode_broker(context: DecodeContext, parsed: Json) -> list[Any]:
    broker_id_text = context.segments[-1]
    obj = json_object(parsed, "a broker registration")
    f = Fields(obj)
    version = f.integer("version")
    # BrokerIdZNode.decode (Kafka's ZkData.scala) reads jmx_port in every version, the top-level host and
    # port only in version 1 (from version 2 on they are a courtesy to old clients, and other writers
    # leave them out or stale): the endpoints are the broker's address
    legacy = version == 1
    host = f.string("host") if legacy else None
    port = f.integer("port") if legacy else None
    f.known.update(("host", "port"))
    jmx_port = f.integer("jmx_port", required=False)  # required by Kafka: refused below, once the rest is read
    timestamp = f.str_ms("timestamp", required=False)
    rack = f.string("rack", required=False)
    endpoints: list[str] = []
    protocols: dict[str, str] = {}
    if version is not None and version >= 2:
        raw = f._get("endpoints", True)
        if isinstance(raw, list) and all(isinstance(e, str) for e in raw):
            endpoints = raw
        elif raw is not None:
            f.errors.append(f"endpoints: expected an array of strings, got {json_type(raw)}")
        protocol_map = f.obj_field("listener_security_protocol_map", required=False)
        protocols = {str(k): str(v) for k, v in protocol_map.items()}
    features = f.obj_field("features", required=False)
    # KRaft's own, in the registrations zkstorm's KRaft reader renders (sources/kraft): no ZooKeeper-mode
    # Kafka writes these keys
    fenced = _optional_bool(f, "fenced")
    in_controlled_shutdown = _optional_bool(f, "in_controlled_shutdown")
    f.check("broker registration")
    if version is not None and version < 1:
        raise DecodeError(
            f"broker registration version {version}: Kafka reads version 1 and later",
            failure_type=FailureType.INVALID_VALUE,
        )
    # What BrokerIdZNode.decode fails on past this point: Kafka cannot read the registration, but the rest
    # of it reads as any broker's (tools other than Kafka leave jmx_port out): kept, flagged
    refused = [] if "jmx_port" in f.obj else ["jmx_port: missing"]
    parsed_endpoints = []
    if legacy:  # BrokerIdZNode.decode builds the EndPoint from host and port as they are, no parsing
        endpoints = [f"PLAINTEXT://{host}:{port}"] if host is not None else []
        parsed_endpoints = [("PLAINTEXT", host, port)] if host is not None and port is not None else []
    for endpoint in () if legacy else endpoints:
        try:
            parsed_endpoints.append(parse_endpoint(endpoint))
        except ValueError:
            refused.append(f"endpoints: {endpoint!r} is not LISTENER://host:port")
    if not legacy:
        host, port = _address(parsed_endpoints, protocols)
    broker = KafkaBroker(
        root=context.root,
        broker_id=int(broker_id_text) if DIGITS.match(broker_id_text) else -1,
        alive=not fenced,  # a KRaft registration outlives its broker: fenced is not alive
        version=version,
        host=host,
        port=port,
        rack=rack,
        jmx_port=jmx_port,
        timestamp_ms=timestamp,
        registered_at=_ms(timestamp),
        endpoints=tuple(endpoints),
        listener_protocols=tuple(f"{name}={protocols.get(name, name)}" for name, _, _ in parsed_endpoints),
        features=tuple(f"{name}={_range(spec)}" for name, spec in sorted(features.items())),
        broker_epoch=context.stat.czxid if context.stat is not None else None,
        session_id=context.stat.ephemeralOwner if context.stat is not None else None,
        fenced=fenced,
        in_controlled_shutdown=in_controlled_shutdown,
    )
    extra = _version_warning(f, version, 5, "broker registration")
    records = [broker, *_warnings(context, "kafka_broker", parsed, extra)]
    if refused:
        raise DecodeError(
            f"broker registration: {'; '.join(refused)}: Kafka cannot read this registration",
            failure_type=FailureType.WRONG_TYPE,
            records=records,
        )
    return records


def _optional_bool(f: Fields, key: str) -> bool | None:
    value = f._get(key, False)
    if value is None or isinstance(value, bool):
        return value
    f.errors.append(f"{key}: expected true or false, got {json_type(value)}")
    return None


def _address(endpoints: list[tuple[str, str, int]], protocols: dict[str, str]) -> tuple[str | None, int | None]:
    """A version 2+ registration's host and port, from its endpoints: the first whose security protocol
    is PLAINTEXT (what Kafka's own ``BrokerIdZNode.encode`` copies into the legacy fields), else the
    first; none without endpoints. A listener without an entry in the protocol map is named after its
    protocol (Kafka's default map)."""
    for listener, host, port in endpoints:
        if protocols.get(listener, listener).upper() == "PLAINTEXT":
            return host, port
    return (endpoints[0][1], endpoints[0][2]) if endpoints else (None, None)


def _range(spec: Any) -> str:
    if not isinstance(spec, dict):
        return str(spec)
    low = spec.get("min_version", spec.get("min_version_level"))
    high = spec.get("max_version", spec.get("max_version_level"))
    return f"{low}..{high}" if low is not None else f"..{high}"


# --- topics and partitions ----------------------------------------------------------------------------


def _partition_map(f: Fields, key: str, required: bool) -> dict[int, tuple[int, ...]]:
    raw = f.obj_field(key, required)
    out: dict[int, tuple[int, ...]] = {}
    for partition, replicas in raw.items():
        if not DIGITS.match(str(partition)):
            f.errors.append(f"{key}: partition key {partition!r} is not an integer")
            continue
        out[int(partition)] = f.int_list(key, value=replicas, label=f"{key}.{partition}")
    return out


@_payload("kafka_topic")
def decode_topic(context: DecodeContext, parsed: Json) -> list[Any]:
    topic = sys.intern(context.segments[-1])  # one string for its assignments and its partitions' states
    f = Fields(json_object(parsed, "a topic znode"))
    version = f.integer("version", required=False)  # TopicZNode.decode does not read it: optional
    partitions = _partition_map(f, "partitions", True)
    adding = _partition_map(f, "adding_replicas", False)
    removing = _partition_map(f, "removing_replicas", False)
    topic_id = f.string("topic_id", required=False, nullable=True)
    f.check("topic znode")
    extra = _version_warning(f, version, 3, "topic znode")
    if sorted(partitions) != list(range(len(partitions))):
        # TopicZNode.decode reads any partition numbers; a gap (a partition removed by hand, a tool's bug)
        # is what Kafka's own tools never write: worth a look, not a reason to hide the topic
        numbers = ",".join(map(str, sorted(partitions)))
        extra.append(("partition_gap", f"partitions are {numbers}, not 0..{len(partitions) - 1}"))
    rows = [
        KafkaReplicaAssignment(
            root=context.root,
            topic=topic,
            partition=p,
            replicas=shared_ids(partitions[p]),
            adding_replicas=shared_ids(adding[p]) if p in adding else (),
            removing_replicas=shared_ids(removing[p]) if p in removing else (),
        )
        for p in sorted(partitions)
    ]
    reassigning = [r for r in rows if r.adding_replicas or r.removing_replicas]
    first = rows[0] if rows else None
    record = KafkaTopic(
        root=context.root,
        topic=topic,
        version=version,
        topic_id=topic_id,
        partition_count=len(rows),
        replication_factor=len(first.replicas) - len(first.adding_replicas) if first else 0,
        reassigning_partitions=len(reassigning),
    )
    moves = [
        KafkaReassignment(
            root=context.root,
            topic=topic,
            partition=r.partition,
            target_replicas=tuple(b for b in r.replicas if b not in r.removing_replicas),
            source="kip455",
        )
        for r in reassigning
    ]
    records = [record, *rows, *moves, *_warnings(context, "kafka_topic", parsed, extra)]
    if "topic_id" in f.obj and not is_kafka_uuid(topic_id):
        # TopicZNode.decode fails on it (Uuid.fromString), so Kafka cannot read the topic; tools other than
        # Kafka write such ids, and the rest of the znode reads as any topic's: kept, flagged
        raise DecodeError(
            f"topic_id {topic_id!r} is not a Kafka Uuid (base64url of exactly 16 bytes): Kafka cannot read this topic",
            failure_type=FailureType.INVALID_TOPIC_ID,
            records=records,
        )
    return records


_UUID = re.compile(r"[A-Za-z0-9_-]{22}(?:==)?")


def is_kafka_uuid(text: str | None) -> bool:
    """What Kafka's ``Uuid.fromString`` accepts: at most 24 characters that Java's base64url decoder
    reads as exactly 16 bytes. Sixteen bytes are 22 characters of the URL-safe alphabet, with the two
    ``=`` of padding or none (one ``=`` is a wrong ending unit, other lengths other byte counts); Java's
    decoder ignores the unused low bits of the last character, and so does this."""
    return text is not None and _UUID.fullmatch(text) is not None


_STATE_FIELDS = ("leader", "leader_epoch", "controller_epoch", "version")
_STATE_KEYS = frozenset({*_STATE_FIELDS, "isr"})


def partition_number(name: str) -> int:
    """A partition znode's name as its number; -1 for a name that is none (no broker writes one: a
    hand-made or damaged tree), so the record still says which znode it came from by its topic."""
    return int(name) if DIGITS.match(name) else -1


@_payload("kafka_partition_state")
def decode_partition_state(context: DecodeContext, parsed: Json) -> list[Any]:
    segments = context.segments
    topic, partition = sys.intern(segments[-4]), segments[-2]
    if not parsed.warnings:
        zk_version = context.stat.version if context.stat is not None else None
        state = _common_state(parsed.value, context.root, topic, partition, zk_version)
        if state is not None:
            return [state]
    return _partition_state_fields(context, parsed, topic, partition)


def _common_state(
    obj: Any, root: str, topic: str, partition: str, zk_version: int | None
) -> KafkaPartitionState | None:
    """The state of what every controller up to Kafka 3.x writes, read straight (one partition state per
    partition, the bulk of a Kafka tree); None for anything else, which goes through Fields
    (``_partition_state_fields``), which says what is missing, mistyped or new."""
    if (
        type(obj) is dict
        and obj.keys() == _STATE_KEYS
        and type(obj["leader"]) is int  # (_STATE_FIELDS, spelt out: this runs once a txn of a Kafka log)
        and type(obj["leader_epoch"]) is int
        and type(obj["controller_epoch"]) is int
        and type(obj["version"]) is int
        and obj["version"] <= 1
        and type(obj["isr"]) is list
        and all(type(b) is int for b in obj["isr"])
    ):
        return KafkaPartitionState(
            root=root,
            topic=topic,
            partition=partition_number(partition),
            leader=obj["leader"],
            leader_epoch=obj["leader_epoch"],
            isr=shared_ids(tuple(obj["isr"])),
            controller_epoch=obj["controller_epoch"],
            version=obj["version"],
            leader_recovery_state=0,
            zk_version=zk_version,
        )
    return None


def common_partition_state(root: str, relative: str, data: bytes | None, zk_version: int) -> KafkaPartitionState | None:
    """The one record ``decode_partition_state`` makes of a state in the common form, read from the bytes
    alone: no ``DecodeContext``, ``Json`` or znode record around it (what ``changes`` reads ~40k times on a
    busy Kafka log, ``changes/kafka.partition_state``). None for any other bytes, and for any the
    JSON reader would warn about (``load_json``'s own checks): the caller then takes the full decode.
    ``tests/test_changes_fast_state.py`` holds it to the full decode."""
    if not data or not orjson_reads_as_stdlib(data):
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    # a duplicate key: a colon more in the bytes than the five of the common form's keys (no string value)
    if data.count(b":") != len(_STATE_KEYS):
        return None
    segments = relative.split("/")
    return _common_state(obj, root, sys.intern(segments[-4]), segments[-2], zk_version)


def _optional_ids(f: Fields, key: str) -> tuple[int, ...] | None:
    return shared_ids(f.int_list(key, required=False)) if key in f.obj else None


def _partition_state_fields(context: DecodeContext, parsed: Json, topic: str, partition: str) -> list[Any]:
    f = Fields(json_object(parsed, "a partition state"))
    state = KafkaPartitionState(
        root=context.root,
        topic=topic,
        partition=partition_number(partition),
        leader=f.integer("leader") or 0,
        leader_epoch=f.integer("leader_epoch") or 0,
        isr=f.int_list("isr"),
        controller_epoch=f.integer("controller_epoch") or 0,
        version=f.integer("version", required=False),  # TopicPartitionStateZNode.decode does not read it
        leader_recovery_state=f.integer("leader_recovery_state", required=False) or 0,
        zk_version=context.stat.version if context.stat is not None else None,
        # KRaft's own (KIP-966), in the states zkstorm's KRaft reader renders: absent over ZooKeeper
        eligible_leader_replicas=_optional_ids(f, "eligible_leader_replicas"),
        last_known_elr=_optional_ids(f, "last_known_elr"),
    )
    f.check("partition state")
    records = [
        state,
        *_warnings(context, "kafka_partition_state", parsed, _version_warning(f, state.version, 1, "state")),
    ]
    # TopicPartitionStateZNode.decode: LeaderRecoveryState.of(value.toByte) knows 0 (RECOVERED) and 1
    # (RECOVERING, KIP-704); anything else fails the read. The leader and ISR read as any state's: kept
    # (the value as written), flagged
    recovery = (state.leader_recovery_state + 128) % 256 - 128
    if recovery not in (0, 1):
        raise DecodeError(
            f"leader_recovery_state {state.leader_recovery_state} is not 0 (recovered) or 1 (recovering): "
            "Kafka cannot read this state",
            failure_type=FailureType.INVALID_VALUE,
            records=records,
        )
    state.leader_recovery_state = recovery
    return records


# --- controller ---------------------------------------------------------------------------------------


def decode_controller(context: DecodeContext, data: bytes | None) -> list[Any]:
    if not data:
        return _warnings(context, "kafka_controller", None, [("empty_data", "no data where a payload belongs")])
    ephemeral = bool(context.stat.ephemeralOwner) if context.stat is not None else True
    text = data.decode("utf-8", "replace").strip()
    if DIGITS.match(text):  # before 0.8.1: the bare broker id
        controller = KafkaController(
            root=context.root,
            broker_id=int(text),
            version=0,
            timestamp_ms=None,
            elected_at=None,
            kraft_controller_epoch=None,
            ephemeral=ephemeral,
        )
        return [controller, *_warnings(context, "kafka_controller", None, [("legacy_format", "a bare broker id")])]
    parsed = load_json(data)
    context.encoding = parsed.encoding
    f = Fields(json_object(parsed, "the controller znode"))
    version = f.integer("version")
    broker_id = f.integer("brokerid")
    timestamp = f.str_ms("timestamp", required=False)
    kraft_epoch = f.integer("kraftControllerEpoch", required=False)
    f.check("controller znode")
    controller = KafkaController(
        root=context.root,
        broker_id=broker_id if broker_id is not None else -1,
        version=version or 0,
        timestamp_ms=timestamp,
        elected_at=_ms(timestamp),
        kraft_controller_epoch=kraft_epoch,
        ephemeral=ephemeral,
    )
    extra = _version_warning(f, version, 2, "controller znode")
    return [controller, *_warnings(context, "kafka_controller", parsed, extra)]


def _bare_number(context: DecodeContext, data: bytes | None, kind: str) -> tuple[int | None, list[Any]]:
    if not data:
        return None, _warnings(context, kind, None, [("empty_data", "no data where a number belongs")])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"not UTF-8 at offset {exc.start}", failure_type=FailureType.INVALID_UTF8, offset=exc.start
        ) from None
    stripped = text.strip(" \t\r\n")
    if not DIGITS.match(stripped):
        raise DecodeError(f"expected a bare decimal number, got {text[:40]!r}", failure_type=FailureType.INVALID_NUMBER)
    warnings = [("whitespace_trimmed", "whitespace around the number was trimmed")] if stripped != text else []
    return int(stripped), _warnings(context, kind, None, warnings)


def decode_controller_epoch(context: DecodeContext, data: bytes | None) -> list[Any]:
    epoch, warnings = _bare_number(context, data, "kafka_controller_epoch")
    if epoch is None:
        return warnings
    zk_version = context.stat.version if context.stat is not None else None
    return [KafkaControllerEpoch(root=context.root, epoch=epoch, zk_version=zk_version), *warnings]


# --- configs ------------------------------------------------------------------------------------------

# Kafka's own secrets: every config its ConfigDefs declare ``Type.PASSWORD`` (apache/kafka 3.x:
# ``SslConfigs``, ``SaslConfigs``, ``BrokerSecurityConfigs``, ``PasswordEncoderConfigs``,
# ``DelegationTokenManagerConfigs``, ``ZkConfigs``; ``delegation.token.master.key`` is the older name of
# ``delegation.token.secret.key``). Matched as a suffix of the key, as ``DynamicBrokerConfig.isPasswordConfig``
# matches them, so per-listener overrides (``listener.name.sasl_ssl.plain.sasl.jaas.config``) count too.
KAFKA_PASSWORD_CONFIGS = (
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    "sasl.jaas.config",
    "password.encoder.secret",
    "password.encoder.old.secret",
    "delegation.token.secret.key",
    "delegation.token.master.key",
    "zookeeper.ssl.keystore.password",
    "zookeeper.ssl.truststore.password",
)
# Everyone else's secrets, under names of their own (Schema Registry's basic.auth.user.info, a connector's
# *.api.key, an S3 plugin's s3.access, …): the key is split into words (at . _ - / and camelCase), and a
# secret word anywhere, a secret fragment inside a word, or a last word that names a key or a pass
# marks it. This errs on the side of hiding: a false alarm costs a --show-secrets, a miss leaks.
_SECRET_WORDS = frozenset(
    {"pass", "pwd", "secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "jaas"}
)
_SECRET_FRAGMENTS = ("password", "passwd", "passphrase", "secret", "token", "credential", "jaas", "apikey")
_SECRET_PAIRS = frozenset({("user", "info"), ("api", "key"), ("private", "key"), ("access", "key")})
# A last word that names a key (ssl.keystore.key, *.api.key, *.secret.key; among Kafka's own configs only
# secrets end in "key"), a pass, or an access key (s3.access)
_SECRET_LAST_WORDS = frozenset({"key", "keys", "pass", "pwd", "access", "userinfo"})
# ... unless the last word says the value is a measure or a kind, not the secret itself
# (delegation.token.max.lifetime.ms, password.encoder.iterations, password.encoder.key.length)
_MEASURE_WORDS = frozenset(
    {"ms", "secs", "seconds", "minutes", "hours", "algorithm", "iterations", "length", "size", "bytes", "count"}
)
_WORD_BREAK = re.compile(r"[._\-/:\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Values that are secrets whatever their key: SCRAM credentials (salt=…), Kafka's PasswordEncoder output
# (…,encryptedPassword:…), a JAAS line or any k=v holding a password, a PEM private key or certificate.
_SECRET_VALUE = re.compile(r"salt=|encryptedpassword:|password\s*=|-----begin |^\[encrypted\]", re.I)


def is_sensitive_config(entity_type: str, key: str, value: str) -> bool:
    """Is this config entry a secret: SCRAM credentials, Kafka's password configs, anything named like a
    password, token, credential or key, or a value that looks like one."""
    if key.upper().startswith("SCRAM-") or _SECRET_VALUE.search(value):
        return True
    lowered = key.lower()
    if lowered.endswith(KAFKA_PASSWORD_CONFIGS):
        return True
    words = [w for w in _WORD_BREAK.split(_CAMEL.sub(".", key).lower()) if w]
    if not words or words[-1] in _MEASURE_WORDS:
        return False
    return (
        words[-1] in _SECRET_LAST_WORDS
        or any(word in _SECRET_WORDS for word in words)
        or any(fragment in word for word in words for fragment in _SECRET_FRAGMENTS)
        or any(pair in _SECRET_PAIRS for pair in pairwise(words))
    )


def _redact(key: str, value: str) -> str:
    if key.upper().startswith("SCRAM-"):
        iterations = re.search(r"iterations=(\d+)", value)
        return f"{REDACTED} (iterations={iterations.group(1)})" if iterations else REDACTED
    return REDACTED


@_payload("kafka_config")
def decode_config(context: DecodeContext, parsed: Json) -> list[Any]:
    segments = context.segments
    if len(segments) >= 5 and segments[-4] == "users" and segments[-2] == "clients":
        entity_type, entity_name = "users/clients", f"{segments[-3]}/clients/{segments[-1]}"
    else:
        entity_type, entity_name = segments[-2], segments[-1]
    f = Fields(json_object(parsed, "a config znode"))
    # ConfigEntityZNode.decode (ZkData.scala) reads "config" alone, when it is there: a znode without a
    # version, or without overrides, is one Kafka reads
    version = f.integer("version", required=False)
    config = f.obj_field("config", required=False)
    for key, value in config.items():
        if not isinstance(value, str):
            f.errors.append(f"config.{key}: expected a string, got {json_type(value)}")
    f.check("config znode")
    rows = []
    for key, value in sorted(config.items()):
        sensitive = is_sensitive_config(entity_type, key, value)
        shown = value if (context.show_secrets or not sensitive) else _redact(key, value)
        context.redacted = context.redacted or shown is not value  # the raw bytes hold it too
        rows.append(
            KafkaConfig(
                root=context.root,
                entity_type=entity_type,
                entity_name=entity_name,
                key=key,
                value=shown,
                sensitive=sensitive,
            )
        )
    if not rows:  # every override deleted: the entity is still there
        rows.append(
            KafkaConfig(
                root=context.root,
                entity_type=entity_type,
                entity_name=entity_name,
                key=None,
                value=None,
                sensitive=False,
            )
        )
    extra = _version_warning(f, version, 1, "config znode")
    return [*rows, *_warnings(context, "kafka_config", parsed, extra)]


def decode_config_change(context: DecodeContext, data: bytes | None) -> list[Any]:
    node = context.segments[-1]
    if not data:
        return _warnings(context, "kafka_config_change", None, [("empty_data", "no data where a payload belongs")])
    parsed = load_json(data)
    context.encoding = parsed.encoding
    if isinstance(parsed.value, str):  # 0.8.1-0.8.2: the JSON string of a topic name
        change = KafkaConfigChange(
            root=context.root, node=node, sequence=_sequence(node), version=0, entity_path=f"topics/{parsed.value}"
        )
        return [change, *_warnings(context, "kafka_config_change", parsed)]
    f = Fields(json_object(parsed, "a config change"))
    version = f.integer("version")
    # 0.9-0.10.0 wrote entity_type and entity_name; 0.10.1+ writes entity_path
    path = f"{f.string('entity_type')}/{f.string('entity_name')}" if version == 1 else f.string("entity_path") or ""
    f.check("config change")
    change = KafkaConfigChange(
        root=context.root, node=node, sequence=_sequence(node), version=version or 0, entity_path=path
    )
    return [change, *_warnings(context, "kafka_config_change", parsed, _version_warning(f, version, 2, "change"))]


# --- ACLs ---------------------------------------------------------------------------------------------

# Kafka's AclOperation and AclPermissionType, by the names SecurityUtils gives them (Pascal case):
# ``SecurityUtils.operation``/``permissionType`` look a name up as written, then upper-cased against the
# upper-cased Pascal names ("READ", "read", "DescribeConfigs", "DESCRIBECONFIGS"; not "describe_configs"),
# and read any other name as Unknown
ACL_OPERATIONS = (
    "Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction",
    "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens",
)  # fmt: skip
ACL_PERMISSIONS = ("Unknown", "Any", "Deny", "Allow")
_ACL_NAMES = {
    kind: {**{name: name for name in names}, **{name.upper(): name for name in names}}
    for kind, names in (("operation", ACL_OPERATIONS), ("permissionType", ACL_PERMISSIONS))
}


def canonical_acl_name(kind: str, written: str) -> str:
    """The name Kafka gives an ACL's ``operation`` or ``permissionType`` as written in its znode."""
    names = _ACL_NAMES[kind]
    return names.get(written) or names.get(written.upper()) or "Unknown"


def _acl_entry(
    entry: dict[str, Any], where: str, f: Fields, refused: list[str]
) -> tuple[list[str], list[tuple[str, str]]] | None:
    """principal, permission, operation and host of one ACL entry, named as Kafka names them, and the
    notes its reading raised; None (with ``f``'s errors) when the entry is not what ``AclEntry.fromBytes``
    can read. Kafka refuses a principal without its type (``SecurityUtils.parseKafkaPrincipal``) and an
    operation or permission of Any (``AccessControlEntry``): the entry is read all the same, and why
    Kafka refuses it is added to ``refused`` (``invalid_value``)."""
    e = Fields(entry)
    values = [e.string(k) for k in ("principal", "permissionType", "operation", "host")]
    f.errors += [f"{where}.{msg}" for msg in e.errors]
    if e.errors:
        return None
    principal, permission, operation, host = (v or "" for v in values)
    if ":" not in principal:
        refused.append(f"{where}.principal: {principal!r} is not principalType:name")
    notes = []
    named = []
    for kind, written in (("permissionType", permission), ("operation", operation)):
        name = canonical_acl_name(kind, written)
        if name == "Any":
            refused.append(f"{where}.{kind}: Any is a filter, not an ACL")
        if name == "Unknown" and written.upper() != "UNKNOWN":
            notes.append(("unknown_acl_name", f"{where}.{kind} {written!r} is none Kafka knows: it reads as Unknown"))
        named.append(name)
    return [principal, named[0], named[1], host], notes


def _acl_decoder(pattern_type: str) -> Decoder:
    @_payload("kafka_acl")
    def decode_acl(context: DecodeContext, parsed: Json) -> list[Any]:
        segments = context.segments
        resource_type, resource_name = segments[-2], segments[-1]
        f = Fields(json_object(parsed, "an ACL znode"))
        version = f.integer("version")
        entries = f.list_field("acls")
        rows = []
        notes: list[tuple[str, str]] = []
        refused: list[str] = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                f.errors.append(f"acls[{i}]: expected an object, got {json_type(entry)}")
                continue
            read = _acl_entry(entry, f"acls[{i}]", f, refused)
            if read is not None:
                (principal, permission, operation, host), entry_notes = read
                notes += entry_notes
                rows.append(
                    KafkaAcl(
                        root=context.root,
                        pattern_type=pattern_type,
                        resource_type=resource_type,
                        resource_name=resource_name,
                        principal=principal,
                        permission_type=permission,
                        operation=operation,
                        host=host,
                    )
                )
        f.check("ACL znode")
        if version != 1:  # AclEntry.fromBytes: Utils.require(version == 1); version 1 is the only layout there is
            refused.insert(0, f"ACL znode version {version}: Kafka reads version 1 only")
        if not rows:  # an ACL znode whose list is empty: the resource is still listed
            empty = KafkaAcl(
                root=context.root,
                pattern_type=pattern_type,
                resource_type=resource_type,
                resource_name=resource_name,
                principal=None,
                permission_type=None,
                operation=None,
                host=None,
            )
            rows.append(empty)
        extra = [*notes, *_version_warning(f, version, 1, "ACL znode")]
        records = [*rows, *_warnings(context, "kafka_acl", parsed, extra)]
        if refused:
            # AclEntry.fromBytes fails on the whole znode, so none of these ACLs is in force; what they
            # say reads all the same: kept, each flagged
            raise DecodeError(
                f"{'; '.join(refused)}: Kafka cannot read these ACLs",
                failure_type=FailureType.INVALID_VALUE,
                records=records,
            )
        return records

    return decode_acl


def decode_acl_change_literal(context: DecodeContext, data: bytes | None) -> list[Any]:
    node = context.segments[-1]
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"not UTF-8 at offset {exc.start}", failure_type=FailureType.INVALID_UTF8, offset=exc.start
        ) from None
    resource_type, sep, name = text.partition(":")
    if not sep:
        raise DecodeError(f"expected Type:name, got {text[:60]!r}", failure_type=FailureType.WRONG_TYPE)
    return [
        KafkaAclChange(
            root=context.root,
            node=node,
            sequence=_sequence(node),
            pattern_type="LITERAL",
            resource_type=resource_type.upper(),
            resource_name=name,
        )
    ]


@_payload("kafka_acl_change")
def decode_acl_change_extended(context: DecodeContext, parsed: Json) -> list[Any]:
    node = context.segments[-1]
    f = Fields(json_object(parsed, "an ACL change"))
    f.integer("version")
    change = KafkaAclChange(
        root=context.root,
        node=node,
        sequence=_sequence(node),
        pattern_type=f.string("patternType") or "",
        resource_type=(f.string("resourceType") or "").upper(),
        resource_name=f.string("name") or "",
    )
    f.check("ACL change")
    return [change, *_warnings(context, "kafka_acl_change", parsed)]


# --- admin and notifications --------------------------------------------------------------------------


def _topic_partitions(f: Fields, with_replicas: bool) -> list[tuple[str, int, tuple[int, ...]]]:
    out = []
    for i, entry in enumerate(f.list_field("partitions")):
        if not isinstance(entry, dict):
            f.errors.append(f"partitions[{i}]: expected an object, got {json_type(entry)}")
            continue
        e = Fields(entry)
        topic, partition = e.string("topic"), e.integer("partition")
        replicas = e.int_list("replicas") if with_replicas else ()
        f.errors += [f"partitions[{i}].{msg}" for msg in e.errors]
        if not e.errors:
            out.append((topic or "", partition or 0, replicas))
    return out


@_payload("kafka_reassignment")
def decode_admin_reassignment(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "a reassignment"))
    f.integer("version")
    rows = [
        KafkaReassignment(root=context.root, topic=t, partition=p, target_replicas=r, source="admin")
        for t, p, r in _topic_partitions(f, True)
    ]
    f.check("reassignment")
    return [*rows, *_warnings(context, "kafka_reassignment", parsed)]


@_payload("kafka_preferred_election")
def decode_preferred_election(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "a preferred replica election"))
    f.integer("version", required=False)
    rows = [KafkaPreferredElection(root=context.root, topic=t, partition=p) for t, p, _ in _topic_partitions(f, False)]
    f.check("preferred replica election")
    return [*rows, *_warnings(context, "kafka_preferred_election", parsed)]


def decode_topic_deletion(context: DecodeContext, data: bytes | None) -> list[Any]:
    marked = context.stat.ctime if context.stat is not None else None
    return [KafkaTopicDeletion(root=context.root, topic=context.segments[-1], marked_ms=marked)]


@_payload("kafka_isr_change")
def decode_isr_change(context: DecodeContext, parsed: Json) -> list[Any]:
    node = context.segments[-1]
    f = Fields(json_object(parsed, "an ISR change notification"))
    f.integer("version")
    rows = [
        KafkaIsrChange(root=context.root, node=node, topic=t, partition=p) for t, p, _ in _topic_partitions(f, False)
    ]
    f.check("ISR change notification")
    rows = rows or [KafkaIsrChange(root=context.root, node=node, topic=None, partition=None)]
    return [*rows, *_warnings(context, "kafka_isr_change", parsed)]


@_payload("kafka_log_dir_event")
def decode_log_dir_event(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "a log dir event"))
    f.integer("version")
    event = KafkaLogDirEvent(
        root=context.root,
        node=context.segments[-1],
        broker_id=f.integer("broker") or -1,
        event=f.integer("event") or 0,
    )
    f.check("log dir event")
    return [event, *_warnings(context, "kafka_log_dir_event", parsed)]


# --- old consumers ------------------------------------------------------------------------------------


@_payload("kafka_consumer_member")
def decode_consumer_member(context: DecodeContext, parsed: Json) -> list[Any]:
    segments = context.segments
    f = Fields(json_object(parsed, "a consumer registration"))
    version = f.integer("version", required=False)
    subscription = f.obj_field("subscription")
    pattern = f.string("pattern", required=False)
    timestamp = f.str_ms("timestamp", required=False)
    f.check("consumer registration")
    member = KafkaConsumerMember(
        root=context.root,
        group=segments[-3],
        consumer_id=segments[-1],
        version=version,
        subscription=tuple(f"{topic}={streams}" for topic, streams in sorted(subscription.items())),
        pattern=pattern,
        timestamp_ms=timestamp,
    )
    return [member, *_warnings(context, "kafka_consumer_member", parsed)]


def decode_consumer_owner(context: DecodeContext, data: bytes | None) -> list[Any]:
    segments = context.segments
    try:
        owner = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"not UTF-8 at offset {exc.start}", failure_type=FailureType.INVALID_UTF8, offset=exc.start
        ) from None
    partition = segments[-1]
    return [
        KafkaConsumerOwner(
            root=context.root,
            group=segments[-4],
            topic=segments[-2],
            partition=partition_number(partition),
            owner_thread=owner,
        )
    ]


def decode_consumer_offset(context: DecodeContext, data: bytes | None) -> list[Any]:
    segments = context.segments
    offset, warnings = _bare_number(context, data, "kafka_consumer_offset")
    if offset is None:
        return warnings
    partition = segments[-1]
    row = KafkaConsumerOffset(
        root=context.root,
        group=segments[-4],
        topic=segments[-2],
        partition=partition_number(partition),
        offset=offset,
    )
    return [row, *warnings]


# --- cluster-wide -------------------------------------------------------------------------------------


@_payload("kafka_cluster_id")
def decode_cluster_id(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "the cluster id"))
    record = KafkaClusterId(root=context.root, cluster_id=f.string("id") or "", version=f.string("version") or "")
    f.check("cluster id")
    return [record, *_warnings(context, "kafka_cluster_id", parsed)]


def decode_producer_id_block(context: DecodeContext, data: bytes | None) -> list[Any]:
    """``latest_producer_id_block``. Kafka creates it empty at startup (``KafkaZkClient.createTopLevelPaths``),
    and it stays empty until a producer id is first needed: ``ZkProducerIdManager`` reads no data as "no
    block allocated yet" and allocates the first from 0. Empty is a fresh cluster then, not a fault: no
    record and no warning (a real 3.9 and 2.8 cluster leave it so; tests/data/real)."""
    if not data:
        return []
    return _decode_producer_id_block(context, data)


@_payload("kafka_producer_id_block")
def _decode_producer_id_block(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "the producer id block"))
    version = f.integer("version")
    broker = f.integer("broker")
    start, end = f.str_ms("block_start"), f.str_ms("block_end")
    f.check("producer id block")
    block = KafkaProducerIdBlock(
        root=context.root,
        version=version or 0,
        broker_id=broker if broker is not None else -1,
        block_start=start or 0,
        block_end=end or 0,
    )
    return [block, *_warnings(context, "kafka_producer_id_block", parsed)]


@_payload("kafka_feature")
def decode_feature(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "the feature znode"))
    version = f.integer("version")
    status = f.integer("status")
    features = f.obj_field("features", required=False)
    f.check("feature znode")
    # a KRaft cluster's metadata version is a feature (``metadata.version``, its level); ZooKeeper's /feature
    # never holds it
    spec = features.get("metadata.version")
    level = spec.get("max_version_level") if isinstance(spec, dict) else None
    level = level if isinstance(level, int) and not isinstance(level, bool) else None
    record = KafkaFeature(
        root=context.root,
        version=version or 0,
        status="Enabled" if status == 1 else "Disabled",
        finalized_features=tuple(f"{name}={_range(spec)}" for name, spec in sorted(features.items())),
        metadata_version_level=level,
        metadata_version=None if level is None else METADATA_VERSIONS.get(level, f"level {level}"),
    )
    return [record, *_warnings(context, "kafka_feature", parsed, _version_warning(f, version, 2, "feature znode"))]


@_payload("kafka_migration")
def decode_migration(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "the migration znode"))
    values = [
        f.integer(k)
        for k in (
            "version",
            "kraft_metadata_offset",
            "kraft_controller_id",
            "kraft_metadata_epoch",
            "kraft_controller_epoch",
        )
    ]
    f.check("migration znode")
    version, offset, controller, metadata_epoch, controller_epoch = (v if v is not None else -1 for v in values)
    record = KafkaMigration(
        root=context.root,
        version=version,
        kraft_metadata_offset=offset,
        kraft_controller_id=controller,
        kraft_metadata_epoch=metadata_epoch,
        kraft_controller_epoch=controller_epoch,
        zk_version=context.stat.version if context.stat is not None else None,
        modified_ms=context.stat.mtime if context.stat is not None else None,
    )
    return [record, *_warnings(context, "kafka_migration", parsed)]


@_payload("kafka_delegation_token")
def decode_delegation_token(context: DecodeContext, parsed: Json) -> list[Any]:
    f = Fields(json_object(parsed, "a delegation token"))
    token = KafkaDelegationToken(
        root=context.root,
        token_id=context.segments[-1],
        owner=f.string("owner", required=False) or "",
        expiry_ms=f.integer("expiryTimestamp", required=False),
        max_ms=f.integer("maxTimestamp", required=False),
    )
    f.check("delegation token")
    return [token]  # renewers, requester and issue time are not exported: token metadata only


# MetadataVersion's feature levels and names (apache/kafka server-common MetadataVersion.java; to 4.5-IV0, as
# kafka-server-common 4.4.0 lists them)
METADATA_VERSIONS = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2", 7: "3.3-IV3",
    8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1", 14: "3.6-IV2",
    15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0",
    22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0",
    29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2", 34: "4.5-IV0",
}  # fmt: skip


def register(registry: Any = REGISTRY) -> None:
    r = registry.register
    r(KAFKA, "brokers/ids/*", "kafka_broker", decode_broker, lambda rs: _broker_summary(rs[0]), broker_placeholder)
    r(KAFKA, "brokers/topics/*", "kafka_topic", decode_topic, lambda rs: _topic_summary(rs[0]), topic_placeholder)
    r(
        KAFKA,
        "brokers/topics/*/partitions/*/state",
        "kafka_partition_state",
        decode_partition_state,
        lambda rs: state_summary(rs[0]),
    )
    r(KAFKA, "controller", "kafka_controller", decode_controller, lambda rs: _controller_summary(rs[0]))
    r(
        KAFKA,
        "controller_epoch",
        "kafka_controller_epoch",
        decode_controller_epoch,
        lambda rs: f"epoch {rs[0].epoch}" if isinstance(rs[0], KafkaControllerEpoch) else rs[0].warning,
    )
    for pattern in (
        "config/topics/*",
        "config/clients/*",
        "config/users/*",
        "config/users/*/clients/*",
        "config/brokers/*",
        "config/ips/*",
    ):
        r(KAFKA, pattern, "kafka_config", decode_config, _config_summary, may_hold_secrets=True)
    r(
        KAFKA,
        "config/changes/*",
        "kafka_config_change",
        decode_config_change,
        lambda rs: f"change of {rs[0].entity_path}" if isinstance(rs[0], KafkaConfigChange) else rs[0].warning,
    )
    r(KAFKA, "kafka-acl/*/*", "kafka_acl", _acl_decoder("LITERAL"), _acl_summary)
    r(KAFKA, "kafka-acl-extended/prefixed/*/*", "kafka_acl", _acl_decoder("PREFIXED"), _acl_summary)
    r(
        KAFKA,
        "kafka-acl-changes/*",
        "kafka_acl_change",
        decode_acl_change_literal,
        lambda rs: f"{rs[0].resource_type}:{rs[0].resource_name}",
    )
    r(
        KAFKA,
        "kafka-acl-extended-changes/*",
        "kafka_acl_change",
        decode_acl_change_extended,
        lambda rs: f"{rs[0].pattern_type} {rs[0].resource_type}:{rs[0].resource_name}",
    )
    r(
        KAFKA,
        "admin/reassign_partitions",
        "kafka_reassignment",
        decode_admin_reassignment,
        lambda rs: f"{sum(isinstance(x, KafkaReassignment) for x in rs)} partitions to move",
    )
    r(
        KAFKA,
        "admin/preferred_replica_election",
        "kafka_preferred_election",
        decode_preferred_election,
        lambda rs: f"{sum(isinstance(x, KafkaPreferredElection) for x in rs)} partitions",
    )
    r(KAFKA, "admin/delete_topics/*", "kafka_topic_deletion", decode_topic_deletion, lambda rs: "marked for deletion")
    r(
        KAFKA,
        "isr_change_notification/*",
        "kafka_isr_change",
        decode_isr_change,
        lambda rs: f"{sum(isinstance(x, KafkaIsrChange) for x in rs)} ISR changes pending",
    )
    r(
        KAFKA,
        "log_dir_event_notification/*",
        "kafka_log_dir_event",
        decode_log_dir_event,
        lambda rs: f"log dir failure on broker {rs[0].broker_id}",
    )
    r(
        KAFKA,
        "consumers/*/ids/*",
        "kafka_consumer_member",
        decode_consumer_member,
        lambda rs: f"{rs[0].pattern or 'static'} {', '.join(rs[0].subscription)}",
    )
    r(KAFKA, "consumers/*/owners/*/*", "kafka_consumer_owner", decode_consumer_owner, lambda rs: rs[0].owner_thread)
    r(
        KAFKA,
        "consumers/*/offsets/*/*",
        "kafka_consumer_offset",
        decode_consumer_offset,
        lambda rs: f"offset {rs[0].offset}" if isinstance(rs[0], KafkaConsumerOffset) else rs[0].warning,
    )
    r(KAFKA, "cluster/id", "kafka_cluster_id", decode_cluster_id, lambda rs: f"cluster {rs[0].cluster_id}")
    r(
        KAFKA,
        "latest_producer_id_block",
        "kafka_producer_id_block",
        decode_producer_id_block,
        lambda rs: f"ids {rs[0].block_start}..{rs[0].block_end} (broker {rs[0].broker_id})",
    )
    r(KAFKA, "feature", "kafka_feature", decode_feature, lambda rs: f"features {rs[0].status}")
    r(
        KAFKA,
        "migration",
        "kafka_migration",
        decode_migration,
        lambda rs: f"migrated to KRaft (controller {rs[0].kraft_controller_id})",
    )
    r(
        KAFKA,
        "delegation_token/tokens/*",
        "kafka_delegation_token",
        decode_delegation_token,
        lambda rs: "token (metadata only)",
    )


def broker_placeholder(context: DecodeContext, status: str) -> KafkaBroker | None:
    name = context.segments[-1]
    if not name.lstrip("-").isdigit():
        return None
    return empty_broker(int(name), alive=True, root=context.root, decode_status=status)  # registered: its znode exists


def empty_broker(broker_id: int, *, alive: bool, root: str, decode_status: str = "ok") -> KafkaBroker:
    """A broker known by its id alone: named in a replica list, or registered with bytes that say
    nothing (``decode_status`` says why)."""
    return KafkaBroker(
        root=root,
        broker_id=broker_id,
        alive=alive,
        version=None,
        host=None,
        port=None,
        rack=None,
        jmx_port=None,
        timestamp_ms=None,
        registered_at=None,
        endpoints=(),
        listener_protocols=(),
        features=(),
        broker_epoch=None,
        session_id=None,
        decode_status=decode_status,
    )


def topic_placeholder(context: DecodeContext, status: str) -> KafkaTopic:
    return KafkaTopic(
        root=context.root,
        topic=context.segments[-1],
        version=None,
        topic_id=None,
        partition_count=None,
        replication_factor=None,
        reassigning_partitions=None,
        decode_status=status,
    )


def _broker_summary(b: Any) -> str:
    if not isinstance(b, KafkaBroker):
        return str(getattr(b, "warning", ""))
    where = f" rack {b.rack}" if b.rack else ""
    return f"v{b.version} {', '.join(b.endpoints)}{where}"


def _topic_summary(t: Any) -> str:
    if not isinstance(t, KafkaTopic):
        return str(getattr(t, "warning", ""))
    moving = f", {t.reassigning_partitions} reassigning" if t.reassigning_partitions else ""
    return f"{t.partition_count} partitions x{t.replication_factor}{moving}"


def state_summary(s: Any) -> str:
    """A partition state's summary (also what ``changes`` keeps with a state it reads straight)."""
    if not isinstance(s, KafkaPartitionState):
        return str(getattr(s, "warning", ""))
    leader = "no leader" if s.leader == -1 else f"leader {s.leader}"
    return f"{leader} epoch {s.leader_epoch} isr {list(s.isr)}"


def _controller_summary(c: Any) -> str:
    if not isinstance(c, KafkaController):
        return str(getattr(c, "warning", ""))
    kraft = " (KRaft controller)" if c.kraft_controller_epoch is not None and c.kraft_controller_epoch >= 0 else ""
    return f"broker {c.broker_id}{kraft}"


def _config_summary(rows: list[Any]) -> str:
    configs = [r for r in rows if isinstance(r, KafkaConfig) and r.key is not None]
    hidden = sum(r.sensitive for r in configs)
    return f"{len(configs)} settings" + (f" ({hidden} redacted)" if hidden else "")


def _acl_summary(rows: list[Any]) -> str:
    return f"{sum(isinstance(r, KafkaAcl) and r.principal is not None for r in rows)} ACLs"


register()
