"""The decoder registry: path pattern (relative to a Storm or Kafka root) → decoder.

The Storm and Kafka decoder modules register themselves here; the walker's consumers ask ``lookup``
for each znode and fall back to showing the detected encoding where nothing is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..paths import Roots, matches


@dataclass(frozen=True, slots=True)
class DecodeContext:
    """What a decoder may know besides the bytes: where the node is, and its stat."""

    path: str
    root: str
    relative: str
    stat: Any
    show_secrets: bool = False
    detail: bool = False  # also produce bulky detail rows (per-executor stats of a heartbeat)


DecodeFn = Callable[[DecodeContext, bytes | None], Sequence[Any]]
SummaryFn = Callable[[Sequence[Any]], str]


@dataclass(frozen=True, slots=True)
class Decoder:
    system: str
    kind: str
    pattern: tuple[str, ...]
    decode: DecodeFn
    summarize: SummaryFn | None = None


class Registry:
    def __init__(self) -> None:
        self._by_depth: dict[tuple[str, int], list[Decoder]] = {}

    def register(
        self, system: str, pattern: str, kind: str, decode: DecodeFn, summarize: SummaryFn | None = None
    ) -> None:
        segments = tuple(pattern.strip("/").split("/")) if pattern.strip("/") else ()
        decoder = Decoder(system, kind, segments, decode, summarize)
        bucket = self._by_depth.setdefault((system, len(segments)), [])
        # Literal segments beat wildcards: "config/brokers/<default>" before "config/brokers/*".
        bucket.append(decoder)
        bucket.sort(key=lambda d: sum(p == "*" for p in d.pattern))

    def lookup(self, path: str, roots: Roots) -> tuple[Decoder, str, str] | None:
        """The decoder for ``path`` with its root and relative path, or None."""
        for system, root, rel in roots.locate(path):
            segments = rel.split("/") if rel else []
            for decoder in self._by_depth.get((system, len(segments)), ()):
                if matches(decoder.pattern, segments):
                    return decoder, root, rel
        return None

    def __len__(self) -> int:
        return sum(len(b) for b in self._by_depth.values())


REGISTRY = Registry()
