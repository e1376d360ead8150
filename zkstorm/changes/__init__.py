"""What changed in Storm and Kafka, and when, from ZooKeeper's own transaction logs.

``read_changes(paths, since=..., until=...)`` (or ``zkstorm.from_files(DIR).changes(...)``) gives a
``ChangeLog``: iterate it for the typed change records (``records.CHANGE_TYPES``), in txn order, each
decoded from the znode's state before and after the txn with the views' own decoders; then ask it for the
grouped ``summary()``, the ``stats`` of what was read and the ``problems`` a best-effort read met.

Where things are: ``reader.py`` (the txns of a window with the state before each), ``kinds.py`` (the
engine and the generic records), ``handlers.py`` (which function tells a znode's changes), ``kafka.py``
and ``storm.py`` (one function per znode kind), ``select.py`` (the filters), ``lines.py`` (one line per
change), ``summary.py`` (the grouped summary). Parquet, through the snapshot's writer, is ``export/changes.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from ..defaults import STALE_AFTER_SECS
from ..layout import Roots
from ..sources.files.txnlog import Txn
from .handlers import HANDLERS, REWRITES
from .kinds import Counters, Engine, discovered_roots
from .lines import output_rows, terminal_lines
from .reader import ChangeReader, ReadStats, Rewrite
from .select import ChangeFilter
from .storm import is_heartbeat
from .summary import Summarizer

__all__ = ["ChangeFilter", "ChangeLog", "read_changes"]


class ChangeLog:
    """The changes of one window, read when iterated (once). Records stream: the day's txns are never
    held, only the states of the znodes they touch and what the summary counts. ``fast=False`` reads
    every txn whole (``reader.py``): the same records, slower; what the fast path is tested against."""

    def __init__(
        self,
        paths: list[str] | tuple[str, ...],
        *,
        since: int | datetime | timedelta | None = None,
        until: int | datetime | timedelta | None = None,
        best_effort: bool = False,
        roots: Roots | None = None,
        show_secrets: bool = False,
        stale_after_secs: float = STALE_AFTER_SECS,
        select: ChangeFilter | None = None,
        fast: bool = True,
        reader: Any = None,
        handlers: dict[str, Any] | None = None,
    ) -> None:
        # ``reader``: another log's units as txns and steps, in place of ZooKeeper's (``kraft.py``'s
        # ``KraftChangeReader``), told by ``handlers`` (default ``handlers.HANDLERS``)
        self.reader = reader or ChangeReader(
            paths, since=since, until=until, best_effort=best_effort, light=is_heartbeat, fast=fast
        )
        self.handlers = handlers or HANDLERS
        self.chosen = roots or Roots()
        self.show_secrets = show_secrets
        self.stale_after_secs = stale_after_secs
        self.select = select or ChangeFilter()
        self.summarizer = Summarizer()
        self.roots: Roots | None = None  # the roots decoded under: the chosen ones and those found
        self.engine: Engine | None = None
        self._read = False

    @property
    def stats(self) -> ReadStats:
        return self.reader.stats

    @property
    def problems(self) -> list[str]:
        return self.reader.problems

    @property
    def counters(self) -> Counters:
        return self.engine.counters if self.engine is not None else Counters()

    def open(self) -> None:
        """Passes 1 and 2 (``reader.py``); iterating opens it when it was not."""
        if self.engine is not None:
            return
        self.reader.open()
        self.roots = discovered_roots(self.reader.names, self.chosen)
        self.engine = Engine(
            self.reader.states,
            self.roots,
            show_secrets=self.show_secrets,
            stale_after_secs=self.stale_after_secs,
            handlers=self.handlers,
            rewrites=REWRITES,
        )

    def __iter__(self) -> Iterator[Any]:
        if self._read:
            raise RuntimeError("a ChangeLog is read once; read_changes again for a second pass")
        self._read = True
        self.open()
        engine = self.engine
        assert engine is not None
        matches, add = self.select.matches, self.summarizer.add
        counts = engine.counters.by_kind
        for txn, steps, in_window in self.reader.txns(rewrite=engine.is_rewrite):
            if steps is None:  # a run of rewrites (``reader.Rewrite``)
                made = engine.rewritten(cast("list[Rewrite]", txn), in_window)
            else:
                made = engine.changes(cast(Txn, txn), steps, in_window)
            if not in_window:
                continue
            for record in made:
                if matches(record):
                    kind = type(record).__name__
                    counts[kind] = counts.get(kind, 0) + 1
                    add(record)
                    yield record
        beats = engine.heartbeats
        engine.counters.heartbeat_writes, engine.counters.heartbeat_workers = beats.writes, len(beats.workers)

    def rows(self, kinds: Sequence[str] = (), *, csv: bool = False) -> tuple[Iterable[Any], type]:
        """The changes as a machine format writes them, and their record type (``lines.output_rows``)."""
        return output_rows(self, kinds, csv=csv)

    def terminal_lines(self, *, detail: bool = False) -> list[str]:
        """The window, the summary and (``detail``) every change, a line each (``lines.terminal_lines``)."""
        return terminal_lines(self, detail=detail)

    def summary(self) -> list[Any]:
        """The grouped summary (``records.ChangeSummary``, oldest first), once the log has been read."""
        return self.summarizer.lines(self.stats, self.counters)


def read_changes(
    paths: list[str] | tuple[str, ...],
    *,
    since: int | datetime | timedelta | None = None,
    until: int | datetime | timedelta | None = None,
    best_effort: bool = False,
    storm_root: str = "/storm",
    kafka_root: str = "/",
    show_secrets: bool = False,
    stale_after_secs: float = STALE_AFTER_SECS,
    select: ChangeFilter | None = None,
) -> ChangeLog:
    """The changes ZooKeeper's files at ``paths`` hold between ``since`` and ``until`` (each a zxid, a
    ``datetime``, or a ``timedelta`` back from the last logged txn; by default everything the logs hold
    after the oldest snapshot they can be replayed from), decoded under ``storm_root``, ``kafka_root``
    and every root the files show. A damaged or incomplete log raises ``FilesError`` (with
    ``best_effort``, the changes before the damage, and the damage in ``problems``)."""
    return ChangeLog(
        paths,
        since=since,
        until=until,
        best_effort=best_effort,
        roots=Roots(storm=(storm_root,), kafka=(kafka_root,)),
        show_secrets=show_secrets,
        stale_after_secs=stale_after_secs,
        select=select,
    )
