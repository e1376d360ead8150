"""The history's output tables compared as Parquet files, without Spark: the tests that hold an incremental
run to a full rebuild, and ``bench/bench_history.py``'s check of the year's tables.

Read with pyarrow, a table's rows are compared as a multiset (their order in the files is not the
history's), with its columns' names, order and types; a Spark comparison (``assertDataFrameEqual``) of
the 23 tables took two jobs a table on the suite's session."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def table_names() -> list[str]:
    """Every metric table, and the incidents."""
    from zkstorm.jobs.metrics import METRICS

    return [m.name for m in METRICS] + ["incidents"]


def read(out: Path, name: str) -> Any | None:
    """Table ``name`` of the history under ``out``, or None when it has none."""
    import pyarrow.parquet as pq

    return pq.read_table(out / name) if (out / name).exists() else None


def rows(out: Path, name: str) -> int:
    table = read(out, name)
    return 0 if table is None else table.num_rows


def differing(a: Path, b: Path) -> dict[str, str]:
    """The tables (every metric's and the incidents) that differ between the histories under ``a`` and
    ``b``, each with how: present in one only, other columns, or other rows."""
    differ = {}
    for name in table_names():
        left, right = read(a, name), read(b, name)
        if left is None or right is None:
            if (left is None) != (right is None):
                differ[name] = f"only under {b if left is None else a}"
            continue
        if _columns(left) != _columns(right):
            differ[name] = f"columns {_columns(left)} != {_columns(right)}"
        elif sorted(map(repr, left.to_pylist())) != sorted(map(repr, right.to_pylist())):
            differ[name] = f"rows differ ({left.num_rows} and {right.num_rows})"
    return differ


def _columns(table: Any) -> list[tuple[str, str]]:
    """A table's columns, names and types, nullability aside: one plan writes a list's elements as never
    null where another, of the same rows, does not say so (as Spark's own comparison, which ignores it)."""
    return [(f.name, str(f.type).replace(" not null", "")) for f in table.schema]
