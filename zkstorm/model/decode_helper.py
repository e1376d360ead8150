"""Costly decodes in a helper process, so a walk uses a second core.

Java-serialized payloads (Storm 0.9's Clojure data, 2.x's ``leader-info``) are parsed by javaobj-py3
field by field in Python: about 1 ms a payload, against tens of microseconds for a Thrift or JSON one.
In the walk benchmark's tree they are 1.1% of the znodes and 28% of ``zkstorm tree``'s time. So a walk
that meets more than ``START_AFTER`` of them starts one helper process (``main``, a new interpreter
running this very zkstorm) and hands it those payloads while it decodes everything else itself;
``in_walk_order`` gives the results back in the walk's order, so nothing downstream can tell where a
znode was decoded.

The walk's own thread talks to the helper over its stdin and stdout (``multiprocessing.connection``'s
framing of pickles): a thread of ours would get the GIL only every 5 ms while the walk decodes, which
is what made a ``ProcessPoolExecutor`` slower than no helper at all. The walk never blocks writing: it
keeps the requests the helper has not answered within half of what its stdin holds, so the two cannot
wait on each other. A helper that cannot start, dies, or answers out of step costs only speed:
whatever it had not answered is decoded here. ``Cluster(decode_helper=True)`` turns it on (the CLI
does, unless ``ZKSTORM_DECODE_HELPER=0``: ``zkstorm.connect(decode_helper=None)``); a library caller opts in.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..decode.registry import DETAIL_COLUMNS
from ..decode.storm_payload import JAVA_MAGIC
from ..sources.base import RawNode

log = logging.getLogger(__name__)

START_AFTER = 16  # costly payloads a walk decodes itself first: a view that meets a few starts no process
BACKLOG = 8  # payloads sent and not yet answered, at most: enough to keep the helper busy
WINDOW = 16384  # znodes decoded here and held behind one still in the helper, before the walk waits for it
# ... or their payloads' bytes: what a held znode decodes to is held with it, and a heartbeat's 1.5 KB
# of gzip is some 30 KB of counters as Python objects. In the 312k-znode benchmark sandbox the helper
# fell behind on 9,900 heartbeats, and 16,384 held znodes took the walk from 270 MiB to 490 MiB.
WINDOW_BYTES = 1 << 20
_FRAMING = 256  # a request's bytes besides its payload, path and options (the stat, pickle's framing)


def costly(data: bytes | None) -> bool:
    """Whether decoding ``data`` is worth a trip to the helper: a Java serialization stream."""
    return data is not None and data[:4] == JAVA_MAGIC


# In the snapshot's walk (``detail=DETAIL_COLUMNS``) a worker heartbeat is decoded whole, counters and
# all: about 0.8 ms with its executor figures, while its answer (a handful of columns and the figures)
# unpickles in about 0.11 ms; a Storm assignment takes 0.16 ms and unpickles in 0.025 ms (the walk
# benchmark's /storm, per znode, measured). Both are worth the trip there. The path is all the walk
# looks at: a znode it misjudges is decoded in the helper the same way.
_WHOLE_IN_SNAPSHOT = ("/workerbeats/", "/assignments/")


def costly_in(options: dict[str, Any]) -> Callable[[RawNode], bool] | None:
    """Which other ``RawNode``s than Java payloads a walk with these decode options sends to the helper
    (None: none, and the walk asks nothing more per znode)."""
    if options.get("detail") != DETAIL_COLUMNS:
        return None
    beats, assignments = _WHOLE_IN_SNAPSHOT
    return lambda raw: bool(raw.data) and (beats in raw.path or assignments in raw.path)


class DecodeHelper:
    """One helper process: started on the first ``submit``, stopped by ``close`` (the cluster's).

    It runs ``decode(raw, **options)`` for each payload submitted. The function is sent to the process
    when it starts, pickled by reference (a module-level function: its module and name), so the helper
    imports what decodes without this module naming it: the walk (``model.walk.decode_node``) hands
    itself to the helper, and nothing here imports the walk back.

    A ticket is the request's number; the helper answers in order and sends each answer with its ticket,
    so an answer that is not the one expected (a request or an answer lost to an interruption between
    a write and its bookkeeping) ends the helper instead of giving a znode another's records."""

    def __init__(self, decode: Callable[..., Any]) -> None:
        self._decode = decode
        self._process: Any = None
        self._connection: Any = None
        self._gave_up = False
        self._sent = 0  # tickets handed out
        self._pending: deque[int] = deque()  # bytes of each request not yet answered, oldest first
        self._answers: dict[int, Any] = {}
        self._room = 0  # bytes of requests the helper's stdin holds unread without blocking a write
        self._options: tuple[Any, int] = (None, 0)  # the options last sent (kept: an id could be reused), their size
        self.decoded = 0  # znodes the helper decoded (for tests and the log)
        self.pid: int | None = None

    @property
    def busy(self) -> bool:
        """Whether requests are waiting for answers."""
        return bool(self._pending)

    @property
    def given_up(self) -> bool:
        """True once the helper could not start or died: the walk decodes everything itself."""
        return self._gave_up

    @property
    def free(self) -> bool:
        """Whether the helper has a free place for a payload now (it is not starting, nor behind)."""
        return not self._gave_up and len(self._pending) < BACKLOG

    def submit(self, raw: RawNode, options: dict[str, Any]) -> int | None:
        """A ticket for ``decode(raw, **options)`` in the helper; None if there is no helper, or if
        the request would not fit in what its stdin holds unread (the walk then decodes it itself: a
        write that could block while the helper waits for us to read its answers is never made)."""
        connection = self._start()
        if connection is None:
            return None
        size = len(raw.path) + len(raw.data or b"") + _FRAMING + self._options_size(options)
        if sum(self._pending) + size > self._room:
            return None
        ticket = self._sent
        self._sent += 1
        self._pending.append(size)
        try:
            connection.send((ticket, raw, options))
        except Exception as exc:  # the helper died: decode here from now on
            self._give_up(exc)
            return None
        return ticket

    def _options_size(self, options: dict[str, Any]) -> int:
        """The pickled size of a walk's options (its roots), measured once per walk."""
        if self._options[0] is not options:
            import pickle

            self._options = (options, len(pickle.dumps(options)))
        return self._options[1]

    def collect(self) -> None:
        """Read the answers that are in, without waiting."""
        self._read(wait_for=None)

    def ready(self, ticket: int) -> bool:
        """Whether the answer of ``ticket`` was collected (or never will be: the helper died)."""
        return ticket in self._answers or self._gave_up

    def result(self, ticket: int) -> Any:
        """The helper's answer for ``ticket``, or None if it died before answering."""
        self._read(wait_for=ticket)
        if ticket not in self._answers:
            return None
        self.decoded += 1
        return self._answers.pop(ticket)

    def _read(self, wait_for: int | None) -> None:
        """Read the answers that are in; with ``wait_for``, until that ticket's is."""
        connection = self._connection
        try:
            while connection is not None and self._pending:
                if (wait_for is None or wait_for in self._answers) and not connection.poll():
                    return
                expected = self._sent - len(self._pending)  # the oldest one not answered
                ticket, answer = connection.recv()
                self._pending.popleft()
                if ticket != expected:
                    raise RuntimeError(f"the helper answered request {ticket}, not {expected}")
                self._answers[ticket] = answer
        except Exception as exc:  # EOF (the helper died), or out of step
            self._give_up(exc)

    def _start(self) -> Any:
        if self._connection is None and not self._gave_up:
            try:
                import subprocess
                from multiprocessing.connection import Connection

                # this very zkstorm, wherever it was imported from (the walk pickles its own records)
                here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
                boot = (
                    f"import sys; sys.path.insert(0, {here!r}); import zkstorm.model.decode_helper as h; "
                    "del sys.path[0]; h.main()"
                )
                flags: list[str] = getattr(subprocess, "_args_from_interpreter_flags", list)()  # -E, -s, -I as ours
                self._process = subprocess.Popen(
                    [sys.executable, *flags, "-c", boot],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                self.pid = self._process.pid
                self._room = _pipe_room(self._process.stdin.fileno())
                # one duplex connection over the two pipes: writes go to its stdin, reads come from its stdout
                self._connection = _Duplex(
                    Connection(os.dup(self._process.stdout.fileno()), writable=False),
                    Connection(os.dup(self._process.stdin.fileno()), readable=False),
                )
                self._process.stdin.close()
                self._process.stdout.close()
                self._connection.send(self._decode)  # what the helper runs, by reference (see the class)
            except Exception as exc:  # no processes to be had: decode here
                self._give_up(exc)
        return self._connection

    def _give_up(self, exc: BaseException) -> None:
        if not self._gave_up:
            log.info("decoding without a helper process from here on (%r)", exc)
        self._gave_up = True
        self.close()

    def close(self) -> None:
        """Stop the helper: it ends when its stdin closes (a decode in progress is at most milliseconds)."""
        connection, self._connection = self._connection, None
        process, self._process = self._process, None
        self._pending.clear()  # a helper started later starts afresh
        self._answers.clear()
        if connection is not None:
            log.debug("the helper process decoded %d znodes", self.decoded)
            connection.close()
        if process is not None:
            for pipe in (process.stdin, process.stdout):  # still open if the start failed half way
                if pipe is not None and not pipe.closed:
                    pipe.close()
            try:
                process.wait(timeout=5)
            except Exception:
                process.kill()
                process.wait()


def _pipe_room(fd: int) -> int:
    """Half of what the pipe on ``fd`` holds: 64 KiB as a rule on Linux, but one page once its user holds
    too many pipe pages (``fs.pipe-user-pages-soft``), so it is asked; 16 KiB elsewhere. Half, because
    the kernel fills a pipe in page slots and does not always merge a small write into a partly filled
    one: ``BACKLOG`` writes can waste up to that many slots' slack."""
    try:
        import fcntl

        capacity = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (ImportError, AttributeError, OSError):
        capacity = 16 * 1024
    return capacity // 2


class _Duplex:
    """A reading and a writing ``Connection`` used as one. ``poll`` asks one ``select.poll`` object made
    here: ``Connection.poll`` builds a selector per call, and the walk asks after every znode while
    payloads wait for the helper."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader, self.writer = reader, writer
        self.send, self.recv = writer.send, reader.recv
        try:
            import select

            poller = select.poll()
            poller.register(reader.fileno(), select.POLLIN)
            self.poll = lambda: bool(poller.poll(0))
        except (ImportError, AttributeError):  # no poll(2) here
            self.poll = reader.poll

    def close(self) -> None:
        self.writer.close()
        self.reader.close()


_DONE, _SENT, _WAITING = 0, 1, 2  # a held item: decoded (value: its result), in the helper (value: its
# ticket), or costly and waiting for the helper to have room (value: None)
_POLL_EVERY = 32  # items between two looks at the helper's answers while the walk's head waits for one


def in_walk_order(
    items: Iterable[Any],
    decode: Callable[[Any], Any],
    helper: DecodeHelper | None,
    options: dict[str, Any],
) -> Iterator[tuple[Any, Any]]:
    """``(item, decode(item))`` for every item, in the order of ``items``.

    With a helper, the costly ``RawNode``s after the first ``START_AFTER`` wait for the helper
    (``decode(item, **options)`` there, which is what ``decode`` does for a ``RawNode`` here) while this thread
    decodes the rest and holds their results behind them. Costly payloads come in clumps (a topology's
    heartbeats; all of a Storm 0.9 root), and the helper needs a moment to start, so this thread
    decodes waiting ones itself only when it must: when more than ``WINDOW`` items (or ``WINDOW_BYTES`` of
    their payloads) are held, or when the walk has ended. Then it takes them from the back while the
    helper works from the front, and waits for the helper only when nothing is left for it to do. An
    item the helper did not answer (it died) is decoded here. If ``items`` raises, what was read before
    is yielded first, as without a helper."""
    if helper is None:
        for item in items:
            yield item, decode(item)
        return
    held: deque[list[Any]] = deque()  # [item, state, value], in walk order
    held_bytes = 0  # of the held items' payloads
    waiting: deque[list[Any]] = deque()  # the held entries still _WAITING (or no longer: skipped), in order
    seen = 0

    def feed() -> None:
        helper.collect()
        while waiting and (waiting[0][1] != _WAITING or helper.free):
            entry = waiting[0]
            if entry[1] == _WAITING:
                ticket = helper.submit(entry[0], options)
                if ticket is None and not helper.given_up and helper.busy:
                    return  # no room in the helper's stdin now: it waits for the answers to be read
                entry[1:] = [_DONE, decode(entry[0])] if ticket is None else [_SENT, ticket]
            waiting.popleft()

    def over() -> bool:
        return len(held) > limit or held_bytes > byte_limit

    def released(must: bool) -> Iterator[tuple[Any, Any]]:
        """The held items that can go, in order; with ``must``, every one over ``WINDOW`` or
        ``WINDOW_BYTES`` (all of them when the walk has ended: both are then -1)."""
        nonlocal held_bytes
        while held:
            item, state, value = head = held[0]
            if state == _SENT and not helper.ready(value) and must:
                feed()
                if not helper.ready(value):
                    while waiting and waiting[-1][1] != _WAITING:
                        waiting.pop()
                    if waiting:  # rather than wait for the helper, decode what it has not taken, from the back
                        last = waiting.pop()
                        last[1:] = [_DONE, decode(last[0])]
                        continue
            if state == _DONE:
                pass
            elif state == _SENT and (helper.ready(value) or must):
                answer = helper.result(value)
                value = decode(item) if answer is None else answer
            elif state == _WAITING and (must or helper.given_up):
                head[1] = _DONE  # taken out of the waiting line
                value = decode(item)
            else:
                return
            held.popleft()
            held_bytes -= _size(item)
            yield item, value
            must = must and over()

    limit, byte_limit = WINDOW, WINDOW_BYTES
    also_costly = costly_in(options)
    try:
        for item in items:
            if type(item) is RawNode and (costly(item.data) or (also_costly is not None and also_costly(item))):
                seen += 1
                if seen > START_AFTER and not helper.given_up:
                    entry = [item, _WAITING, None]
                    held.append(entry)
                    waiting.append(entry)
                else:
                    held.append([item, _DONE, decode(item)])
            elif held:
                held.append([item, _DONE, decode(item)])
            else:
                yield item, decode(item)
                continue
            held_bytes += _size(item)
            if len(held) % _POLL_EVERY == 1 or waiting:
                feed()
            yield from released(must=over())
        limit = byte_limit = -1
        yield from released(must=True)
    except Exception:  # the source failed: what it read before comes out first, then its error
        limit = byte_limit = -1
        yield from released(must=True)
        raise
    finally:
        if held:  # abandoned (or interrupted): the helper's answers would go stale
            helper.close()


def _size(item: Any) -> int:
    """The payload bytes of a walked item (none for an unreadable one)."""
    return len(item.data or b"") if type(item) is RawNode else 0


def serve(requests: Any, answers: Any) -> None:
    """The helper's loop: the decode function first, then ``decode(raw, **options)`` for each request,
    answered in order; it ends when the walk closes stdin."""
    try:
        decode = requests.recv()
    except EOFError:
        return
    while True:
        try:
            ticket, raw, options = requests.recv()
        except EOFError:
            return
        answers.send((ticket, decode(raw, **options)))


def main() -> None:
    """The helper process: requests on stdin, answers on stdout."""
    import signal
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the walk's to handle; it closes our stdin
    serve(Connection(os.dup(0), writable=False), Connection(os.dup(1), readable=False))
