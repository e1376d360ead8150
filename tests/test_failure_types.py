"""One vocabulary for failure types: every value the code can produce is a ``FailureType`` member, each
is documented in docs/health.md, and snapshots written with the old hyphenated spellings read back with the
new ones."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot
from zkstorm.errors import DecodeError, FailureType
from zkstorm.export.diff import diff_snapshots
from zkstorm.export.parquet import Snapshot
from zkstorm.records import DecodeFailure

ROOT = Path(__file__).resolve().parents[1]


def test_every_failure_type_the_code_raises_is_a_member() -> None:
    """No string literal as a failure type anywhere: a ``FailureType`` member, or a value passed on
    (which ``DecodeError`` checks when it is raised)."""
    members = 0
    for path in (ROOT / "zkstorm").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.keyword) and node.arg == "failure_type"):
                continue
            outcomes, choices = [], [node.value]
            while choices:  # the values the expression can take: both branches of a conditional
                value = choices.pop()
                if isinstance(value, ast.IfExp):
                    choices += [value.body, value.orelse]
                else:
                    outcomes.append(value)
            for value in outcomes:
                assert not isinstance(value, ast.Constant), f"{path}:{node.lineno}: {ast.unparse(node.value)}"
                if isinstance(value, ast.Attribute) and getattr(value.value, "id", None) == "FailureType":
                    assert value.attr in FailureType.__members__, f"{path}:{node.lineno}"
                    members += 1
    assert members > 40


def test_decode_error_takes_only_known_types() -> None:
    assert DecodeError("x", failure_type="thrift-truncated").failure_type is FailureType.THRIFT_TRUNCATED
    with pytest.raises(ValueError):
        DecodeError("x", failure_type="made_up")


def test_the_docs_explain_every_failure_type() -> None:
    page = (ROOT / "docs" / "health.md").read_text()
    section = page.split("## Failure types", 1)[1].split("\n## ", 1)[0]
    documented = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    assert documented == {m.value for m in FailureType}


def test_an_old_spelling_reads_back_with_the_new_one(tmp_path: Path) -> None:
    def write(snapshot_id: str, failure_type: str, day: int) -> None:
        at = datetime(2026, 1, day, tzinfo=UTC)
        with Snapshot(str(tmp_path), snapshot_id=snapshot_id, cluster="c", snapshot_time=at) as snap:
            snap.add(
                DecodeFailure(
                    path="/storm/storms/t-1-1", record_kind="storm_topology", failure_type=failure_type,
                    reason="cut", size=9, encoding="gzip",
                )
            )  # fmt: skip
            snap.commit({})

    write("old", "thrift-truncated", 1)
    write("new", "thrift_truncated", 2)
    (diff,) = diff_snapshots(str(tmp_path), "old", str(tmp_path), "new", tables={"decode_failures"})
    assert (diff.added, diff.removed) == (0, 0)


def test_a_decoder_bug_is_a_typed_failure_in_get_walk_and_snapshot(
    writer: KazooClient, zk_root: Chroot, tmp_path: Path
) -> None:
    """Any exception inside a decoder or its summary becomes a ``decoder_error`` failure with the path,
    in every read. The faulty decoders are registered here on purpose: the shipped decoders have no
    known input that trips them (each such input found so far was fixed), so a real one cannot be
    produced on demand."""
    import pyarrow.dataset as ds

    from zkstorm.decode.registry import Registry
    from zkstorm.export.parquet import take_snapshot
    from zkstorm.model import Cluster
    from zkstorm.sources.live import ReadOnlySession

    def raises(context: Any, data: bytes | None) -> list[Any]:
        return [int(data or b"")]  # ValueError on these bytes

    def bad_summary(records: Any) -> str:
        raise KeyError("summary")

    registry = Registry()
    registry.register("storm", "supervisors/*", "storm_supervisor", raises)
    registry.register("storm", "nimbuses/*", "storm_nimbus", lambda c, d: [1], bad_summary)
    writer.create(f"{zk_root.path}/storm/supervisors/s1", b"not a number", makepath=True)
    writer.create(f"{zk_root.path}/storm/nimbuses/n1", b"x", makepath=True)
    with Cluster(ReadOnlySession(zk_root.zk), registry=registry) as cluster:
        detail = cluster.get("/storm/supervisors/s1")
        assert detail.znode.decode_status == "failed"
        (failure,) = detail.records
        assert isinstance(failure, DecodeFailure) and failure.failure_type == "decoder_error"
        assert failure.path == "/storm/supervisors/s1" and failure.reason.startswith("ValueError: invalid literal")
        walked = [r for r in cluster.walk("/storm") if isinstance(r, DecodeFailure)]
        assert {(f.path, f.failure_type) for f in walked} == {
            ("/storm/supervisors/s1", "decoder_error"),
            ("/storm/nimbuses/n1", "decoder_error"),
        }
        run = take_snapshot(cluster, str(tmp_path / "out"), name="t")
    assert run.failures == 2
    stored = ds.dataset(str(tmp_path / "out" / "decode_failures"), partitioning="hive").to_table().to_pylist()
    assert {r["failure_type"] for r in stored} == {"decoder_error"}
