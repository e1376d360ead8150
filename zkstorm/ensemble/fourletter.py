"""ZooKeeper's four-letter words and its AdminServer's commands: sent, bounded, and parsed.

A four-letter word is four bytes written to a member's client port; the member answers in text and
closes the connection (``NIOServerCnxn.checkFourLetterWord``, ``NettyServerCnxn`` alike). A word the
member's ``4lw.commands.whitelist`` leaves out is answered with one line, ``mntr is not executed because
it is not in the whitelist.``, and a member that does not serve (electing a leader, cut off from its
quorum) answers ``AbstractFourLetterCommand.ZK_NOT_SERVING``. Since 3.5.3 only ``srvr`` is on by
default (``FourLetterCommands.isEnabled``: ``zkServer.sh`` needs it).

zkstorm sends only the words in ``READ_WORDS``: figures and configuration, never the words that list
every watch, session or connection of a big ensemble (``wchp``, ``wchc``, ``dump``, ``cons``) nor those
that reset or change anything (``crst``, ``srst``, ``stmk``). Where ``mntr`` is not allowed, the same
figures come from the AdminServer's ``/commands/monitor`` (``admin/Commands.java`` ``MonitorCommand``: the
same keys, as JSON), read with a plain HTTP GET.

The parsers are pure functions over the text a real server printed (``tests/data/fourletter``).
"""

from __future__ import annotations

import json
import math
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..units import LONG_MAX  # ZooKeeper's counters, ids and zxids are Java longs; Parquet's int64 the same

# The words zkstorm may send: read-only, and each answered in a few kilobytes whatever the ensemble holds.
READ_WORDS = frozenset({"srvr", "mntr", "conf", "isro"})
# ``AbstractFourLetterCommand.ZK_NOT_SERVING``
NOT_SERVING = "This ZooKeeper instance is not currently serving requests"
_NOT_WHITELISTED = re.compile(r"^(\w{4}) is not executed because it is not in the whitelist\.")
# The most read from one answer: mntr of 3.9 prints some 500 lines (about 20 KB); a membership of a hundred
# servers a few KB. More is not a ZooKeeper answer (a port that streams something else).
MAX_ANSWER_BYTES = 1 << 20


class WordRefused(Exception):
    """The member answered that the word is not in its ``4lw.commands.whitelist``."""


class NotServing(Exception):
    """The member runs but does not serve clients: it is electing a leader or cut off from its quorum."""


def ask(
    host: str, port: int, word: str, *, deadline: float, wrap: Callable[[socket.socket], socket.socket] | None = None
) -> str:
    """Send ``word`` to ``host:port`` and read the answer until the member closes the connection, all of
    it by ``deadline`` (``time.monotonic``). ``wrap`` turns the socket into a TLS one (a secure client
    port). Raises ``OSError`` (unreachable, refused, timed out, an answer over ``MAX_ANSWER_BYTES``),
    ``WordRefused`` or ``NotServing``."""
    if word not in READ_WORDS:
        raise ValueError(f"{word!r} is not a read-only four-letter word zkstorm sends")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("no time left")
    with socket.create_connection((host, port), timeout=remaining) as raw:
        sock = wrap(raw) if wrap is not None else raw
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(word.encode("ascii"))
        chunks: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = sock.recv(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise OSError(f"answer to {word} longer than {MAX_ANSWER_BYTES:,} bytes: not ZooKeeper")
            chunks.append(chunk)
    return checked(word, b"".join(chunks).decode("utf-8", "replace"))


def checked(word: str, text: str) -> str:
    """``text`` as the answer to ``word``, or the refusal it is (``WordRefused``, ``NotServing``); an empty
    answer is no answer (``OSError``): every word prints something."""
    if not text.strip():
        raise OSError(f"no answer to {word}: not a ZooKeeper client port, or one that needs TLS (--tls)")
    first = text.strip().splitlines()[0]
    if _NOT_WHITELISTED.match(first):
        raise WordRefused(word)
    if first == NOT_SERVING or (word == "isro" and first == "null"):
        raise NotServing(word)
    return text


# --- srvr ----------------------------------------------------------------------------------------------


@dataclass
class Srvr:
    """What ``srvr`` prints (``StatCommand`` with ``ServerStats.toString``)."""

    version: str | None = None  # "3.9.3" (the build's id and date are cut off)
    read_only: bool = False  # "READ-ONLY mode; serving only read-only clients"
    latency_min_ms: int | None = None
    latency_avg_ms: float | None = None
    latency_max_ms: int | None = None
    received: int | None = None
    sent: int | None = None
    connections: int | None = None
    outstanding: int | None = None
    zxid: int | None = None
    mode: str | None = None  # leader, follower, observer, standalone, read-only
    node_count: int | None = None
    odd: list[str] = field(default_factory=list)  # figures no counter can hold, as printed (``odd_figure``)


def short_version(text: str) -> str:
    """``3.9.3-c26634f…, built on 2024-10-17 23:21 UTC`` → ``3.9.3``."""
    return re.split(r"[-,\s]", text.strip(), maxsplit=1)[0]


def parse_srvr(text: str) -> Srvr:
    out = Srvr()

    def count(key: str, value: str, base: int = 10) -> int | None:
        return figure(out.odd, key, value, lambda text: counter(text, base))  # type: ignore[no-any-return]

    for line in text.splitlines():
        key, sep, value = line.partition(":")
        value = value.strip()
        if line.startswith("READ-ONLY mode"):
            out.read_only = True
        elif not sep:
            continue
        elif key == "Zookeeper version":
            out.version = short_version(value)
        elif key == "Latency min/avg/max":
            low, avg, high = [*value.split("/"), "", "", ""][:3]
            out.latency_min_ms, out.latency_max_ms = count("min latency", low), count("max latency", high)
            out.latency_avg_ms = figure(out.odd, "avg latency", avg, measure)
        elif key == "Received":
            out.received = count(key, value)
        elif key == "Sent":
            out.sent = count(key, value)
        elif key == "Connections":
            out.connections = count(key, value)
        elif key == "Outstanding":
            out.outstanding = count(key, value)
        elif key == "Zxid":
            out.zxid = count(key, value, 16) if value.lower().startswith("0x") else count(key, value)
        elif key == "Mode":
            out.mode = value
        elif key == "Node count":
            out.node_count = count(key, value)
    return out


# --- mntr and the AdminServer's monitor ---------------------------------------------------------------


def parse_mntr(text: str) -> dict[str, str]:
    """``zk_key<TAB>value`` lines (``MonitorCommand.output``) → key (without ``zk_``) → value as printed."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep and key.startswith("zk_"):
            values[key[3:]] = value.strip()
    return values


def parse_admin(text: str) -> dict[str, Any]:
    """An AdminServer answer (``CommandResponse``: a JSON object with ``command`` and ``error``) → its
    fields; ``NotServing`` for a member that does not serve, ``ValueError`` when it is not an answer
    (another web server on the port) or says it failed."""
    try:
        body = json.loads(text)
    except ValueError:
        raise ValueError("not an AdminServer answer (not JSON)") from None
    if not isinstance(body, dict) or "command" not in body:
        raise ValueError("not an AdminServer answer")
    error = str(body.get("error") or "")
    if error.startswith(NOT_SERVING):
        raise NotServing(str(body["command"]))
    if error:
        raise ValueError(f"the AdminServer answered: {error}")
    return body


def monitor_values(body: dict[str, Any]) -> dict[str, str]:
    """The AdminServer's ``monitor`` answer as ``parse_mntr`` gives the same figures (text values)."""
    return {k: _text(v) for k, v in body.items() if k not in ("command", "error") and not isinstance(v, dict | list)}


def admin_get(host: str, port: int, command: str, *, deadline: float) -> dict[str, Any]:
    """GET ``/commands/<command>`` of a member's AdminServer (``JettyAdminServer``, plain HTTP), bounded by
    ``deadline`` and ``MAX_ANSWER_BYTES``. The AdminServer answers ``This ZooKeeper instance is not
    currently serving requests`` in its ``error`` for a member that does not serve (``Commands.runCommand``)."""
    import http.client

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("no time left")
    connection = http.client.HTTPConnection(host, port, timeout=remaining)
    try:
        connection.request("GET", f"/commands/{command}", headers={"Accept": "application/json"})
        response = connection.getresponse()
        body = response.read(MAX_ANSWER_BYTES + 1)
    except http.client.HTTPException as exc:
        raise OSError(f"not an AdminServer ({type(exc).__name__})") from None
    finally:
        connection.close()
    if len(body) > MAX_ANSWER_BYTES:
        raise OSError(f"answer longer than {MAX_ANSWER_BYTES:,} bytes: not an AdminServer")
    if response.status != 200:
        raise OSError(f"HTTP {response.status} from /commands/{command}")
    return parse_admin(body.decode("utf-8", "replace"))


# --- conf and the ensemble's configuration ---------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """One ``server.N`` line of the ensemble's configuration (``QuorumPeer.QuorumServer.toString``)."""

    server_id: int
    host: str  # of its quorum address (the first, where it has several)
    quorum_port: int
    election_port: int
    learner_type: str  # participant, observer
    client_host: str | None  # None: the line names no client address (a static configuration's own)
    client_port: int | None


@dataclass
class Conf:
    """What ``conf`` prints (``ZooKeeperServer.dumpConf``, ``QuorumZooKeeperServer.dumpConf``): settings,
    then (3.5+) ``membership:`` and the ``server.N`` lines with the configuration's ``version``."""

    settings: dict[str, str] = field(default_factory=dict)
    peers: list[Peer] = field(default_factory=list)
    config_version: int | None = None

    @property
    def server_id(self) -> int | None:
        return _int(self.settings.get("serverId", ""))

    @property
    def client_port(self) -> int | None:
        return _int(self.settings.get("clientPort", ""))


def parse_conf(text: str) -> Conf:
    conf = Conf()
    head, _, membership = text.partition("membership:")
    for line in head.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            conf.settings[key.strip()] = value.strip()
    conf.peers, conf.config_version = parse_config(membership)
    return conf


def parse_config(text: str) -> tuple[list[Peer], int | None]:
    """The ``server.N=…`` lines and ``version=`` (hex) of a configuration as ``QuorumMaj.toString`` writes
    it: in ``conf`` after ``membership:``, and in ``/zookeeper/config``. Lines of other forms (a
    hierarchical quorum's ``group.N``/``weight.N``) are not servers; a line that does not parse is skipped."""
    peers = []
    version = None
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep:
            continue
        if key == "version":
            version = _int(value.strip(), 16)
        elif key.startswith("server.") and _int(key[7:]) is not None:
            peer = parse_server(_int(key[7:]) or 0, value.strip())
            if peer is not None:
                peers.append(peer)
    return sorted(peers, key=lambda p: p.server_id), version


def parse_server(server_id: int, spec: str) -> Peer | None:
    """``host:quorum:election[:type][|host:…][;[clientHost:]clientPort[;secure]]``
    (``QuorumServer.initializeWithAddressString``); None when it is not of that form."""
    server_part, _, client_part = spec.partition(";")
    first = server_part.split("|")[0]
    parts = _host_and_ports(first)
    if parts is None or len(parts) not in (3, 4):
        return None
    host, quorum, election = parts[0], _int(parts[1], most=PORT_MAX), _int(parts[2], most=PORT_MAX)
    if quorum is None or election is None:
        return None
    learner_type = parts[3] if len(parts) == 4 else "participant"
    client_host: str | None = None
    client_port: int | None = None
    client = client_part.split(";")[0].strip()
    if client:
        client_parts = _host_and_ports(client)
        if client_parts is None or len(client_parts) > 2:
            return None
        client_port = _int(client_parts[-1], most=PORT_MAX)
        if client_port is None:
            return None
        client_host = client_parts[0] if len(client_parts) == 2 else "0.0.0.0"
    return Peer(server_id, host, quorum, election, learner_type, client_host, client_port)


def _host_and_ports(text: str) -> list[str] | None:
    """``ConfigUtils.getHostAndPort``: ``[v6]:p:p`` or ``host:p:p``, split at the colons after the host."""
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        rest = text[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        return [text[1:end], *([p for p in rest[1:].split(":")] if rest else [])]
    return text.split(":")


def voting_view_peers(body: dict[str, Any]) -> list[Peer]:
    """The AdminServer's ``voting_view`` (``VotingViewCommand``: the voting members with their client
    addresses) as configuration lines."""
    peers = []
    for sid, view in (body.get("current_config") or {}).items():
        server_id = _int(str(sid))
        if server_id is None or not isinstance(view, dict):
            continue
        servers = view.get("server_addresses") or [""]
        elections = view.get("election_addresses") or [""]
        server = _host_and_ports(str(servers[0])) or [""]
        election = _host_and_ports(str(elections[0])) or [""]
        client = _host_and_ports(str(view.get("client_address") or ""))
        client_port = _int(client[-1], most=PORT_MAX) if client and len(client) == 2 else None
        peers.append(
            Peer(
                server_id,
                server[0],
                _int(server[-1], most=PORT_MAX) or 0,
                _int(election[-1], most=PORT_MAX) or 0,
                str(view.get("learner_type") or "participant"),
                client[0] if client_port is not None and client else None,
                client_port,
            )
        )
    return sorted(peers, key=lambda p: p.server_id)


# --- numbers a peer printed --------------------------------------------------------------------------------
# A member's answer is a peer's text: a broken or hostile member may print 1e400, NaN, -5 or a number of
# ten thousand digits where a count belongs. None of them may end a command (``int(float("1e400"))`` is an
# OverflowError), nor reach a record as a number no counter holds (Parquet's int64 refuses it, and the
# nightly snapshot with it). A figure out of range is None, and, where it is one of a member's figures,
# kept as printed in the member's ``odd_figures`` (the ``member_odd_figures`` finding).

PORT_MAX = 65535


class OddFigure(ValueError):
    """A figure a member printed that no counter can hold: not a number, not whole, negative, too large."""


def counter(text: str | None, base: int = 10) -> int | None:
    """A count, zxid or id as a member printed it: a whole number in 0..LONG_MAX (``12``, ``12.0``, ``0x1f``);
    None when it printed nothing. Raises ``OddFigure`` for anything else."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = int(text, base)
    except ValueError:
        number = measure(text)  # "12.0": a count written as a real number (the AdminServer's JSON)
        if number is None or not number.is_integer():
            raise OddFigure(text) from None
        value = int(number)
    if not 0 <= value <= LONG_MAX:
        raise OddFigure(text)
    return value


def measure(text: str | None) -> float | None:
    """A measurement (an average latency): a finite real number ≥ 0; None when none was printed; raises
    ``OddFigure`` for NaN, infinity, a negative or a word."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise OddFigure(text) from None
    if not math.isfinite(value) or value < 0:
        raise OddFigure(text)
    return value


def figure(odd: list[str], key: str, text: str | None, read: Callable[[str | None], Any]) -> Any:
    """``read(text)``, or None with ``key=text`` (cut to a line) added to ``odd`` when it is an odd figure."""
    try:
        return read(text)
    except OddFigure:
        shown = (text or "").strip()
        odd.append(f"{key}={shown if len(shown) <= 24 else shown[:23] + '…'}")
        return None


def _int(text: str, base: int = 10, *, most: int = LONG_MAX) -> int | None:
    """A number in a peer's settings or configuration (a port, a server id): None unless whole and in
    0..``most``."""
    try:
        value = counter(text, base)
    except OddFigure:
        return None
    return value if value is not None and value <= most else None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
