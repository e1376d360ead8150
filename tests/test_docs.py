"""The documentation cannot drift from the code: its generated parts (the CLI reference, the record
columns, the Parquet schemas, every example's output, the terminal captures) are what the code gives now;
the site builds with warnings as errors (a dead link or anchor fails); no page names an option or a
column that does not exist; and the README stays a front page whose links land on real anchors and which
shows the test command CI runs.

The generator is ``scripts/docs_gen.py`` (``make docs-generate`` rewrites what these tests compare).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = REPO / "README.md"

# Options of other tools that the pages quote beside zkstorm's, each with the tool that takes it.
OTHER_TOOLS_OPTIONS = {
    "--describe": "kafka-topics.sh",
    "--unavailable-partitions": "kafka-topics.sh",
    "--under-replicated-partitions": "kafka-topics.sh",
    "--under-min-isr-partitions": "kafka-topics.sh",
    "--cluster-metadata-decoder": "kafka-dump-log.sh",
    "--deploy-mode": "spark-submit",
    "--packages": "spark-submit",
    "--conf": "spark-submit",
    "--py-files": "spark-submit",
    "--ignore-existing": "rsync",
    "--rounds": "bench/bench_files.py",
    "--shapes-only": "bench/bench_files.py",
    "--scales": "bench/bench_snapshot.py",
    "--nights": "bench/bench_history.py",
    "--standalone": "bench/bench_history.py",
    "--partitions": "bench/bench_history.py",
    "--help": "click, on every command",
}

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SNAKE = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")


def _docs_gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_gen", REPO / "scripts" / "docs_gen.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs_gen = _docs_gen()


def _pages() -> list[Path]:
    return [*sorted(DOCS.rglob("*.md")), README]


# --- generated parts ---


def test_generated_parts_are_current() -> None:
    stale = docs_gen.stale()
    assert not stale, "\n\n".join(stale.values()) + "\n\nstale pages: run `make docs-generate` and commit the result"


def test_every_example_block_runs_a_zkstorm_command() -> None:
    """An example block with no ``$ zkstorm`` line would be checked against nothing."""
    blocks = [
        (page, m["body"])
        for page in _pages()
        for m in docs_gen.BLOCK.finditer(page.read_text())
        if m["name"] == "example"
    ]
    assert len(blocks) >= 6
    for page, body in blocks:
        assert re.search(r"^\$ zkstorm ", body, re.M), page


def test_a_stale_example_is_caught(tmp_path: Path) -> None:
    """An example whose shown output is not what the command prints is rewritten by the generator (so the
    check above fails on it): the page's text with one output line changed differs from its regeneration."""
    page = (DOCS / "kafka.md").read_text()
    tampered = page.replace(
        "│ legacy-audit-log │    0 │     -1 │ offline │", "│ legacy-audit-log │    0 │    101 │ offline │", 1
    )
    assert tampered != page
    assert docs_gen.regenerate(tampered) == page


def test_captures_are_current() -> None:
    assert not docs_gen.stale_captures(), "run `make docs-captures` and commit docs/captures/"


def test_the_captures_are_rich_svgs_of_the_commands() -> None:
    for name, command in docs_gen.CAPTURES.items():
        svg = (DOCS / "captures" / f"{name}.svg").read_text()
        assert svg.startswith("<svg") and "Generated with Rich" in svg
        assert command.split()[-1] in svg or name in svg


# --- the site ---


def test_the_site_builds_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a dead link, a missing anchor, a page left out of the nav is an error.
    Not ``--quiet``: it drops the warnings before ``--strict`` counts them, and a broken site builds."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


def test_every_page_is_in_the_nav() -> None:
    nav = (REPO / "mkdocs.yml").read_text()
    for page in DOCS.rglob("*.md"):
        assert f": {page.relative_to(DOCS)}" in nav, page


# --- options and columns a page names ---


def cli_options() -> set[str]:
    import click

    names: set[str] = set()
    for _, command in docs_gen.all_commands():
        for param in command.params:
            if isinstance(param, click.Option):
                names |= {*param.opts, *param.secondary_opts}
    return names


def unknown_options(pages: list[Path], options: set[str]) -> dict[str, set[str]]:
    """Option → the pages naming it, for every ``--option`` no zkstorm command (nor a quoted tool) takes."""
    out: dict[str, set[str]] = {}
    for page in pages:
        for name in OPTION.findall(page.read_text()):
            if name not in options and name not in OTHER_TOOLS_OPTIONS:
                out.setdefault(name, set()).add(str(page.relative_to(REPO)))
    return out


def test_pages_name_only_options_that_exist() -> None:
    assert unknown_options(_pages(), cli_options()) == {}


def test_an_option_removed_from_the_cli_is_caught() -> None:
    """As if ``--offline`` were dropped from ``kafka partitions``: the pages that name it are reported."""
    found = unknown_options(_pages(), cli_options() - {"--offline"})
    assert set(found) == {"--offline"} and "docs/kafka.md" in found["--offline"]


def known_names() -> set[str]:
    """Every snake_case name a page may put in backticks: each record type's columns, kind and table
    name, then every such word in the package's code (findings, failure types, metric names without
    their ``zkstorm_`` prefix, functions), the test functions and the pytest markers."""
    from zkstorm.export.parquet import table_name
    from zkstorm.records import RECORD_TYPES
    from zkstorm.schema import columns, kind_name

    names: set[str] = set()
    for record_type in RECORD_TYPES:
        names |= {c.name for c in columns(record_type)} | {kind_name(record_type), table_name(record_type)}
    words = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
    for path in [*(REPO / "zkstorm").rglob("*.py"), *(REPO / "tests").rglob("test_*.py"), REPO / "pyproject.toml"]:
        names |= set(words.findall(path.read_text()))
    return names


def metric_names() -> set[str]:
    """The Prometheus series ``export/prometheus.py`` can write, without the ``zkstorm_`` prefix: its
    literal family names, and each composed one (``f"storm_component_{name}"``) with every name its
    series tables give."""
    text = (REPO / "zkstorm" / "export" / "prometheus.py").read_text()
    literals = set(re.findall(r'"([a-z][a-z0-9_]*)"', text))
    prefixes = set(re.findall(r'f"([a-z][a-z0-9_]*)\{', text))
    return literals | {prefix + literal for prefix in prefixes for literal in literals}


def unknown_columns(pages: list[Path], names: set[str], metrics: set[str] | None = None) -> dict[str, set[str]]:
    metrics = metric_names() if metrics is None else metrics
    out: dict[str, set[str]] = {}
    for page in pages:
        for name in SNAKE.findall(page.read_text()):
            known = name.removeprefix("zkstorm_") in metrics if name.startswith("zkstorm_") else name in names
            if not known:
                out.setdefault(name, set()).add(str(page.relative_to(REPO)))
    return out


def test_pages_name_only_columns_that_exist() -> None:
    assert unknown_columns(_pages(), known_names()) == {}


def test_a_column_removed_from_a_record_is_caught() -> None:
    """As if ``under_replicated`` were gone from ``KafkaPartition`` and the code: the pages naming it are
    reported."""
    found = unknown_columns(_pages(), known_names() - {"under_replicated"})
    assert "under_replicated" in found and "docs/kafka.md" in found["under_replicated"]


# --- the README ---


def _slug(heading: str) -> str:
    from markdown.extensions.toc import slugify

    return str(slugify(heading.replace("`", ""), "-"))


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def test_readme_is_a_front_page() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_readme_links_land_on_pages_and_anchors() -> None:
    """mkdocs checks the links between pages; the README is outside the site, so this checks its own."""
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", README.read_text())
    assert len(links) >= 20
    for target, anchor in links:
        path = REPO / target
        assert path.exists(), target
        if anchor:
            assert anchor in _anchors(path), f"{target}#{anchor}"


def test_readme_links_every_page_of_the_site() -> None:
    """Every task page is one click from the front page (and every answer two: the page, then its
    section)."""
    readme = README.read_text()
    nav = (REPO / "mkdocs.yml").read_text()
    for page in re.findall(r": ((?:reference/)?[\w-]+\.md)$", nav, re.M):
        if page in ("index.md", "storm-layout.md", "kafka-layout.md", "zookeeper-files.md"):
            continue
        assert f"](docs/{page}" in readme, page


def test_readme_shows_the_ci_test_command() -> None:
    """CI (``.ci/run``) runs the README's test command: the command it runs is the README's, in a shell
    block, and a target of the Makefile."""
    ci = [
        line.strip()
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    command = ci[-1]
    assert command == "make test"
    shell_lines = {
        line.split("#", 1)[0].strip()
        for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S)
        for line in block.splitlines()
    }
    assert command in shell_lines
    assert re.search(r"^test: ", (REPO / "Makefile").read_text(), re.M)


@pytest.mark.parametrize(
    ("question", "page", "anchor"),
    [
        ("offline partitions under a chroot", "kafka.md", "offline-partitions-under-a-chroot"),
        ("why a topology's bolt is slow", "storm.md", "why-is-a-bolt-slow"),
        ("what changed at 03:12", "changes.md", "what-changed-at-0312"),
        ("is the nightly job healthy", "snapshots.md", "is-the-nightly-job-healthy"),
        ("how to run the history on a cluster", "history-on-a-cluster.md", None),
    ],
)
def test_an_operators_question_is_two_clicks_from_the_readme(question: str, page: str, anchor: str | None) -> None:
    """The README's table of questions links the page (and the section) that answers each."""
    assert f"](docs/{page}{'#' + anchor if anchor else ''})" in README.read_text(), question
    assert (DOCS / page).exists(), question
    if anchor:
        assert anchor in _anchors(DOCS / page), question


def test_every_command_has_a_line_in_the_commands_table() -> None:
    """The CLI reference lists every command by itself; the hand-written table of Commands and output
    must too, so a new command gets its one line of what it shows."""
    import click

    table = (DOCS / "commands.md").read_text().split("| command | what it shows |", 1)[1].split("\n\n", 1)[0]
    firsts = [row.split("|")[1] for row in table.splitlines()[2:]]
    missing = []
    for path, command in docs_gen.all_commands():
        if not path or isinstance(command, click.Group):
            continue
        group, _, name = path.rpartition(" ")
        exact = rf"zkstorm (?:\S+ )*{re.escape(path)}\b"  # zkstorm [--from-files DIR] kafka health
        grouped = rf"zkstorm (?:\S+ )*{re.escape(group)} (?:.*[ `]){re.escape(name)}\b"  # kafka controller / `configs`
        said = re.compile(f"{exact}|{grouped}" if group else exact)
        if not any(said.search(cell) for cell in firsts):
            missing.append(path)
    assert not missing, f"not in docs/commands.md's table: {missing}"


def test_the_exit_code_table_names_every_exit_code() -> None:
    """The hand-written meanings of Health checks and exit codes cover exactly the codes the CLI ends with."""
    from zkstorm.errors import ExitCode

    section = (DOCS / "health.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {
        int(code)
        for row in section.splitlines()
        if row.startswith("| ")
        for code in re.findall(r"\b\d+\b", row.split("|")[1])
    }
    assert documented == {int(code) for code in ExitCode}
