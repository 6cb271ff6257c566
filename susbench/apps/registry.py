"""Which driver class runs each app (imported only when that app is used)."""

from __future__ import annotations

import importlib

from susbench.apps.base import AppDriver
from susbench.apps.spec import find_spec

DRIVERS = {
    "ghost": "susbench.apps.ghost:GhostDriver",
    "oscar": "susbench.apps.oscar:OscarDriver",
    "pretix": "susbench.apps.pretix:PretixDriver",
    "wordpress": "susbench.apps.wordpress:WordPressDriver",
}


def driver(name: str) -> AppDriver:
    """The driver of the app `name` (its spec from apps/<name>/app.yaml)."""
    spec = find_spec(name)
    module, _, attribute = DRIVERS[spec.name].partition(":")
    return getattr(importlib.import_module(module), attribute)(spec)
