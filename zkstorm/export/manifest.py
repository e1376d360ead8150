"""A snapshot's manifest, ``OUT/_manifests/<snapshot id>.json``: the commit record of one snapshot, and
the names it relates (its own, its part files'). One reader for every user: the snapshot's roll-back
and prune, ``diff``, the history job.

A manifest is a JSON object. The keys a reader relies on are checked here, once: ``snapshot_id``,
``cluster``, ``snapshot_time`` (ISO), ``files`` (the part files, relative to OUT; exactly what a reader
reads and what roll-back keeps) and, when present, ``tables`` and ``snapshot_date``. A manifest that
fails the check is damaged (``DamagedManifestError``): it is not a snapshot, and nothing it might list is
a leftover either. Every other key passes through untouched, so a writer may add keys without a reader
changing. Stdlib only, so the history job reads manifests without pyarrow's filesystems.
"""

from __future__ import annotations

import json
import posixpath
import re
from datetime import date, datetime
from typing import Any

from ..errors import DamagedManifestError
from ..units import parse_utc

MANIFESTS = "_manifests"
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
        raise DamagedManifestError(path, f"snapshot_time {manifest['snapshot_time']!r} is not an ISO time") from None
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
        raise DamagedManifestError(path, f"snapshot_date {snapshot_date!r} is not a date") from None
    return {**manifest, "files": relative, "tables": tables, "snapshot_date": snapshot_date}


def _missing(manifest: dict[str, Any], key: str, wanted: str) -> str:
    if key not in manifest:
        return f"no {key!r}"
    return f"{key!r} is not {wanted}"


def _inside_out(path: str, file: str) -> str:
    """A listed file as the reader and roll-back compare it: normalised, and only inside a table's
    directory. A manifest naming ``/etc/…``, ``../…`` or ``_manifests/…`` is damaged, not obeyed: a re-run
    deletes the files its predecessor listed."""
    normal = posixpath.normpath(file)
    parts = normal.split("/")
    if normal.startswith("/") or len(parts) < 2 or any(p in ("", ".", "..") or p[0] in "._" for p in parts):
        raise DamagedManifestError(path, f"lists {file!r}, not a part file inside OUT")
    return normal
