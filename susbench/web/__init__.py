"""The local web: synthetic consumer sites on loopback that stand in for the live web.

Each name is imported from its module on first use: `--help` reads the local web's date
(`edition.DEFAULT_DATE`) without loading the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.web.catalog import SITES
    from susbench.web.server import LocalWeb

__getattr__ = lazy_names(__name__, {"catalog": ("SITES",), "server": ("LocalWeb",)})

__all__ = ["SITES", "LocalWeb"]
