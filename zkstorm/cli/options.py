"""The options commands share, each written once: the one output option (``format_option``: ``-f`` with
``--json`` folded into it, and ``--wide`` where there is a table), ``--watch``, ``--stale-after``, and the
types that read durations, UTC times and zxids off the command line (``zkstorm.units``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..defaults import STALE_AFTER_SECS
from ..output import Format
from ..units import duration_text, parse_duration, parse_utc, parse_zxid
from .context import Settings

_AS_JSON = "zkstorm.as_json"  # ctx.meta: --json was given


def format_option(*formats: Format, default: Format) -> Callable[[Any], Any]:
    """``-f/--format`` with the command's ``formats``, resolved once into a ``Format`` (the command's
    ``fmt``): ``--json`` is that option's shorthand for ``-f json`` and wins over ``-f``. Where a table is
    among the formats, ``--wide`` too."""

    def decorate(fn: Any) -> Any:
        fn = click.option(
            "--json",
            is_flag=True,
            is_eager=True,  # read before -f, whatever their order on the line
            expose_value=False,
            callback=_note_json,
            help="Shorthand for --format json.",
        )(fn)
        if Format.TABLE in formats:
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
            type=click.Choice([f.value for f in formats]),
            default=default.value,
            show_default=True,
            callback=_resolve_format,
            help="Output format.",
        )(fn)

    return decorate


def _note_json(ctx: click.Context, _param: Any, value: bool) -> None:
    if value:
        ctx.meta[_AS_JSON] = True


def _resolve_format(ctx: click.Context, _param: Any, value: str) -> Format:
    return Format.JSON if ctx.meta.get(_AS_JSON) else Format(value)


def _set_wide(ctx: click.Context, _param: Any, value: bool) -> None:
    settings = ctx.find_object(Settings)
    if settings is not None:
        settings.wide = value


class Duration(click.ParamType):
    """``90``, ``30s``, ``15m``, ``2h``, ``3d``, ``1w`` → seconds (``units.parse_duration``)."""

    name = "duration"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, int | float):
            return float(value)
        try:
            return parse_duration(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class UtcTime(click.ParamType):
    """An ISO-8601 time, UTC unless it says otherwise (``units.parse_utc``)."""

    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return parse_utc(value)
        except ValueError:
            self.fail(f"{value!r} is not an ISO time (2026-11-21T02:30:00Z)", param, ctx)


class Zxid(click.ParamType):
    name = "zxid"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_zxid(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def root_path(_ctx: Any, _param: Any, value: str) -> str:
    """A Storm root or Kafka chroot as the model takes it: absolute, without a trailing slash."""
    if not value.startswith("/"):
        raise click.BadParameter(f"roots start with '/': {value!r}")
    return value.rstrip("/") or "/"


def stale_after_option(fn: Any) -> Any:
    """``--stale-after``: when a worker heartbeat is stale (the library's default, Storm's own)."""
    return click.option(
        "--stale-after",
        "stale_after_secs",
        type=Duration(),
        default=duration_text(STALE_AFTER_SECS),
        show_default=True,
        help="A worker heartbeat older than this is stale (Storm's nimbus.task.timeout.secs, 30 by default).",
    )(fn)


def watch_option(fn: Any) -> Any:
    return click.option(
        "--watch",
        "watch_every",
        type=Duration(),
        metavar="DURATION",
        help="Re-read every DURATION (10s, 1m) and show what appeared, cleared or changed, until Ctrl-C.",
    )(fn)
