"""docs/session.md and docs/tutorial.md, run as a reader would: every shell block, in order.

Each document's ```sh blocks become one bash script (so variables carry over), run in a fresh empty
folder with nothing in it, as a reader would: no link to the checkout. A line ending in `&` is a
server left running: its output goes to a log and the script waits for its first line before going
on. The fixed ports
the documents use are swapped for free ones, so the test runs beside other servers. A block after
`<!-- needs: COMMAND -->` is run only when `susbench COMMAND` exists; when it does not, the test
fails saying so, after every block before it has run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT
from tests.support.documents import SCRIPT_TIMEOUT_S, Block, run_document, script, shell_blocks


def test_script_waits_for_servers_and_frees_ports() -> None:
    text = script(
        [Block("susbench web serve --port 8080 &   # keep it\necho 8080 18080\n", None)], {8080: 4321}
    )
    assert "susbench web serve --port 4321 > background-0.log 2>&1 &" in text
    assert "until [ -s background-0.log ]" in text
    assert "echo 4321 18080" in text


def test_needs_marks_are_read() -> None:
    markdown = "<!-- needs: reproduce -->\n```sh\nsusbench reproduce b/\n```\n```sh\nls\n```\n"
    assert shell_blocks(markdown) == [Block("susbench reproduce b/\n", "reproduce"), Block("ls\n", None)]


@pytest.mark.e2e
@pytest.mark.timeout(SCRIPT_TIMEOUT_S + 60)
def test_tutorial_runs_as_written(tmp_path: Path) -> None:
    markdown = (REPO_ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    (tmp_path / "reader").mkdir()
    run_document("docs/tutorial.md", shell_blocks(markdown), tmp_path / "reader")


@pytest.mark.e2e
@pytest.mark.timeout(SCRIPT_TIMEOUT_S + 60)
def test_the_typical_session_runs_as_written(tmp_path: Path) -> None:
    markdown = (REPO_ROOT / "docs" / "session.md").read_text(encoding="utf-8")
    (tmp_path / "reader").mkdir()
    run_document("docs/session.md", shell_blocks(markdown), tmp_path / "reader")
