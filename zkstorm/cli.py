"""The ``zkstorm`` command line: click commands, the one error → exit-code handler, logging setup.

Every read command is "collect records, then emit". Heavy modules (kazoo, rich, pyarrow) are imported
inside the commands so that ``zkstorm --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import click

from . import __version__
from .errors import ExitCode, UsageError, ZkstormError

log = logging.getLogger("zkstorm")

EXIT_CODES_HELP = """\b
Exit codes: 0 ok, 1 error, 2 usage, 3 ZooKeeper unreachable or auth refused,
4 not found, 5 decode failures or unreadable znodes (with --strict), 6 unhealthy
(with --check), 7 damaged or missing ZooKeeper files (--from-files), 130 interrupted."""


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"zkstorm: {message}", err=True)
    sys.exit(code)


class ZkstormGroup(click.Group):
    """Maps every escaping error to one stderr line and its documented exit code; never a traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs.setdefault("standalone_mode", True)
        try:
            return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(ExitCode.USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
        except click.Abort:
            _fail("interrupted", ExitCode.INTERRUPTED)
        except KeyboardInterrupt:
            _fail("interrupted", ExitCode.INTERRUPTED)
        except ZkstormError as exc:
            _fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (`| head`): not an error worth a message
            sys.exit(ExitCode.OK)
        except Exception as exc:  # a bug: say so in one line; -vv shows the traceback
            log.debug("internal error", exc_info=True)
            _fail(f"internal error: {type(exc).__name__}: {exc} (run with -vv for the traceback)", ExitCode.ERROR)


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
    best_effort: bool = False
    opened: Any = None  # the source of this command, for its as-of time and best-effort problems

    def session(self, *, verify_digest: bool = False) -> Any:
        """The tree source of this command: the ensemble, or ZooKeeper's files with --from-files (whose
        whole-tree reads check the replayed tree against the server's digest when ``verify_digest``)."""
        self.opened = self._source(verify_digest)
        return self.opened

    def now(self) -> float:
        """The time the data is as of: now for a live ensemble, the last replayed txn for files."""
        return self.opened.as_of() if self.opened is not None else time.time()

    def source_problems(self) -> list[str]:
        plan = getattr(self.opened, "plan", None)
        return list(plan.problems) if plan is not None else []

    def _source(self, verify_digest: bool) -> Any:
        from .zk import Credentials, ReadOnlySession, TlsOptions, ZkTarget

        if self.from_files:
            from .zkfiles.source import FileSource

            return FileSource(
                self.from_files, at_zxid=self.at_zxid, best_effort=self.best_effort, verify_digest=verify_digest
            )
        if self.at_zxid is not None or self.best_effort:
            raise UsageError("--at-zxid and --best-effort apply only with --from-files")
        target = ZkTarget.parse(self.zk)
        credentials = Credentials.from_env(scheme=self.auth)
        tls = None
        if self.tls or self.tls_ca or self.tls_cert:
            import os

            tls = TlsOptions(
                ca=self.tls_ca,
                certfile=self.tls_cert,
                keyfile=self.tls_key,
                keyfile_password=os.environ.get("ZKSTORM_TLS_KEY_PASSWORD"),
            )
        return ReadOnlySession(target, timeout=self.timeout, credentials=credentials, tls=tls)

    def roots(self) -> Any:
        from .paths import Roots

        return Roots(storm=(_root(self.storm_root),), kafka=(_root(self.kafka_root),))


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


_ZXID = _ZxidType()


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="zkstorm: %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # kazoo reports every reconnect at WARNING; that is our business to summarise, not its.
    logging.getLogger("kazoo").setLevel(logging.DEBUG if verbose >= 2 else logging.CRITICAL)


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
    help="Seconds to connect, and to wait for any answer.",
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
    type=_ZXID,
    default=None,
    help="With --from-files: replay the logs up to this zxid (hex 0x… or decimal) instead of to the end.",
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


def _format_option(*choices: str, default: str) -> Any:
    def decorate(fn: Any) -> Any:
        fn = click.option("--json", "as_json", is_flag=True, help="Shorthand for --format json.")(fn)
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


def _stdout_console() -> Any:
    from rich.console import Console

    return Console(soft_wrap=False, highlight=False)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _warn_about(others: list[Any]) -> int:
    """Report unreadable and undecodable znodes on stderr, one line each; return how many."""
    from .records import DecodeFailure, DecodeWarning, Unreadable

    count = 0
    for record in others:
        if isinstance(record, Unreadable):
            click.echo(f"zkstorm: warning: {record.path}: unreadable ({record.reason})", err=True)
            count += 1
        elif isinstance(record, DecodeFailure):
            click.echo(
                f"zkstorm: warning: {record.path}: cannot decode {record.record_kind}: {record.reason}", err=True
            )
            count += 1
        elif isinstance(record, DecodeWarning):  # decoded the way Kafka would; worth a look, not a failure
            click.echo(f"zkstorm: note: {record.path}: {record.warning}: {record.detail}", err=True)
    return count


def _finish(settings: Settings, problems: int) -> None:
    """Report what a best-effort read of files could not use; exit 5 with --strict if anything failed."""
    for problem in settings.source_problems():
        click.echo(f"zkstorm: warning: {problem}", err=True)
    if (problems or settings.source_problems()) and settings.strict:
        sys.exit(ExitCode.DECODE_FAILURES)


@cli.command()
@click.argument("path", default="/")
@click.option("--depth", type=click.IntRange(0), default=None, help="Stop this many levels below PATH.")
@_format_option("tree", "json", "jsonl", "csv", default="tree")
@click.pass_obj
def tree(settings: Settings, path: str, depth: int | None, fmt: str, as_json: bool) -> None:
    """Walk the tree from PATH: child counts, sizes, ephemeral nodes, decoded summaries."""
    from .collect import walk
    from .records import DecodeFailure, Unreadable, Znode
    from .zk import WalkStats

    fmt = "json" if as_json else fmt
    stats = WalkStats()
    started = time.monotonic()
    problems: list[Any] = []
    with settings.session() as session:
        records = walk(
            session, path, depth=depth, roots=settings.roots(), show_secrets=settings.show_secrets, stats=stats
        )
        if fmt == "tree":
            from .render import znode_tree

            znodes = []
            for record in records:
                if isinstance(record, Znode):
                    znodes.append(record)
                elif isinstance(record, Unreadable | DecodeFailure):
                    problems.append(record)
            rendered = znode_tree(znodes, [p for p in problems if isinstance(p, Unreadable)])
            if rendered is not None:
                _stdout_console().print(rendered)
        else:
            from .output import emit

            emit(_only_tree_records(records, problems), fmt, sys.stdout, primary=Znode)
    log.info(
        "walked %d znodes in %.2fs (%d requests, %d vanished, %d unreadable, %d retries)",
        stats.znodes,
        time.monotonic() - started,
        stats.requests,
        stats.vanished,
        stats.unreadable,
        stats.retries,
    )
    _finish(settings, _warn_about(problems))


def _only_tree_records(records: Iterator[Any], problems: list[Any]) -> Iterator[Any]:
    """``tree`` outputs znodes and failures (also noted in ``problems`` for the stderr warnings);
    decoded records belong to the per-system commands."""
    from .records import DecodeFailure, Unreadable, Znode

    for record in records:
        if isinstance(record, Znode):
            yield record
        elif isinstance(record, Unreadable | DecodeFailure):
            problems.append(record)
            yield record


@cli.command()
@click.argument("path")
@click.option("--raw", is_flag=True, help="Add a hexdump of the bytes.")
@_format_option("table", "json", default="table")
@click.pass_obj
def get(settings: Settings, path: str, raw: bool, fmt: str, as_json: bool) -> None:
    """Show one znode: its stat, encoding and decoded value."""
    from .collect import decode_node
    from .paths import is_secret_path
    from .records import DecodeFailure
    from .schema import kind_name, to_jsonable

    fmt = "json" if as_json else fmt
    roots = settings.roots()
    with settings.session() as session:
        node = session.get(path)
    znode, records = decode_node(node, roots=roots, show_secrets=settings.show_secrets)
    hidden = is_secret_path(znode.path) and not settings.show_secrets
    value = None if records or hidden else _plain_value(node.data, znode.encoding)
    raw_hex = None
    if raw and node.data:
        raw_hex = "(hidden: this znode holds secrets; add --show-secrets)" if hidden else node.data.hex()
    if fmt == "json":
        import json

        document = {
            "znode": to_jsonable(znode),
            "records": [{"kind": kind_name(type(r)), **to_jsonable(r)} for r in records],
            "value": value,
            "redacted": hidden and not records,
            "raw_hex": raw_hex,
        }
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        _print_get_table(znode, records, value, hidden, node.data if raw and not hidden else None, raw_hex)
    _finish(settings, _warn_about([r for r in records if isinstance(r, DecodeFailure)]))


def _plain_value(data: bytes | None, encoding: str) -> Any:
    """An undecoded payload shown as what it is: parsed JSON, text, or nothing for binary."""
    if not data:
        return None
    if encoding == "json":
        import json

        text = data.decode("utf-8-sig")
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    if encoding == "text":
        return data.decode("utf-8-sig")
    return None


def _print_get_table(
    znode: Any, records: list[Any], value: Any, hidden: bool, data: bytes | None, raw_hex: str | None
) -> None:
    from .render import hexdump, key_value_table, record_table
    from .schema import to_jsonable

    console = _stdout_console()
    console.print(key_value_table(to_jsonable(znode).items()))
    for kind in dict.fromkeys(type(r) for r in records):
        console.print(record_table([r for r in records if type(r) is kind], kind, title=kind.__name__))
    if hidden and not records:
        console.print("value: (redacted: this znode holds secrets; add --show-secrets)")
    elif value is not None:
        import json

        console.print(
            value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False), markup=False
        )
    if data is not None:
        console.print(hexdump(data), markup=False)
    elif raw_hex:
        console.print(raw_hex, markup=False)


# --- Storm --------------------------------------------------------------------------------------------

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


def _storm_records(settings: Settings, session: Any, *subtrees: str, detail: bool = False) -> list[Any]:
    from .collect import records_under

    root = settings.roots().storm[0]
    out: list[Any] = []
    for sub in subtrees:
        path = f"{root}/{sub}" if sub else root
        out.extend(
            records_under(session, path, roots=settings.roots(), show_secrets=settings.show_secrets, detail=detail)
        )
    return out


def _split(records: list[Any], kind: type) -> tuple[list[Any], list[Any]]:
    from .records import DecodeFailure, Unreadable

    wanted = [r for r in records if isinstance(r, kind)]
    problems = [r for r in records if isinstance(r, DecodeFailure | Unreadable)]
    return wanted, problems


def _emit_view(
    settings: Settings,
    fmt: str,
    records: list[Any],
    primary: type,
    problems: list[Any],
    table_columns: list[str] | None = None,
    title: str | None = None,
) -> None:
    from .output import emit

    console = _stdout_console() if fmt == "table" else None
    emit(records, fmt, sys.stdout, primary=primary, console=console, table_columns=table_columns, title=title)
    _finish(settings, _warn_about(problems))


@cli.command()
@click.argument("topology")
@click.option("--component", "-c", default=None, help="Only this component (its id, plain or URL-encoded).")
@click.option("--since", default=None, help="Only errors since a duration ago (2h, 3d) or an ISO time.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most N errors (newest first).")
@click.option("--full", is_flag=True, help="Whole stack traces instead of first lines.")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def errors(
    settings: Settings,
    topology: str,
    component: str | None,
    since: str | None,
    limit: int | None,
    full: bool,
    fmt: str,
    as_json: bool,
) -> None:
    """Every error Storm keeps for TOPOLOGY (an id or a name), newest first.

    Storm keeps the last 10 errors per component; in 2.x they are ephemeral and vanish with the worker
    that reported them, while each component's -last-error survives (shown when its e-node is gone).
    """
    from urllib.parse import unquote_plus

    from .collect import resolve_topology
    from .records import StormError
    from .render import errors_table

    fmt = "json" if as_json else fmt
    root = settings.roots().storm[0]
    with settings.session() as session:
        now = settings.now()
        threshold = parse_since(since, now) if since else None
        topology_id = resolve_topology(session, root, topology)
        found, problems = _split(_storm_records(settings, session, f"errors/{topology_id}"), StormError)
    shown = _merge_last_errors(found)
    if component is not None:
        wanted = {component, unquote_plus(component)}
        shown = [e for e in shown if e.component in wanted]
    if threshold is not None:
        shown = [e for e in shown if e.time_secs >= threshold]
    shown.sort(key=lambda e: (e.time_secs, e.sequence if e.sequence is not None else -1), reverse=True)
    if limit is not None:
        shown = shown[:limit]
    if fmt == "table":
        title = f"{topology_id}: {len(shown)} stored error{'s' if len(shown) != 1 else ''}"
        console = _stdout_console()
        console.print(errors_table(shown, now, full=full, title=title, width=console.width))
        _finish(settings, _warn_about(problems))
    else:
        _emit_view(settings, fmt, shown, StormError, problems)


def _merge_last_errors(found: list[Any]) -> list[Any]:
    """Mark the e-node that a component's -last-error repeats; keep a -last-error only when its e-node
    is gone (2.x e-nodes are ephemeral), so no error is listed twice and none is lost."""
    import dataclasses

    nodes = [e for e in found if e.sequence is not None]
    out = list(nodes)
    for last in (e for e in found if e.sequence is None):
        twins = [
            e for e in nodes if (e.component, e.time_secs, e.error) == (last.component, last.time_secs, last.error)
        ]
        if twins:
            newest = max(twins, key=lambda e: e.sequence)
            out[out.index(newest)] = dataclasses.replace(newest, last_error=True)
        else:
            out.append(last)
    return out


@cli.group()
def storm() -> None:
    """Storm views: topologies, supervisors, workers, assignments, nimbuses, roots."""


def _storm_view(settings: Settings, fmt: str, subtree: str, kind: type, sort_key: Any, columns: list[str]) -> None:
    """A view that is one subtree's records of one kind, sorted: walk, split off failures, emit."""
    with settings.session() as session:
        rows, problems = _split(_storm_records(settings, session, subtree), kind)
    _emit_view(settings, fmt, sorted(rows, key=sort_key), kind, problems, columns)


@storm.command("topologies")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_topologies(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every topology with its status, workers and executors."""
    from .records import StormTopology

    columns = [
        "name",
        "status",
        "num_workers",
        "num_executors",
        "launched_at",
        "action",
        "action_wait_secs",
        "owner",
        "topology_id",
    ]
    _storm_view(
        settings, "json" if as_json else fmt, "storms", StormTopology, lambda t: (t.name, t.topology_id), columns
    )


@storm.command("supervisors")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_supervisors(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every live supervisor (their znodes are ephemeral) with its slots and capacity."""
    from .records import StormSupervisor

    columns = [
        "hostname",
        "used_ports",
        "ports",
        "uptime_secs",
        "version",
        "memory_capacity_mb",
        "cpu_capacity_pct",
        "supervisor_id",
    ]
    _storm_view(
        settings,
        "json" if as_json else fmt,
        "supervisors",
        StormSupervisor,
        lambda s: (s.hostname, s.supervisor_id),
        columns,
    )


@storm.command("workers")
@click.argument("topology", required=False)
@click.option(
    "--stale-after",
    default="30s",
    show_default=True,
    help="A heartbeat older than this is stale (nimbus.task.timeout.secs is 30 by default).",
)
@click.option("--stale", "only_stale", is_flag=True, help="Only stale workers.")
@click.option(
    "--stats",
    "with_stats",
    is_flag=True,
    help="Instead: every executor counter of the heartbeats (executor, window, stream, metric, value).",
)
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_workers(
    settings: Settings,
    topology: str | None,
    stale_after: str,
    only_stale: bool,
    with_stats: bool,
    fmt: str,
    as_json: bool,
) -> None:
    """Worker heartbeats with their age and a stale flag (of TOPOLOGY, or of every topology)."""
    from .collect import resolve_topology
    from .health import with_heartbeat_age
    from .records import StormExecutor, StormSupervisor, StormWorker

    limit = parse_duration(stale_after)
    root = settings.roots().storm[0]
    with settings.session() as session:
        topology_id = resolve_topology(session, root, topology) if topology else None
        scope = f"/{topology_id}" if topology_id else ""
        if with_stats:
            from .records import StormExecutorStat

            stats, problems = _split(
                _storm_records(settings, session, f"workerbeats{scope}", detail=True), StormExecutorStat
            )
            _emit_view(
                settings,
                "json" if as_json else fmt,
                stats,
                StormExecutorStat,
                problems,
                [
                    "topology_id",
                    "node",
                    "port",
                    "start_task",
                    "end_task",
                    "executor_type",
                    "metric",
                    "window",
                    "stream",
                    "source_component",
                    "value",
                ],
            )
            return
        records = _storm_records(settings, session, f"workerbeats{scope}", f"assignments{scope}", "supervisors")
    now = settings.now()
    workers, problems = _split(records, StormWorker)
    hosts = {r.node: r.host for r in records if isinstance(r, StormExecutor) and r.host}
    hosts.update({r.supervisor_id: r.hostname for r in records if isinstance(r, StormSupervisor)})
    import dataclasses

    rows = with_heartbeat_age([dataclasses.replace(w, host=hosts.get(w.node)) for w in workers], now, limit)
    if only_stale:
        rows = [w for w in rows if w.stale]
    rows.sort(key=lambda w: (w.topology_id, w.host or w.node, w.port))
    _emit_view(
        settings,
        "json" if as_json else fmt,
        rows,
        StormWorker,
        problems,
        ["host", "port", "age_secs", "stale", "uptime_secs", "num_executor_stats", "topology_id", "node"],
    )


@storm.command("assignment")
@click.argument("topology")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_assignment(settings: Settings, topology: str, fmt: str, as_json: bool) -> None:
    """Where every executor of TOPOLOGY runs: task range, host, supervisor, port, start time."""
    from .collect import resolve_topology
    from .errors import NotFoundError
    from .records import StormExecutor

    root = settings.roots().storm[0]
    with settings.session() as session:
        topology_id = resolve_topology(session, root, topology)
        rows, problems = _split(_storm_records(settings, session, f"assignments/{topology_id}"), StormExecutor)
    if not rows and not problems:
        raise NotFoundError(f"topology {topology_id} has no assignment")
    _emit_view(
        settings,
        "json" if as_json else fmt,
        rows,
        StormExecutor,
        problems,
        ["start_task", "end_task", "host", "port", "start_time_secs", "mem_on_heap_mb", "cpu_pct", "node"],
        title=topology_id,
    )


@storm.command("nimbus")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_nimbus(settings: Settings, fmt: str, as_json: bool) -> None:
    """Registered nimbuses, and which one leads (the lowest leader-latch sequence)."""
    import dataclasses

    from .records import StormLeaderInfo, StormLeaderLatch, StormNimbus

    root = settings.roots().storm[0]
    with settings.session() as session:
        records = _storm_records(settings, session, "nimbuses", "leader-lock")
        for path in (f"{root}/leader-info", f"{root}{root}/leader-info"):
            records += _storm_records(settings, session, path[len(root) + 1 :])
    nimbuses, problems = _split(records, StormNimbus)
    latches = sorted((r for r in records if isinstance(r, StormLeaderLatch)), key=lambda r: r.sequence)
    leader = latches[0].participant_id if latches else None
    if leader is None:
        info = next((r for r in records if isinstance(r, StormLeaderInfo)), None)
        leader = f"{info.host}:{info.port}" if info else None

    def leads(n: StormNimbus) -> bool | None:
        if leader is None:
            return None
        host, _, rest = leader.partition(":")
        return host == n.host and rest.split(":")[0] == str(n.port)

    rows = sorted((dataclasses.replace(n, is_leader=leads(n)) for n in nimbuses), key=lambda n: n.host)
    _emit_view(
        settings,
        "json" if as_json else fmt,
        rows,
        StormNimbus,
        problems,
        ["host", "port", "tls_port", "version", "started_secs", "is_leader"],
    )


@storm.command("roots")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def storm_roots_command(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every Storm root on the ensemble (nodes that hold both storms and assignments)."""
    from .collect import storm_roots
    from .records import StormRoot

    with settings.session() as session:
        rows = []
        for root in storm_roots(session):
            rows.append(StormRoot(root=root, num_topologies=len(session.get_children(f"{root}/storms"))))
    _emit_view(settings, "json" if as_json else fmt, rows, StormRoot, [])


# --- Kafka --------------------------------------------------------------------------------------------


def _kafka_state(settings: Settings) -> Any:
    from .collect import collect_kafka

    with settings.session() as session:
        return collect_kafka(session, settings.roots().kafka[0], show_secrets=settings.show_secrets)


def _all_brokers(state: Any) -> list[Any]:
    """Registered brokers, plus the ones replica lists still name: those are dead or decommissioned."""
    from .records import KafkaBroker

    rows = list(state.brokers)
    known = {b.broker_id for b in rows}
    named = {b for a in state.assignments for b in a.replicas}
    for broker_id in sorted((named | state.registered) - known):
        rows.append(
            KafkaBroker(
                broker_id=broker_id,
                alive=broker_id in state.registered,
                version=None,
                host=None,
                port=None,
                rack=None,
                jmx_port=None,
                timestamp_ms=None,
                registered_at=None,
                endpoints=(),
                listener_protocols=(),
                features=(),
                broker_epoch=None,
                session_id=None,
            )
        )
    return sorted(rows, key=lambda b: b.broker_id)


def _other(state: Any, kind: type) -> list[Any]:
    return [r for r in state.other if isinstance(r, kind)]


_DEFAULT_MIN_ISR = click.option(
    "--default-min-isr",
    type=click.IntRange(1),
    default=None,
    help="The brokers' min.insync.replicas (server.properties is not in ZooKeeper; else 1 is assumed).",
)


@cli.group()
def kafka() -> None:
    """Kafka views: brokers, topics, partitions, controller, configs, ACLs, reassignments, consumers, health."""


@kafka.command("brokers")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_brokers(settings: Settings, fmt: str, as_json: bool) -> None:
    """Registered brokers, and unregistered ones still named in replica lists (alive = no)."""
    from .records import KafkaBroker

    state = _kafka_state(settings)
    columns = ["broker_id", "alive", "host", "port", "rack", "version", "registered_at", "endpoints"]
    _emit_view(settings, "json" if as_json else fmt, _all_brokers(state), KafkaBroker, state.problems, columns)


@kafka.command("topics")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_topics(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every topic: partitions, replication factor, topic id, reassignments in flight."""
    from .records import KafkaTopic

    state = _kafka_state(settings)
    rows = sorted(state.topics, key=lambda t: t.topic)
    columns = ["topic", "partition_count", "replication_factor", "reassigning_partitions", "version", "topic_id"]
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaTopic, state.problems, columns)


@kafka.command("partitions")
@click.option("--topic", "-t", default=None, help="Only this topic.")
@click.option("--offline", is_flag=True, help="Only partitions without a live leader.")
@click.option("--under-replicated", is_flag=True, help="Only partitions whose ISR is smaller than their replicas.")
@click.option("--under-min-isr", is_flag=True, help="Only partitions below min.insync.replicas (or leaderless).")
@_DEFAULT_MIN_ISR
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_partitions_command(
    settings: Settings,
    topic: str | None,
    offline: bool,
    under_replicated: bool,
    under_min_isr: bool,
    default_min_isr: int | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Partitions with leader, ISR and health as kafka-topics --describe would judge them."""
    from .health import kafka_partitions
    from .records import KafkaPartition

    state = _kafka_state(settings)
    rows = kafka_partitions(state, default_min_isr)
    if topic is not None:
        rows = [p for p in rows if p.topic == topic]
    if offline:
        rows = [p for p in rows if p.offline]
    if under_replicated:
        rows = [p for p in rows if p.under_replicated]
    if under_min_isr:
        rows = [p for p in rows if p.under_min_isr]
    columns = [
        "topic",
        "partition",
        "leader",
        "isr",
        "replicas",
        "health",
        "min_isr",
        "leader_epoch",
        "adding_replicas",
        "removing_replicas",
    ]
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaPartition, state.problems, columns)


@kafka.command("controller")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_controller(settings: Settings, fmt: str, as_json: bool) -> None:
    """The active controller and the controller epoch."""
    from .errors import NotFoundError
    from .records import KafkaController

    state = _kafka_state(settings)
    if state.controller is None:
        raise NotFoundError("no /controller znode: an election is in progress, or no broker is alive")
    epoch = state.controller_epoch.epoch if state.controller_epoch else "?"
    _emit_view(
        settings,
        "json" if as_json else fmt,
        [state.controller],
        KafkaController,
        state.problems,
        title=f"controller epoch {epoch}",
    )


@kafka.command("configs")
@click.option("--type", "entity_type", default=None, help="topics, brokers, users, clients, ips or users/clients.")
@click.option("--name", "entity_name", default=None, help="Only this entity.")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_configs(
    settings: Settings, entity_type: str | None, entity_name: str | None, fmt: str, as_json: bool
) -> None:
    """Dynamic configs and overrides; SCRAM credentials and passwords redacted unless --show-secrets."""
    from .records import KafkaConfig

    state = _kafka_state(settings)
    rows = [
        c
        for c in state.configs
        if (entity_type is None or c.entity_type == entity_type)
        and (entity_name is None or c.entity_name == entity_name)
    ]
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaConfig, state.problems)


@kafka.command("acls")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_acls(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every ACL, literal and prefixed."""
    from .records import KafkaAcl

    state = _kafka_state(settings)
    rows = sorted(_other(state, KafkaAcl), key=lambda a: (a.resource_type, a.resource_name, a.principal, a.operation))
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaAcl, state.problems)


@kafka.command("reassignments")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_reassignments(settings: Settings, fmt: str, as_json: bool) -> None:
    """Partitions being moved (KIP-455 in the topic znodes, or the legacy admin znode)."""
    from .records import KafkaReassignment

    state = _kafka_state(settings)
    rows = sorted(state.reassignments, key=lambda r: (r.topic, r.partition))
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaReassignment, state.problems)


@kafka.command("consumers")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_consumers(settings: Settings, fmt: str, as_json: bool) -> None:
    """Old (ZooKeeper-based) consumer groups: committed offsets; members and owners too in JSON."""
    from .records import KafkaConsumerMember, KafkaConsumerOffset, KafkaConsumerOwner

    state = _kafka_state(settings)
    offsets: list[Any] = sorted(_other(state, KafkaConsumerOffset), key=lambda o: (o.group, o.topic, o.partition))
    fmt = "json" if as_json else fmt
    if fmt in ("json", "jsonl"):
        offsets = [*_other(state, KafkaConsumerMember), *_other(state, KafkaConsumerOwner), *offsets]
    live = sorted({m.group for m in _other(state, KafkaConsumerMember)})
    _emit_view(
        settings,
        fmt,
        offsets,
        KafkaConsumerOffset,
        state.problems,
        title=f"old consumer groups; live: {', '.join(live) or 'none'}",
    )


@kafka.command("health")
@click.option("--check", is_flag=True, help="Exit 6 when any finding is at error level (Nagios-style).")
@_DEFAULT_MIN_ISR
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_health(settings: Settings, check: bool, default_min_isr: int | None, fmt: str, as_json: bool) -> None:
    """Explained findings: offline, under-replicated and under-min-ISR partitions, dead brokers in replica
    lists, leader imbalance, stuck deletions, reassignments, the controller, a KRaft migration."""
    from .health import kafka_findings
    from .records import KafkaFinding

    state = _kafka_state(settings)
    findings = kafka_findings(state, int(settings.now() * 1000), default_min_isr)
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order.get(f.level, 3), f.kind, f.topic or "", f.partition or 0))
    _emit_view(
        settings,
        "json" if as_json else fmt,
        findings,
        KafkaFinding,
        state.problems,
        ["level", "kind", "detail"],
        title=f"{len(findings)} findings under {state.root}",
    )
    if check and any(f.level == "error" for f in findings):
        sys.exit(ExitCode.UNHEALTHY)


@kafka.command("roots")
@_format_option("table", "json", "jsonl", "csv", default="table")
@click.pass_obj
def kafka_roots_command(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every Kafka chroot on the ensemble (nodes that hold brokers/ids or brokers/topics)."""
    from .collect import kafka_roots
    from .errors import NotFoundError
    from .paths import join
    from .records import KafkaRoot

    rows = []
    with settings.session() as session:
        for root in kafka_roots(session):
            counts = []
            for sub in ("brokers/ids", "brokers/topics"):
                try:
                    counts.append(len(session.get_children(join(root, sub))))
                except NotFoundError:
                    counts.append(0)
            rows.append(KafkaRoot(root=root, brokers=counts[0], topics=counts[1]))
    _emit_view(settings, "json" if as_json else fmt, rows, KafkaRoot, [])


# --- snapshot -----------------------------------------------------------------------------------------


@dataclass
class _SnapshotRun:
    snapshot_id: str
    manifest: dict[str, Any]
    znodes: int
    failures: int
    unreadable: int
    filesystem: Any
    base: str


def _take_snapshot(
    settings: Settings, out: str, cluster: str | None, snapshot_id: str | None, at: Any, stale_after: str
) -> _SnapshotRun:
    """One walk of the source into one committed snapshot under ``out`` (used by snapshot and diff --live)."""
    from datetime import datetime, timezone

    from .collect import snapshot_walk
    from .records import DecodeFailure, Unreadable, Znode
    from .snapshot import Snapshot, default_snapshot_id
    from .zk import WalkStats, ZkTarget

    if settings.from_files:
        import socket

        source_name, default_cluster = "files", socket.gethostname()  # the nightly job runs on a ZK server
    else:
        target = ZkTarget.parse(settings.zk)
        source_name, default_cluster = str(target), target.hosts[0][0]
    cluster = cluster or default_cluster
    snapshot_id = snapshot_id or default_snapshot_id(cluster, at)
    started = datetime.now(timezone.utc)
    stats = WalkStats()
    zxid_min: int | None = None  # the range of the znodes' last changes, kept as two numbers
    zxid_max: int | None = None
    failures = unreadable = 0
    with (
        settings.session(verify_digest=True) as session,
        Snapshot(out, snapshot_id=snapshot_id, cluster=cluster, snapshot_time=at) as snap,
    ):
        records = snapshot_walk(
            session, settings.roots(), now=settings.now(), stats=stats, stale_after_secs=parse_duration(stale_after)
        )
        with _progress("snapshot") as advance:
            for record in records:
                snap.add(record)
                kind = type(record)
                if kind is Znode:
                    zxid = max(record.mzxid, record.pzxid)
                    if zxid_min is None or zxid < zxid_min:
                        zxid_min = zxid
                    if zxid_max is None or zxid > zxid_max:
                        zxid_max = zxid
                    advance()
                elif kind is DecodeFailure:
                    failures += 1
                elif kind is Unreadable:
                    unreadable += 1
        manifest = snap.commit(
            {
                "source": {
                    "zk": source_name,
                    **({"zookeeper_files": session.plan.describe()} if settings.from_files else {}),
                    "storm_roots": list(settings.roots().storm),
                    "kafka_roots": list(settings.roots().kafka),
                },
                "started": started.isoformat().replace("+00:00", "Z"),
                "finished": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
                "data_as_of": datetime.fromtimestamp(settings.now(), timezone.utc).isoformat().replace("+00:00", "Z"),
                "zxid_min": zxid_min,
                "zxid_max": zxid_max,
                "znodes": stats.znodes,
                "vanished": stats.vanished,
                "decode_failures": failures,
                "unreadable": unreadable,
            }
        )
    return _SnapshotRun(snapshot_id, manifest, stats.znodes, failures, unreadable, snap.filesystem, snap.base)


def _utc_time(value: str) -> Any:
    from datetime import datetime, timezone

    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO time (2026-11-21T02:30:00Z)") from None
    return parsed.replace(tzinfo=parsed.tzinfo or timezone.utc).astimezone(timezone.utc)


@cli.command()
@click.argument("out")
@click.option(
    "--cluster",
    envvar="ZKSTORM_CLUSTER",
    default=None,
    help="Cluster name stored in every row (default: the first --zk host; this host with --from-files).",
)
@click.option(
    "--snapshot-id", default=None, help="Default CLUSTER@YYYY-MM-DD (UTC): one snapshot a day; a re-run replaces it."
)
@click.option(
    "--snapshot-time",
    default=None,
    help="Record the snapshot as taken at this ISO time instead of now (backfilling from old backups).",
)
@click.option("--keep-days", type=click.IntRange(1), default=None, help="Delete snapshots older than N days.")
@click.option("--stale-after", default="30s", show_default=True, help="Worker heartbeat staleness threshold.")
@click.pass_obj
def snapshot(
    settings: Settings,
    out: str,
    cluster: str | None,
    snapshot_id: str | None,
    snapshot_time: str | None,
    keep_days: int | None,
    stale_after: str,
) -> None:
    """Export every decoded record of one walk to Parquet under OUT (a path or a pyarrow filesystem URI),
    one dataset per record type, partitioned by snapshot_date. Secrets stay redacted; --show-secrets does
    not apply here. Cron-ready: atomic per file, locked, idempotent per snapshot id."""
    from datetime import datetime, timezone

    from .snapshot import prune

    if settings.show_secrets:
        click.echo("zkstorm: note: --show-secrets does not apply to snapshots; secrets stay redacted", err=True)
    at = _utc_time(snapshot_time) if snapshot_time else datetime.now(timezone.utc)
    started = time.monotonic()
    run = _take_snapshot(settings, out, cluster, snapshot_id, at, stale_after)
    removed = prune(run.filesystem, run.base, keep_days, at.date()) if keep_days else []
    rows = sum(run.manifest["tables"].values())
    click.echo(
        f"zkstorm: snapshot {run.snapshot_id}: {run.znodes:,} znodes, {len(run.manifest['tables'])} tables, "
        f"{rows:,} rows, {run.failures} decode failures, {run.unreadable} unreadable -> {out} "
        f"({time.monotonic() - started:.1f}s{f', pruned {len(removed)} partitions' if removed else ''})",
        err=True,
    )
    _finish(settings, run.failures + run.unreadable)


# --- history and diff ---------------------------------------------------------------------------------


@cli.command()
@click.argument("snapshots")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None, help="First day (UTC), inclusive.")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), default=None, help="Last day (UTC), inclusive.")
@click.option("--out", default=None, help="Write each metric as a Parquet table under this path or URI.")
@click.option("--html", "html_path", default=None, help="Write the report (self-contained HTML) here.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master.")
def history(snapshots: str, since: Any, until: Any, out: str | None, html_path: str | None, master: str) -> None:
    """Cluster-health history over every committed snapshot under SNAPSHOTS (a PySpark job): error
    trends, flapping supervisors, restarts, ISR shrinks, under-replication, controller moves, growth.
    On a cluster: spark-submit zkstorm/jobs/history.py with the same arguments (see the README)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ZkstormError("history needs PySpark: pip install 'zkstorm[spark]'") from None
    from .jobs.history import print_summary, run_history
    from .jobs.spark import session

    try:
        result = run_history(
            session(master),
            snapshots,
            since=since.date() if since else None,
            until=until.date() if until else None,
            out=out,
            html=html_path,
        )
    except ZkstormError:
        raise
    except Exception as exc:
        raise ZkstormError(f"the history job failed: {_spark_error(exc)}") from None
    print_summary(result, _stdout_console())
    if html_path:
        click.echo(f"zkstorm: report written to {html_path}", err=True)


def _spark_error(exc: Exception) -> str:
    """One line for a Spark failure: the Java exception's own message, not the Py4J call trace."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return str(java.toString()).splitlines()[0]
        except Exception:
            pass
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@cli.command()
@click.argument("snapshots")
@click.argument("snapshot_a")
@click.argument("snapshot_b", required=False)
@click.option("--live", is_flag=True, help="Compare SNAPSHOT_A with the source as it is now (--zk or --from-files).")
@click.option("--table", "tables", multiple=True, help="Only these tables (repeatable).")
@_format_option("table", "json", default="table")
@click.pass_obj
def diff(
    settings: Settings,
    snapshots: str,
    snapshot_a: str,
    snapshot_b: str | None,
    live: bool,
    tables: tuple[str, ...],
    fmt: str,
    as_json: bool,
) -> None:
    """What changed between two committed snapshots under SNAPSHOTS, per table: rows added and removed
    (a changed row counts once in each), with examples. SNAPSHOT_B or --live, not both."""
    import dataclasses
    import json
    import tempfile
    from datetime import datetime, timezone

    from .jobs.diff import diff_snapshots

    if live == (snapshot_b is not None):
        raise UsageError("give SNAPSHOT_B or --live (one of them)")
    with tempfile.TemporaryDirectory(prefix="zkstorm-diff-") as scratch:
        out_b, id_b = snapshots, snapshot_b or ""
        if live:
            run = _take_snapshot(settings, scratch, None, "live", datetime.now(timezone.utc), "30s")
            out_b, id_b = scratch, run.snapshot_id
        diffs = diff_snapshots(snapshots, snapshot_a, out_b, id_b, tables=set(tables) or None)
    if ("json" if as_json else fmt) == "json":

        def plain(value: Any) -> Any:
            return value.isoformat() if isinstance(value, datetime) else str(value)

        click.echo(json.dumps([dataclasses.asdict(d) for d in diffs], indent=2, default=plain))
        return
    from rich.table import Table

    table = Table(title=f"{snapshot_a} -> {snapshot_b or 'live'}", header_style="bold")
    for column in ("table", "rows before", "rows after", "added", "removed"):
        table.add_column(column, justify="left" if column == "table" else "right")
    for d in diffs:
        style = None if d.added or d.removed else "dim"
        table.add_row(d.table, f"{d.rows_a:,}", f"{d.rows_b:,}", f"{d.added:,}", f"{d.removed:,}", style=style)
    _stdout_console().print(table)


@contextlib.contextmanager
def _progress(label: str) -> Iterator[Any]:
    """A live znode counter on stderr when it is a terminal; a no-op otherwise (cron, pipes)."""
    if not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description} {task.completed:,} znodes"),
        TimeElapsedColumn(),
        console=_stderr_console(),
        transient=True,
    ) as progress:
        task = progress.add_task(label)
        count = 0

        def advance() -> None:
            nonlocal count
            count += 1
            if count % 512 == 0:
                progress.update(task, completed=count)

        yield advance


# --- sandbox ------------------------------------------------------------------------------------------


@cli.group()
def sandbox() -> None:
    """A throwaway local ZooKeeper seeded with a synthetic Storm 2.x and Kafka 3.x cluster."""


@sandbox.command("start")
@click.option(
    "--dir",
    "state_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the server keeps its data (default: ZKSTORM_SANDBOX_DIR or ~/.cache/zkstorm/sandbox).",
)
@click.option(
    "--scale",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Multiply the synthetic cluster (topologies, supervisors, topics, brokers).",
)
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Client port (default: a free one).")
@click.option("--seed/--no-seed", default=True, show_default=True, help="Seed the synthetic clusters.")
def sandbox_start(state_dir: str | None, scale: int, port: int | None, seed: bool) -> None:
    """Start the sandbox and print the --zk string to use."""
    from .sandbox import Sandbox

    box = Sandbox(state_dir)
    started = box.start(port=port)
    if seed and started:
        counts = box.seed(scale=scale)
        click.echo(f"seeded {counts.znodes} znodes (Storm under /storm, Kafka under /kafka)", err=True)
    click.echo(box.connect_string)


@sandbox.command("stop")
@click.option("--dir", "state_dir", type=click.Path(file_okay=False), default=None)
def sandbox_stop(state_dir: str | None) -> None:
    """Stop the sandbox server and delete its data."""
    from .sandbox import Sandbox

    click.echo("stopped" if Sandbox(state_dir).stop() else "not running", err=True)


@sandbox.command("status")
@click.option("--dir", "state_dir", type=click.Path(file_okay=False), default=None)
def sandbox_status(state_dir: str | None) -> None:
    """Print the --zk string of the running sandbox (exit 4 when none runs)."""
    from .errors import NotFoundError
    from .sandbox import Sandbox

    box = Sandbox(state_dir)
    if not box.running():
        raise NotFoundError("no sandbox is running (zkstorm sandbox start)")
    click.echo(box.connect_string)


if __name__ == "__main__":  # pragma: no cover
    cli()
