"""What every command shares while it runs: the global options (``Settings``), the cluster they open
(``Settings.cluster``, through ``zkstorm.connect`` or ``zkstorm.from_files`` only), the one ``emit``, and
what goes to stderr: the progress display, one-line messages, warnings about what could not be read.

A command is options, one call into the model, one ``emit``::

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.kafka.brokers(), KafkaBroker, view=cluster.kafka))
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import click

from ..errors import ExitCode, UsageError
from ..output import Format, Shown


def say(message: str) -> None:
    """One line on stderr, ``zkstorm: message``. Messages quote ZooKeeper's paths and names, so they are
    shown as every value is (``render.visible``: control characters as escapes)."""
    from ..text import visible

    click.echo(f"zkstorm: {visible(message)}", err=True)


# --- the progress display ------------------------------------------------------------------------------

_progress: list[Any] = []  # the display of this command, while it shows
_quiet = [False]  # -v: log lines instead of a display


def quiet_progress(quiet: bool) -> None:
    """No display at all (``-v``: the log lines say what happens, and how long each stage took)."""
    _quiet[0] = quiet


def start_progress(description: str, count: Any = None, unit: str = "") -> Any:
    """Show the progress of long work on stderr when it is a terminal (``zkstorm.progress``); stopped by
    whatever writes the command's result or its error."""
    from ..progress import StageLog, terminal_progress

    stop_progress()
    progress = StageLog() if _quiet[0] else terminal_progress()
    progress.stage(description, count, unit)
    _progress.append(progress)
    return progress


def stop_progress() -> None:
    while _progress:
        _progress.pop().stop()


def stdout_console() -> Any:
    """The terminal a table or tree is drawn for (its width, ``NO_COLOR``); the progress display is taken
    down first, since both write to the same terminal."""
    from ..output import terminal

    stop_progress()
    return terminal()


# --- the options every command shares, and the cluster they open -----------------------------------------


@dataclass
class Settings:
    """The connection and interpretation options shared by every command."""

    zk: str
    timeout: float
    auth: str | None
    tls_ca: str | None
    tls_cert: str | None
    tls_key: str | None
    tls: bool
    storm_root: str
    kafka_root: str
    show_secrets: bool
    strict: bool
    from_files: tuple[str, ...] = ()
    at_zxid: int | None = None
    at: datetime | None = None  # --at: as of the last txn at or before it
    best_effort: bool = False
    from_kraft: str | None = None  # a KRaft metadata folder instead of ZooKeeper (--from-kraft)
    at_offset: int | None = None  # --at-offset: the KRaft log as of that record
    wide: bool = False  # tables show every column, folding long values, instead of fitting the terminal
    opened: Any = None  # the cluster of this command, for its as-of time and what it could not read

    def cluster(self, *, verify_digest: bool = False) -> Any:
        """The cluster model of this command, on the ensemble or on ZooKeeper's files (``--from-files``;
        a whole-tree read then checks the replayed tree against the server's digest when
        ``verify_digest``), opened through the library's front door. Use it as a context manager."""
        from ..model import connect, from_files

        options: dict[str, Any] = {
            "storm_root": self.storm_root,
            "kafka_root": self.kafka_root,
            "show_secrets": self.show_secrets,
        }
        if self.from_kraft:
            cluster = self._kraft_cluster()
        elif self.at_offset is not None:
            raise UsageError("--at-offset applies only with --from-kraft")
        elif self.from_files:
            cluster = from_files(
                *self.from_files,
                at_zxid=self.at_zxid,
                at=self.at,
                best_effort=self.best_effort,
                verify_digest=verify_digest,
                decode_helper=None,  # as ZKSTORM_DECODE_HELPER says
                **options,
            )
        elif self.at_zxid is not None or self.at is not None or self.best_effort:
            raise UsageError("--at, --at-zxid and --best-effort apply only with --from-files (or --from-kraft)")
        else:
            cluster = connect(
                self.zk,
                timeout=self.timeout,
                credentials=self.auth,
                tls=self.tls,
                tls_ca=self.tls_ca,
                tls_cert=self.tls_cert,
                tls_key=self.tls_key,
                decode_helper=None,  # as ZKSTORM_DECODE_HELPER says
                **options,
            )
        self.opened = cluster
        where = self.from_kraft or (" ".join(self.from_files) if self.from_files else self.zk)
        # the files source counts a whole-tree read when it ends (a counter per node costs its speed)
        count = None if self.from_files or self.from_kraft else (lambda: cluster.stats.znodes)
        start_progress(f"reading {where}", count, "znodes")
        return cluster

    def _kraft_cluster(self) -> Any:
        """``--from-kraft``: the cluster a KRaft metadata folder holds, under the Kafka root ``kraft:``."""
        from ..model import from_kraft

        if self.from_files:
            raise UsageError("--from-kraft and --from-files each name what is read: give one of them")
        if self.at_zxid is not None:
            raise UsageError("--at-zxid is a ZooKeeper position: with --from-kraft, give --at-offset")
        return from_kraft(
            self.from_kraft or "",
            at_offset=self.at_offset,
            at=self.at,
            best_effort=self.best_effort,
            show_secrets=self.show_secrets,
        )


# --- the one emit ---------------------------------------------------------------------------------------


def emit(settings: Settings, fmt: Format, shown: Shown, *, notes: bool = True) -> None:
    """Write what the command shows in ``fmt`` on stdout (``Format.write``), then report on stderr what the
    cluster could not read or decode (``finish``). A stream to a file or pipe goes on under the progress
    display; anything drawn for the terminal takes the display down first."""
    cluster = settings.opened
    if cluster is not None and shown.as_of_secs is None and fmt is Format.PROMETHEUS:  # what a scrape says
        shown.as_of_secs = cluster.now()
        shown.problems = cluster.problems
    if cluster is not None and shown.as_of_secs is None and fmt is Format.TABLE and shown.table is None:
        shown.as_of_secs = cluster.now()  # what a record table's ages count from: the files' time, offline
    console = stdout_console() if fmt in (Format.TABLE, Format.TREE) else None
    if not fmt.streams or sys.stdout.isatty():  # a terminal: the lines themselves show the progress
        stop_progress()
    fmt.write(shown, sys.stdout, console=console, wide=settings.wide)
    finish(settings, notes=notes)


def warn_about(problems: Iterable[Any]) -> int:
    """Report unreadable and undecodable znodes on stderr, one line each (Kafka-lenient decodes as notes);
    return how many were problems."""
    from ..records import DecodeFailure, DecodeWarning, Unreadable

    count = 0
    for record in problems:
        if isinstance(record, Unreadable):
            say(f"warning: {record.path}: unreadable ({record.reason})")
            count += 1
        elif isinstance(record, DecodeFailure):
            say(f"warning: {record.path}: cannot decode {record.record_kind}: {record.reason}")
            count += 1
        elif isinstance(record, DecodeWarning):  # decoded the way Kafka would; worth a look, not a failure
            say(f"note: {record.path}: {record.warning}: {record.detail}")
    return count


def finish(settings: Settings, *, notes: bool = True) -> None:
    """Warn about what the command could not read or decode (the cluster's problems; Kafka's lenient
    decodes too, as notes, unless ``notes`` is off) and what a best-effort read of files left out; exit 5
    with ``--strict`` if anything could not be read."""
    from ..records import DecodeWarning

    stop_progress()
    cluster = settings.opened
    problems = cluster.problems if cluster is not None else []
    count = warn_about(p for p in problems if notes or not isinstance(p, DecodeWarning))
    left_out = cluster.source_problems if cluster is not None else []
    for problem in left_out:
        say(f"warning: {problem}")
    if (count or left_out) and settings.strict:
        sys.exit(ExitCode.DECODE_FAILURES)
