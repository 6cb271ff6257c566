"""A package's names imported on first use (PEP 562), so importing one light name of a package does
not import all of its modules: `--help` of every command declares its options with a few models of
packages (browser, container, controller) whose other modules load Playwright, DuckDB or mitmproxy."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, homes: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The package's module `__getattr__`: `homes` maps each submodule to the names it exports."""
    home = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
