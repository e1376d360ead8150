"""The ``zkstorm zk`` views of ZooKeeper itself: options, one model call, one emit."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import ExitCode
from ..output import METRIC_FORMATS, VIEW_FORMATS, Format, Shown
from .app import cli
from .context import Settings, emit, say
from .options import format_option

_ADMIN_PORT = click.option(
    "--admin-port",
    envvar="ZKSTORM_ADMIN_PORT",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="The members' AdminServer port (admin.serverPort), asked for /commands/monitor where mntr or conf "
    "is not in 4lw.commands.whitelist; 0 never asks it. Env ZKSTORM_ADMIN_PORT.",
)


@cli.group()
def zk() -> None:
    """ZooKeeper itself: the ensemble's members, its health, and what fills it."""


@zk.command("members")
@_ADMIN_PORT
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def zk_members(settings: Settings, admin_port: int, fmt: Format) -> None:
    """Every member: the --zk hosts and the peers the ensemble's configuration names, with mode, version,
    how far behind the leader, latency, requests, connections, znodes, watches, data size and files.

    \b
    Read with the four-letter words srvr, mntr and conf (4lw.commands.whitelist=srvr,mntr,conf,isro),
    each member in parallel within --timeout; where mntr or conf is not allowed, from the member's
    AdminServer. A member that allows neither says which setting to change."""
    from ..records import ZkMember

    cluster = settings.cluster()  # not opened: the members are read even when no session can be made
    try:
        members = cluster.ensemble(admin_port=admin_port).members()
        _advise(members)
        emit(settings, fmt, Shown(members, ZkMember))
    finally:
        cluster.close()


@zk.command("health")
@click.option(
    "--check", is_flag=True, help="Exit 6 when any finding is at error level (no quorum, a znode past jute.maxbuffer)."
)
@click.option(
    "--members-only",
    is_flag=True,
    help="Only the members' findings: no walk of the tree for znodes near jute.maxbuffer (a quick check).",
)
@click.option(
    "--jute-maxbuffer",
    envvar="ZKSTORM_JUTE_MAXBUFFER",
    type=click.IntRange(1),
    default=0xFFFFF,
    show_default=True,
    help="The servers' jute.maxbuffer in bytes (a JVM option, not in zoo.cfg); znodes within 10% of it are findings.",
)
@click.option(
    "--max-lag", type=click.IntRange(0), default=1000, show_default=True, help="Transactions a follower may be behind."
)
@click.option(
    "--max-latency-ms", type=click.FloatRange(0), default=100.0, show_default=True, help="A member's average latency."
)
@click.option(
    "--max-outstanding", type=click.IntRange(0), default=100, show_default=True, help="Requests queued on a member."
)
@_ADMIN_PORT
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def zk_health(
    settings: Settings,
    check: bool,
    members_only: bool,
    jute_maxbuffer: int,
    max_lag: int,
    max_latency_ms: float,
    max_outstanding: int,
    admin_port: int,
    fmt: Format,
) -> None:
    """Explained findings: no quorum, a member down, read-only or behind the leader, a quorum with no member
    to spare, an even-sized ensemble, members on different versions, latency, queued requests, open files,
    and znodes within 10% of jute.maxbuffer named with their Storm or Kafka meaning (one walk of the tree)."""
    from ..model import Thresholds
    from ..records import ZkFinding

    limits = Thresholds(
        max_lag=max_lag, max_latency_ms=max_latency_ms, max_outstanding=max_outstanding, jute_maxbuffer=jute_maxbuffer
    )
    cluster = settings.cluster()  # not opened: the members are read even when no session can be made
    try:
        ensemble = cluster.ensemble(admin_port=admin_port)
        findings = ensemble.health(limits, sizes=not members_only)
        members = ensemble.members()
        _advise(members)
        serving = sum(m.serving and m.mode != "read-only" for m in members)
        title = f"{len(findings)} findings; {serving} of {len(members)} members serve"
        emit(settings, fmt, Shown(findings, ZkFinding, title=title, view=ensemble))
    finally:
        cluster.close()
    if check and any(f.level == "error" for f in findings):
        sys.exit(ExitCode.UNHEALTHY)


@zk.command("usage")
@click.argument("path", default="/")
@click.option(
    "--depth", type=click.IntRange(1), default=2, show_default=True, help="Subtrees this many levels below PATH."
)
@click.option(
    "--by",
    type=click.Choice(["subtree", "record_kind", "znode"]),
    default=None,
    help="Only one grouping (all three when not given).",
)
@click.option(
    "--limit",
    type=click.IntRange(0),
    default=20,
    show_default=True,
    help="Rows of each grouping, largest first; 0 for all.",
)
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def zk_usage(settings: Settings, path: str, depth: int, by: str | None, limit: int, fmt: Format) -> None:
    """Where the data and znodes are under PATH, largest first: by subtree, by record kind (Storm errors and
    heartbeats, Kafka partition states, old consumer offsets, ISR-change notifications …) and the largest
    znodes, each named with its Storm or Kafka meaning. From the znodes' stats (live), or the snapshot's
    own sizes with --from-files; nothing is decoded."""
    from ..model import usage_rows
    from ..records import ZkUsage

    with settings.cluster() as cluster:
        rows = cluster.usage(path, depth=depth, largest=None if limit == 0 and by in (None, "znode") else max(limit, 1))
        shown = list(usage_rows(rows, by, limit or None))
        total = sum(r.data_bytes for r in rows if r.by == "subtree")
        znodes = sum(r.znodes for r in rows if r.by == "subtree")
        emit(settings, fmt, Shown(shown, ZkUsage, title=f"{znodes:,} znodes, {total:,} data bytes under {path}"))


def _advise(members: list[Any]) -> None:
    """A member's one-line advice (the setting to change so that zkstorm reads it all) on stderr."""
    for member in members:
        if member.advice:
            where = f"{member.host}:{member.port}" if member.port is not None else member.host
            say(f"note: {where}: {member.problem}: {member.advice}")
