"""Load user-written YAML/JSON files into models, with errors that name file and field.

Files are capped (size, nesting, and the size YAML aliases expand to), so a hostile or broken
file ends in one InputError instead of a hang, a memory blow-up or a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from susbench.core.errors import InputError

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_DATA_FILE_BYTES = 4 << 20
"""A task, injection or capture-plan file (the largest real one is a few KB)."""
MAX_DATA_NODES = 100_000
"""Values in one file once YAML aliases are expanded (a "billion laughs" file stops here)."""
MAX_DATA_DEPTH = 64
"""Nesting of mappings and lists in one YAML file (JSON stops at the interpreter's recursion limit)."""
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""PyYAML's safe loader on libyaml's parser where the wheel has it: the same documents and events,
parsed about 12 times faster (the catalogs are read at every command's and every run's start)."""
MAX_SHOWN = 80
MAX_PROBLEM = 300
"""How much of a bad value, and of a validator's own explanation, a message quotes."""


def _shorten(text: str, limit: int = MAX_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_validation_error(source: str, error: ValidationError) -> str:
    """Render every problem as `source: field.path: expected ..., got ...` (never pydantic's URL)."""
    lines = []
    for problem in error.errors(include_url=False):
        location = _shorten(".".join(str(part) for part in problem["loc"])) or "(top level)"
        given = problem.get("input")
        shown = _shorten(repr(given)) if not isinstance(given, dict | list) else type(given).__name__
        lines.append(f"{source}: field '{location}': {_shorten(problem['msg'], MAX_PROBLEM)} (got {shown})")
    return "\n".join(lines)


def _line_of(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


def _check_yaml_shape(path: Path, text: str) -> None:
    """Walk the YAML event stream (no recursion): refuse deep nesting and alias bombs before building."""
    counted = 0
    open_nodes: list[tuple[str | None, int]] = []
    sizes: dict[str, int] = {}
    for event in yaml.parse(text, Loader=SAFE_LOADER):
        line = f"line {event.start_mark.line + 1}" if event.start_mark else "(end)"
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_nodes) >= MAX_DATA_DEPTH:
                raise InputError(f"{path}: {line}: nested more than {MAX_DATA_DEPTH} levels deep")
            open_nodes.append((event.anchor, counted))
            counted += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, before = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = counted - before
        elif isinstance(event, yaml.ScalarEvent):
            counted += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                raise InputError(
                    f"{path}: {line}: alias *{event.anchor} is undefined or refers to its own node"
                )
            counted += sizes[event.anchor]
        if counted > MAX_DATA_NODES:
            raise InputError(
                f"{path}: {line}: more than {MAX_DATA_NODES} values (after expanding YAML aliases)"
            )


def read_data_file(path: Path) -> object:
    """Parse YAML or JSON, turning syntax errors into InputError with a line number."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    if path.stat().st_size > MAX_DATA_FILE_BYTES:
        raise InputError(f"{path}: {path.stat().st_size} bytes; expected at most {MAX_DATA_FILE_BYTES}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: line {_line_of(raw, exc.start)}: expected UTF-8 text") from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        _check_yaml_shape(path, text)
        return yaml.load(text, Loader=SAFE_LOADER)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{path}: {where}invalid YAML: {problem}") from None
    except RecursionError:
        raise InputError(f"{path}: nested more than {MAX_DATA_DEPTH} levels deep") from None
    except ValueError as exc:
        raise InputError(f"{path}: invalid value: {_shorten(str(exc))}") from None


def validate_data(source: str, data: object, model: type[ModelT]) -> ModelT:
    """Validate already-parsed data, naming `source` in any error."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping of fields, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(source, exc)) from None


def load_model(path: Path, model: type[ModelT]) -> ModelT:
    """Read one YAML/JSON file into `model`."""
    return validate_data(str(path), read_data_file(path), model)
