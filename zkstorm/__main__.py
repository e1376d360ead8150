"""``python -m zkstorm``: the same command line as the ``zkstorm`` script."""

from .cli import cli

cli()
