"""ZooKeeper itself: the ensemble that holds the metadata (its members and their health) and what fills it
(usage by subtree and record kind).

``fourletter`` speaks the four-letter words and the AdminServer's commands and parses what they print;
``members`` reads every member in parallel; ``health`` turns the members (and the znodes near
``jute.maxbuffer``) into explained findings; ``usage`` counts znodes and bytes. The cluster model is the
front door: ``cluster.ensemble()`` on a live source, ``cluster.usage(path)`` on either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import ZookeeperError
from ..records import ZkFinding, ZkMember
from .health import LargeZnode, Thresholds, findings, sizes_not_checked
from .members import EnsembleState, ReadOptions, gather

__all__ = ["Ensemble", "EnsembleState", "LargeZnode", "ReadOptions", "Thresholds"]


class Ensemble:
    """The ensemble of a live source, read once on first use. ``read_config`` reads ``/zookeeper/config``
    through a read-only session; ``large_znodes(min_bytes)`` walks the tree for the znodes at least that
    large (``zk health``'s check against ``jute.maxbuffer``)."""

    def __init__(
        self,
        hosts: Sequence[tuple[str, int]],
        *,
        timeout: float,
        options: ReadOptions | None = None,
        read_config: Callable[[], str | None] | None = None,
        large_znodes: Callable[[int], Sequence[LargeZnode]] | None = None,
    ) -> None:
        self.hosts = list(hosts)
        self.timeout = timeout
        self.options = options or ReadOptions()
        self.read_config = read_config
        self.large_znodes = large_znodes
        self._state: EnsembleState | None = None

    def state(self) -> EnsembleState:
        if self._state is None:
            self._state = gather(self.hosts, timeout=self.timeout, options=self.options, read_config=self.read_config)
        return self._state

    def members(self) -> list[ZkMember]:
        """Every member: the ``--zk`` hosts and the peers the ensemble's configuration names."""
        return self.state().members

    def health(self, limits: Thresholds | None = None, *, sizes: bool = True) -> list[ZkFinding]:
        """Explained findings, errors first; with ``sizes``, a walk for znodes near ``jute.maxbuffer``
        (only when some member serves: a walk needs a session)."""
        limits = limits or Thresholds()
        state = self.state()
        znodes = None
        extra: list[ZkFinding] = []
        if sizes and self.large_znodes is not None:
            if any(m.serving for m in state.members):
                try:
                    znodes = self.large_znodes(limits.near_bytes)
                except ZookeeperError as exc:  # members answer, yet no session: say so, show the rest
                    extra.append(sizes_not_checked(str(exc)))
            else:
                extra.append(sizes_not_checked("no member serves, so no session can walk the tree"))
        return findings(state, limits, znodes) + extra
