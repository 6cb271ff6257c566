"""WordPress's parts that need no running app: its spec as `apps list` shows it, the seed document
made from the generated content (deterministic, pictures drawn, every article in a section of its
own), and the Apache settings template, whose every placeholder a start fills in."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

from susbench.apps.content import site_content
from susbench.apps.spec import find_spec
from susbench.apps.wordpress import seed_document
from tests.support.cli import run_cli

DAY = date(2026, 12, 7)


def test_listed_as_a_php_news_app_from_debian() -> None:
    listed = run_cli("apps", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    row = next(row for row in json.loads(listed.stdout) if row["name"] == "wordpress")
    wanted = ("php", "debian", "news", "6.1.9")
    assert (row["stack"], row["source"], row["category"], row["version"]) == wanted
    assert row["hosts"] == ["fernhilljournal.test"] and row["licence"] == "GPL-2.0-or-later"


def test_the_seed_document_is_the_days_content(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    content = site_content(DAY)
    document = seed_document(content, "fernhilljournal.test", first)
    again = seed_document(site_content(DAY), "fernhilljournal.test", second)
    assert json.dumps(document).replace(str(first), "") == json.dumps(again).replace(str(second), "")
    pictures = [[path.read_bytes() for path in sorted(folder.iterdir())] for folder in (first, second)]
    assert pictures[0] == pictures[1] and len(pictures[0]) == len(content.articles)
    articles = document["articles"]
    assert isinstance(articles, list) and len(articles) == len(content.articles)
    sections = {section["slug"] for section in document["categories"]}  # type: ignore[union-attr]
    assert {article["category"] for article in articles} == sections
    assert [article["title"] for article in articles] == [article.headline for article in content.articles]
    assert all(Path(article["image"]).read_bytes().startswith(b"\x89PNG") for article in articles)
    later = seed_document(site_content(date(2027, 1, 11)), "fernhilljournal.test", tmp_path)
    assert later["plans"] != document["plans"]


def test_every_placeholder_of_the_apache_settings_is_filled_at_start() -> None:
    conf = (find_spec("wordpress").folder / "apache.conf").read_text(encoding="utf-8")
    assert set(re.findall(r"\{[a-z]+\}", conf)) == {"{host}", "{port}", "{run}", "{web}"}
    assert "Listen 127.0.0.1:{port}" in conf
