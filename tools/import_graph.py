"""The project's import graph, read from the source with `ast`, and the parts it is layered in.

`python -m tools.import_graph` prints the picture of the parts for docs/architecture.md;
`python -m tools.import_graph --write` puts it there. tests/project/test_architecture.py checks the rules
in tests/data/layers.yaml against the same graph, so the document and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

from pydantic import Field

from susbench.core.loading import load_model
from susbench.core.models import Frozen
from susbench.core.paths import REPO_ROOT

NAMESPACE = "susbench"
BESIDE = ("recorder", "replayer")
"""Repository folders that import as parts of the namespace (`susbench.recorder`, `susbench.replayer`)."""
LAYERS_FILE = REPO_ROOT / "tests" / "data" / "layers.yaml"
DOC = REPO_ROOT / "docs" / "architecture.md"
START, END = "<!-- import-graph:start -->", "<!-- import-graph:end -->"


class Part(Frozen):
    about: str
    folders: tuple[str, ...] = Field(min_length=1)
    uses: tuple[str, ...] = ()


class ToleratedImport(Frozen):
    """An import that breaks the rules today, and why it is tolerated."""

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    why: str


class Layers(Frozen):
    parts: dict[str, Part]
    exceptions: tuple[ToleratedImport, ...] = ()

    def part_of_path(self, path: str) -> str | None:
        """The part naming the deepest folder that holds this repository path (or the path itself)."""
        found = [
            (len(folder), name)
            for name, part in self.parts.items()
            for folder in part.folders
            if path == folder or path.startswith(folder + "/")
        ]
        return max(found)[1] if found else None

    def part_of(self, module: str) -> str | None:
        path = module_path(module)
        return None if path is None else self.part_of_path(path)


def load_layers() -> Layers:
    return load_model(LAYERS_FILE, Layers)


def module_path(module: str) -> str | None:
    """The repository path of a module's file, e.g. susbench.recorder.proxy -> recorder/proxy.py."""
    files = module_files()
    return str(files[module].relative_to(REPO_ROOT)) if module in files else None


@cache
def module_files(root: Path = REPO_ROOT) -> dict[str, Path]:
    """Every module of the project by dotted name (a package is its __init__)."""
    found = {}
    folders = [(root / NAMESPACE, (NAMESPACE,))] + [(root / name, (NAMESPACE, name)) for name in BESIDE]
    for folder, prefix in folders:
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            dotted = prefix + (parts[:-1] if parts[-1] == "__init__" else parts)
            found[".".join(dotted)] = path
    return found


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """Project modules one import statement names (`from pkg import sub` names the submodule)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    names = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        names.add(submodule if submodule in known else base)
    return {name for name in names if name in known}


def import_graph(root: Path = REPO_ROOT) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its source (type-only imports included)."""
    files = module_files(root)
    known = set(files)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imports: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports |= _imported(module, path.name == "__init__.py", node, known)
        graph[module] = imports - {module}
    return graph


def part_edges(graph: dict[str, set[str]], layers: Layers) -> dict[str, set[str]]:
    """part -> the other parts its modules import."""
    edges: dict[str, set[str]] = defaultdict(set)
    for module, imports in graph.items():
        source = layers.part_of(module)
        for target in (layers.part_of(name) for name in imports):
            if source and target and source != target:
                edges[source].add(target)
    return edges


def mermaid(layers: Layers, edges: dict[str, set[str]]) -> str:
    """The parts top to bottom and every import between them (dashed: tolerated exceptions).

    Imports of the bottom part are summed up in its label rather than drawn, one arrow per part.
    """
    names = list(layers.parts)
    bottom = names[-1]
    tolerated = {(layers.part_of(item.source), layers.part_of(item.target)) for item in layers.exceptions}
    users = [name for name in names if bottom in edges.get(name, set())]
    label = "every part builds on it" if users == names[:-1] else "used by " + ", ".join(users)
    lines = ["```mermaid", "flowchart TD"]
    lines += [f'    {name}["{name}"]' for name in names[:-1]]
    lines.append(f'    {bottom}["{bottom}: {label}"]')
    for source in names:
        for target in (name for name in names[:-1] if name in edges.get(source, set())):
            arrow = "-.->" if (source, target) in tolerated else "-->"
            lines.append(f"    {source} {arrow} {target}")
    lines.append("```")
    return "\n".join(lines)


def doc_picture(text: str) -> str:
    """The generated block between the markers in docs/architecture.md."""
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def main() -> None:
    layers = load_layers()
    picture = mermaid(layers, part_edges(import_graph(), layers))
    if "--write" in sys.argv:
        text = DOC.read_text(encoding="utf-8")
        head, rest = text.split(START, 1)
        DOC.write_text(f"{head}{START}\n{picture}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
    else:
        print(picture)


if __name__ == "__main__":
    main()
