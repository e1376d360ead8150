"""Replaying logged txns onto the snapshot nodes they touch (zookeeper-files.md §13).

The rules are ZooKeeper's ``DataTree.processTxn``, including the idempotent ones that make fuzzy
snapshots safe; ``Overlay`` applies them to a handful of node states (path → state, or None for "does
not exist"). ``Replay`` decides which handful: a node's state after replay depends only on the txns
that name it, the creates and deletes of its children, its ancestors' own txns (they decide whether it
can be created), and the close of a session that owns it or a child. All of those snapshot states are
known by the time the streamed snapshot leaves the node's subtree, so each touched node is resolved
then, in the same single pass that yields the tree, and memory holds only the current path's ancestors
and the touched children of each.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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


def _ops(txn: Txn) -> Iterator[tuple[int, Any]]:
    """The (type, body) operations a txn applies: a multi's own ops unless it failed."""
    body = txn.body
    if isinstance(body, Multi):
        if not body.failed:
            yield from body.ops
    else:
        yield txn.type, body


class Replay:
    """The logged txns after a snapshot, indexed by the paths they touch, and their global effects.

    ``resolve`` gives a node's state after replay from the snapshot states of the node, its ancestors
    and its touched children, replaying only the txns that can change it (the module docstring says
    why that set suffices).
    """

    def __init__(self, txns: list[Txn], sessions: dict[int, int]) -> None:
        self.txns = txns
        self.naming: dict[str, list[int]] = {}  # path → txns that name it
        self.structural: dict[str, list[int]] = {}  # path → txns that create or delete one of its children
        self.created: dict[str, set[str]] = {}  # path → children some txn creates
        self.deletable: set[str] = set()  # paths some txn deletes
        self.closing: dict[int, list[int]] = {}  # session → the txns that close it
        self.creators: dict[int, set[int]] = {}  # txn → sessions whose ephemerals it creates
        self.sessions = dict(sessions)  # after replay
        self.last_digest: int | None = None  # the TxnDigest of the last txn that carried one
        created_paths = set()
        for i, txn in enumerate(txns):
            body = txn.body
            kind = type(body)
            if txn.digest is not None:
                self.last_digest = txn.digest[1]
            if kind is SetData or kind is SetAcl or kind is Check:  # most of a log, without the multi walk
                if body.path.startswith("/"):
                    self._name(body.path, i, structural=False)
                continue
            if kind is CreateSession:
                self.sessions[txn.session] = body.timeout_ms
                continue
            if kind is CloseSession:
                self.sessions.pop(txn.session, None)
                self.closing.setdefault(txn.session, []).append(i)
                for path in body.paths or ():
                    self._name(path, i, structural=True)
                    self.deletable.add(path)
                continue
            for _, op in _ops(txn):
                if isinstance(op, (Create, Delete, SetData, SetAcl, Check)) and op.path.startswith("/"):
                    changes_parent = isinstance(op, (Create, Delete))
                    self._name(op.path, i, structural=changes_parent)
                    if isinstance(op, Create):
                        self.created.setdefault(parent_of(op.path), set()).add(op.path)
                        created_paths.add(op.path)
                        if op.kind == "ephemeral":
                            self.creators.setdefault(i, set()).add(txn.session)
                    elif isinstance(op, Delete):
                        self.deletable.add(op.path)
        # what every node has to be checked against, in one set: one lookup per streamed node
        self.touched = set(self.naming) | set(self.structural)
        # nodes whose txns only set their data or ACL (most of a production log): settled without an overlay
        self.data_only = set(self.naming).difference(self.structural, self.deletable, created_paths)
        self.applied = len(txns)
        self.last_zxid = txns[-1].zxid if txns else None
        self.last_time_ms = txns[-1].time_ms if txns else None

    def _name(self, path: str, i: int, *, structural: bool) -> None:
        self.naming.setdefault(path, []).append(i)
        if structural and path != "/":
            self.structural.setdefault(parent_of(path), []).append(i)

    def may_vanish(self, path: str, owner: int) -> bool:
        """Whether replay can delete this snapshot node (then its subtree is checked before it streams)."""
        return path in self.deletable or owner in self.closing

    def settle(self, path: str, data: bytes | None, fields: Sequence[Any]) -> list[Any] | None:
        """The state after replay of a snapshot node whose txns only set its data or ACL (nothing else
        can change it: no create or delete of it or its children, no session close that owns it): its
        snapshot state with them applied. None for any other node: that takes ``resolve``."""
        if path not in self.data_only or fields[OWNER] in self.closing:
            return None
        state: list[Any] = [*fields, data]
        txns = self.txns
        for i in self.naming[path]:
            txn = txns[i]
            body = txn.body  # (a failed multi names no path, so it is never one of these)
            for _, op in body.ops if type(body) is Multi else ((0, body),):
                if type(op) is SetData and op.path == path:
                    state[DATA], state[VERSION], state[MZXID], state[MTIME] = op.data, op.version, txn.zxid, txn.time_ms
                elif type(op) is SetAcl and op.path == path:
                    state[AVERSION] = op.version
        return state

    def resolve(
        self,
        path: str,
        ancestors: list[tuple[str, bytes | None, Any]],
        children: dict[str, tuple[bytes | None, Sequence[Any]]],
        state: tuple[bytes | None, Sequence[Any]] | None,
    ) -> Overlay:
        """Replay what can change ``path`` over the snapshot states given (``state`` is the node's own,
        None when the snapshot lacks it); the result holds the node and its children after replay."""
        overlay = Overlay()
        naming = self.naming
        picked: set[int] = set()
        below = path
        for ancestor, data, fields in reversed(ancestors):
            # An ancestor matters when a txn names it or the node below it (it is then that one's parent,
            # needed for a create); the others exist throughout and are left out.
            named = naming.get(ancestor)
            if named:
                picked.update(named)
            if fields is not None and (named or below in naming or below == path):
                overlay.load(ancestor, data, fields)  # fields None: an ancestor replay itself creates
            below = ancestor
        if state is not None:
            overlay.load(path, state[0], state[1])
        for child, (data, fields) in children.items():
            overlay.load(child, data, fields)
        picked.update(naming.get(path, ()))
        picked.update(self.structural.get(path, ()))
        for child in children:
            picked.update(self.naming.get(child, ()))
        owners = {fields[OWNER] for fields in (node for node in overlay.nodes.values() if node is not None)}
        for i in list(picked):
            owners.update(self.creators.get(i, ()))
        for owner in owners:
            picked.update(self.closing.get(owner, ()))
        for i in sorted(picked):
            overlay.apply(self.txns[i])
        return overlay


@dataclass
class Overlay:
    """Node states for the paths replay touches; ``None`` marks a path that does not exist."""

    nodes: dict[str, list[Any] | None] = field(default_factory=dict)
    sessions: dict[int, int] = field(default_factory=dict)
    applied: int = 0
    last_zxid: int | None = None
    last_time_ms: int | None = None
    ephemerals: dict[int, set[str]] = field(default_factory=dict)  # session → the paths it owns here
    last_digest: int | None = None  # the TxnDigest of the last txn that carried one

    def load(self, path: str, data: bytes | None, fields: Sequence[Any]) -> None:
        state: list[Any] = list(fields)
        state.append(data)
        self.nodes[path] = state
        self._own(path, state[OWNER])

    def _own(self, path: str, owner: int) -> None:
        if owner != 0 and ephemeral_type(owner) == "ephemeral":
            self.ephemerals.setdefault(owner, set()).add(path)

    def note(self, txn: Txn) -> None:
        """A txn's effects beyond the node states: sessions opened and closed, the zxid reached."""
        if isinstance(txn.body, CreateSession):
            self.sessions[txn.session] = txn.body.timeout_ms
        elif isinstance(txn.body, CloseSession):
            self.sessions.pop(txn.session, None)
        self.applied += 1
        self.last_zxid, self.last_time_ms = txn.zxid, txn.time_ms
        if txn.digest is not None:
            self.last_digest = txn.digest[1]

    def apply(self, txn: Txn) -> None:
        body = txn.body
        if isinstance(body, CloseSession):
            for path in body.paths or ():
                self._delete(path, txn.zxid)
            for path in sorted(self.ephemerals.pop(txn.session, ())):  # what the session still owns
                self._delete(path, txn.zxid)
        elif not isinstance(body, CreateSession):
            for kind, op in _ops(txn):  # a failed multi is logged whole and changes nothing
                self._apply(kind, op, txn)
        self.note(txn)

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
