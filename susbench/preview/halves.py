"""The held-out discipline of `injections realism`: every styled page the project has, in one of two
halves by a rule that never looks at a score, so the look model is tuned on one half and judged on
the other (`realism_halves.yaml`, `injections realism --half`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import Field

from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Frozen
from susbench.core.paths import REPO_ROOT, shared_dir

HALVES_FILE = Path(__file__).with_name("realism_halves.yaml")
Half = Literal["tuning", "held-out"]
SHARED_PREFIX = "shared/"


def half_of(page_id: str) -> Half:
    """The rule: the first 8 hex digits of the id's SHA-256, odd = held-out. Ids are the page names
    the realism report prints (a saved page's file name; an archive's `file:url`)."""
    return "held-out" if int(hashlib.sha256(page_id.encode()).hexdigest()[:8], 16) % 2 else "tuning"


class StyledPage(Frozen):
    """One styled page and the half the rule puts it in."""

    id: str = Field(description="the page's name in the realism report")
    source: str = Field(
        description="the file holding it: relative to the repository, or shared/... for ../shared"
    )
    what: str = Field(default="", description="the page, for a reader")
    half: Half


class Halves(Frozen):
    rule: str
    pages: tuple[StyledPage, ...]

    def of(self, half: Half) -> tuple[StyledPage, ...]:
        return tuple(page for page in self.pages if page.half == half)


def source_path(page: StyledPage) -> Path:
    if page.source.startswith(SHARED_PREFIX):
        return shared_dir() / page.source.removeprefix(SHARED_PREFIX)
    return REPO_ROOT / page.source


def load_halves(path: Path = HALVES_FILE) -> Halves:
    """The split as recorded; a page whose half is not the rule's, or listed twice, is refused."""
    halves = load_model(path, Halves)
    seen: set[str] = set()
    for page in halves.pages:
        if page.id in seen:
            raise InputError(f"{path}: page {page.id!r} is listed twice")
        seen.add(page.id)
        if page.half != half_of(page.id):
            rule = half_of(page.id)
            raise InputError(f"{path}: page {page.id!r} is in {page.half!r}; the rule puts it in {rule!r}")
    return halves


def half_pages(half: Half, path: Path = HALVES_FILE) -> tuple[list[str], set[str]]:
    """What `injections realism --half` opens: the files holding the half's pages, and their ids."""
    pages = load_halves(path).of(half)
    for page in pages:
        if not source_path(page).exists():
            shared = page.source.startswith(SHARED_PREFIX)
            hint = " (SUSBENCH_SHARED names the shared test data)" if shared else ""
            raise InputError(f"{path}: page {page.id!r}: its file {source_path(page)} does not exist{hint}")
    sources = list(dict.fromkeys(str(source_path(page)) for page in pages))
    return sources, {page.id for page in pages}
