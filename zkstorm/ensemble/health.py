"""The ensemble's health as explained findings (``zk health``): one small function per finding, on the
members as read (``members.EnsembleState``) and on the znodes near ``jute.maxbuffer``.

Levels: ``error`` when the ensemble does not serve (no quorum) or a znode can no longer be written or read
by a default client; ``warning`` for what weakens it (a member down, behind, slow, a quorum with nothing
to spare, a znode near the limit); ``info`` for what is worth knowing. ``zk health --check`` exits 6 on
any error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records import ZkFinding, ZkMember
from .members import LEADING_MODES, EnsembleState

# ZooKeeper's default jute.maxbuffer: the largest packet a server takes (BinaryInputArchive.maxBuffer,
# Integer.getInteger("jute.maxbuffer", 0xfffff)) and a client reads (ZKClientConfig's
# CLIENT_MAX_PACKET_LENGTH_DEFAULT). A znode near it cannot grow: Storm's Nimbus can no longer write a
# growing assignment, a Kafka reassignment JSON is refused.
DEFAULT_JUTE_MAXBUFFER = 0xFFFFF
NEAR_LIMIT = 0.9  # within 10% of jute.maxbuffer


@dataclass(frozen=True)
class Thresholds:
    """Where a figure becomes a finding; the defaults are ``zk health``'s."""

    max_lag: int = 1000  # transactions a follower may be behind the leader
    max_latency_ms: float = 100.0  # a member's average request latency
    max_outstanding: int = 100  # requests queued on a member
    fd_pct: float = 80.0  # open file descriptors, percent of the limit
    jute_maxbuffer: int = DEFAULT_JUTE_MAXBUFFER

    @property
    def near_bytes(self) -> int:
        return int(self.jute_maxbuffer * NEAR_LIMIT)


@dataclass(frozen=True)
class LargeZnode:
    """A znode at least ``Thresholds.near_bytes`` long, named with its Storm or Kafka meaning."""

    path: str
    size: int
    meaning: str


def label(member: ZkMember) -> str:
    return f"{member.host}:{member.port}" if member.port is not None else member.host


def _finding(name: str, level: str, detail: str, member: ZkMember | None = None, **more: object) -> ZkFinding:
    return ZkFinding(
        finding=name,
        level=level,
        member=label(member) if member is not None else None,
        path=more.get("path"),  # type: ignore[arg-type]
        size=more.get("size"),  # type: ignore[arg-type]
        detail=detail,
    )


def _voters(state: EnsembleState) -> list[ZkMember]:
    return [m for m in state.members if m.learner_type != "observer"]


def no_quorum(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """No member leads: the ensemble takes no writes, and serves reads only from read-only members."""
    if any(m.mode in LEADING_MODES for m in state.members):
        return []
    answered = [m for m in state.members if m.mode != "unreachable"]
    read_only = [label(m) for m in state.members if m.mode == "read-only"]
    voters = state.voting or len(_voters(state))
    detail = (
        f"no member leads: {len(answered)} of {len(state.members)} members answer, none in a quorum "
        f"(a quorum is {voters // 2 + 1} of {voters} voting members); Storm and Kafka cannot write their state"
    )
    if read_only:
        detail += f"; {', '.join(read_only)} serve read-only clients only"
    return [_finding("no_quorum", "error", detail)]


def members_down(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """Each member that does not answer, does not serve, or serves read-only clients only."""
    out = []
    for m in state.members:
        if m.mode == "unreachable":
            out.append(_finding("member_unreachable", "warning", f"unreachable: {m.problem}", m))
        elif m.mode == "not-serving":
            out.append(_finding("member_not_serving", "warning", f"{m.problem}", m))
        elif m.mode == "read-only":
            detail = "in read-only mode: cut off from its quorum, it serves read-only clients only"
            out.append(_finding("member_read_only", "warning", detail, m))
    return out


def quorum_at_risk(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """A quorum with no member to spare: one more member lost stops the ensemble."""
    voters = state.voting or len(_voters(state))
    serving = [m for m in _voters(state) if m.serving and m.mode != "read-only"]
    if not any(m.mode == "leader" for m in serving) or voters < 2 or len(serving) - 1 > voters // 2:
        return []
    detail = f"{len(serving)} of {voters} voting members serve, the least a quorum needs: losing one more stops it"
    return [_finding("quorum_at_risk", "warning", detail)]


def followers_behind(state: EnsembleState, limits: Thresholds) -> list[ZkFinding]:
    """A member more than ``max_lag`` transactions behind the leader."""
    return [
        _finding(
            "follower_behind",
            "warning",
            f"{m.zxid_lag:,} transactions behind the leader (more than {limits.max_lag:,})",
            m,
        )
        for m in state.members
        if m.zxid_lag is not None and m.zxid_lag > limits.max_lag
    ]


def even_ensemble(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """An even number of voting members survives no more failures than one fewer would."""
    voters = state.voting
    if voters is None or voters < 2 or voters % 2:
        return []
    detail = (
        f"{voters} voting members survive the loss of {(voters - 1) // 2}, as {voters - 1} would: "
        f"the {voters}th adds load and no tolerance"
    )
    return [_finding("even_ensemble", "warning", detail)]


def mixed_versions(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """Members on different ZooKeeper versions: a rolling upgrade left half done."""
    versions: dict[str, list[str]] = {}
    for m in state.members:
        if m.version:
            versions.setdefault(m.version, []).append(label(m))
    if len(versions) < 2:
        return []
    detail = "members run different versions: " + "; ".join(
        f"{v} on {', '.join(names)}" for v, names in sorted(versions.items())
    )
    return [_finding("mixed_versions", "warning", detail)]


def slow_members(state: EnsembleState, limits: Thresholds) -> list[ZkFinding]:
    """A member whose average latency or outstanding requests pass the thresholds."""
    out = []
    for m in state.members:
        if m.latency_avg_ms is not None and m.latency_avg_ms > limits.max_latency_ms:
            detail = (
                f"average request latency {m.latency_avg_ms:g} ms (max {m.latency_max_ms} ms), "
                f"over {limits.max_latency_ms:g} ms"
            )
            out.append(_finding("high_latency", "warning", detail, m))
        if m.outstanding_requests is not None and m.outstanding_requests > limits.max_outstanding:
            detail = f"{m.outstanding_requests:,} requests queued, over {limits.max_outstanding:,}: it cannot keep up"
            out.append(_finding("outstanding_requests", "warning", detail, m))
    return out


def file_descriptors(state: EnsembleState, limits: Thresholds) -> list[ZkFinding]:
    """A member near its open file limit: past it, it refuses connections."""
    out = []
    for m in state.members:
        if m.open_file_descriptors is None or not m.max_file_descriptors:
            continue
        pct = 100.0 * m.open_file_descriptors / m.max_file_descriptors
        if pct >= limits.fd_pct:
            detail = f"{m.open_file_descriptors:,} of {m.max_file_descriptors:,} file descriptors open ({pct:.0f}%)"
            out.append(_finding("file_descriptors", "warning", detail, m))
    return out


def words_not_allowed(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """A member whose four-letter words zkstorm may not use, with the one setting to change."""
    return [
        _finding("four_letter_words_not_allowed", "warning", f"{m.problem}: {m.advice}", m)
        for m in state.members
        if m.advice
    ]


def odd_figures(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """A member that printed figures no counter can hold (``1e400``, ``NaN``, ``-5``): broken or not what it
    claims to be. Its other figures, and every other member, are judged as usual."""
    return [
        _finding(
            "member_odd_figures",
            "warning",
            f"printed figures no counter can hold ({m.odd_figures}): shown as text, not judged",
            m,
        )
        for m in state.members
        if m.odd_figures
    ]


def membership_unknown(state: EnsembleState, _: Thresholds) -> list[ZkFinding]:
    """The ensemble's configuration could not be read: the members shown are the --zk hosts only."""
    if state.membership_source is not None:
        return []
    detail = f"the ensemble's configuration is not known ({state.membership_problem}): only the --zk hosts are shown"
    return [_finding("membership_unknown", "info", detail)]


MEMBER_RULES: list[Callable[[EnsembleState, Thresholds], list[ZkFinding]]] = [
    no_quorum,
    members_down,
    quorum_at_risk,
    followers_behind,
    even_ensemble,
    mixed_versions,
    slow_members,
    file_descriptors,
    words_not_allowed,
    odd_figures,
    membership_unknown,
]


def large_znodes(znodes: Sequence[LargeZnode], limits: Thresholds) -> list[ZkFinding]:
    """Znodes within 10% of ``jute.maxbuffer`` (warning) or past it (error: a default client cannot read
    it, a server would not take it now), each named with what it is to Storm or Kafka."""
    out = []
    for z in sorted(znodes, key=lambda z: (-z.size, z.path)):
        if z.size < limits.near_bytes:
            continue
        pct = 100.0 * z.size / limits.jute_maxbuffer
        over = z.size >= limits.jute_maxbuffer
        detail = f"{z.meaning}: {z.size:,} bytes, {pct:.0f}% of jute.maxbuffer ({limits.jute_maxbuffer:,}): " + (
            "past the limit, a client with the default cannot read it"
            if over
            else "it cannot grow much before writes to it fail"
        )
        out.append(
            _finding(
                "znode_over_jute_maxbuffer" if over else "znode_near_jute_maxbuffer",
                "error" if over else "warning",
                detail,
                path=z.path,
                size=z.size,
            )
        )
    return out


def sizes_not_checked(reason: str) -> ZkFinding:
    return _finding("sizes_not_checked", "info", f"znode sizes were not checked: {reason}")


def findings(state: EnsembleState, limits: Thresholds, znodes: Sequence[LargeZnode] | None) -> list[ZkFinding]:
    """Every rule's findings, errors first."""
    out = [f for rule in MEMBER_RULES for f in rule(state, limits)]
    if znodes is not None:
        out += large_znodes(znodes, limits)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.level])
