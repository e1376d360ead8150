"""What every benchmark script shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_result(path: Path | None, result: Any) -> None:
    """Save a benchmark's result as JSON (``--json FILE``), creating the folder."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
