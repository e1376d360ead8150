"""Capture what real ZooKeeper servers answer to the four-letter words and AdminServer commands zkstorm
reads, into tests/data/fourletter (the parsers' tests read these files, not text we wrote).

    python scripts/capture_fourletter.py [OUT]

It starts the ZooKeeper 3.9 jars that pyspark ships (Jetty 9.4 from Debian for the AdminServer): a
three-member ensemble on loopback (member 3, which an election among equals makes the leader, allowing
every word; member 2 too, with the AdminServer, and able to go read-only; member 1 allowing srvr only),
seeds a few znodes, records each member's answers, stops two members and records the one left (not
serving, then read-only), and a one-member server with a static server line (no client address in it,
as a static zoo.cfg gives it).
"""

from __future__ import annotations

import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from kazoo.client import KazooClient

from zkstorm.sandbox.server import ZkEnsemble, ZkServer, four_letter_word, free_port

ALL_WORDS = "srvr,mntr,conf,isro,ruok,envi"


def _admin(port: int, command: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/commands/{command}", timeout=10) as reply:
        return str(reply.read().decode())


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="zkstorm-capture-"))
    admin_port = free_port()
    ensemble = ZkEnsemble(
        base / "ensemble",
        member_config={
            1: {"4lw.commands.whitelist": "srvr"},
            2: {"4lw.commands.whitelist": ALL_WORDS},
            3: {"4lw.commands.whitelist": ALL_WORDS},
        },
        admin_ports={2: admin_port},
        jvm_options={2: ["-Dreadonlymode.enabled=true"]},
    ).start()
    written: list[str] = []

    def save(name: str, text: str) -> None:
        (out / name).write_text(text)
        written.append(name)

    try:
        client = KazooClient(ensemble.connect_string)
        client.start()
        for i in range(5):
            client.create(f"/captured/n{i}", b"x" * 100, makepath=True)
        client.create("/captured/e", b"", ephemeral=True)
        client.get("/captured/n0", watch=lambda event: None)
        if ensemble.leader() != 3:
            raise SystemExit(f"member {ensemble.leader()} leads, not 3: run again")
        for role, i in (("leader", 3), ("follower", 2), ("refused", 1)):
            for word in ("srvr", "mntr", "conf", "isro"):
                save(f"{word}-{role}.txt", four_letter_word(ensemble.members[i].port, word))
        for command in ("monitor", "server_stats", "voting_view", "configuration"):
            save(f"admin-{command}.json", _admin(admin_port, command))
        save("zookeeper-config.txt", client.get("/zookeeper/config")[0].decode())
        client.stop()
        client.close()
        ensemble.ensure([2])  # alone: not serving at first, read-only once readonlymode starts it
        save("srvr-not-serving.txt", four_letter_word(ensemble.members[2].port, "srvr"))
        save("mntr-not-serving.txt", four_letter_word(ensemble.members[2].port, "mntr"))
        deadline = time.monotonic() + 60
        while ensemble.members[2].mode() != "read-only" and time.monotonic() < deadline:
            time.sleep(0.2)
        for word in ("srvr", "mntr", "isro"):
            save(f"{word}-read-only.txt", four_letter_word(ensemble.members[2].port, word))
        save("admin-monitor-read-only.json", _admin(admin_port, "monitor"))
    finally:
        ensemble.stop()
    static = ZkServer(base / "static", extra_config={"4lw.commands.whitelist": ALL_WORDS}).start()
    try:
        save("conf-static.txt", four_letter_word(static.port, "conf"))
    finally:
        static.stop()
    print(f"wrote {len(written)} files to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent / "tests" / "data" / "fourletter")
