"""One helper per concept (``zkstorm.units``): durations read as a person writes them and written as a
person reads them, UTC times read with or without ``Z`` (a time without an offset is UTC, never the
host's local time) and written ending in ``Z``, plurals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from zkstorm.units import duration_text, iso_utc, parse_duration, parse_since, parse_utc, plural, utc_text


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("3d", 259200), ("1w", 604800)]
)
def test_durations_are_read_as_written(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_duration_that_is_none_says_so() -> None:
    with pytest.raises(ValueError, match="is not a duration like 30s"):
        parse_duration("soon")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (119, "119s"),
        (120, "2m"),
        (3599, "59m"),
        (3600, "1h"),
        (3900, "1h05m"),
        (86400, "1d"),
        (93600, "1d02h"),
        (-5, "0s"),
        (None, "?"),
    ],
)
def test_durations_are_written_one_way(seconds: float | None, text: str) -> None:
    assert duration_text(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [(0, "0m"), (45, "0m"), (3599, "59m"), (3900, "1h"), (93600, "1d")])
def test_coarse_durations_hold_still_between_reads(seconds: float, text: str) -> None:
    assert duration_text(seconds, coarse=True) == text


@pytest.mark.parametrize(
    "text", ["2025-07-08T10:00:00Z", "2025-07-08T10:00Z", "2025-07-08T12:00:00+02:00", "2025-07-08T10:00:00"]
)
def test_times_are_read_as_utc_with_or_without_z(text: str) -> None:
    assert parse_utc(text) == datetime(2025, 7, 8, 10, 0, tzinfo=UTC)


def test_since_is_a_duration_back_or_a_time() -> None:
    now = datetime(2025, 7, 8, 12, 0, tzinfo=UTC).timestamp()
    assert parse_since("2h", now) == now - 7200
    assert parse_since("2025-07-08T10:00Z", now) == now - 7200
    with pytest.raises(ValueError, match="neither a duration"):
        parse_since("yesterday", now)


def test_times_are_written_ending_in_z() -> None:
    moment = datetime(2025, 7, 8, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert iso_utc(moment) == "2025-07-08T10:00:00Z"
    assert utc_text(datetime(2025, 7, 8, 10, 0, 5, 250000, tzinfo=UTC)) == "2025-07-08 10:00:05Z"


def test_plurals() -> None:
    assert [plural(n, "topic") for n in (0, 1, 2)] == ["0 topics", "1 topic", "2 topics"]
    assert plural(2, "replica", counted=False) == "replicas"
    assert plural(2, "child", "children") == "2 children"
