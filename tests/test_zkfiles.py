"""ZooKeeper's own files as a source: every fixture file against expected.json, replay, damage, and a
live walk against an offline read of the same real server's data directory."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISFIFO
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

import zkstorm
from tests.conftest import Chroot, load_cluster
from tests.fixtures import FIXTURES as SHARED_FIXTURES
from tests.fixtures import zkfiles_expected
from tests.test_cli import run
from zkstorm.errors import ExitCode, FilesError, NotFoundError
from zkstorm.sources.files import snapfile, txnlog
from zkstorm.sources.files.jute import decode_text, ephemeral_type
from zkstorm.sources.files.snapfile import SnapshotFile
from zkstorm.sources.files.source import FileSource
from zkstorm.sources.files.txnlog import ERROR, LogFile, Multi, SetData
from zkstorm.sources.live import ReadOnlySession

FIXTURES = SHARED_FIXTURES / "zkfiles"
EXPECTED = zkfiles_expected()
VARIANTS = sorted(EXPECTED["variants"])
SNAPSHOTS = [(v, name) for v in VARIANTS for name in EXPECTED["variants"][v]["snapshots"]]
LOGS = [(v, name) for v in VARIANTS for name in EXPECTED["variants"][v]["logs"]]


class _EveryNode:
    """``SnapshotFile.tree`` hooks that take over every node: the file's own records, in file order."""

    owners = ()

    class _All:
        def __contains__(self, path: object) -> bool:
            return True

    touched = _All()

    def __init__(self) -> None:
        self.records: list[tuple[str, bytes | None, tuple[int, ...], int]] = []

    def enter(self, path: str, data: bytes | None, fields: tuple[int, ...], crc: int, stack: list[Any]) -> Any:
        self.records.append((path, data, fields, crc))
        return [path, data, fields, 0, crc, True]

    def close(self, frame: list[Any], stack: list[Any]) -> Any:
        yield from ()
        return 1


def file_records(snap: SnapshotFile, *, digest: bool = False) -> list[tuple[str, bytes | None, tuple[int, ...], int]]:
    """(path, data, persisted fields, digest crc) of every node of the file, in file order."""
    hooks = _EveryNode()
    assert list(snap.tree(hooks, digest=digest)) == []
    return hooks.records


def folder(variant: str) -> Path:
    return FIXTURES / EXPECTED["variants"][variant]["dir"]


def sha(data: bytes | None) -> str:
    return hashlib.sha256(data or b"").hexdigest()


def client_view(raw: Any) -> dict[str, Any]:
    """A walked node in expected.json's client-visible terms."""
    s = raw.stat
    return {
        "path": raw.path,
        "data_sha256": sha(raw.data),
        "data_length": s.dataLength,
        "data_is_null": raw.data is None,
        "czxid": s.czxid,
        "mzxid": s.mzxid,
        "pzxid": s.pzxid,
        "ctime": s.ctime,
        "mtime": s.mtime,
        "version": s.version,
        "cversion": s.cversion,
        "aversion": s.aversion,
        "ephemeral_owner": s.ephemeralOwner,
        "num_children": s.numChildren,
    }


def expected_client(znodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {z["path"]: {k: z[k] for k in _CLIENT_KEYS} for z in znodes}


_CLIENT_KEYS = [
    "path",
    "data_sha256",
    "data_length",
    "data_is_null",
    "czxid",
    "mzxid",
    "pzxid",
    "ctime",
    "mtime",
    "version",
    "cversion",
    "aversion",
    "ephemeral_owner",
    "num_children",
]


# --- one snapshot file, as stored ------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "name"), SNAPSHOTS)
def test_snapshot_file_content(variant: str, name: str) -> None:
    expected = EXPECTED["variants"][variant]["snapshots"][name]
    snap = SnapshotFile(str(folder(variant) / name))
    nodes = file_records(snap, digest=True)
    info = snap.info
    assert info.complete and info.damage is None
    assert info.zxid == expected["zxid"]
    assert info.seals_verified == expected["seals"]
    assert info.nodes == expected["znode_count"] == len(nodes)
    assert [p for p, *_ in nodes[:10]] == expected["serialization_order_first_10"]
    assert info.sessions == {s["id"]: s["timeout_ms"] for s in expected["sessions"]}
    assert {str(k): [a._asdict() for a in v] for k, v in info.acls.items()} == expected["acl_cache"]
    digest = expected["digest"]
    assert info.digest == (None if digest is None else (digest["zxid"], digest["version"], digest["digest"]))
    assert info.last_processed_zxid == expected["last_processed_zxid"]
    content = sum(crc for *_, crc in nodes) % (1 << 64)
    stored = (digest["digest"] % (1 << 64)) if digest else None
    assert (content == stored) is expected["digest_equals_content"]

    got = {}
    for path, data, f, _ in nodes:
        got[path] = {
            "path": path,
            "data_sha256": sha(data),
            "data_length": len(data or b""),
            "data_is_null": data is None,
            "czxid": f[1],
            "mzxid": f[2],
            "ctime": f[3],
            "mtime": f[4],
            "version": f[5],
            "cversion_persisted": f[6],
            "aversion": f[7],
            "ephemeral_owner_persisted": f[8],
            "pzxid": f[9],
            "ephemeral_type": ephemeral_type(f[8]),
        }
    for znode in expected["znodes"]:
        assert got[znode["path"]] == {k: znode[k] for k in got[znode["path"]]}, znode["path"]


# --- one log file -----------------------------------------------------------------------------------


def _summary(kind: int, body: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    for key, attr in (("path", "path"), ("version", "version"), ("err", "err"), ("timeOut", "timeout_ms")):
        if hasattr(body, attr):
            out[key] = getattr(body, attr)
    if hasattr(body, "data"):
        out["data_sha256"] = None if body.data is None else sha(body.data)
    if hasattr(body, "parent_cversion"):
        out["parentCVersion"] = body.parent_cversion
        if body.kind == "ttl":
            out["ttl"] = body.ttl
    if hasattr(body, "paths"):
        out["paths2Delete"] = body.paths
    if isinstance(body, Multi):
        out["txns"] = [_summary(k, b) for k, b in body.ops]
    return out


@pytest.mark.parametrize(("variant", "name"), LOGS)
def test_log_file_content(variant: str, name: str) -> None:
    expected = EXPECTED["variants"][variant]["logs"][name]
    log = LogFile(str(folder(variant) / name))
    txns = list(log.txns())
    assert log.end_offset == expected["end_of_txns_offset"] and not log.partial_tail
    assert len(txns) == expected["txn_count"]
    assert (txns[0].zxid, txns[-1].zxid) == (expected["first_zxid"], expected["last_zxid"])
    for txn, want in zip(txns, expected["txns"], strict=True):
        assert (txn.zxid, txn.session, txn.cxid, txn.time_ms, txn.type) == (
            want["zxid"],
            want["session"],
            want["cxid"],
            want["time"],
            want["type"],
        )
        digest = want.get("digest")
        assert txn.digest == (None if digest is None else (digest["version"], digest["treeDigest"]))
        summary = _summary(txn.type, txn.body)
        for key in ("path", "version", "err", "timeOut", "parentCVersion", "ttl", "paths2Delete", "data_sha256"):
            if key in want:
                assert summary.get(key) == want[key], (txn.zxid, key)
        for sub, want_sub in zip(summary.get("txns", []), want.get("txns", []), strict=True):
            assert {k: sub.get(k) for k in want_sub if k != "op"} == {k: v for k, v in want_sub.items() if k != "op"}
    assert any(t.type == ERROR and t.digest is None for t in txns) or variant != "zk395-plain" or name != "log.1c9"


@pytest.mark.parametrize(("variant", "name"), LOGS)
@pytest.mark.parametrize("chunk", [7, 64, 1000])
def test_log_records_across_read_chunks_read_the_same(
    monkeypatch: pytest.MonkeyPatch, variant: str, name: str, chunk: int
) -> None:
    """The reader's buffer refills a chunk at a time and seeks over records already in the snapshot:
    with chunks smaller than a record, every record crosses a refill."""
    whole = list(LogFile(str(folder(variant) / name)).txns())
    middle = whole[len(whole) // 2].zxid
    monkeypatch.setattr(txnlog, "_CHUNK", chunk)
    for after in (-1, middle):
        log = LogFile(str(folder(variant) / name))
        assert list(log.txns(after=after)) == [t for t in whole if t.zxid > after]
        assert log.end_offset == EXPECTED["variants"][variant]["logs"][name]["end_of_txns_offset"]
        assert not log.partial_tail


def _read_both(path: Path, after: int = -1, *, best_effort: bool = False) -> tuple[Any, Any]:
    """(records, end offset, torn tail, damage) of the log at ``path`` read by ``txns`` and by ``heads``
    (a setData head parsed as ``txns`` parses it), or the ``FilesError`` message each read ended in."""

    def read(heads: bool) -> Any:
        log = LogFile(str(path), best_effort=best_effort)
        try:
            if not heads:
                records = [(t.zxid, t.session, t.cxid, t.time_ms, t.type, t.body) for t in log.txns(after=after)]
            else:
                records = [
                    (h.zxid, h.session, h.cxid, h.time_ms, h.type, h.body)
                    if h.body is not None
                    else (h.zxid, h.session, h.cxid, h.time_ms, h.type, SetData(decode_text(h.path), h.data, h.version))
                    for h in log.heads(after=after)
                ]
        except FilesError as exc:
            return str(exc)
        return records, log.end_offset, log.partial_tail, log.damage

    return read(False), read(True)


@pytest.mark.parametrize(("variant", "name"), LOGS)
@pytest.mark.parametrize("chunk", [7, 64, 1000, 1 << 20])
def test_heads_read_every_record_as_txns_does(
    monkeypatch: pytest.MonkeyPatch, variant: str, name: str, chunk: int
) -> None:
    """``heads``, the fast path of ``zkstorm changes``, leaves a setData's path and data as bytes: read
    whole, each record is the one ``txns`` reads, from any point, across any refill of the buffer."""
    log = folder(variant) / name
    whole = list(LogFile(str(log)).txns())
    assert any(t.type == txnlog.SET_DATA for t in whole) or variant != "zk395-plain" or name != "log.1c9"
    monkeypatch.setattr(txnlog, "_CHUNK", chunk)
    for after in (-1, whole[len(whole) // 2].zxid):
        by_txns, by_heads = _read_both(log, after)
        assert by_heads == by_txns
        assert len(by_txns[0]) == sum(t.zxid > after for t in whole)


# --- snapshot + logs = the live server's final state --------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("which", ["newest_snapshot", "older_snapshot"])
def test_replay_reproduces_the_final_state(variant: str, which: str) -> None:
    var = EXPECTED["variants"][variant]
    logs = [str(folder(variant) / name) for name in var["logs"]]
    with FileSource([str(folder(variant) / var[which]), *logs], verify_digest=True) as source:
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        plan = source.plan
    assert got == expected_client(var["final"]["znodes"])
    replay = var["final"]["replay"][var[which]]
    assert plan is not None
    assert plan.txns_applied == replay["txns_applied"]
    assert plan.zxid == var["final"]["zxid"]
    assert plan.fuzzy is var["snapshots"][var[which]]["fuzzy"]
    assert plan.digest_verified is True and plan.problems == []
    assert source._replay is not None
    assert source._replay.sessions == {s["id"]: s["timeout_ms"] for s in replay["sessions_after"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_data_directory_uses_the_newest_snapshot(variant: str) -> None:
    var = EXPECTED["variants"][variant]
    with FileSource([str(folder(variant).parent)]) as source:  # the dataDir, not version-2
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        assert source.plan is not None and Path(source.plan.snapshot).name == var["newest_snapshot"]
    assert got == expected_client(var["final"]["znodes"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_replay_to_a_zxid_equals_the_snapshot_taken_there(variant: str) -> None:
    """The older (fuzzy) snapshot replayed to the newest one's zxid is the newest one's content,
    which was dumped while the tree was quiet."""
    var = EXPECTED["variants"][variant]
    newest = var["snapshots"][var["newest_snapshot"]]
    logs = [str(folder(variant) / name) for name in var["logs"]]
    with FileSource([str(folder(variant) / var["older_snapshot"]), *logs], at_zxid=newest["zxid"]) as source:
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        assert source.plan is not None and source.plan.zxid == newest["zxid"]
    assert got == expected_client(newest["znodes"])


def test_at_zxid_picks_an_older_snapshot_and_reads_views_as_of_then() -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    newest = var["snapshots"][var["newest_snapshot"]]["zxid"]
    before = run(
        "--from-files", str(folder("zk395-plain")), "--at-zxid", hex(newest), "get", "/kafka-prod/brokers/ids/104"
    )
    assert before.exit_code == ExitCode.NOT_FOUND  # created by change 5, after the newest snapshot
    after = run("--from-files", str(folder("zk395-plain")), "get", "/kafka-prod/brokers/ids/104", "-f", "json")
    assert after.exit_code == 0 and json.loads(after.stdout)["znode"]["ephemeral_owner"] == var["live_session_id"]


def test_subtree_reads_and_children() -> None:
    var = EXPECTED["variants"]["zk395-gz"]
    final = expected_client(var["final"]["znodes"])
    with FileSource([str(folder("zk395-gz"))]) as source:
        extra = {raw.path: client_view(raw) for raw in source.walk("/zkfiles-extra")}
        assert extra == {p: v for p, v in final.items() if p == "/zkfiles-extra" or p.startswith("/zkfiles-extra/")}
        shallow = {raw.path for raw in source.walk("/zkfiles-extra", max_depth=1)}
        assert shallow == {p for p in extra if p.count("/") <= 2}
        top = {raw.path for raw in source.walk("/", max_depth=1)}
        assert top == {p for p in final if p == "/" or p.count("/") == 1}
        assert source.get_children("/zkfiles-extra/container2") == ["ttl-node2"]  # created by replay
        assert source.get("/zkfiles-extra/null-data-2").data is None
        assert not source.exists("/storm/supervisors/5e7d1c20-9a8b-4c6d-b0e1-f2a3b4c5d6e7-172.16.5.32")
        with pytest.raises(Exception, match="no znode"):
            source.get("/nope")


# --- damage --------------------------------------------------------------------------------------------


def _copy(variant: str, tmp_path: Path) -> Path:
    target = tmp_path / "version-2"
    shutil.copytree(folder(variant), target)
    return target


def test_a_truncated_newest_snapshot_falls_back_to_the_older_one(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    files = _copy("zk395-plain", tmp_path)
    newest = files / var["newest_snapshot"]
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    with FileSource([str(files)]) as source:
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        assert source.plan is not None
        assert Path(source.plan.snapshot).name == var["older_snapshot"]
        assert "still being written, or cut short" in source.plan.skipped[0]
    assert got == expected_client(var["final"]["znodes"])
    named = run("--from-files", str(newest), "tree")
    assert named.exit_code == ExitCode.FILES


def test_a_damaged_snapshot_gives_one_line_naming_it_and_a_fallback_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    files = _copy("zk395-plain", tmp_path)
    newest = files / var["newest_snapshot"]
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    alone = run("--from-files", str(newest), "tree")
    assert alone.exit_code == ExitCode.FILES
    assert alone.stderr.strip().splitlines() == [
        f"zkstorm: {newest}: does not end with the '/' seal (still being written, or cut short)"
    ]
    assert not [m for m in caplog.messages if "snapshot" in m]  # a log line would be the second line
    fallback = run("--from-files", str(files), "tree", "-f", "jsonl")
    assert fallback.exit_code == 0
    assert [m for m in caplog.messages if "snapshot" in m] == [
        f"skipped snapshot {newest}: does not end with the '/' seal (still being written, or cut short)"
    ]


def test_a_truncated_gz_snapshot_named_alone_is_a_clear_error(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk395-gz"]
    path = tmp_path / var["newest_snapshot"]
    path.write_bytes((folder("zk395-gz") / var["newest_snapshot"]).read_bytes()[:-200])
    result = run("--from-files", str(path), "tree", "/")
    assert result.exit_code == ExitCode.FILES
    assert var["newest_snapshot"] in result.stderr and "Traceback" not in result.stderr
    best = run("--from-files", str(path), "--best-effort", "tree", "/", "-f", "jsonl")
    assert best.exit_code == 0 and best.stdout.count("\n") > 300  # everything before the cut
    assert "gzip stream ends early" in best.stderr


def test_a_bad_checksum_names_the_file(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk38-plain"]
    path = tmp_path / var["newest_snapshot"]
    data = bytearray((folder("zk38-plain") / var["newest_snapshot"]).read_bytes())
    at = data.index(b"prod.kafka")  # a byte inside a znode's data: only the seal can notice
    data[at] ^= 0x20
    path.write_bytes(bytes(data))
    with pytest.raises(FilesError, match=rf"{var['newest_snapshot']}: checksum mismatch"):
        FileSource([str(path)]).connect()
    assert run("--from-files", str(path), "tree").exit_code == ExitCode.FILES


def test_a_snapshot_cut_short_after_it_was_verified_is_an_error_not_a_shorter_tree(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    path = tmp_path / var["newest_snapshot"]
    whole = (folder("zk395-plain") / var["newest_snapshot"]).read_bytes()
    path.write_bytes(whole)
    with FileSource([str(path)]) as source:  # opening verifies every seal of the whole file
        path.write_bytes(whole[: len(whole) // 2])  # then something truncates it in place
        with pytest.raises(FilesError, match="changed or replaced"):
            list(source.walk("/"))


def test_a_snapshot_byte_changed_after_it_was_verified_is_an_error(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk38-plain"]
    path = tmp_path / var["newest_snapshot"]
    whole = bytearray((folder("zk38-plain") / var["newest_snapshot"]).read_bytes())
    path.write_bytes(bytes(whole))
    with FileSource([str(path)]) as source:
        whole[whole.index(b"prod.kafka")] ^= 0x20  # same length, same structure: only the seal can tell
        path.write_bytes(bytes(whole))
        with pytest.raises(FilesError, match=r"checksum mismatch.*changed or replaced"):
            list(source.walk("/"))


def test_a_damaged_log_record_stops_replay_there(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    files = _copy("zk395-plain", tmp_path)
    last_log = files / sorted(var["logs"], key=lambda n: int(n.split(".")[1], 16))[-1]
    data = bytearray(last_log.read_bytes())
    data[2000] ^= 0xFF  # inside a record's payload, after the newest snapshot
    last_log.write_bytes(bytes(data))
    with pytest.raises(FilesError, match="checksum mismatch in the record"):
        FileSource([str(files)]).connect()
    with FileSource([str(files)], best_effort=True) as source:
        assert source.plan is not None and source.plan.problems
        assert source.plan.snapshot_zxid < source.plan.zxid < var["final"]["zxid"]
        assert sum(1 for _ in source.walk("/")) > 400
    result = run("--from-files", str(files), "--best-effort", "--strict", "tree")
    assert result.exit_code == ExitCode.DECODE_FAILURES
    # what the read left out is the library's to tell too, through the source contract: the CLI opens its
    # cluster with zkstorm.from_files and reports exactly this
    with zkstorm.from_files(str(files), best_effort=True) as cluster:
        assert sum(1 for _ in cluster.tree("/")) > 400
        assert cluster.source_problems == source.plan.problems
        assert any("checksum mismatch in the record" in problem for problem in cluster.source_problems)
    assert any(line.endswith(cluster.source_problems[0]) for line in result.stderr.splitlines())


def test_missing_txns_between_files_are_an_error(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk395-snappy"]
    files = _copy("zk395-snappy", tmp_path)
    logs = sorted(var["logs"], key=lambda n: int(n.split(".")[1], 16))
    (files / logs[-2]).unlink()  # the txns between the older snapshot and the last log
    older = files / var["older_snapshot"]
    with pytest.raises(FilesError, match="are missing from the logs"):
        FileSource([str(older), *(str(files / n) for n in logs if (files / n).exists())]).connect()


# A hole in a log (a record the reader cannot take, whole records after it) against the log's end (zeros,
# or one record cut short and zeros, to the end of the file): ZooKeeper's own reader ends the log at
# either, silently (FileTxnLog.java); zkstorm tells the hole as damage.
HOLES = ("a length into the zeros", "a length past the end of the file", "a zeroed txn header")
ENDS = ("zeros from a record on", "a record cut short, then zeros")


def last_log(files: Path) -> Path:
    return max(files.glob("log.*"), key=lambda p: int(p.name.split(".")[1], 16))


def record_starts(blob: bytes) -> list[int]:
    """Where each record of a log starts, and last where its data ends (the preallocated zeros start)."""
    starts, pos = [], 16  # the file header; then (checksum, length, payload, "B") per record
    while (length := int.from_bytes(blob[pos + 8 : pos + 12], "big")) > 0:
        starts.append(pos)
        pos += 12 + length + 1
    return [*starts, pos]


def damage_log(log: Path, how: str, record: int = 3) -> tuple[int, int]:
    """Damage a real log's ``record``-th record (from 0) as ``how`` (one of ``HOLES`` or ``ENDS``) says;
    returns where that record and the next one start."""
    blob = bytearray(log.read_bytes())
    starts = record_starts(blob)
    at, after, end = starts[record], starts[record + 1], starts[-1]
    if how == "a length into the zeros":  # its "B" would be in the preallocated zeros
        struct.pack_into(">i", blob, at + 8, end + 100 - at - 12)
    elif how == "a length past the end of the file":
        struct.pack_into(">i", blob, at + 8, len(blob) + 100 - at - 12)
    elif how == "a zeroed txn header":  # checksum, length and txn header, as a zeroed disk block leaves them
        blob[at : at + 12 + 32] = bytes(12 + 32)
    elif how == "zeros from a record on":  # as the server left the log before appending that record
        blob[at:] = bytes(len(blob) - at)
    elif how == "a record cut short, then zeros":  # as a crash in the middle of appending it leaves it
        half = at + (after - at) // 2
        blob[half:] = bytes(len(blob) - half)
    else:
        raise AssertionError(how)
    log.write_bytes(bytes(blob))
    return at, after


@pytest.mark.parametrize("how", HOLES)
def test_a_hole_in_a_log_with_whole_records_after_it_is_damage(tmp_path: Path, how: str) -> None:
    files = _copy("zk395-plain", tmp_path)
    log = last_log(files)  # replayed after the newest snapshot
    zxids = [txn.zxid for txn in LogFile(str(log)).txns()]
    at, after = damage_log(log, how)
    with pytest.raises(FilesError) as raised:
        FileSource([str(files)]).connect()
    message = str(raised.value)
    assert message.startswith(f"{log}: ")
    assert message.endswith(f" at byte {at}, but whole records follow from byte {after}: the log is damaged")
    result = run("--from-files", str(files), "tree", "/")
    assert result.exit_code == ExitCode.FILES
    assert result.stdout == "" and result.stderr.strip().splitlines() == [f"zkstorm: {message}"]
    with FileSource([str(files)], best_effort=True) as source:  # the state before the hole, and the hole
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        assert source.plan is not None and source.plan.problems == [message]
        assert source.plan.zxid == zxids[2]
    with FileSource([str(folder("zk395-plain"))], at_zxid=zxids[2]) as pristine:
        assert got == {raw.path: client_view(raw) for raw in pristine.walk("/")}
    best = run("--from-files", str(files), "--best-effort", "tree", "/")
    assert best.exit_code == 0 and f"warning: {message}" in best.stderr


@pytest.mark.parametrize("how", ENDS)
def test_zeros_to_the_end_of_a_log_are_its_end_not_damage(tmp_path: Path, how: str) -> None:
    files = _copy("zk395-plain", tmp_path)
    log = last_log(files)
    zxids = [txn.zxid for txn in LogFile(str(log)).txns()]
    damage_log(log, how)
    with FileSource([str(files)]) as source:
        got = {raw.path: client_view(raw) for raw in source.walk("/")}
        assert source.plan is not None and source.plan.problems == []
        assert source.plan.zxid == zxids[2]
    with FileSource([str(folder("zk395-plain"))], at_zxid=zxids[2]) as pristine:
        assert got == {raw.path: client_view(raw) for raw in pristine.walk("/")}
    result = run("--from-files", str(files), "tree", "/")
    assert result.exit_code == 0 and result.stderr == ""


@pytest.mark.parametrize("how", [*HOLES, *ENDS, "a checksum", "a setData's data length", "a setData's path length"])
def test_heads_meet_the_damage_txns_meets(tmp_path: Path, how: str) -> None:
    """The same loop reads both: a damaged log ends (or is refused) at the same record, with the same words."""
    files = _copy("zk395-plain", tmp_path)
    log = last_log(files)
    if how in (*HOLES, *ENDS):
        damage_log(log, how)
    else:
        blob = bytearray(log.read_bytes())
        starts = record_starts(bytes(blob))
        setdata = [at for at in starts[:-1] if struct.unpack_from(">i", blob, at + 12 + 28)[0] == txnlog.SET_DATA]
        at = setdata[0] + 12  # the first setData's record, after its frame
        if how == "a checksum":
            blob[at + 32 + 4] ^= 0xFF  # a byte of its path
        else:  # a length that lies, the record's checksum made right again: only the layout tells it
            path_size = struct.unpack_from(">i", blob, at + 32)[0]
            field = at + 32 if how == "a setData's path length" else at + 36 + path_size  # or its data's
            struct.pack_into(">i", blob, field, struct.unpack_from(">i", blob, field)[0] + 3)
            length = struct.unpack_from(">i", blob, at - 4)[0]
            struct.pack_into(">q", blob, at - 12, zlib.adler32(bytes(blob[at : at + length])))
        log.write_bytes(bytes(blob))
    for best_effort in (False, True):
        by_txns, by_heads = _read_both(log, best_effort=best_effort)
        assert by_heads == by_txns
        if how in ENDS:  # the log's end, not damage
            assert not isinstance(by_txns, str) and by_txns[3] is None
        else:  # damage: refused, or (best effort) read up to it and named
            assert isinstance(by_txns, str) != best_effort
            assert best_effort == (not isinstance(by_txns, str) and by_txns[3] is not None)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_heads_and_txns_agree_on_any_damage(data: st.DataObject) -> None:
    """Random damage anywhere in a real log: both reads end the same way, at the same record."""
    variant = data.draw(st.sampled_from(VARIANTS))
    name = data.draw(st.sampled_from(sorted(EXPECTED["variants"][variant]["logs"])))
    blob = bytearray((folder(variant) / name).read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        if not blob:
            break
        at = data.draw(st.integers(0, len(blob) - 1))
        if data.draw(st.booleans()):
            blob = blob[:at]
        else:
            blob[at] ^= data.draw(st.integers(1, 255))
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / name
        log.write_bytes(bytes(blob))
        for best_effort in (False, True):
            by_txns, by_heads = _read_both(log, best_effort=best_effort)
            assert by_heads == by_txns


@contextmanager
def _unblocked(path: Path) -> Iterator[list[bool]]:
    """Should a read open the FIFO ``path`` (and so wait for a writer, forever), open its other end after
    a few seconds, so that the test fails instead of hanging; yields a list that says if it had to. (The
    other end opens only while a reader holds the FIFO open: never, when nothing opens it.)"""
    opened: list[bool] = []
    if not S_ISFIFO(os.lstat(path).st_mode):
        yield opened
        return
    stop = threading.Event()

    def watch() -> None:
        if stop.wait(5):
            return
        while not stop.is_set():
            try:  # ENXIO until a reader has it open
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                opened.append(True)
            except OSError:
                pass
            stop.wait(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield opened
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("which", ["newest_snapshot", "last_log"])
@pytest.mark.parametrize("kind", ["a FIFO", "a character device", "a directory"])
def test_a_data_file_that_is_not_a_regular_file_is_refused_unopened(tmp_path: Path, which: str, kind: str) -> None:
    files = _copy("zk395-plain", tmp_path)
    snapshot = files / EXPECTED["variants"]["zk395-plain"]["newest_snapshot"]
    target = snapshot if which == "newest_snapshot" else last_log(files)
    target.unlink()
    if kind == "a FIFO":
        os.mkfifo(target)
    elif kind == "a character device":
        target.symlink_to(os.devnull)
    else:
        target.mkdir()
    since = hex(int(snapshot.name.split(".")[1], 16) + 1)  # a window whose state is the newest snapshot
    with _unblocked(target) as opened:
        reads = [run("--from-files", str(files), "tree", "/")]
        if kind != "a directory":  # named as a file: a directory so named is read as a data directory
            reads.append(run("--from-files", str(snapshot), "--from-files", str(last_log(files)), "tree"))
        if which == "last_log" or kind != "a directory":  # (changes hands the files source its snapshots by
            # name, and a directory so named is a data directory holding none: the older snapshot is used)
            reads.append(run("--from-files", str(files), "changes", "--since", since))
    assert not opened, "a read opened it and waited for a writer"
    for result in reads:
        assert result.exit_code == ExitCode.FILES
        assert result.stderr.strip().splitlines() == [f"zkstorm: {target}: not a regular file ({kind})"]


def test_a_fifo_put_in_place_after_the_check_is_refused_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _copy("zk395-plain", tmp_path)
    log = last_log(files)
    checked = os.stat(log)
    log.unlink()
    os.mkfifo(log)
    real_stat = os.stat

    def stat_before_the_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return checked if os.fspath(path) == str(log) else real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_before_the_swap)  # the check sees the log; the open, a FIFO
    with _unblocked(log) as opened, pytest.raises(FilesError, match=r"not a regular file \(a FIFO\)"):
        list(LogFile(str(log)).txns())
    assert not opened, "the read opened it and waited for a writer"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_files_give_files_errors_only(tmp_path: Path, data: st.DataObject) -> None:
    """Random damage anywhere in a snapshot or a log ends in FilesError, or in a read whose tree is exactly
    the undamaged directory's tree as of the zxid the read reached: never another exception, never a
    silently shorter or different tree. Without --best-effort, only what reads as a torn tail of the newest
    log (the server was writing it) may stop the replay before the end."""
    variant = data.draw(st.sampled_from(VARIANTS))
    var = EXPECTED["variants"][variant]
    name = data.draw(st.sampled_from([var["newest_snapshot"], *var["logs"]]))
    blob = bytearray((folder(variant) / name).read_bytes())
    cut = data.draw(st.booleans())
    at = data.draw(st.integers(0, len(blob) - 1))
    if cut:
        blob = blob[:at]
    else:
        blob[at] ^= data.draw(st.integers(1, 255))
    target = tmp_path / f"m{at}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(folder(variant), target)
    (target / name).write_bytes(bytes(blob))
    last_log = sorted(var["logs"], key=lambda n: int(n.split(".")[1], 16))[-1]
    for best_effort in (False, True):
        try:
            with FileSource([str(target)], best_effort=best_effort) as source:
                got = {raw.path: client_view(raw) for raw in source.walk("/")}
                reached = source.plan.zxid if source.plan is not None else None
        except (FilesError, NotFoundError):  # NotFound: a best-effort read with nothing before the damage
            continue
        assert reached is not None
        if not best_effort and reached != var["final"]["zxid"]:
            # a torn tail: the newest log cut short, or its last record's length or "B" damaged (a record
            # the server was appending, for ZooKeeper too); with whole records after it, it is a hole
            last_record = record_starts((folder(variant) / last_log).read_bytes())[-2]
            assert name == last_log and (cut or at >= last_record), (
                f"{name} damaged at {at}: replay stopped at {reached:#x} silently"
            )
        with FileSource([str(folder(variant))], at_zxid=reached) as pristine:
            want = {raw.path: client_view(raw) for raw in pristine.walk("/")}
        assert got == want


# --- the same server, live and from its files ---------------------------------------------------------


def test_live_walk_and_offline_read_agree(writer: KazooClient, zk_root: Chroot) -> None:
    load_cluster(writer, zk_root.path, "storm", "storm2")
    writer.ensure_path(zk_root.path + "/k")
    load_cluster(writer, zk_root.path + "/k", "kafka", "cluster-2x-chroot")
    writer.set(zk_root.path + "/k/kafka-prod/controller_epoch", b"9")
    writer.delete(zk_root.path + "/storm/workerbeats", recursive=True)
    with ReadOnlySession(zk_root.zk) as session:
        live = {zk_root.path + (raw.path if raw.path != "/" else ""): raw for raw in session.walk("/")}
    data_dir = zk_root.server.base / "data"
    with FileSource([str(data_dir)]) as source:
        offline = {raw.path: raw for raw in source.walk(zk_root.path)}
    assert offline.keys() == live.keys()
    for path, raw in live.items():
        assert offline[path].stat == raw.stat, path
        assert offline[path].data == raw.data, path


def test_cli_commands_read_files(tmp_path: Path) -> None:
    files = str(folder("zk395-snappy"))
    brokers = run("--from-files", files, "--kafka-root", "/kafka-prod", "kafka", "brokers", "-f", "json")
    assert brokers.exit_code == 0
    assert sorted(b["broker_id"] for b in json.loads(brokers.stdout)) == [101, 102, 103, 104]
    errors = run("--from-files", files, "errors", "inventory-sync", "-f", "json")
    assert errors.exit_code == 0 and json.loads(errors.stdout)
    health = run("--from-files", files, "--kafka-root", "/kafka-prod", "kafka", "health", "-f", "json")
    assert health.exit_code == 0
    storm_roots = run("--from-files", files, "storm", "roots", "-f", "json")
    assert storm_roots.exit_code == 0 and [r["root"] for r in json.loads(storm_roots.stdout)] == ["/storm"]
    kafka_roots = run("--from-files", files, "kafka", "roots", "-f", "json")
    assert kafka_roots.exit_code == 0 and [r["root"] for r in json.loads(kafka_roots.stdout)] == ["/kafka-prod"]
    # no --kafka-root: the walk finds /kafka-prod itself and decodes under it
    tree = {r["path"]: r for r in json.loads(run("--from-files", files, "tree", "/", "-f", "json").stdout)}
    assert tree["/kafka-prod/brokers/ids/101"]["decode_status"] == "decoded"
    assert tree["/kafka-prod/brokers/ids/101"]["summary"]
    assert run("--at-zxid", "5", "tree").exit_code == ExitCode.USAGE
    assert run("--from-files", files, "--at-zxid", "zz", "tree").exit_code == ExitCode.USAGE
    missing = run("--from-files", files, "--at-zxid", "0xffff", "tree")
    assert missing.exit_code == ExitCode.FILES and "before --at-zxid" in missing.stderr


def test_snapshot_from_files_records_its_source(tmp_path: Path) -> None:
    var = EXPECTED["variants"]["zk38-plain"]
    out = tmp_path / "out"
    result = run(
        "--from-files",
        str(folder("zk38-plain")),
        "--kafka-root",
        "/kafka-prod",
        "snapshot",
        str(out),
        "--cluster",
        "zk38",
    )
    assert result.exit_code == 0, result.stderr
    (manifest,) = [json.loads(p.read_text()) for p in (out / "_manifests").glob("*.json")]
    source = manifest["source"]["zookeeper_files"]
    assert Path(source["files"]["snapshot"]).name == var["newest_snapshot"]
    assert source["zxid_reached"] == var["final"]["zxid"] and source["digest_verified"] is True
    assert source["fuzzy_snapshot"] is var["snapshots"][var["newest_snapshot"]]["fuzzy"]  # known after the read
    assert manifest["znodes"] == var["final"]["znode_count"]
    assert manifest["tables"]["kafka_brokers"] == 4


def test_a_pre_36_close_session_deletes_what_the_session_owns() -> None:
    """Logs before 3.6 carry no paths2Delete: the session's ephemerals are found by owner."""
    from zkstorm.sources.files.replay import OWNER, PZXID, Overlay
    from zkstorm.sources.files.txnlog import CLOSE_SESSION, CloseSession, Txn

    session, other = 0x0100000000000007, 0x0100000000000008
    overlay = Overlay()
    stat = (
        1,
        5,
        5,
        0,
        0,
        0,
        0,
        0,
        0,
        5,
    )  # aclKey, czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid
    overlay.load("/brokers", None, stat)
    overlay.load("/brokers/1", b"a", (*stat[:8], session, 6))
    overlay.load("/brokers/2", b"b", (*stat[:8], other, 7))
    overlay.apply(Txn(0x20, session, 1, 1000, CLOSE_SESSION, CloseSession(None), None))
    assert overlay.nodes["/brokers/1"] is None
    assert overlay.nodes["/brokers/2"] is not None and overlay.nodes["/brokers/2"][OWNER] == other
    assert overlay.nodes["/brokers"][PZXID] == 0x20  # type: ignore[index]


# --- replay resolved node by node = replay of the whole tree at once --------------------------------------


def _whole_tree_replay(snapshot: Path, txns: list[Any]) -> dict[str, tuple[Any, ...]]:
    """The plain algorithm, as an oracle: every snapshot node in one overlay, every txn applied to it,
    then the nodes still reachable from the root."""
    from zkstorm.sources.files.replay import DATA, Overlay, parent_of

    overlay = Overlay()
    for path, data, fields, _ in file_records(SnapshotFile(str(snapshot))):
        overlay.load(path, data, fields)
    for txn in txns:
        overlay.apply(txn)

    def reachable(path: str) -> bool:
        while path != "/":
            if overlay.nodes.get(path) is None:
                return False
            path = parent_of(path)
        return True

    return {
        path: (state[1], state[2], state[3], state[4], state[5], state[7], state[9], state[DATA])
        for path, state in overlay.nodes.items()
        if state is not None and reachable(path)
    }


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("which", ["newest_snapshot", "older_snapshot"])
def test_node_by_node_replay_equals_whole_tree_replay_at_every_tenth_txn(variant: str, which: str) -> None:
    var = EXPECTED["variants"][variant]
    snapshot = folder(variant) / var[which]
    logs = [str(folder(variant) / name) for name in var["logs"]]
    with FileSource([str(snapshot), *logs]) as source:
        assert source._replay is not None
        txns = source._replay.txns
    assert txns
    for cut in [*range(0, len(txns), 10), len(txns)]:
        kept = txns[:cut]
        at = kept[-1].zxid if kept else int(var[which].split(".")[1], 16)
        with FileSource([str(snapshot), *logs], at_zxid=at) as source:
            got = {
                raw.path: (s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.aversion, s.pzxid, raw.data)
                for raw in source.walk("/")
                for s in [raw.stat]
            }
        assert got == _whole_tree_replay(snapshot, kept), (variant, which, cut)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pre_36_close_sessions_find_their_ephemerals_node_by_node(variant: str) -> None:
    """Before 3.6 a closeSession does not list the session's ephemerals: the logs are read as such a
    server wrote them (lists dropped), and the ephemerals must still go, as in the whole-tree replay."""
    from zkstorm.sources.files.replay import Replay
    from zkstorm.sources.files.txnlog import CloseSession

    var = EXPECTED["variants"][variant]
    snapshot = folder(variant) / var["older_snapshot"]
    logs = [str(folder(variant) / name) for name in var["logs"]]
    with FileSource([str(snapshot), *logs]) as source:
        assert source._replay is not None
        txns = [
            t._replace(body=CloseSession(None)) if isinstance(t.body, CloseSession) else t for t in source._replay.txns
        ]
        closing = [t for t in txns if isinstance(t.body, CloseSession)]
        source._replay = Replay(txns, source._replay.sessions)
        got = {raw.path: (raw.stat.mzxid, raw.stat.pzxid, raw.data) for raw in source.walk("/")}
    oracle = _whole_tree_replay(snapshot, txns)
    assert closing and got == {path: (v[1], v[6], v[7]) for path, v in oracle.items()}


def test_a_parent_whose_data_is_set_still_loses_an_ephemeral_child_to_a_pre_36_close(tmp_path: Path) -> None:
    """Nodes whose txns only set their data are settled without a replay; a session close that deletes
    one of their ephemeral children (pre-3.6: without naming it) changes them too. No fixture snapshot
    holds an ephemeral (their sessions closed before the servers stopped), so a leaf of one is made one."""
    import struct

    from zkstorm.sources.files.replay import Replay
    from zkstorm.sources.files.txnlog import CloseSession, SetData, Txn

    var = EXPECTED["variants"]["zk395-plain"]
    original = folder("zk395-plain") / var["newest_snapshot"]
    records = file_records(SnapshotFile(str(original)))
    paths = [path for path, *_ in records]
    child = next(p for p in paths if p.count("/") >= 2 and not any(q.startswith(p + "/") for q in paths))
    parent, owner = child.rsplit("/", 1)[0], 0x1234_5678

    def make_ephemeral(body: bytearray) -> None:
        name = child.encode()
        at = body.index(struct.pack(">i", len(name)) + name) + 4 + len(name)
        (size,) = struct.unpack_from(">i", body, at)
        struct.pack_into(">q", body, at + 4 + max(size, 0) + 8 + 44, owner)  # aclKey, 4 longs, 3 ints

    snapshot = tmp_path / var["newest_snapshot"]
    _rewrite_trailer(original, snapshot, (b"\x00" * 7 + b"\x2a",), patch=make_ephemeral)
    with FileSource([str(snapshot)]) as source:  # the snapshot alone, with these two txns as its log
        assert source.plan is not None and source._replay is not None
        last = source.plan.zxid
        txns = [
            Txn(last + 1, 7, 1, 1_900_000_000_000, 5, SetData(parent, b"set", 9), None),
            Txn(last + 2, owner, 2, 1_900_000_000_001, -11, CloseSession(None), None),
        ]
        source._replay = Replay(txns, source._replay.sessions)
        got = {raw.path: (raw.stat.mzxid, raw.stat.pzxid, raw.data) for raw in source.walk("/")}
    assert child not in got and got[parent] == (last + 1, last + 2, b"set")
    oracle = _whole_tree_replay(snapshot, txns)
    assert got == {path: (v[1], v[6], v[7]) for path, v in oracle.items()}


def _rewrite_trailer(
    snapshot: Path, target: Path, payloads: tuple[bytes, ...], patch: Callable[[bytearray], None] = lambda body: None
) -> None:
    """A plain snapshot with the trailer layout of another version: seal 1, then each payload sealed;
    ``patch`` changes the rest first (the seals are computed after it)."""
    import struct
    import zlib

    data = (snapshot).read_bytes()
    snap = SnapshotFile(str(snapshot))
    for _ in snap.tree():
        pass
    body = data[: snap.info.stream_bytes - (13 + sum(len(p) + 13 for p in _payloads_of(snap)))]
    out = bytearray(body)
    patch(out)
    for payload in (b"", *payloads):
        out += payload
        out += struct.pack(">q", zlib.adler32(bytes(out))) + b"\x00\x00\x00\x01/"
    target.write_bytes(bytes(out))


def _payloads_of(snap: SnapshotFile) -> list[bytes]:
    return [b"d" * 20] * (snap.info.digest is not None) + [b"z" * 8] * (snap.info.last_processed_zxid is not None)


@pytest.mark.parametrize(
    "payloads",
    [(), (b"\x00" * 7 + b"\x2a",), (b"\x00" * 7 + b"\x2a" + b"\x00\x00\x00\x02" + b"\x00" * 8,)],
    ids=["pre-3.6", "3.9-without-digest", "3.6-digest-only"],
)
def test_every_trailer_layout_verifies_without_reading_the_nodes(tmp_path: Path, payloads: tuple[bytes, ...]) -> None:
    var = EXPECTED["variants"]["zk395-plain"]
    target = tmp_path / var["newest_snapshot"]
    _rewrite_trailer(folder("zk395-plain") / var["newest_snapshot"], target, payloads)
    quick, full = SnapshotFile(str(target)), SnapshotFile(str(target))
    quick.verify()
    count = sum(1 for _ in full.tree())
    assert count == var["snapshots"][var["newest_snapshot"]]["znode_count"]
    for info in (quick.info, full.info):
        assert info.complete and info.damage is None and info.seals_verified == 1 + len(payloads)
    assert (quick.info.digest, quick.info.last_processed_zxid) == (full.info.digest, full.info.last_processed_zxid)
    assert quick.info.stream_bytes == full.info.stream_bytes == target.stat().st_size


@pytest.mark.parametrize(("variant", "name"), SNAPSHOTS)
def test_verifying_a_snapshot_agrees_with_reading_it_whole(variant: str, name: str) -> None:
    quick, full = SnapshotFile(str(folder(variant) / name)), SnapshotFile(str(folder(variant) / name))
    quick.verify()
    sum(1 for _ in full.tree())
    for key in ("complete", "damage", "seals_verified", "digest", "last_processed_zxid", "stream_bytes", "sessions"):
        assert getattr(quick.info, key) == getattr(full.info, key), key


def _reading_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "zkstorm-snapshot-read"]


@pytest.mark.parametrize(("variant", "name"), SNAPSHOTS)
def test_tiny_read_blocks_give_the_same_tree_and_seals(
    monkeypatch: pytest.MonkeyPatch, variant: str, name: str
) -> None:
    """The reading thread hands over blocks and the parser's window refills from them: with blocks
    and refills of a few bytes, every node and every seal crosses a boundary."""
    path = str(folder(variant) / name)
    whole = SnapshotFile(path)
    expected = list(whole.tree(digest=True))
    monkeypatch.setattr(snapfile, "PREFETCH_BLOCK", 7)
    monkeypatch.setattr(snapfile, "CHUNK", 5)
    small = SnapshotFile(path)
    assert list(small.tree(digest=True)) == expected
    for key in ("complete", "damage", "seals_verified", "digest", "last_processed_zxid", "stream_bytes", "nodes"):
        assert getattr(small.info, key) == getattr(whole.info, key), key


def test_a_read_stopped_early_stops_its_reading_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapfile, "PREFETCH_BLOCK", 64)  # the thread is still reading ahead at the first node
    monkeypatch.setattr(snapfile, "CHUNK", 64)
    var = EXPECTED["variants"]["zk395-plain"]
    tree = SnapshotFile(str(folder("zk395-plain") / var["newest_snapshot"])).tree()
    next(tree)
    assert len(_reading_threads()) == 1
    tree.close()
    assert _reading_threads() == []
    with FileSource([str(folder("zk395-plain"))]) as source:  # a get stops after its node
        assert source.get("/kafka-prod").path == "/kafka-prod"
    assert _reading_threads() == []


def test_a_read_error_in_the_reading_thread_is_a_files_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk error mid-file cannot be produced on demand, so the file's reads are made to fail after
    the first block: the error must reach the caller as one clear FilesError, not vanish in the thread."""

    def failing(f: Any, size: int) -> Any:
        yield f.read(100)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(snapfile, "_plain_chunks", failing)
    var = EXPECTED["variants"]["zk395-plain"]
    snap = SnapshotFile(str(folder("zk395-plain") / var["newest_snapshot"]))
    with pytest.raises(FilesError, match="cannot read: Input/output error"):
        list(snap.tree())
    assert _reading_threads() == []


# --- one pass per command -----------------------------------------------------------------------------

_OPENED: list[str] = []
_COUNTING: list[bool] = []


def _count_opens(event: str, args: tuple[Any, ...]) -> None:
    if _COUNTING and event == "open" and isinstance(args[0], str):
        _OPENED.append(args[0])


sys.addaudithook(_count_opens)  # Python's own audit events: every open() the command makes, for real


@pytest.mark.parametrize(
    "command",
    [
        ["storm", "workers", "fraud-scorer"],
        ["errors", "fraud-scorer"],
        ["storm", "assignment", "fraud-scorer"],
        ["storm", "nimbus"],
        ["--kafka-root", "/kafka-prod", "kafka", "controller"],
        ["--kafka-root", "/kafka-prod", "kafka", "brokers"],
        ["get", "/storm/storms/fraud-scorer-3-1751880000"],
        ["tree", "/storm", "--depth", "1", "-f", "jsonl"],
    ],
    ids=" ".join,
)
def test_a_command_opens_the_snapshot_twice_at_most(command: list[str]) -> None:
    """Choosing the snapshot checks its seals through one handle; the command's reads, however many
    (a topology lookup, then each subtree it shows), are served by one pass over it."""
    variant = "zk395-plain"
    snapshot = str(folder(variant) / EXPECTED["variants"][variant]["newest_snapshot"])
    _OPENED.clear()
    _COUNTING.append(True)
    try:
        result = run("--from-files", str(folder(variant)), *command)
    finally:
        _COUNTING.clear()
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    assert _OPENED.count(snapshot) <= 2, _OPENED.count(snapshot)


def test_a_fallback_warning_has_the_one_warning_style(tmp_path: Path) -> None:
    """A warning the files source logs reads as every other warning on stderr (``zkstorm: warning:``),
    without a logger's name. A process of its own: logging is configured once per process."""
    import os
    import subprocess
    import sys

    var = EXPECTED["variants"]["zk395-plain"]
    files = _copy("zk395-plain", tmp_path)
    newest = files / var["newest_snapshot"]
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    done = subprocess.run(
        [sys.executable, "-m", "zkstorm", "--from-files", str(files), "tree", "-f", "jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    skipped = [line for line in done.stderr.splitlines() if "skipped snapshot" in line]
    why = "does not end with the '/' seal (still being written, or cut short)"
    assert skipped == [f"zkstorm: warning: skipped snapshot {newest}: {why}"]
