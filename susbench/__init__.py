"""SusBench Replay: each part is a folder of this package.

recorder/ and replayer/ are folders of the repository that import as `susbench.recorder` and
`susbench.replayer`: an installed package holds them inside; a checkout finds them beside it, so code run
from a checkout (`python -m pytest`, `mitmdump -s recorder/warc_addon.py`) imports the checkout's own.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path

__version__ = "0.1.0"

BESIDE = ("recorder", "replayer")


class _CheckoutFolders:
    """Finds `susbench.recorder` and `susbench.replayer` in the repository folders beside this package."""

    def __init__(self, root: Path) -> None:
        self.folders = {f"{__name__}.{name}": root / name for name in BESIDE}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def _in_a_checkout() -> Path | None:
    here = Path(__file__).resolve().parent
    if (here / BESIDE[0]).is_dir() or not all(
        (here.parent / name / "__init__.py").is_file() for name in BESIDE
    ):
        return None
    return here.parent


if (_root := _in_a_checkout()) is not None and not any(
    isinstance(finder, _CheckoutFolders) for finder in sys.meta_path
):
    sys.meta_path.append(_CheckoutFolders(_root))
