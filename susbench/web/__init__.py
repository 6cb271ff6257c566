"""The local web: synthetic consumer sites on loopback that stand in for the live web."""

from susbench.web.catalog import SITES
from susbench.web.server import LocalWeb, chromium_args

__all__ = ["SITES", "LocalWeb", "chromium_args"]
