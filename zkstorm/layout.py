"""Where Storm and Kafka keep things: roots, path patterns → record kinds, and the secret subtrees.

Patterns are relative to a system root and written as ``/``-separated segments where ``*`` matches
exactly one segment (``storms/*``, ``brokers/topics/*/partitions/*/state``). A Storm root is
``storm.zookeeper.root`` (default ``/storm``); a Kafka root is the cluster's chroot (default ``/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

STORM = "storm"
KAFKA = "kafka"


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent != "/" else f"/{name}"


def relative_to(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (no leading slash), ``""`` for the root itself, None if outside."""
    if root == "/":
        return path[1:]
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


def matches(pattern: tuple[str, ...], segments: list[str]) -> bool:
    if len(pattern) != len(segments):
        return False
    for p, s in zip(pattern, segments, strict=True):  # noqa: SIM110  (a loop is ~2x faster than all(...) here)
        if p != s and p != "*":
            return False
    return True


@dataclass(frozen=True, slots=True)
class Roots:
    """The Storm and Kafka roots to interpret paths under."""

    storm: tuple[str, ...] = ("/storm",)
    kafka: tuple[str, ...] = ("/",)

    def locate(self, path: str) -> list[tuple[str, str, str]]:
        """Every (system, root, relative path) that ``path`` falls under, most specific root first."""
        found = []
        for system, root, prefix in _ordered(self):
            if root == "/":
                found.append((system, root, path[1:]))
            elif path == root:
                found.append((system, root, ""))
            elif path.startswith(prefix):
                found.append((system, root, path[len(prefix) :]))
        return found


@cache
def _ordered(roots: Roots) -> tuple[tuple[str, str, str], ...]:
    """(system, root, root + "/") by decreasing root length: computed once per Roots, not per znode."""
    entries = [(STORM, r, r + "/") for r in roots.storm] + [(KAFKA, r, r + "/") for r in roots.kafka]
    return tuple(sorted(entries, key=lambda e: -len(e[1])))


DEFAULT_ROOTS = Roots()

# Subtrees whose payloads are secret by nature (storm.md §4.7, §4.10; kafka.md §1, §3.10, §3.16).
# Their raw bytes and undecoded values are never shown without --show-secrets; decoders of these
# paths redact field by field. They are matched as a path *suffix* under any root: redaction must not
# depend on the operator passing the right --storm-root/--kafka-root (hiding an unrelated node that
# happens to end like one of these is the safe mistake).
SECRET_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("credentials", "*"),
    ("secretkeys", "*", "*", "*"),
    ("config", "users", "*"),
    ("config", "users", "*", "clients", "*"),
    ("config", "brokers", "*"),
    ("delegation_token", "tokens", "*"),
)


def is_secret_path(path: str) -> bool:
    segments = path.strip("/").split("/")
    return any(
        len(segments) >= len(pattern) and matches(pattern, segments[-len(pattern) :]) for pattern in SECRET_PATTERNS
    )
