"""The local web: synthetic consumer sites on loopback that stand in for the live web."""

from susbench.web.catalog import SITES
from susbench.web.server import LocalWeb

__all__ = ["SITES", "LocalWeb"]
