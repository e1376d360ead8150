"""zkstorm: a read-only inspector for the Storm and Kafka metadata kept in ZooKeeper.

The library: ``zkstorm.connect(...)``, ``zkstorm.from_files(...)`` or ``zkstorm.from_kraft(...)`` (a KRaft
metadata folder) give a ``Cluster`` (``zkstorm.model``);
the command line, the nightly snapshot and the history job are thin users of it. The model is imported on
first use, so ``zkstorm --help`` does not pay for the decoders.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["Cluster", "__version__", "connect", "from_files", "from_kraft"]


def __getattr__(name: str) -> Any:
    if name in ("Cluster", "connect", "from_files", "from_kraft"):
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module 'zkstorm' has no attribute {name!r}")
