"""``OUT/_lock`` (``zkstorm.export.lock``): never left empty by a full disk, never a reason for every later night
to fail, still respected while its holder may be writing. Through the CLI, on real filesystems."""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from tests.conftest import Chroot, load_cluster
from tests.faults import REASON, small_disk, zkstorm
from zkstorm.errors import ExitCode
from zkstorm.export.parquet import Snapshot


@pytest.fixture
def kafka(writer: KazooClient, zk_root: Chroot) -> Chroot:
    load_cluster(writer, zk_root.path, "kafka", "cluster-08-root")
    return zk_root


def _lock(out: Path, body: bytes, *, age_secs: float) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lock = out / "_lock"
    lock.write_bytes(body)
    then = time.time() - age_secs
    os.utime(lock, (then, then))
    return lock


def _committed(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "_manifests").glob("*.json"))


def test_a_full_disk_at_the_lock_stops_no_later_night(kafka: Chroot, tmp_path: Path) -> None:
    """The disk is full when the lock is taken: that night fails in one line naming the lock, and leaves
    no lock (an empty one made every later night exit 1 "pid None on None")."""
    with small_disk(tmp_path / "disk", 4 << 20) as disk:
        out = disk.path / "out"
        out.mkdir()
        disk.fill(leave=0)
        night = disk.zkstorm("--zk", kafka.zk, "snapshot", str(out), "--cluster", "c")
        assert (night.returncode, night.stderr) == (1, f"zkstorm: cannot write {out}/_lock: {REASON[disk.mode]}\n")
        assert sorted(os.listdir(out)) == []
        disk.free()
        nextnight = disk.zkstorm("--zk", kafka.zk, "snapshot", str(out), "--cluster", "c")
        assert nextnight.returncode == 0, nextnight.stderr
        assert len(_committed(out)) == 1 and not (out / "_lock").exists()


def test_a_lock_whose_owner_cannot_be_read_is_judged_by_its_age(kafka: Chroot, tmp_path: Path) -> None:
    """An empty or cut-short lock (an earlier version's on a full disk): respected for a minute, in case a
    writer is between creating and filling it, then taken over."""
    out = tmp_path / "out"
    lock = _lock(out, b'{"pid": 12', age_secs=5)
    fresh = zkstorm("--zk", kafka.zk, "snapshot", str(out))
    assert fresh.returncode == ExitCode.ERROR and len(fresh.stderr.splitlines()) == 1
    assert f"{lock} is " in fresh.stderr
    assert f"s old and its owner cannot be read yet; if no snapshot is running, delete {lock}" in fresh.stderr
    _lock(out, b"", age_secs=600)
    old = zkstorm("--zk", kafka.zk, "snapshot", str(out))
    assert old.returncode == 0, old.stderr
    assert f"taking over the snapshot lock {lock}: its owner cannot be read" in old.stderr
    assert len(_committed(out)) == 1 and not lock.exists()


def test_a_lock_of_another_host_is_respected_until_older_than_the_bound(kafka: Chroot, tmp_path: Path) -> None:
    """Its process cannot be asked: it holds for a snapshot's longest plausible run, six hours unless
    --lock-stale-after says otherwise."""
    out = tmp_path / "out"
    owner = json.dumps({"pid": 4242, "host": "zk-batch-02", "since": time.time() - 3600}).encode()
    lock = _lock(out, owner, age_secs=3600)
    held = zkstorm("--zk", kafka.zk, "snapshot", str(out))
    assert held.returncode == ExitCode.ERROR and len(held.stderr.splitlines()) == 1
    assert f"{lock} is held by pid 4242 on zk-batch-02, for 1h; it is " in held.stderr
    assert f"taken over once older than 6h (--lock-stale-after); if that run is gone, delete {lock}" in held.stderr
    shorter = zkstorm("--zk", kafka.zk, "snapshot", str(out), "--lock-stale-after", "30m")
    assert shorter.returncode == 0, shorter.stderr
    assert "pid 4242 on zk-batch-02 took it 1h ago, longer than a snapshot runs" in shorter.stderr
    _lock(out, owner, age_secs=7 * 3600)
    old = zkstorm("--zk", kafka.zk, "snapshot", str(out), "--snapshot-id", "second")
    assert old.returncode == 0, old.stderr
    assert len(_committed(out)) == 2 and not lock.exists()


def test_a_lock_of_this_host_is_judged_by_its_process_and_boot(kafka: Chroot, tmp_path: Path) -> None:
    """A live process keeps its lock however old; the same pid from before the host restarted does not."""
    out = tmp_path / "out"
    host, boot = socket.gethostname(), Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    live = {"pid": os.getpid(), "host": host, "boot": boot, "since": 0}
    lock = _lock(out, json.dumps(live).encode(), age_secs=30 * 86400)
    held = zkstorm("--zk", kafka.zk, "snapshot", str(out))
    assert held.returncode == ExitCode.ERROR and len(held.stderr.splitlines()) == 1
    assert f"{lock} is held by pid {os.getpid()} on this host, for 30d; wait for it to end" in held.stderr
    _lock(out, json.dumps({**live, "boot": "before-the-restart"}).encode(), age_secs=60)
    rebooted = zkstorm("--zk", kafka.zk, "snapshot", str(out))
    assert rebooted.returncode == 0, rebooted.stderr
    assert f"pid {os.getpid()} took it before this host restarted" in rebooted.stderr


def test_a_run_leaves_in_place_a_lock_another_run_took_over(tmp_path: Path) -> None:
    """Past the bound another host takes the lock over; the run it took it from, ending, must not remove
    the new holder's lock."""
    out = tmp_path / "out"
    at = datetime(2026, 3, 1, tzinfo=UTC)
    other = json.dumps({"pid": 7, "host": "zk-batch-02", "since": time.time()})
    with Snapshot(str(out), snapshot_id="s", cluster="c", snapshot_time=at) as snap:
        (out / "_lock").write_text(other)
        snap.commit({})
    assert (out / "_lock").read_text() == other


def test_a_run_whose_lock_file_the_holder_cleans_up_is_told_the_lock_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs at once: the one holding the lock removes what a stopped run left (its roll-back, under the
    lock), and a lock's temporary file is among those; the other run's can be removed between its write
    and its link. That run is told another snapshot holds the lock, not "cannot write OUT/_lock: No such
    file or directory". The holder's real roll-back runs inside the second run's link: the interleaving a
    real race of two processes gives only now and then (the suite met it under load), made certain."""
    import pyarrow.fs as pafs

    from zkstorm.errors import SnapshotError
    from zkstorm.export import lock as lock_module
    from zkstorm.export.parquet import roll_back_uncommitted

    out = tmp_path / "out"
    out.mkdir()
    filesystem = pafs.LocalFileSystem()
    holder = lock_module.Lock(filesystem, f"{out}/_lock", local=True)
    holder.acquire()
    link = os.link

    def link_after_the_holders_roll_back(source: str, target: str) -> None:
        roll_back_uncommitted(filesystem, str(out))
        link(source, target)

    monkeypatch.setattr(lock_module.os, "link", link_after_the_holders_roll_back)
    try:
        with pytest.raises(SnapshotError, match="another snapshot is being written to this OUT"):
            lock_module.Lock(filesystem, f"{out}/_lock", local=True).acquire()
    finally:
        monkeypatch.undo()
        holder.release()
    assert not (out / "_lock").exists()
