"""What an installed zkstorm holds: every folder of the package is one setuptools installs, and every file
in it that is not Python is package data, so ``pip install zkstorm`` reads KRaft logs (Kafka's record
schemas, ``zkstorm/sources/kraft/schemas``) as the checkout does."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folders() -> list[Path]:
    return sorted(
        p for p in [REPO / "zkstorm", *(REPO / "zkstorm").rglob("*")] if p.is_dir() and p.name != "__pycache__"
    )


def test_every_folder_of_the_package_is_installed() -> None:
    packages = set(_setuptools()["packages"])
    assert [str(f.relative_to(REPO)) for f in _folders() if ".".join(f.relative_to(REPO).parts) not in packages] == []


def test_every_file_that_is_not_python_is_package_data() -> None:
    data = _setuptools().get("package-data", {})
    missing = []
    for folder in _folders():
        package = ".".join(folder.relative_to(REPO).parts)
        for file in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")):
            if not any(fnmatch.fnmatch(file.name, pattern) for pattern in data.get(package, [])):
                missing.append(str(file.relative_to(REPO)))
    assert missing == []
