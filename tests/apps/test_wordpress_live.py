"""WordPress served live (Debian's packages, installed by `make apps`): a comment's flow recorded with
`susbench record` through the front and replayed offline with nothing reaching the app; a post edited
by hand in MariaDB is caught by the content digest; the app killed mid-recording leaves no snapshot
and no server behind; a later date changes headlines and plan prices, and the served pages show it."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from susbench.apps import AppError, ServedApp, driver, serve_app
from susbench.apps.content import site_content
from susbench.core.paths import REPO_ROOT
from tests.support.apps import record_through_front, replay_offline

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]

DAY = date(2026, 12, 7)
LATER = date(2027, 1, 11)
HOST = "fernhilljournal.test"
TASK_FILE = REPO_ROOT / "tasks" / "apps" / "wordpress" / "wordpress-comment-knives.yaml"


@pytest.fixture(scope="module")
def served() -> Iterator[ServedApp]:
    assert driver("wordpress").installed(), "WordPress is not installed here: run `make apps`"
    with serve_app("wordpress", DAY, seed=0) as app:
        yield app


def _sql(served: ServedApp, statement: str) -> None:
    """Runs `statement` in the instance's database, through the socket its Apache settings name."""
    conf = (served.run_dir / "apache.conf").read_text(encoding="utf-8")
    match = re.search(r"^SetEnv SUSBENCH_WP_WEB (\S+)$", conf, re.MULTILINE)
    assert match is not None
    socket = Path(match.group(1)) / "mysqld.sock"
    subprocess.run(
        ["mariadb", "--no-defaults", f"--socket={socket}", "-u", "root", "wordpress", "-e", statement],
        check=True,
        timeout=60,
    )


def _page(served: ServedApp, path: str) -> str:
    """A page as Chromium gets it: HTTPS through the front, the host's name in SNI and Host."""
    context = ssl.create_default_context(cafile=str(served.front.ca_cert_path))
    raw = socket.create_connection(("127.0.0.1", served.front.port), timeout=60)
    connection = http.client.HTTPSConnection(HOST, served.front.port, timeout=60)
    connection.sock = context.wrap_socket(raw, server_hostname=HOST)
    try:
        connection.request("GET", path, headers={"Host": HOST})
        answer = connection.getresponse()
        assert answer.status == 200, (path, answer.status)
        return answer.read().decode()
    finally:
        connection.close()


def test_recorded_through_the_front_and_replayed_offline(served: ServedApp, tmp_path: Path) -> None:
    out = tmp_path / "comment.wacz"
    front = served.front
    record_through_front(front, TASK_FILE, out)
    urls = [page.url for page in replay_offline(front, out)]
    assert any("moderation-hash=" in url for url in urls), urls


def test_a_post_edited_by_hand_is_caught_by_the_digest(served: ServedApp) -> None:
    article = next(a for a in served.content.articles if a.slug == "caring-for-linen")
    _sql(served, "UPDATE wp_posts SET post_title = 'Edited by hand' WHERE post_name = 'caring-for-linen'")
    try:
        with pytest.raises(AppError, match=r"wordpress: its content differs .*article:caring-for-linen"):
            served.verify()
    finally:
        headline = article.headline.replace("'", "''")
        _sql(served, f"UPDATE wp_posts SET post_title = '{headline}' WHERE post_name = 'caring-for-linen'")
    assert served.verify().sha256 == served.content.digest(("article", "plan")).sha256


def test_pages_show_the_days_content(served: ServedApp) -> None:
    later = site_content(LATER)
    changed = later.changes_since(served.content)
    assert any(line.startswith("article:") for line in changed), changed
    assert any(line.startswith("plan:") for line in changed), changed
    membership = _page(served, "/membership/")
    for plan in served.content.plans:
        assert f"£{plan.monthly:.2f}</strong> a month" in membership
    home = _page(served, "/")
    newest = max(served.content.articles, key=lambda article: article.published)
    assert newest.headline.replace("'", "&#8217;") in home


def _servers(pid: int) -> dict[str, str]:
    """The app's server processes among `pid`'s children, pid to command name.

    Other children (a readiness probe, the browser) come and go while the recording runs, so only the
    servers are listed: one of those gone before it is killed would be the fault under test.
    """
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    listed = subprocess.run(
        ["ps", "-o", "pid=,comm=", "-p", ",".join(children)], capture_output=True, text=True
    ).stdout
    named = dict(line.split(None, 1) for line in listed.strip().splitlines())
    return {child: name.strip() for child, name in named.items() if name.strip() in {"mariadbd", "apache2"}}


def _states(group: str) -> list[str]:
    listed = subprocess.run(["ps", "-o", "stat=", "-g", group], capture_output=True, text=True).stdout
    return [state[0] for state in listed.split()]


def test_an_app_killed_mid_recording_leaves_no_snapshot_and_no_server(tmp_path: Path) -> None:
    out = tmp_path / "killed.wacz"
    command = [
        *(sys.executable, "-m", "susbench", "apps", "record", "wordpress", "--date", "2026-12-07"),
        *("--tasks", "wordpress-comment-knives", "--out", str(out)),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if "recording" in line:
            break
    servers = _servers(process.pid)
    assert set(servers.values()) == {"mariadbd", "apache2"}, (servers, seen)
    for pid in servers:
        os.kill(int(pid), signal.SIGKILL)
    rest = process.stdout.read()
    assert process.wait(timeout=300) != 0, [*seen, rest]
    assert [path.name for path in tmp_path.iterdir()] == [], "a partial snapshot was left behind"
    # a zombie waiting for init to reap it runs nothing; a live worker would still serve
    states = {group: _states(group) for group in servers}
    left = {group: found for group, found in states.items() if set(found) - {"Z"}}
    assert left == {}, "a server's process group (Apache's workers) outlived the recording"
