"""Which incidents a nightly run finds again (``zkstorm/jobs/recheck.py``), without Spark: the cutoffs,
per cluster and per kind, and what the merge keeps. ``tests/test_history.py`` runs it night by night
against a full rebuild."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from zkstorm.jobs.incidents import Incident
from zkstorm.jobs.recheck import plan

NIGHT0 = datetime(2026, 3, 1, 2, 30, tzinfo=UTC)


def _night(i: int) -> datetime:
    return NIGHT0 + timedelta(days=i)


def _snapshots(cluster: str, nights: range) -> list[tuple[str, str, datetime]]:
    return [(cluster, f"{cluster}@{i}", _night(i)) for i in nights]


def _incident(cluster: str, kind: str, started: datetime, *, ongoing: bool = False) -> Incident:
    return Incident(
        cluster=cluster, root="/kafka", system="Kafka", kind=kind, level="warning", started=started, ended=None,
        ongoing=ongoing, snapshots=1, subjects=[kind], count=1, summary=kind, chart="kafka_brokers",
    )  # fmt: skip


def test_a_lasting_state_still_going_on_sends_back_its_own_kind_alone() -> None:
    """A broker gone since night 10 of 100: the brokers' rule reads from night 9 (where it was last seen),
    every other rule the newest kept night and the new one."""
    kept, new = _snapshots("c1", range(100)), _snapshots("c1", range(100, 101))
    incidents = [_incident("c1", "broker_gone", _night(10), ongoing=True), _incident("c1", "isr_shrink", _night(99))]
    recheck = plan(incidents, kept, new, {}, UTC)
    every = kept + new
    assert recheck.snapshots(every, "broker_gone") == sorted(f"c1@{i}" for i in range(9, 101))
    assert recheck.snapshots(every, "isr_shrink") == ["c1@100", "c1@99"]
    assert recheck.read(every, ["broker_gone", "isr_shrink"]) == 92
    # the gone broker is found again (it may be back tonight); night 99's shrink is kept as it was
    assert [recheck.covers(i) for i in incidents] == [True, False]
    assert recheck.covers(_incident("c1", "isr_shrink", _night(100)))


def test_a_state_going_on_since_the_first_snapshot_is_found_again_from_the_first() -> None:
    kept, new = _snapshots("c1", range(5)), _snapshots("c1", range(5, 6))
    recheck = plan([_incident("c1", "supervisor_missing", _night(0), ongoing=True)], kept, new, {}, UTC)
    assert len(recheck.snapshots(kept + new, "supervisor_missing")) == 6
    assert len(recheck.snapshots(kept + new, "leader_moves")) == 2


def test_partitions_offline_carry_their_run_so_a_year_long_one_reads_two_nights() -> None:
    """Offline since night 0 of 100 (its fact carries the run, ``kafka_offline_runs``): read from the
    newest kept night, the kept one found again, and the one found (begun before the cutoff, gone on past
    it) kept in its place; an offline run that ended before stays as it was."""
    kept, new = _snapshots("c1", range(100)), _snapshots("c1", range(100, 101))
    going_on = _incident("c1", "partitions_offline", _night(0), ongoing=True)
    over = _incident("c1", "partitions_offline", _night(50))
    recheck = plan([going_on, over], kept, new, {}, UTC)
    assert recheck.snapshots(kept + new, "partitions_offline") == ["c1@100", "c1@99"]
    assert [recheck.covers(i) for i in (going_on, over)] == [True, False]
    ended_tonight = _incident("c1", "partitions_offline", _night(0))
    assert recheck.merge([going_on, over], [ended_tonight]) == [over, ended_tonight]


def test_a_cluster_without_new_snapshots_keeps_its_incidents_and_a_new_one_finds_them_all() -> None:
    kept = _snapshots("old", range(5))
    new = _snapshots("fresh", range(2))
    still = _incident("old", "broker_gone", _night(3), ongoing=True)
    recheck = plan([still], kept, new, {}, UTC)
    assert not recheck.covers(still)  # nothing new of "old": nothing of it is found again
    assert recheck.covers(_incident("fresh", "isr_shrink", _night(0)))
    assert recheck.snapshots(kept + new, "broker_gone") == ["fresh@0", "fresh@1"]


def test_error_bursts_are_found_again_for_the_days_of_the_new_errors() -> None:
    """A burst goes by its day, whatever the cutoff: the new night's errors fell on March 3 and 9."""
    kept, new = _snapshots("c1", range(10)), _snapshots("c1", range(10, 11))
    days = {"c1": frozenset({date(2026, 3, 3), date(2026, 3, 9)}), "other": frozenset({date(2026, 3, 3)})}
    recheck = plan([], kept, new, days, UTC)
    burst = _incident("c1", "error_burst", datetime(2026, 3, 3, 23, 59, tzinfo=UTC))
    assert recheck.covers(burst)
    assert not recheck.covers(_incident("c1", "error_burst", datetime(2026, 3, 10, 1, 0, tzinfo=UTC)))
    assert not recheck.covers(_incident("other", "error_burst", datetime(2026, 3, 3, 1, 0, tzinfo=UTC)))
    # the merge: a kept burst of a day found again goes, the one found tonight takes its place
    found = _incident("c1", "error_burst", datetime(2026, 3, 3, 20, 0, tzinfo=UTC))
    older = _incident("c1", "isr_shrink", _night(2))
    assert recheck.merge([burst, older], [found, older]) == [older, found]
