"""Findings derived from records against a point in time: nothing here reads ZooKeeper."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .records import StormWorker


def with_heartbeat_age(workers: Iterable[StormWorker], now_secs: float, stale_after_secs: float) -> list[StormWorker]:
    """Each worker with its heartbeat age and a stale flag (no beat for longer than ``stale_after_secs``).

    Storm's own default is ``nimbus.task.timeout.secs`` = 30: after that nimbus reassigns the worker's
    executors. A beat from the future (clock skew) counts as age 0.
    """
    out = []
    for worker in workers:
        age = max(0, int(now_secs - worker.time_secs))
        out.append(dataclasses.replace(worker, age_secs=age, stale=age > stale_after_secs))
    return out
