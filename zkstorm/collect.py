"""The library API: walk a session and turn what it reads into records.

``walk`` is the one place where bytes meet decoders: the walker yields raw nodes off kazoo's I/O
thread, and this module sniffs, decodes and summarises them in the caller's thread, so decoding
overlaps with the reads still in flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .decode.registry import REGISTRY, DecodeContext, Registry
from .decode.sniff import detect_encoding
from .errors import DecodeError
from .paths import DEFAULT_ROOTS, Roots
from .records import DecodeFailure, Unreadable, Znode
from .zk import Denied, RawNode, ReadOnlySession, WalkStats


def to_znode(raw: RawNode, encoding: str, summary: str | None = None) -> Znode:
    st = raw.stat
    return Znode(
        path=raw.path,
        czxid=st.czxid,
        mzxid=st.mzxid,
        pzxid=st.pzxid,
        ctime_ms=st.ctime,
        mtime_ms=st.mtime,
        version=st.version,
        cversion=st.cversion,
        aversion=st.aversion,
        ephemeral_owner=st.ephemeralOwner,
        data_length=st.dataLength,
        num_children=st.numChildren,
        ephemeral=st.ephemeralOwner != 0,
        encoding=encoding,
        summary=summary,
    )


def decode_node(
    raw: RawNode, *, roots: Roots = DEFAULT_ROOTS, registry: Registry = REGISTRY, show_secrets: bool = False
) -> tuple[Znode, list[Any]]:
    """The znode record of ``raw`` and whatever its registered decoder makes of the bytes.

    A decoder that raises ``DecodeError`` yields one ``DecodeFailure`` instead; nothing else escapes.
    """
    encoding = detect_encoding(raw.data)
    found = registry.lookup(raw.path, roots)
    if found is None:
        return to_znode(raw, encoding), []
    decoder, root, rel = found
    context = DecodeContext(raw.path, root, rel, raw.stat, show_secrets)
    try:
        records = list(decoder.decode(context, raw.data))
    except DecodeError as exc:
        failure = DecodeFailure(
            path=raw.path,
            record_kind=decoder.kind,
            failure_type=exc.failure_type,
            reason=exc.reason,
            size=len(raw.data or b""),
            encoding=encoding,
        )
        return to_znode(raw, encoding, f"undecodable {decoder.kind}: {exc.reason}"), [failure]
    summary = decoder.summarize(records) if decoder.summarize and records else None
    return to_znode(raw, encoding, summary), records


def walk(
    session: ReadOnlySession,
    path: str = "/",
    *,
    depth: int | None = None,
    roots: Roots = DEFAULT_ROOTS,
    registry: Registry = REGISTRY,
    show_secrets: bool = False,
    stats: WalkStats | None = None,
) -> Iterator[Any]:
    """Every znode under ``path`` as a ``Znode`` followed by its decoded records (or a failure record)."""
    for item in session.walk(path, max_depth=depth, stats=stats):
        if isinstance(item, Denied):
            yield Unreadable(path=item.path, reason=item.reason)
            continue
        znode, records = decode_node(item, roots=roots, registry=registry, show_secrets=show_secrets)
        yield znode
        yield from records
