"""How the model reads: one znode's bytes to records (``decode_node``, ``decode_one``), and the decoded walks
every read goes through (``decoded_walk``, which finds the roots as it goes where listings are not cheap).

The walker yields raw nodes off the source's I/O thread; this module decodes them in the caller's
thread, so decoding overlaps with the reads still in flight, and hands Java-serialized payloads to a
helper process when the cluster has one (``decode_helper``). ``ClusterReads`` is what the Storm and
Kafka views ask of the cluster they read through.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import lru_cache, partial
from typing import Any, Protocol

from ..decode import kafka as _kafka_decoders  # noqa: F401  (registers the Kafka decoders)
from ..decode import storm as _storm_decoders  # noqa: F401  (registers the Storm decoders)
from ..decode.registry import DETAIL_COLUMNS, REGISTRY, DecodeContext, Decoder, Detail, Registry
from ..decode.sniff import detect_encoding
from ..errors import DecodeError, FailureType
from ..layout import (
    DEFAULT_ROOTS,
    KAFKA,
    KAFKA_ROOT_MARKERS,
    ROOT_SEARCH_DEPTH,
    STORM,
    STORM_ROOT_MARKERS,
    Roots,
    join,
    merged,
    root_kinds,
)
from ..records import (
    DecodeFailure,
    DecodeWarning,
    StormExecutorStatColumns,
    Unreadable,
    Znode,
)
from ..redact import exception_text
from ..sources.base import Denied, RawNode, Source, WalkStats
from .decode_helper import DecodeHelper, in_walk_order
from .storm_stats import executor_figures_of_columns

log = logging.getLogger(__name__)
_BUILTIN_DECODERS = len(REGISTRY)  # the decoders zkstorm registers when imported, as in the helper process


def to_znode(raw: RawNode, encoding: str, summary: str | None = None, status: str = "not-decoded") -> Znode:
    """The ``Znode`` record of one walked node.

    Built by filling the slots of a bare instance: calling the dataclass with sixteen keyword arguments
    cost 0.94 µs against 0.21 µs for this (timeit, same process), and every walk runs it once per znode.
    ``tests/test_collect.py`` checks that it sets every field the dataclass declares, so a new field
    cannot be left unset here.
    """
    znode = _bare(Znode)
    znode.path = raw.path
    # zk.Stat (and kazoo's ZnodeStat alike) in wire order, unpacked straight into the slots
    (
        znode.czxid,
        znode.mzxid,
        znode.ctime_ms,
        znode.mtime_ms,
        znode.version,
        znode.cversion,
        znode.aversion,
        znode.ephemeral_owner,
        znode.data_length,
        znode.num_children,
        znode.pzxid,
    ) = raw.stat
    znode.ephemeral = znode.ephemeral_owner != 0
    znode.encoding = encoding
    znode.summary = summary
    znode.decode_status = status
    return znode


_bare = object.__new__


def decode_node(
    raw: RawNode,
    *,
    roots: Roots = DEFAULT_ROOTS,
    registry: Registry = REGISTRY,
    show_secrets: bool = False,
    detail: Detail = False,
) -> tuple[Znode, list[Any]]:
    """The znode record of ``raw`` and whatever its registered decoder makes of the bytes (``decode_one``
    without the redaction flag: what a walk needs). With ``detail=DETAIL_COLUMNS`` (the snapshot's walk), a
    heartbeat's counters come as one ``StormExecutorStatColumns`` followed by the ``ExecutorFigures`` they
    sum to: worked out wherever the heartbeat is decoded, so in the helper process when it takes it."""
    znode, records, _ = decode_one(raw, roots=roots, registry=registry, show_secrets=show_secrets, detail=detail)
    if detail == DETAIL_COLUMNS and records:
        for record in records:
            if type(record) is StormExecutorStatColumns:
                return znode, [*records, *executor_figures_of_columns(record)]
    return znode, records


def decode_one(
    raw: RawNode,
    *,
    roots: Roots = DEFAULT_ROOTS,
    registry: Registry = REGISTRY,
    show_secrets: bool = False,
    detail: Detail = False,
) -> tuple[Znode, list[Any], bool]:
    """The znode record of ``raw``, whatever its registered decoder makes of the bytes, and whether the
    decoder redacted a secret in them (``DecodeContext.redacted``).

    A decoder that raises ``DecodeError`` yields one ``DecodeFailure`` instead, followed by what it read
    before a rule refused the znode (``DecodeError.records``) or else the placeholder of what the znode
    stands for; any other exception in a decoder or its summary (a decoder bug) yields one too, typed
    ``decoder_error``: nothing escapes.
    The bytes are parsed once: a decoder that reads them says what encoding it found, and only a payload
    no decoder claims (or one its decoder failed on) is sniffed for the ``encoding`` column.
    """
    found = registry.lookup(raw.path, roots)
    if found is None:
        return to_znode(raw, detect_encoding(raw.data)), [], False
    decoder, root, rel = found
    context = DecodeContext(raw.path, root, rel, raw.stat, show_secrets, detail)
    try:
        records = decoder.decode(context, raw.data)
        records = records if type(records) is list else list(records)
        decoded = records
        for record in records:  # most decodes raise no warning: no second list then
            if type(record) is DecodeWarning:
                decoded = [r for r in records if type(r) is not DecodeWarning]
                break
        summary: str | None
        if decoder.summarize and decoded:
            summary = decoder.summarize(decoded)
        else:  # nothing decoded (e.g. empty data where a payload belongs): say why, and still list it
            warnings = [r.warning for r in records if isinstance(r, DecodeWarning)]
            summary = "; ".join(warnings) or None
            if warnings:
                records = [*records, *_placeholder(decoder, context, warnings[0])]
    except DecodeError as exc:
        hidden = context.redacted or (decoder.may_hold_secrets and not show_secrets)  # nothing redacted it
        return (*_failed(raw, decoder, context, exc.failure_type, exc.reason, exc.records), hidden)
    except Exception as exc:  # a decoder's own bug: a typed failure with the path, and the walk goes on
        log.debug("decoder %s failed on %s", decoder.kind, raw.path, exc_info=True)
        # the reason without the values the message quotes: the decoder may have choked on a secret
        reason = exception_text(exc)
        hidden = context.redacted or (decoder.may_hold_secrets and not show_secrets)
        return (*_failed(raw, decoder, context, FailureType.DECODER_ERROR, reason), hidden)
    return to_znode(raw, context.encoding or detect_encoding(raw.data), summary, "decoded"), records, context.redacted


def _failed(
    raw: RawNode,
    decoder: Decoder,
    context: DecodeContext,
    failure_type: FailureType,
    reason: str,
    read: list[Any] | None = None,
) -> tuple[Znode, list[Any]]:
    """The failure record, and what stands for the znode in list views, with the failure type as its
    status: the records the decoder ``read`` before a rule refused the znode (``DecodeError.records``),
    or else the placeholder the decoder gives for it (a topic, a broker, a worker …) from its path."""
    encoding = detect_encoding(raw.data)
    failure = DecodeFailure(
        path=raw.path,
        record_kind=decoder.kind,
        failure_type=failure_type.value,
        reason=reason,
        size=len(raw.data or b""),
        encoding=encoding,
    )
    if read:
        for record in read:  # the decoder's own fresh records: flagged in place, as a placeholder is made
            if getattr(record, "decode_status", None) == "ok":
                record.decode_status = failure_type.value
        summary = _summary_of(decoder, read, raw.path)
        described = f"{summary} ({failure_type.value}: {reason})" if summary else f"{decoder.kind}: {reason}"
        return to_znode(raw, encoding, described, "failed"), [failure, *read]
    znode = to_znode(raw, encoding, f"undecodable {decoder.kind}: {reason}", "failed")
    return znode, [failure, *_placeholder(decoder, context, failure_type.value)]


def _summary_of(decoder: Decoder, records: list[Any], path: str) -> str | None:
    """The decoder's summary of the records it read of a znode it then refused; None when it has none (a
    summary that fails on them is a decoder bug, which must not take the failure record with it)."""
    decoded = [r for r in records if type(r) is not DecodeWarning]
    if decoder.summarize is None or not decoded:
        return None
    try:
        return decoder.summarize(decoded)
    except Exception:
        log.debug("summary of %s failed on what it read of %s", decoder.kind, path, exc_info=True)
        return None


def _placeholder(decoder: Decoder, context: DecodeContext, status: str) -> list[Any]:
    if decoder.placeholder is None:
        return []
    try:
        made = decoder.placeholder(context, status)
    except Exception:  # a name the placeholder cannot parse: the failure record alone stands
        log.debug("no placeholder for %s", context.path, exc_info=True)
        return []
    return [] if made is None else [made]


def unreadable(path: str, reason: str, roots: Roots, registry: Registry) -> list[Any]:
    """An ``Unreadable`` record for a znode the server would not let us read, and the placeholder of
    what it stands for (status ``unreadable``)."""
    out: list[Any] = [Unreadable(path=path, reason=reason)]
    found = registry.lookup(path, roots)
    if found is not None:
        decoder, root, rel = found
        out += _placeholder(decoder, DecodeContext(path, root, rel, None), "unreadable")
    return out


def decoded_walk(
    session: Source,
    path: str,
    *,
    roots: Roots,
    registry: Registry = REGISTRY,
    show_secrets: bool = False,
    detail: Detail = False,
    depth: int | None = None,
    stats: WalkStats | None = None,
    helper: DecodeHelper | None = None,
    discover: bool = False,
    found: list[Roots] | None = None,
) -> Iterator[tuple[str, Znode | None, list[Any]]]:
    """(path, znode, records) for every znode under ``path``; an unreadable one comes as
    (path, None, [Unreadable]). Every walk in zkstorm goes through here. ``discover`` is for a source
    whose listings are not cheap (``_discovering``): the roots it finds are appended to ``found``."""
    walked = _decoded_in_order(
        session.walk(path, max_depth=depth, stats=stats), roots, registry, show_secrets, detail, helper
    )
    if discover:
        yield from _discovering(walked, roots, registry, show_secrets, detail, found)
        return
    for item, (znode, records) in walked:
        yield item.path, znode, records


def _decoded_in_order(
    items: Iterator[RawNode | Denied],
    roots: Roots,
    registry: Registry,
    show_secrets: bool,
    detail: Detail,
    helper: DecodeHelper | None,
) -> Iterator[tuple[RawNode | Denied, tuple[Znode | None, list[Any]]]]:
    """(item, (znode, records)) for each walked item, in walk order; an unreadable one as (None,
    [Unreadable, placeholder]). Costly payloads may be decoded by ``helper`` (``model.decode_helper``), which
    decodes with zkstorm's own decoders only: not for another registry, nor once decoders were added."""

    def decode(item: RawNode | Denied) -> tuple[Znode | None, list[Any]]:
        if type(item) is Denied:
            return None, unreadable(item.path, item.reason, roots, registry)
        return decode_node(item, roots=roots, registry=registry, show_secrets=show_secrets, detail=detail)  # type: ignore[arg-type]

    options = {"roots": roots, "show_secrets": show_secrets, "detail": detail}
    builtin = registry is REGISTRY and len(REGISTRY) == _BUILTIN_DECODERS  # what the helper's own import has
    return in_walk_order(items, decode, helper if builtin else None, options)


def _discovering(
    walked: Iterator[tuple[RawNode | Denied, tuple[Znode | None, list[Any]]]],
    roots: Roots,
    registry: Registry,
    show_secrets: bool,
    detail: Detail,
    found: list[Roots] | None,
) -> Iterator[tuple[str, Znode | None, list[Any]]]:
    """``decoded_walk`` for a source whose listings are not cheap (ZooKeeper's files, where a listing
    needs a pass): roots are discovered from the paths the walk itself yields (``layout.root_kinds``; a
    path names its ancestors, so a root is known as soon as anything under its markers is read, in any
    file order), and a znode no decoder claimed is decoded again under the roots found since. Only a
    znode that a root not yet found could still claim is held back, until one is found or the walk ends:
    held otherwise, a whole cluster under an unnamed chroot (three million znodes) waited in memory. The
    roots found are appended to ``found``."""
    names: dict[str, set[str]] = {}  # child names of the nodes near the top, where roots can be
    held: list[tuple[RawNode, Znode, list[Any]]] = []
    current = roots

    def redecoded(item: RawNode, znode: Znode, records: list[Any]) -> tuple[Znode, list[Any]]:
        if registry.lookup(item.path, current) is None:
            return znode, records
        return decode_node(item, roots=current, registry=registry, show_secrets=show_secrets, detail=detail)

    for item, (znode, records) in walked:
        if isinstance(item, Denied) or znode is None:  # unreadable
            yield item.path, None, records
            continue
        if _note_names(names, item.path):  # a root marker seen: the roots may have changed
            now = merged(roots, _roots_named(names))
            if now != current:
                current = now
                waiting, held = held, []
                for node, node_znode, node_records in waiting:
                    if registry.lookup(node.path, current) is not None or not _claimable(node.path, registry):
                        yield node.path, *redecoded(node, node_znode, node_records)
                    else:
                        held.append((node, node_znode, node_records))
        if znode.decode_status == "not-decoded" and item.path.count("/") >= 2:
            if current is not roots and registry.lookup(item.path, current) is not None:
                znode, records = redecoded(item, znode, records)  # type: ignore[arg-type]
            elif _claimable(item.path, registry):
                held.append((item, znode, records))  # type: ignore[arg-type]
                continue
        yield item.path, znode, records
    if found is not None:
        found.append(current)
    for node, node_znode, node_records in held:
        yield node.path, *redecoded(node, node_znode, node_records)


_MARKER_NAMES = STORM_ROOT_MARKERS | KAFKA_ROOT_MARKERS | {"brokers"}


def _note_names(names: dict[str, set[str]], path: str) -> bool:
    """Record the (parent, child) pairs ``path`` names down to the depth where roots are searched; True
    when a new pair is a root marker (``storms``, ``assignments``, ``brokers``, ``ids``, ``topics``)."""
    segments = path.split("/", ROOT_SEARCH_DEPTH + 2)[1 : ROOT_SEARCH_DEPTH + 2]  # a root's children, and a
    # Kafka root's brokers' (as ``discover_roots`` reads them)
    marker = False
    parent = "/"
    for i, name in enumerate(segments):
        if not name:
            break
        children = names.get(parent)
        if children is None:
            children = names[parent] = set()
        if name not in children:
            children.add(name)
            marker = marker or name in _MARKER_NAMES
        parent = f"{parent}{name}" if i == 0 else f"{parent}/{name}"
    return marker


def _roots_named(names: dict[str, set[str]]) -> Roots:
    storm, kafka = [], []
    for node, children in names.items():
        if node.count("/") <= ROOT_SEARCH_DEPTH or node == "/":
            kinds = root_kinds(sorted(children), partial(sorted, names.get(join(node, "brokers"), ())))
            storm += [node] * (STORM in kinds)
            kafka += [node] * (KAFKA in kinds)
    return Roots(storm=tuple(sorted(storm)), kafka=tuple(sorted(kafka)))


@lru_cache(maxsize=4096)
def _as_root(node: str) -> Roots:
    return Roots(storm=(node,), kafka=(node,))


def _claimable(path: str, registry: Registry) -> bool:
    """Whether a root not known yet could claim ``path``: some decoder matches it under one of its
    ancestors near the top (where roots are searched), were that ancestor a Storm or Kafka root."""
    segments = path.split("/")[1 : ROOT_SEARCH_DEPTH + 1]
    candidates = ["/"] + ["/" + "/".join(segments[: i + 1]) for i in range(len(segments))]
    return any(registry.lookup(path, _as_root(node)) is not None for node in candidates if node != path)


class ClusterReads(Protocol):
    """What a Storm or Kafka view reads through: the ``Cluster``'s reads, which decode under the roots a
    view passes and keep what could not be decoded in the cluster's ``problems``. The views depend on
    this, not on ``Cluster``, so the cluster can build its views without the two importing each other."""

    source: Source

    def now(self) -> float:
        """The time the data is as of."""
        ...

    def decoded(
        self, path: str, *, depth: int | None = None, detail: Detail = False, roots: Roots | None = None
    ) -> Iterator[tuple[str, list[Any]]]:
        """(path, records) of every znode under ``path``; nothing when it is absent."""
        ...

    def records(
        self, path: str, *, depth: int | None = None, detail: Detail = False, roots: Roots | None = None
    ) -> Iterator[Any]:
        """Every decoded record (and failure record) under ``path``; nothing when it is absent."""
        ...

    def children(self, path: str) -> list[str]:
        """Child names of ``path``; none when it is absent or may not be listed."""
        ...

    def exists(self, path: str) -> bool: ...
