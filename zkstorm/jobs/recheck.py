"""Which incidents a nightly run finds again, and which it keeps as the store has them.

Every incident is found in a short stretch of snapshots: a lasting state (a broker gone, a supervisor
missing, partitions offline) in its run of snapshots and the one just before it, where its subject was
last seen; a change in a snapshot and the one before it; an error burst in one day's errors. So a
nightly run need not find the year's incidents again. Per cluster with new snapshots it finds again those
that start after a cutoff, in the snapshots from the cutoff on, and keeps the rest:

- the cutoff is the newest snapshot the kept incidents were found through, or, when an incident was still
  going on there, the snapshot just before the oldest such one started: the new nights may end it or make
  it longer;
- partitions offline carry their run in their fact (``kafka_facts.kafka_offline_runs``): the newest kept
  snapshot says an ongoing run whole, so their cutoff stays there, and a run still going on there is found
  again from it;
- error bursts go by day: the days the new nights' errors fall on are found again, from every error of
  those days.

The kept incidents say which snapshots they were found through (``HistoryStore.incidents``). When they
do not match the facts kept (a run that died between its commit and its incidents), are not there, or
the run times incidents by a changes dataset (whose logs may time an older incident afresh), every
incident is found again. Either way the incidents are a full rebuild's (``tests/test_history.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import ZkstormError
from .facts import spark_functions as _F
from .incidents import Incident
from .metrics import History

# incidents that are a day's: found again for the days the new nights' errors fall on
DAILY = frozenset({"error_burst"})
# lasting states whose fact carries their run so far: found again from the newest kept snapshot
CARRIED = frozenset({"partitions_offline"})


@dataclass(frozen=True)
class Recheck:
    """What a nightly run finds again. ``after``: per cluster with new snapshots, the time after which
    its incidents start that are found again (None: all of its incidents); ``back``: per (cluster, kind)
    of a lasting state still going on, an earlier such time for that kind alone; ``days``: per cluster,
    the days (in Spark's time zone, ``zone``) whose error bursts are found again."""

    after: dict[str, datetime | None]
    back: dict[tuple[str, str], datetime | None]
    days: dict[str, frozenset[date]]
    zone: tzinfo

    def cutoff(self, cluster: str, kind: str) -> datetime | None:
        return self.back.get((cluster, kind), self.after[cluster])

    def covers(self, incident: Incident) -> bool:
        """Whether this run finds ``incident`` again (so the kept copy goes, and a new one is kept). One
        of a carried kind still going on at the cutoff is found again from there, so is every one it
        finds of that kind: it went on to a snapshot read."""
        if incident.cluster not in self.after:
            return False
        if incident.kind in CARRIED and incident.ongoing:
            return True
        if incident.kind in DAILY:
            return incident.started.astimezone(self.zone).date() in self.days.get(incident.cluster, frozenset())
        cutoff = self.cutoff(incident.cluster, incident.kind)
        return cutoff is None or incident.started > cutoff

    def snapshots(self, every: list[tuple[str, str, datetime]], kind: str) -> list[str]:
        """The ids of the snapshots ``kind``'s incidents are found again in: from each cutoff on."""
        return sorted(
            snapshot_id
            for cluster, snapshot_id, at in every
            if cluster in self.after and ((cutoff := self.cutoff(cluster, kind)) is None or at >= cutoff)
        )

    def read(self, every: list[tuple[str, str, datetime]], kinds: list[str]) -> int:
        """How many snapshots the rules read: those of the longest stretch."""
        return max((len(self.snapshots(every, kind)) for kind in kinds), default=0) if self.after else 0

    def stretch(self, h: History, every: list[tuple[str, str, datetime]], kind: str) -> History:
        """``h`` cut down to the snapshots ``kind``'s incidents are found again in (its facts and
        per-snapshot metrics too), with ``h`` itself as the whole (``History.everything``) and the days of
        the error bursts."""
        F = _F()
        ids = self.snapshots(every, kind)
        snaps = h.snaps.where(F.col("snapshot_id").isin(ids))
        times = snaps.select("cluster", "snapshot_time")
        cutoffs = [self.cutoff(cluster, kind) for cluster in self.after]
        # a per-snapshot table gets a file a night: a filter on the time skips the older nights' files
        since = None if None in cutoffs else min(c for c in cutoffs if c is not None)

        def cut(table: Any) -> Any:
            if "snapshot_time" not in table.columns:
                return table
            recent = table if since is None else table.where(F.col("snapshot_time") >= F.lit(since))
            return recent.join(times, ["cluster", "snapshot_time"], "left_semi")

        computed = {name: cut(table) for name, table in h.computed.items()}
        return replace(h, facts=_Within(h.facts, ids), snaps=snaps, computed=computed, whole=h, error_days=self.days)

    def merge(self, kept: list[Incident], found: list[Incident]) -> list[Incident]:
        """The kept incidents this run does not find again, and those it found that it covers (every
        one of a carried kind: it reaches a snapshot read, so it began after the cutoff or went on past it)."""
        return [i for i in kept if not self.covers(i)] + [
            i for i in found if (i.kind in CARRIED and i.cluster in self.after) or self.covers(i)
        ]


@dataclass
class _Within:
    """Facts cut down to some snapshots (``Recheck.stretch``). Each kept fact's file is sorted by
    snapshot (``jobs/store.py``), so a few nights are read without the year."""

    facts: Any
    ids: list[str]

    def table(self, name: str) -> Any | None:
        rows = self.facts.table(name)
        return None if rows is None else rows.where(_F().col("snapshot_id").isin(self.ids))


def plan(
    kept: list[Incident],
    kept_snapshots: list[tuple[str, str, datetime]],
    new: list[tuple[str, str, datetime]],
    error_days: dict[str, frozenset[date]],
    zone: tzinfo,
) -> Recheck:
    """The recheck of a nightly run: ``kept`` the incidents found through ``kept_snapshots`` (the facts
    kept before this run), ``new`` this run's snapshots, ``error_days`` the days of the new nights' errors
    per cluster. A lasting state still going on sends back only its own kind's cutoff, to the snapshot
    before it started: a broker gone for good makes the brokers' rule read its months, not every rule."""
    taken: dict[str, list[datetime]] = {}
    for cluster, _, at in kept_snapshots:
        taken.setdefault(cluster, []).append(at)
    after: dict[str, datetime | None] = {}
    back: dict[tuple[str, str], datetime | None] = {}
    for cluster in sorted({s[0] for s in new}):
        if cluster not in taken:
            after[cluster] = None  # a cluster first seen tonight: all of its incidents are new
            continue
        after[cluster] = max(taken[cluster])
        for incident in kept:
            if incident.cluster != cluster or not incident.ongoing or incident.kind in DAILY | CARRIED:
                continue
            before = [t for t in taken[cluster] if t < incident.started]
            key = (cluster, incident.kind)
            cutoff = back.get(key, after[cluster])
            back[key] = None if not before or cutoff is None else min(cutoff, max(before))
    return Recheck(after, back, {c: d for c, d in error_days.items() if c in after}, zone)


def error_days(errors: Any | None) -> dict[str, frozenset[date]]:
    """Per cluster, the days (``to_date`` in Spark's time zone, as ``incidents.error_bursts`` makes them)
    of the errors in ``errors`` (the new nights' ``storm_errors_unique``)."""
    if errors is None:
        return {}
    F = _F()
    found: dict[str, set[date]] = {}
    for r in errors.select("cluster", F.to_date("error_at").alias("day")).distinct().collect():
        if r["day"] is not None:
            found.setdefault(r["cluster"], set()).add(r["day"])
    return {cluster: frozenset(days) for cluster, days in found.items()}


def spark_zone(spark: Any) -> tzinfo:
    """The time zone Spark's ``to_date`` uses (``spark.sql.session.timeZone``; UTC in zkstorm's own
    sessions)."""
    name = spark.conf.get("spark.sql.session.timeZone")
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError):  # an offset: +01:00, GMT-8, UTC+5:30
        found = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", name.strip())
        if found is None:
            raise ZkstormError(f"spark.sql.session.timeZone {name!r}: not a time zone zkstorm can read") from None
        sign = -1 if found[1] == "-" else 1
        return timezone(sign * timedelta(hours=int(found[2]), minutes=int(found[3] or 0)))
