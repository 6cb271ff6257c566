"""The front door: a README a newcomer reads in minutes, which says on its first screen how to reach
`susbench` after the set-up; the licence and the citation beside it, agreeing with the package."""

from __future__ import annotations

import tomllib

import yaml

from susbench import __version__
from susbench.core.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
FIRST_SCREEN = 40


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    first_screen = "\n".join(lines[:FIRST_SCREEN])
    assert "make demo" in first_screen and "make test" in first_screen
    assert ".venv/bin/susbench" in first_screen and "source .venv/bin/activate" in first_screen


def test_licence_and_citation_agree_with_the_package() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert (REPO_ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    citation = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    assert citation["version"] == __version__ == project["version"]
    paper = citation["preferred-citation"]
    assert paper["url"] == "https://arxiv.org/abs/2510.11035" and paper["authors"][0]["family-names"] == "Guo"
