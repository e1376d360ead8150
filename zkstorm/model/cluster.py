"""The cluster model: one ZooKeeper ensemble, or one server's files, seen as the Storm and Kafka clusters
that keep their metadata in it.

Every user of zkstorm (each CLI command, the nightly snapshot, ``diff --live``, a notebook) asks a
``Cluster``. It owns the source (a live read-only session or ZooKeeper's files: the same small contract),
turns what the source reads into typed records through the decoder registry, and keeps the undecodable
and unreadable znodes it met in ``problems`` instead of raising: a view always shows what it could read.

    with zkstorm.connect("zk1:2181,zk2:2181", kafka_root="/kafka") as cluster:
        for worker in cluster.storm.workers(stale_after_secs=60):
            ...
        findings = cluster.kafka.health()
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from ..decode.registry import DETAIL_COLUMNS, REGISTRY, Detail, Registry
from ..defaults import KAFKA_ROOT, STALE_AFTER_SECS, STORM_ROOT
from ..errors import NotAllowedError, NotFoundError, RootNotFoundError, UsageError
from ..layout import STORM, Roots, ancestors, discover_roots, is_secret_path, join, merged, root_kinds
from ..records import (
    DecodeFailure,
    DecodeWarning,
    KafkaRoot,
    KafkaTopic,
    StormComponent,
    StormError,
    StormExecutor,
    StormExecutorStatColumns,
    StormLeaderInfo,
    StormLeaderLatch,
    StormNimbus,
    StormRoot,
    StormSupervisor,
    StormWorker,
    Unreadable,
    ZkUsage,
    Znode,
)
from ..redact import REDACTED
from ..sources.base import BatchListing, RawNode, Source, WalkStats
from .decode_helper import DecodeHelper
from .kafka import KafkaCluster, missing_brokers, with_deletions
from .kafka_health import kafka_health_records
from .kafka_state import KafkaStateBuilder
from .storm import (
    StormCluster,
    join_workers,
    leader_of,
    merge_last_errors,
    with_leadership,
    worker_hosts,
)
from .storm_stats import ExecutorFigures, every_component_stats
from .walk import decode_node, decode_one, decoded_walk

if TYPE_CHECKING:
    from ..ensemble import Ensemble
    from ..sources.live import ReadOnlySession


@dataclasses.dataclass
class ZnodeDetail:
    """One znode as ``get`` shows it: its record, what its decoder made of it, and its value when no
    decoder claims it (parsed JSON or text; None for binary, and for secrets unless asked)."""

    znode: Znode
    records: list[Any]
    value: Any
    redacted: bool  # a secret subtree's payload, or one its decoder redacted a secret in: hidden
    data: bytes | None  # None when redacted

    def raw_hex(self) -> str | None:
        """The bytes as hex (``get --raw``), a line saying they are hidden when the znode holds secrets, or
        None when it has no data."""
        if not self.znode.data_length:
            return None
        return "(hidden: this znode holds secrets; add --show-secrets)" if self.redacted else (self.data or b"").hex()

    def document(self, *, raw: bool = False) -> dict[str, Any]:
        """The znode as one JSON document (``get -f json``): its stat, its decoded records (each with its
        ``kind``), its plain value, whether it was hidden, and with ``raw`` its bytes as hex."""
        from ..schema import kind_name, to_jsonable

        return {
            "znode": to_jsonable(self.znode),
            "records": [{"kind": kind_name(type(r)), **to_jsonable(r)} for r in self.records],
            "value": self.value,
            "redacted": self.redacted and not self.records,
            "raw_hex": self.raw_hex() if raw else None,
        }

    def flat(self) -> tuple[list[str], list[dict[str, Any]]]:
        """The znode as flat rows (``get -f csv``): its stat columns, then every decoded record's own
        columns (a name the stat already has is prefixed with the record's kind), one row per decoded
        record with the stat repeated; one row with a ``value`` column (JSON) when nothing decoded it."""
        from ..schema import kind_name, to_jsonable

        stat = to_jsonable(self.znode)
        header = list(stat)
        rows: list[dict[str, Any]] = []
        for record in self.records:
            kind = kind_name(type(record))
            row = dict(stat, record_kind=kind)
            for name, value in to_jsonable(record).items():
                column = f"{kind}.{name}" if name in stat else name
                row[column] = value
                if column not in header:
                    header.append(column)
            rows.append(row)
        if self.records:
            header.insert(len(stat), "record_kind")
            return header, rows
        value = (
            REDACTED
            if self.redacted
            else (json.dumps(self.value, ensure_ascii=False) if self.value is not None else None)
        )
        return [*header, "value"], [dict(stat, value=value)]


SNAPSHOT_USAGE_DEPTH = 2  # the snapshot's zk_usage subtrees: /kafka/brokers, /storm/workerbeats
SNAPSHOT_LARGEST_ZNODES = 100  # and its largest znodes


class _StormJoins:
    """One Storm root's records that its views show joined, held until the walk ends: workers with their
    host, age and stale flag (from the assignments and supervisors), errors merged per topology, nimbuses
    with the leader that the latches (or ``leader-info``) name, and the component stats. The latches
    themselves are rows too; the assignments, supervisors and components are streamed as they come."""

    HELD = frozenset({StormWorker, StormError, StormNimbus, StormLeaderLatch, StormLeaderInfo})

    def __init__(self, root: str) -> None:
        self.root = root
        self.workers: list[StormWorker] = []
        self.executors: list[StormExecutor] = []
        self.supervisors: list[StormSupervisor] = []
        self.components: list[StormComponent] = []
        self.figures: list[ExecutorFigures] = []  # a few sums per executor, not the counter rows
        self.errors: dict[str, list[StormError]] = {}
        self.nimbuses: list[StormNimbus] = []
        self.latches: list[StormLeaderLatch] = []
        self.infos: list[StormLeaderInfo] = []

    def hold(self, record: Any) -> None:
        kind = type(record)
        if kind is StormWorker:
            self.workers.append(record)
        elif kind is StormError:
            self.errors.setdefault(record.topology_id, []).append(record)
        elif kind is StormNimbus:
            self.nimbuses.append(record)
        elif kind is StormLeaderLatch:
            self.latches.append(record)
        else:
            self.infos.append(record)

    def rows(self, now: float, stale_after_secs: float) -> Iterator[Any]:
        joined = join_workers(self.workers, worker_hosts(self.executors, self.supervisors), now, stale_after_secs)
        yield from joined
        errors: list[StormError] = []
        for found in self.errors.values():
            merged_errors = merge_last_errors(found)
            errors += merged_errors
            yield from merged_errors
        yield from with_leadership(self.nimbuses, leader_of(self.latches, self.infos))
        yield from self.latches
        yield from self.infos
        yield from every_component_stats(self.components, self.executors, self.figures, joined, errors, root=self.root)


class Cluster:
    """A read-only view of the Storm and Kafka clusters on one source.

    ``storm_root`` and ``kafka_root`` choose the clusters the ``storm`` and ``kafka`` views read; ``get``,
    ``walk`` and the snapshot decode any path under any root in ``roots`` (the flags' roots always count).
    """

    def __init__(
        self,
        source: Source,
        *,
        storm_root: str = STORM_ROOT,
        kafka_root: str = KAFKA_ROOT,
        show_secrets: bool = False,
        registry: Registry = REGISTRY,
        decode_helper: bool = False,
    ) -> None:
        self.source = source
        self.storm_root = storm_root
        self.kafka_root = kafka_root
        self.show_secrets = show_secrets
        self.registry = registry
        self.roots = Roots(storm=(storm_root,), kafka=(kafka_root,))
        # DecodeFailure and Unreadable records the reads met, and DecodeWarning notes (decoded the way
        # Kafka would, leniently): kept for the caller to report; a view never raises over one znode
        self.problems: list[Any] = []
        self.stats = WalkStats()
        self.walked_roots = self.roots  # what the last snapshot walk decoded under (every root it found)
        # costly payloads decoded in a helper process while the walk goes on (model.decode_helper): opt-in, since
        # a library should not start processes behind its caller's back; the CLI turns it on
        self.helper = DecodeHelper(decode_node) if decode_helper else None
        self._opened = False

    # lifecycle ----------------------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        self.source.connect()
        self._opened = True

    def _ensure_open(self) -> None:
        """Open the source now if the caller has not: a view that may not need it (``ensemble``) opens it
        only when it walks the tree."""
        if not self._opened:
            self.open()

    def close(self) -> None:
        if self.helper is not None:
            self.helper.close()
        self.source.close()

    def now(self) -> float:
        """The time the data is as of: now for a live ensemble, the last replayed txn for files."""
        return float(self.source.as_of())

    # the per-system views -----------------------------------------------------------------------------

    @cached_property
    def storm(self) -> StormCluster:
        return StormCluster(self, self.storm_root)

    @cached_property
    def kafka(self) -> KafkaCluster:
        return KafkaCluster(self, self.kafka_root)

    def storm_at(self, root: str) -> StormCluster:
        """The Storm view of another root than ``storm_root`` (``get`` joins a record under its own root)."""
        return StormCluster(self, root)

    def storm_roots(self) -> list[StormRoot]:
        """Every Storm root on the ensemble, with its topology count."""
        return [
            StormRoot(root=root, num_topologies=len(self.children(f"{root}/storms")))
            for root in self.discover_storm_roots()
        ]

    def kafka_roots(self) -> list[KafkaRoot]:
        """Every Kafka chroot on the ensemble, with its broker and topic counts."""
        rows = []
        for root in self.discover_kafka_roots():
            brokers, topics = (len(self.children(join(root, sub))) for sub in ("brokers/ids", "brokers/topics"))
            rows.append(KafkaRoot(root=root, brokers=brokers, topics=topics))
        return rows

    def discover_storm_roots(self) -> list[str]:
        """Every znode that holds both ``storms`` and ``assignments``."""
        return list(self.discovered_roots.storm)

    def discover_kafka_roots(self) -> list[str]:
        """Every znode that holds ``brokers/ids`` or ``brokers/topics``."""
        return list(self.discovered_roots.kafka)

    @cached_property
    def discovered_roots(self) -> Roots:
        """Every Storm root and Kafka chroot on the source, found by listing names only (``layout``), a
        level of the tree at a time; a source that knows its roots says them (a KRaft folder: ``kraft:``)."""
        declared = getattr(self.source, "declared_roots", None)
        if declared is not None:
            return declared  # type: ignore[no-any-return]
        return discover_roots(self.children_of)

    @cached_property
    def decode_roots(self) -> Roots:
        """The roots a walk or a snapshot decodes under: the chosen ones and every discovered one, so a
        second cluster on the ensemble is decoded without naming it."""
        return merged(self.roots, self.discovered_roots)

    def roots_for(self, path: str) -> Roots:
        """The roots ``get`` of ``path`` decodes under: the chosen ones and any ancestor of ``path`` that
        is a root (a listing per ancestor, not a search of the ensemble)."""
        storm, kafka = [], []
        for ancestor in ancestors(path):
            kinds = root_kinds(self.children(ancestor), partial(self.children, join(ancestor, "brokers")))
            storm += [ancestor] * ("storm" in kinds)
            kafka += [ancestor] * ("kafka" in kinds)
        return merged(self.roots, Roots(storm=tuple(storm), kafka=tuple(kafka)))

    # reads --------------------------------------------------------------------------------------------

    def note_problems(self, records: list[Any]) -> None:
        self.problems.extend(r for r in records if isinstance(r, DecodeFailure | Unreadable | DecodeWarning))

    def decoded(
        self, path: str, *, depth: int | None = None, detail: Detail = False, roots: Roots | None = None
    ) -> Iterator[tuple[str, list[Any]]]:
        """(path, records) of every znode under ``path`` (to ``depth``), decoded under ``roots`` (the
        cluster's own by default; a view passes its root); nothing when ``path`` is absent. Failure
        records are yielded with the rest and noted in ``problems``."""
        try:
            for node_path, _, records in self._walk_under(roots or self.roots, path, depth=depth, detail=detail):
                self.note_problems(records)
                yield node_path, records
        except NotFoundError:
            return

    def records(
        self, path: str, *, depth: int | None = None, detail: Detail = False, roots: Roots | None = None
    ) -> Iterator[Any]:
        """Every decoded record (and failure record) under ``path``; nothing when it is absent."""
        for _, records in self.decoded(path, depth=depth, detail=detail, roots=roots):
            yield from records

    def children(self, path: str) -> list[str]:
        """Child names of ``path`` in name order; none when it is absent or may not be listed (NoAuth)."""
        try:
            return list(self.source.get_children(path))
        except (NotFoundError, NotAllowedError):
            return []

    def children_of(self, paths: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
        """(path, child names) for each of ``paths`` (none when absent or not listable): in batches where
        the source can list many at once, else one listing each."""
        source = self.source
        if isinstance(source, BatchListing):
            for path, names in source.children_of(paths):
                yield path, names or []
        else:
            for path in paths:
                yield path, self.children(path)

    def exists(self, path: str) -> bool:
        return bool(self.source.exists(path))

    def _decoded_walk(
        self, path: str, *, depth: int | None = None, detail: Detail = False, found: list[Roots] | None = None
    ) -> Iterator[tuple[str, Znode | None, list[Any]]]:
        """The walk behind ``walk`` and the snapshot: decoded under every root on the source. Where a
        listing is cheap the roots are found first (``decode_roots``); over ZooKeeper's files they are
        found by the walk itself (``decoded_walk(discover=True)``), and appended to ``found``."""
        roots = self.roots
        cheap = self.source.cheap_listings
        if cheap:
            roots = self.decode_roots
            if found is not None:
                found.append(roots)
        return self._walk_under(roots, path, depth=depth, detail=detail, discover=not cheap, found=found)

    def _walk_under(
        self,
        roots: Roots,
        path: str,
        *,
        depth: int | None,
        detail: Detail,
        discover: bool = False,
        found: list[Roots] | None = None,
    ) -> Iterator[tuple[str, Znode | None, list[Any]]]:
        """``decoded_walk`` of this cluster's source, registry, secrets setting, counters and helper."""
        return decoded_walk(
            self.source,
            path,
            roots=roots,
            registry=self.registry,
            show_secrets=self.show_secrets,
            detail=detail,
            depth=depth,
            stats=self.stats,
            helper=self.helper,
            discover=discover,
            found=found,
        )

    def walk(self, path: str = "/", *, depth: int | None = None) -> Iterator[Any]:
        """Every znode under ``path`` as a ``Znode`` followed by its decoded records or failure record
        (an unreadable znode as an ``Unreadable``); ``NotFoundError`` when ``path`` is absent."""
        for _, znode, records in self._decoded_walk(path, depth=depth):
            if znode is not None:
                yield znode
            self.note_problems(records)
            yield from records

    def tree(self, path: str = "/", *, depth: int | None = None) -> Iterator[Znode | Unreadable | DecodeFailure]:
        """What ``zkstorm tree`` shows of ``walk``: every ``Znode`` (its summary decoded), and the
        ``DecodeFailure`` or ``Unreadable`` records, not the decoded records themselves; problems are
        noted as ``walk`` notes them. One loop, since it runs once per znode of the whole tree."""
        problems = self.problems
        for _, znode, records in self._decoded_walk(path, depth=depth):
            if znode is not None:
                yield znode
            for record in records:
                kind = type(record)
                if kind is DecodeFailure or kind is Unreadable:
                    problems.append(record)
                    yield record
                elif kind is DecodeWarning:
                    problems.append(record)

    def get(self, path: str) -> ZnodeDetail:
        """One znode: its record, its decoded records, and its plain value when nothing decodes it."""
        raw: RawNode = self.source.get(path)
        roots = self.roots_for(path)
        znode, records, decoder_redacted = decode_one(
            raw, roots=roots, registry=self.registry, show_secrets=self.show_secrets, detail=True
        )
        self.note_problems(records)
        records = self._joined(records)
        # a secret subtree, or a znode whose decoder hid a secret in it (a topic's sasl.jaas.config): its
        # bytes and plain value hold what the records hide
        redacted = (is_secret_path(znode.path) or decoder_redacted) and not self.show_secrets
        value = None if records or redacted else plain_value(raw.data, znode.encoding)
        return ZnodeDetail(znode, records, value, redacted, None if redacted else raw.data)

    def _joined(self, records: list[Any]) -> list[Any]:
        """One znode's records with what only a join fills, as the views show them: a worker's host, age
        and stale flag (its topology's assignment, the supervisors, the time of the read) and whether a
        nimbus leads (the leader latches), read through the view of the record's own root."""
        out = []
        for record in records:
            kind = type(record)
            try:
                if kind is StormWorker:
                    view = self.storm_at(record.root)
                    record = view.joined_workers([record], f"/{record.topology_id}")[0]
                elif kind is StormNimbus:
                    record = with_leadership([record], self.storm_at(record.root).leader())[0]
            except RootNotFoundError:  # a heartbeat left under a root that holds no Storm cluster now
                pass
            out.append(record)
        return out

    # ZooKeeper itself ---------------------------------------------------------------------------------

    def ensemble(self, *, admin_port: int | None = 8080) -> Ensemble:
        """The ensemble of a live source: its members (``members()``: the ``--zk`` hosts and the peers its
        configuration names, read with four-letter words, or the AdminServer on ``admin_port`` where they
        are not whitelisted; None never asks it) and its health (``health()``). The members are read
        whether or not a session can be made; the session opens only to read what they cannot say
        (``/zookeeper/config``, the walk for znodes near ``jute.maxbuffer``)."""
        from ..ensemble import Ensemble, ReadOptions

        session = self.live_session()
        if session is None:
            raise UsageError("the ensemble's members are read from a live ensemble (--zk); ZooKeeper's files have none")
        context = session.ssl_context()
        options = ReadOptions(admin_port=admin_port or None, wrap=context.wrap_socket if context is not None else None)
        return Ensemble(
            session.target.hosts,
            timeout=session.timeout,
            options=options,
            read_config=self._ensemble_config,
            large_znodes=self._large_znodes,
        )

    def live_session(self) -> ReadOnlySession | None:
        """The source when it is a live ensemble's read-only session (None for ZooKeeper's files)."""
        from ..sources.live import ReadOnlySession

        return self.source if isinstance(self.source, ReadOnlySession) else None

    def _ensemble_config(self) -> str | None:
        """The ``/zookeeper/config`` znode (dynamic reconfiguration's ``server.N`` lines), read at the
        ensemble's root whatever the ``--zk`` chroot."""
        live = self.live_session()
        assert live is not None  # only an ensemble() of a live source reads it
        with live.without_chroot() as session:
            data = session.get("/zookeeper/config").data
        return data.decode("utf-8", "replace") if data else None

    def _large_znodes(self, min_bytes: int) -> list[Any]:
        """Every znode of at least ``min_bytes`` data, named with its Storm or Kafka meaning; one walk of
        the tree (its data is read, as a walk reads it, and not decoded)."""
        from ..ensemble import LargeZnode
        from ..ensemble.usage import KindLookup, describe_znode

        self._ensure_open()
        kind_of = KindLookup(self.decode_roots, self.registry)
        found = []
        for node in self.source.walk("/", stats=self.stats):
            if not isinstance(node, RawNode):  # Denied: it exists, but may not be read
                self.problems.append(Unreadable(path=node.path, reason=node.reason))
                continue
            stat = node.stat
            if stat.dataLength >= min_bytes:
                meaning = describe_znode(node.path, kind_of(node.path))
                found.append(LargeZnode(node.path, stat.dataLength, meaning))
        return found

    def usage(self, path: str = "/", *, depth: int = 2, largest: int | None = 20) -> list[ZkUsage]:
        """Where the data and znodes are under ``path``: every subtree ``depth`` levels below it, every
        record kind per root, and the ``largest`` largest znodes (every one with None), each group largest
        first, each row named with its Storm or Kafka meaning (``ensemble.usage``). From the znodes' stats:
        a live walk's, or the snapshot's own over ZooKeeper's files; no payload is decoded."""
        from ..ensemble.usage import UsageTally, tally_walk

        tally = UsageTally(path, depth=depth, largest=largest)
        cheap = self.source.cheap_listings
        denied: list[Any] = []
        tally_walk(
            self.source.walk(path, stats=self.stats),
            tally,
            roots=self.decode_roots if cheap else self.roots,
            registry=self.registry,
            discover=not cheap,
            unreadable=denied,
        )
        self.problems.extend(Unreadable(path=d.path, reason=d.reason) for d in denied)
        return tally.rows()

    # the nightly snapshot ----------------------------------------------------------------------------

    def snapshot_records(self, *, stale_after_secs: float = STALE_AFTER_SECS) -> Iterator[Any]:
        """Everything a snapshot keeps, from one walk of the whole source: every znode, every decoded
        record (executor stats included; secrets as the cluster shows them), and the joined rows the views
        show: workers with host, age and stale flag, each error once (``merge_last_errors``), nimbuses
        with their leadership, brokers known only from replica lists, and per Kafka root the partition
        health and findings. What a join needs is held until the walk ends (supervisors, assignments,
        registrations, latches arrive in whatever order the source yields them); everything else
        streams, so a view's row and the Parquet row of the same thing are equal. Then what fills
        ZooKeeper (``ZkUsage``: subtrees two levels deep, record kinds, the largest znodes) and, on a live
        ensemble, its members (``ZkMember``)."""
        from ..ensemble.usage import KindLookup, UsageTally

        now = self.now()
        found: list[Roots] = []  # the roots the walk decodes under (all of them once it has found them)
        self.walked_roots = self.roots
        builders: dict[str, KafkaStateBuilder] = {}
        storm: dict[str, _StormJoins] = {}  # per Storm root: a join never mixes two clusters' rows
        usage = UsageTally("/", depth=SNAPSHOT_USAGE_DEPTH, largest=SNAPSHOT_LARGEST_ZNODES)
        kinds = KindLookup(self.roots, self.registry)
        kafka_over = _KafkaRootOver(self.roots)
        # a heartbeat's counters come as columns (``StormExecutorStatColumns``), written to Parquet as such
        for path, znode, records in self._decoded_walk("/", detail=DETAIL_COLUMNS, found=found):
            roots = found[-1] if found else self.roots
            if znode is not None:
                yield znode
                if kinds.roots is not roots:  # the walk found its roots (at once, or at its end over files)
                    kinds = KindLookup(roots, self.registry)
                claimed = znode.decode_status != "not-decoded"  # decoded, or failed: a decoder claimed it
                usage.add(path, znode.data_length, znode.ephemeral, kinds(path, claimed))
            if kafka_over.roots is not roots:
                kafka_over = _KafkaRootOver(roots)
            kafka_root = kafka_over(path)
            beat_root = ""
            for record in records:
                kind = type(record)
                if kind is KafkaTopic and kafka_root is not None:
                    continue  # held by its root's state, and joined with the deletion markers at the end
                if kind in _StormJoins.HELD:
                    self._storm_joins(storm, record.root).hold(record)
                    continue
                if kind is ExecutorFigures:  # what the heartbeat's counters before it sum to (``decode_node``)
                    self._storm_joins(storm, beat_root).figures.append(record)
                    continue
                if kind is StormExecutorStatColumns:  # one heartbeat's counters
                    beat_root = record.root
                elif kind is StormExecutor:
                    self._storm_joins(storm, record.root).executors.append(record)
                elif kind is StormComponent:
                    self._storm_joins(storm, record.root).components.append(record)
                elif kind is StormSupervisor:
                    self._storm_joins(storm, record.root).supervisors.append(record)
                yield record
            if kafka_root is not None:
                if kafka_root not in builders:
                    builders[kafka_root] = KafkaStateBuilder(kafka_root, keep_other=False)
                builders[kafka_root].add(path, records)  # keep_other=False: only what the joins and rules need
        self.walked_roots = found[-1] if found else self.roots
        for joins in storm.values():
            yield from joins.rows(now, stale_after_secs)
        for builder in builders.values():
            state = builder.state
            yield from with_deletions(state.topics, state.deletions)  # as ``kafka topics`` shows them
            if not state.registered and not state.assignments and state.controller is None:
                continue  # no Kafka cluster at this root
            yield from missing_brokers(state.brokers, state.registered, state.assignments, state.root)
            yield from kafka_health_records(state, int(now * 1000))
        yield from usage.rows()
        if self.live_session() is not None:  # a live ensemble: its members as read now
            yield from self.ensemble().members()

    @staticmethod
    def _storm_joins(storm: dict[str, _StormJoins], root: str) -> _StormJoins:
        joins = storm.get(root)
        if joins is None:
            joins = storm[root] = _StormJoins(root)
        return joins

    @property
    def source_problems(self) -> list[str]:
        """What the source could not read, one line each (a best-effort read of files names the damage it
        stopped at): for the caller to report beside ``problems``."""
        return self.source.problems()

    # what changed, from the logs --------------------------------------------------------------------

    def changes(
        self,
        *,
        since: int | datetime | timedelta | None = None,
        until: int | datetime | timedelta | None = None,
        stale_after_secs: float = STALE_AFTER_SECS,
        select: Any = None,
    ) -> Any:
        """What changed between ``since`` and ``until`` (zxids, datetimes, or timedeltas back from the last
        logged txn; by default all the logs hold), as a ``zkstorm.changes.ChangeLog``: iterate it for the
        change records, then ask for its ``summary()``. Only a cluster on ZooKeeper's files has a history
        to read (``from_files``), or on a KRaft metadata folder (``from_kraft``: ``since``/``until`` as
        an int are log offsets; ``zkstorm.changes.kraft``); its source need not be opened. ``select`` is a
        ``zkstorm.changes.ChangeFilter``."""
        from ..changes import ChangeLog
        from ..sources.files.source import FileSource
        from ..sources.kraft.source import KraftSource

        source = self.source
        if isinstance(source, KraftSource):  # a KRaft metadata log: its batches, in offsets
            from ..changes.kraft import KRAFT_HANDLERS, KraftChangeReader

            reader = KraftChangeReader(source.folder, since=since, until=until, best_effort=source.best_effort)
            return ChangeLog(
                (),
                roots=source.declared_roots,
                show_secrets=self.show_secrets,
                stale_after_secs=stale_after_secs,
                select=select,
                reader=reader,
                handlers=KRAFT_HANDLERS,
            )
        if not isinstance(source, FileSource):
            raise UsageError(
                "changes are read from ZooKeeper's transaction logs: open the cluster on its files "
                "(zkstorm.from_files, --from-files DATADIR)"
            )
        return ChangeLog(
            source.paths,
            since=since,
            until=until,
            best_effort=source.best_effort,
            roots=self.roots,
            show_secrets=self.show_secrets,
            stale_after_secs=stale_after_secs,
            select=select,
        )

    def describe_source(self) -> dict[str, Any]:
        """What was read, for a snapshot's manifest: the ensemble, or the files and what they gave."""
        return self.source.describe()

    def default_name(self) -> str:
        """A cluster name when none is given (the source knows: an ensemble host, or this host)."""
        return self.source.default_cluster_name()


def plain_value(data: bytes | None, encoding: str) -> Any:
    """An undecoded payload shown as what it is: parsed JSON, text, or nothing for binary."""
    if not data:
        return None
    if encoding == "json":
        text = data.decode("utf-8-sig")
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    if encoding == "text":
        return data.decode("utf-8-sig")
    return None


_PARENTS_KEPT = 4096  # a million partitions are a million parents: memory stays bounded


class _KafkaRootOver:
    """The deepest Kafka root over a path (the path itself included), or None: the snapshot asks it for
    every znode, so it is worked out once per parent (the roots over a node are those over its parent,
    and the node itself if it is one), not per znode."""

    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self._kafka = frozenset(roots.kafka)
        self._by_parent: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        if path in self._kafka:
            return path
        parent = path.rpartition("/")[0] or "/"
        try:
            return self._by_parent[parent]
        except KeyError:
            pass
        deepest = next((root for system, root, _ in self.roots.locate(parent) if system != STORM), None)
        if len(self._by_parent) >= _PARENTS_KEPT:  # the walk is depth first: the recent parents are the ones asked
            self._by_parent.clear()
        self._by_parent[parent] = deepest
        return deepest
