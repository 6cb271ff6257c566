"""Hostile and quirky page behaviours, switched on per visitor by the `quirk` cookie.

Each quirk is one file in `quirks/`: a script (page JavaScript, after the shared `prelude.js`) or a
stylesheet (page CSS), put first in the head of every HTML page of every site while the cookie names
it. The sites' pages stay byte-identical without the cookie, so snapshots and the demo never see
them; tests of the extension use them to be the page the extension must withstand.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

QUIRKS_DIR = Path(__file__).with_name("quirks")
COOKIE = "quirk"
PRELUDE = "prelude"
HEAD = '<meta charset="utf-8">\n'


@cache
def quirk_files() -> dict[str, Path]:
    """Every quirk by name (its file's stem), the prelude excluded."""
    files = sorted([*QUIRKS_DIR.glob("*.js"), *QUIRKS_DIR.glob("*.css")])
    return {path.stem: path for path in files if path.stem != PRELUDE}


def quirk_names() -> list[str]:
    return sorted(quirk_files())


def _element(path: Path) -> str:
    code = path.read_text(encoding="utf-8")
    if path.suffix == ".css":
        return f"<style>{code}</style>\n"
    prelude = (QUIRKS_DIR / f"{PRELUDE}.js").read_text(encoding="utf-8")
    return f"<script>{prelude}\n{code}</script>\n"


def with_quirk(html: str, name: str) -> str | None:
    """`html` with the quirk first in its head; None when no quirk has that name."""
    path = quirk_files().get(name)
    if path is None:
        return None
    return html.replace(HEAD, HEAD + _element(path), 1)
