"""The comparison the history tests and the year's benchmark hold an incremental run to a full rebuild with
(``tests/history_tables.py``): it must see every difference a run could make, and only those."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests import history_tables

ROWS = {"cluster": ["c1", "c1"], "subtree": ["/storm", "/kafka"], "znodes": [3, 4], "hosts": [["h1"], ["h2", "h3"]]}


def _never_null_elements(kind: pa.DataType) -> pa.DataType:
    return pa.list_(pa.field("element", kind.value_type, nullable=False)) if pa.types.is_list(kind) else kind


def _history(out: Path, **tables: pa.Table) -> Path:
    for name, table in tables.items():
        (out / name).mkdir(parents=True)
        pq.write_table(table, out / name / "part-00000.parquet")
    return out


def test_the_same_rows_in_another_order_and_nullability_are_the_same_table(tmp_path: Path) -> None:
    a = _history(tmp_path / "a", zookeeper_subtrees=pa.table(ROWS))
    flipped = pa.table({k: v[::-1] for k, v in ROWS.items()})
    # as Spark writes a list it knows holds no null, beside one it does not know that of
    never_null = flipped.cast(
        pa.schema([pa.field(f.name, _never_null_elements(f.type), nullable=False) for f in flipped.schema])
    )
    b = _history(tmp_path / "b", zookeeper_subtrees=never_null)
    assert history_tables.differing(a, b) == {}
    assert history_tables.rows(a, "zookeeper_subtrees") == 2 and history_tables.rows(a, "incidents") == 0


def test_other_rows_other_columns_or_a_table_on_one_side_only_differ(tmp_path: Path) -> None:
    a = _history(tmp_path / "a", zookeeper_subtrees=pa.table(ROWS), kafka_brokers=pa.table({"brokers": [3]}))
    b = _history(
        tmp_path / "b",
        zookeeper_subtrees=pa.table({**ROWS, "znodes": [3, 5]}),
        kafka_brokers=pa.table({"brokers": pa.array([3], pa.int32())}),
        incidents=pa.table({"kind": ["broker_gone"]}),
    )
    differ = history_tables.differing(a, b)
    assert set(differ) == {"zookeeper_subtrees", "kafka_brokers", "incidents"}
    assert differ["zookeeper_subtrees"].startswith("rows differ")
    assert differ["kafka_brokers"].startswith("columns")
    assert differ["incidents"] == f"only under {b}"
