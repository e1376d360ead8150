"""The ``zkstorm kafka`` views: options, one model call, one emit."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from ..errors import ExitCode, RootNotFoundError, UnhealthyError
from .app import (
    PROMETHEUS_FORMATS,
    VIEW_FORMATS,
    Settings,
    cli,
    emit_prometheus,
    emit_rows,
    finish,
    format_option,
    watch_option,
    watch_view,
)

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
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def kafka_brokers(settings: Settings, fmt: str, as_json: bool) -> None:
    """Registered brokers, and unregistered ones still named in replica lists (alive = no)."""
    from ..records import KafkaBroker

    with settings.cluster() as cluster:
        rows = cluster.kafka.brokers()
    if fmt == "prometheus":
        from ..export.prometheus import kafka_broker_families

        emit_prometheus(settings, kafka_broker_families(cluster.kafka.root, rows))
        return
    columns = ["broker_id", "alive", "host", "port", "rack", "version", "registered_at", "endpoints", "decode_status"]
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaBroker, columns=columns)


@kafka.command("topics")
@click.option("--topic", "-t", default=None, help="Only this topic (reads just its znode).")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_topics(settings: Settings, topic: str | None, fmt: str, as_json: bool) -> None:
    """Every topic: partitions, replication factor, topic id, reassignments in flight."""
    from ..records import KafkaTopic

    with settings.cluster() as cluster:
        rows = cluster.kafka.topics(topic)
    columns = [
        "topic",
        "partition_count",
        "replication_factor",
        "reassigning_partitions",
        "version",
        "topic_id",
        "decode_status",
    ]
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaTopic, columns=columns)


@kafka.command("partitions")
@click.option("--topic", "-t", default=None, help="Only this topic.")
@click.option("--offline", is_flag=True, help="Only partitions without a live leader.")
@click.option("--under-replicated", is_flag=True, help="Only partitions whose ISR is smaller than their replicas.")
@click.option("--under-min-isr", is_flag=True, help="Only partitions below min.insync.replicas (or leaderless).")
@_DEFAULT_MIN_ISR
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def kafka_partitions(
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
    from ..records import KafkaPartition

    with settings.cluster() as cluster:
        rows = cluster.kafka.partitions(
            topic=topic,
            offline=offline,
            under_replicated=under_replicated,
            under_min_isr=under_min_isr,
            default_min_isr=default_min_isr,
        )
    if fmt == "prometheus":
        from ..export.prometheus import kafka_partition_families

        emit_prometheus(settings, kafka_partition_families(cluster.kafka.root, rows))
        return
    columns = [
        "topic",
        "partition",
        "leader",
        "isr",
        "replicas",
        "health",
        "state_problem",
        "min_isr",
        "leader_epoch",
        "adding_replicas",
        "removing_replicas",
    ]
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaPartition, columns=columns)


@kafka.command("controller")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_controller(settings: Settings, fmt: str, as_json: bool) -> None:
    """The active controller and the controller epoch."""
    from ..records import KafkaController

    with settings.cluster() as cluster:
        controller, epoch = cluster.kafka.controller()
    title = f"controller epoch {epoch.epoch if epoch else '?'}"
    emit_rows(settings, "json" if as_json else fmt, [controller], KafkaController, title=title)


@kafka.command("configs")
@click.option("--type", "entity_type", default=None, help="topics, brokers, users, clients, ips or users/clients.")
@click.option("--name", "entity_name", default=None, help="Only this entity.")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_configs(
    settings: Settings, entity_type: str | None, entity_name: str | None, fmt: str, as_json: bool
) -> None:
    """Dynamic configs and overrides; SCRAM credentials and passwords redacted unless --show-secrets."""
    from ..records import KafkaConfig

    with settings.cluster() as cluster:
        rows = cluster.kafka.configs(entity_type=entity_type, entity_name=entity_name)
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaConfig)


@kafka.command("acls")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_acls(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every ACL, literal and prefixed."""
    from ..records import KafkaAcl

    with settings.cluster() as cluster:
        rows = cluster.kafka.acls()
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaAcl)


@kafka.command("reassignments")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_reassignments(settings: Settings, fmt: str, as_json: bool) -> None:
    """Partitions being moved (KIP-455 in the topic znodes, or the legacy admin znode)."""
    from ..records import KafkaReassignment

    with settings.cluster() as cluster:
        rows = cluster.kafka.reassignments()
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaReassignment)


@kafka.command("consumers")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_consumers(settings: Settings, fmt: str, as_json: bool) -> None:
    """Old (ZooKeeper-based) consumer groups: committed offsets; members and owners too in JSON."""

    from ..records import KafkaConsumerOffset

    fmt = "json" if as_json else fmt
    with settings.cluster() as cluster:
        offsets: list[Any] = cluster.kafka.consumer_offsets()
        members = cluster.kafka.consumer_members()
        owners = cluster.kafka.consumer_owners()
    if fmt in ("json", "jsonl"):
        offsets = [*members, *owners, *offsets]
    live = sorted({m.group for m in members})
    title = f"old consumer groups; live: {', '.join(live) or 'none'}"
    emit_rows(settings, fmt, offsets, KafkaConsumerOffset, title=title)


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
@format_option(*PROMETHEUS_FORMATS, default="table")
@click.pass_obj
def kafka_health(
    settings: Settings,
    check: bool,
    detail: bool,
    default_min_isr: int | None,
    watch_every: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Explained findings: offline, under-replicated and under-min-ISR partitions, dead brokers in replica
    lists, leader imbalance, stuck deletions, reassignments, the controller, a KRaft migration.

    A table leads with one line per rule (count, most affected topics, brokers, what it means);
    --detail adds every finding. JSON, JSONL and CSV carry every finding."""
    from ..records import KafkaFinding

    fmt = "json" if as_json else fmt
    if watch_every is not None:
        from ..watch import finding_item

        def read() -> list[KafkaFinding]:
            with settings.cluster() as cluster:
                return cluster.kafka.health(default_min_isr=default_min_isr)

        def show(findings: Sequence[KafkaFinding]) -> None:
            _health_table(settings, findings, detail=detail)

        watch_view(settings, fmt, watch_every, read, finding_item, show)
        return
    try:
        with settings.cluster() as cluster:
            if fmt == "prometheus":
                report = cluster.kafka.health_report(default_min_isr=default_min_isr)
                findings = report.findings
            else:
                findings = cluster.kafka.health(default_min_isr=default_min_isr)
    except RootNotFoundError as exc:  # no cluster where one was asked for: a check fails on it as unhealthy
        if check:
            raise UnhealthyError(str(exc)) from None
        raise
    if fmt == "prometheus":
        from ..export.prometheus import kafka_broker_families, kafka_finding_families, kafka_partition_families

        root = cluster.kafka.root
        emit_prometheus(
            settings,
            [
                *kafka_partition_families(root, report.partitions),
                *kafka_broker_families(root, report.brokers, report.partitions),
                *kafka_finding_families(root, report.findings),
            ],
        )
    elif fmt == "table":
        _health_table(settings, findings, detail=detail)
        finish(settings)
    else:
        emit_rows(settings, fmt, findings, KafkaFinding)
    if check and any(f.level == "error" for f in findings):
        sys.exit(ExitCode.UNHEALTHY)


@kafka.command("roots")
@format_option(*VIEW_FORMATS, default="table")
@click.pass_obj
def kafka_roots(settings: Settings, fmt: str, as_json: bool) -> None:
    """Every Kafka chroot on the ensemble (nodes that hold brokers/ids or brokers/topics)."""
    from ..records import KafkaRoot

    with settings.cluster() as cluster:
        rows = cluster.kafka_roots()
    emit_rows(settings, "json" if as_json else fmt, rows, KafkaRoot)


def _health_table(settings: Settings, findings: Sequence[Any], *, detail: bool) -> None:
    """The summary by rule, then (``detail``) every finding."""
    from ..model.kafka_health import summarize_findings
    from ..output import emit
    from ..records import KafkaFinding
    from ..render import findings_summary_table
    from .app import stdout_console

    console = stdout_console()
    root = settings.opened.kafka.root if settings.opened is not None else ""
    title = f"{len(findings)} findings under {root}, by rule"
    console.print(findings_summary_table(summarize_findings(findings), title=title, width=console.width))
    if detail:
        emit(
            findings,
            "table",
            sys.stdout,
            primary=KafkaFinding,
            console=console,
            table_columns=["level", "finding", "detail"],
            wide=settings.wide,
        )
