"""From steps (a znode before and after one op) to change records: which function handles which znode.

A znode's handler is chosen by the decoder the registry has for its path (``decode/registry.py``), so
the change kinds follow the views' reading of the layout: ``handlers.HANDLERS`` maps a decoder kind to one small
function in ``kafka.py`` or ``storm.py``, and every other znode gets the generic created / deleted /
data changed records here, with its decoded summary before and after. A new change kind is one
function and one line in ``handlers.HANDLERS``.

A handler gets the ``Engine`` (decoding, what the window tracks across znodes: registered brokers,
leader latches, heartbeats) and the step; it returns the records the step makes (usually one), or
``None`` to leave the step to the generic records (an op it has nothing to say about, or a state it
cannot decode: the generic record then carries the failure, so nothing is dropped).

A kind whose setData only times or counts the write (a worker's heartbeat, a supervisor's registration:
``handlers.REWRITES``) has a rewriter besides, which its handler's set calls too: the reader hands such a
write over without a step (``reader.Rewrite``), and ``changes`` calls the rewriter with the txn's identity
and the path.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..decode.registry import REGISTRY, Registry
from ..decode.storm import split_slot
from ..errors import DecodeError
from ..layout import KAFKA, ROOT_SEARCH_DEPTH, STORM, Roots, join, merged, root_kinds
from ..records import (
    DecodeFailure,
    StormLeaderLatch,
    StormWorkerResumed,
    StormWorkerStale,
    ZnodeAclChanged,
    ZnodeCreated,
    ZnodeDataChanged,
    ZnodeDeleted,
)
from ..sources.files.txnlog import Txn
from .reader import NodeState, Rewrite, Step, time_of

Handler = Callable[["Engine", Step, "Place"], list[Any] | None]
# a rewrite's records from the txn (a ``Txn`` or a ``reader.Rewrite``: zxid, session, time_ms) and path
Rewriter = Callable[["Engine", Any, str, "Place"], list[Any]]


def worker_of(path: str) -> tuple[str, str, int]:
    """(topology id, node, port) of a heartbeat's path (port -1 when its name has none)."""
    _, topology_id, slot = path.rsplit("/", 2)
    try:
        node, port = split_slot(slot)
    except DecodeError:
        return topology_id, slot, -1
    return topology_id, node, port


def latch_participant(engine: Engine, path: str, state: NodeState) -> str:
    """The participant id a leader latch holds (``host:port``), or its name if it does not decode."""
    found = engine.records_of(path, state, StormLeaderLatch)
    return found[0].participant_id if found else path.rsplit("/", 1)[1]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a znode is: the decoder's kind, the Storm or Kafka root and the path relative to it (all
    None for a znode under no root, or that no decoder claims)."""

    kind: str | None
    system: str | None
    root: str | None
    relative: str


_NOWHERE = Place(None, None, None, "")


class _Lookups:
    """A registry whose lookup of each path is made once: the engine decodes the same few znodes again
    and again (a partition's state at each of its writes), under the same roots. As many entries as
    znodes decoded: no more than the states the reader keeps."""

    __slots__ = ("_found", "_registry")

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._found: dict[str, Any] = {}

    def lookup(self, path: str, roots: Roots) -> Any:
        try:
            return self._found[path]
        except KeyError:
            found = self._found[path] = self._registry.lookup(path, roots)
            return found


@dataclass(slots=True)
class Decoded:
    """What the decoders make of one state: the records, the summary, and the failure if any."""

    records: list[Any]
    summary: str | None
    failure: DecodeFailure | None


def discovered_roots(names: dict[str, set[str]], chosen: Roots) -> Roots:
    """The roots ``chosen`` and every Storm root and Kafka chroot the names near the top of the tree say
    are there (``layout.root_kinds``, the rule the views and the snapshot use)."""
    storm, kafka = [], []
    for node, children in names.items():
        if node == "/" or node.count("/") <= ROOT_SEARCH_DEPTH:
            kinds = root_kinds(sorted(children), partial(sorted, names.get(join(node, "brokers"), ())))
            storm += [node] * (STORM in kinds)
            kafka += [node] * (KAFKA in kinds)
    return merged(chosen, Roots(storm=tuple(sorted(storm)), kafka=tuple(sorted(kafka))))


class Heartbeats:
    """Worker heartbeat times, in the order written: a heartbeat rewrite is not a change, but a worker
    that stops writing is. The oldest beat is always first (``OrderedDict.move_to_end`` per beat), so
    finding the workers whose last beat is older than the threshold costs nothing per txn when none is."""

    def __init__(self, stale_after_ms: int) -> None:
        self.stale_after_ms = stale_after_ms
        self.beats: OrderedDict[str, int] = OrderedDict()  # path → time of its last beat (ms)
        self.stale: dict[str, int] = {}  # path → time of its last beat, for workers gone stale
        self.writes = 0
        self.workers: set[str] = set()
        self.started = False
        self.counting = False  # in the window: writes are counted (before it, only timed)

    def start(self, states: dict[str, NodeState], paths: Iterable[str], now_ms: int) -> None:
        """The workers of the state before the window, with the time each last wrote; those already
        stale at ``now_ms`` (the first txn) went stale before the window: no change of the window."""
        for path, mtime in sorted(((p, states[p].mtime) for p in paths), key=lambda item: item[1]):
            if mtime + self.stale_after_ms < now_ms:
                self.stale[path] = mtime
            else:
                self.beats[path] = mtime
        self.started = True

    def overdue(self, now_ms: int) -> Iterator[tuple[str, int]]:
        """(path, last beat) of each worker that has gone stale by ``now_ms``; they are then stale."""
        beats = self.beats
        limit = now_ms - self.stale_after_ms
        while beats:
            path, last = next(iter(beats.items()))
            if last >= limit:
                return
            del beats[path]
            self.stale[path] = last
            yield path, last

    def beat(self, path: str, now_ms: int) -> int | None:
        """A heartbeat written; returns the time of the last one if the worker was stale."""
        if self.counting:
            self.writes += 1
            self.workers.add(path)
        was = self.stale.pop(path, None)
        self.beats[path] = now_ms
        self.beats.move_to_end(path)
        return was

    def last(self, path: str) -> int | None:
        return self.beats.get(path, self.stale.get(path))

    def remove(self, path: str) -> None:
        self.beats.pop(path, None)
        self.stale.pop(path, None)


@dataclass
class Counters:
    """What the window holds that is not a change record: counted for the summary."""

    heartbeat_writes: int = 0
    heartbeat_workers: int = 0
    supervisor_beats: int = 0
    errors_folded: int = 0  # -last-error copies of an error an e-node reported
    by_kind: dict[str, int] = field(default_factory=dict)


class Engine:
    """Turns the reader's steps into change records, txn by txn (``changes``)."""

    def __init__(
        self,
        states: dict[str, NodeState],
        roots: Roots,
        *,
        registry: Registry = REGISTRY,
        show_secrets: bool = False,
        stale_after_secs: float = 30.0,
        handlers: dict[str, Handler] | None = None,
        rewrites: dict[str, Rewriter] | None = None,
    ) -> None:
        # the views' own decoding of one znode; imported here, not at the top, since the model's package
        # (``zkstorm.model``, whose ``Cluster.changes`` reads through this engine) imports this one
        from ..model.walk import decode_one

        self._decode_one = decode_one
        self.handlers = handlers or {}  # decoder kind → its handler (``handlers.HANDLERS``); others: generic
        self.rewrites = rewrites or {}  # decoder kind → its rewriter (``handlers.REWRITES``)
        self._rewriters: dict[str, tuple[Rewriter, Place]] = {}  # path → its rewriter, once asked
        self.states = states  # the reader's: the state of every tracked znode, kept current
        self.roots = roots
        self.registry = registry
        self._lookups: Any = _Lookups(registry)  # the registry as decode_one asks it, per path once
        self.show_secrets = show_secrets
        self.stale_after_secs = stale_after_secs
        self.heartbeats = Heartbeats(int(stale_after_secs * 1000))
        self.counters = Counters()
        self._places: dict[str, tuple[Place, Handler]] = {}
        # what handlers track across znodes, per root
        self.registered: dict[str, set[int]] = {}
        self.latches: dict[str, dict[str, str]] = {}  # root → latch path → participant
        self.controllers: dict[str, int | None] = {}  # root → the controller broker last seen
        self.elected: dict[str, Any] = {}  # root → the election record of the txn being read
        # component error dir → the bytes of its newest e-nodes (as many as Storm keeps: STORM_ERRORS_KEPT)
        self.errors: dict[str, deque[bytes | None]] = {}
        self.counting = False
        self._txn: Txn | None = None

    # places and decoding ----------------------------------------------------------------------------

    def place(self, path: str) -> tuple[Place, Handler]:
        found = self._places.get(path)
        if found is None:
            hit = self._lookups.lookup(path, self.roots)
            if hit is None:
                located = self.roots.locate(path)
                where = Place(None, located[0][0], located[0][1], located[0][2]) if located else _NOWHERE
                found = (where, generic)
            else:
                decoder, root, relative = hit
                where = Place(decoder.kind, decoder.system, root, relative)
                found = (where, self.handlers.get(decoder.kind, generic))
            self._places[path] = found
        return found

    def decoded(self, path: str, state: NodeState | None, *, show_secrets: bool | None = None) -> Decoded | None:
        """What the decoders make of ``state`` (cached on it); None for no state. ``show_secrets`` decodes
        secrets in the clear for a comparison that is never shown (a config value that changed)."""
        if state is None:
            return None
        reveal = self.show_secrets if show_secrets is None else show_secrets
        if reveal == self.show_secrets and state.decoded is not None:
            return state.decoded  # type: ignore[no-any-return]
        znode, records, _ = self._decode_one(
            state.raw(path), roots=self.roots, registry=self._lookups, show_secrets=reveal
        )
        failure = None
        for record in records:  # (a loop: most states decode to one record, no failure)
            if type(record) is DecodeFailure:
                failure = record
                break
        summary = znode.summary
        if summary is None:
            size = len(state.data) if state.data else 0
            summary = f"{znode.encoding}, {size:,} bytes" if state.data is not None else "null data"
        found = Decoded(records, summary, failure)
        if reveal == self.show_secrets:
            state.decoded = found
        return found

    def records_of(self, path: str, state: NodeState | None, kind: type) -> list[Any] | None:
        """The records of ``kind`` that ``state`` decodes to; None when it does not decode (or is None)."""
        found = self.decoded(path, state)
        if found is None or found.failure is not None:
            return None
        return [r for r in found.records if type(r) is kind]

    @staticmethod
    def common(step: Step) -> dict[str, Any]:
        """The fields every change record ends with: the txn's identity and the znode's path."""
        return Engine.common_of(step.txn, step.path)

    @staticmethod
    def common_of(txn: Txn | Rewrite, path: str) -> dict[str, Any]:
        """``common`` of a txn (or a ``Rewrite``) and a path, for a record made without a step."""
        return {
            "at": time_of(txn.time_ms),
            "zxid": txn.zxid,
            "time_ms": txn.time_ms,
            "session_id": txn.session,
            "path": path,
        }

    def is_rewrite(self, path: str) -> bool:
        """Whether a setData of ``path`` is a rewrite: its kind has a rewriter (``handlers.REWRITES``)."""
        where, handler = self.place(path)
        rewriter = self.rewrites.get(where.kind) if where.kind is not None and handler is not generic else None
        if rewriter is None:
            return False
        self._rewriters[path] = (rewriter, where)
        return True

    # the txn loop -----------------------------------------------------------------------------------

    def start(self, first: Txn | Rewrite) -> None:
        """Set up what is tracked across znodes from the state before the window."""
        workers = [p for p in self.states if self.place(p)[0].kind == "storm_worker"]
        self.heartbeats.start(self.states, workers, first.time_ms)
        for path in self.states:
            where = self.place(path)[0]
            if where.kind == "kafka_broker" and where.root is not None:
                name = path.rsplit("/", 1)[1]
                if name.lstrip("-").isdigit():
                    self.registered.setdefault(where.root, set()).add(int(name))
            elif where.kind == "storm_leader_latch" and where.root is not None:
                participant = latch_participant(self, path, self.states[path])
                self.latches.setdefault(where.root, {})[path] = participant

    def changes(self, txn: Txn, steps: list[Step], in_window: bool = True) -> list[Any]:
        """The change records of one txn: first the workers that went stale before it, then its steps'.
        Txns before the window are read for what is tracked across them; only the window's are counted."""
        heartbeats = self.heartbeats
        if not heartbeats.started:
            self.start(txn)
        heartbeats.counting = self.counting = in_window
        out: list[Any] = []
        self._overdue(txn, out)
        if not steps:
            return out
        self._txn = txn
        self.elected.clear()
        for step in steps:
            where, handler = self.place(step.path)
            made = None
            if step.op != "acl":
                made = handler(self, step, where)
            if made is None:
                made = generic(self, step, where)
            out += made
        return out

    def rewritten(self, run: list[Rewrite], in_window: bool = True) -> list[Any]:
        """The change records of a run of rewrites (``reader.Rewrite``, in txn order, all in the window or
        none), each told as ``changes`` tells a txn of one setData: the workers that went stale before it,
        then what its kind's rewriter says."""
        heartbeats = self.heartbeats
        if not heartbeats.started:
            self.start(run[0])
        heartbeats.counting = self.counting = in_window
        self.elected.clear()  # as every txn with a step does (no rewriter reads it)
        out: list[Any] = []
        rewriters = self._rewriters
        beats, stale, stale_after_ms = heartbeats.beats, heartbeats.stale, heartbeats.stale_after_ms
        # a heartbeat's rewriter (``storm.heartbeat_written``: ``Heartbeats.beat``, and the worker's return
        # if it was stale) done here, inline: four txns in five of a busy Storm log are one
        beat_rewriter = self.rewrites.get("storm_worker")
        written = 0
        touched = heartbeats.workers
        for rewrite in run:
            time_ms, path = rewrite.time_ms, rewrite.path
            if beats and next(iter(beats.values())) < time_ms - stale_after_ms:
                self._overdue(rewrite, out)
            rewriter, where = rewriters[path]
            if rewriter is beat_rewriter:
                if in_window:
                    written += 1
                    touched.add(path)
                was = stale.pop(path, None) if stale else None
                beats[path] = time_ms
                beats.move_to_end(path)
                if was is not None:
                    out.append(self.resumed(rewrite, path, was, where))
                continue
            made = rewriter(self, rewrite, path, where)
            if made:
                out += made
        heartbeats.writes += written
        return out

    def _overdue(self, txn: Txn | Rewrite, out: list[Any]) -> None:
        """The workers gone stale by ``txn``'s time, into ``out`` (the oldest beat is first: ``Heartbeats``)."""
        heartbeats = self.heartbeats
        beats = heartbeats.beats
        if beats and next(iter(beats.values())) < txn.time_ms - heartbeats.stale_after_ms:
            for path, last in heartbeats.overdue(txn.time_ms):
                out.append(self._stale(txn, path, last))

    def _stale(self, txn: Txn | Rewrite, path: str, last: int) -> StormWorkerStale:
        topology_id, node, port = worker_of(path)
        where = self.place(path)[0]
        return StormWorkerStale(
            at=time_of(txn.time_ms),
            topology_id=topology_id,
            node=node,
            port=port,
            last_beat_at=time_of(last),
            stale_after_secs=self.stale_after_secs,
            zxid=txn.zxid,
            time_ms=txn.time_ms,
            session_id=txn.session,
            path=path,
            root=where.root or "",
        )

    def resumed(self, txn: Txn | Rewrite, path: str, last: int, where: Place) -> StormWorkerResumed:
        topology_id, node, port = worker_of(path)
        return StormWorkerResumed(
            **self.common_of(txn, path),
            topology_id=topology_id,
            node=node,
            port=port,
            silent_secs=(txn.time_ms - last) / 1000,
            root=where.root or "",
        )


def generic(engine: Engine, step: Step, where: Place) -> list[Any]:
    """Any znode: created, deleted, data or ACL changed, with what its decoder makes of it."""
    common = engine.common(step)
    root = where.root
    if step.op == "acl":
        version = step.after.aversion if step.after is not None else 0
        return [ZnodeAclChanged(**common, acl_version=version, root=root)]
    if step.op == "delete":
        before = engine.decoded(step.path, step.before) if step.known else None
        return [
            ZnodeDeleted(
                **common,
                record_kind=where.kind,
                summary_before=before.summary if before is not None else None,
                how=step.how,
                root=root,
            )
        ]
    after = engine.decoded(step.path, step.after)
    assert after is not None and step.after is not None
    failure = after.failure.failure_type if after.failure is not None else None
    if step.op == "create":
        return [
            ZnodeCreated(
                **common,
                record_kind=where.kind,
                summary=after.summary,
                failure_type=failure,
                ephemeral=step.after.owner != 0,
                data_length=len(step.after.data or b""),
                root=root,
            )
        ]
    before = engine.decoded(step.path, step.before) if step.known else None
    return [
        ZnodeDataChanged(
            **common,
            record_kind=where.kind,
            summary_before=before.summary if before is not None else None,
            summary=after.summary,
            failure_type=failure,
            version=step.after.version,
            root=root,
        )
    ]
