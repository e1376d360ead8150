"""``zkstorm sandbox``: a throwaway local ZooKeeper seeded with a synthetic Storm 2.x and Kafka 3.x
cluster, for trying zkstorm (and for its demo and benchmarks). The only writer in zkstorm, and it writes
only to the server it started."""

from __future__ import annotations

import click

from .app import cli


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
    from ..sandbox.seed import Sandbox

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
    from ..sandbox.seed import Sandbox

    click.echo("stopped" if Sandbox(state_dir).stop() else "not running", err=True)


@sandbox.command("status")
@click.option("--dir", "state_dir", type=click.Path(file_okay=False), default=None)
def sandbox_status(state_dir: str | None) -> None:
    """Print the --zk string of the running sandbox (exit 4 when none runs)."""
    from ..errors import NotFoundError
    from ..sandbox.seed import Sandbox

    box = Sandbox(state_dir)
    if not box.running():
        raise NotFoundError("no sandbox is running (zkstorm sandbox start)")
    click.echo(box.connect_string)
