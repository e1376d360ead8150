"""The ``zkstorm`` group: global options, the one error → exit-code handler, logging, and the helpers
every command shares (the format option, opening the cluster model, emitting rows, warnings).

A command is options, one call into the model (``zkstorm.model``), one emit. Heavy modules (kazoo,
rich, pyarrow, the decoders) are imported inside the commands so that ``zkstorm --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, NoReturn

import click

from .. import __version__
from ..errors import ExitCode, Interrupted, UsageError, ZkstormError

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


def say(message: str) -> None:
    """One line on stderr, ``zkstorm: message``. Messages quote ZooKeeper's paths and names, so they are
    shown as every value is (``render.visible``: control characters as escapes); rich is loaded only
    when there is something to say."""
    from ..render import visible

    click.echo(f"zkstorm: {visible(message)}", err=True)


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
    at: int | None = None  # --at: epoch ms
    best_effort: bool = False
    wide: bool = False  # tables show every column, folding long values, instead of fitting the terminal
    opened: Any = None  # the cluster of this command, for its as-of time and what it could not read

    def cluster(self, *, verify_digest: bool = False) -> Any:
        """The cluster model of this command, on the ensemble or on ZooKeeper's files (``--from-files``;
        a whole-tree read then checks the replayed tree against the server's digest when
        ``verify_digest``). Use it as a context manager."""
        from ..helper import wanted
        from ..model import Cluster

        self.opened = cluster = Cluster(
            self.source(verify_digest=verify_digest),
            storm_root=_root(self.storm_root),
            kafka_root=_root(self.kafka_root),
            show_secrets=self.show_secrets,
            decode_helper=wanted(),
        )
        where = " ".join(self.from_files) if self.from_files else self.zk
        # the files source counts a whole-tree read when it ends (a counter per node costs its speed)
        count = None if self.from_files else (lambda: cluster.stats.znodes)
        start_progress(f"reading {where}", count, "znodes")
        return cluster

    def source(self, *, verify_digest: bool = False) -> Any:
        from ..sources.live import Credentials, ReadOnlySession, TlsOptions, ZkTarget

        if self.from_files:
            from ..sources.files.source import FileSource

            return FileSource(
                self.from_files,
                at_zxid=self.at_zxid,
                at_time_ms=self.at,
                best_effort=self.best_effort,
                verify_digest=verify_digest,
            )
        if self.at_zxid is not None or self.at is not None or self.best_effort:
            raise UsageError("--at, --at-zxid and --best-effort apply only with --from-files")
        target = ZkTarget.parse(self.zk)
        credentials = Credentials.from_env(scheme=self.auth)
        tls = None
        if self.tls or self.tls_ca or self.tls_cert:
            tls = TlsOptions(
                ca=self.tls_ca,
                certfile=self.tls_cert,
                keyfile=self.tls_key,
                keyfile_password=os.environ.get("ZKSTORM_TLS_KEY_PASSWORD"),
            )
        return ReadOnlySession(target, timeout=self.timeout, credentials=credentials, tls=tls)

    def source_problems(self) -> list[str]:
        plan = getattr(self.opened.source, "plan", None) if self.opened is not None else None
        return list(plan.problems) if plan is not None else []


def _root(value: str) -> str:
    if not value.startswith("/"):
        raise click.BadParameter(f"roots start with '/': {value!r}")
    return value.rstrip("/") or "/"


class _ZxidType(click.ParamType):
    name = "zxid"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            zxid = int(value, 0) if str(value).lower().startswith("0x") else int(value)
        except ValueError:
            self.fail(f"{value!r} is not a zxid (hex 0x1c8 or decimal 456)", param, ctx)
        if zxid < 0:
            self.fail("a zxid is not negative", param, ctx)
        return zxid


class TimeType(click.ParamType):
    """An ISO-8601 time, UTC unless it names its offset (``2026-01-21T03:12:04.120Z``), as epoch ms."""

    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{value!r} is not an ISO time (2026-01-21T03:12:04Z)", param, ctx)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


_progress: list[Any] = []  # the display of this command, while it shows
_quiet = False  # -v: log lines instead of a display


def start_progress(description: str, count: Any = None, unit: str = "") -> Any:
    """Show the progress of long work on stderr when it is a terminal (``zkstorm.progress``); stopped by
    whatever writes the command's result or its error."""
    from ..progress import NO_PROGRESS, terminal_progress

    stop_progress()
    progress = NO_PROGRESS if _quiet else terminal_progress()
    progress.stage(description, count, unit)
    _progress.append(progress)
    return progress


def stop_progress() -> None:
    while _progress:
        _progress.pop().stop()


class _OneStyle(logging.Formatter):
    """A logged warning or error reads as every other line zkstorm writes to stderr (``zkstorm: warning:
    …``, as ``warn_about`` words them); -v and -vv's information and debug lines also name their logger.
    Control characters are shown as escapes (a logged path or reason comes from ZooKeeper), tracebacks
    keep their lines."""

    def format(self, record: logging.LogRecord) -> str:
        from ..render import visible

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

    global _quiet
    _quiet = verbose > 0
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
    default="127.0.0.1:2181",
    show_default=True,
    help="Ensemble: host:port[,host:port…][/chroot]. Env ZKSTORM_ZK.",
)
@click.option(
    "--timeout",
    envvar="ZKSTORM_TIMEOUT",
    type=click.FloatRange(0.1, 3600),
    default=10.0,
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
    default="/storm",
    show_default=True,
    help="storm.zookeeper.root of the Storm cluster.",
)
@click.option(
    "--kafka-root", envvar="ZKSTORM_KAFKA_ROOT", default="/", show_default=True, help="Chroot of the Kafka cluster."
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
    type=_ZxidType(),
    default=None,
    help="With --from-files: replay the logs up to this zxid (hex 0x… or decimal) instead of to the end.",
)
@click.option(
    "--at",
    type=TimeType(),
    default=None,
    help="With --from-files: the state as of the last txn at or before this time (ISO, UTC unless it says "
    "otherwise), the --at-zxid of that txn.",
)
@click.option(
    "--best-effort",
    is_flag=True,
    help="With --from-files: use everything readable up to a damaged file and report the rest.",
)
@click.option("--show-secrets", is_flag=True, help="Show credentials, keys and passwords instead of redacting them.")
@click.option("--strict", is_flag=True, help="Exit 5 when any znode is unreadable or fails to decode.")
@click.option("-v", "--verbose", count=True, help="-v progress and INFO logs, -vv DEBUG (with kazoo's own logs).")
@click.pass_context
def cli(ctx: click.Context, verbose: int, **options: Any) -> None:
    """Read-only inspector for the Storm and Kafka metadata kept in ZooKeeper."""
    _setup_logging(verbose)
    ctx.obj = Settings(**options)


# --- helpers the commands share -----------------------------------------------------------------------


def format_option(*choices: str, default: str) -> Any:
    """``-f/--format`` with the command's choices, and ``--json`` as shorthand for ``-f json``."""

    def decorate(fn: Any) -> Any:
        fn = click.option("--json", "as_json", is_flag=True, help="Shorthand for --format json.")(fn)
        if "table" in choices:
            fn = click.option(
                "--wide",
                is_flag=True,
                expose_value=False,
                callback=_set_wide,
                help="Tables show every column, folding long values, instead of fitting the terminal.",
            )(fn)
        return click.option(
            "-f",
            "--format",
            "fmt",
            type=click.Choice(choices),
            default=default,
            show_default=True,
            help="Output format.",
        )(fn)

    return decorate


def _set_wide(ctx: click.Context, _param: Any, value: bool) -> None:
    settings = ctx.find_object(Settings)
    if settings is not None:
        settings.wide = value


VIEW_FORMATS = ("table", "json", "jsonl", "csv")


def stdout_console() -> Any:
    from rich.console import Console

    stop_progress()
    return Console(soft_wrap=False, highlight=False)


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


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
    problems = settings.opened.problems if settings.opened is not None else []
    count = warn_about(p for p in problems if notes or not isinstance(p, DecodeWarning))
    for problem in settings.source_problems():
        say(f"warning: {problem}")
    if (count or settings.source_problems()) and settings.strict:
        sys.exit(ExitCode.DECODE_FAILURES)


def emit_rows(
    settings: Settings,
    fmt: str,
    rows: Sequence[Any],
    primary: type,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
) -> None:
    """Write a view's rows in ``fmt``, then report the cluster's problems (``finish``)."""
    from ..output import emit

    stop_progress()
    console = stdout_console() if fmt == "table" else None
    emit(
        rows, fmt, sys.stdout, primary=primary, console=console, table_columns=columns, title=title, wide=settings.wide
    )
    finish(settings)


PROMETHEUS_FORMATS = (*VIEW_FORMATS, "prometheus")


def emit_prometheus(settings: Settings, families: Sequence[Any]) -> None:
    """Write a view's metrics as Prometheus text (with when the data was current and what could not be
    read), then report the cluster's problems on stderr (``finish``)."""
    from ..export.prometheus import exposition, read_families

    cluster = settings.opened
    assert cluster is not None  # a view ran on it
    stop_progress()
    sys.stdout.write(exposition([*read_families(cluster.now(), cluster.problems), *families]))
    finish(settings)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``2h``, ``3d``, ``1w`` → seconds."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in _UNITS else "s"
    number = value[:-1] if value[-1:] in _UNITS else value
    try:
        return float(number) * _UNITS[unit]
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a duration like 30s, 15m, 2h, 3d") from None


def parse_since(text: str, now: float) -> float:
    """A duration back from now (``2h``) or an ISO-8601 time (UTC unless it says otherwise) → epoch secs."""
    from datetime import datetime, timezone

    try:
        return now - parse_duration(text)
    except click.BadParameter:
        pass
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is neither a duration (2h) nor an ISO time (2025-07-08T10:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def elapsed_since(started: float) -> float:
    return time.monotonic() - started


def watch_option(fn: Any) -> Any:
    return click.option(
        "--watch",
        "watch_every",
        metavar="DURATION",
        help="Re-read every DURATION (10s, 1m) and show what appeared, cleared or changed, until Ctrl-C.",
    )(fn)


def watch_view(
    settings: Settings,
    fmt: str,
    every: str,
    read: Callable[[], Sequence[Any]],
    to_item: Callable[[Any], Any],
    show_first: Callable[[Sequence[Any]], None],
) -> None:
    """Run a view under ``--watch``: the first round as the view itself (a table) or as every item
    appearing (JSONL), then one line per change each round; Ctrl-C ends it with exit 130."""
    from ..output import emit
    from ..records import WatchChange
    from ..render import watch_line
    from ..watch import watch

    if fmt not in ("table", "jsonl"):
        raise click.UsageError("--watch writes a table or -f jsonl (one change per line)")
    interval = parse_duration(every)
    if interval <= 0:
        raise click.UsageError("--watch takes a positive interval, such as 10s")
    console = stdout_console()
    try:
        for round_, rows, changes in watch(read, to_item, interval_secs=interval):
            stop_progress()
            if fmt == "jsonl":
                emit(changes, "jsonl", sys.stdout, primary=WatchChange)
            elif round_ == 1:
                show_first(rows)
                console.print(f"watching every {every}; Ctrl-C stops", style="dim", highlight=False, markup=False)
            else:
                for change in changes:
                    console.print(watch_line(change))
            sys.stdout.flush()
            warn_about(settings.opened.problems if settings.opened is not None else [])
    except KeyboardInterrupt as exc:
        sys.exit(exc.exit_code if isinstance(exc, Interrupted) else ExitCode.INTERRUPTED)
