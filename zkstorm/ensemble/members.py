"""The members of an ensemble: the hosts of ``--zk`` and the peers its own configuration names, each read
with its four-letter words (``srvr``, ``mntr``, ``conf``), in parallel and within ``--timeout``.

Round one reads the ``--zk`` hosts. The ensemble's configuration (its ``server.N`` lines) then comes from
the newest ``conf`` among them, else from an AdminServer's ``voting_view``, else from the
``/zookeeper/config`` znode through a read-only session (only when some member serves, since a session
needs one). Round two reads the peers the configuration names that ``--zk`` did not. A member's client
address is the one its ``server.N`` line gives (3.5+ dynamic configuration, ``;host:port``); a static
configuration names none, and then the client port of the member that reported the configuration is
taken as every member's (ensembles use one client port on all hosts, 2181 by default).

Nothing here raises for a member: an unreachable one, one that does not serve, one whose words are not
whitelisted is a ``ZkMember`` saying so.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..records import ZkMember
from .fourletter import (
    LONG_MAX,
    Conf,
    NotServing,
    Peer,
    Srvr,
    WordRefused,
    admin_get,
    ask,
    counter,
    figure,
    measure,
    monitor_values,
    parse_conf,
    parse_config,
    parse_mntr,
    parse_srvr,
    short_version,
    voting_view_peers,
)

log = logging.getLogger(__name__)

DEFAULT_ADMIN_PORT = 8080  # admin.serverPort's default (JettyAdminServer.DEFAULT_PORT)
SERVING_MODES = frozenset({"leader", "follower", "observer", "standalone", "read-only"})
LEADING_MODES = frozenset({"leader", "standalone"})
WHITELIST_ADVICE = (
    "add {words} to 4lw.commands.whitelist in its zoo.cfg (4lw.commands.whitelist=srvr,mntr,conf,isro) and "
    "restart it, or enable its AdminServer (admin.enableServer=true), which zkstorm reads on --admin-port"
)
_MAX_READERS = 32  # members read at once


@dataclass
class Reading:
    """What one member answered."""

    host: str
    port: int | None  # None: a peer whose client port nothing names (it is not read)
    named_in: str  # zk or config
    srvr: Srvr | None = None
    mntr: dict[str, str] | None = None
    conf: Conf | None = None
    admin_peers: list[Peer] = field(default_factory=list)
    admin_server_id: int | None = None
    admin_zxid: int | None = None
    isro: str | None = None
    refused: list[str] = field(default_factory=list)  # words not whitelisted
    unreachable: str | None = None
    not_serving: bool = False
    admin_used: bool = False
    admin_error: str | None = None

    @property
    def server_id(self) -> int | None:
        return (self.conf.server_id if self.conf else None) or self.admin_server_id


@dataclass(frozen=True)
class ReadOptions:
    """How members are read: the AdminServer's port (None: never; read over plain HTTP), and a TLS wrapper
    for the sockets of a secure client port."""

    admin_port: int | None = DEFAULT_ADMIN_PORT
    wrap: Callable[[socket.socket], socket.socket] | None = None


def read_member(host: str, port: int, named_in: str, *, deadline: float, options: ReadOptions) -> Reading:
    """One member's ``srvr``, ``mntr`` and ``conf`` (the AdminServer for those not whitelisted), by
    ``deadline``. A member that does not answer ``srvr`` is not asked anything else."""
    reading = Reading(host, port, named_in)

    def word(name: str) -> str | None:
        try:
            return ask(host, port, name, deadline=deadline, wrap=options.wrap)
        except WordRefused:
            reading.refused.append(name)
            return None

    try:
        text = word("srvr")
        if text is not None:
            reading.srvr = parse_srvr(text)
        else:  # a 3.4 whitelist without srvr: isro still tells whether it serves read-only
            isro = word("isro")
            reading.isro = isro.strip() if isro is not None else None
        mntr = word("mntr")
        reading.mntr = parse_mntr(mntr) if mntr is not None else None
        conf = word("conf")
        reading.conf = parse_conf(conf) if conf is not None else None
    except NotServing:
        reading.not_serving = True
        return reading
    except OSError as exc:
        if reading.srvr is None and not reading.refused:
            reading.unreachable = describe_failure(exc, deadline)
            return reading
        log.info("%s:%d stopped answering: %s", host, port, exc)
    if reading.refused and options.admin_port:
        _read_admin(reading, deadline, options)
    return reading


def _read_admin(reading: Reading, deadline: float, options: ReadOptions) -> None:
    """What the words not whitelisted would have said, from the member's AdminServer: ``monitor`` for
    ``mntr``, ``voting_view`` and ``configuration`` for ``conf``, ``server_stats`` for ``srvr``."""
    assert options.admin_port is not None

    def get(command: str) -> dict[str, Any]:
        return admin_get(reading.host, options.admin_port or 0, command, deadline=deadline)

    try:
        # whose AdminServer answers: on a host with several servers (or a port forwarded elsewhere) the one
        # on --admin-port may be another's, and its figures are not this member's
        config = get("configuration")
        if config.get("client_port") not in (None, reading.port):
            reading.admin_error = (
                f"the AdminServer on port {options.admin_port} is the one of client port {config['client_port']}"
            )
            return
        reading.admin_server_id = _whole(config.get("server_id"))
        if reading.mntr is None:
            reading.mntr = monitor_values(get("monitor"))
        if reading.conf is None:
            reading.admin_peers = voting_view_peers(get("voting_view"))
        if reading.srvr is None:
            stats = get("server_stats").get("server_stats") or {}
            zxid = stats.get("last_processed_zxid")
            reading.admin_zxid = _whole(zxid)
        reading.admin_used = True
    except NotServing:
        reading.not_serving = reading.srvr is None
    except (OSError, ValueError) as exc:
        reading.admin_error = describe_failure(exc, deadline) if isinstance(exc, OSError) else str(exc)


def _whole(value: Any) -> int | None:
    """A number from an AdminServer's JSON that an id or zxid can be (``fourletter.counter``'s range)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LONG_MAX else None


def describe_failure(exc: BaseException, deadline: float) -> str:
    """A connection's failure in a few words, as a member's ``problem`` says it."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError | socket.timeout) or time.monotonic() >= deadline:
        return "no answer within --timeout"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host ({exc.strerror or exc})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def read_members(targets: Sequence[tuple[str, int, str]], *, timeout: float, options: ReadOptions) -> list[Reading]:
    """Every target (host, port, named_in) read in parallel, each within ``timeout``."""
    if not targets:
        return []
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(max_workers=min(len(targets), _MAX_READERS), thread_name_prefix="zkstorm-4lw") as pool:
        futures = [
            pool.submit(read_member, host, port, named_in, deadline=deadline, options=options)
            for host, port, named_in in targets
        ]
        return [f.result() for f in futures]


# --- the configuration, and the peers it names -------------------------------------------------------------


@dataclass
class Membership:
    """The ensemble's ``server.N`` lines and where they came from (``conf of host:port``,
    ``voting_view of host``, ``/zookeeper/config``); ``assumed_port`` is the client port taken for lines
    that name none."""

    peers: list[Peer]
    source: str
    assumed_port: int | None


def membership_from(readings: Sequence[Reading]) -> Membership | None:
    """The newest configuration a member printed with ``conf`` (by its ``version``), else the first
    AdminServer ``voting_view``."""
    confs = [(r, r.conf) for r in readings if r.conf is not None and r.conf.peers]
    if confs:
        reading, conf = max(confs, key=lambda rc: rc[1].config_version or 0)
        return Membership(conf.peers, f"conf of {reading.host}:{reading.port}", conf.client_port or reading.port)
    for reading in readings:
        if reading.admin_peers:
            return Membership(reading.admin_peers, f"voting_view of {reading.host}", reading.port)
    return None


def membership_from_config(text: str, hosts: Sequence[tuple[str, int]]) -> Membership | None:
    """The ``/zookeeper/config`` znode's lines; the client port of lines that name none is the one the
    ``--zk`` hosts share, if they share one."""
    peers, _ = parse_config(text)
    if not peers:
        return None
    ports = {port for _, port in hosts}
    return Membership(peers, "/zookeeper/config", ports.pop() if len(ports) == 1 else None)


def client_address(peer: Peer, membership: Membership) -> tuple[str, int] | None:
    """Where a peer answers clients: the client address its line names (its quorum host instead of a
    wildcard ``0.0.0.0``), else its quorum host and the assumed port; None when neither is known."""
    host = peer.client_host
    if host in (None, "0.0.0.0", "::", "0:0:0:0:0:0:0:0"):
        host = peer.host
    port = peer.client_port if peer.client_port is not None else membership.assumed_port
    return None if port is None or not host else (host, port)


def addresses(hosts: Sequence[str], timeout: float) -> dict[str, set[str]]:
    """The IP addresses of each host name (looked up in parallel, given up at ``timeout``), so that a
    ``--zk`` host and a configuration line naming the same server by other names are one member."""
    from ..sources.live import resolve_hosts

    found, _ = resolve_hosts([(h, 0) for h in dict.fromkeys(hosts)], time.monotonic() + timeout)
    out: dict[str, set[str]] = {h: {h} for h in hosts}
    for host, ip, _ in found:
        out.setdefault(host, {host}).add(ip)
    return out


def match_peers(readings: Sequence[Reading], membership: Membership, timeout: float) -> dict[int, Reading]:
    """Which reading is which peer: by the server id its ``conf`` printed, else by its address (a host
    name or an IP address it resolves to, and the port)."""
    matched: dict[int, Reading] = {}
    known = {p.server_id for p in membership.peers}
    for reading in readings:
        if reading.server_id in known and reading.server_id not in matched:
            matched[reading.server_id] = reading
    unmatched = [r for r in readings if r not in matched.values()]
    if not unmatched:
        return matched
    wanted = {p.server_id: client_address(p, membership) for p in membership.peers if p.server_id not in matched}
    names = [r.host for r in unmatched] + [a[0] for a in wanted.values() if a is not None]
    ips = addresses(names, min(timeout, 2.0))
    for reading in unmatched:
        for sid, address in wanted.items():
            if sid in matched or address is None or address[1] != reading.port:
                continue
            if ips.get(reading.host, {reading.host}) & ips.get(address[0], {address[0]}):
                matched[sid] = reading
                break
    return matched


# --- readings → members ------------------------------------------------------------------------------------


def transactions_behind(leader: int, member: int) -> int:
    """How many transactions ``member``'s last zxid is behind ``leader``'s. A zxid is an epoch (high 32
    bits) and a counter (``ZxidUtils``); a member still in an earlier epoch has processed none of the
    current one's, so it is behind by all of them (the new epoch's first zxid, counter 0, is the leader's
    own mark, not a transaction). A member ahead (read a moment after the leader) is behind by none."""
    leader_epoch, leader_count = leader >> 32, leader & 0xFFFFFFFF
    member_epoch, member_count = member >> 32, member & 0xFFFFFFFF
    if member_epoch == leader_epoch:
        return max(leader_count - member_count, 0)
    return leader_count if member_epoch < leader_epoch else 0


def to_member(reading: Reading, peer: Peer | None) -> ZkMember:
    """One member's record from its answers (mntr's figures where it gave them, srvr's otherwise)."""
    srvr, mntr = reading.srvr, reading.mntr or {}
    mode = _mode(reading)
    read_only = None if mode in ("unreachable", "unknown") else mode == "read-only"

    odd: list[str] = list(srvr.odd) if srvr else []

    def number(key: str) -> int | None:
        return figure(odd, key, mntr.get(key), counter)  # type: ignore[no-any-return]

    def either(srvr_value: Any, key: str) -> Any:
        return srvr_value if srvr_value is not None else number(key)

    avg = srvr.latency_avg_ms if srvr else None
    if avg is None:
        avg = figure(odd, "avg_latency", mntr.get("avg_latency"), measure)
    version = srvr.version if srvr and srvr.version else (short_version(mntr["version"]) if "version" in mntr else None)
    problem, advice = _problem(reading)
    return ZkMember(
        host=reading.host,
        port=reading.port,
        server_id=(peer.server_id if peer else None) or reading.server_id,
        learner_type=peer.learner_type if peer else None,
        mode=mode,
        serving=mode in SERVING_MODES,
        read_only=read_only,
        version=version,
        zxid=srvr.zxid if srvr and srvr.zxid is not None else reading.admin_zxid,
        zxid_lag=None,
        latency_min_ms=either(srvr.latency_min_ms if srvr else None, "min_latency"),
        latency_avg_ms=avg,
        latency_max_ms=either(srvr.latency_max_ms if srvr else None, "max_latency"),
        outstanding_requests=either(srvr.outstanding if srvr else None, "outstanding_requests"),
        connections=either(srvr.connections if srvr else None, "num_alive_connections"),
        znode_count=either(srvr.node_count if srvr else None, "znode_count"),
        watch_count=number("watch_count"),
        ephemerals_count=number("ephemerals_count"),
        approximate_data_bytes=number("approximate_data_size"),
        open_file_descriptors=number("open_file_descriptor_count"),
        max_file_descriptors=number("max_file_descriptor_count"),
        # the leader's gauges: learners (LeaderZooKeeperServer.registerMetrics, 3.6+), followers in 3.4 and 3.5
        followers=number("learners") if "learners" in mntr else number("followers"),
        synced_followers=number("synced_followers"),
        uptime_ms=number("uptime"),
        odd_figures=", ".join(dict.fromkeys(odd)) or None,
        source=_source(reading),
        named_in=reading.named_in,
        problem=problem,
        advice=advice,
    )


def _mode(reading: Reading) -> str:
    if reading.unreachable is not None:
        return "unreachable"
    if reading.not_serving:
        return "not-serving"
    if reading.srvr is not None and reading.srvr.mode:
        return "read-only" if reading.srvr.read_only else reading.srvr.mode
    if reading.mntr and reading.mntr.get("server_state"):
        return reading.mntr["server_state"]
    if reading.isro == "ro":
        return "read-only"
    return "unknown"


def _source(reading: Reading) -> str:
    if reading.unreachable is not None or (reading.srvr is None and reading.mntr is None):
        return "none"
    if reading.admin_used:
        return "admin"
    return "4lw" if reading.mntr is not None else "srvr"


def _problem(reading: Reading) -> tuple[str | None, str | None]:
    """Why some of a member's figures are missing, and the one setting that would give them."""
    if reading.unreachable is not None:
        return reading.unreachable, None
    if reading.not_serving:
        return "runs but does not serve: electing a leader, or cut off from its quorum", None
    if not reading.refused:
        return None, None
    words = ", ".join(reading.refused)
    if reading.admin_used:
        return f"{words} not in 4lw.commands.whitelist: read through the AdminServer", None
    why = f"; no AdminServer ({reading.admin_error})" if reading.admin_error else ""
    return f"{words} not in 4lw.commands.whitelist{why}", WHITELIST_ADVICE.format(words=" and ".join(reading.refused))


def with_lag(members: list[ZkMember]) -> list[ZkMember]:
    """Each member's ``zxid_lag``: transactions behind the member that leads (none without a leader)."""
    leader = next((m for m in members if m.mode in LEADING_MODES and m.zxid is not None), None)
    if leader is None or leader.zxid is None:
        return members
    for member in members:
        if member.zxid is not None:
            member.zxid_lag = transactions_behind(leader.zxid, member.zxid)
    return members


@dataclass
class EnsembleState:
    """The members as read, and what is known of the ensemble as a whole: the configuration's voting
    members (None when no configuration could be read) and where it came from."""

    members: list[ZkMember]
    voting: int | None
    membership_source: str | None
    membership_problem: str | None = None


def gather(
    hosts: Sequence[tuple[str, int]],
    *,
    timeout: float,
    options: ReadOptions,
    read_config: Callable[[], str | None] | None = None,
) -> EnsembleState:
    """Every member of the ensemble whose ``hosts`` are given, in server id order (members no
    configuration names last). ``read_config`` reads the ``/zookeeper/config`` znode through a read-only
    session, for when no member prints its configuration."""
    hosts = list(dict.fromkeys(hosts))
    readings = read_members([(h, p, "zk") for h, p in hosts], timeout=timeout, options=options)
    membership, problem = membership_from(readings), None
    if membership is None:
        membership, problem = _membership_from_znode(readings, hosts, read_config)
    matched: dict[int, Reading] = {}
    peers: dict[int, Peer] = {}
    if membership is not None:
        peers = {p.server_id: p for p in membership.peers}
        matched = match_peers(readings, membership, timeout)
        more: list[tuple[int, tuple[str, int]]] = []
        for sid, peer in peers.items():
            address = client_address(peer, membership)
            if sid not in matched and address is not None:
                more.append((sid, address))
        targets = [(host, port, "config") for _, (host, port) in more]
        for (sid, _), reading in zip(more, read_members(targets, timeout=timeout, options=options), strict=True):
            matched[sid] = reading
            readings.append(reading)
        for sid, peer in peers.items():  # a peer whose client address nothing names
            if sid not in matched:
                unknown = "not read: its configuration line names no client port, and the --zk hosts use several"
                readings.append(Reading(peer.host, None, "config", unreachable=unknown))
                matched[sid] = readings[-1]
        # a member --zk names twice (by name and by address) is one member
        placed = {id(r) for r in matched.values()}
        readings = [r for r in readings if id(r) in placed or r.server_id not in matched]
    peer_of = {id(r): peers.get(sid) for sid, r in matched.items()}
    members = with_lag([to_member(r, peer_of.get(id(r))) for r in readings])
    members.sort(key=lambda m: (m.server_id is None, m.server_id or 0, m.host, m.port or 0))
    voting = sum(p.learner_type != "observer" for p in peers.values()) if membership is not None else None
    return EnsembleState(members, voting, membership.source if membership else None, problem)


def _membership_from_znode(
    readings: list[Reading], hosts: Sequence[tuple[str, int]], read_config: Callable[[], str | None] | None
) -> tuple[Membership | None, str | None]:
    """``/zookeeper/config``, when no member printed its configuration and some member serves."""
    if read_config is None:
        return None, "no member allows conf"
    if not any(_mode(r) in SERVING_MODES for r in readings):
        return None, "no member allows conf, and none serves to read /zookeeper/config"
    from ..errors import ZkstormError

    try:
        text = read_config()
    except ZkstormError as exc:
        return None, f"no member allows conf, and /zookeeper/config could not be read ({exc})"
    if not text:
        return None, "no member allows conf, and /zookeeper/config is empty"
    return membership_from_config(text, hosts), None
