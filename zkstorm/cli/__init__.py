"""The ``zkstorm`` command line: one module per command group, each command a thin user of the library
(options, one call into ``zkstorm.model`` or a job's entry point, one emit). ``app`` holds the group and the
one error handler, ``context`` what every command shares while it runs (its settings, the cluster it
opens, the one emit), ``options`` the shared options (the one output format option among them)."""

from __future__ import annotations

from . import changes, kafka, nightly, sandbox, storm, zk, znodes  # noqa: F401  (each registers its commands)
from .app import cli

__all__ = ["cli"]
