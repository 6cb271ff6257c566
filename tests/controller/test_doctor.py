"""`susbench doctor` names every optional extra the package declares (the developers' own apart)."""

from __future__ import annotations

import tomllib

from susbench.controller.doctor import EXTRAS, check_extras
from susbench.core.paths import REPO_ROOT


def test_every_extra_of_the_package_is_checked() -> None:
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert set(EXTRAS) == set(declared) - {"dev"}
    assert {check.name for check in check_extras()} >= {"extra: local-model", "extra: agents", "extra: ray"}
