"""`susbench record --catalog` end to end: the generic crawl on local-web sites and on a shop with
markup it has never seen, each site into its own WACZ, replayed offline at >= 99% coverage."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from susbench.core.paths import REPO_ROOT
from susbench.recorder.batch import SiteSummary, recorded
from susbench.recorder.catalog import load_site_catalog
from susbench.snapshot import Snapshot
from susbench.web import LocalWeb
from tests.support.unseen_shop import UnseenShop

pytestmark = pytest.mark.e2e
LOCAL_SITES = ("bazaarly", "pizzapalace")
TIMEOUT_S = 900
PLAN_PATHS = ("waren/artikel-1002.html", "intern/aktionen.html", "korb")


@dataclass(frozen=True)
class CatalogRun:
    catalog: Path
    out_dir: Path
    args: tuple[str, ...]
    output: str
    shop_asked: tuple[tuple[str, str, str], ...]  # what the unseen shop was asked during this run only

    def summary(self, site: str) -> SiteSummary:
        return SiteSummary.model_validate_json((self.out_dir / f"{site}.json").read_text(encoding="utf-8"))


def _record(args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "susbench", "record", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=REPO_ROOT,
    )


@pytest.fixture(scope="module")
def catalog_run(
    local_web: LocalWeb, unseen_shop: UnseenShop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CatalogRun]:
    """Two local-web sites from sites/localweb.yaml and the unseen shop, crawl settings only."""
    folder = tmp_path_factory.mktemp("catalog")
    local = yaml.safe_load((Path(REPO_ROOT) / "sites" / "localweb.yaml").read_text(encoding="utf-8"))
    sites = [site for site in local["sites"] if site["id"] in LOCAL_SITES]
    sites.append(
        {
            "id": "kramladen",
            "name": "Kramladen",
            "category": "fashion",
            "start_url": unseen_shop.start_url,
            "country": "DE",
            "locale": "de-DE",
            "timezone": "Europe/Berlin",
            "crawl": {"depth": 2, "pages": 8, "idle_ms": 200},
        }
    )
    sites.append(
        {
            **sites[-1],
            "id": "kramladen-plan",
            "crawl": None,
            "plan": {"pages": [{"url": f"{unseen_shop.start_url}{path}"} for path in PLAN_PATHS]},
        }
    )
    catalog = folder / "sites.yaml"
    catalog.write_text(yaml.safe_dump({**local, "sites": sites}), encoding="utf-8")
    out_dir = folder / "out"
    args = (
        "--catalog",
        str(catalog),
        "--out-dir",
        str(out_dir),
        "--check",
        "--resolve",
        f"*.test=127.0.0.1:{local_web.port}",
        "--resolve",
        unseen_shop.resolve,
        "--upstream-ca",
        str(local_web.ca_cert_path),
    )
    before = len(unseen_shop.asked)  # the shop serves the whole test session, other tests' browsers too
    result = _record(args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    yield CatalogRun(
        catalog=catalog,
        out_dir=out_dir,
        args=args,
        output=result.stdout,
        shop_asked=tuple(unseen_shop.asked[before:]),
    )


@pytest.mark.parametrize("site", [*LOCAL_SITES, "kramladen"])
def test_crawl_reaches_product_cart_and_checkout_and_replays(catalog_run: CatalogRun, site: str) -> None:
    summary = catalog_run.summary(site)
    assert summary.status == "recorded" and summary.walk == "crawl", summary
    assert summary.product and summary.cart and summary.checkout, summary
    assert summary.pages >= 3 and summary.requests > summary.pages and summary.bytes > 0
    assert summary.replay is not None and summary.replay.errors == 0
    assert summary.replay.ratio >= 0.99, summary.replay
    with Snapshot.open(catalog_run.out_dir / f"{site}.wacz") as snapshot:
        pages = {page.url for page in snapshot.manifest.pages}
    assert {summary.cart, summary.checkout} <= pages
    assert site in catalog_run.output, "the coverage table names every site"


def test_unseen_shop_was_crawled_politely(catalog_run: CatalogRun) -> None:
    summary = catalog_run.summary("kramladen")
    assert summary.product and "/waren/artikel-" in summary.product
    assert summary.cart == "http://kramladen.example/korb"
    assert summary.checkout == "http://kramladen.example/kasse/adresse"
    asked = {(method, path) for method, path, _ in catalog_run.shop_asked}
    assert ("POST", "/korb/legen") in asked, "the shop's own add-to-cart button was clicked"
    assert ("GET", "/mehr.json") in asked, "scrolling loaded the lazy part"
    assert ("GET", "/robots.txt") in asked
    assert not any(path.startswith("/intern/") for _, path in asked), "robots.txt disallows /intern/"
    assert "http://kramladen.example/intern/aktionen.html" in summary.blocked
    assert not any(path.startswith("/konto") for _, path in asked), "sign-in links are never followed"
    agents = {agent for _, _, agent in catalog_run.shop_asked}
    assert agents and all("SusbenchReplay/" in agent and "Chrome/" in agent for agent in agents), agents


def test_plan_site_leaves_out_what_robots_txt_disallows(catalog_run: CatalogRun) -> None:
    summary = catalog_run.summary("kramladen-plan")
    assert summary.status == "recorded" and summary.walk == "plan", summary
    assert summary.blocked == ("http://kramladen.example/intern/aktionen.html",)
    assert summary.pages == 2 and summary.product is None


def test_second_run_skips_verified_sites_and_redoes_damaged_ones(catalog_run: CatalogRun) -> None:
    before = {site: (catalog_run.out_dir / f"{site}.wacz").stat().st_mtime_ns for site in LOCAL_SITES}
    again = _record(catalog_run.args)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert again.stdout.count("skipped") >= len(before), again.stdout[-3000:]
    for site, stamp in before.items():
        assert (catalog_run.out_dir / f"{site}.wacz").stat().st_mtime_ns == stamp
    catalog = load_site_catalog(catalog_run.catalog)
    kramladen = next(site for site in catalog.sites if site.id == "kramladen")
    damaged = catalog_run.out_dir.parent / "damaged"
    shutil.copytree(catalog_run.out_dir, damaged)
    assert recorded(damaged, kramladen) is not None
    wacz = damaged / "kramladen.wacz"
    wacz.write_bytes(wacz.read_bytes()[: wacz.stat().st_size // 2])
    assert recorded(damaged, kramladen) is None, "a snapshot that no longer verifies is recorded again"
