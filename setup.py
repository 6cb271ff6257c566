"""Maps the repository's top-level folders into the one package `susbench` (everything else is in
pyproject.toml):
- code: recorder/ and replayer/ install as `susbench.recorder` and `susbench.replayer`;
- data: each folder of DATA installs whole, every file in it, as `susbench/data/<folder>/`, where
  `susbench.core.paths` finds it (a checkout reads the folders where they are).

A new file or subfolder in a data folder is carried without editing this file; a new top-level data
folder is one more name in DATA."""

import warnings
from pathlib import Path

from setuptools import find_namespace_packages, setup

BESIDE = ("recorder", "replayer")
DATA = ("extension", "injections", "tasks", "snapshots", "sites", "study", "apps")
SKIP = ["*__pycache__*"]


def folder_packages(top: str) -> list[str]:
    """The folder and each folder under it, as packages (`recorder.templates`, ...)."""
    return [top, *(f"{top}.{name}" for name in find_namespace_packages(where=top, exclude=SKIP))]


data = [top for top in DATA if Path(top).is_dir()]
# A data folder's subfolders are data, not packages: setuptools warns of each that could be imported.
warnings.filterwarnings("ignore", message=r"Package 'susbench\.data\.")
code = [package for top in BESIDE for package in folder_packages(top)]

setup(
    packages=[
        *find_namespace_packages(include=["susbench", "susbench.*"], exclude=SKIP),
        *(f"susbench.{package}" for package in code),
        *(f"susbench.data.{top}" for top in data),
    ],
    package_dir={
        **{f"susbench.{top}": top for top in BESIDE},
        **{f"susbench.data.{top}": top for top in data},
    },
    # Every file beside the code is data it reads (prompts, scripts, styles, the BrowserGym package's
    # pyproject.toml); a data folder's subfolders too, whatever their names (`injections/voltcart.test/`).
    package_data={"": ["*"], **{f"susbench.data.{top}": ["**/*"] for top in data}},
    exclude_package_data={f"susbench.data.{top}": ["**/__pycache__/*", "**/*.pyc"] for top in data},
)
