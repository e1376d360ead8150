"""The docs' generated parts, made from the code they describe so that they cannot drift (sqlite-utils
does the same with cog): the CLI reference from the click commands, the record tables' columns from the
record types, the Parquet schemas from ``export.parquet.schema_markdown``, and every shell example from
running it on the repository's fixture data.

A generated part of a page sits between two markers, ``<!-- NAME ARGS:start -->`` and
``<!-- NAME:end -->``; everything outside them is written by hand. ``python scripts/docs_gen.py``
rewrites every part (``make docs-generate``); ``--check`` rewrites nothing and exits 1 naming each page
whose committed text differs from what the code gives now, with a diff (``tests/test_docs.py`` runs it,
so a stale page fails the suite).

Examples run with ``--from-files`` on ``tests/data/fixtures`` (ZooKeeper's own data directories, kept in
the repository): no server, no clock (ages count from the files' own last txn), so their output is
the same on every machine. Each runs as a user runs it, a new ``python -m zkstorm.cli`` process in the
repository's root, at 100 columns, without colour.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
if str(REPO) not in sys.path:  # run as a script: import the checkout's zkstorm
    sys.path.insert(0, str(REPO))

# <!-- name args:start --> body <!-- name:end -->; the schema markers predate this script and read the same
BLOCK = re.compile(r"<!-- (?P<name>[a-z-]+)(?P<args>(?: [^:>]+)?):start -->\n(?P<body>.*?)<!-- (?P=name):end -->", re.S)

EXAMPLE_COLUMNS = 100
EXAMPLE_TIMEOUT_SECS = 120


# --- the CLI reference ---


def _clean(text: str | None) -> str:
    """Click help text as Markdown: ``\\b`` (click's "keep these lines") dropped, paragraphs kept."""
    text = inspect.cleandoc(text or "")
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    from click.core import UNSET  # type: ignore[attr-defined]

    default = param.default
    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        return "on" if default is True else "off"
    if default is UNSET or default is None or default == () or callable(default):
        return ""
    if isinstance(default, tuple | list):
        return ", ".join(f"`{d}`" for d in default)
    return f"`{getattr(default, 'value', default)}`"


def _kind(param: Any, ctx: Any) -> str:
    import click

    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        return "flag"
    if getattr(param, "count", False):
        return "count"
    if isinstance(param.type, click.Choice):
        return " \\| ".join(f"`{getattr(c, 'value', c)}`" for c in param.type.choices)
    return f"`{param.make_metavar(ctx)}`"


def _options_table(command: Any, ctx: Any) -> list[str]:
    import click

    rows = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names = ", ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))
        env = f"`{param.envvar}`" if isinstance(param.envvar, str) else ""
        rows.append(f"| {names} | {_kind(param, ctx)} | {_default(param)} | {env} | {_cell(param.help or '')} |")
    if not rows:
        return []
    return ["| option | takes | default | environment | what |", "|---|---|---|---|---|", *rows, ""]


def _commands(group: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    import click

    for name in sorted(group.commands):
        command = group.commands[name]
        sub = click.Context(command, info_name=name, parent=ctx)
        yield command, sub
        if isinstance(command, click.Group):
            yield from _commands(command, sub)


def all_commands() -> list[tuple[str, Any]]:
    """Every command as ``("kafka health", command)``, the group itself as ``""``: what the reference
    lists and what the page checks hold pages to."""
    import click

    from zkstorm.cli import cli

    root = click.Context(cli, info_name="zkstorm")
    out = [("", cli)]
    for command, ctx in _commands(cli, root):
        out.append((ctx.command_path.removeprefix("zkstorm").strip(), command))
    return out


def cli_reference() -> str:
    """Every command with its usage, help, options (what each takes, its default and environment
    variable) and the exit codes, as click itself knows them."""
    import click

    from zkstorm.cli import cli
    from zkstorm.errors import ExitCode

    root = click.Context(cli, info_name="zkstorm")
    lines = [
        "Generated from the click commands by `python scripts/docs_gen.py`; `tests/test_docs.py` fails when",
        "this page differs from what the commands say now. `zkstorm COMMAND --help` prints the same.",
        "",
        "## Global options",
        "",
        "These go before the command: `zkstorm --zk zk1:2181/kafka kafka health`.",
        "",
        *_options_table(cli, root),
        "## Exit codes",
        "",
        "| code | name |",
        "|---:|---|",
        *(f"| {code.value} | `{code.name.lower()}` |" for code in sorted(ExitCode)),
        "",
        "What each means, and which option turns it on: [Health checks and exit codes](../health.md#exit-codes).",
        "",
    ]
    for command, ctx in _commands(cli, root):
        path = ctx.command_path
        lines += [f"## `{path}`", ""]
        pieces = " ".join(command.collect_usage_pieces(ctx))
        lines += ["```", f"{path.replace('zkstorm', 'zkstorm [GLOBAL OPTIONS]', 1)} {pieces}".rstrip(), "```", ""]
        if command.help:
            lines += [_clean(command.help), ""]
        if isinstance(command, click.Group):
            lines += [f"Commands: {', '.join(f'`{n}`' for n in sorted(command.commands))}.", ""]
        lines += _options_table(command, ctx)
    return "\n".join(lines).rstrip("\n") + "\n"


# --- record columns ---


def _record_types() -> dict[str, type]:
    from zkstorm.records import RECORD_TYPES

    return {t.__name__: t for t in RECORD_TYPES}


def record_columns(names: list[str]) -> str:
    """For each record type named: its columns as a table shows them (``TABLE_COLUMNS`` first, in
    their priority; the rest only with ``--wide``), each with its type, as JSON, CSV and Parquet keep it."""
    from zkstorm.schema import columns, kind_name

    types = _record_types()
    lines: list[str] = []
    for name in names:
        record_type = types[name]
        declared = [c.name for c in columns(record_type)]
        # what render.record_table offers without --wide: TABLE_COLUMNS, or every column when it has none
        leading = list(getattr(record_type, "TABLE_COLUMNS", ())) or declared
        key = getattr(record_type, "TABLE_KEY", None)
        forms = getattr(record_type, "TABLE_FORMS", {})
        text = set(getattr(record_type, "TABLE_TEXT", ()))
        lines += [
            f"`{name}` (kind `{kind_name(record_type)}`):",
            "",
            "| column | type | in a table |",
            "|---|---|---|",
        ]
        for column in columns(record_type):
            kind = column.kind.replace("str", "string") + (" or null" if column.nullable else "")
            if column.name == "decode_status":
                shown = "when a row is not `ok`"
            elif column.name == "root":
                shown = "when the rows come from more than one root"
            elif column.name in leading:
                shown = str(leading.index(column.name) + 1)
                if column.name == key:
                    shown += ", the row's name (never cut)"
                if column.name in text:
                    shown += ", free text (last, wrapped)"
                form = forms.get(column.name)
                if form:
                    shown += f", as {form[0] + ' ' if form[0] else ''}`{form[1]}`"
            else:
                shown = "`--wide`"
            lines.append(f"| `{column.name}` | {kind} | {shown} |")
        lines.append("")
    return "\n".join(lines)


def all_records() -> str:
    from zkstorm.records import RECORD_TYPES

    return record_columns(sorted(t.__name__ for t in RECORD_TYPES))


# --- examples ---


def example_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKSTORM_") and k not in ("FORCE_COLOR",)}
    env.update(COLUMNS=str(EXAMPLE_COLUMNS), LINES="50", NO_COLOR="1", TERM="dumb", TZ="UTC", PYTHONIOENCODING="utf-8")
    return env


def run_example(command: str) -> str:
    """One ``$ zkstorm …`` line run in the repository's root; its stdout, each line's trailing blanks
    dropped, and when it does not exit 0 its stderr and ``(exit N)`` after it (an example of ``--check``
    shows its 6, a mistyped root its one line and 4)."""
    argv = shlex.split(command)
    if argv[0] != "zkstorm":
        raise ValueError(f"an example runs zkstorm only: {command}")
    result = subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", *argv[1:]],
        cwd=REPO,
        env=example_env(),
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_SECS,
    )
    text = result.stdout.rstrip("\n")
    if result.returncode != 0:  # the one line a failure prints on stderr is part of what the page shows
        text = "\n".join(part for part in (text, result.stderr.rstrip("\n"), f"(exit {result.returncode})") if part)
    return "\n".join(line.rstrip() for line in text.splitlines())


def example(body: str) -> str:
    """A console block: every ``$ `` line is run again, and what it prints is written under it."""
    commands = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    if not commands:
        raise ValueError("an example block holds no `$ zkstorm …` line")
    parts = []
    for command in commands:
        parts += [f"$ {command}", run_example(command)]
    return "```console\n" + "\n".join(parts) + "\n```\n"


# --- terminal captures ---

FIXTURE = "tests/data/fixtures/zkfiles/zk38-plain"
CAPTURES_DIR = DOCS / "captures"
# name → the command, as an operator types it (the fixture data directory, so no server and no clock)
CAPTURES = {
    "kafka-health": f"zkstorm --from-files {FIXTURE} --kafka-root /kafka-prod kafka health",
    "changes": f"zkstorm --from-files {FIXTURE} changes --since 2026-11-21T22:47:13Z",
}


def capture(command: str) -> str:
    """The command's terminal output in colour, as rich's own SVG export draws it: the command runs with
    rich forced to colour (``FORCE_COLOR``), and its ANSI text is replayed into a recording console."""
    import io

    from rich.console import Console
    from rich.text import Text

    argv = shlex.split(command)
    env = example_env()
    env.pop("NO_COLOR")
    env.update(FORCE_COLOR="1", TERM="xterm-256color")
    result = subprocess.run(
        [sys.executable, "-m", "zkstorm.cli", *argv[1:]],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_SECS,
    )
    console = Console(
        record=True, width=EXAMPLE_COLUMNS, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    console.print(Text(f"$ {command}", style="bold"))
    console.print(Text.from_ansi(result.stdout.rstrip("\n")))  # a line wider than the terminal wraps, as there
    # the title names the command; unique_id is derived from the content, so a rerun writes the same bytes
    return console.export_svg(title=" ".join(argv[:1] + argv[3:]))


def stale_captures() -> list[str]:
    """The captures whose committed SVG differs from what the command draws now (or that are missing)."""
    out = []
    for name, command in CAPTURES.items():
        path = CAPTURES_DIR / f"{name}.svg"
        if not path.exists() or path.read_text() != capture(command):
            out.append(str(path.relative_to(REPO)))
    return out


def write_captures() -> None:
    CAPTURES_DIR.mkdir(exist_ok=True)
    for name, command in CAPTURES.items():
        path = CAPTURES_DIR / f"{name}.svg"
        svg = capture(command)
        if not path.exists() or path.read_text() != svg:
            path.write_text(svg)
            print(f"rewrote {path.relative_to(REPO)}")


# --- the blocks ---


def _generate(name: str, args: list[str], body: str) -> str:
    from zkstorm.export.parquet import schema_markdown
    from zkstorm.records import CHANGE_TYPES

    makers: dict[str, Callable[[], str]] = {
        "schema": lambda: schema_markdown(),
        "changes-schema": lambda: schema_markdown(CHANGE_TYPES),
        "cli": cli_reference,
        "records": all_records,
        "columns": lambda: record_columns(args),
        "example": lambda: example(body),
    }
    if name not in makers:
        raise ValueError(f"no generator for <!-- {name} -->")
    return makers[name]()


def regenerate(text: str) -> str:
    """The page with every generated part made again from the code."""

    def one(match: re.Match[str]) -> str:
        name, args = match["name"], match["args"].split()
        arg_text = f" {' '.join(args)}" if args else ""
        return f"<!-- {name}{arg_text}:start -->\n{_generate(name, args, match['body'])}<!-- {name}:end -->"

    return BLOCK.sub(one, text)


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def stale() -> dict[Path, str]:
    """Each page whose generated parts differ from what the code gives now → the unified diff."""
    out = {}
    for page in pages():
        text = page.read_text()
        if BLOCK.search(text) is None:
            continue
        fresh = regenerate(text)
        if fresh != text:
            rel = str(page.relative_to(REPO))
            diff = difflib.unified_diff(
                text.splitlines(), fresh.splitlines(), f"{rel} (committed)", f"{rel} (from the code)", lineterm=""
            )
            out[page] = "\n".join(diff)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 when a page is stale")
    parser.add_argument("--captures", action="store_true", help="only the terminal captures (docs/captures)")
    args = parser.parse_args(argv)
    if args.check:
        found = {} if args.captures else stale()
        for diff in found.values():
            print(diff)
        old = stale_captures()
        names = [str(p.relative_to(REPO)) for p in found] + old
        if names:
            print(f"stale: {', '.join(names)} (python scripts/docs_gen.py rewrites them)", file=sys.stderr)
        return 1 if names else 0
    if not args.captures:
        for page in pages():
            text = page.read_text()
            if BLOCK.search(text) is not None:
                fresh = regenerate(text)
                if fresh != text:
                    page.write_text(fresh)
                    print(f"rewrote {page.relative_to(REPO)}")
    write_captures()
    return 0


if __name__ == "__main__":
    sys.exit(main())
