"""Every record zkstorm produces, as flat frozen dataclasses.

One record type feeds the terminal table, JSON, CSV and (later) Parquet: ``schema.py`` derives the
columns from these annotations, so a field added here shows up everywhere with no second schema.
Fields are scalars or tuples of scalars; nested source data becomes its own record keyed by its parent.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Znode:
    """One znode as the walker saw it: the full stat, the data size and the detected encoding.

    ``path`` is absolute on the ensemble (a ``--zk`` chroot is not part of it). Times are epoch ms as
    ZooKeeper stores them; ``ephemeral_owner`` is the owning session id (0 for persistent nodes).
    """

    path: str
    czxid: int
    mzxid: int
    pzxid: int
    ctime_ms: int
    mtime_ms: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    ephemeral: bool
    encoding: str
    summary: str | None = None

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] or "/"


@dataclass(frozen=True, slots=True, kw_only=True)
class Unreadable:
    """A znode that exists but could not be read (``NoAuth``, or a persistent server-side error)."""

    path: str
    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeFailure:
    """A znode whose bytes did not decode as the record its path promises; the walk goes on."""

    path: str
    record_kind: str
    failure_type: str
    reason: str
    size: int
    encoding: str


RECORD_TYPES: tuple[type, ...] = (Znode, Unreadable, DecodeFailure)
