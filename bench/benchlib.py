"""What every benchmark script shares: results as JSON, the sequential kazoo walk every benchmark compares
with, a tree of real-format payloads built from the fixture clusters, the server's CPU time, and a cold
zkstorm command timed (``launched``) or profiled (``profiled``) in a process of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def write_result(path: Path | None, result: Any) -> None:
    """Save a benchmark's result as JSON (``--json FILE``), creating the folder, with the commit it measured
    and when (``read_result`` gives both back): a summary printed later must not credit a newer commit."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    measured = {"commit": measured_commit(), "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.write_text(json.dumps({"measured": measured, "result": result}, indent=2) + "\n")


def read_result(path: Path) -> tuple[Any, dict[str, str]]:
    """(result, {"commit", "finished"}) of a ``write_result`` file; a file from before they were recorded
    gives its result and "unknown" for both."""
    saved = json.loads(path.read_text())
    if isinstance(saved, dict) and set(saved) == {"measured", "result"}:
        return saved["result"], saved["measured"]
    return saved, {"commit": "unknown", "finished": "unknown"}


def measured_commit() -> str:
    """The checkout's commit, short, with ``+changes`` when its tracked files differ from it."""
    import subprocess

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def sequential_kazoo_walk(connect: str, limit: int | None = None) -> tuple[int, float]:
    """(znodes, seconds) of the plain client walk every benchmark compares with: one synchronous
    ``get`` and one ``get_children`` per znode, depth first, stopped after ``limit`` znodes if given
    (the whole of a large tree would take minutes; a few thousand znodes give the rate)."""
    from kazoo.client import KazooClient

    client = KazooClient(connect, timeout=30)
    client.start(timeout=30)
    count, stack = 0, ["/"]
    started = time.perf_counter()
    try:
        while stack and (limit is None or count < limit):
            path = stack.pop()
            client.get(path)
            count += 1
            stack.extend(f"{path.rstrip('/')}/{name}" for name in client.get_children(path))
    finally:
        client.stop()
        client.close()
    return count, time.perf_counter() - started


# --- a tree of real-format payloads ---------------------------------------------------------------------

# Fixture clusters (tests/data/fixtures) and where each is put: the exact znode bytes Storm 2.x, 1.x,
# 0.10 (gzip, zstd, raw Thrift) and 0.9 (Java-serialized Clojure) and Kafka 0.8 to 3.x write. The corrupt
# Kafka cluster comes once, under its own chroot, so a walk also meets the failures a real tree has.
REAL_FORMAT_CLUSTERS = (
    ("storm", "storm2", ""),
    ("storm", "storm1", ""),
    ("storm", "encodings", ""),
    ("storm", "legacy09", ""),
    ("kafka", "cluster-08-root", ""),
    ("kafka", "cluster-2x-chroot", ""),
    ("kafka", "migrated-kraft", ""),
    ("kafka", "corrupt", "/broken"),
)
_TOPOLOGY_ID = re.compile(r"^(.*)-(\d+)-(\d+)$")


def suite_module(name: str) -> Any:
    """A module of the test suite's (``tests.fixtures``, ``tests.real.hadoop``): a benchmark uses the suite's
    parts, not copies of them."""
    import importlib

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module(name)


def real_format_nodes(znodes: int = 35_000) -> list[Any]:
    """``SeedNode``s (parents first) of a tree of about ``znodes`` znodes whose payloads are all real:
    every fixture cluster once, then copies of what belongs to one topology (every subtree keyed by its
    id: assignment, base, heartbeats, errors, blobs…) or one Kafka topic (the topic, its partitions and
    states, its config, consumer offsets) under new ids, until the tree has ``znodes`` znodes. Copies
    keep the bytes: a copied topology has the original's name, a copied topic the original's payloads."""
    from zkstorm.sandbox.synth import SeedNode

    fixtures = suite_module("tests.fixtures")
    base: list[Any] = []
    replicable: dict[str, list[tuple[Any, str, dict[str, str]]]] = {"storm": [], "kafka": []}
    for system, name, chroot in REAL_FORMAT_CLUSTERS:
        nodes = [n for n in fixtures.manifest(system, name) if n.path not in fixtures.SERVER_NODES]
        if chroot:
            base.append(SeedNode(chroot))
        ids = _ids(system, [n.path for n in nodes]) if not chroot else {}
        for node in nodes:
            base.append(SeedNode(chroot + node.path, node.data or b"", ephemeral=node.ephemeral))
            if ids and _keyed(system, node.path, ids):
                replicable[system].append((node, chroot, ids))
    out = list(base)
    # as many Storm as Kafka znodes: each system's copies fill half of what the fixtures leave
    share = max(0, znodes - len(base) - 3) / 2  # the server's own 3 znodes count too
    for nodes in replicable.values():
        for k in range(1, round(share / max(1, len(nodes))) + 1):
            for node, chroot, ids in nodes:
                path = _renamed(node.path, ids, k)
                out.append(SeedNode(chroot + path, node.data or b"", ephemeral=node.ephemeral))
    return out


def _ids(system: str, paths: list[str]) -> dict[str, str]:
    """The ids a copy renames: Storm topology ids (children of ``storms``/``assignments``), Kafka topics
    (children of ``brokers/topics``), each to a format string taking the copy number."""
    ids: dict[str, str] = {}
    for path in paths:
        parent, _, name = path.rpartition("/")
        if system == "storm" and parent.endswith(("/storms", "/assignments")):
            match = _TOPOLOGY_ID.match(name)
            if match:  # name-counter-launch: a copy is another launch of the same name
                ids[name] = f"{match.group(1)}-r{{k}}-{match.group(2)}-{match.group(3)}"
        elif system == "kafka" and parent.endswith("/brokers/topics"):
            ids[name] = f"{name}.r{{k}}"
    return ids


def _keyed(system: str, path: str, ids: dict[str, str]) -> bool:
    if system == "storm":
        return any(i in path for i in ids)
    return any(segment in ids for segment in path.split("/"))


def _renamed(path: str, ids: dict[str, str], k: int) -> str:
    segments = path.split("/")
    for i, segment in enumerate(segments):
        for old, new in ids.items():
            if old in segment:
                segments[i] = segment.replace(old, new.format(k=k))
                break
    return "/".join(segments)


# --- the server's CPU --------------------------------------------------------------------------------


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc/<pid>/stat`` utime and stime)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state is fields[0]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command_env() -> dict[str, str]:
    """The environment a command runs in: this checkout first on the path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


# Runs a command, stdout to /dev/null, and prints its wall seconds, peak RSS (KiB, wait4), CPU seconds (user
# + system, every thread: a JVM's compiler and collector threads count) and exit code. The command is
# started from this small process, not from the benchmark's: Linux keeps a process's largest RSS across fork
# and exec, so a command forked from the benchmark would report the benchmark's own peak when that is larger.
_LAUNCH = """
import os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
cpu = usage.ru_utime + usage.ru_stime
print(time.perf_counter() - started, usage.ru_maxrss, cpu, os.waitstatus_to_exitcode(status))
"""


def launched(command: list[str]) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in KiB, CPU seconds) of ``command`` run cold, its output to /dev/null; a
    command that fails ends the benchmark with its stderr."""
    done = subprocess.run([sys.executable, "-c", _LAUNCH, *command], capture_output=True, env=command_env(), text=True)
    figures = done.stdout.split()
    if done.returncode != 0 or len(figures) != 4 or figures[3] != "0":
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return float(figures[0]), int(figures[1]), float(figures[2])


def profiled(args: list[str], out: Path, top: int) -> None:
    """One cold ``zkstorm ARGS`` under cProfile (in the command's own process, its output to /dev/null):
    its wall time, and the ``top`` functions by their own time and by their cumulative time."""
    import pstats

    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "zkstorm", *args]
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=command_env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()}")
    print(f"profiled: {' '.join(command)} > /dev/null: {time.perf_counter() - started:.1f} s (with cProfile)")
    for order in ("tottime", "cumulative"):
        print(f"top {top} by {order}:")
        pstats.Stats(str(out)).strip_dirs().sort_stats(order).print_stats(top)
