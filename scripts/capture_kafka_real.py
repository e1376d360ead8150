#!/usr/bin/env python3
"""Capture again the real Kafka znodes kept in tests/data/real (see its README.md).

Runs the real-cluster tests (tests/real: a three-broker cluster of each pinned Kafka version under a
chroot of the suite's test ZooKeeper, driven through Kafka's own tools) with ``ZKSTORM_REAL_CAPTURE`` set,
so that every moment they compare is also written: the znodes as ZooKeeper held them and Kafka's own
answer (AdminClient, kafka-topics --describe) read at the same moment. Needs Java 17+ and, once, Maven
(``make jars``).

    .venv/bin/python scripts/capture_kafka_real.py            # every version
    .venv/bin/python scripts/capture_kafka_real.py 2.8.2      # one
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "real"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from tests.real.kafka import VERSIONS

    versions = argv or sorted(VERSIONS, reverse=True)
    unknown = [v for v in versions if v not in VERSIONS]
    if unknown:
        print(f"unknown Kafka versions {unknown}: {sorted(VERSIONS)}", file=sys.stderr)
        return 2
    subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "jars"], check=True)
    for version in versions:
        shutil.rmtree(DATA / f"kafka-{version}", ignore_errors=True)
    selected = " or ".join(f"kafka-{v}" for v in versions)
    env = {**os.environ, "ZKSTORM_REAL_CAPTURE": str(DATA)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "real_cluster", "-k", selected]
    result = subprocess.run([*command, str(REPO / "tests" / "real")], cwd=REPO, env=env)
    for version in versions:
        folder = DATA / f"kafka-{version}"
        moments = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.exists() else []
        print(f"{folder.relative_to(REPO)}: {len(moments)} moments {moments}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
