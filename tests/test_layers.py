"""The house's layers, checked on its own imports: every ``import`` and ``from … import`` of every module
under ``zkstorm/`` (at the top, inside functions and under ``TYPE_CHECKING`` alike: a lazy import is still
a dependency), parsed with ``ast``.

- No circle: no module reaches itself through its imports.
- No import runs back up the layer order (``LAYERS``, bottom first): a module imports its own layer and
  those below it. The one exception is the package's face, ``zkstorm/__init__.py``, which every module's
  own import loads first anyway; what it imports (the model, lazily, for ``zkstorm.connect``) is the top.
- ``cli/`` is the front door's user only: it imports the model through ``zkstorm.model`` (never its
  rooms), the output and its renderables, the errors, and the few modules ``CLI_ALSO`` names with why;
  the job commands call their library entry points, the sandbox group the sandbox (``CLI_ENTRY_POINTS``).
- Each heavy library has one home (``HOMES``), so ``zkstorm --help`` does not pay for it and a reader
  knows where each is used.
- The history job's fact inputs are record types whose tables a snapshot writes.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "zkstorm"

# Bottom first. A module belongs to the first entry that is its name or a package above it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "vocabulary: errors, units, defaults, text",
        ("zkstorm.errors", "zkstorm.units", "zkstorm.defaults", "zkstorm.text"),
    ),
    ("records", ("zkstorm.records",)),
    ("columns of records", ("zkstorm.schema",)),
    ("layout, redaction, progress", ("zkstorm.layout", "zkstorm.redact", "zkstorm.progress")),
    ("decoders", ("zkstorm.decode",)),
    ("sources", ("zkstorm.sources",)),
    ("the ensemble", ("zkstorm.ensemble",)),
    ("the model: the cluster now, and what changed", ("zkstorm.model", "zkstorm.changes")),
    ("watch rounds", ("zkstorm.watch",)),
    ("export", ("zkstorm.export",)),
    ("output", ("zkstorm.render", "zkstorm.output")),
    ("jobs", ("zkstorm.jobs",)),
    ("sandbox", ("zkstorm.sandbox",)),
    ("cli", ("zkstorm.cli",)),
    ("the face", ("zkstorm", "zkstorm.__main__")),
]

# What cli/ imports besides the front door (zkstorm.model), the output and its renderables, and the errors.
CLI_ALSO = {
    "zkstorm": "the version (--version)",
    "zkstorm.records": "the record types a command names as the type of the rows it shows: data, no behaviour",
    "zkstorm.units": "durations and UTC times read off the command line (--stale-after, --since, --snapshot-time)",
    "zkstorm.defaults": "option defaults, which the library owns and the help shows",
    "zkstorm.layout": "the stats windows --window offers (Storm UI's names for ExecutorStats' keys)",
    "zkstorm.watch": "--watch: what appeared, cleared or changed between two rounds of a view",
    "zkstorm.progress": "the progress display on stderr, which only the command line shows",
    "zkstorm.redact": "-vv's log filter, and an internal error's message without the values it quotes",
}
CLI_FRONT_DOOR = ("zkstorm.model", "zkstorm.output", "zkstorm.render", "zkstorm.errors", "zkstorm.text")
# The commands that run a library entry point other than the model: module → what it may import for it.
CLI_ENTRY_POINTS = {
    "zkstorm.cli.nightly": ("zkstorm.export.parquet", "zkstorm.export.diff", "zkstorm.jobs.history"),
    "zkstorm.cli.changes": ("zkstorm.export.changes",),
    "zkstorm.cli.sandbox": ("zkstorm.sandbox.seed",),
}

# Heavy or special third-party libraries and the only modules that import them.
HOMES = {
    "kazoo": ("zkstorm.sources.live", "zkstorm.sandbox"),
    "pyarrow": ("zkstorm.export", "zkstorm.jobs.report"),  # the report: a metric's rows, as toArrow gives them
    "pyspark": ("zkstorm.jobs",),
    "plotly": ("zkstorm.jobs.report",),
    "click": ("zkstorm.cli",),
    "rich": ("zkstorm.render", "zkstorm.output", "zkstorm.progress"),
    "prometheus_client": ("zkstorm.export.prometheus",),
    "javaobj": ("zkstorm.decode.java",),
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported name, line) for every import in the module: zkstorm's modules resolved to the module
    meant (``from . import kafka`` is ``….kafka``), other libraries by their top-level name."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in MODULES else target), node.lineno


def _owner(module: str) -> str:
    """The zkstorm module an imported name is (``zkstorm.decode.kafka``), or its package."""
    while module not in MODULES and "." in module:
        module = module.rsplit(".", 1)[0]
    return module


GRAPH: dict[str, set[str]] = {
    name: {_owner(target) for target, _ in _imports(name, path) if target.split(".")[0] == "zkstorm"} - {name}
    for name, path in MODULES.items()
}


def _layer(module: str) -> int:
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[0]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer(module)


def test_the_import_graph_has_no_circle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in GRAPH[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert not circles, circles


def test_no_import_runs_back_up() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if target != "zkstorm" and _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_the_cli_uses_the_front_door_only() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        if not _under(module, "zkstorm.cli"):
            continue
        for target in targets:
            allowed = (
                _under(target, "zkstorm.cli")
                or target in CLI_FRONT_DOOR
                or target in CLI_ALSO
                or target in CLI_ENTRY_POINTS.get(module, ())
            )
            if not allowed:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_nothing_but_the_cli_and_the_tests_use_the_sandbox() -> None:
    users = {m for m, targets in GRAPH.items() for t in targets if _under(t, "zkstorm.sandbox")}
    assert {m for m in users if not _under(m, "zkstorm.sandbox")} == {"zkstorm.cli.sandbox"}


@pytest.mark.parametrize("library", sorted(HOMES))
def test_each_heavy_library_has_one_home(library: str) -> None:
    importers = {
        name for name, path in MODULES.items() for target, _ in _imports(name, path) if target.split(".")[0] == library
    }
    strays = sorted(m for m in importers if not any(_under(m, home) for home in HOMES[library]))
    assert not strays, f"{library} imported outside {HOMES[library]}: {strays}"


def test_fact_inputs_are_record_types_a_snapshot_writes() -> None:
    """A fact names the tables it reads by record type; each must be one a snapshot writes a table of."""
    from zkstorm.export.parquet import table_name
    from zkstorm.jobs.metrics import FACTS, SNAPSHOT_TABLES
    from zkstorm.records import RECORD_TYPES, VIEW_ONLY_TYPES

    written = set(RECORD_TYPES) - set(VIEW_ONLY_TYPES)
    for fact in FACTS:
        assert fact.reads, fact.name
        for record_type in fact.reads:
            assert record_type in written, f"{fact.name} reads {record_type!r}, which no snapshot writes"
    assert sorted({table_name(t) for f in FACTS for t in f.reads}) == SNAPSHOT_TABLES


def test_the_python_version_is_stated_once() -> None:
    """requires-python names the version the suite runs on, and ruff's and mypy's targets follow it."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    lowest = config["project"]["requires-python"].removeprefix(">=")
    assert lowest == f"{sys.version_info.major}.{sys.version_info.minor}", "the suite runs on the lowest version"
    assert config["tool"]["ruff"]["target-version"] == "py" + lowest.replace(".", "")
    assert config["tool"]["mypy"]["python_version"] == lowest


def test_every_package_is_installed() -> None:
    """``pip install .`` ships every package of the tree (setuptools' list is explicit), and every folder
    of data in it (Kafka's record schemas, ``sources/kraft/schemas``: a package of data, so setuptools
    installs it and says nothing)."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    data = {".".join(f.relative_to(REPO).parts) for f in _package_folders()} - packages
    assert set(setuptools["packages"]) == packages | data


def test_every_file_that_is_not_python_is_package_data() -> None:
    """Every file of the package that is not Python is package data, so an installed zkstorm holds what
    the checkout does (``pip install zkstorm`` reads KRaft logs with the schemas it was built with)."""
    import fnmatch

    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools.get("package-data", {})
    missing = [
        str(file.relative_to(REPO))
        for folder in _package_folders()
        for file in sorted(folder.iterdir())
        if file.is_file()
        and file.suffix not in (".py", ".pyc")
        and not any(fnmatch.fnmatch(file.name, p) for p in patterns.get(".".join(folder.relative_to(REPO).parts), []))
    ]
    assert missing == []


def _package_folders() -> list[Path]:
    root = REPO / "zkstorm"
    return sorted(p for p in [root, *root.rglob("*")] if p.is_dir() and p.name != "__pycache__")


def test_the_docs_module_table_matches_the_tree() -> None:
    """Every module is in docs/contributing.md's table of where things go, in the row of its folder (a folder of
    its own, ``sources/files/``, may stand for its modules), and every module the table names exists."""
    import re

    readme = (REPO / "docs" / "contributing.md").read_text()
    table = readme.split("| module | job |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        first, rest = line.split("|")[1], "|".join(line.split("|")[2:])
        for name in re.findall(r"`([^`]+)`", first):
            rows[name] = first + rest
    named_files = {name for row in rows.values() for name in re.findall(r"`([\w/]+\.py)`", row)}
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.name in ("__init__.py", "__main__.py") and relative.parent != Path("model"):
            continue
        top = relative.parts[0] + ("/" if len(relative.parts) > 1 else "")
        row = rows.get(top, "")
        folder = f"`{relative.parent.name}/`" if len(relative.parts) > 2 else None
        if f"`{relative.name}`" not in row and not (folder and folder in row):
            missing.append(str(relative))
    assert not missing, f"not in docs/contributing.md's module table: {missing}"
    stale = [name for name in named_files if not list(PACKAGE.rglob(name.rsplit("/", 1)[-1]))]
    assert not stale, f"docs/contributing.md's module table names modules that do not exist: {stale}"


def test_a_walk_does_not_load_the_transaction_log_readers() -> None:
    """``zkstorm.changes`` is a tenth of a second of imports, paid by every view and snapshot when the model
    loaded it to re-export ``ChangeLog``: it loads on first use of those names."""
    import subprocess

    probe = (
        "import sys, zkstorm.model, zkstorm.cli; loaded = 'zkstorm.changes' in sys.modules; "
        "from zkstorm.model import ChangeLog; print(loaded, ChangeLog.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.split() == ["False", "zkstorm.changes"]
