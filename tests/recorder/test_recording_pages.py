"""A recording lists every page its capture plan went through, not only where it ended, and
`snapshot info` and `snapshot import` count the records the same way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT
from susbench.snapshot import Snapshot
from susbench.web import LocalWeb

pytestmark = pytest.mark.e2e
SUSBENCH = Path(sys.executable).with_name("susbench")
NARROW = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
TASK = REPO_ROOT / "tasks" / "pizzapalace-margherita-order.yaml"


def susbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SUSBENCH), *args], capture_output=True, text=True, timeout=600, check=False, cwd=cwd, env=NARROW
    )


def counts(text: str) -> dict[str, int]:
    """The record counts as `import` says them ("27 responses") or `info` lists them."""
    said = re.findall(r"(\d+) (responses|revisits|non-GET)", text)
    if said:
        return {name: int(count) for count, name in said}
    return {name: int(count) for name, count in re.findall(r"(responses|revisits|non-GET)[\s│:]+(\d+)", text)}


def test_a_four_page_flow_is_listed_page_by_page(local_web: LocalWeb, tmp_path: Path) -> None:
    resolve = f"*.test=127.0.0.1:{local_web.port}"
    recorded = susbench(
        "record",
        str(TASK),
        "--out",
        "pizza.wacz",
        "--resolve",
        resolve,
        "--upstream-ca",
        str(local_web.ca_cert_path),
        cwd=tmp_path,
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    with Snapshot.open(tmp_path / "pizza.wacz") as snapshot:
        urls = [page.url for page in snapshot.manifest.pages]
        requests = [page.requests for page in snapshot.manifest.pages]
    paths = [url.split("pizzapalace.test", 1)[1] for url in urls]
    assert paths[0] == "/item/margherita" and "/checkout" in paths and paths[-1].startswith("/order/"), paths
    assert len(paths) >= 3 and all(count > 0 for count in requests), (paths, requests)
    info = susbench("snapshot", "info", "pizza.wacz", cwd=tmp_path)
    assert f"pages ({len(urls)})" in info.stdout
    for url in urls:
        assert url.split("://", 1)[1] in info.stdout
    with zipfile.ZipFile(tmp_path / "pizza.wacz") as archive:
        (tmp_path / "data.warc.gz").write_bytes(archive.read("archive/data.warc.gz"))
    imported = susbench("snapshot", "import", "data.warc.gz", "--out", "other.wacz", cwd=tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert counts(imported.stdout) == counts(info.stdout) and counts(info.stdout)["revisits"] > 0
    assert "can differ from the original's `snapshot info`" in " ".join(imported.stdout.split())
