"""Incidents: what happened between the snapshots, as dated entries that name their subjects.

The history report opens with them, the terminal summary lists the newest, and ``--out`` keeps them
as the ``incidents`` table: all three from the same ``Incident`` records. Each rule reads a snapshot
fact or a metric the job has already computed (``History.computed``), aggregates in Spark down
to a few rows per event and words them here. A new kind of incident is one function in ``RULES``, under
its kind.
Rules read only facts and metrics (``metrics.History``), never a snapshot's own tables.

A state that lasts (a broker gone, a supervisor missing, partitions offline) is one incident from the
first snapshot that shows it to the first that no longer does (``ended``; None while it goes on in
the newest snapshot). A topology gone is not a state that lasts (its id never comes back): it starts and
ends at the first snapshot without it. A change between two snapshots (ISR shrinks, leader moves, an election) is one
incident per snapshot that shows it. Error bursts are per topology and day. A Kafka cluster read from
its KRaft controllers after ZooKeeper is one incident at the first snapshot read there.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import astuple, dataclass, field, fields, replace
from datetime import UTC, date, datetime, time
from functools import reduce
from typing import Any

from ..units import plural
from .facts import presence_grid
from .facts import spark_window as _window
from .metrics import History, signature_column

ERROR_BURST = 10  # stored errors of one topology on one day that make a burst
# A subtree that grows by half again, and by this much at least, between two snapshots (zookeeper_growth)
GROWTH_RATIO = 1.5
GROWTH_MIN_BYTES = 1 << 20
GROWTH_MIN_ZNODES = 10_000
NAMED = 4  # subjects named in a summary; the rest are counted

CRITICAL, WARNING, INFO = "critical", "warning", "info"


@dataclass(frozen=True)
class Incident:
    """One entry of the timeline. ``chart`` is the metric whose chart shows it."""

    cluster: str
    root: str  # the Storm root or Kafka chroot of the subjects
    system: str
    kind: str
    level: str
    started: datetime
    ended: datetime | None  # a lasting state's end: the first snapshot without it
    ongoing: bool  # a lasting state still seen in the newest snapshot
    snapshots: int
    subjects: list[str]
    count: int
    summary: str
    chart: str
    exact: bool = False  # started and ended are the txns' own times, from a changes dataset

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Incident:
        """An incident from a row of the ``incidents`` table (``frame`` writes them; Spark's naive local
        times made UTC)."""
        values = dict(row)
        values["started"] = _utc(values["started"])
        values["ended"] = _utc(values["ended"]) if values["ended"] is not None else None
        values["subjects"] = list(values["subjects"] or [])
        return cls(**values)

    @classmethod
    def between_two(cls, **what: Any) -> Incident:
        """What happened between a snapshot and the one before it (an election, a burst, a growth): seen
        in that one snapshot, not a lasting state that ends."""
        return cls(**what, ended=None, ongoing=False, snapshots=1)


def _F() -> Any:
    from pyspark.sql import functions

    return functions


def _utc(value: Any) -> datetime:
    """PySpark hands timestamps back as naive local time; dates become the day's midnight UTC."""
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(0), UTC)
    raise TypeError(f"not a time: {value!r}")


def _day(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "-"


def named(pairs: Iterable[tuple[str, int]], *, limit: int = NAMED, names: int | None = None) -> str:
    """``clicks (12), orders (10) and 3 more`` from (name, count) pairs, largest first; ``names`` is how
    many there are in all when ``pairs`` holds only the largest."""
    ranked = sorted(pairs, key=lambda p: (-p[1], p[0]))
    shown = ", ".join(f"{name} ({count:,})" for name, count in ranked[:limit])
    rest = (len(ranked) if names is None else names) - limit
    return f"{shown} and {rest:,} more" if rest > 0 else shown


def _ranked(frame: Any, group: list[str], key: str, value: str | None, *, amount: str = "sum") -> Any:
    """Per ``group``: the total of ``value`` (or of rows), how many ``key`` there are (``names``) and
    the ``NAMED`` largest with their own totals (``ranked``: array of (n, name), largest first, then by
    name, as ``named`` words them). Only those few leave Spark."""
    F = _F()
    per_key = frame.groupBy(*group, key).agg(
        (F.count(F.lit(1)) if value is None else getattr(F, amount)(value)).alias("n")
    )
    name = F.coalesce(F.col(key).cast("string"), F.lit("None"))
    largest = F.slice(
        F.sort_array(F.collect_list(F.struct((-F.col("n")).alias("minus_n"), name.alias("name")))), 1, NAMED
    )
    return per_key.groupBy(*group).agg(
        F.sum("n").alias("total"),
        F.count(F.lit(1)).alias("names"),
        F.transform(largest, lambda r: F.struct((-r["minus_n"]).alias("n"), r["name"].alias("name"))).alias("ranked"),
    )


def paired_with_previous(ranked: list[Any], prefix: str = "") -> list[tuple[str, int]]:
    return [(f"{prefix}{r['name']}", int(r["n"])) for r in ranked]


# --- states that last ----------------------------------------------------------------------------------


def _absences(h: History, present: Any, key: str, last_seen: Any, columns: list[str]) -> list[Any]:
    """Runs of snapshots in which ``key`` (seen earlier in its cluster) was absent: cluster, key,
    started, snapshots, the first snapshot's id, ``ended`` (the next snapshot's time, if any) and
    ``columns`` of ``last_seen`` (rows with snapshot_id, root and ``key``) in the snapshot just before the
    run: how the subject was when it went (a broker's endpoint then, not one it had years later)."""
    from pyspark.sql import Window as W

    F = _F()
    grid = presence_grid(h.snaps, present, key)
    earlier = W.partitionBy("cluster", "root", key).orderBy("idx").rowsBetween(W.unboundedPreceding, -1)
    absent = grid.withColumn("seen_before", F.max(F.col("present").cast("int")).over(earlier)).where(
        ~F.col("present") & (F.col("seen_before") == 1)
    )
    by_key = W.partitionBy("cluster", "root", key).orderBy("idx")
    runs = absent.withColumn("run", F.col("idx") - F.row_number().over(by_key))
    spans = runs.groupBy("cluster", "root", key, "run").agg(
        F.min("snapshot_time").alias("started"),
        F.count(F.lit(1)).alias("snapshots"),
        F.min_by("snapshot_id", "idx").alias("first_id"),
        F.min("idx").alias("start_idx"),
        F.max("idx").alias("end_idx"),
    )
    after = h.snaps.select("cluster", (F.col("idx") - 1).alias("end_idx"), F.col("snapshot_time").alias("ended"))
    # the subject is present in the snapshot before its run, as only its presence makes the run start there
    before = last_seen.join(h.snaps.select("snapshot_id", (F.col("idx") + 1).alias("start_idx")), "snapshot_id")
    before = before.select("root", key, "start_idx", *columns).dropDuplicates(["root", key, "start_idx"])
    found = spans.join(after, ["cluster", "end_idx"], "left").join(before, ["root", key, "start_idx"], "left")
    return found.orderBy("cluster", "root", "started", key).collect()


def _lasting(snapshots: int, ended: datetime | None) -> str:
    span = plural(snapshots, "snapshot")
    return f"missing in {span}, back {_day(ended)}" if ended else f"missing in {span}, still missing"


def brokers_gone(h: History) -> list[Incident]:
    """A registered broker that disappeared, with its endpoint when last seen and the partitions it was a
    replica of at the time."""
    live = h.fact("kafka_broker_presence")
    if live is None:
        return []
    spans = _absences(h, live.select("cluster", "snapshot_id", "root", "broker_id"), "broker_id", live, ["endpoint"])
    if not spans:
        return []
    impact: dict[tuple[str, str, int], Any] = {}
    facts = h.fact("kafka_broker_impact")
    if facts is not None:
        starts = h.snaps.sparkSession.createDataFrame(
            [(s["first_id"], s["root"], int(s["broker_id"])) for s in spans],
            "snapshot_id string, root string, broker_id bigint",
        )
        for r in facts.join(starts, ["snapshot_id", "root", "broker_id"]).collect():
            impact[(r["snapshot_id"], r["root"], int(r["broker_id"]))] = r
    out = []
    for s in spans:
        broker = int(s["broker_id"])
        hit_row = impact.get((s["first_id"], s["root"], broker))
        detail = ""
        if hit_row is not None:
            detail = (
                f"; it was a replica of {hit_row['replica_of']:,} partitions, the preferred leader of "
                f"{hit_row['preferred'] or 0:,}; {hit_row['offline'] or 0:,} of them offline"
            )
        what = f"broker {broker} ({s['endpoint'] or '?'}) not registered:"
        out.append(_absence(s, ("Kafka", "broker_gone", CRITICAL, "kafka_brokers"), f"broker {broker}", what, detail))
    return out


def _absence(span: Any, rule: tuple[str, str, str, str], subject: str, what: str, detail: str) -> Incident:
    """The incident of one run of absences (``_absences``); ``rule`` is (system, kind, level, chart)."""
    system, kind, level, chart = rule
    ended = _utc(span["ended"]) if span["ended"] else None
    return Incident(
        cluster=span["cluster"],
        root=span["root"],
        system=system,
        kind=kind,
        level=level,
        started=_utc(span["started"]),
        ended=ended,
        ongoing=ended is None,
        snapshots=span["snapshots"],
        subjects=[subject],
        count=1,
        summary=f"{what} {_lasting(span['snapshots'], ended)}{detail}",
        chart=chart,
    )


def supervisors_missing(h: History) -> list[Incident]:
    """A supervisor host that stopped heartbeating into ZooKeeper, with the slots it had when last seen."""
    supervisors = h.fact("storm_supervisor_presence")
    if supervisors is None:
        return []
    present = supervisors.select("cluster", "snapshot_id", "root", "hostname")
    spans = _absences(h, present, "hostname", supervisors.withColumnRenamed("used_slots", "used"), ["slots", "used"])
    out = []
    for s in spans:
        detail = f"; last seen with {s['slots']} slots, {s['used']} used" if s["slots"] is not None else ""
        rule = ("Storm", "supervisor_missing", WARNING, "storm_supervisors")
        out.append(_absence(s, rule, s["hostname"], f"supervisor {s['hostname']}", detail))
    return out


def topologies_gone(h: History) -> list[Incident]:
    """A topology in one snapshot and not in the next (killed and removed, in a production cluster): one
    incident at the snapshot without it, ended there too, since a topology's id is never used again (Storm
    makes it ``name-counter-launch_secs``, ``Nimbus.submitTopologyWithOpts``), so it is not "still missing".
    Named by its name, id and the last status the snapshots saw (KILLED if one caught it being killed)."""
    present = h.fact("storm_topology_presence")
    if present is None:
        return []
    F = _F()
    keys = ["cluster", "root", "topology_id"]
    seen = present.join(h.snaps.select("snapshot_id", "idx"), "snapshot_id")
    nxt = h.snaps.select("cluster", (F.col("idx") - 1).alias("idx"), F.col("snapshot_time").alias("gone_at"))
    still = seen.select(*keys, (F.col("idx") - 1).alias("idx"))
    gone = seen.join(nxt, ["cluster", "idx"]).join(still, [*keys, "idx"], "left_anti")
    out = []
    for r in gone.orderBy("cluster", "root", "gone_at", "topology_id").collect():
        at = _utc(r["gone_at"])
        out.append(
            Incident(
                cluster=r["cluster"],
                root=r["root"],
                system="Storm",
                kind="topology_gone",
                level=WARNING,
                started=at,
                ended=at,
                ongoing=False,
                snapshots=1,
                subjects=[r["topology_id"]],
                count=1,
                summary=f"topology {r['name']} ({r['topology_id']}) gone since the previous snapshot; "
                f"last seen {r['status']}",
                chart="storm_topology_churn",
            )
        )
    return out


def partitions_offline(h: History) -> list[Incident]:
    """Consecutive snapshots with offline partitions (no live leader): the most at once, and the topics
    with the most (each topic's largest count in the run). A run's last snapshot says it whole
    (``kafka_facts.kafka_offline_runs``), so the rule reads the runs' last snapshots' rows, however long a
    run has gone on."""
    offline = h.fact("kafka_offline_runs")
    if offline is None:
        return []
    F = _F()
    run = ["cluster", "root", "since"]  # a run is its root's and starts once
    rows = offline.join(F.broadcast(h.snaps.select("snapshot_id", "idx")), "snapshot_id")
    last = rows.groupBy(*run).agg(F.max("idx").alias("idx"))
    at_end = rows.join(F.broadcast(last), [*run, "idx"]).persist()
    spans = at_end.groupBy(*run).agg(
        F.max("streak").alias("snapshots"), F.max("worst").alias("worst"), F.max("idx").alias("end_idx")
    )
    topics = _ranked(at_end, run, "topic", "offline", amount="max").drop("total")
    after = h.snaps.select("cluster", (F.col("idx") - 1).alias("end_idx"), F.col("snapshot_time").alias("ended"))
    found = spans.join(topics, run).join(after, ["cluster", "end_idx"], "left").withColumnRenamed("since", "started")
    runs_found = found.orderBy("cluster", "root", "started").collect()
    at_end.unpersist()
    out = []
    for r in runs_found:
        ended = _utc(r["ended"]) if r["ended"] else None
        worst, snapshots, ranked = int(r["worst"]), int(r["snapshots"]), paired_with_previous(r["ranked"])
        span = plural(snapshots, "snapshot")
        out.append(
            Incident(
                cluster=r["cluster"],
                root=r["root"],
                system="Kafka",
                kind="partitions_offline",
                level=CRITICAL,
                started=_utc(r["started"]),
                ended=ended,
                ongoing=ended is None,
                snapshots=snapshots,
                subjects=[name for name, _ in ranked],
                count=worst,
                summary=f"up to {worst:,} partitions offline in {span}"
                + (f", none since {_day(ended)}" if ended else ", still offline")
                + f"; topics {named(ranked, names=r['names'])}",
                chart="kafka_partition_health",
            )
        )
    return out


# --- changes between two snapshots ---------------------------------------------------------------------


def _per_snapshot(metric: Any, key_a: str, key_b: str, value: str) -> list[Any]:
    """Per (cluster, root, snapshot_time): the total and two rankings (by ``key_a`` and by ``key_b``)."""
    group = ["cluster", "root", "snapshot_time"]
    a = (
        _ranked(metric, group, key_a, value)
        .withColumnRenamed("ranked", "ranked_a")
        .withColumnRenamed("names", "names_a")
    )
    b = _ranked(metric, group, key_b, value).withColumnRenamed("ranked", "ranked_b").drop("total")
    return a.join(b, group).where("total > 0").orderBy(*group).collect()


def _partition_changes(h: History, metric_name: str, value: str, kind: str, level: str, what: str) -> list[Incident]:
    """One incident per snapshot in which partitions changed (``metric_name``'s ``value`` per broker and
    topic): ``what`` words the total, then the brokers and the topics most affected."""
    metric = h.computed.get(metric_name)
    if metric is None:
        return []
    out = []
    for r in _per_snapshot(metric, "broker_id", "topic", value):
        brokers, topics = paired_with_previous(r["ranked_a"], "broker "), paired_with_previous(r["ranked_b"])
        brokers = [("no leader" if name == "broker None" else name, n) for name, n in brokers]
        broker_names, topic_names = r["names_a"], r["names"]
        out.append(
            Incident.between_two(
                cluster=r["cluster"],
                root=r["root"],
                system="Kafka",
                kind=kind,
                level=level,
                started=_utc(r["snapshot_time"]),
                subjects=[name for name, _ in brokers[:NAMED]] + [name for name, _ in topics[:NAMED]],
                count=int(r["total"]),
                summary=f"{int(r['total']):,} {what} {named(brokers, names=broker_names)}; "
                f"topics {named(topics, names=topic_names)}",
                chart=metric_name,
            )
        )
    return out


def isr_shrinks(h: History) -> list[Incident]:
    """Replicas that fell out of ISRs since the previous snapshot: which brokers, which topics."""
    return _partition_changes(h, "kafka_isr_shrinks", "isr_shrinks", "isr_shrink", WARNING, "replicas left an ISR:")


def leader_moves(h: History) -> list[Incident]:
    """Partitions whose leader changed since the previous snapshot, by the broker that lost them."""
    what = "partitions changed leader, taken from"
    return _partition_changes(h, "kafka_leader_changes", "leader_changes", "leader_moves", INFO, what)


def controller_moves(h: History) -> list[Incident]:
    """The controller changed broker, or was elected again, since the previous snapshot."""
    metric = h.everything.computed.get("kafka_controller")  # one row per root and snapshot
    if metric is None or "controller" not in metric.columns:
        return []
    rows = [r.asDict() for r in metric.orderBy("cluster", "root", "snapshot_time").collect()]
    out = []
    previous: dict[tuple[str, str], Any] = {}
    for r in rows:
        before = previous.get((r["cluster"], r["root"]))
        previous[(r["cluster"], r["root"])] = r
        if before is None:
            continue
        elections = r.get("elections")
        moved = r["controller"] != before["controller"]
        if not moved and not elections:
            continue
        was, now = before["controller"], r["controller"]
        what = (
            f"controller moved from broker {was} to broker {now}" if moved else f"controller re-elected on broker {now}"
        )
        out.append(
            Incident.between_two(
                cluster=r["cluster"],
                root=r["root"],
                system="Kafka",
                kind="controller_election",
                level=INFO,
                started=_utc(r["snapshot_time"]),
                subjects=[f"broker {b}" for b in dict.fromkeys((was, now)) if b is not None],
                count=int(elections or 1),
                summary=what + (f" ({elections} elections)" if elections and elections > 1 else ""),
                chart="kafka_controller",
            )
        )
    return out


def kafka_migrations(h: History) -> list[Incident]:
    """A Kafka cluster read under another root than the night before in its series: moved from
    ZooKeeper to its KRaft controllers (``kraft:``), or back. Its series goes on (``inputs.kafka_series``);
    this says why its controller and every broker's registration changed that night."""
    whole = h.everything  # one row per root and snapshot
    sources = whole.fact("kafka_sources")
    if sources is None:
        return []
    F, W = _F(), _window()
    by_series = W.partitionBy("cluster", "root").orderBy("idx")
    moved = (
        sources.join(whole.snaps.select("snapshot_id", "idx"), "snapshot_id")
        .withColumn("was", F.lag("read_root").over(by_series))
        .where(F.col("was").isNotNull() & (F.col("was") != F.col("read_root")))
        .orderBy("cluster", "root", "snapshot_time")
        .collect()
    )
    return [
        Incident.between_two(
            cluster=r["cluster"],
            root=r["root"],
            system="Kafka",
            kind="kafka_migrated",
            level=INFO,
            started=_utc(r["snapshot_time"]),
            subjects=[f"cluster {r['cluster_id']}"],
            count=1,
            summary=f"Kafka cluster {r['cluster_id']} read from {_where(r['read_root'])}, "
            f"no longer from {_where(r['was'])}: its history goes on under {r['root']}",
            chart="kafka_brokers",
        )
        for r in moved
    ]


def _where(root: str) -> str:
    return "its KRaft controllers" if root.startswith("kraft:") else f"ZooKeeper ({root})"


def error_bursts(h: History) -> list[Incident]:
    """A topology that stored at least ``ERROR_BURST`` errors in a day: its components and the most
    common signature (errors de-duplicated across snapshots, as in ``storm_errors_daily``). A day's
    errors may have been first seen in any snapshot since, so a stretch of the history reads the days it
    is given (``History.error_days``) out of every snapshot's."""
    errors = h.everything.fact("storm_errors_unique")
    if errors is None:
        return []
    F = _F()
    unique = errors.withColumn("day", F.to_date("error_at"))
    if h.error_days is not None:
        days = [(F.col("cluster") == c) & F.col("day").isin(sorted(d)) for c, d in h.error_days.items() if d]
        if not days:
            return []
        unique = unique.where(reduce(operator.or_, days))
    group = ["cluster", "root", "day", "topology_id"]
    bursts = unique.groupBy(*group).agg(F.count(F.lit(1)).alias("total"), F.min("error_at").alias("started"))
    bursts = bursts.where(F.col("total") >= ERROR_BURST)
    burst_errors = unique.join(bursts.select(*group), group).withColumn(
        "signature", signature_column(F.col("first_line"))
    )
    components = _ranked(burst_errors, group, "component", None).select(
        *group, F.col("ranked").alias("components"), F.col("names").alias("component_names")
    )
    signatures = _ranked(burst_errors, group, "signature", None).select(*group, F.col("ranked").alias("signatures"))
    rows = bursts.join(components, group).join(signatures, group).orderBy(*group).collect()
    out = []
    for r in rows:
        parts = paired_with_previous(r["components"])
        top_signature, top_count = paired_with_previous(r["signatures"])[0]
        out.append(
            Incident.between_two(
                cluster=r["cluster"],
                root=r["root"],
                system="Storm",
                kind="error_burst",
                level=WARNING,
                started=_utc(r["started"]),
                subjects=[r["topology_id"], *(f"{r['topology_id']}/{name}" for name, _ in parts[:NAMED])],
                count=int(r["total"]),
                summary=f"{int(r['total']):,} errors on {r['day']} in topology {r['topology_id']}: components "
                f"{named(parts, names=r['component_names'])}; most common ({top_count:,}): {top_signature}",
                chart="storm_errors_daily",
            )
        )
    return out


def zookeeper_growth(h: History) -> list[Incident]:
    """A subtree whose data or znodes grew by half again (and by at least ``GROWTH_MIN_BYTES`` or
    ``GROWTH_MIN_ZNODES``) since the previous snapshot, or appeared that large: what fills ZooKeeper
    (consumer offsets of an old group, heartbeats of a runaway topology), named with its meaning."""
    usage = h.fact("zookeeper_usage")
    if usage is None:
        return []
    F = _F()
    subtrees = usage.where(F.col("by") == "subtree").select(
        "snapshot_id", "cluster", "key", "meaning", "znodes", "data_bytes"
    )
    before = subtrees.select(
        F.col("snapshot_id").alias("prev_id"),
        "cluster",
        "key",
        F.col("znodes").alias("prev_znodes"),
        F.col("data_bytes").alias("prev_bytes"),
    )
    paired = (
        subtrees.join(
            h.snaps.where(F.col("prev_id").isNotNull()).select("snapshot_id", "prev_id", "snapshot_time"), "snapshot_id"
        )
        .join(before, ["prev_id", "cluster", "key"], "left")
        .fillna(0, ["prev_znodes", "prev_bytes"])
    )
    grew_bytes = (F.col("data_bytes") - F.col("prev_bytes") >= GROWTH_MIN_BYTES) & (
        F.col("data_bytes") >= GROWTH_RATIO * F.col("prev_bytes")
    )
    grew_znodes = (F.col("znodes") - F.col("prev_znodes") >= GROWTH_MIN_ZNODES) & (
        F.col("znodes") >= GROWTH_RATIO * F.col("prev_znodes")
    )
    out = []
    for r in paired.where(grew_bytes | grew_znodes).orderBy("cluster", "snapshot_time", "key").collect():
        was = f"from {_size(r['prev_bytes'])} in {r['prev_znodes']:,} znodes" if r["prev_znodes"] else "from nothing"
        out.append(
            Incident.between_two(
                cluster=r["cluster"],
                root="",
                system="ZooKeeper",
                kind="zookeeper_growth",
                level=WARNING,
                started=_utc(r["snapshot_time"]),
                subjects=[r["key"]],
                count=int(r["data_bytes"]),
                summary=f"{r['key']} ({r['meaning']}) grew {was} to {_size(r['data_bytes'])} in "
                f"{r['znodes']:,} znodes since the previous snapshot",
                chart="zookeeper_subtree_bytes",
            )
        )
    return out


def _size(data_bytes: int) -> str:
    """Bytes as a person reads them: ``512 bytes``, ``3.2 MiB``."""
    size = float(data_bytes)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size):,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{data_bytes:,} bytes"


# each kind of incident and the rule that finds it
RULES: dict[str, Callable[[History], list[Incident]]] = {
    "broker_gone": brokers_gone,
    "partitions_offline": partitions_offline,
    "isr_shrink": isr_shrinks,
    "leader_moves": leader_moves,
    "controller_election": controller_moves,
    "kafka_migrated": kafka_migrations,
    "supervisor_missing": supervisors_missing,
    "topology_gone": topologies_gone,
    "error_burst": error_bursts,
    "zookeeper_growth": zookeeper_growth,
}


def find_incidents(
    h: History,
    run_all: Callable[..., list[list[Incident]]] | None = None,
    history_for: Callable[[str], History] | None = None,
) -> list[Incident]:
    """Every rule's incidents, oldest first (most severe first at the same time). ``run_all(apply,
    kinds)`` runs the rules (the history job runs several at a time); one after the other by default.
    ``history_for(kind)``, when given, is the history a kind's rule reads instead of ``h`` (a nightly
    run's stretch of it, ``jobs/recheck.py``)."""

    def find(kind: str) -> list[Incident]:
        history = history_for(kind) if history_for else h
        history.snaps.sparkSession.sparkContext.setJobDescription(f"incidents {kind}")  # names Spark's jobs
        return RULES[kind](history)

    return ordered([incident for found in (run_all or _in_turn)(find, list(RULES)) for incident in found])


def ordered(incidents: list[Incident]) -> list[Incident]:
    """Oldest first, the most severe first at the same time."""
    order = {CRITICAL: 0, WARNING: 1, INFO: 2}
    return sorted(incidents, key=lambda i: (i.started, order[i.level], i.kind, i.subjects))


def _in_turn(work: Callable[[Any], list[Incident]], items: list[Any]) -> list[list[Incident]]:
    return [work(item) for item in items]


def frame(spark: Any, incidents: list[Incident]) -> Any:
    """The incidents as a DataFrame (the ``incidents`` table under ``--out``)."""
    types = {
        "str": "string",
        "datetime": "timestamp",
        "datetime | None": "timestamp",
        "int": "bigint",
        "bool": "boolean",
        "list[str]": "array<string>",
    }
    schema = ", ".join(f"{f.name} {types[str(f.type)]}" for f in fields(Incident))
    return spark.createDataFrame([astuple(i) for i in incidents], schema)


# --- exact times from ZooKeeper's logs (``zkstorm changes --out``) --------------------------------------

# change tables → the columns read from each (the few rows an incident's times need)
CHANGE_TABLES: dict[str, tuple[str, ...]] = {
    "kafka_broker_gone": ("broker_id", "how"),
    "kafka_broker_registered": ("broker_id",),
    "storm_supervisor_left": ("hostname", "how"),
    "storm_supervisor_joined": ("hostname",),
    "kafka_controller_elected": ("broker_id",),
    "kafka_partition_changed": ("offline_before", "offline"),
}


@dataclass
class ChangeTimes:
    """Per (cluster, root, table, subject): the times of those changes, sorted, with what each said (the
    ``how`` of a broker gone). Partition changes only where a partition went offline or came back."""

    times: dict[tuple[str, str, str, str], list[tuple[datetime, str]]] = field(default_factory=dict)

    def add(self, cluster: str, root: str, table: str, subject: str, at: datetime, note: str = "") -> None:
        self.times.setdefault((cluster, root, table, subject), []).append((at, note))

    def sort(self) -> None:
        for found in self.times.values():
            found.sort()

    def last_before(self, key: tuple[str, str, str, str], upto: datetime, after: datetime | None) -> Any:
        """The last change of ``key`` at or before ``upto`` and after ``after``, or None."""
        found = self.times.get(key, [])
        i = bisect_left(found, (upto, "\uffff"))
        while i > 0:
            at, note = found[i - 1]
            if at <= upto:
                return (at, note) if after is None or at > after else None
            i -= 1
        return None

    def first_after(self, key: tuple[str, str, str, str], since: datetime, upto: datetime | None) -> Any:
        """The first change of ``key`` after ``since`` and at or before ``upto`` (None: no limit)."""
        for at, note in self.times.get(key, []):
            if at > since:
                return (at, note) if upto is None or at <= upto else None
        return None


def read_change_times(spark: Any, base: str) -> ChangeTimes:
    """The changes an incident's exact times come from, out of a changes dataset (``zkstorm changes
    --out``: the snapshot's layout, read by its manifests). Runs whose windows overlap hold a change twice:
    one per (cluster, zxid, path)."""
    from ..export.manifest import CHANGES
    from .inputs import SnapshotSet

    F = _F()
    found = ChangeTimes()
    selected = SnapshotSet(spark, base, dataset=CHANGES)
    for table, columns in CHANGE_TABLES.items():
        frame = selected.table(table)
        if frame is None:
            continue
        frame = frame.dropDuplicates(["cluster", "zxid", "path"])
        if table == "kafka_partition_changed":  # the transitions only: few, even on a busy day
            frame = frame.where(F.coalesce(F.col("offline_before"), F.lit(False)) != F.col("offline"))
        for r in frame.select("cluster", "root", "at", *columns).collect():
            at = _utc(r["at"])
            if table == "kafka_partition_changed":
                found.add(r["cluster"], r["root"], table, "offline" if r["offline"] else "online", at)
            elif table.startswith("kafka"):
                found.add(
                    r["cluster"], r["root"], table, f"broker {r['broker_id']}", at, r["how"] if "how" in columns else ""
                )
            elif r["hostname"] is not None:
                found.add(r["cluster"], r["root"], table, r["hostname"], at, r["how"] if "how" in columns else "")
    found.sort()
    return found


def _clock(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f".{moment.microsecond // 1000:03d}"


def _rest(summary: str) -> str:
    """What a summary says after its first clause (the impact of a broker, the topics offline)."""
    _, sep, rest = summary.partition(";")
    return sep + rest if sep else ""


def _session(how: str) -> str:
    return {"expired": "session expired", "closed": "session closed"}.get(how, how)


def timed_by_changes(
    incidents: list[Incident], times: ChangeTimes, snapshot_times: dict[str, list[datetime]]
) -> list[Incident]:
    """The incidents whose start and end the logs tell to the millisecond: a broker gone and back, a
    supervisor gone and back, partitions offline and back, a controller elected. A snapshot says only that
    the state began between the snapshot before it and the first that shows it (and ended between the
    last that shows it and the next); the change inside that bracket is the moment. Others are kept."""
    out = []
    for incident in incidents:
        taken = snapshot_times.get(incident.cluster, [])
        before = _previous(taken, incident.started)
        timed = _EXACT.get(incident.kind)
        exact = timed(incident, times, before, _previous(taken, incident.ended)) if timed else None
        out.append(exact or incident)
    return ordered(out)


def _previous(taken: list[datetime], moment: datetime | None) -> datetime | None:
    """The snapshot before ``moment`` (the start of the bracket a change must fall in)."""
    if moment is None:
        return None
    earlier = [t for t in taken if t < moment]
    return max(earlier) if earlier else None


def _timed_absence(
    incident: Incident,
    times: ChangeTimes,
    before: datetime | None,
    last_missing: datetime | None,
    tables: tuple[str, str],
    head: str,
    what: str,
) -> Incident | None:
    """An absence's start: its subject's last going at or before the first snapshot without it (after the
    snapshot before that); its end: the first return after the last snapshot without it, up to the first
    with it again (a flap in between is not the end)."""
    gone_table, back_table = tables
    subject = incident.subjects[0]
    gone = times.last_before((incident.cluster, incident.root, gone_table, subject), incident.started, before)
    if gone is None:
        return None
    since = max(gone[0], last_missing) if last_missing is not None else gone[0]
    back = times.first_after((incident.cluster, incident.root, back_table, subject), since, incident.ended)
    if back is None and incident.ended is not None:
        return None  # the logs do not hold its return: keep the snapshots' bracket
    ended = back[0] if back else None
    when = f"{what} {_clock(gone[0])} ({_session(gone[1])}), " + (f"back {_clock(ended)}" if ended else "not back")
    summary = f"{head} {when}{_rest(incident.summary)}"
    return replace(incident, started=gone[0], ended=ended, ongoing=ended is None, summary=summary, exact=True)


def _broker(incident: Incident, times: ChangeTimes, before: datetime | None, last: datetime | None) -> Incident | None:
    head = incident.summary.split(" not registered:", 1)[0]  # broker 3 (host:port)
    return _timed_absence(incident, times, before, last, ("kafka_broker_gone", "kafka_broker_registered"), head, "gone")


def _supervisor(
    incident: Incident, times: ChangeTimes, before: datetime | None, last: datetime | None
) -> Incident | None:
    head = f"supervisor {incident.subjects[0]}"
    return _timed_absence(
        incident, times, before, last, ("storm_supervisor_left", "storm_supervisor_joined"), head, "left"
    )


def _offline(incident: Incident, times: ChangeTimes, before: datetime | None, last: datetime | None) -> Incident | None:
    """Partitions offline: from the first that went offline after the snapshot before, to the last that
    came back before the first snapshot without any."""
    went = times.first_after(
        (incident.cluster, incident.root, "kafka_partition_changed", "offline"),
        before or datetime.min.replace(tzinfo=UTC),
        incident.started,
    )
    if went is None:
        return None
    ended = None
    if incident.ended is not None:
        back = times.last_before(
            (incident.cluster, incident.root, "kafka_partition_changed", "online"), incident.ended, last
        )
        if back is None:
            return None
        ended = back[0]
    span = f"partitions offline from {_clock(went[0])}" + (f" to {_clock(ended)}" if ended else ", still offline")
    return replace(
        incident,
        started=went[0],
        ended=ended,
        summary=f"up to {incident.count:,} {span}{_rest(incident.summary)}",
        exact=True,
    )


def _election(
    incident: Incident, times: ChangeTimes, before: datetime | None, last: datetime | None
) -> Incident | None:
    now = incident.subjects[-1] if incident.subjects else None
    if now is None:
        return None
    elected = times.last_before(
        (incident.cluster, incident.root, "kafka_controller_elected", now), incident.started, before
    )
    if elected is None:
        return None
    return replace(incident, started=elected[0], summary=f"{incident.summary} at {_clock(elected[0])}", exact=True)


_EXACT: dict[str, Callable[[Incident, ChangeTimes, datetime | None, datetime | None], Incident | None]] = {
    "broker_gone": _broker,
    "supervisor_missing": _supervisor,
    "partitions_offline": _offline,
    "controller_election": _election,
}
