"""Pass 1's helper processes (``reader.ChangeReader.scan``): a function of one job each, run in a forked
child, its result handed back through a pipe, in the jobs' order, at most ``workers`` at a time.

Written on ``multiprocessing.Process`` and a pipe per job rather than a ``multiprocessing.Pool`` for what
a pool does not do: a pool whose worker dies (``kill -9``, the OOM killer) waits for the lost task
forever, and a pool's workers outlive a parent killed with ``kill -9``. Here a helper that ends without a
result (killed, or raising) is a ``None`` in the results (the caller reads that job itself, so the
outcome is the one-by-one read's, errors included); each helper dies with its parent (Linux:
``PR_SET_PDEATHSIG``); and the helpers still running when the results are left (an error, Ctrl-C,
SIGTERM turned into ``Interrupted`` by the CLI, the reader gone) are ended (SIGTERM) and reaped.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def can_fork() -> bool:
    """Whether helpers can be forked here: a ``fork`` start method (none on Windows), and this process
    not a daemonic ``multiprocessing`` child (a pool's worker: such a process may start none)."""
    if multiprocessing.current_process().daemon:
        return False
    try:
        multiprocessing.get_context("fork")
    except ValueError:
        return False
    return True


def _die_with_parent(parent: int) -> None:
    """SIGKILL this helper when its parent dies (Linux; elsewhere it ends when its job does)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)


def _helper(work: Callable[[Any], Any], job: Any, receive: Connection, send: Connection, parent: int) -> None:
    """A helper: ``work(job)`` sent to the parent, or nothing (the parent reads the job itself). Ctrl-C
    is the command's to handle (it ends the helpers); SIGTERM and SIGHUP end a helper at once (the
    handlers the CLI set, ``cli/app.py``, are the command's, copied by the fork)."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    receive.close()  # the parent's end: with it closed here, a parent gone is a broken pipe, not a wait
    try:
        found = work(job)
    except Exception:  # the parent reads the job itself and meets what this met
        return
    try:
        send.send(found)
    except Exception:  # the parent gone (a broken pipe), or a result that would not pickle: read there
        return


@contextmanager
def forked(work: Callable[[Any], Any], jobs: Iterable[Any], workers: int) -> Iterator[Iterator[Any | None]]:
    """``work(job)`` of every job, in order, each in a forked helper, ``workers`` at a time; ``None``
    where a helper ended without its result. Leaving the block ends and reaps the helpers still running."""
    context = multiprocessing.get_context("fork")
    pending = iter(jobs)
    running: deque[tuple[Any, Connection] | None] = deque()  # None: a helper that could not be started
    parent = os.getpid()
    sentinel = object()

    def start() -> None:
        job = next(pending, sentinel)
        if job is sentinel:
            return
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_helper, args=(work, job, receive, send, parent), daemon=True)
        try:
            process.start()
        except OSError as exc:  # no fork now (EAGAIN, ENOMEM): the caller reads the job itself
            log.warning("pass 1 could not start a helper (%s): its log is read here", exc.strerror or exc)
            receive.close()
            running.append(None)
            return
        finally:
            send.close()  # the helper's end: its copy closes when it exits, so a helper gone is an EOF
        running.append((process, receive))

    def results() -> Iterator[Any | None]:
        for _ in range(workers):
            start()
        while running:
            helper = running[0]
            found = None
            if helper is not None:
                process, receive = helper
                try:
                    found = receive.recv()
                except (EOFError, OSError):
                    log.warning("a helper of pass 1 ended without its result: its log is read here")
                process.join()
                receive.close()
            running.popleft()
            start()
            yield found

    try:
        yield results()
    finally:
        helpers = [h for h in running if h is not None]
        running.clear()
        for process, _ in helpers:
            if process.is_alive():
                process.terminate()
        for process, receive in helpers:
            process.join()
            receive.close()
