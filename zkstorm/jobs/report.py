"""The history report: one chart per metric, as a rich summary and a self-contained HTML page.

Charts are drawn with matplotlib into PNGs embedded as data URIs, so the page opens anywhere with no
network and no scripts. Only small, already aggregated rows reach this module (see ``ChartData``).
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

# metric → (kind, x, y columns, group column): "lines" over time, or "bars" for a top list
CHARTS: dict[str, tuple[str, str, tuple[str, ...], str | None]] = {
    "storm_topology_status": ("lines", "snapshot_time", ("topologies",), "status"),
    "storm_topology_churn": (
        "lines",
        "snapshot_time",
        ("topologies", "topologies_appeared", "topologies_disappeared"),
        None,
    ),
    "storm_errors_daily": ("lines", "day", ("errors",), "topology_id"),
    "storm_error_signatures": ("bars", "signature", ("errors",), None),
    "storm_supervisors": ("lines", "snapshot_time", ("present", "missing", "restarts"), None),
    "storm_supervisor_flaps": ("bars", "hostname", ("flaps", "restarts"), None),
    "storm_workers": ("lines", "snapshot_time", ("workers", "stale", "restarts"), None),
    "storm_executor_moves": ("lines", "snapshot_time", ("moved_executors",), "topology_id"),
    "storm_component_trend": ("lines", "snapshot_time", ("capacity",), "component_name"),
    "storm_busy_components": ("bars", "component_name", ("busy_snapshots",), None),
    "storm_failure_rises": ("bars", "component_name", ("failure_rise",), None),
    "kafka_brokers": ("lines", "snapshot_time", ("brokers", "brokers_disappeared", "restarts"), None),
    "kafka_controller": ("lines", "snapshot_time", ("epoch", "elections"), None),
    "kafka_partition_health": (
        "lines",
        "snapshot_time",
        ("offline", "under_replicated", "under_min_isr", "not_preferred_leader"),
        None,
    ),
    "kafka_chronic_under_replicated": ("bars", "partition_name", ("consecutive_snapshots",), None),
    "kafka_isr_shrinks": ("lines", "snapshot_time", ("isr_shrinks",), "broker_id"),
    "kafka_leader_changes": ("lines", "snapshot_time", ("leader_changes",), "broker_id"),
    "kafka_topic_churn": ("lines", "snapshot_time", ("topics", "topics_appeared", "topics_disappeared"), None),
    "zookeeper_subtrees": ("lines", "snapshot_time", ("znodes",), "subtree"),
}
TOP_GROUPS = 8
TOP_BARS = 12


@dataclass
class ChartData:
    """The rows one chart needs: already summed per (x, group) in Spark, at most a few thousand."""

    name: str
    system: str
    title: str
    kind: str
    x: str
    ys: tuple[str, ...]
    group: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_rows: int = 0  # rows of the metric table itself


def aggregate(name: str, frame: Any) -> tuple[str, str, tuple[str, ...], str | None, list[dict[str, Any]]]:
    """Reduce a metric DataFrame to what its chart shows (in Spark, before anything is collected)."""
    from pyspark.sql import functions as F

    kind, x, ys, group = CHARTS[name]
    if name == "kafka_chronic_under_replicated":
        frame = frame.withColumn("partition_name", F.concat_ws("-", "topic", F.col("partition").cast("string")))
        frame = frame.groupBy("partition_name").agg(F.max("consecutive_snapshots").alias("consecutive_snapshots"))
    if kind == "bars":
        keys = [x]
        frame = frame.groupBy(*keys).agg(*[F.sum(y).alias(y) for y in ys])
        rows = frame.orderBy(F.desc(ys[0])).limit(TOP_BARS).collect()
    else:
        keys = [x, *([group] if group else []), *(["cluster"] if "cluster" in frame.columns else [])]
        frame = frame.groupBy(*keys).agg(*[F.sum(y).alias(y) for y in ys])
        rows = frame.orderBy(x).collect()
    return kind, x, ys, group, [r.asDict() for r in rows]


def _series(chart: ChartData) -> dict[str, list[tuple[Any, float]]]:
    """Line label → points; with a group, only the TOP_GROUPS groups with the largest totals."""
    series: dict[str, list[tuple[Any, float]]] = {}
    clusters = {r.get("cluster") for r in chart.rows}
    for row in chart.rows:
        for y in chart.ys:
            label = str(row[chart.group]) if chart.group else y
            if len(clusters) > 1:
                label = f"{row.get('cluster')}: {label}"
            value = row[y]
            series.setdefault(label, []).append((row[chart.x], float(value) if value is not None else float("nan")))
    if chart.group and len(series) > TOP_GROUPS:
        ranked = sorted(series, key=lambda k: -sum(v for _, v in series[k] if v == v))
        series = {k: series[k] for k in ranked[:TOP_GROUPS]}
    return series


def png(chart: ChartData) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.2), dpi=100)
    try:
        if not chart.rows:
            ax.text(0.5, 0.5, "no data in these snapshots", ha="center", va="center", color="#777")
            ax.set_axis_off()
        elif chart.kind == "bars":
            labels = [str(r[chart.x])[:70] for r in chart.rows][::-1]
            left = [0.0] * len(labels)
            for y in chart.ys:
                values = [float(r[y] or 0) for r in chart.rows][::-1]
                ax.barh(labels, values, left=left, label=y)
                left = [a + b for a, b in zip(left, values, strict=True)]
            ax.tick_params(axis="y", labelsize=7)
            if len(chart.ys) > 1:
                ax.legend(fontsize=8)
        else:
            for label, points in _series(chart).items():
                xs = sorted({p[0] for p in points})
                sums = {x: 0.0 for x in xs}
                for x, v in points:
                    sums[x] += v
                ax.plot(xs, [sums[x] for x in xs], marker="o", markersize=3, label=label)
            ax.legend(fontsize=7, loc="upper left", ncols=2)
            ax.grid(alpha=0.3)
            fig.autofmt_xdate()
        ax.set_title(chart.title, fontsize=10, loc="left")
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png")
        return out.getvalue()
    finally:
        plt.close(fig)


def summary_line(chart: ChartData) -> str:
    """One sentence per metric for the terminal: the latest values and the peak, or the top entries."""
    if not chart.rows:
        return "no data"
    if chart.kind == "bars":
        top = ", ".join(f"{str(r[chart.x])[:60]} ({r[chart.ys[0]]})" for r in chart.rows[:3])
        return f"top: {top}"
    series = _series(chart)
    parts = []
    for label, points in list(series.items())[:4]:
        totals: dict[Any, float] = {}
        for x, v in points:
            totals[x] = totals.get(x, 0.0) + (v if v == v else 0.0)
        latest_x = max(totals)
        peak_x = max(totals, key=lambda k: totals[k])
        parts.append(f"{label} {totals[latest_x]:g} now, peak {totals[peak_x]:g} ({_when(peak_x)})")
    return "; ".join(parts)


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).strftime("%Y-%m-%d")
    return str(value)


def html_page(charts: list[ChartData], *, title: str, subtitle: str) -> str:
    sections = []
    for system in dict.fromkeys(c.system for c in charts):
        figures = []
        for chart in (c for c in charts if c.system == system):
            data = base64.b64encode(png(chart)).decode()
            figures.append(
                f'<figure class="chart" id="{chart.name}"><img alt="{html.escape(chart.title)}" '
                f'src="data:image/png;base64,{data}"><figcaption>{html.escape(chart.title)}: '
                f"{html.escape(summary_line(chart))} <code>{chart.name}</code>, {chart.total_rows:,} rows"
                "</figcaption></figure>"
            )
        sections.append(f"<section><h2>{html.escape(system)}</h2>{''.join(figures)}</section>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 960px; color: #222; }}
h1 {{ margin-bottom: 0; }} .sub {{ color: #666; margin-top: .3em; }}
figure.chart {{ margin: 1.5em 0; }} figure.chart img {{ width: 100%; height: auto; }}
figcaption {{ font-size: .85em; color: #444; }}
</style></head>
<body><h1>{html.escape(title)}</h1><p class="sub">{html.escape(subtitle)}</p>
{"".join(sections)}
</body></html>
"""
