"""Replaying logged txns onto the snapshot nodes they touch (DataTree.processTxn; docs/zookeeper-files.md §13).

The rules are ZooKeeper's ``DataTree.processTxn``, including the idempotent ones that make fuzzy
snapshots safe; ``Overlay`` applies them to a handful of node states (path → state, or None for "does
not exist"). ``Replay`` decides which handful. A node's state after replay depends only on the ops that
name it, the creates and deletes of its children, whether its parent exists when an op creates it,
and the close of a session that owns it or a child. The parent's existence over time (a ``Timeline``)
depends in turn only on the parent's own creates and deletes and on its own parent's timeline. All of
those snapshot states are known by the time the streamed snapshot leaves the node's subtree, so each
touched node is resolved then, in the same single pass that yields the tree, and memory holds only the
current path's ancestors and the touched children of each.

Work is counted in ops, not txns: a multi or a closeSession is split into its ops, each indexed under
the path it names and under that path's parent, so that resolving a node replays the few ops that can
change it and never a whole multi of a thousand creates, nor a close listing a session's thousand
ephemerals, once per node they name. ``Replay.ops_replayed`` counts what the resolves applied (the
tests bound it to keep the whole read linear in the logs).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .jute import CONTAINER_OWNER, ephemeral_type
from .txnlog import (
    CLOSE_SESSION,
    CREATE,
    DELETE,
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


class SessionEnd(NamedTuple):
    """The last op of a closeSession: delete what the session still owns (after its listed paths)."""


_SESSION_END = SessionEnd()

# One op of a txn: (txn, type, body). A multi gives one per sub-txn (none when it failed); a
# closeSession one Delete per path it lists (3.6+ ``paths2Delete``), then a ``SessionEnd``.
Op = tuple[Txn, int, Any]


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def expand(txn: Txn) -> list[tuple[int, Any]]:
    """The (type, body) ops a txn applies, in ZooKeeper's order (``DataTree.processTxn``): a multi's
    own ops unless it failed; a closeSession's listed paths, then the rest the session owns
    (``DataTree.killSession``). Session creates and failed ops change no node: no op."""
    body = txn.body
    kind = type(body)
    if kind is Multi:
        return [] if body.failed else [(sub, op) for sub, op in body.ops if _changes_a_node(op)]
    if kind is CloseSession:
        return [*((DELETE, Delete(path)) for path in body.paths or () if path != "/"), (CLOSE_SESSION, _SESSION_END)]
    if _changes_a_node(body):
        return [(txn.type, body)]
    return []


def _changes_a_node(op: Any) -> bool:
    """A node op, but for a create or delete of the root: ZooKeeper's ``DataTree`` holds the root from
    the start and no request can create or delete it, so only a damaged log holds one (ignored)."""
    return isinstance(op, (SetData, SetAcl, Check)) or (isinstance(op, (Create, Delete)) and op.path != "/")


def _owner(body: Create, session: int) -> int:
    """The ephemeralOwner ZooKeeper stores for a created node (``CreateMode`` → ``EphemeralType``)."""
    if body.kind == "persistent":
        return 0
    if body.kind == "ephemeral":
        return session
    if body.kind == "container":
        return CONTAINER_OWNER
    return (-1 << 56) | (body.ttl & ((1 << 40) - 1))


def _is_ephemeral(owner: int) -> bool:
    """Owned by a session (what its close deletes): not persistent, container or TTL."""
    return owner != 0 and ephemeral_type(owner) == "ephemeral"


class Timeline(NamedTuple):
    """When a node exists during replay: its state before the first op, and the op positions (in
    ``Replay.ops``) after which that flips. ``exists_at`` is a binary search: O(log flips)."""

    initial: bool
    flips: list[int]

    def exists_at(self, seq: int) -> bool:
        """Whether the node exists just before op ``seq`` is applied."""
        return self.initial ^ (bisect_left(self.flips, seq) & 1 == 1)

    @property
    def final(self) -> bool:
        return self.initial ^ (len(self.flips) & 1 == 1)


ALWAYS = Timeline(True, [])  # a snapshot node no op creates or deletes (and the root's parent)


class Replay:
    """The logged txns after a snapshot, split into ops and indexed by the paths they touch.

    ``resolve`` gives a node's state after replay from the snapshot states of the node and its touched
    children and its parent's ``Timeline``, replaying only the ops that can change it (the module
    docstring says why that set suffices). Building the index is O(ops in the logs).
    """

    def __init__(self, txns: list[Txn], sessions: dict[int, int]) -> None:
        self.txns = txns
        self.ops: list[Op] = []
        self.naming: dict[str, list[int]] = {}  # path → ops that name it
        self.structural: dict[str, list[int]] = {}  # path → ops that create or delete one of its children
        self.existence: dict[str, list[int]] = {}  # path → ops that create or delete it
        self.created: dict[str, set[str]] = {}  # path → children some op creates
        self.created_paths: set[str] = set()  # paths some op creates
        self.deletable: set[str] = set()  # paths some op deletes
        self.closing: dict[int, list[int]] = {}  # session → its SessionEnd ops
        self.creators: dict[str, set[int]] = {}  # path → sessions that create it as their ephemeral
        self.child_creators: dict[str, set[int]] = {}  # path → sessions that create an ephemeral child
        self.sessions = dict(sessions)  # after replay
        self.last_digest: int | None = None  # the TxnDigest of the last txn that carried one
        self.ops_replayed = 0  # ops applied by settle/timeline/resolve: the work of a read, for the tests
        ops, naming = self.ops, self.naming
        for txn in txns:
            body = txn.body
            kind = type(body)
            if txn.digest is not None:
                self.last_digest = txn.digest[1]
            if kind is SetData or kind is SetAcl or kind is Check:  # most of a log, without the general path
                if body.path.startswith("/"):
                    naming.setdefault(body.path, []).append(len(ops))
                    ops.append((txn, txn.type, body))
                continue
            if kind is CreateSession:
                self.sessions[txn.session] = body.timeout_ms
                continue
            if kind is CloseSession:
                self.sessions.pop(txn.session, None)
            for op_kind, op in expand(txn):
                seq = len(ops)
                ops.append((txn, op_kind, op))
                if op is _SESSION_END:
                    self.closing.setdefault(txn.session, []).append(seq)
                elif op.path.startswith("/"):
                    self._index(op, seq, txn.session)
        # what every node has to be checked against, in one set: one lookup per streamed node
        self.touched = set(naming) | set(self.structural)
        # nodes whose ops only set their data or ACL (most of a production log): settled without an overlay
        self.data_only = set(naming).difference(self.structural, self.existence)
        self.applied = len(txns)
        self.last_zxid = txns[-1].zxid if txns else None
        self.last_time_ms = txns[-1].time_ms if txns else None

    def _index(self, op: Any, seq: int, session: int) -> None:
        path = op.path
        self.naming.setdefault(path, []).append(seq)
        if not isinstance(op, (Create, Delete)):
            return
        self.existence.setdefault(path, []).append(seq)
        parent = parent_of(path)
        self.structural.setdefault(parent, []).append(seq)
        if isinstance(op, Create):
            self.created.setdefault(parent, set()).add(path)
            self.created_paths.add(path)
            if op.kind == "ephemeral":
                self.creators.setdefault(path, set()).add(session)
                self.child_creators.setdefault(parent, set()).add(session)
        else:
            self.deletable.add(path)

    def may_vanish(self, path: str, owner: int) -> bool:
        """Whether replay can delete this snapshot node (then its ``timeline`` says, before it streams)."""
        return path in self.deletable or owner in self.closing

    def creates(self, path: str) -> bool:
        """Whether an op creates ``path``: only then does its timeline depend on its parent's."""
        return path in self.created_paths

    def settled_by_parent(self, path: str) -> bool:
        """Whether only its own creates and deletes name ``path`` and no op creates or deletes a child
        of it: then its parent's ``resolve``, which replays those ops and the closes of the sessions
        that create it, leaves it in its final state (most nodes a log creates: no second replay)."""
        return path not in self.structural and len(self.naming.get(path, ())) == len(self.existence.get(path, ()))

    def settle(self, path: str, data: bytes | None, fields: Sequence[Any]) -> list[Any] | None:
        """The state after replay of a snapshot node whose ops only set its data or ACL (nothing else
        can change it: no create or delete of it or its children, no session close that owns it): its
        snapshot state with them applied, O(its ops). None for any other node: that takes ``resolve``."""
        if path not in self.data_only or fields[OWNER] in self.closing:
            return None
        state: list[Any] = [*fields, data]
        ops = self.ops
        seqs = self.naming[path]
        self.ops_replayed += len(seqs)
        for seq in seqs:
            txn, _, op = ops[seq]
            if type(op) is SetData:
                state[DATA], state[VERSION], state[MZXID], state[MTIME] = op.data, op.version, txn.zxid, txn.time_ms
            elif type(op) is SetAcl:
                state[AVERSION] = op.version
        return state

    def _closes(self, sessions: Iterable[int]) -> list[int]:
        closing = self.closing
        return [seq for session in sessions if session in closing for seq in closing[session]]

    def timeline(self, path: str, fields: Sequence[Any] | None, parent: Timeline) -> Timeline:
        """When ``path`` exists during replay, from its snapshot state (``fields``, None when the
        snapshot lacks it), its own creates and deletes, the closes of the sessions that may own it, and
        its parent's timeline (a create needs the parent): O(e log e) for its e such ops."""
        exists = fields is not None
        owner = fields[OWNER] if fields is not None else 0
        own = self.existence.get(path, ())
        closes = self._closes({owner, *self.creators.get(path, ())})
        if not own and not closes:
            return ALWAYS if exists else Timeline(False, [])
        seqs = sorted({*own, *closes}) if closes else own
        self.ops_replayed += len(seqs)
        flips = []
        ops = self.ops
        for seq in seqs:
            txn, _, op = ops[seq]
            if type(op) is Create:
                if not exists and parent.exists_at(seq):
                    exists, owner = True, _owner(op, txn.session)
                    flips.append(seq)
            elif op is _SESSION_END:
                if exists and owner == txn.session and _is_ephemeral(owner):
                    exists = False
                    flips.append(seq)
            elif exists:  # a delete, or a path a session close lists
                exists = False
                flips.append(seq)
        return Timeline(fields is not None, flips)

    def resolve(
        self,
        path: str,
        parent: Timeline,
        children: dict[str, tuple[bytes | None, Sequence[Any]]],
        state: tuple[bytes | None, Sequence[Any]] | None,
    ) -> Overlay:
        """Replay what can change ``path`` and which of its children exist over the snapshot states given
        (``state`` is the node's own, None when the snapshot lacks it; ``parent`` says when its parent
        exists); the result holds the node and its children after replay.

        O(m log m) for the m ops that name the node or create or delete one of its children, plus the
        closes of the sessions owning one of them: summed over every node, each op of the logs is
        replayed twice at most (for its own path and for its parent), so a whole read is
        O((n + ops) log ops) for n nodes.
        """
        overlay = Overlay(outer=None if path == "/" else parent_of(path), outer_timeline=parent)
        if state is not None:
            overlay.load(path, state[0], state[1])
        for child, (data, fields) in children.items():
            overlay.load(child, data, fields)
        seqs = {*self.naming.get(path, ()), *self.structural.get(path, ())}
        sessions = {*overlay.ephemerals, *self.creators.get(path, ()), *self.child_creators.get(path, ())}
        seqs.update(self._closes(sessions))
        self.ops_replayed += len(seqs)
        ops = self.ops
        for seq in sorted(seqs):
            txn, kind, op = ops[seq]
            overlay.apply_op(txn, kind, op, seq)
        return overlay


@dataclass
class Overlay:
    """Node states for the paths replay touches; ``None`` marks a path that does not exist.

    ``outer`` is the one path whose existence comes from ``outer_timeline`` instead of ``nodes`` (the
    parent of the node being resolved); ``apply`` runs a whole txn, as the plain algorithm does."""

    nodes: dict[str, list[Any] | None] = field(default_factory=dict)
    ephemerals: dict[int, set[str]] = field(default_factory=dict)  # session → the paths it owns here
    outer: str | None = None
    outer_timeline: Timeline = ALWAYS

    def load(self, path: str, data: bytes | None, fields: Sequence[Any]) -> None:
        state: list[Any] = list(fields)
        state.append(data)
        self.nodes[path] = state
        self._own(path, state[OWNER])

    def _own(self, path: str, owner: int) -> None:
        if _is_ephemeral(owner):
            self.ephemerals.setdefault(owner, set()).add(path)

    def apply(self, txn: Txn) -> None:
        """Every op of ``txn``."""
        for kind, op in expand(txn):
            self.apply_op(txn, kind, op, 0)

    def apply_op(self, txn: Txn, kind: int, body: Any, seq: int) -> None:
        """One op of ``txn``; ``seq``, its position in ``Replay.ops``, dates ``outer``'s existence."""
        kind_of = type(body)
        if kind_of is SetData:
            node = self.nodes.get(body.path)
            if node is not None:
                node[DATA], node[VERSION], node[MZXID], node[MTIME] = body.data, body.version, txn.zxid, txn.time_ms
        elif kind_of is SetAcl:
            node = self.nodes.get(body.path)
            if node is not None:
                node[AVERSION] = body.version
        elif kind_of is Create:
            self._create(kind, body, txn, seq)
        elif kind_of is Delete:
            self._delete(body.path, txn.zxid, seq)
        elif body is _SESSION_END:
            for path in sorted(self.ephemerals.pop(txn.session, ())):  # what the session still owns
                self._delete(path, txn.zxid, seq)
        # check and error (failed) ops change nothing

    def _parent(self, path: str, seq: int) -> list[Any] | None:
        parent = parent_of(path)
        if parent == self.outer:  # its stat is not resolved here: a scratch state when it exists
            return [0] * DATA + [None] if self.outer_timeline.exists_at(seq) else None
        return self.nodes.get(parent)

    def _create(self, kind: int, body: Create, txn: Txn, seq: int) -> None:
        parent = self._parent(body.path, seq)
        if parent is None:
            return  # NoNode: ZooKeeper ignores it on replay
        new_cversion = parent[CVERSION] + 1 if body.parent_cversion == -1 else body.parent_cversion
        if self.nodes.get(body.path) is not None:
            # NodeExists: a fuzzy snapshot already holds it. Plain creates still raise the parent's cversion.
            if kind == CREATE and new_cversion > parent[CVERSION]:
                parent[CVERSION], parent[PZXID] = new_cversion, txn.zxid
            return
        owner = _owner(body, txn.session)
        zxid, time_ms = txn.zxid, txn.time_ms
        self.nodes[body.path] = [0, zxid, zxid, time_ms, time_ms, 0, 0, 0, owner, zxid, body.data]
        self._own(body.path, owner)
        if new_cversion > parent[CVERSION]:
            parent[CVERSION], parent[PZXID] = new_cversion, zxid

    def _delete(self, path: str, zxid: int, seq: int) -> None:
        parent = self._parent(path, seq)
        if parent is not None:
            parent[PZXID] = max(parent[PZXID], zxid)
        node = self.nodes.get(path)
        if node is not None and node[OWNER] in self.ephemerals:
            self.ephemerals[node[OWNER]].discard(path)
        self.nodes[path] = None
