"""The package installs anywhere: an sdist built from the checkout holds every data folder, the wheel
built from that sdist holds them too, and, installed into a fresh virtualenv, it runs the demo from an
empty folder with no network and no checkout in sight.

The fresh virtualenv gets the wheel alone (`pip install --no-deps --no-index`); its dependencies are
the running virtualenv's, seen through a `.pth` line naming that site-packages folder. A path line
adds the folder to sys.path without running its own `.pth` files, so the checkout's editable install
stays out: what imports as `susbench` is the wheel's, which the test checks. Installing the
dependencies again from the registry would take minutes and the network; that the wheel declares
every one of them is checked instead.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT
from susbench.results.store import Store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]


def data_folders() -> tuple[str, ...]:
    """setup.py's DATA: the top-level folders the package carries (read, as setup.py runs setup())."""
    tree = ast.parse((REPO_ROOT / "setup.py").read_text(encoding="utf-8"))
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    return ast.literal_eval(assigned["DATA"])


def checkout_files() -> list[str]:
    """The checkout's files as a clean clone would have them, uncommitted ones too (not the ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (REPO_ROOT / name).is_file())


def data_files() -> list[str]:
    """Every file of the data folders, as the repository has it."""
    folders = data_folders()
    return [name for name in checkout_files() if name.split("/", 1)[0] in folders]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`build_sdist` on a copy of the checkout (so the build leaves nothing in it)."""
    source = tmp_path_factory.mktemp("checkout")
    for name in checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, source / name)
    out = tmp_path_factory.mktemp("sdist")
    build = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.split()[-1]


@pytest.fixture(scope="module")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the unpacked sdist, as `pip install` of an sdist would build it."""
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    out = tmp_path_factory.mktemp("wheel")
    (source,) = unpacked.iterdir()
    wheel_command = ["wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out)]
    done = subprocess.run([*PIP, *wheel_command, str(source)], timeout=300, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the checkout with the wheel installed (and the running one's
    dependencies on its path, see the module's docstring)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = ["--python", str(python), "install", "--quiet", "--no-deps", "--no-index", "--no-compile"]
    done = subprocess.run([*PIP, *install, str(wheel)], timeout=300, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "running-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def outside_env(venv: Path, home: Path) -> dict[str, str]:
    """A user's environment: the virtualenv's bin on PATH, nothing pointing at the checkout."""
    return {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "SUSBENCH_HOME": str(home / "cache"),
        "LANG": "C.UTF-8",
        "COLUMNS": "80",
        "PYTHONUNBUFFERED": "1",
    }


def test_the_sdist_holds_every_data_file(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        held = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = [name for name in data_files() if name not in held]
    assert data_files() and missing == []
    assert {"setup.py", "pyproject.toml", "README.md", "LICENSE"} <= held


def test_the_wheel_holds_every_data_file_inside_the_package(wheel: Path) -> None:
    held = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in data_files() if f"susbench/data/{name}" not in held]
    assert missing == []
    assert {name.split("/", 1)[0] for name in held if not name.startswith("susbench_replay-")} == {"susbench"}
    assert not [name for name in held if "__pycache__" in name or name.endswith(".pyc")]


def test_the_installed_package_reads_its_own_data_and_declares_its_dependencies(
    venv: Path, tmp_path: Path
) -> None:
    code = (
        "import susbench; from susbench.core import paths; from importlib import metadata;"
        "from packaging.requirements import Requirement\n"
        "print(susbench.__file__); print(paths.DATA_ROOT)\n"
        "for text in metadata.requires('susbench-replay'):\n"
        "    wanted = Requirement(text)\n"
        "    if wanted.marker is None and not wanted.specifier.contains(metadata.version(wanted.name)):\n"
        "        print('unmet', text)\n"
    )
    (tmp_path / "home").mkdir()
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd=tmp_path,
        env=outside_env(venv, tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    package, data, *unmet = shown.stdout.splitlines()
    assert Path(package).is_relative_to(venv) and Path(data).is_relative_to(venv)
    assert any((Path(data) / "snapshots").glob("*.wacz")) and unmet == []


def test_the_installed_demo_runs_offline_from_an_empty_folder(venv: Path, tmp_path: Path) -> None:
    """`susbench demo --tasks 'voltcart-*' --no-local-model` in a network namespace of its own (only
    loopback, up), as a user who installed the wheel would run it: to the end, report included."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("needs unshare (util-linux) and ip (iproute2): run `make packages` (ci/test-packages.sh)")
    folder, home = tmp_path / "empty", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    demo = "ip link set lo up && exec susbench demo --tasks 'voltcart-*' --no-local-model --db demo.duckdb"
    done = subprocess.run(
        ["unshare", "-rn", "sh", "-c", demo],
        cwd=folder,
        env=outside_env(venv, home),
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    assert "report: demo-report/report.html" in done.stdout, done.stdout[-3000:]
    assert list((folder / "demo-report").glob("figure4-1-*-a.png"))  # the first configuration's panel (a)
    with Store(folder / "demo.duckdb", read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, count(*), count(*) FILTER (WHERE outcome = 'error') "
            "FROM episode_outcomes GROUP BY operator ORDER BY operator"
        )
    tasks = len(list((REPO_ROOT / "tasks").glob("voltcart-*.yaml")))
    assert rows == [("careful", tasks, 0), ("naive", tasks, 0), ("random", tasks, 0)]
