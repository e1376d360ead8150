"""The ``zkstorm kafka`` views: options, one model call, one emit."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from ..errors import ExitCode, RootNotFoundError, UnhealthyError, UsageError
from ..output import METRIC_FORMATS, VIEW_FORMATS, Format, Shown
from .app import cli
from .context import Settings, emit, say
from .options import format_option, watch_option
from .watching import watch_view

if TYPE_CHECKING:
    from ..model import KafkaHealth

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
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_brokers(settings: Settings, fmt: Format) -> None:
    """Registered brokers, and unregistered ones still named in replica lists (alive = no)."""
    from ..records import KafkaBroker

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.kafka.brokers(), KafkaBroker, view=cluster.kafka))


@kafka.command("topics")
@click.option("--topic", "-t", default=None, help="Only this topic (reads just its znode).")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_topics(settings: Settings, topic: str | None, fmt: Format) -> None:
    """Every topic: partitions, replication factor, topic id, reassignments in flight."""
    from ..records import KafkaTopic

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.kafka.topics(topic), KafkaTopic))


@kafka.command("partitions")
@click.option("--topic", "-t", default=None, help="Only this topic.")
@click.option("--offline", is_flag=True, help="Only partitions without a live leader.")
@click.option("--under-replicated", is_flag=True, help="Only partitions whose ISR is smaller than their replicas.")
@click.option("--under-min-isr", is_flag=True, help="Only partitions below min.insync.replicas (or leaderless).")
@_DEFAULT_MIN_ISR
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_partitions(
    settings: Settings,
    topic: str | None,
    offline: bool,
    under_replicated: bool,
    under_min_isr: bool,
    default_min_isr: int | None,
    fmt: Format,
) -> None:
    """Partitions with leader, ISR and health as kafka-topics --describe would judge them."""
    from ..records import KafkaPartition

    with settings.cluster() as cluster:
        rows = cluster.kafka.partitions(
            topic=topic,
            offline=offline,
            under_replicated=under_replicated,
            under_min_isr=under_min_isr,
            default_min_isr=default_min_isr,
        )
        emit(settings, fmt, Shown(rows, KafkaPartition, view=cluster.kafka))


@kafka.command("controller")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_controller(settings: Settings, fmt: Format) -> None:
    """The active controller and the controller epoch."""
    from ..records import KafkaController

    with settings.cluster() as cluster:
        controller, epoch = cluster.kafka.controller()
    title = f"controller epoch {epoch.epoch if epoch else '?'}"
    emit(settings, fmt, Shown([controller], KafkaController, title=title))


@kafka.command("configs")
@click.option("--type", "entity_type", default=None, help="topics, brokers, users, clients, ips or users/clients.")
@click.option("--name", "entity_name", default=None, help="Only this entity.")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_configs(settings: Settings, entity_type: str | None, entity_name: str | None, fmt: Format) -> None:
    """Dynamic configs and overrides; SCRAM credentials and passwords redacted unless --show-secrets."""
    from ..records import KafkaConfig

    with settings.cluster() as cluster:
        rows = cluster.kafka.configs(entity_type=entity_type, entity_name=entity_name)
    emit(settings, fmt, Shown(rows, KafkaConfig))


@kafka.command("acls")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_acls(settings: Settings, fmt: Format) -> None:
    """Every ACL, literal and prefixed."""
    from ..records import KafkaAcl

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.kafka.acls(), KafkaAcl))


@kafka.command("reassignments")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_reassignments(settings: Settings, fmt: Format) -> None:
    """Partitions being moved (KIP-455 in the topic znodes, or the legacy admin znode)."""
    from ..records import KafkaReassignment

    with settings.cluster() as cluster:
        emit(settings, fmt, Shown(cluster.kafka.reassignments(), KafkaReassignment))


@kafka.command("consumers")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_consumers(settings: Settings, fmt: Format) -> None:
    """Old (ZooKeeper-based) consumer groups: committed offsets; members and owners too in JSON. The Java
    consumer's groups are in __consumer_offsets, not ZooKeeper: a note on stderr says so."""
    from ..records import KafkaConsumerMember, KafkaConsumerOffset

    with settings.cluster() as cluster:
        rows = cluster.kafka.consumers()
        elsewhere = cluster.kafka.consumer_groups_note()
    groups = sorted({r.group for r in rows})
    live = sorted({r.group for r in rows if isinstance(r, KafkaConsumerMember)})
    title = f"old (ZooKeeper-based) consumer groups: {', '.join(groups) or 'none'}; live: {', '.join(live) or 'none'}"
    emit(settings, fmt, Shown(rows, KafkaConsumerOffset, title=title))
    say(f"note: {elsewhere}")


@kafka.command("health")
@click.option(
    "--check",
    is_flag=True,
    help="Exit 6 when any finding is at error level, or there is no Kafka cluster at the root (Nagios-style).",
)
@click.option(
    "--detail",
    is_flag=True,
    help="In a table, every finding after the summary (machine formats always have every one).",
)
@_DEFAULT_MIN_ISR
@watch_option
@format_option(*METRIC_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_health(
    settings: Settings,
    check: bool,
    detail: bool,
    default_min_isr: int | None,
    watch_every: float | None,
    fmt: Format,
) -> None:
    """Explained findings: offline, under-replicated and under-min-ISR partitions, dead brokers in replica
    lists, leader imbalance, stuck deletions, reassignments, the controller, a KRaft migration.

    A table leads with one line per rule (count, most affected topics, brokers, what it means);
    --detail adds every finding. JSON, JSONL and CSV carry every finding."""
    from ..watch import finding_item

    if watch_every is not None:
        reports: list[KafkaHealth] = []  # the round's report, whose summary leads the first round's table

        def read() -> list[Any]:
            with settings.cluster() as cluster:
                reports[:] = [cluster.kafka.health_report(default_min_isr=default_min_isr)]
            return reports[0].findings

        watch_view(settings, fmt, watch_every, read, finding_item, lambda _: _shown(reports[0], detail=detail))
        return
    try:
        with settings.cluster() as cluster:
            report = cluster.kafka.health_report(default_min_isr=default_min_isr)
            emit(settings, fmt, _shown(report, detail=detail))
    except RootNotFoundError as exc:  # no cluster where one was asked for: a check fails on it as unhealthy
        if check:
            raise UnhealthyError(str(exc)) from None
        raise
    if check and any(f.level == "error" for f in report.findings):
        sys.exit(ExitCode.UNHEALTHY)


def _shown(report: KafkaHealth, *, detail: bool) -> Shown:
    """The findings; a table leads with their summary by rule (then, with ``detail``, every finding), and
    the Prometheus series count the report's partitions and brokers too."""
    from ..records import KafkaFinding
    from ..render import kafka_health as health_renderable

    def table(width: int, wide: bool) -> object:
        return health_renderable(
            report.summary, report.findings, root=report.root, detail=detail, width=width, wide=wide
        )

    return Shown(report.findings, KafkaFinding, table=table, view=report)


@kafka.command("migration")
@click.option(
    "--kraft",
    "kraft_dir",
    required=True,
    type=click.Path(),
    help="The KRaft controller's metadata folder (__cluster_metadata-0, or the log dir holding it).",
)
@click.option(
    "--kraft-at-offset",
    type=click.IntRange(0),
    default=None,
    help="The KRaft side as of the record at this offset (else as of --at, or its end).",
)
@click.option("--check", is_flag=True, help="Exit 6 when any finding is at error level (a difference, no one phase).")
@click.option("--every", is_flag=True, help="Every difference its own finding (else the first 8 of each kind).")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_migration(
    settings: Settings, kraft_dir: str, kraft_at_offset: int | None, check: bool, every: bool, fmt: Format
) -> None:
    """A ZooKeeper to KRaft migration checked from both sides: the ZooKeeper data (--zk or --from-files)
    and the KRaft controllers' metadata log (--kraft DIR): the phase (ZooKeeper brokers still registered,
    dual-write, finalized), the KRaft offset /migration last recorded against the log's end, and every
    topic, partition assignment, config and ACL one side holds and the other not, or holds otherwise.
    With --from-files, --at reads both sides as of one time."""
    from ..model import check_migration, from_kraft
    from ..records import KafkaFinding

    if settings.from_kraft:
        raise UsageError("kafka migration reads ZooKeeper (--zk or --from-files) and --kraft DIR: not --from-kraft")
    at = None if kraft_at_offset is not None else settings.at
    with (
        settings.cluster() as cluster,
        from_kraft(kraft_dir, at_offset=kraft_at_offset, at=at, show_secrets=settings.show_secrets) as kraft,
    ):
        report = check_migration(cluster.kafka, kraft.kafka, every=every)
    title = (
        f"migration phase {report.phase}: KRaft state {report.kraft_state or 'none'}, /migration at offset "
        f"{'none' if report.recorded_offset is None else report.recorded_offset} of a log ending at "
        f"{'?' if report.log_end_offset is None else report.log_end_offset}"
    )
    emit(settings, fmt, Shown(report.findings, KafkaFinding, title=title))
    if check and any(f.level == "error" for f in report.findings):
        sys.exit(ExitCode.UNHEALTHY)


@kafka.command("roots")
@format_option(*VIEW_FORMATS, default=Format.TABLE)
@click.pass_obj
def kafka_roots(settings: Settings, fmt: Format) -> None:
    """Every Kafka chroot on the ensemble (nodes that hold brokers/ids or brokers/topics)."""
    from ..records import KafkaRoot

    with settings.cluster() as cluster:
        rows = cluster.kafka_roots()
    emit(settings, fmt, Shown(rows, KafkaRoot))
