"""Load the fixture cluster folders (tests/data/fixtures): their znodes, bytes and expected values.

The folder is a copy of the fixture set kept inside the repository (tests/data/README.md): the tests
read it and nothing outside the clone, so a clone runs its tests alone.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "data" / "fixtures"

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


def zkfiles_expected() -> dict[str, Any]:
    """zkfiles/expected.json, kept gzipped in the repository's copy (tests/data/README.md)."""
    return json.loads(gzip.decompress((FIXTURES / "zkfiles" / "expected.json.gz").read_bytes()))


def all_clusters() -> list[tuple[str, str]]:
    return [("storm", n) for n in STORM_FOLDERS] + [("kafka", n) for n in KAFKA_FOLDERS]


def distinct_errors(system_znodes: dict[str, Any], root: str) -> list[tuple[str, str, int]]:
    """The errors a Storm fixture stores under ``root``, each once, as (path, error, time): every e-node,
    and a component's ``-last-error`` only when no e-node of that component repeats it (Storm writes
    the last error twice; the second copy is not a second error). Computed from the expected values,
    independently of the code under test."""
    enodes, lasts = [], []
    for path, entry in system_znodes.items():
        if not path.startswith(root + "/") or entry["record_type"] not in ("ErrorInfo", "error map"):
            continue
        value = entry["value"]
        error = value.get("error", value.get(":error"))
        when = int(value.get("error_time_secs", value.get(":time-secs")))
        component = (
            path.rsplit("/", 2)[-2]
            if not path.endswith("-last-error")
            else path.rsplit("/", 1)[1][: -len("-last-error")]
        )
        (lasts if path.endswith("-last-error") else enodes).append((path, component, error, when))
    once = [(p, e, w) for p, _, e, w in enodes]
    seen = {(c, e, w) for _, c, e, w in enodes}
    once += [(p, e, w) for p, c, e, w in lasts if (c, e, w) not in seen]
    return once
