"""An app's description (`apps/<name>/app.yaml`) and where its installed copy lives."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.loading import load_model
from susbench.core.models import Frozen, Hostname, Identifier, SiteCategory
from susbench.core.paths import APPS_DIR, cache_dir

Stack = Literal["python", "php", "node"]
Source = Literal["pypi", "debian", "npm"]


class AppSpec(Frozen):
    """What an app is, where `make` installs it from, and the hostnames it is served under."""

    name: Identifier
    title: str = Field(description="the software's own name")
    version: str = Field(description="the version installed (pinned)")
    stack: Stack
    source: Source = Field(description="the package registry `make` installs it from")
    licence: str = Field(description="SPDX id of the software's licence")
    category: SiteCategory
    hosts: tuple[Hostname, ...] = Field(min_length=1, description="its hostnames; the first is the main one")
    start_path: str = Field(default="/", pattern=r"^/")
    needs: tuple[str, ...] = Field(default=(), description="commands that must be on PATH to install it")
    description: str = ""

    @property
    def folder(self) -> Path:
        return APPS_DIR / self.name

    @property
    def start_url(self) -> str:
        return f"https://{self.hosts[0]}{self.start_path}"


def app_cache(name: str) -> Path:
    """`~/.cache/susbench/apps/<name>`: the installed software and its pristine data, never in git."""
    folder = cache_dir() / "apps" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@cache
def load_specs(folder: Path = APPS_DIR) -> tuple[AppSpec, ...]:
    """Every `apps/*/app.yaml`, sorted by name; each spec's name is its folder's."""
    specs = []
    for path in sorted(folder.glob("*/app.yaml")):
        spec = load_model(path, AppSpec)
        if spec.name != path.parent.name:
            raise SusbenchError(
                f"{path}: field 'name': {spec.name!r}; expected the folder's name {path.parent.name!r}"
            )
        specs.append(spec)
    return tuple(specs)


def find_spec(name: str) -> AppSpec:
    for spec in load_specs():
        if spec.name == name:
            return spec
    known = ", ".join(spec.name for spec in load_specs()) or "none"
    raise SusbenchError(f"app {name!r}: no such app; expected one of {known} (apps/<name>/app.yaml)")
