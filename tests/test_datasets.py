"""A folder holds one kind of dataset: snapshots (``zkstorm snapshot``) or changes runs (``zkstorm changes
--out``). Both are written by one writer with ids of one form (``CLUSTER@YYYY-MM-DD``), so a run of one
kind into the other's folder would replace its manifest and delete its files: refused in one line, before
anything is written or removed; and each reader (``diff``, ``history``) reads only its own kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import FIXTURES, zkfiles_expected
from tests.test_cli import run
from zkstorm.errors import ExitCode, SnapshotError
from zkstorm.export.manifest import parse_manifest
from zkstorm.export.parquet import list_manifests, open_filesystem


def _data() -> Path:
    """A real ZooKeeper data directory (its logs hold Storm and Kafka changes)."""
    expected = zkfiles_expected()
    variant = sorted(expected["variants"])[0]
    folder = FIXTURES / "zkfiles" / expected["variants"][variant]["dir"]
    return folder.parent if folder.name == "version-2" else folder


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _snapshot(out: Path, *extra: str) -> Any:
    return run("--from-files", str(_data()), "snapshot", str(out), "--cluster", "lab", *extra)


def _changes(out: Path, *extra: str) -> Any:
    return run("--from-files", str(_data()), "changes", "--out", str(out), "--cluster", "lab", *extra)


@pytest.mark.parametrize("first", ["snapshot", "changes"])
def test_a_run_of_the_other_kind_is_refused_and_touches_nothing(tmp_path: Path, first: str) -> None:
    """Same cluster, same day, same default id: the second kind is refused in one line naming the folder
    and what it holds; the first kind's manifest and part files are byte for byte as they were."""
    out = tmp_path / "out"
    one, other = (_snapshot, _changes) if first == "snapshot" else (_changes, _snapshot)
    done = one(out)
    assert done.exit_code == 0, done.stderr
    before = _files(out)
    refused = other(out)
    assert refused.exit_code == ExitCode.ERROR
    (line,) = refused.stderr.splitlines()
    kind = "snapshot" if first == "snapshot" else "changes"
    noun = "snapshot" if first == "snapshot" else "changes run"
    assert line.startswith(f"zkstorm: {out} holds 1 {noun} (") and "a folder of its own" in line
    assert _files(out) == {k: v for k, v in before.items() if k != "_lock"}
    # and the same with an id of the user's own choosing
    assert other(out, "--snapshot-id", "mine").exit_code == ExitCode.ERROR
    assert _files(out) == {k: v for k, v in before.items() if k != "_lock"}
    (manifest,) = list_manifests(*open_filesystem(str(out)), kind)
    assert manifest["dataset"] == kind


def test_each_kind_in_its_own_folder_and_the_readers_read_only_theirs(tmp_path: Path) -> None:
    snapshots, changes = tmp_path / "snapshots", tmp_path / "changes"
    assert _snapshot(snapshots).exit_code == 0
    assert _changes(changes).exit_code == 0
    (snap,) = list_manifests(*open_filesystem(str(snapshots)))
    assert run("diff", str(snapshots), snap["snapshot_id"], snap["snapshot_id"]).exit_code == 0
    (run_,) = list_manifests(*open_filesystem(str(changes)), "changes")
    compared = run("diff", str(changes), run_["snapshot_id"], run_["snapshot_id"])
    assert compared.exit_code == ExitCode.ERROR
    (line,) = compared.stderr.splitlines()
    assert line.startswith(f"zkstorm: {changes} holds 1 changes run (zkstorm changes --out), not snapshots")
    with pytest.raises(SnapshotError, match="holds 1 snapshot "):
        list_manifests(*open_filesystem(str(snapshots)), "changes")


def test_a_folder_both_kinds_reached_before_gives_each_reader_its_own(tmp_path: Path) -> None:
    """A folder an older zkstorm let hold both (its manifests without ``dataset``: a changes run is the
    one with a ``changes`` section): the snapshots read as snapshots, the changes runs as changes."""
    out = tmp_path / "out"
    assert _snapshot(out, "--snapshot-id", "night").exit_code == 0
    other = tmp_path / "other"
    assert _changes(other, "--snapshot-id", "window").exit_code == 0
    for manifest in (other / "_manifests").glob("*.json"):
        data = json.loads(manifest.read_text())
        del data["dataset"]  # as an older zkstorm wrote it
        (out / "_manifests" / manifest.name).write_text(json.dumps(data))
    for part in other.glob("*/snapshot_date=*/*"):
        target = out / part.relative_to(other)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(part.read_bytes())
    assert [m["snapshot_id"] for m in list_manifests(*open_filesystem(str(out)))] == ["night"]
    assert [m["snapshot_id"] for m in list_manifests(*open_filesystem(str(out)), "changes")] == ["window"]
    assert run("diff", str(out), "night", "night").exit_code == 0
    assert run("diff", str(out), "window", "night").exit_code == ExitCode.NOT_FOUND


def test_a_manifest_of_an_unknown_kind_is_damaged() -> None:
    from zkstorm.errors import DamagedManifestError

    manifest = {"snapshot_id": "a", "cluster": "c", "snapshot_time": "2026-01-01T00:00:00Z", "files": []}
    assert parse_manifest("m.json", json.dumps(manifest))["dataset"] == "snapshot"
    assert parse_manifest("m.json", json.dumps({**manifest, "changes": {}}))["dataset"] == "changes"
    with pytest.raises(DamagedManifestError, match="dataset 'x' is neither"):
        parse_manifest("m.json", json.dumps({**manifest, "dataset": "x"}))


def test_history_reads_only_its_own_kind(spark: Any, tmp_path: Path) -> None:
    """The history job's input (``jobs.inputs.SnapshotSet``): a changes folder given as SNAPSHOTS is
    refused in one line, and a snapshot folder given as ``--changes`` likewise."""
    from zkstorm.jobs.inputs import SnapshotSet

    snapshots, changes = tmp_path / "snapshots", tmp_path / "changes"
    assert _snapshot(snapshots).exit_code == 0
    assert _changes(changes).exit_code == 0
    assert len(SnapshotSet(spark, str(snapshots))) == 1
    assert len(SnapshotSet(spark, str(changes), dataset="changes")) == 1
    with pytest.raises(SnapshotError, match="holds 1 changes run"):
        SnapshotSet(spark, str(changes))
    with pytest.raises(SnapshotError, match="holds 1 snapshot "):
        SnapshotSet(spark, str(snapshots), dataset="changes")


def test_the_history_is_refused_a_folder_of_snapshots_or_changes(spark: Any, tmp_path: Path) -> None:
    from zkstorm.errors import UsageError
    from zkstorm.jobs.history import run as run_history

    snapshots = tmp_path / "snapshots"
    assert _snapshot(snapshots).exit_code == 0
    before = _files(snapshots)
    with pytest.raises(UsageError, match="is the SNAPSHOTS folder"):
        run_history(spark, str(snapshots), out=f"{snapshots}/")
    with pytest.raises(UsageError, match="is the --changes folder"):
        run_history(spark, str(snapshots), out=str(tmp_path / "c"), changes=str(tmp_path / "c"))
    assert _files(snapshots) == before
