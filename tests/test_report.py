"""The history report's charts and rankings, reduced from a metric's rows (``report.summarize``): the largest
groups of a line chart, the top rows of a table, the offenders, the same on every run. Arrow tables as
Spark's ``DataFrame.toArrow`` gives them (times in the session's zone, UTC); no Spark needed."""

from __future__ import annotations

from datetime import datetime, timedelta

import pyarrow as pa

from zkstorm.jobs.report import TOP_GROUPS, TOP_ROWS, summarize

NIGHT = datetime(2026, 3, 1)
UTC_TIME = pa.timestamp("us", tz="UTC")


def _isr_shrinks(rows: list[tuple[int, int | None, str, int | None]]) -> pa.Table:
    """kafka_isr_shrinks rows: (night, broker, topic, shrinks)."""
    return pa.table(
        {
            "cluster": ["c1"] * len(rows),
            "snapshot_time": pa.array([NIGHT + timedelta(days=n) for n, *_ in rows], UTC_TIME),
            "root": ["/kafka"] * len(rows),
            "topic": [t for _, _, t, _ in rows],
            "broker_id": pa.array([b for _, b, _, _ in rows], pa.int64()),
            "isr_shrinks": pa.array([s for *_, s in rows], pa.int64()),
        }
    )


def test_a_line_chart_keeps_the_largest_groups_summed_per_time_in_time_order() -> None:
    """Ten brokers, the two smallest left out (``TOP_GROUPS``); a broker's topics are summed per night;
    the nights in order; times naive UTC, as the rest of the report has them."""
    rows = [(n, b, t, b * 10 + n) for b in range(1, 11) for n in (2, 0, 1) for t in ("a", "b")]
    chart = summarize("kafka_isr_shrinks", "kafka", "ISR shrinks", _isr_shrinks(rows))
    assert chart.total_rows == 60
    brokers = {r["broker_id"] for r in chart.rows}
    assert brokers == set(range(11 - TOP_GROUPS, 11))
    assert [r["snapshot_time"] for r in chart.rows][:: len(brokers)] == [NIGHT + timedelta(days=n) for n in range(3)]
    assert all(r["snapshot_time"].tzinfo is None for r in chart.rows)
    assert {"snapshot_time": NIGHT + timedelta(days=1), "broker_id": 7, "cluster": "c1", "root": "/kafka",
            "isr_shrinks": 2 * 71} in chart.rows  # fmt: skip
    assert len(chart.rows) == 3 * TOP_GROUPS


def test_offenders_rank_the_charts_groups_by_total_then_name_counting_the_times_seen() -> None:
    """Topics by shrinks over the brokers the chart keeps: a tie is broken by the topic's name, nulls last."""
    rows = [(0, 1, "b", 5), (1, 1, "b", 5), (0, 2, "a", 10), (0, 3, "c", 4), (2, 3, "c", 2), (0, 4, "d", None)]
    chart = summarize("kafka_isr_shrinks", "kafka", "ISR shrinks", _isr_shrinks(rows))
    assert chart.offenders is not None
    assert chart.offenders.columns == ["topic", "isr_shrinks", "snapshots"]
    assert chart.offenders.rows == [
        {"topic": "a", "isr_shrinks": 10, "snapshots": 1},
        {"topic": "b", "isr_shrinks": 10, "snapshots": 2},
        {"topic": "c", "isr_shrinks": 6, "snapshots": 2},
        {"topic": "d", "isr_shrinks": None, "snapshots": 1},
    ]


def test_a_top_table_shows_the_largest_rows_first_and_names_a_partition_as_kafka_does() -> None:
    """kafka_chronic_under_replicated: its partitions as ``topic-partition``, the longest runs first (a
    tie by name), at most ``TOP_ROWS``; the columns a reader needs, none of the history's own."""
    n = TOP_ROWS + 3
    table = pa.table(
        {
            "cluster": ["c1"] * n,
            "root": ["/kafka"] * n,
            "topic": [f"t{i % 2}" for i in range(n)],
            "partition": pa.array(range(n), pa.int64()),
            "consecutive_snapshots": pa.array([i // 2 for i in range(n)], pa.int64()),
            "since": pa.array([NIGHT] * n, UTC_TIME),
            "ongoing": [True] * n,
            "run": ["r"] * n,
        }
    )
    chart = summarize("kafka_chronic_under_replicated", "kafka", "Chronic", table)
    assert len(chart.rows) == TOP_ROWS and chart.total_rows == n
    assert list(chart.rows[0]) == ["partition_name", "cluster", "root", "consecutive_snapshots", "since", "ongoing"]
    assert [(r["partition_name"], r["consecutive_snapshots"]) for r in chart.rows[:3]] == [
        ("t0-14", 7),
        ("t0-12", 6),
        ("t1-13", 6),
    ]
    assert chart.rows[0]["since"] == NIGHT


def test_an_empty_metric_has_an_empty_chart() -> None:
    """No rows, whatever the type of the column a chart groups by."""
    chart = summarize("kafka_isr_shrinks", "kafka", "ISR shrinks", _isr_shrinks([]))
    assert (chart.rows, chart.total_rows) == ([], 0)
    assert chart.offenders is not None and chart.offenders.rows == []
    moves = pa.table(
        {
            "cluster": pa.array([], pa.string()),
            "snapshot_time": pa.array([], UTC_TIME),
            "root": pa.array([], pa.string()),
            "topology_id": pa.array([], pa.string()),
            "moved_executors": pa.array([], pa.int64()),
        }
    )
    assert summarize("storm_executor_moves", "storm", "Moves", moves).rows == []
