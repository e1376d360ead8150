"""Where Storm and Kafka keep things: roots, path patterns → record kinds, and the secret subtrees.

Patterns are relative to a system root and written as ``/``-separated segments where ``*`` matches
exactly one segment (``storms/*``, ``brokers/topics/*/partitions/*/state``). A Storm root is
``storm.zookeeper.root`` (default ``/storm``); a Kafka root is the cluster's chroot (default ``/``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, partial

from .defaults import KAFKA_ROOT, STORM_ROOT

STORM = "storm"
KAFKA = "kafka"


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent != "/" else f"/{name}"


def relative_to(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (no leading slash), ``""`` for the root itself, None if outside."""
    if root == "/":
        return path[1:]
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


def name_from_id(topology_id: str) -> str:
    """A topology's name from its id (``{name}-{counter}-{launch_secs}``, Storm's ``Nimbus`` naming), for
    ids whose StormBase gives no name: gone (a killed topology's errors linger), unreadable, or nameless."""
    parts = topology_id.rsplit("-", 2)
    return parts[0] if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit() else topology_id


def matches(pattern: tuple[str, ...], segments: list[str]) -> bool:
    if len(pattern) != len(segments):
        return False
    for p, s in zip(pattern, segments, strict=True):  # noqa: SIM110  (a loop is ~2x faster than all(...) here)
        if p != s and p != "*":
            return False
    return True


@dataclass(frozen=True, slots=True)
class Roots:
    """The Storm and Kafka roots to interpret paths under."""

    storm: tuple[str, ...] = (STORM_ROOT,)
    kafka: tuple[str, ...] = (KAFKA_ROOT,)

    def locate(self, path: str) -> list[tuple[str, str, str]]:
        """Every (system, root, relative path) that ``path`` falls under, most specific root first."""
        by_first, at_top = _ordered(self)
        found = []
        # only the roots under the path's first segment (and "/") can hold it
        for system, root, prefix in by_first.get(path[1:].partition("/")[0], at_top):
            if root == "/":
                found.append((system, root, path[1:]))
            elif path == root:
                found.append((system, root, ""))
            elif path.startswith(prefix):
                found.append((system, root, path[len(prefix) :]))
        return found


_Entry = tuple[str, str, str]


@cache
def _ordered(roots: Roots) -> tuple[dict[str, tuple[_Entry, ...]], tuple[_Entry, ...]]:
    """(system, root, root + "/") by decreasing root length, per first path segment (with the "/" roots
    in each), and the "/" roots alone: computed once per Roots, not per znode."""
    entries = [(STORM, r, r + "/") for r in roots.storm] + [(KAFKA, r, r + "/") for r in roots.kafka]
    entries.sort(key=lambda e: -len(e[1]))
    at_top = tuple(e for e in entries if e[1] == "/")
    firsts = {e[1][1:].partition("/")[0] for e in entries if e[1] != "/"}
    by_first = {
        first: tuple(e for e in entries if e[1] == "/" or e[1][1:].partition("/")[0] == first) for first in firsts
    }
    return by_first, at_top


DEFAULT_ROOTS = Roots()

# the e-nodes Storm keeps per component: reportError deletes the oldest beyond ten
# (storm-client StormClusterStateImpl.reportError)
STORM_ERRORS_KEPT = 10

# Storm UI's stats windows ("Show: 10m 0s / 3h 0m 0s / 1d 0h 0m 0s / All time") → the key a worker
# heartbeat's ExecutorStats keeps each window's counters under (StatsUtil.java)
STATS_WINDOWS = {"10m": "600", "3h": "10800", "1d": "86400", "all": ":all-time"}

# Subtrees whose payloads are secret by nature (docs/storm-layout.md §4, docs/kafka-layout.md §1).
# Their raw bytes and undecoded values are never shown without --show-secrets; decoders of these
# paths redact field by field. They are matched as a path *suffix* under any root: redaction must not
# depend on the operator passing the right --storm-root/--kafka-root (hiding an unrelated node that
# happens to end like one of these is the safe mistake).
SECRET_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("credentials", "*"),
    ("secretkeys", "*", "*", "*"),
    ("config", "users", "*"),
    ("config", "users", "*", "clients", "*"),
    ("config", "brokers", "*"),
    ("delegation_token", "tokens", "*"),
)


def is_secret_path(path: str) -> bool:
    segments = path.strip("/").split("/")
    return any(
        len(segments) >= len(pattern) and matches(pattern, segments[-len(pattern) :]) for pattern in SECRET_PATTERNS
    )


# --- root discovery ------------------------------------------------------------------------------------

# A Storm root holds both of these (docs/storm-layout.md §2); a Kafka chroot holds brokers/ids or brokers/topics.
STORM_ROOT_MARKERS = frozenset({"storms", "assignments"})
KAFKA_ROOT_MARKERS = frozenset({"ids", "topics"})
# Children never searched for another root: ZooKeeper's own, and Storm's and Kafka's known subtrees
# (a root is looked for beside them, not inside them).
NOT_SEARCHED = frozenset(
    {
        "zookeeper",
        "storms", "assignments", "workerbeats", "errors", "supervisors", "nimbuses", "leader-lock", "blobstore",
        "blobstoremaxkeysequencenumber", "credentials", "secretkeys", "logconfigs", "profilerconfig", "profilerconfigs",
        "backpressure", "tasks", "taskbeats", "taskerrors", "leader-info",
        "brokers", "controller", "controller_epoch", "admin", "config", "cluster", "consumers", "kafka-acl",
        "kafka-acl-changes", "kafka-acl-extended", "kafka-acl-extended-changes", "isr_change_notification",
        "log_dir_event_notification", "latest_producer_id_block", "feature", "migration", "delegation_token",
    }
)  # fmt: skip
ROOT_SEARCH_DEPTH = 3  # a root as deep as /clusters/analytics/kafka


def root_kinds(children: Sequence[str], brokers_children: Callable[[], Sequence[str]]) -> set[str]:
    """Which roots a znode is, from its child names (and, when it has ``brokers``, that node's):
    ``storm``, ``kafka``, both or neither. The one rule ``storm roots``, ``kafka roots``, ``get``,
    ``tree`` and the snapshot use."""
    names = set(children)
    kinds = set()
    if names >= STORM_ROOT_MARKERS:
        kinds.add(STORM)
    if "brokers" in names and KAFKA_ROOT_MARKERS & set(brokers_children()):
        kinds.add(KAFKA)
    return kinds


Listing = Callable[[Sequence[str]], Iterable[tuple[str, Sequence[str]]]]


def discover_roots(list_children: Listing, top: str = "/", depth: int = ROOT_SEARCH_DEPTH) -> Roots:
    """Every Storm root and Kafka chroot at ``top`` or up to ``depth`` levels below it, by listing child
    names only (no data is read; known subtrees are not entered). ``list_children`` lists many paths at
    once, giving (path, child names) for each, empty when it is gone: the search reads a whole level in
    one batched call (a live session packs its listings into multiRead requests), since listing the
    100,000 children of one wide znode one request at a time took 75 s before a ``tree`` could start."""
    storm: list[str] = []
    kafka: list[str] = []
    frontier = [top]
    for level in range(depth + 1):
        if not frontier:
            break
        listed = dict(list_children(frontier))
        brokers = dict(list_children([join(p, "brokers") for p in frontier if "brokers" in listed.get(p, ())]))
        below: list[str] = []
        for path in frontier:
            names = listed.get(path, ())
            kinds = root_kinds(names, partial(_names, brokers, join(path, "brokers")))
            if STORM in kinds:
                storm.append(path)
            if KAFKA in kinds:
                kafka.append(path)
            if level < depth and STORM not in kinds:  # nothing but Storm's own subtrees below a Storm root
                below += [join(path, n) for n in names if n not in NOT_SEARCHED]
        frontier = below
    return Roots(storm=tuple(sorted(storm)), kafka=tuple(sorted(kafka)))


def _names(listed: dict[str, Sequence[str]], path: str) -> Sequence[str]:
    return listed.get(path, ())


def merged(*many: Roots) -> Roots:
    """The roots of all of ``many``, each once, in order."""
    return Roots(
        storm=tuple(dict.fromkeys(r for roots in many for r in roots.storm)),
        kafka=tuple(dict.fromkeys(r for roots in many for r in roots.kafka)),
    )


def ancestors(path: str) -> list[str]:
    """``/``, then each ancestor of ``path``, then ``path`` itself."""
    out = ["/"]
    parts = [p for p in path.split("/") if p]
    for i in range(1, len(parts) + 1):
        out.append("/" + "/".join(parts[:i]))
    return out
