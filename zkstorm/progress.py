"""Progress of long work, shown on stderr only when a person is watching it.

Library code reports stages (``Progress.stage``); what it counts it already counts for itself (a
walk's ``WalkStats``), so the display polls that counter from rich's refresh thread instead of being
called once per znode: a walk costs the same with the display on or off. In a pipe or under cron
(stderr not a terminal) nothing is drawn at all, and the display is transient: it leaves no trace in
the terminal once the work is done.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol


class Progress(Protocol):
    def stage(self, description: str, count: Callable[[], int] | None = None, unit: str = "") -> None:
        """A new stage of the work; ``count`` (polled, never pushed) says how far it has got."""
        ...

    def stop(self) -> None:
        """Take the display down (before the command writes its result to the same terminal)."""
        ...


class _Silent:
    def stage(self, description: str, count: Callable[[], int] | None = None, unit: str = "") -> None:
        pass

    def stop(self) -> None:
        pass


NO_PROGRESS: Progress = _Silent()


class StageLog:
    """Each stage's time in the log as it ends, at INFO (``-v``, where the log on stderr replaces the live
    display): where a long run's time went, in a cron job's mail as on a terminal."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._log = logger or logging.getLogger(__name__)
        self._current: tuple[str, float] | None = None

    def stage(self, description: str, count: Callable[[], int] | None = None, unit: str = "") -> None:
        self._ended()
        self._current = (description, time.monotonic())

    def stop(self) -> None:
        self._ended()

    def _ended(self) -> None:
        if self._current is not None:
            description, started = self._current
            self._current = None
            self._log.info("%s: %.1fs", description, time.monotonic() - started)


class TerminalProgress:
    """A one-line rich display on stderr: spinner, stage, what it counted, the rate and the time taken.

    It appears only once the work has taken ``delay`` seconds, so a command that answers at once never
    flashes a line on the screen."""

    def __init__(self, console: Any, *, delay: float = 0.4) -> None:
        import threading

        from rich.live import Live

        self._console = console
        self._description = ""
        self._count: Callable[[], int] | None = None
        self._unit = ""
        self._started = self._stage_started = time.monotonic()
        from rich.spinner import Spinner

        self._spinner = Spinner("dots")
        self._live = Live(
            console=console,
            transient=True,
            refresh_per_second=8,
            redirect_stdout=False,
            redirect_stderr=False,
            get_renderable=self._render,
        )
        self._lock = threading.Lock()
        self._stopped = False
        self._timer = threading.Timer(delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def _show(self) -> None:
        with self._lock:
            if not self._stopped:
                self._live.start()

    def _render(self) -> Any:
        from rich.text import Text

        now = time.monotonic()
        line = Text(self._description, style="bold")
        if self._count is not None:
            done = self._count()
            rate = done / max(now - self._stage_started, 1e-6)
            line.append(f"  {done:,} {self._unit}  {rate:,.0f}/s", style="cyan")
        line.append(f"  {_elapsed(now - self._started)}", style="dim")
        self._spinner.update(text=line)
        return self._spinner

    def stage(self, description: str, count: Callable[[], int] | None = None, unit: str = "") -> None:
        self._description, self._count, self._unit = description, count, unit
        self._stage_started = time.monotonic()

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._stopped = True
            if self._live.is_started:
                self._live.stop()


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


DELAY_ENV = "ZKSTORM_PROGRESS_DELAY"  # seconds before the display appears (default 0.4)


def _may_be_terminal(stream: Any) -> bool:
    """False only where rich would find no terminal either: no tty, and none of the environment
    variables that make rich treat a stream as one (``TTY_COMPATIBLE``, ``FORCE_COLOR``)."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):
        return False


def terminal_progress(*, stream: Any = None) -> Progress:
    """A display on ``stream`` (stderr) when it is a terminal, else ``NO_PROGRESS``."""
    stream = stream if stream is not None else sys.stderr
    if not _may_be_terminal(stream):
        return NO_PROGRESS  # a pipe, a file, cron: settled without importing rich
    from rich.console import Console

    console = Console(file=stream, highlight=False)
    if not console.is_terminal or console.is_dumb_terminal:
        return NO_PROGRESS
    try:
        delay = float(os.environ.get(DELAY_ENV, "0.4"))
    except ValueError:
        delay = 0.4
    return TerminalProgress(console, delay=max(delay, 0.0))
