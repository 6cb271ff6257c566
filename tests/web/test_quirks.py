"""Quirks of the local web: a hostile or quirky behaviour first in the head of every page, and only for
a visitor whose cookie names it."""

from __future__ import annotations

from datetime import date

import pytest

from susbench.web.app import Request, WebApp
from susbench.web.quirks import QUIRKS_DIR, quirk_names

PAGE = ("voltcart.test", "/item/aero-14-laptop")


def fetch(app: WebApp, cookie: str = "") -> tuple[int, str]:
    response = app.handle(Request("GET", *PAGE, {"cookie": cookie} if cookie else {}))
    return response.status, response.body.decode()


@pytest.mark.parametrize(
    ("name", "suffix", "element"), [("swallow-clicks", "js", "<script>"), ("css-empty-div", "css", "<style>")]
)
def test_quirk_comes_first_in_the_head_and_only_with_its_cookie(name: str, suffix: str, element: str) -> None:
    app = WebApp(date(2026, 11, 29), 0)
    _, plain = fetch(app)
    status, quirky = fetch(app, f"quirk={name}")
    assert status == 200
    start = plain.index('<meta charset="utf-8">\n') + len('<meta charset="utf-8">\n')
    inserted = quirky[start : start + len(quirky) - len(plain)]
    assert quirky[:start] + quirky[start + len(inserted) :] == plain
    assert inserted.startswith(element)
    assert (QUIRKS_DIR / f"{name}.{suffix}").read_text(encoding="utf-8") in inserted


def test_unknown_quirk_is_one_clear_answer() -> None:
    status, body = fetch(WebApp(date(2026, 11, 29), 0), "quirk=nope")
    assert status == 400
    assert body.startswith("unknown quirk 'nope' in the quirk cookie; known: ")
    assert all(name in body for name in quirk_names())
