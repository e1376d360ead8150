"""Moments kept: the real znode bytes a real cluster wrote, and Kafka's own answer read at the same moment,
under ``tests/data/real/<profile>/<moment>/`` (``scripts/capture_kafka_real.py`` writes them again). The
tests that need no Java read them back through ``MemorySource``: the znodes exactly as ZooKeeper held
them (data and stat: a registration's czxid is its broker epoch, its ephemeralOwner its session), served
to the CLI as if from an ensemble, and compare what zkstorm shows with what Kafka said
(``compare.py``), as the live tests do.

A moment's folder: ``znodes.json`` (``chroot``, ``as_of_ms``, the server's ``zxid``, and each znode's path
under the chroot, stat in wire order and data: ``text`` when UTF-8, else ``base64``) and ``kafka.json``
(the version, the AdminClient's ``describe``, ``kafka-topics --describe``'s ``verdicts``)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkstorm.errors import NotFoundError
from zkstorm.sources.base import Denied, RawNode, Stat, WalkStats

DATA = Path(__file__).resolve().parents[1] / "data" / "real"


@dataclass
class Moment:
    """One moment of a real cluster: the znodes under its chroot and Kafka's answers, read while neither
    changed (the server's zxid and Kafka's answer were the same before and after)."""

    profile: str
    name: str
    chroot: str
    as_of_ms: int
    zxid: int
    znodes: list[RawNode]
    kafka: dict[str, Any]  # {"describe": AdminClient, "verdicts": kafka-topics --describe}

    def save(self, base: Path, answer: str = "kafka") -> Path:
        """Write the moment under ``base/<profile>/<name>/``: ``znodes.json`` and ``<answer>.json`` (what
        the system said: ``kafka.json``, or ``storm.json`` for a Storm cluster's Nimbus)."""
        folder = base / self.profile / self.name
        folder.mkdir(parents=True, exist_ok=True)
        nodes = []
        for node in sorted(self.znodes, key=lambda n: n.path):
            entry: dict[str, Any] = {"path": node.path, "stat": list(node.stat)}
            if node.data is None:
                entry["data"] = None
            else:
                try:
                    entry["text"] = node.data.decode("utf-8")
                except UnicodeDecodeError:
                    entry["base64"] = base64.b64encode(node.data).decode()
            nodes.append(entry)
        document = {"chroot": self.chroot, "as_of_ms": self.as_of_ms, "zxid": self.zxid, "znodes": nodes}
        (folder / "znodes.json").write_text(_dumps(document))
        (folder / f"{answer}.json").write_text(_dumps({"profile": self.profile, "moment": self.name, **self.kafka}))
        return folder

    @classmethod
    def load(cls, folder: Path) -> Moment:
        document = json.loads((folder / "znodes.json").read_text())
        answer = folder / "kafka.json"
        kafka = json.loads((answer if answer.exists() else folder / "storm.json").read_text())
        nodes = []
        for entry in document["znodes"]:
            if "text" in entry:
                data: bytes | None = entry["text"].encode("utf-8")
            elif "base64" in entry:
                data = base64.b64decode(entry["base64"])
            else:
                data = None
            nodes.append(RawNode(entry["path"], Stat(*entry["stat"]), data))
        return cls(
            profile=kafka.pop("profile"),
            name=kafka.pop("moment"),
            chroot=document["chroot"],
            as_of_ms=document["as_of_ms"],
            zxid=document["zxid"],
            znodes=nodes,
            kafka=kafka,
        )


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=False) + "\n"


def captured(profile: str) -> list[Path]:
    """The moment folders kept for ``profile``, in the order they were taken (``order.json``)."""
    base = DATA / profile
    order = json.loads((base / "order.json").read_text()) if (base / "order.json").exists() else []
    return [base / name for name in order if (base / name / "znodes.json").exists()]


def dump(client: Any, chroot: str) -> list[RawNode]:
    """Every znode under ``chroot`` as a kazoo client reads it (the tests' own writer, never zkstorm), with
    paths relative to the chroot."""
    nodes: list[RawNode] = []
    stack = [chroot]
    while stack:
        path = stack.pop()
        try:
            data, stat = client.get(path)
            children = client.get_children(path)
        except Exception as exc:
            if type(exc).__name__ == "NoNodeError":
                continue
            raise
        relative = path[len(chroot) :] or "/"
        nodes.append(
            RawNode(
                relative,
                Stat(
                    stat.czxid,
                    stat.mzxid,
                    stat.ctime,
                    stat.mtime,
                    stat.version,
                    stat.cversion,
                    stat.aversion,
                    stat.ephemeralOwner,
                    stat.dataLength,
                    stat.numChildren,
                    stat.pzxid,
                ),
                data,
            )
        )
        stack += [f"{path.rstrip('/')}/{c}" for c in sorted(children, reverse=True)]
    return nodes


class MemorySource:
    """A ``zkstorm.sources.base.Source`` over captured znodes: the tree as ZooKeeper held it, read-only,
    as of the moment's time."""

    cheap_listings = True

    def __init__(self, nodes: list[RawNode], as_of_ms: int) -> None:
        self.nodes = {n.path: n for n in nodes}
        self.children: dict[str, list[str]] = {path: [] for path in self.nodes}
        for path in self.nodes:
            if path != "/":
                parent, _, name = path.rpartition("/")
                self.children.setdefault(parent or "/", []).append(name)
        for names in self.children.values():
            names.sort()
        self.as_of_ms = as_of_ms

    def connect(self) -> None:
        return None

    def close(self) -> None:
        return None

    def get(self, path: str) -> RawNode:
        node = self.nodes.get(_norm(path))
        if node is None:
            raise NotFoundError(f"no znode {path}")
        return node

    def get_children(self, path: str) -> list[str]:
        path = _norm(path)
        if path not in self.nodes:
            raise NotFoundError(f"no znode {path}")
        return list(self.children.get(path, []))

    def exists(self, path: str) -> bool:
        return _norm(path) in self.nodes

    def walk(
        self, path: str = "/", *, max_depth: int | None = None, stats: WalkStats | None = None
    ) -> Iterator[RawNode | Denied]:
        path = _norm(path)
        if path not in self.nodes:
            return
        stack = [(path, 0)]
        while stack:
            current, depth = stack.pop()
            if stats is not None:
                stats.znodes += 1
            yield self.nodes[current]
            if max_depth is None or depth < max_depth:
                base = current.rstrip("/")
                stack += [(f"{base}/{c}", depth + 1) for c in reversed(self.children.get(current, []))]

    def as_of(self) -> float:
        return self.as_of_ms / 1000

    def describe(self) -> dict[str, Any]:
        return {"source": "captured moment"}

    def default_cluster_name(self) -> str:
        return "captured"

    def problems(self) -> list[str]:
        return []


def _norm(path: str) -> str:
    return "/" + path.strip("/") if path.strip("/") else "/"
