"""Load ../shared/fixtures cluster folders: their znodes, bytes and expected values."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHARED = Path(os.environ.get("ZKSTORM_SHARED", Path(__file__).resolve().parents[2] / "shared"))
FIXTURES = SHARED / "fixtures"

STORM_FOLDERS = ("storm2", "storm1", "encodings", "legacy09")
KAFKA_FOLDERS = ("cluster-2x-chroot", "cluster-08-root", "migrated-kraft", "corrupt")
# Nodes every ZooKeeper server already has; manifests list them for completeness.
SERVER_NODES = ("/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config")


@dataclass(frozen=True)
class FixtureNode:
    path: str
    data: bytes | None
    ephemeral: bool


def folder(system: str, name: str) -> Path:
    return FIXTURES / system / name


def manifest(system: str, name: str) -> list[FixtureNode]:
    base = folder(system, name)
    nodes = []
    for entry in json.loads((base / "znodes.json").read_text()):
        data = (base / entry["file"]).read_bytes() if entry.get("file") else None
        nodes.append(FixtureNode(entry["path"], data, bool(entry.get("ephemeral"))))
    return nodes


def expected(system: str, name: str) -> dict[str, Any]:
    return json.loads((folder(system, name) / "expected.json").read_text())


def all_clusters() -> list[tuple[str, str]]:
    return [("storm", n) for n in STORM_FOLDERS] + [("kafka", n) for n in KAFKA_FOLDERS]
