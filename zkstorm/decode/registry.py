"""The decoder registry: path pattern (relative to a Storm or Kafka root) → decoder, and what every
decoder is given (``DecodeContext``) and shares (``utc``).

The Storm and Kafka decoder modules register themselves here; the walker's consumers ask ``lookup``
for each znode and fall back to showing the detected encoding where nothing is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ..errors import DecodeError, FailureType
from ..layout import Roots, matches

# ``detail`` as the snapshot asks for it: a heartbeat's counters come as one ``StormExecutorStatColumns``
# instead of a ``StormExecutorStat`` per counter (the snapshot writes them to Parquet as columns)
DETAIL_COLUMNS: Literal["columns"] = "columns"
Detail = bool | Literal["columns"]


@dataclass(slots=True)
class DecodeContext:
    """What a decoder may know besides the bytes: where the node is, and its stat."""

    path: str
    root: str
    relative: str
    stat: Any
    show_secrets: bool = False
    detail: Detail = False  # also produce bulky detail rows (per-executor stats of a heartbeat)
    # Set by a decoder that learnt the payload's encoding by reading it (``sniff``'s names), so the bytes
    # are parsed once: ``decode_node`` sniffs only what no decoder claims, or what one failed on.
    encoding: str | None = None
    # Set by a decoder that replaced a secret with "<redacted>": the znode's raw bytes hold what it hid, so
    # ``get`` must not show them either (its hexdump, ``raw_hex``, its plain value) without --show-secrets.
    redacted: bool = False

    @property
    def segments(self) -> list[str]:
        """The path's segments below the root: ``["workerbeats", "wordcount-1-1751880000", "node-6700"]``."""
        return self.relative.split("/")


def utc(secs: float) -> datetime:
    """Epoch seconds read from a payload as a UTC datetime: the one conversion every decoder uses, so a time
    no clock can hold (a corrupt or hostile value) is a ``value_out_of_range`` failure wherever it is met."""
    try:
        return datetime.fromtimestamp(secs, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise DecodeError(f"time {secs} is out of range", failure_type=FailureType.VALUE_OUT_OF_RANGE) from None


DecodeFn = Callable[[DecodeContext, bytes | None], Sequence[Any]]
SummaryFn = Callable[[Sequence[Any]], str]
# The record a znode stands for when it cannot be decoded or read, built from its path and the reason
# (a failure type, or "unreadable"): list views show every entity that exists, decoded or not.
PlaceholderFn = Callable[[DecodeContext, str], Any]


@dataclass(frozen=True, slots=True)
class Decoder:
    system: str
    kind: str
    pattern: tuple[str, ...]
    decode: DecodeFn
    summarize: SummaryFn | None = None
    placeholder: PlaceholderFn | None = None
    # its payloads carry secrets it redacts field by field (Kafka's dynamic configs): when it cannot decode
    # one, nothing was redacted, so the raw bytes must be hidden whole
    may_hold_secrets: bool = False


class Registry:
    def __init__(self) -> None:
        self._by_depth: dict[tuple[str, int], list[Decoder]] = {}
        # (system, depth) -> (first literal segment -> candidates, candidates whose first segment is "*"):
        # a lookup runs per znode, so it tries only the few patterns that can match the first segment.
        self._index: dict[tuple[str, int], tuple[dict[str, tuple[Decoder, ...]], tuple[Decoder, ...]]] = {}

    def register(
        self,
        system: str,
        pattern: str,
        kind: str,
        decode: DecodeFn,
        summarize: SummaryFn | None = None,
        placeholder: PlaceholderFn | None = None,
        *,
        may_hold_secrets: bool = False,
    ) -> None:
        segments = tuple(pattern.strip("/").split("/")) if pattern.strip("/") else ()
        decoder = Decoder(system, kind, segments, decode, summarize, placeholder, may_hold_secrets)
        bucket = self._by_depth.setdefault((system, len(segments)), [])
        # Literal segments beat wildcards: "config/brokers/<default>" before "config/brokers/*".
        bucket.append(decoder)
        bucket.sort(key=lambda d: sum(p == "*" for p in d.pattern))
        self._index[(system, len(segments))] = _first_segment_index(bucket)

    def lookup(self, path: str, roots: Roots) -> tuple[Decoder, str, str] | None:
        """The decoder for ``path`` with its root and relative path, or None."""
        for system, root, rel in roots.locate(path):
            segments = rel.split("/") if rel else []
            index = self._index.get((system, len(segments)))
            if index is None:
                continue
            by_first, wildcard_first = index
            for decoder in by_first.get(segments[0], wildcard_first) if segments else wildcard_first:
                if matches(decoder.pattern, segments):
                    return decoder, root, rel
        return None

    def __len__(self) -> int:
        return sum(len(b) for b in self._by_depth.values())

    def decoders(self) -> list[Decoder]:
        """Every registered decoder (for what lists them all: the record kinds ``zk usage`` names)."""
        return [d for bucket in self._by_depth.values() for d in bucket]


def _first_segment_index(
    bucket: list[Decoder],
) -> tuple[dict[str, tuple[Decoder, ...]], tuple[Decoder, ...]]:
    """The bucket's decoders grouped by first segment, each group in the bucket's (priority) order."""
    wildcard_first = tuple(d for d in bucket if not d.pattern or d.pattern[0] == "*")
    literals = {d.pattern[0] for d in bucket if d.pattern and d.pattern[0] != "*"}
    by_first = {first: tuple(d for d in bucket if not d.pattern or d.pattern[0] in ("*", first)) for first in literals}
    return by_first, wildcard_first


REGISTRY = Registry()
