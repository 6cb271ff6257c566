"""Ghost served live (installed by `make apps`): a members flow recorded with `susbench record`
through its front and replayed offline with nothing reaching the app, Ghost's members API calls
answered from the snapshot, no staff secret in the recording; a database edited by hand is caught
by the content digest."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from susbench.apps import AppError, ServedApp, driver, serve_app
from susbench.apps.spec import app_cache
from susbench.core.paths import REPO_ROOT
from tests.support.apps import record_through_front, replay_offline

pytestmark = pytest.mark.e2e

DAY = date(2026, 12, 7)
TASK_FILE = REPO_ROOT / "tasks" / "apps" / "ghost" / "ghost-join-workshop-notes.yaml"


def _recorded(wacz: Path) -> tuple[list[str], list[bytes]]:
    """The recorded URLs and every record's headers and payload (decompressed where warcio can)."""
    urls, payloads = [], []
    with zipfile.ZipFile(wacz) as archive:
        for name in archive.namelist():
            if name.endswith((".warc", ".warc.gz")):
                for record in ArchiveIterator(io.BytesIO(archive.read(name))):
                    urls.append(record.rec_headers.get_header("WARC-Target-URI") or "")
                    headers = record.http_headers.to_str().encode() if record.http_headers else b""
                    try:
                        payload = record.content_stream().read()
                    except AttributeError:  # warcio's brotli reader fails on brotli 1.1's decompressor
                        payload = record.raw_stream.read()
                    payloads.append(headers + payload)
    return urls, payloads


@pytest.fixture(scope="module")
def served() -> Iterator[ServedApp]:
    assert driver("ghost").installed(), "Ghost is not installed here: run `make apps`"
    with serve_app("ghost", DAY, seed=0) as app:
        yield app


def test_a_members_flow_recorded_through_the_front_replays_offline(served: ServedApp, tmp_path: Path) -> None:
    out = tmp_path / "join.wacz"
    front = served.front
    record_through_front(front, TASK_FILE, out)
    recorded_urls, payloads = _recorded(out)
    for call in (
        "/members/api/integrity-token/",
        "/members/api/send-magic-link/",
        "/assets/vendor/portal.min.js",
    ):
        assert any(call in url for url in recorded_urls), f"{call} was not recorded"
    assert not [url for url in recorded_urls if "jsdelivr" in url or "code.jquery.com" in url]
    replay_offline(front, out)
    mail = list((served.run_dir / "mail").glob("*.eml"))
    assert mail, "the sign-up sent no mail to the run's mailbox"
    owner = json.loads((app_cache("ghost") / "owner.json").read_text(encoding="utf-8"))
    everything = b"".join(payloads)
    assert owner["password"].encode() not in everything and b"ghost-admin-api-session" not in everything


def test_a_database_edited_by_hand_is_caught_by_the_digest(served: ServedApp) -> None:
    socket = served.run_dir / "db" / "mysqld.sock"

    def sql(statement: str) -> None:
        subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={socket}", "ghost", "-e", statement], check=True
        )

    sql("UPDATE posts SET title = 'Edited by hand' WHERE slug = 'caring-for-linen'")
    try:
        with pytest.raises(AppError, match=r"ghost: its content differs .*article:caring-for-linen"):
            served.verify()
    finally:
        original = next(a.headline for a in served.content.articles if a.slug == "caring-for-linen")
        sql(f"UPDATE posts SET title = '{original}' WHERE slug = 'caring-for-linen'")
    assert served.verify().sha256 == served.content.digest(("article", "plan")).sha256
