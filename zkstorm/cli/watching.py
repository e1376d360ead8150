"""``--watch``: a view re-read every interval, its first round shown as the view itself, then one line per
change (``zkstorm.watch`` says what appeared, cleared or changed), until Ctrl-C (exit 130)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..errors import ExitCode, Interrupted
from ..output import Format, Shown
from ..units import duration_text
from .context import Settings, stdout_console, stop_progress, warn_about


def watch_view(
    settings: Settings,
    fmt: Format,
    every_secs: float,
    read: Callable[[], Sequence[Any]],
    to_item: Callable[[Any], Any],
    first: Callable[[Sequence[Any]], Shown],
) -> None:
    """Run a view under ``--watch``: ``read`` gives its rows each round, ``to_item`` what a row is to the
    watch; the first round is ``first(rows)`` as a table, or every item appearing (JSONL); then one line
    per change each round."""
    from ..records import WatchChange
    from ..render import watch_line
    from ..watch import watch

    if fmt not in (Format.TABLE, Format.JSONL):
        raise click.UsageError("--watch writes a table or -f jsonl (one change per line)")
    if every_secs <= 0:
        raise click.UsageError("--watch takes a positive interval, such as 10s")
    console = stdout_console()
    try:
        for round_, rows, changes in watch(read, to_item, interval_secs=every_secs):
            stop_progress()
            if fmt is Format.JSONL:
                fmt.write(Shown(changes, WatchChange), sys.stdout)
            elif round_ == 1:
                Format.TABLE.write(first(rows), sys.stdout, console=console, wide=settings.wide)
                console.print(
                    f"watching every {duration_text(every_secs)}; Ctrl-C stops",
                    style="dim",
                    highlight=False,
                    markup=False,
                )
            else:
                for change in changes:
                    console.print(watch_line(change))
            sys.stdout.flush()
            warn_about(settings.opened.problems if settings.opened is not None else [])
    except KeyboardInterrupt as exc:
        sys.exit(exc.exit_code if isinstance(exc, Interrupted) else ExitCode.INTERRUPTED)
