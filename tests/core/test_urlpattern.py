"""The one URL-pattern language: every case of the table the extension's JS runs too, and every place
in Python that matches a glob (host maps, page rules, completion checks, task selectors) uses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.core.models import HostMap, PageMatch
from susbench.core.urlpattern import url_matches

CASES = json.loads((Path(__file__).parents[1] / "data" / "url_patterns.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['pattern']}~{c['url']}" for c in CASES])
def test_every_case_of_the_shared_table(case: dict[str, object]) -> None:
    assert url_matches(str(case["pattern"]), str(case["url"])) is case["match"]


def test_the_table_covers_both_answers_and_every_special_character() -> None:
    assert {case["match"] for case in CASES} == {True, False}
    patterns = "".join(str(case["pattern"]) for case in CASES)
    assert all(char in patterns for char in "*?[].$^{}|\\()+")


def test_project_globs_share_the_language() -> None:
    host_map = HostMap.parse(["*.test=127.0.0.1:1"])
    assert host_map.lookup("News.Deep.test", 443) == ("127.0.0.1", 1)
    assert host_map.lookup("test.example", 443) is None
    # `[ab]` is literal text, never a character class (fnmatch would have matched 'a').
    with pytest.raises(ValueError, match="does not match"):
        PageMatch(url="shop.test/[ab]", anchors=({"css": "main"},), example="https://shop.test/a")
    PageMatch(url="shop.test/cart", anchors=({"css": "main"},), example="https://SHOP.test/cart#x")


def test_task_selector_glob_uses_the_language() -> None:
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks(injections=injections)
    assert [task.id for task in select_tasks(tasks, "VOLTCART-*-cart", injections)] == [
        task.id for task in tasks if task.id.startswith("voltcart-") and task.id.endswith("-cart")
    ]
