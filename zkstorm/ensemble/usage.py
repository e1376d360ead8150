"""What fills ZooKeeper: znodes and data bytes by subtree and by record kind, and the largest znodes, each
named with what it is to Storm or Kafka.

The kind of a znode is the kind of the decoder its path selects (``decode.registry``: ``storm_worker``,
``kafka_partition_state``, ``kafka_consumer_offset`` …); a znode no decoder claims is ``storm_other`` or
``kafka_other`` under a root (the subtrees' own znodes: ``/storm/workerbeats/{topology}``),
``zookeeper`` under ``/zookeeper``, ``other`` elsewhere. Sizes are the data lengths the znodes' stats
give: the live walk's, or the snapshot's own with ``--from-files``. Nothing here reads a payload.

A subtree is a znode ``depth`` levels below the top of the read, with everything under it; a znode less
deep is a subtree of its own. So every znode counts in exactly one subtree, and the subtrees add up to
the whole read. A subtree means what most of its records are (its own undecoded znodes only where it
holds no record), and a root only a flag names, where no record is (the default Kafka root ``/`` of an
ensemble without Kafka there), holds no cluster: its znodes are ``other``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

from ..decode import kafka as _kafka_decoders  # noqa: F401  (registers the Kafka decoders: their kinds)
from ..decode import storm as _storm_decoders  # noqa: F401  (registers the Storm decoders)
from ..decode.registry import REGISTRY, Registry
from ..layout import STORM, Roots, name_from_id
from ..records import ZkUsage

# What each record kind is, said once for tables, findings and the snapshot's ``meaning`` column. Every
# kind the decoder registry knows has one (tests/test_ensemble.py checks it).
KIND_MEANINGS: dict[str, str] = {
    "storm_topology": "Storm topology bases (StormBase)",
    "storm_assignment": "Storm assignments (which executors run where)",
    "storm_supervisor": "Storm supervisor heartbeats",
    "storm_worker": "Storm worker heartbeats",
    "storm_error": "Storm errors",
    "storm_nimbus": "Storm nimbus registrations",
    "storm_leader_latch": "Storm leader election latches",
    "storm_leader_info": "Storm leader info",
    "storm_blob": "Storm blobstore holders",
    "storm_blob_sequence": "Storm blob sequence numbers",
    "storm_log_config": "Storm topology log levels",
    "storm_profile_request": "Storm profiler requests",
    "storm_credentials": "Storm topology credentials",
    "storm_secret_key": "Storm worker secret keys",
    "storm_backpressure": "Storm backpressure",
    "storm_legacy": "Storm 0.5-0.7 task nodes",
    "storm_other": "Storm subtrees' own znodes (not decoded)",
    "kafka_broker": "Kafka broker registrations",
    "kafka_topic": "Kafka topics' replica assignments",
    "kafka_partition_state": "Kafka partition states (leader, ISR)",
    "kafka_controller": "Kafka controller",
    "kafka_controller_epoch": "Kafka controller epoch",
    "kafka_config": "Kafka dynamic configs",
    "kafka_config_change": "Kafka config change notifications",
    "kafka_acl": "Kafka ACLs",
    "kafka_acl_change": "Kafka ACL change notifications",
    "kafka_reassignment": "Kafka reassignment JSON (admin/reassign_partitions)",
    "kafka_preferred_election": "Kafka preferred replica election JSON",
    "kafka_topic_deletion": "Kafka topics marked for deletion",
    "kafka_isr_change": "Kafka ISR-change notifications (left behind when no controller consumes them)",
    "kafka_log_dir_event": "Kafka log dir failure notifications",
    "kafka_consumer_member": "old (ZooKeeper-based) Kafka consumers",
    "kafka_consumer_owner": "old Kafka consumers' partition owners",
    "kafka_consumer_offset": "old Kafka consumers' offsets",
    "kafka_cluster_id": "Kafka cluster id",
    "kafka_producer_id_block": "Kafka producer id block",
    "kafka_feature": "Kafka finalized features",
    "kafka_migration": "Kafka ZooKeeper-to-KRaft migration state",
    "kafka_delegation_token": "Kafka delegation tokens",
    "kafka_other": "Kafka subtrees' own znodes (not decoded)",
    "zookeeper": "ZooKeeper's own (quotas, configuration)",
    "other": "outside any Storm or Kafka root",
}


class Kind(NamedTuple):
    """A znode's record kind, the root it is under (None outside any) and its path relative to it (a tuple:
    one is made per znode read, and a frozen dataclass costs several times as much to build)."""

    kind: str
    root: str | None
    relative: str


def kind_of(path: str, roots: Roots, registry: Registry = REGISTRY) -> Kind:
    """The kind of the decoder ``path`` selects under ``roots``, else the kind of the place it is in."""
    found = registry.lookup(path, roots)
    if found is not None:
        decoder, root, relative = found
        return Kind(decoder.kind, root, relative)
    return unclaimed_kind(path, roots)


def unclaimed_kind(path: str, roots: Roots) -> Kind:
    """The kind of a znode no decoder claims: its place's (``storm_other``, ``zookeeper``, ``other`` …)."""
    if path == "/zookeeper" or path.startswith("/zookeeper/"):
        return Kind("zookeeper", None, path[1:])
    located = roots.locate(path)
    if located:
        system, root, relative = located[0]
        return Kind(f"{system}_other", root, relative)
    return Kind("other", None, path[1:])


class KindLookup:
    """``kind_of`` for a whole walk, with what siblings share reused: a znode whose decoder's pattern ends
    in ``*`` (``workerbeats/*/*``, ``brokers/topics/*/partitions/*/state``) gives its kind to every sibling,
    unless a decoder with a literal last segment could claim one of them (``config/brokers/<default>``
    beside ``config/brokers/*``) or a sibling is itself a root. A snapshot looks every znode up once for its
    decode already; this keeps the second lookup, for ``zk_usage``, to a dictionary's."""

    def __init__(self, roots: Roots, registry: Registry = REGISTRY) -> None:
        self.roots = roots
        self.registry = registry
        self._siblings: dict[str, tuple[str, str | None, str]] = {}  # parent → kind, root, parent's relative
        self._root_parents = {r.rpartition("/")[0] or "/" for r in (*roots.storm, *roots.kafka) if r != "/"}
        decoders = registry.decoders()
        self._shared = {
            id(d)
            for d in decoders
            if d.pattern
            and d.pattern[-1] == "*"
            and not any(
                e.system == d.system
                and len(e.pattern) == len(d.pattern)
                and e.pattern[-1] != "*"
                and all(a == b or "*" in (a, b) for a, b in zip(e.pattern[:-1], d.pattern[:-1], strict=True))
                for e in decoders
            )
        }

    def __call__(self, path: str, claimed: bool = True) -> Kind:
        """The kind of ``path``; ``claimed=False`` when the caller knows no decoder claims it (a
        snapshot's ``decode_status`` says so), which spares the registry's lookup."""
        if not claimed:
            return unclaimed_kind(path, self.roots)
        parent, _, name = path.rpartition("/")
        shared = self._siblings.get(parent)
        if shared is not None:
            kind, root, relative = shared
            return Kind(kind, root, f"{relative}/{name}" if relative else name)
        found = self.registry.lookup(path, self.roots)
        if found is None:
            return unclaimed_kind(path, self.roots)
        decoder, root, relative = found
        if id(decoder) in self._shared and (parent or "/") not in self._root_parents:
            self._siblings[parent] = (decoder.kind, root, relative.rpartition("/")[0])
        return Kind(decoder.kind, root, relative)


def meaning(kind: str) -> str:
    return KIND_MEANINGS.get(kind, kind)


def describe_znode(path: str, found: Kind) -> str:
    """One znode named with what it is: ``assignment of topology wordcount (wordcount-3-1700000000)``,
    ``reassignment JSON (admin/reassign_partitions)``, ``state of partition orders-3``."""
    parts = found.relative.split("/") if found.relative else []
    kind = found.kind

    def topology(topology_id: str) -> str:
        name = name_from_id(topology_id)
        return f"topology {name} ({topology_id})" if name != topology_id else f"topology {topology_id}"

    named: dict[str, Any] = {
        "storm_topology": lambda: f"StormBase of {topology(parts[-1])}",
        "storm_assignment": lambda: f"assignment of {topology(parts[-1])}",
        "storm_worker": lambda: f"heartbeat of worker {parts[-1]} of {topology(parts[-2])}",
        "storm_error": lambda: f"errors of component {unquote(parts[2])} of {topology(parts[1])}",
        "storm_credentials": lambda: f"credentials of {topology(parts[-1])}",
        "storm_supervisor": lambda: f"heartbeat of supervisor {parts[-1]}",
        "storm_nimbus": lambda: f"registration of nimbus {parts[-1]}",
        "storm_log_config": lambda: f"log levels of {topology(parts[-1])}",
        "kafka_topic": lambda: f"replica assignment of topic {parts[-1]}",
        "kafka_partition_state": lambda: f"state of partition {parts[-4]}-{parts[-2]}",
        "kafka_reassignment": lambda: "reassignment JSON (admin/reassign_partitions)",
        "kafka_preferred_election": lambda: "preferred replica election JSON (admin/preferred_replica_election)",
        "kafka_consumer_offset": lambda: f"offset of old consumer group {parts[1]} on {parts[-2]}-{parts[-1]}",
        "kafka_consumer_member": lambda: f"old consumer {parts[-1]} of group {parts[1]}",
        "kafka_isr_change": lambda: f"ISR-change notification {parts[-1]}",
        "kafka_config": lambda: f"dynamic config of {'/'.join(parts[1:])}",
        "kafka_broker": lambda: f"registration of broker {parts[-1]}",
        "kafka_acl": lambda: f"ACLs of {parts[-2]} {parts[-1]}",
    }
    make = named.get(kind)
    if make is not None:
        try:
            return str(make())
        except IndexError:  # a path shorter than its pattern cannot be: the registry matched it
            pass
    where = f" ({found.relative})" if found.relative and kind not in ("other", "zookeeper") else ""
    return f"{meaning(kind)}{where}"


# --- the tally -------------------------------------------------------------------------------------------


@dataclass
class _Group:
    znodes: int = 0
    data_bytes: int = 0
    ephemerals: int = 0
    largest_path: str = ""
    largest_bytes: int = -1
    kinds: Counter[tuple[str, str | None]] = field(default_factory=Counter)

    def add(self, path: str, size: int, ephemeral: bool) -> None:
        self.znodes += 1
        self.data_bytes += size
        self.ephemerals += ephemeral
        if size > self.largest_bytes or (size == self.largest_bytes and path < self.largest_path):
            self.largest_path, self.largest_bytes = path, size


class UsageTally:
    """Znodes counted as they are read (``add``), then the rows of ``zk usage`` and of the snapshot's
    ``zk_usage`` (``rows``): every subtree ``depth`` levels below ``top``, every (root, kind), and the
    ``largest`` largest znodes (all of them with ``largest=None``)."""

    def __init__(self, top: str = "/", *, depth: int = 2, largest: int | None = 20) -> None:
        self.top = top.rstrip("/") or "/"
        self.depth = depth
        self.largest = largest
        self._top_depth = 0 if self.top == "/" else self.top.count("/")
        self.subtrees: dict[str, _Group] = {}
        self.kinds: dict[tuple[str | None, str], _Group] = {}
        self._heap: list[tuple[int, str, Kind]] = []  # the largest znodes: a min-heap by (size, path)
        self._all: list[tuple[int, str, Kind]] = []  # every znode, when largest is None
        self.total_bytes = 0
        self.total_znodes = 0

    def subtree(self, path: str) -> str:
        """``path``'s ancestor ``depth`` levels below the top, or ``path`` when it is less deep."""
        end = 0
        for _ in range(self._top_depth + self.depth):  # to the slash after the subtree's last segment
            end = path.find("/", end + 1)
            if end < 0:
                return path
        return path[:end]

    def add(self, path: str, size: int, ephemeral: bool, found: Kind) -> None:
        self.total_znodes += 1
        self.total_bytes += size
        subtree = self.subtrees.get(self.subtree(path))
        if subtree is None:
            subtree = self.subtrees[self.subtree(path)] = _Group()
        subtree.add(path, size, ephemeral)
        subtree.kinds[(found.kind, found.root)] += 1
        key = (found.root, found.kind)
        group = self.kinds.get(key)
        if group is None:
            group = self.kinds[key] = _Group()
        group.add(path, size, ephemeral)
        if self.largest is None:
            self._all.append((size, _Reversed(path), found))  # type: ignore[arg-type]
        elif self.largest > 0:
            heap = self._heap
            if len(heap) < self.largest:
                heapq.heappush(heap, (size, _Reversed(path), found))  # type: ignore[arg-type]
            elif size >= heap[0][0]:  # most znodes are smaller than the smallest kept: no item made for them
                item = (size, _Reversed(path), found)
                if item > heap[0]:  # type: ignore[operator]
                    heapq.heapreplace(heap, item)  # type: ignore[arg-type]

    def rows(self) -> list[ZkUsage]:
        """Subtrees, then record kinds, then the largest znodes: each group largest first (by bytes, then
        znodes, then name)."""
        return [*self.subtree_rows(), *self.kind_rows(), *self.znode_rows()]

    def _share(self, data_bytes: int) -> float:
        return round(100.0 * data_bytes / self.total_bytes, 2) if self.total_bytes else 0.0

    def _clusters(self) -> set[str]:
        """The roots that hold a cluster: some znode under them is a record the registry knows. A root
        only named by a flag (the default Kafka root ``/`` of an ensemble without Kafka there) holds none,
        and its undecoded znodes are ``other``, not ``kafka_other``."""
        return {root for root, kind in self.kinds if root is not None and not _unclaimed(kind)}

    @staticmethod
    def _placed(kind: str, root: str | None, clusters: set[str]) -> tuple[str, str | None]:
        if kind.endswith("_other") and root not in clusters:
            return "other", None
        return kind, root

    def subtree_rows(self) -> list[ZkUsage]:
        clusters = self._clusters()
        rows = []
        for key, group in self.subtrees.items():
            placed: Counter[tuple[str, str | None]] = Counter()
            for (kind, root), n in group.kinds.items():
                placed[self._placed(kind, root, clusters)] += n
            # the record most of its znodes are (the subtrees' own znodes only where no record is)
            kind, root = min(placed, key=lambda k: (_unclaimed(k[0]), -placed[k], k[0], k[1] or ""))
            rows.append(self._row("subtree", key, meaning(kind), root, group))
        return _largest_first(rows)

    def kind_rows(self) -> list[ZkUsage]:
        clusters = self._clusters()
        groups: dict[tuple[str | None, str], _Group] = {}
        for (root, kind), group in self.kinds.items():
            kind, root = self._placed(kind, root, clusters)
            if (root, kind) in groups:
                groups[(root, kind)] = _merged(groups[(root, kind)], group)
            else:
                groups[(root, kind)] = group
        rows = [self._row("record_kind", kind, meaning(kind), root, group) for (root, kind), group in groups.items()]
        return _largest_first(rows)

    def znode_rows(self) -> list[ZkUsage]:
        clusters = self._clusters()
        items = self._all if self.largest is None else self._heap
        rows = []
        for size, path, found in sorted(items, reverse=True):  # type: ignore[assignment]
            text = str(path)
            kind, root = self._placed(found.kind, found.root, clusters)
            if (kind, root) != (found.kind, found.root):
                found = Kind(kind, root, text[1:])
            rows.append(
                ZkUsage(
                    by="znode",
                    key=text,
                    meaning=describe_znode(text, found),
                    root=found.root,
                    znodes=1,
                    data_bytes=size,
                    ephemerals=0,
                    share_pct=self._share(size),
                    largest_path=text,
                    largest_bytes=size,
                )
            )
        return rows

    def _row(self, by: str, key: str, text: str, root: str | None, group: _Group) -> ZkUsage:
        return ZkUsage(
            by=by,
            key=key,
            meaning=text,
            root=root,
            znodes=group.znodes,
            data_bytes=group.data_bytes,
            ephemerals=group.ephemerals,
            share_pct=self._share(group.data_bytes),
            largest_path=group.largest_path,
            largest_bytes=max(group.largest_bytes, 0),
        )


class _Reversed(str):
    """A path that sorts backwards, so that among znodes of one size the heap keeps, and the rows list
    first, the one whose path sorts first."""

    def __lt__(self, other: object) -> bool:
        return str.__gt__(self, other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return str.__lt__(self, other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        return str.__ge__(self, other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        return str.__le__(self, other)  # type: ignore[operator]


def _unclaimed(kind: str) -> bool:
    return kind.endswith("_other") or kind in ("other", "zookeeper")


def _merged(a: _Group, b: _Group) -> _Group:
    """Two groups' counts as one (kinds that one name stands for)."""
    out = _Group(a.znodes + b.znodes, a.data_bytes + b.data_bytes, a.ephemerals + b.ephemerals)
    out.kinds = a.kinds + b.kinds
    out.largest_path, out.largest_bytes = min(
        (a.largest_path, a.largest_bytes), (b.largest_path, b.largest_bytes), key=lambda p: (-p[1], p[0])
    )
    return out


def _largest_first(rows: list[ZkUsage]) -> list[ZkUsage]:
    return sorted(rows, key=lambda r: (-r.data_bytes, -r.znodes, r.key, r.root or ""))


# --- tallying a walk ---------------------------------------------------------------------------------------


def tally_walk(
    nodes: Iterable[Any],
    tally: UsageTally,
    *,
    roots: Roots,
    registry: Registry = REGISTRY,
    discover: bool = False,
    unreadable: list[Any] | None = None,
) -> Roots:
    """Count every node of a source's walk (``RawNode``; a ``Denied`` one goes to ``unreadable``) into
    ``tally``, with kinds under ``roots``. With ``discover`` (a source whose listings are not cheap:
    ZooKeeper's files) the roots are found from the names the walk itself yields, as
    ``model.walk.decoded_walk(discover=True)`` finds them, and a znode no decoder claims under the roots known so far
    waits (its path, size and flag, not its data) until the walk ends, to be placed under every root
    found. Returns the roots the kinds were taken under."""
    from functools import partial

    from ..layout import KAFKA, ROOT_SEARCH_DEPTH, join, merged, root_kinds

    names: dict[str, set[str]] = {}
    held: list[tuple[str, int, bool]] = []
    lookup = KindLookup(roots, registry)
    near_top = ROOT_SEARCH_DEPTH + 2  # the deepest root's children, and its brokers' (ids, topics)
    for node in nodes:
        stat = getattr(node, "stat", None)
        if stat is None:  # Denied: exists, could not be read
            if unreadable is not None:
                unreadable.append(node)
            continue
        path = node.path
        size, ephemeral = stat.dataLength, stat.ephemeralOwner != 0
        found = lookup(path)
        if discover:
            parent, _, name = path.rpartition("/")
            if parent.count("/") < near_top:
                names.setdefault(parent or "/", set()).add(name)
            if _unclaimed(found.kind) and found.kind != "zookeeper":
                held.append((path, size, ephemeral))
                continue
        tally.add(path, size, ephemeral, found)
    if not discover:
        return roots
    storm, kafka = [], []
    for node_path, children in names.items():
        if node_path.count("/") <= ROOT_SEARCH_DEPTH or node_path == "/":
            kinds = root_kinds(sorted(children), partial(sorted, names.get(join(node_path, "brokers"), ())))
            storm += [node_path] * (STORM in kinds)
            kafka += [node_path] * (KAFKA in kinds)
    everything = merged(roots, Roots(storm=tuple(sorted(storm)), kafka=tuple(sorted(kafka))))
    lookup = KindLookup(everything, registry)
    for path, size, ephemeral in held:
        tally.add(path, size, ephemeral, lookup(path))
    return everything


def usage_rows(rows: list[ZkUsage], by: str | None = None, limit: int | None = None) -> Iterator[ZkUsage]:
    """``rows`` of one grouping (all with None), at most ``limit`` of each grouping (all with None)."""
    seen: Counter[str] = Counter()
    for row in rows:
        if by is not None and row.by != by:
            continue
        seen[row.by] += 1
        if limit is None or seen[row.by] <= limit:
            yield row
