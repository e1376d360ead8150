"""The history report: what happened (the incident timeline), who did it most (top offenders) and one
interactive chart per metric, as a rich summary and one self-contained HTML page.

Charts are Plotly figures (hover, zoom, pan) drawn by the plotly.js that the ``plotly`` package ships,
inlined once in the page: it opens offline, fetches nothing and runs no other script. Only small,
a metric's rows reach this module as an Arrow table (``summarize`` reduces each to its chart).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from typing import Any

import orjson

from .incidents import CRITICAL, INFO, WARNING, Incident

# metric → (kind, x, y columns, group column): "lines" over time, or "top" for a ranked table
CHARTS: dict[str, tuple[str, str, tuple[str, ...], str | None]] = {
    "storm_topology_status": ("lines", "snapshot_time", ("topologies",), "status"),
    "storm_topology_churn": (
        "lines",
        "snapshot_time",
        ("topologies", "topologies_appeared", "topologies_disappeared"),
        None,
    ),
    "storm_errors_daily": ("lines", "day", ("errors",), "topology_id"),
    "storm_error_signatures": ("top", "signature", ("errors",), None),
    "storm_supervisors": ("lines", "snapshot_time", ("present", "missing", "restarts"), None),
    "storm_supervisor_flaps": ("top", "hostname", ("flaps", "restarts"), None),
    "storm_workers": ("lines", "snapshot_time", ("workers", "stale", "restarts"), None),
    "storm_executor_moves": ("lines", "snapshot_time", ("moved_executors",), "topology_id"),
    "storm_component_trend": ("lines", "snapshot_time", ("capacity",), "component_name"),
    "storm_busy_components": ("top", "component_name", ("busy_snapshots",), None),
    "storm_failure_rises": ("top", "component_name", ("failure_rise",), None),
    "kafka_brokers": ("lines", "snapshot_time", ("brokers", "brokers_disappeared", "restarts"), None),
    "kafka_controller": ("lines", "snapshot_time", ("epoch", "elections"), None),
    "kafka_partition_health": (
        "lines",
        "snapshot_time",
        ("offline", "under_replicated", "under_min_isr", "not_preferred_leader"),
        None,
    ),
    "kafka_chronic_under_replicated": ("top", "partition_name", ("consecutive_snapshots",), None),
    "kafka_isr_shrinks": ("lines", "snapshot_time", ("isr_shrinks",), "broker_id"),
    "kafka_leader_changes": ("lines", "snapshot_time", ("leader_changes",), "broker_id"),
    "kafka_topic_churn": ("lines", "snapshot_time", ("topics", "topics_appeared", "topics_disappeared"), None),
    "zookeeper_subtrees": ("lines", "snapshot_time", ("znodes",), "subtree"),
    "zookeeper_subtree_bytes": ("lines", "snapshot_time", ("data_bytes",), "subtree"),
    "zookeeper_record_kinds": ("lines", "snapshot_time", ("data_bytes",), "record_kind"),
}
# metric → (key, value, title): a ranking of a line metric's subjects over the whole history
OFFENDERS: dict[str, tuple[str, str, str]] = {
    "kafka_isr_shrinks": ("topic", "isr_shrinks", "Topics by replicas that left an ISR"),
    "kafka_leader_changes": ("broker_id", "leader_changes", "Brokers by partition leaderships lost"),
    "storm_errors_daily": ("topology_id", "errors", "Topologies by stored errors"),
    "storm_executor_moves": ("topology_id", "moved_executors", "Topologies by executors moved"),
}
TOP_GROUPS = 8
TOP_ROWS = 12
HIDDEN = {"snapshot_id", "idx", "prev_id", "run"}
LEVEL_COLOURS = {CRITICAL: "#c62828", WARNING: "#ef6c00", INFO: "#1565c0"}


@dataclass
class Ranking:
    """The top rows of something, ready to be a table."""

    name: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]


@dataclass
class ChartData:
    """The rows one chart needs: summed per (x, group) by ``summarize``, at most a few thousand."""

    name: str
    system: str
    title: str
    kind: str
    x: str
    ys: tuple[str, ...]
    group: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_rows: int = 0  # rows of the metric table itself
    offenders: Ranking | None = None


def empty(name: str, system: str, title: str) -> ChartData:
    kind, x, ys, group = CHARTS[name]
    return ChartData(name, system, title, kind, x, ys, group)


def summarize(name: str, system: str, title: str, table: Any) -> ChartData:
    """Reduce a metric's rows, collected as an Arrow table, to what its chart (or table) and its ranking
    show: lines keep only the ``TOP_GROUPS`` largest groups, tables ``TOP_ROWS``.

    The rows come whole to the driver in one Spark job (``DataFrame.toArrow``) that also counts them:
    a metric table is a few rows per snapshot (the year of ``bench/bench_history.py``'s 100,000-partition
    cluster: 243,000 rows in its largest, 0.6 MB of Parquet), and reducing it in Spark instead took one to
    three more jobs per metric, each a plan, a schedule and a collect. Ties are broken by the columns
    that follow, so a chart is the same on every run."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind, x, ys, group = CHARTS[name]
    chart = ChartData(name, system, title, kind, x, ys, group, total_rows=table.num_rows)
    table = _naive_utc(table)
    if name == "kafka_chronic_under_replicated":
        label = pc.binary_join_element_wise(
            table["topic"], pc.cast(table["partition"], pa.string()), "-", null_handling="skip"
        )
        rest = [c for c in table.column_names if c not in ("topic", "partition")]
        table = table.select(rest).add_column(0, "partition_name", label)
    if kind == "top":
        columns = [c for c in table.column_names if c not in HIDDEN]
        chart.rows = _ordered(table.select(columns).to_pylist(), [(ys[0], True)])[:TOP_ROWS]
    else:
        if group:
            totals = table.group_by(group).aggregate([(ys[0], "sum")]).to_pylist()
            top = [r[group] for r in _ordered(totals, [(f"{ys[0]}_sum", True), (group, False)])[:TOP_GROUPS]]
            # a group of no value (null) is never one of the top: as a join on it, it matches nothing
            kept = pa.array([g for g in top if g is not None], table.schema.field(group).type)
            table = table.filter(pc.is_in(table[group], value_set=kept))
        keys = [x, *([group] if group else []), *[c for c in ("cluster", "root") if c in table.column_names]]
        summed = table.group_by(keys).aggregate([(y, "sum") for y in ys]).to_pylist()
        rows = [{**{k: r[k] for k in keys}, **{y: r[f"{y}_sum"] for y in ys}} for r in summed]
        chart.rows = _ordered(rows, [(k, False) for k in keys])
    if name in OFFENDERS:
        key, value, ranking_title = OFFENDERS[name]
        counted = "snapshots" if x == "snapshot_time" else "days"
        per_key = table.group_by(key).aggregate([(value, "sum"), (x, "count_distinct")]).to_pylist()
        ranked = [{key: r[key], value: r[f"{value}_sum"], counted: r[f"{x}_count_distinct"]} for r in per_key]
        rows = _ordered(ranked, [(value, True), (key, False)])[:TOP_ROWS]
        chart.offenders = Ranking(f"top-{name}", ranking_title, [key, value, counted], rows)
    return chart


def _naive_utc(table: Any) -> Any:
    """``table`` with its time columns as naive UTC times, as the rest of the report has them (Spark's
    Arrow rows carry the session's time zone, UTC)."""
    import pyarrow as pa

    for i, column in enumerate(table.schema):
        if pa.types.is_timestamp(column.type) and column.type.tz is not None:
            table = table.set_column(i, column.name, table.column(i).cast(pa.timestamp(column.type.unit)))
    return table


def _ordered(rows: list[dict[str, Any]], by: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """``rows`` sorted by each (column, descending) of ``by`` in turn, then by their other columns; a null
    sorts first ascending and last descending, as in Spark's ``orderBy``."""
    keys = [*by, *[(c, False) for c in (rows[0] if rows else {}) if c not in {k for k, _ in by}]]
    for column, descending in reversed(keys):  # a stable sort per key, the last key first
        rows = sorted(rows, key=partial(_sort_key, column), reverse=descending)
    return rows


def _sort_key(column: str, row: dict[str, Any]) -> tuple[bool, Any]:
    """A row's value of ``column`` as a sort key: a null before any value (so last when reversed), lists (a
    top table's names) by their text."""
    value = row[column]
    return value is not None, repr(value) if isinstance(value, list | dict) else value


def _series(chart: ChartData) -> dict[str, dict[Any, float]]:
    """Line label → x → value (summed over what the label merges)."""
    series: dict[str, dict[Any, float]] = {}
    clusters = {(r.get("cluster"), r.get("root")) for r in chart.rows}
    for row in chart.rows:
        for y in chart.ys:
            label = str(row[chart.group]) if chart.group else y
            if len(clusters) > 1:  # several clusters, or several roots of one: say whose line it is
                where = row.get("cluster") if row.get("root") is None else f"{row.get('cluster')} {row.get('root')}"
                label = f"{where}: {label}"
            value = row[y]
            points = series.setdefault(label, {})
            points[row[chart.x]] = points.get(row[chart.x], 0.0) + (float(value) if value is not None else 0.0)
    return series


def summary_line(chart: ChartData) -> str:
    """One sentence per metric for the terminal: the latest values and the peak, or the top entries."""
    if not chart.rows:
        return "no data"
    if chart.kind == "top":
        top = ", ".join(f"{str(r[chart.x])[:60]} ({r[chart.ys[0]]})" for r in chart.rows[:3])
        return f"top: {top}"
    parts = []
    for label, points in list(_series(chart).items())[:4]:
        latest_x = max(points)
        peak_x = max(points, key=lambda k: points[k])
        parts.append(f"{label} {points[latest_x]:g} now, peak {points[peak_x]:g} ({_when(peak_x)})")
    return "; ".join(parts)


def incident_line(incident: Incident) -> str:
    """An incident for the terminal and the page: when, level, and its summary."""
    return f"{_when(incident.started, minutes=True, exact=incident.exact)} {incident.level:<8} {incident.summary}"


def _when(value: Any, *, minutes: bool = False, exact: bool = False) -> str:
    """A day, a minute, or (``exact``: a time the logs gave) the millisecond."""
    if isinstance(value, datetime):
        moment = value.astimezone(UTC)
        if exact:
            return moment.strftime("%Y-%m-%d %H:%M:%S") + f".{moment.microsecond // 1000:03d}"
        return moment.strftime("%Y-%m-%d %H:%M" if minutes else "%Y-%m-%d")
    return str(value)


def _x(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    return value


def figure(chart: ChartData, incidents: list[Incident]) -> dict[str, Any]:
    """The Plotly figure of a line chart; its incidents are dotted lines whose marker says what happened
    on hover."""
    traces = []
    for label, points in _series(chart).items():
        xs = sorted(points)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": html.escape(label),
                "x": [_x(x) for x in xs],
                "y": [points[x] for x in xs],
                "marker": {"size": 5},
            }
        )
    shapes, notes = [], []
    for incident in incidents:
        at, colour = _x(incident.started), LEVEL_COLOURS[incident.level]
        if chart.x == "day":
            at = incident.started.astimezone(UTC).date().isoformat()
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": at,
                "x1": at,
                "y0": 0,
                "y1": 1,
                "line": {"color": colour, "dash": "dot", "width": 1},
            }
        )
        notes.append(
            {
                "x": at,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "yanchor": "bottom",
                "text": "▼",
                "showarrow": False,
                "font": {"color": colour, "size": 11},
                "hovertext": html.escape(incident.summary),
            }
        )
    layout = {
        "title": {"text": html.escape(chart.title), "x": 0, "font": {"size": 14}},
        "height": 320,
        "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
        "hovermode": "x unified",
        "xaxis": {"type": "date" if chart.x in ("snapshot_time", "day") else "-"},
        "legend": {"orientation": "h", "y": -0.2},
        "shapes": shapes,
        "annotations": notes,
    }
    if not chart.rows:
        layout["annotations"] = [
            {
                "text": "no data in these snapshots",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ]
    return {"data": traces, "layout": layout}


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, (datetime, date)):
        return _when(value, minutes=isinstance(value, datetime))
    return html.escape("" if value is None else str(value))


def _table(ranking: Ranking, caption: str = "") -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ranking.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(row.get(c))}</td>" for c in ranking.columns) + "</tr>" for row in ranking.rows
    )
    if not ranking.rows:
        body = f'<tr><td colspan="{len(ranking.columns)}" class="none">none in these snapshots</td></tr>'
    wide = " wide" if len(ranking.columns) > 4 else ""  # a wide table takes the whole row of the grid
    return (
        f'<section class="top{wide}" id="{ranking.name}"><h3>{html.escape(ranking.title)}</h3>'
        f'<table class="top"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{caption}</section>'
    )


def _timeline(incidents: list[Incident], titles: dict[str, str]) -> str:
    if not incidents:
        return '<section id="timeline"><h2>What happened</h2><p>No incidents in these snapshots.</p></section>'
    levels = {level: sum(1 for i in incidents if i.level == level) for level in (CRITICAL, WARNING, INFO)}
    counts = ", ".join(f"{n} {level}" for level, n in levels.items() if n)
    rows = []
    for incident in incidents:
        exact = incident.exact
        ended = (
            "ongoing"
            if incident.ongoing
            else _when(incident.ended, minutes=True, exact=exact)
            if incident.ended
            else ""
        )
        subjects = ", ".join(f"<b>{html.escape(s)}</b>" for s in incident.subjects)
        rows.append(
            f'<tr class="{incident.level}"><td class="when">{_when(incident.started, minutes=True, exact=exact)}'
            f"{'<br>→ ' + ended if ended else ''}</td>"
            f'<td><span class="level">{incident.level}</span></td><td>{incident.system}<br>'
            f"{html.escape(incident.kind.replace('_', ' '))}</td><td>{subjects}</td>"
            f"<td>{html.escape(incident.summary)}</td>"
            f'<td><a href="#{incident.chart}">{html.escape(titles.get(incident.chart, incident.chart))}</a></td></tr>'
        )
    return (
        f'<section id="timeline"><h2>What happened</h2><p>{len(incidents)} incidents: {counts}. '
        "Each links to the chart that shows it; on the charts they are the dotted lines.</p>"
        '<table class="timeline"><thead><tr><th>when (UTC)</th><th>level</th><th>what</th><th>subjects</th>'
        f"<th>details</th><th>chart</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element whatever the strings contain."""
    return (
        orjson.dumps(value).decode().replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )


def html_page(charts: list[ChartData], incidents: list[Incident], *, title: str, subtitle: str) -> str:
    from plotly.offline import get_plotlyjs

    titles = {c.name: c.title for c in charts}
    figures: dict[str, Any] = {}
    rankings = []
    for chart in charts:
        if chart.kind == "top":
            columns = list(chart.rows[0]) if chart.rows else [chart.x, *chart.ys]
            caption = (
                f'<p class="caption">{html.escape(summary_line(chart))}. <code>{chart.name}</code>, '
                f"{chart.total_rows:,} rows</p>"
            )
            rankings.append(_table(Ranking(chart.name, chart.title, columns, chart.rows), caption))
        if chart.offenders is not None:
            rankings.append(_table(chart.offenders))
    sections = []
    for system in dict.fromkeys(c.system for c in charts):
        blocks = []
        for chart in (c for c in charts if c.system == system and c.kind == "lines"):
            figures[chart.name] = figure(chart, [i for i in incidents if i.chart == chart.name])
            blocks.append(
                f'<figure class="chart" id="{chart.name}"><div class="plot" id="plot-{chart.name}"></div>'
                f"<figcaption>{html.escape(summary_line(chart))}. <code>{chart.name}</code>, "
                f"{chart.total_rows:,} rows</figcaption></figure>"
            )
        sections.append(
            f'<section id="{html.escape(system)}-charts"><h2>{html.escape(system)}</h2>{"".join(blocks)}</section>'
        )
    nav = " · ".join(
        ['<a href="#timeline">What happened</a>', '<a href="#offenders">Top offenders</a>']
        + [f'<a href="#{html.escape(s)}-charts">{html.escape(s)}</a>' for s in dict.fromkeys(c.system for c in charts)]
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }}
h1 {{ margin-bottom: 0; }} .sub {{ color: #666; margin-top: .3em; }} nav {{ margin: 1em 0; }}
figure.chart {{ margin: 1.5em 0; }} .plot {{ width: 100%; height: 320px; }}
figcaption, .caption {{ font-size: .85em; color: #444; }}
table {{ border-collapse: collapse; font-size: .85em; width: 100%; }}
th, td {{ text-align: left; padding: .25em .5em; border-bottom: 1px solid #eee; vertical-align: top; }}
td.when {{ white-space: nowrap; }} td.none {{ color: #777; }}
.level {{ font-weight: 600; text-transform: uppercase; font-size: .8em; }}
tr.critical .level {{ color: {LEVEL_COLOURS[CRITICAL]}; }} tr.warning .level {{ color: {LEVEL_COLOURS[WARNING]}; }}
tr.info .level {{ color: {LEVEL_COLOURS[INFO]}; }}
#offenders {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 0 2em; }}
#offenders h2 {{ grid-column: 1 / -1; }} section.top {{ min-width: 0; overflow-x: auto; }}
section.top.wide {{ grid-column: 1 / -1; }} table.top td {{ overflow-wrap: break-word; }}
</style></head>
<body><h1>{html.escape(title)}</h1><p class="sub">{html.escape(subtitle)}</p>
<nav>{nav}</nav>
{_timeline(incidents, titles)}
<section id="offenders"><h2>Top offenders</h2>{"".join(rankings)}</section>
{"".join(sections)}
<script>{get_plotlyjs()}</script>
<script type="application/json" id="figures">{_script_json(figures)}</script>
<script>
const figures = JSON.parse(document.getElementById("figures").textContent);
for (const [name, fig] of Object.entries(figures)) {{
  Plotly.newPlot("plot-" + name, fig.data, fig.layout, {{displaylogo: false, responsive: true}});
}}
</script>
</body></html>
"""
