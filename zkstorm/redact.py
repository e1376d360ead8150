"""What zkstorm says about data it does not show: log lines and exception text without payloads.

ZooKeeper payloads hold secrets (digest passwords, SCRAM credentials, JAAS configs, Storm credentials,
token HMACs), and ``-vv`` output is what people paste into tickets. kazoo's DEBUG log prints every
request and reply as its ``repr`` (``Auth(… auth='user:PASSWORD')``, each ``getData`` reply's bytes), and
an exception message can quote the value it choked on (``invalid literal for int(): 'hunter2'``). So:

- ``PayloadFilter`` rewrites kazoo's log records before they are formatted: a request or reply is told by
  its type, its path and its sizes, never its bytes or strings; auth, SASL and session passwords become
  ``<hidden>``. It also replaces every logged traceback and exception argument with
  ``traceback_text``/``exception_text``. The live session hands kazoo a logger carrying it
  (``kazoo_logger``); the CLI puts it on its stderr handler too, which every logger reaches.
- ``exception_text`` is ``Type: message`` with each quoted literal of the message replaced by its length:
  Python quotes the values in its messages (``KeyError('x')``, ``int()``'s ``'…'``), so the structure of
  the error stays and the data goes. Unquoted text stays; zkstorm's own messages quote what they quote.

Stdlib only: the live source and the CLI both use it.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Mapping
from typing import Any

HIDDEN = "<hidden>"  # what a log line shows for a password it carries
REDACTED = "<redacted>"  # what a record shows for a secret value it holds (unless --show-secrets)

# A quoted literal as Python's messages write one: 'x', "x", b'x', with backslash escapes inside.
_QUOTED = re.compile(r"""(?<!\w)b?(['"])(?:\\.|(?!\1).)*?\1""", re.S)
# Fields of kazoo's request and reply tuples that name where, not what: kept in the log.
_SAFE_FIELDS = frozenset({"path", "scheme"})


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` with every quoted literal in its message replaced by ``<N chars>``."""
    name = type(exc).__qualname__
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not hide the error it describes
        message = ""
    message = _QUOTED.sub(lambda m: f"<{len(m.group(0)) - 2} chars>", message)
    return f"{name}: {message}" if message else name


def traceback_text(exc: BaseException) -> str:
    """The traceback of ``exc`` and the exceptions it was raised from, as Python prints it (frames with
    their source lines), each exception's message as ``exception_text`` gives it. No locals, no notes."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        elif current.__suppress_context__:
            current = None
        else:
            current = current.__context__
    parts: list[str] = []
    for inner, outer in zip(reversed(chain), [*reversed(chain[:-1]), None], strict=True):
        parts.append("Traceback (most recent call last):\n")
        parts.extend(traceback.format_tb(inner.__traceback__))
        parts.append(exception_text(inner) + "\n")
        if outer is not None:
            parts.append(
                "\nThe above exception was the direct cause of the following exception:\n\n"
                if outer.__cause__ is inner
                else "\nDuring handling of the above exception, another exception occurred:\n\n"
            )
    return "".join(parts).rstrip("\n")


class _Said:
    """A log argument already made safe: ``%s`` and ``%r`` both print it as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def describe(value: Any, *, top: bool = True) -> Any:
    """``value`` as a kazoo log line may show it: numbers, states and (at the top level) plain strings
    such as hosts as they are; bytes by their size; a request or reply tuple by its type, path and the
    description of its other fields; strings inside one, and anything unknown, as ``<hidden>``."""
    if value is None or isinstance(value, (bool, int, float, _Said)):  # _Said: described already
        return value
    if isinstance(value, str):
        return value if top else _Said(HIDDEN)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _Said(f"<{len(value)} bytes>")
    if isinstance(value, BaseException):
        return _Said(exception_text(value))
    fields = getattr(value, "_fields", None)
    if fields is not None:  # kazoo's requests and replies are namedtuples (GetData, Auth, ZnodeStat, …)
        shown = ", ".join(
            f"{name}={getattr(value, name)!r}"
            if name in _SAFE_FIELDS and isinstance(getattr(value, name), str)
            else f"{name}={describe(getattr(value, name), top=False)!r}"
            for name in fields
            if name != "watcher"
        )
        return _Said(f"{type(value).__name__}({shown})")
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) for v in value):  # a getChildren reply
            return _Said(f"[{len(value)} names]")
        if len(value) > 4:
            return _Said(f"[{len(value)} items]")
        inner = ", ".join(repr(describe(v, top=False)) for v in value)
        return _Said(f"[{inner}]" if isinstance(value, list) else f"({inner})")
    ops = getattr(value, "ops", None)
    if getattr(value, "type", None) is not None and isinstance(ops, list):  # our MultiRead request
        first = f", the first on {ops[0][1]!r}" if ops and isinstance(ops[0][1], str) else ""
        return _Said(f"{type(value).__name__}({len(ops)} ops{first})")
    return _Said(f"<{type(value).__name__}>")


def _is_kazoo(record: logging.LogRecord) -> bool:
    return record.name == "kazoo" or record.name.startswith("kazoo.")


class PayloadFilter(logging.Filter):
    """Makes a log record safe to show: kazoo's arguments described (``describe``), every exception
    argument and traceback without the values its message quotes. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _is_kazoo(record):
            if not isinstance(record.msg, str):  # kazoo's gevent handler logs an exception object
                record.msg = str(describe(record.msg))
            record.args = _described(record.args, describe)
        elif record.args:
            record.args = _described(record.args, _exceptions_only)
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = traceback_text(record.exc_info[1])
        return True


def _exceptions_only(value: Any) -> Any:
    return _Said(exception_text(value)) if isinstance(value, BaseException) else value


def _described(args: Any, how: Any) -> Any:
    if isinstance(args, tuple):
        return tuple(how(a) for a in args)
    if isinstance(args, Mapping):
        return {k: how(v) for k, v in args.items()}
    return args


def kazoo_logger() -> logging.Logger:
    """The logger the live session hands to kazoo, carrying ``PayloadFilter`` (added once): a program that
    turns on DEBUG logging sees which requests went where, never what they carried."""
    logger = logging.getLogger("kazoo.client")
    if not any(isinstance(f, PayloadFilter) for f in logger.filters):
        logger.addFilter(PayloadFilter())
    return logger
