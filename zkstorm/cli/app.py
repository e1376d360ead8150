"""The ``zkstorm`` group: its global options (``context.Settings``), logging, and the one error → exit-code
handler (``ZkstormGroup``): every error a command lets escape ends as one line on stderr and its
documented exit code, never a traceback.

Heavy modules (kazoo, rich, pyarrow, the decoders) are imported inside the commands so that
``zkstorm --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from .. import __version__
from ..defaults import KAFKA_ROOT, STORM_ROOT, TIMEOUT_SECS, ZK
from ..errors import ExitCode, Interrupted, ZkstormError
from .context import Settings, quiet_progress, say, stop_progress
from .options import UtcTime, Zxid, root_path

log = logging.getLogger("zkstorm")

EXIT_CODES_HELP = """\b
Exit codes: 0 ok, 1 error, 2 usage, 3 ZooKeeper unreachable or auth refused,
4 not found, 5 decode failures or unreadable znodes (with --strict), 6 unhealthy
(with --check), 7 damaged or missing ZooKeeper files (--from-files), 130 interrupted
(Ctrl-C), 143 and 129 stopped by SIGTERM and SIGHUP (128 + the signal)."""


def _fail(message: str, code: int) -> NoReturn:
    stop_progress()
    say(message)
    sys.exit(code)


# A walk allocates millions of short-lived containers (decoded dicts, records) that reference counting
# frees, none of them in cycles: at Python's default thresholds (700, 10, 10) the cyclic collector ran
# 840 times during a snapshot of the 35k-znode benchmark tree, 0.26 s of its 2.9 s of CPU, scanning the
# records a snapshot holds for its joins again and again. A command is one short process; at these
# thresholds it collects a few times, and cycles (kazoo's exceptions, tracebacks) are still freed.
_GC_THRESHOLDS = (100_000, 20, 10)


_STOP_SIGNALS = {"SIGTERM": ExitCode.TERMINATED, "SIGHUP": ExitCode.HANGUP}


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM (systemd's stop, ``kill``) and SIGHUP stop it the way Ctrl-C does:
    ``Interrupted`` is raised in the main thread, so every ``with`` block cleans up (a snapshot's
    temporary files and its lock) instead of the process vanishing mid-write. Once: a second signal
    while that cleanup runs is ignored, so it is not cut short (SIGKILL still ends anything)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}

    def interrupt(signum: int, frame: Any) -> None:
        for number in previous:
            signal.signal(number, signal.SIG_IGN)
        name = signal.Signals(signum).name
        raise Interrupted(name, _STOP_SIGNALS[name])

    for name in _STOP_SIGNALS:
        number = getattr(signal, name, None)  # no SIGHUP on Windows
        if number is not None:
            previous[number] = signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class ZkstormGroup(click.Group):
    """Maps every escaping error to one stderr line and its documented exit code; never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Interrupted as exc:  # here, before click turns it into an Abort that prints a blank line
            _fail(f"interrupted by {exc.signal_name}", exc.exit_code)
        except BrokenPipeError:
            # The reader went away (`| head`): not an error worth a message or a failing exit code (click
            # would exit 1). Here, before click sees it: what is still buffered for stdout goes nowhere,
            # or flushing it at exit would fail again.
            stop_progress()
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.stderr.close()
            raise click.exceptions.Exit(ExitCode.OK) from None

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs.setdefault("standalone_mode", True)
        gc.set_threshold(*_GC_THRESHOLDS)
        try:
            with stop_signals_interrupt():
                return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            stop_progress()
            exc.show()
            sys.exit(ExitCode.USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
        except click.Abort as exc:
            cause = exc.__cause__  # click's Abort for a KeyboardInterrupt outside a command (while parsing)
            if isinstance(cause, Interrupted):
                _fail(f"interrupted by {cause.signal_name}", cause.exit_code)
            _fail("interrupted", ExitCode.INTERRUPTED)
        except Interrupted as exc:
            _fail(f"interrupted by {exc.signal_name}", exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", ExitCode.INTERRUPTED)
        except ZkstormError as exc:
            _fail(str(exc), exc.exit_code)
        except MemoryError:  # not a bug of ours to trace: too much data for the memory the process may use
            _fail("out of memory: the data read does not fit in the memory this process may use", ExitCode.ERROR)
        except Exception as exc:  # a bug: say so in one line; -vv shows the traceback
            from ..redact import exception_text

            log.debug("internal error", exc_info=True)
            # the message without the values it quotes: it may have choked on a secret (zkstorm.redact)
            _fail(f"internal error: {exception_text(exc)} (run with -vv for the traceback)", ExitCode.ERROR)


class _OneStyle(logging.Formatter):
    """A logged warning or error reads as every other line zkstorm writes to stderr (``zkstorm: warning:
    …``, as ``warn_about`` words them); -v and -vv's information and debug lines also name their logger.
    Control characters are shown as escapes (a logged path or reason comes from ZooKeeper), tracebacks
    keep their lines."""

    def format(self, record: logging.LogRecord) -> str:
        from ..text import visible

        message = visible(super().format(record), multiline=True)
        level = record.levelname.lower()
        if record.levelno >= logging.WARNING:
            return f"zkstorm: {level}: {message}"
        return f"zkstorm: {level} {record.name}: {message}"


def _setup_logging(verbose: int) -> None:
    """``-v`` INFO, ``-vv`` DEBUG with kazoo's own lines, on stderr. ``-vv`` output is pasted into tickets:
    the handler's ``PayloadFilter`` tells kazoo's requests and replies by type, path and size and strips
    quoted values from every traceback (``zkstorm.redact``), so no payload or credential reaches it."""
    from ..redact import PayloadFilter

    quiet_progress(verbose > 0)
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneStyle())
    handler.addFilter(PayloadFilter())
    logging.basicConfig(level=level, handlers=[handler])
    # kazoo reports every reconnect at WARNING; that is our business to summarise, not its.
    logging.getLogger("kazoo").setLevel(logging.DEBUG if verbose >= 2 else logging.CRITICAL)
    # py4j's DEBUG is every call between Python and Spark's JVM (tens of thousands of lines for one history
    # run): plumbing, not what -vv is for
    logging.getLogger("py4j").setLevel(max(level, logging.INFO))


@click.group(cls=ZkstormGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="zkstorm")
@click.option(
    "--zk",
    envvar="ZKSTORM_ZK",
    default=ZK,
    show_default=True,
    help="Ensemble: host:port[,host:port…][/chroot]. Env ZKSTORM_ZK.",
)
@click.option(
    "--timeout",
    envvar="ZKSTORM_TIMEOUT",
    type=click.FloatRange(0.1, 3600),
    default=TIMEOUT_SECS,
    show_default=True,
    help="Seconds for the whole connection attempt (host lookups included), then to wait for any answer.",
)
@click.option(
    "--auth",
    envvar="ZKSTORM_AUTH",
    type=click.Choice(["none", "digest", "sasl-digest", "sasl-gssapi"]),
    default=None,
    help="Authentication; user and password come from ZKSTORM_USER and "
    "ZKSTORM_PASSWORD or ZKSTORM_PASSWORD_FILE, never from argv.",
)
@click.option("--tls", is_flag=True, envvar="ZKSTORM_TLS", help="Connect with TLS (system CAs unless --tls-ca).")
@click.option("--tls-ca", envvar="ZKSTORM_TLS_CA", type=click.Path(exists=True, dir_okay=False), help="CA bundle.")
@click.option(
    "--tls-cert",
    envvar="ZKSTORM_TLS_CERT",
    type=click.Path(exists=True, dir_okay=False),
    help="Client certificate (PEM).",
)
@click.option(
    "--tls-key",
    envvar="ZKSTORM_TLS_KEY",
    type=click.Path(exists=True, dir_okay=False),
    help="Client key (PEM); its password from ZKSTORM_TLS_KEY_PASSWORD.",
)
@click.option(
    "--storm-root",
    envvar="ZKSTORM_STORM_ROOT",
    default=STORM_ROOT,
    show_default=True,
    callback=root_path,
    help="storm.zookeeper.root of the Storm cluster.",
)
@click.option(
    "--kafka-root",
    envvar="ZKSTORM_KAFKA_ROOT",
    default=KAFKA_ROOT,
    show_default=True,
    callback=root_path,
    help="Chroot of the Kafka cluster.",
)
@click.option(
    "--from-files",
    "from_files",
    multiple=True,
    envvar="ZKSTORM_FROM_FILES",
    type=click.Path(exists=True),
    help="Read ZooKeeper's own files instead of the ensemble: a dataDir or its version-2 folder, a "
    "snapshot file, or a snapshot and log files (repeat the option). Env ZKSTORM_FROM_FILES.",
)
@click.option(
    "--at-zxid",
    type=Zxid(),
    default=None,
    help="With --from-files: replay the logs up to this zxid (hex 0x… or decimal) instead of to the end.",
)
@click.option(
    "--at",
    type=UtcTime(),
    default=None,
    help="With --from-files: the state as of the last txn at or before this time (ISO, UTC unless it says "
    "otherwise), the --at-zxid of that txn; with --from-kraft, of the last record appended by then.",
)
@click.option(
    "--best-effort",
    is_flag=True,
    help="With --from-files or --from-kraft: use everything readable up to a damaged file and report the rest.",
)
@click.option(
    "--from-kraft",
    "from_kraft",
    envvar="ZKSTORM_FROM_KRAFT",
    type=click.Path(exists=True, file_okay=False),
    help="Read a KRaft controller's or broker's metadata folder (__cluster_metadata-0: snapshots and log) "
    "instead of ZooKeeper; its Kafka cluster is under the root kraft:. Env ZKSTORM_FROM_KRAFT.",
)
@click.option(
    "--at-offset",
    type=click.IntRange(0),
    default=None,
    help="With --from-kraft: the state as of the record at this offset of the metadata log.",
)
@click.option("--show-secrets", is_flag=True, help="Show credentials, keys and passwords instead of redacting them.")
@click.option("--strict", is_flag=True, help="Exit 5 when any znode is unreadable or fails to decode.")
@click.option("-v", "--verbose", count=True, help="-v progress and INFO logs, -vv DEBUG (with kazoo's own logs).")
@click.pass_context
def cli(ctx: click.Context, verbose: int, **options: Any) -> None:
    """Read-only inspector for the Storm and Kafka metadata kept in ZooKeeper."""
    _setup_logging(verbose)
    ctx.obj = Settings(**options)
