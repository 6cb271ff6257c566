"""Load user-written YAML/JSON files into models, with errors that name file and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from susbench.errors import InputError

ModelT = TypeVar("ModelT", bound=BaseModel)


def describe_validation_error(source: str, error: ValidationError) -> str:
    """Render every problem as `source: field.path: expected ..., got ...`."""
    lines = []
    for problem in error.errors(include_url=False):
        location = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        given = problem.get("input")
        shown = repr(given) if not isinstance(given, dict | list) else type(given).__name__
        if len(shown) > 80:
            shown = shown[:77] + "..."
        lines.append(f"{source}: field '{location}': {problem['msg']} (got {shown})")
    return "\n".join(lines)


def read_data_file(path: Path) -> object:
    """Parse YAML or JSON, turning syntax errors into InputError with a line number."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{path}: {where}invalid YAML: {problem}") from None


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


def load_models(folder: Path, model: type[ModelT], pattern: str = "*.yaml") -> list[ModelT]:
    """Read every matching file below `folder`, sorted by path for determinism."""
    return [load_model(path, model) for path in sorted(folder.rglob(pattern))]
