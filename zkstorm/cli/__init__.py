"""The ``zkstorm`` command line: one module per command group, each command a thin user of the cluster
model (``zkstorm.model``). ``app`` holds the group, the global options and the one error handler."""

from __future__ import annotations

from . import changes, kafka, sandbox, snapshots, storm, znodes  # noqa: F401  (each registers its commands)
from .app import cli, parse_duration, parse_since

__all__ = ["cli", "parse_duration", "parse_since"]
