"""Which changes to keep: ``--kind``, ``--topic``, ``--topology``, ``--broker``, ``--path``.

Each filter holds when any of its values matches; all the filters given must hold. A filter matches the
fields a change has (a partition change's topic, leader and ISR; an assignment's topology) and, for the
generic records, the path (``…/topics/{topic}/…``, ``…/{topology id}``, ``…/brokers/ids/{id}``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..layout import name_from_id
from ..schema import kind_name

_BROKER_FIELDS = ("broker_id", "leader", "leader_before", "previous_broker_id")
_BROKER_LISTS = ("isr", "isr_before", "replicas", "replicas_before", "adding_replicas", "removing_replicas")


_KINDS: dict[type, str] = {}


def change_kind(record_type: type) -> str:
    """A change record's kind (``kafka_broker_gone``), named once per type."""
    found = _KINDS.get(record_type)
    if found is None:
        found = _KINDS[record_type] = kind_name(record_type)
    return found


@dataclass(frozen=True)
class ChangeFilter:
    kinds: tuple[str, ...] = ()  # kind names or shell patterns: kafka_broker_gone, storm_worker_*
    topics: tuple[str, ...] = ()
    topologies: tuple[str, ...] = ()  # ids or names
    brokers: tuple[int, ...] = ()
    paths: tuple[str, ...] = ()  # a znode and everything under it, or a shell pattern

    def matches(self, change: Any) -> bool:
        if self.kinds and not any(fnmatch.fnmatchcase(change_kind(type(change)), k) for k in self.kinds):
            return False
        if self.topics and not any(_about_topic(change, t) for t in self.topics):
            return False
        if self.topologies and not any(_about_topology(change, t) for t in self.topologies):
            return False
        if self.brokers and not any(_about_broker(change, b) for b in self.brokers):
            return False
        return not self.paths or any(_under(change.path, p) for p in self.paths)


def _segments(path: str) -> list[str]:
    return path.strip("/").split("/")


def _about_topic(change: Any, topic: str) -> bool:
    if getattr(change, "topic", None) == topic:
        return True
    if getattr(change, "entity_type", None) == "topics" and getattr(change, "entity_name", None) == topic:
        return True
    if any(p.rpartition("-")[0] == topic for p in getattr(change, "partitions", ()) or () if isinstance(p, str)):
        return True
    segments = _segments(change.path)
    return any(a in ("topics", "delete_topics") and b == topic for a, b in pairwise(segments))


def _about_topology(change: Any, topology: str) -> bool:
    topology_id = getattr(change, "topology_id", None)
    if topology_id is not None:
        return topology in (topology_id, getattr(change, "name", None), name_from_id(topology_id))
    return any(topology in (s, name_from_id(s)) for s in _segments(change.path))


def _about_broker(change: Any, broker: int) -> bool:
    if any(getattr(change, name, None) == broker for name in _BROKER_FIELDS):
        return True
    if any(broker in (getattr(change, name, None) or ()) for name in _BROKER_LISTS):
        return True
    segments = _segments(change.path)
    return len(segments) >= 3 and segments[-3:-1] == ["brokers", "ids"] and segments[-1] == str(broker)


def _under(path: str, wanted: str) -> bool:
    if any(c in wanted for c in "*?["):
        return fnmatch.fnmatchcase(path, wanted)
    wanted = wanted.rstrip("/") or "/"
    return wanted == "/" or path == wanted or path.startswith(wanted + "/")
