"""One namespace: `pip install .` puts `susbench` and nothing else into site-packages, with recorder/ and
replayer/ inside it, and a checkout imports its own recorder/ and replayer/ as the same names."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT

SOURCES = ("pyproject.toml", "setup.py", "README.md", "susbench", "recorder", "replayer")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install .` of a copy of the sources (so the build leaves nothing in the checkout)."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (REPO_ROOT / name).is_dir():
            shutil.copytree(REPO_ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO_ROOT / name, source / name)
    target = tmp_path_factory.mktemp("site-packages")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "--no-index", "--target", str(target), str(source)], check=True, timeout=240)
    return target


def test_pip_install_puts_only_susbench_into_site_packages(installed: Path) -> None:
    top_level = sorted(
        path.name
        for path in installed.iterdir()
        if not path.name.endswith(".dist-info") and path.name != "bin"
    )
    assert top_level == ["susbench"]
    assert (installed / "susbench" / "recorder" / "warc_addon.py").is_file()
    assert (installed / "susbench" / "recorder" / "secrets.yaml").is_file()
    assert (installed / "susbench" / "replayer" / "rules.yaml").is_file()
    assert (installed / "susbench" / "preview" / "anchor_probe.js").is_file()
    assert (installed / "susbench" / "agents" / "prompts").is_dir()


def test_the_installed_package_imports_recorder_and_replayer_from_inside_it(
    installed: Path, tmp_path: Path
) -> None:
    code = "import susbench.recorder.redaction, susbench.replayer.matching as m; print(m.__file__)"
    shown = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert Path(shown) == installed / "susbench" / "replayer" / "matching.py"


def test_a_checkout_without_any_install_imports_its_own_folders(tmp_path: Path) -> None:
    """No site-packages (`-S`), only the checkout on sys.path: what `mitmdump -s recorder/warc_addon.py`
    and `python -m pytest` from a checkout see before any installed finder."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import susbench.recorder, susbench.replayer; "
        "print(susbench.recorder.__file__); print(susbench.replayer.__file__)"
    )
    shown = subprocess.run(
        [sys.executable, "-S", "-c", code, str(REPO_ROOT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    assert [Path(line) for line in shown] == [
        REPO_ROOT / "recorder" / "__init__.py",
        REPO_ROOT / "replayer" / "__init__.py",
    ]
