"""Replaying logged txns onto the few snapshot nodes they touch (zookeeper-files.md §13).

Only the nodes a txn names (and their parents, and the ephemerals of sessions that close) are held in
memory: an overlay of path → node state, or None for "does not exist". The snapshot stream is then
read once more and every node is taken from the overlay where it has one. The rules are ZooKeeper's
``DataTree.processTxn``, including the idempotent ones that make fuzzy snapshots safe.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .jute import CONTAINER_OWNER, ephemeral_type
from .txnlog import (
    CREATE,
    Check,
    CloseSession,
    Create,
    CreateSession,
    Delete,
    Multi,
    SetAcl,
    SetData,
    Txn,
)

# Field positions in a node state list (StatPersisted order, after the ACL key, as the file stores it).
ACL, CZXID, MZXID, CTIME, MTIME, VERSION, CVERSION, AVERSION, OWNER, PZXID, DATA = range(11)


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def paths_named(txns: Iterable[Txn]) -> tuple[set[str], set[int]]:
    """Every path the txns name, with its parent, and the sessions that close (their ephemerals go)."""
    paths: set[str] = set()
    closing: set[int] = set()

    def add(body: Any) -> None:
        if isinstance(body, (Create, Delete, SetData, SetAcl, Check)) and body.path.startswith("/"):
            paths.add(body.path)
            paths.add(parent_of(body.path))
        elif isinstance(body, Multi):
            for _, sub in body.ops:
                add(sub)

    for txn in txns:
        add(txn.body)
        if isinstance(txn.body, CloseSession):
            closing.add(txn.session)
            for path in txn.body.paths or ():
                paths.add(path)
                paths.add(parent_of(path))
    return paths, closing


@dataclass
class Overlay:
    """Node states for the paths replay touches; ``None`` marks a path that does not exist."""

    nodes: dict[str, list[Any] | None] = field(default_factory=dict)
    in_snapshot: set[str] = field(default_factory=set)
    sessions: dict[int, int] = field(default_factory=dict)
    applied: int = 0
    last_zxid: int | None = None
    last_time_ms: int | None = None
    ephemerals: dict[int, set[str]] = field(default_factory=dict)  # session → the paths it owns here
    last_digest: int | None = None  # the TxnDigest of the last txn that carried one

    def load(self, path: str, data: bytes | None, fields: tuple[int, ...]) -> None:
        state: list[Any] = list(fields)
        state.append(data)
        self.nodes[path] = state
        self.in_snapshot.add(path)
        self._own(path, state[OWNER])

    def _own(self, path: str, owner: int) -> None:
        if owner != 0 and ephemeral_type(owner) == "ephemeral":
            self.ephemerals.setdefault(owner, set()).add(path)

    def apply(self, txn: Txn) -> None:
        body = txn.body
        if isinstance(body, Multi):
            if not body.failed:  # a failed multi is logged whole and changes nothing
                for kind, sub in body.ops:
                    self._apply(kind, sub, txn)
        elif isinstance(body, CreateSession):
            self.sessions[txn.session] = body.timeout_ms
        elif isinstance(body, CloseSession):
            for path in body.paths or ():
                self._delete(path, txn.zxid)
            for path in sorted(self.ephemerals.pop(txn.session, ())):  # what the session still owns
                self._delete(path, txn.zxid)
            self.sessions.pop(txn.session, None)
        else:
            self._apply(txn.type, body, txn)
        self.applied += 1
        self.last_zxid, self.last_time_ms = txn.zxid, txn.time_ms
        if txn.digest is not None:
            self.last_digest = txn.digest[1]

    def _apply(self, kind: int, body: Any, txn: Txn) -> None:
        if isinstance(body, Create):
            self._create(kind, body, txn)
        elif isinstance(body, Delete):
            self._delete(body.path, txn.zxid)
        elif isinstance(body, SetData):
            node = self.nodes.get(body.path)
            if node is not None:
                node[DATA], node[VERSION], node[MZXID], node[MTIME] = body.data, body.version, txn.zxid, txn.time_ms
        elif isinstance(body, SetAcl):
            node = self.nodes.get(body.path)
            if node is not None:
                node[AVERSION] = body.version
        # check and error (failed) txns change nothing

    def _create(self, kind: int, body: Create, txn: Txn) -> None:
        parent = self.nodes.get(parent_of(body.path))
        if parent is None:
            return  # NoNode: ZooKeeper ignores it on replay
        new_cversion = parent[CVERSION] + 1 if body.parent_cversion == -1 else body.parent_cversion
        if self.nodes.get(body.path) is not None:
            # NodeExists: a fuzzy snapshot already holds it. Plain creates still raise the parent's cversion.
            if kind == CREATE and new_cversion > parent[CVERSION]:
                parent[CVERSION], parent[PZXID] = new_cversion, txn.zxid
            return
        owner = {
            "persistent": 0,
            "ephemeral": txn.session,
            "container": CONTAINER_OWNER,
            "ttl": (-1 << 56) | (body.ttl & ((1 << 40) - 1)),
        }[body.kind]
        zxid, time_ms = txn.zxid, txn.time_ms
        self.nodes[body.path] = [0, zxid, zxid, time_ms, time_ms, 0, 0, 0, owner, zxid, body.data]
        self._own(body.path, owner)
        if new_cversion > parent[CVERSION]:
            parent[CVERSION], parent[PZXID] = new_cversion, zxid

    def _delete(self, path: str, zxid: int) -> None:
        parent = self.nodes.get(parent_of(path))
        if parent is not None:
            parent[PZXID] = max(parent[PZXID], zxid)
        node = self.nodes.get(path)
        if node is not None and node[OWNER] in self.ephemerals:
            self.ephemerals[node[OWNER]].discard(path)
        self.nodes[path] = None

    def new_children(self) -> dict[str, list[str]]:
        """Nodes that exist after replay but not in the snapshot, by parent path."""
        out: dict[str, list[str]] = {}
        for path, node in self.nodes.items():
            if node is not None and path not in self.in_snapshot and path != "/":
                out.setdefault(parent_of(path), []).append(path)
        return out
