"""One helper per concept for what zkstorm reads and writes as text: durations, UTC times and plurals.

Durations are read as a person writes them on a command line (``90``, ``30s``, ``15m``, ``2h``, ``3d``,
``1w``) and written as a person reads them (``45s``, ``12m``, ``3h05m``, ``2d04h``): a view's age column, a
finding's "5m ago", a lock's "held for 1h", a supervisor's uptime all read the same. Times are UTC: read
from ISO-8601 with or without ``Z`` or an offset (a time without one is UTC), written as ISO-8601 ending in
``Z`` for machines (JSON, manifests) and as ``YYYY-MM-DD HH:MM:SSZ`` for people. Stdlib only: every layer
may use it.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION_SECS = 10_000 * 365 * 86400  # ten thousand years: "never" (10000w) still reads; 1e400d does not
LONG_MAX = (1 << 63) - 1  # a Java long: ZooKeeper's zxids, counters and ids


class OutOfRange(ValueError):
    """A value of the right form that no reading takes (a negative duration, a zxid past a long, a time
    UTC cannot hold): its message names what is wrong, where a form error names the form expected."""


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``2h``, ``3d``, ``1w`` → seconds; ``ValueError`` for anything else, and for a
    duration that is negative, not finite, or longer than ten thousand years (``1e400d`` is infinite; a
    timedelta or a time in milliseconds cannot hold ``100000000000d``): every option and window bound that takes
    a duration is checked here, once."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in _SECONDS else "s"
    number = value[:-1] if value[-1:] in _SECONDS else value
    try:
        seconds = float(number) * _SECONDS[unit]
    except ValueError:
        raise ValueError(f"{text!r} is not a duration like 30s, 15m, 2h, 3d") from None
    if math.isnan(seconds):
        raise OutOfRange(f"{text!r} is not a duration: not a number")
    if seconds < 0:
        raise OutOfRange(f"{text!r} is not a duration: a duration is not negative")
    if seconds > MAX_DURATION_SECS:
        raise OutOfRange(
            f"{text!r} is longer than ten thousand years ({MAX_DURATION_SECS // 86400:,}d), the longest duration taken"
        )
    return seconds


def parse_zxid(text: str) -> int:
    """A zxid as ZooKeeper prints them: hex (``0x1c8``) or decimal (``456``), 0 up to the largest a Java
    long holds (``LONG_MAX``); ``ValueError`` for anything else."""
    value = text.strip()
    try:
        zxid = int(value, 16) if value[:2].lower() == "0x" else int(value)
    except ValueError:
        raise ValueError(f"{text!r} is not a zxid (hex 0x1c8 or decimal 456)") from None
    if zxid < 0:
        raise OutOfRange(f"{text!r} is not a zxid: a zxid is not negative")
    if zxid > LONG_MAX:
        raise OutOfRange(f"{text!r} is past the largest zxid ({LONG_MAX:#x}: a zxid is a 64-bit signed long)")
    return zxid


def duration_text(seconds: float | None, *, coarse: bool = False) -> str:
    """A short duration for people: ``45s`` (under two minutes), ``12m``, ``3h05m``, ``2d04h``, a part that is
    zero left out (``1h``, ``2d``); negative counts as zero, None as ``?``. ``coarse`` gives the largest unit
    alone and never seconds (``0m``, ``12m``, ``3h``, ``2d``): a figure that holds still between two reads
    taken moments apart, for a text that is compared (a finding's detail, round by round under
    ``--watch`` and against the snapshot's)."""
    if seconds is None:
        return "?"
    whole = max(0, int(seconds))
    if coarse:
        for size, unit in ((86400, "d"), (3600, "h")):
            if whole >= size:
                return f"{whole // size}{unit}"
        return f"{whole // 60}m"
    if whole < 120:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    if whole < 86400:
        hours, minutes = divmod(whole // 60, 60)
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    days, hours = divmod(whole // 3600, 24)
    return f"{days}d{hours:02d}h" if hours else f"{days}d"


def parse_utc(text: str) -> datetime:
    """An ISO-8601 time (``2026-11-21T02:30:00Z``, ``…+02:00``, or without an offset: then UTC) as an aware UTC
    datetime; ``ValueError`` for anything else, a time UTC cannot hold included (``0001-01-01T00:00+14:00``)."""
    moment = datetime.fromisoformat(text.strip())
    try:
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError:
        raise OutOfRange(f"{text.strip()!r} is out of the range of times UTC holds") from None


def parse_since(text: str, now: float) -> float:
    """A duration back from ``now`` (``2h``) or an ISO-8601 time (UTC unless it says otherwise) → epoch
    seconds; ``ValueError`` for anything else."""
    try:
        return now - parse_duration(text)
    except ValueError:
        pass
    try:
        return parse_utc(text).timestamp()
    except ValueError:
        raise ValueError(f"{text!r} is neither a duration (2h) nor an ISO time (2025-07-08T10:00Z)") from None


def epoch_ms(moment: datetime) -> int:
    """Milliseconds since the epoch (a ZooKeeper txn's time), of an aware datetime or a naive one as UTC."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def iso_utc(moment: datetime) -> str:
    """ISO-8601 ending in ``Z`` (``2025-07-08T10:00:00Z``), for JSON, CSV and manifests."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def utc_text(moment: datetime) -> str:
    """``2025-07-08 10:00:00Z``: a UTC time for people, to the second. (``isoformat`` is several times cheaper
    than ``strftime``, and a tree's summaries write one per heartbeat.)"""
    return moment.isoformat(sep=" ")[:19] + "Z"


def plural(count: int, noun: str, nouns: str | None = None, *, counted: bool = True) -> str:
    """``1 topic``, ``3 topics`` (``nouns`` for a plural that is not ``noun + "s"``); the word alone
    (``topics``) when not ``counted``, for a phrase that lists them instead (``members 3, 4``)."""
    word = noun if count == 1 else nouns or noun + "s"
    return f"{count} {word}" if counted else word
