"""Site catalogs (`sites/*.yaml`): the real-site list and the local web's, and their errors."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from susbench.core.errors import InputError, SusbenchError
from susbench.core.paths import REPO_ROOT
from susbench.recorder.catalog import SITE_CATEGORIES, CrawlSettings, load_site_catalog
from susbench.web import SITES

SITES_DIR = Path(REPO_ROOT) / "sites"


def test_real_catalog_has_55_sites_in_every_category() -> None:
    catalog = load_site_catalog(SITES_DIR / "catalog.yaml")
    assert len(catalog.sites) == 55
    counts = Counter(site.category for site in catalog.sites)
    assert set(counts) == set(SITE_CATEGORIES)
    assert min(counts.values()) >= 5
    assert len({site.country for site in catalog.sites}) >= 8
    assert {site.locale.split("-")[0] for site in catalog.sites} >= {"en", "de", "fr", "es", "it", "nl", "pl"}
    planned = [site for site in catalog.sites if site.plan is not None]
    assert planned and all(site.plan.id == site.id for site in planned)
    header = (SITES_DIR / "catalog.yaml").read_text(encoding="utf-8").split("\ndescription:")[0]
    assert "not public" in header and "one-file change" in header


def test_local_web_catalog_crawls_the_eight_sites_without_plans() -> None:
    catalog = load_site_catalog(SITES_DIR / "localweb.yaml")
    assert sorted(site.host for site in catalog.sites) == sorted(site.host for site in SITES)
    assert all(site.plan is None and site.crawl is not None for site in catalog.sites)


def test_select_by_id_category_and_glob_keeps_catalog_order() -> None:
    catalog = load_site_catalog(SITES_DIR / "catalog.yaml")
    chosen = [site.id for site in catalog.select("news,amazon-us,zalando-*")]
    assert chosen[0] == "amazon-us" and "zalando-de" in chosen and "spiegel" in chosen
    assert len(chosen) == 8
    with pytest.raises(SusbenchError, match=r"'nowhere' matches no site.*a category"):
        catalog.select("nowhere")


def _write(tmp_path: Path, sites: list[dict[str, object]]) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"sites": sites}), encoding="utf-8")
    return path


GOOD = {
    "id": "shop",
    "name": "Shop",
    "category": "fashion",
    "start_url": "https://shop.example/",
    "country": "DE",
    "locale": "de-DE",
    "timezone": "Europe/Berlin",
    "crawl": {},
}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"locale": "german"}, r"field 'sites\.1 \(bad\)\.locale'"),
        ({"timezone": "Mars/Olympus"}, r"sites\.1 \(bad\)\.timezone'.*IANA time zone"),
        ({"start_url": "ftp://shop.example/"}, r"sites\.1 \(bad\)\.start_url'.*http\(s\) URL"),
        ({"category": "toys"}, r"sites\.1 \(bad\)\.category'"),
        ({"crawl": {"depth": 9}}, r"sites\.1 \(bad\)\.crawl\.depth'"),
        ({"plan": {"pages": [{"url": "https://shop.example/"}]}}, r"either 'plan'.*or 'crawl'"),
        ({"id": "shop"}, r"site id 'shop' is used twice"),
    ],
)
def test_errors_name_file_site_and_field(tmp_path: Path, change: dict[str, object], expected: str) -> None:
    path = _write(tmp_path, [GOOD, {**GOOD, "id": "bad", **change}])
    with pytest.raises(InputError, match=expected) as caught:
        load_site_catalog(path)
    assert str(path) in str(caught.value) and "errors.pydantic" not in str(caught.value)


def test_crawl_flag_parses_like_the_yaml() -> None:
    assert CrawlSettings.parse("depth=1, pages=5,cart=false") == CrawlSettings(depth=1, pages=5, cart=False)
    with pytest.raises(InputError, match=r"--crawl: field 'pages'"):
        CrawlSettings.parse("pages=0")
    with pytest.raises(InputError, match=r"--crawl: 'depth': expected KEY=VALUE"):
        CrawlSettings.parse("depth")
    with pytest.raises(InputError, match=r"--crawl: field 'speed'"):
        CrawlSettings.parse("speed=3")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--catalog", "sites/localweb.yaml"), "--catalog needs --out-dir"),
        (("http://shop.example/", "--out", "x.wacz", "--crawl", "depth=1"), "--crawl: only with --catalog"),
        (("--catalog", "sites/localweb.yaml", "--out-dir", "x", "--crawl", "depth=9"), "field 'depth'"),
        (("--catalog", "sites/none.yaml", "--out-dir", "x"), "sites/none.yaml: file not found"),
    ],
)
def test_record_command_errors_are_one_clear_line(args: tuple[str, ...], expected: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "susbench", "record", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 2
    assert expected in " ".join(result.stderr.split()) and "Traceback" not in result.stderr
