"""The source contract: what the cluster model needs from wherever the tree comes from.

Two sources implement it, the live read-only session (``sources.live``) and ZooKeeper's own snapshot
and log files (``sources.files``); neither imports the other, both import this module. The model
(``zkstorm.model``) is written against ``Source`` only, so every view works on both unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable


class Stat(NamedTuple):
    """ZooKeeper's Stat, in wire order (kazoo's ``ZnodeStat`` has the same fields)."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeralOwner: int
    dataLength: int
    numChildren: int
    pzxid: int


class RawNode(NamedTuple):
    """What a source yields per readable znode: path (as seen through the chroot), stat, data."""

    path: str
    stat: Stat
    data: bytes | None


class Denied(NamedTuple):
    """A znode the server would not let us read (NoAuth) or answered with another error."""

    path: str
    reason: str


@dataclass
class WalkStats:
    """Counters a walk fills in as it goes, for the summary line on stderr and the snapshot manifest."""

    znodes: int = 0
    vanished: int = 0  # deleted between list and get: a normal race, counted and skipped
    unreadable: int = 0
    requests: int = 0
    retries: int = 0
    pending_max: int = 0  # the most reads a walk held waiting at once (bounded by the tree's depth and width)


class Source(Protocol):
    """Read-only access to one ZooKeeper tree.

    ``get`` and ``get_children`` raise ``NotFoundError`` for a path that does not exist. ``walk`` yields
    every node under ``path`` (``path`` included) down to ``max_depth`` levels below it, each once, with
    ``Denied`` for one the source may not read; its order is the source's own (the live walk is
    depth first in batches, in name order, the files in file order), so callers never rely on it.
    """

    @property
    def cheap_listings(self) -> bool:
        """True when a listing costs one request (a live ensemble); False when it needs a pass over the
        data (ZooKeeper's files before their index is built): the model then finds roots during walks."""
        ...

    def connect(self) -> None: ...

    def close(self) -> None: ...

    def get(self, path: str) -> RawNode: ...

    def get_children(self, path: str) -> list[str]: ...

    def exists(self, path: str) -> bool: ...

    def walk(
        self, path: str = "/", *, max_depth: int | None = None, stats: WalkStats | None = None
    ) -> Iterator[RawNode | Denied]: ...

    def as_of(self) -> float:
        """When the state read was current, in epoch seconds."""
        ...

    def describe(self) -> dict[str, Any]:
        """What was read, for a snapshot's manifest."""
        ...

    def default_cluster_name(self) -> str:
        """A cluster name when the user gives none."""
        ...

    def problems(self) -> list[str]:
        """What the source could not read, one line each, for the caller to report: a best-effort read of
        ZooKeeper's files names the damage it stopped at; a live session has none (what it cannot read is
        an ``Unreadable`` record, or an error)."""
        ...


@runtime_checkable
class BatchListing(Protocol):
    """A source that lists many znodes at once (the live session, in multiRead batches): root discovery
    uses it to read a whole level of the tree in a few requests. A source without it is asked one listing
    at a time."""

    def children_of(self, paths: Iterable[str]) -> Iterator[tuple[str, list[str] | None]]:
        """(path, sorted child names) for each of ``paths``, None for one that is gone or may not be
        listed; in the order read."""
        ...
