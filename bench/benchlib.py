"""What every benchmark script shares."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def write_result(path: Path | None, result: Any) -> None:
    """Save a benchmark's result as JSON (``--json FILE``), creating the folder."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")


def sequential_kazoo_walk(connect: str, limit: int | None = None) -> tuple[int, float]:
    """(znodes, seconds) of the plain client walk every benchmark compares with: one synchronous
    ``get`` and one ``get_children`` per znode, depth first, stopped after ``limit`` znodes if given
    (the whole of a large tree would take minutes; a few thousand znodes give the rate)."""
    from kazoo.client import KazooClient

    client = KazooClient(connect, timeout=30)
    client.start(timeout=30)
    count, stack = 0, ["/"]
    started = time.perf_counter()
    try:
        while stack and (limit is None or count < limit):
            path = stack.pop()
            client.get(path)
            count += 1
            stack.extend(f"{path.rstrip('/')}/{name}" for name in client.get_children(path))
    finally:
        client.stop()
        client.close()
    return count, time.perf_counter() - started
