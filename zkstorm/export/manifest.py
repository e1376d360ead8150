"""A snapshot's manifest, ``OUT/_manifests/<snapshot id>.json``: the commit record of one snapshot, and
the names it relates (its own, its part files'). One reader for every user: the snapshot's roll-back
and prune, ``diff``, the history job.

A manifest is a JSON object. The keys a reader relies on are checked here, once: ``snapshot_id``,
``cluster``, ``snapshot_time`` (ISO), ``files`` (the part files, relative to OUT; exactly what a reader
reads and what roll-back keeps) and, when present, ``tables``, ``snapshot_date`` and ``dataset``.

A folder holds one kind of dataset: ``snapshot`` (``zkstorm snapshot``) or ``changes`` (``zkstorm changes
--out``). Both are written by one writer in one layout, so two runs of different kinds with the same id
(both default to ``CLUSTER@YYYY-MM-DD``) would replace each other's manifest and part files; a manifest
says its kind (``dataset``; one written before the key is a ``changes`` run when it has the ``changes``
section, else a snapshot), the writer refuses a folder that holds the other kind, and each reader reads
only its own (``dataset_of``, ``DatasetKindError``). A manifest that
fails the check is damaged (``DamagedManifestError``): it is not a snapshot, and nothing it might list is
a leftover either. Every other key passes through untouched, so a writer may add keys without a reader
changing. Stdlib only, so the history job reads manifests without pyarrow's filesystems.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from datetime import date, datetime
from typing import Any

from ..errors import DamagedManifestError
from ..text import clip
from ..units import parse_utc

log = logging.getLogger(__name__)

MANIFESTS = "_manifests"
SNAPSHOT = "snapshot"
CHANGES = "changes"
DATASETS = (SNAPSHOT, CHANGES)
_WRITTEN_BY = {SNAPSHOT: "zkstorm snapshot", CHANGES: "zkstorm changes --out"}
_NOUNS = {SNAPSHOT: ("snapshot", "snapshots"), CHANGES: ("changes run", "changes runs")}
_SAFE = re.compile(r"[^A-Za-z0-9._@-]")


def safe_name(text: str) -> str:
    """``text`` usable in a file name on any filesystem and object store."""
    return _SAFE.sub("_", text)


def manifest_name(snapshot_id: str) -> str:
    return f"{safe_name(snapshot_id)}.json"


def is_manifest_name(name: str) -> bool:
    """A committed manifest's file name (a hidden ``.<id>.json.tmp`` is one being written)."""
    return name.endswith(".json") and not name.startswith(".")


def part_file_name(snapshot_id: str, run_token: str) -> str:
    """A table's file of one run: the run's token makes it a name no earlier run of the same snapshot id
    used, so a re-run never writes over a committed file (snapshots before the token: ``part-<id>.parquet``)."""
    return f"part-{safe_name(snapshot_id)}-{run_token}.parquet"


def may_list(manifest_stem: str, part_name: str) -> bool:
    """Whether the manifest named ``<manifest_stem>.json`` may list the part file ``part_name``: its
    snapshot id's file of any run, in either naming. Errs towards yes (an id ``a`` claims ``part-a-b-…``),
    which is the safe side for keeping the files of a manifest that cannot be read."""
    return part_name == f"part-{manifest_stem}.parquet" or part_name.startswith(f"part-{manifest_stem}-")


def manifest_time(manifest: dict[str, Any]) -> datetime:
    """The snapshot's time (UTC) of a manifest that ``parse_manifest`` accepted."""
    return parse_utc(manifest["snapshot_time"])


def parse_manifest(path: str, data: bytes | str) -> dict[str, Any]:
    """The manifest in ``data`` (read from ``path``, named in the error), checked; ``files`` normalised and
    ``snapshot_date`` filled in from the time where a writer left it out. Raises ``DamagedManifestError``."""
    try:
        manifest = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedManifestError(path, f"not JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise DamagedManifestError(path, f"a JSON {type(manifest).__name__}, not an object")
    for key in ("snapshot_id", "cluster", "snapshot_time"):
        if not isinstance(manifest.get(key), str) or not manifest[key]:
            raise DamagedManifestError(path, _missing(manifest, key, "a string"))
    try:
        at = parse_utc(manifest["snapshot_time"])
    except ValueError:
        reason = f"snapshot_time {clip(manifest['snapshot_time'])} is not an ISO time"
        raise DamagedManifestError(path, reason) from None
    files = manifest.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise DamagedManifestError(path, _missing(manifest, "files", "a list of paths"))
    relative = [_inside_out(path, f) for f in files]
    tables = manifest.get("tables", {})
    if not isinstance(tables, dict):
        raise DamagedManifestError(path, _missing(manifest, "tables", "an object"))
    snapshot_date = manifest.get("snapshot_date", f"{at:%Y-%m-%d}")
    try:
        date.fromisoformat(snapshot_date)
    except (TypeError, ValueError):
        raise DamagedManifestError(path, f"snapshot_date {clip(snapshot_date)} is not a date") from None
    dataset = manifest.get("dataset", CHANGES if "changes" in manifest else SNAPSHOT)
    if dataset not in DATASETS:
        raise DamagedManifestError(path, f"dataset {clip(dataset)} is neither {SNAPSHOT!r} nor {CHANGES!r}")
    return {**manifest, "files": relative, "tables": tables, "snapshot_date": snapshot_date, "dataset": dataset}


def dataset_of(manifest: dict[str, Any]) -> str:
    """The kind of dataset a checked manifest belongs to: ``snapshot`` or ``changes``."""
    return str(manifest["dataset"])


def other_kind_error(base: str, wanted: str, found: str, count: int) -> str:
    """The one line that refuses a folder of the other kind, for the writer and every reader alike."""
    return (
        f"{base} holds {count} {_NOUNS[found][count != 1]} ({_WRITTEN_BY[found]}), not {_NOUNS[wanted][1]}; "
        f"a folder holds one kind: give {_WRITTEN_BY[wanted]} a folder of its own"
    )


def of_kind(manifests: list[dict[str, Any]], base: str, wanted: str) -> list[dict[str, Any]]:
    """The manifests of the ``wanted`` kind. A folder of only the other kind raises ``SnapshotError``: a
    reader never reads changes as snapshots (or the reverse); a folder of both (written before the
    writer refused it) gives each reader its own, with a warning naming how many were left out."""
    from ..errors import SnapshotError

    mine = [m for m in manifests if dataset_of(m) == wanted]
    others = [m for m in manifests if dataset_of(m) != wanted]
    if others and not mine:
        raise SnapshotError(other_kind_error(base, wanted, dataset_of(others[0]), len(others)))
    if others:
        found = dataset_of(others[0])
        log.warning("%s: %d %s left out (this reads %s only)", base, len(others), _NOUNS[found][1], _NOUNS[wanted][1])
    return mine


def _missing(manifest: dict[str, Any], key: str, wanted: str) -> str:
    if key not in manifest:
        return f"no {key} key"
    return f"{key} is not {wanted}"


def _inside_out(path: str, file: str) -> str:
    """A listed file as the reader and roll-back compare it: normalised, and only inside a table's
    directory. A manifest naming ``/etc/…``, ``../…`` or ``_manifests/…`` is damaged, not obeyed: a re-run
    deletes the files its predecessor listed."""
    normal = posixpath.normpath(file)
    parts = normal.split("/")
    if normal.startswith("/") or len(parts) < 2 or any(p in ("", ".", "..") or p[0] in "._" for p in parts):
        raise DamagedManifestError(path, f"lists {clip(file)}, not a part file inside OUT")
    return normal
