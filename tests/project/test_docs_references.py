"""Every repository path, `susbench` command and project module the documents name exists.

The documents are README.md, CONTRIBUTING.md, benchmarks/README.md and docs/**/*.md. What is
checked, and where:
- a repository path: a word starting with one of the repository's top-level names and a `/` (or a
  top-level file such as `pyproject.toml`), in prose, in a code span or as a link, must be on disk.
  `*`, `**`, `{a,b}` and `<placeholder>` make it a pattern that must match at least one path. Links
  are read relative to their document, everything else relative to the checkout. Code blocks are
  not read for paths: their commands run in the reader's own folder (tests/project/test_docs_commands.py).
- a command: `susbench WORD [WORD]` anywhere, code blocks included, must be a command of the Typer
  app, and when WORD is a group a following lowercase word must be one of its subcommands.
- a module: `susbench.a.b[.Name]` / `susbench.a.b:Name`, `tests.x.y` and `tools.x` must be a module of the
  project, and the first name after it a top-level name of that module; so must each name of a
  `from susbench.x import a, b` line in a code block. Attributes of those names are not checked.
- docs/architecture.md: its prose has one `**part**` paragraph per part of tests/data/layers.yaml,
  bottom up, and each file it names in a part's paragraph is in that part's folders.
Each failure names the document, the line and what is missing.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer

from susbench.cli.main import app
from susbench.core.paths import REPO_ROOT
from tools.import_graph import DOC, END, START, load_layers, module_files

DOCUMENTS = [
    *(REPO_ROOT / name for name in ("README.md", "CONTRIBUTING.md", "benchmarks/README.md")),
    *sorted((REPO_ROOT / "docs").rglob("*.md")),
]
NOT_PATHS = {
    "susbench/snapshot.json": "the manifest member inside every WACZ we write, not a file of the repository",
}
"""Words that look like repository paths and are not, each with the reason."""

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
COMMAND = re.compile(
    r"(?<![\w./-])susbench((?:[ \t]+[a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)*(?=[\s`'\"),;.]|$)){1,2})"
)
MODULE = re.compile(r"(?<![\w./-])((?:susbench|tests|tools)(?:\.[a-z_][a-z0-9_]*)+)(?:[.:]([A-Za-z_]\w*))?")
FROM_IMPORT = re.compile(
    r"^\s*from\s+((?:susbench|tests|tools)[\w.]*)\s+import\s+\(?([^#\n]*?)\)?\s*$", re.MULTILINE
)
PLACEHOLDER = re.compile(r"<[^<>/]+>")
LINE_SUFFIX = re.compile(r":\d+(?:[-,]\d+)*$")


@dataclass(frozen=True)
class Found:
    document: Path
    line: int
    text: str

    def problem(self, what: str) -> str:
        name = (
            self.document.relative_to(REPO_ROOT) if self.document.is_relative_to(REPO_ROOT) else self.document
        )
        return f"{name}:{self.line}: {what}: {self.text}"


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with these spans made spaces (newlines kept, so offsets and lines stay true)."""
    chars = list(text)
    for start, end in spans:
        for index in range(start, end):
            if chars[index] != "\n":
                chars[index] = " "
    return "".join(chars)


@dataclass(frozen=True)
class Parts:
    """A document cut into code blocks, code spans and the rest, each with its offset."""

    text: str
    fences: list[tuple[int, str]]
    spans: list[tuple[int, str]]
    prose: str  # the text with code blocks and code spans blanked out

    @classmethod
    def of(cls, text: str) -> Parts:
        fences = [(match.start(), match.group()) for match in FENCE.finditer(text)]
        outside = blank(text, [(match.start(), match.end()) for match in FENCE.finditer(text)])
        spans = [(match.start(2), match.group(2)) for match in SPAN.finditer(outside)]
        prose = blank(outside, [(match.start(), match.end()) for match in SPAN.finditer(outside)])
        return cls(text, fences, spans, prose)


@cache
def top_level_names() -> frozenset[str]:
    """The repository's own top-level files and folders (what git tracks, not what a run left)."""
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return frozenset(path.split("/", 1)[0] for path in listed)


def path_words(text: str) -> Iterator[tuple[int, str]]:
    """(offset, word) for each word of the text that starts like a repository path."""
    names = "|".join(re.escape(name) for name in sorted(top_level_names(), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w./<>*-])(?:(?:{names})/[^\s`'\"()\[\]|,;]*|(?:{names})(?![\w./-]))")
    for match in pattern.finditer(text):
        word = LINE_SUFFIX.sub("", match.group().rstrip(".:"))
        if "/" in word or Path(word).suffix or word in {"Makefile", "Dockerfile"}:
            yield match.start(), word


def expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    return [
        expanded
        for choice in match.group(1).split(",")
        for expanded in expand_braces(pattern[: match.start()] + choice + pattern[match.end() :])
    ]


def path_exists(path: str, base: Path) -> bool:
    """Whether the path (or, for a pattern, at least one path it matches) is on disk."""
    pattern = PLACEHOLDER.sub("*", path)
    for candidate in expand_braces(pattern):
        relative = candidate.rstrip("/")
        if "*" not in relative and (base / relative).exists():
            return True
        if "*" in relative and next(base.glob(relative), None) is not None:
            return True
    return False


def path_problems(document: Path) -> list[str]:
    text = document.read_text(encoding="utf-8")
    parts = Parts.of(text)
    problems = []
    words = [(offset, word) for offset, word in path_words(parts.prose)]
    words += [(start + offset, word) for start, span in parts.spans for offset, word in path_words(span)]
    for offset, word in words:
        if word not in NOT_PATHS and not path_exists(word, REPO_ROOT):
            problems.append(Found(document, line_of(text, offset), word).problem("no such path"))
    for match in LINK.finditer(parts.prose):
        target = match.group(1).split("#", 1)[0]
        if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a link within the page, or to the web
        if not path_exists(target, document.parent):
            problems.append(Found(document, line_of(text, match.start()), target).problem("link to no file"))
    return problems


@cache
def command_tree() -> dict[str, Any]:
    """Every command of `susbench`: name -> None for a command, or a dict of a group's subcommands.

    The root group lists its commands lazily; asking it for one loads that command's module, which
    builds the command without running it.
    """
    root = typer.main.get_command(app)

    def walk(command: Any) -> Any:
        if not hasattr(command, "list_commands"):
            return None
        context = command.context_class(command)
        return {name: walk(command.get_command(context, name)) for name in command.list_commands(context)}

    return walk(root)


def command_problems(document: Path) -> list[str]:
    text = document.read_text(encoding="utf-8")
    tree = command_tree()
    problems = []
    for match in COMMAND.finditer(text):
        words = match.group(1).split()
        found = Found(document, line_of(text, match.start()), match.group().strip())
        for name in words[0].split("|"):
            if name not in tree:
                problems.append(found.problem(f"no command `susbench {name}`"))
            elif isinstance(tree[name], dict) and len(words) > 1:
                missing = [sub for sub in words[1].split("|") if sub not in tree[name]]
                problems += [found.problem(f"no command `susbench {name} {sub}`") for sub in missing]
    return problems


@cache
def module_sources() -> dict[str, Path]:
    """Every module the documents may name: the package's (tools/import_graph.py), the tests', the tools'."""
    found = {
        ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for top in ("tests", "tools")
        for path in (REPO_ROOT / top).rglob("*.py")
        if "data" not in path.relative_to(REPO_ROOT / top).parts
    }
    return {**module_files(), **found}


@cache
def top_level(module: str) -> frozenset[str]:
    """The names a module defines or imports at its top level (or in a top-level `if`/`try`)."""
    tree = ast.parse(module_sources()[module].read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        for inner in [node, *(ast.walk(node) if isinstance(node, ast.If | ast.Try) else ())]:
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and inner is node:
                names.add(inner.name)
            elif isinstance(inner, ast.Assign):
                names |= {target.id for target in inner.targets if isinstance(target, ast.Name)}
            elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                names.add(inner.target.id)
            elif isinstance(inner, ast.Import | ast.ImportFrom):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in inner.names}
    return frozenset(names)


def name_problem(dotted: str, name: str | None) -> str | None:
    """What is missing of `dotted[.name]`: the longest prefix that is a module must hold the next name."""
    parts = dotted.split(".") + ([name] if name else [])
    modules = module_sources()
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            rest = parts[cut:]
            if not rest or rest[0] in top_level(module):
                return None
            return f"`{module}` has no `{rest[0]}`"
    return f"no module `{'.'.join(parts[:2])}`"


def module_problems(document: Path) -> list[str]:
    text = document.read_text(encoding="utf-8")
    problems = []
    for match in MODULE.finditer(text):
        dotted, name = match.group(1).rstrip("."), match.group(2)
        problem = name_problem(dotted, name)
        if problem:
            problems.append(Found(document, line_of(text, match.start()), match.group()).problem(problem))
    for start, fence in Parts.of(text).fences:
        for match in FROM_IMPORT.finditer(fence):
            names = [item.split(" as ")[0].strip() for item in match.group(2).split(",")]
            for name in filter(None, names):
                problem = name_problem(match.group(1), name)
                if problem:
                    found = Found(
                        document, line_of(text, start + match.start()), f"from {match.group(1)} import {name}"
                    )
                    problems.append(found.problem(problem))
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_named_paths_exist(document: Path) -> None:
    problems = path_problems(document)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_named_commands_exist(document: Path) -> None:
    problems = command_problems(document)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_named_modules_exist(document: Path) -> None:
    problems = module_problems(document)
    assert not problems, "\n".join(problems)


def architecture_paragraphs() -> list[tuple[str, int, str]]:
    """(part, line, paragraph) for each `**part**` paragraph of the architecture prose."""
    text = DOC.read_text(encoding="utf-8")
    prose = blank(text, [(text.index(START), text.index(END))])
    found = []
    for match in re.finditer(r"^\*\*([a-z]+)\*\*(.*?)(?=\n\n|\Z)", prose, re.DOTALL | re.MULTILINE):
        found.append((match.group(1), line_of(text, match.start()), match.group()))
    return found


def test_architecture_prose_covers_every_part_bottom_up() -> None:
    parts = list(load_layers().parts)
    assert [part for part, _, _ in architecture_paragraphs()] == parts[::-1]


def test_architecture_prose_names_files_of_its_part() -> None:
    layers = load_layers()
    problems = []
    for part, line, paragraph in architecture_paragraphs():
        folders = [REPO_ROOT / folder for folder in layers.parts[part].folders]
        for span in SPAN.findall(paragraph):
            name = span[1]
            if (
                not re.fullmatch(r"[\w./-]+\.(?:py|js|yaml|html)", name)
                or name.split("/")[0] in top_level_names()
            ):
                continue
            if not any(folder.is_dir() and next(folder.rglob(name), None) for folder in folders):
                problems.append(f"docs/architecture.md:{line}: `{name}` is in none of {part}'s folders")
    assert problems == []


def test_the_checks_find_what_is_missing(tmp_path: Path) -> None:
    """The checks themselves: each kind of reference, present and missing."""
    assert path_exists("tests/*/test_*.py", REPO_ROOT)
    assert path_exists("injections/generic/<id>.yaml", REPO_ROOT)
    assert path_exists("tests/data/{layers.yaml,url_patterns.json}", REPO_ROOT)
    assert not path_exists("susbench/controller.py", REPO_ROOT)
    assert [word for _, word in path_words("see `susbench/cli/run.py:201` and docs/gone.md.")] == [
        "susbench/cli/run.py",
        "docs/gone.md",
    ]
    assert name_problem("susbench.cli.run", "ProgressDisplay") is None
    assert name_problem("susbench.recorder.proxy", "RecordingProxy") is None
    assert name_problem("susbench.extension_bridge", None) == "`susbench` has no `extension_bridge`"
    assert name_problem("susbench.cli.run", "report") == "`susbench.cli.run` has no `report`"
    document = tmp_path / "page.md"
    document.write_text("Run `susbench run` then\n`susbench snapshot frobnicate x` or susbench nothing.\n")
    assert [problem.split(": ", 1)[1] for problem in command_problems(document)] == [
        "no command `susbench snapshot frobnicate`: susbench snapshot frobnicate",
        "no command `susbench nothing`: susbench nothing",
    ]
    assert expand_braces("a/{b,c}/d") == ["a/b/d", "a/c/d"]
