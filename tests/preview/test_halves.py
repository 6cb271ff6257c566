"""The held-out discipline: the styled pages' split is recorded as data, follows its stated rule, and
`injections realism --half` measures the pages of one half only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from susbench.core.errors import InputError
from susbench.preview.halves import HALVES_FILE, half_of, load_halves
from tests.support.cli import run_cli

SAUCEDEMO = Path(__file__).parents[1] / "data" / "styled-shops" / "saucedemo"


def test_every_recorded_page_is_in_the_half_the_rule_gives_it() -> None:
    halves = load_halves()
    assert {page.half for page in halves.pages} == {"tuning", "held-out"}
    for page in halves.pages:
        assert page.half == half_of(page.id), page.id
    # Every source of each kind is there: the project's shop, ../shared's pages and WARCs, the three apps.
    sources = {page.source.rsplit("/", 1)[0] for page in halves.pages}
    assert {
        "tests/data/styled-shops/saucedemo",
        "shared/realdata/pages",
        "shared/realdata/product-pages",
        "shared/realdata/warc",
        "snapshots/apps",
    } <= sources
    assert {Path(page.source).name for page in halves.pages if page.source.startswith("snapshots/apps/")} >= {
        "oscar-2026-12-07.wacz",
        "wordpress-2026-12-07.wacz",
        "ghost-2026-12-07.wacz",
    }


def test_the_rule_reads_the_hash_of_the_page_id_only() -> None:
    # sha256 of "hellofresh.html" begins b99353c7 (odd), of the other 189cea32 (even): fixed
    # expectations, so the rule cannot drift silently.
    assert half_of("hellofresh.html") == "held-out"
    assert half_of("saucedemo-inventory.html.gz") == "tuning"


def test_a_page_put_in_the_other_half_by_hand_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load(HALVES_FILE.read_text(encoding="utf-8"))
    page = data["pages"][0]
    page["half"] = "tuning" if page["half"] == "held-out" else "held-out"
    bad = tmp_path / "halves.yaml"
    bad.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError, match=f"{page['id']!r}.*the rule puts it in"):
        load_halves(bad)


@pytest.mark.e2e
def test_realism_with_a_half_measures_only_that_half_s_pages() -> None:
    held_out = SAUCEDEMO / "saucedemo-item-4.html.gz"
    tuning = SAUCEDEMO / "saucedemo-inventory.html.gz"
    assert (half_of(held_out.name), half_of(tuning.name)) == ("held-out", "tuning")
    args = ("injections", "realism", str(held_out), str(tuning), "--half", "held-out")
    done = run_cli(*args, "--injections", "generic-buybox-returns-fee", "--json", timeout=600)
    assert done.returncode == 0, done.stderr
    assert [row["page"] for row in json.loads(done.stdout)] == [held_out.name]
