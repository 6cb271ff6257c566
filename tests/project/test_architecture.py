"""The layering you can draw: every import obeys tests/data/layers.yaml, no module cycle, and the
picture in docs/architecture.md is the one generated from the code."""

from __future__ import annotations

import ast

import pytest

from susbench.core.paths import REPO_ROOT
from tools.import_graph import (
    DOC,
    Layers,
    doc_picture,
    import_graph,
    load_layers,
    mermaid,
    module_files,
    part_edges,
)


@pytest.fixture(scope="module")
def layers() -> Layers:
    return load_layers()


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_module_belongs_to_a_part(graph: dict[str, set[str]], layers: Layers) -> None:
    assert len(graph) > 50
    assert [module for module in graph if layers.part_of(module) is None] == []
    assert {"susbench.core.models", "susbench.cli.main", "susbench.replayer.check"} <= set(graph)


def test_parts_are_folders_and_the_namespace_holds_no_loose_module(layers: Layers) -> None:
    named = [path for part in layers.parts.values() for path in part.folders]
    assert [path for path in named if not (REPO_ROOT / path).exists()] == []
    assert [path for path in named if not (REPO_ROOT / path).is_dir()] == ["susbench/__main__.py"]
    assert sorted(path.name for path in (REPO_ROOT / "susbench").glob("*.py")) == [
        "__init__.py",
        "__main__.py",
    ]
    assert layers.part_of("susbench.recorder.proxy") == "recorder"
    assert layers.part_of("susbench.core.models") == "core"
    assert layers.part_of("susbench") == "core"


def test_parts_import_only_what_they_use(graph: dict[str, set[str]], layers: Layers) -> None:
    tolerated = {(item.source, item.target) for item in layers.exceptions}
    broken = [
        f"{module} ({source}) imports {target} ({layers.part_of(target)})"
        for module, imports in sorted(graph.items())
        for target in sorted(imports)
        if (source := layers.part_of(module)) != layers.part_of(target)
        and layers.part_of(target) not in layers.parts[str(source)].uses
        and (module, target) not in tolerated
    ]
    assert broken == []
    stale = [
        (item.source, item.target)
        for item in layers.exceptions
        if item.target not in graph.get(item.source, ())
    ]
    assert stale == [], "remove these exceptions from tests/data/layers.yaml: they are no longer needed"


def test_uses_point_downwards_only(layers: Layers) -> None:
    order = list(layers.parts)
    for name, part in layers.parts.items():
        assert all(order.index(used) > order.index(name) for used in part.uses), name


def test_recorder_and_replayer_stay_below_the_controller(graph: dict[str, set[str]]) -> None:
    forbidden = (
        "susbench.controller",
        "susbench.operators",
        "susbench.results.store",
        "susbench.cli",
    )
    reaching = [
        (module, target)
        for module, imports in graph.items()
        if module.startswith(("susbench.recorder", "susbench.replayer"))
        for target in imports
        if target.startswith(forbidden)
    ]
    assert reaching == []


STORE_READERS = {"analysis", "cli"}
STORE_WRITERS = {"controller", "study"}


def test_only_the_controller_and_a_study_write_results(layers: Layers) -> None:
    """The other parts hand the controller records (susbench.records) and never reach the store; the
    analysis and the command line reach it to read, so each of their `Store(...)` is read-only."""
    reaching = {name for name, part in layers.parts.items() if "results" in part.uses}
    assert reaching == STORE_READERS | STORE_WRITERS
    writable = []
    for module, path in sorted(module_files().items()):
        if layers.part_of(module) in STORE_WRITERS | {"results"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Store"
                and not any(
                    keyword.arg == "read_only"
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value
                    for keyword in node.keywords
                )
            ):
                writable.append(f"{module}:{node.lineno}")
    assert writable == []


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle between modules, or None (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_no_import_cycles(graph: dict[str, set[str]]) -> None:
    assert find_cycle(graph) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_document_shows_the_code(graph: dict[str, set[str]], layers: Layers) -> None:
    expected = mermaid(layers, part_edges(graph, layers))
    assert doc_picture(DOC.read_text(encoding="utf-8")) == expected, (
        "run: python -m tools.import_graph --write"
    )
