"""``--watch``: re-read a view every interval and say what appeared, what cleared and what changed.

A view's rows become items: a key that identifies the subject across rounds (a finding's rule and
partition, a worker's slot), a subject to print, and a state (level and detail) whose change is worth
a line. The first round reports every item as appeared; later rounds only the differences. Each round
reads the cluster afresh (a new session, or the files as they are now), so a watch survives an
ensemble that restarts between rounds; nothing is written anywhere.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .records import KafkaFinding, StormWorker, WatchChange


@dataclass(frozen=True, slots=True)
class Item:
    """One subject of a watched view in one round."""

    key: Hashable
    subject: str
    level: str
    detail: str
    root: str  # the Storm or Kafka root the row was read under


def finding_item(finding: KafkaFinding) -> Item:
    """A health finding, keyed by its rule and what it is about (its detail may change: an ISR shrinks)."""
    where = (
        f"{finding.topic}-{finding.partition}"
        if finding.partition is not None
        else finding.topic
        if finding.topic is not None
        else f"broker {finding.broker_id}"
        if finding.broker_id is not None
        else "cluster"
    )
    return Item(
        key=(finding.finding, finding.topic, finding.partition, finding.broker_id),
        subject=f"{finding.finding} {where}",
        level=finding.level,
        detail=finding.detail,
        root=finding.root,
    )


def worker_item(worker: StormWorker) -> Item:
    """A worker slot, whose state is whether its heartbeat is stale."""
    return Item(
        key=(worker.topology_id, worker.node, worker.port),
        subject=f"worker {worker.topology_id} {worker.host or worker.node}:{worker.port}",
        level="warning" if worker.stale else "info",
        detail="heartbeat stale" if worker.stale else "heartbeat fresh",
        root=worker.root,
    )


def differences(
    before: dict[Hashable, Item], now: dict[Hashable, Item], *, round_: int, at: datetime
) -> list[WatchChange]:
    """What appeared in ``now``, what ``before`` had that cleared, and what changed state, in that order."""
    out = [_change("appeared", item, round_, at) for key, item in now.items() if key not in before]
    out += [_change("cleared", item, round_, at) for key, item in before.items() if key not in now]
    out += [
        _change("changed", item, round_, at, was=before[key])
        for key, item in now.items()
        if key in before and (before[key].level, before[key].detail) != (item.level, item.detail)
    ]
    return out


def _change(change: str, item: Item, round_: int, at: datetime, was: Item | None = None) -> WatchChange:
    return WatchChange(
        round=round_,
        at=at,
        change=change,
        subject=item.subject,
        level=item.level,
        detail=item.detail,
        was=None if was is None else f"{was.level}: {was.detail}",
        root=item.root,
    )


def watch(
    read: Callable[[], Sequence[Any]],
    to_item: Callable[[Any], Item],
    *,
    interval_secs: float,
) -> Iterator[tuple[int, Sequence[Any], list[WatchChange]]]:
    """Round number, the rows read and the changes since the round before, every ``interval_secs``
    (measured from the start of a round, so a slow read does not drift the schedule), until the
    caller stops iterating (Ctrl-C)."""
    before: dict[Hashable, Item] = {}
    for round_ in itertools.count(1):
        started = time.monotonic()
        rows = read()
        now = {item.key: item for item in map(to_item, rows)}
        yield round_, rows, differences(before, now, round_=round_, at=datetime.now(UTC))
        before = now
        time.sleep(max(0.0, interval_secs - (time.monotonic() - started)))
