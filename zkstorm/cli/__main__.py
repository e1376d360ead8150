"""``python -m zkstorm.cli``: the same command line as the ``zkstorm`` script."""

from . import cli

cli()
