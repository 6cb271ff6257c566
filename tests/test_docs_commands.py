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

import os
import re
import signal
import socket
import subprocess
import sys
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT

FENCE = re.compile(r"(?:<!-- needs: (?P<needs>[a-z -]+) -->\s*\n)?```sh\n(?P<body>.*?)```", re.DOTALL)
BACKGROUND = re.compile(r"^(?P<command>.*?)\s*&\s*(?:#.*)?$")
DOC_PORTS = (8080, 8081, 8082, 8083)
SCRIPT_TIMEOUT_S = 3600
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    body: str
    needs: str | None


def shell_blocks(markdown: str) -> list[Block]:
    return [Block(match["body"], match["needs"]) for match in FENCE.finditer(markdown)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def script(blocks: list[Block], ports: dict[int, int]) -> str:
    """One bash script for the blocks: servers logged and waited for, documented ports made free ones."""
    lines = ["set -euo pipefail -x"]
    text = "\n".join(block.body for block in blocks).replace("\\\n", " ")
    for documented, free in ports.items():
        text = re.sub(rf"\b{documented}\b", str(free), text)
    for number, line in enumerate(text.splitlines()):
        server = BACKGROUND.match(line) if not line.lstrip().startswith("#") else None
        if server is None:
            lines.append(line)
            continue
        log = f"background-{number}.log"
        lines += [
            f"{server['command']} > {log} 2>&1 &",
            f"until [ -s {log} ]; do kill -0 $! || {{ cat {log}; exit 1; }}; sleep 0.5; done",
        ]
    return "\n".join(lines) + "\n"


def missing_command(needs: str) -> bool:
    found = subprocess.run(
        [str(BIN / "susbench"), *needs.split(), "--help"], capture_output=True, timeout=900, check=False
    )
    return found.returncode != 0


def run_document(name: str, blocks: list[Block], folder: Path) -> None:
    assert blocks, f"{name}: no shell block found"
    runnable = blocks
    missing = next((block for block in blocks if block.needs and missing_command(block.needs)), None)
    if missing is not None:
        runnable = blocks[: blocks.index(missing)]
    script_file = folder.parent / f"{folder.name}.sh"  # beside the folder: the reader's folder stays empty
    script_file.write_text(script(runnable, {port: free_port() for port in DOC_PORTS}))
    assert not any(folder.iterdir())
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONUNBUFFERED": "1", "COLUMNS": "80"}
    process = subprocess.Popen(
        ["bash", str(script_file)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=SCRIPT_TIMEOUT_S)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)  # the servers the document left running
    assert process.returncode == 0, f"{name} failed:\n{output[-6000:]}"
    if missing is not None:
        pytest.fail(
            f"{name}: every block ran up to one that needs `susbench {missing.needs}`, which this checkout "
            f"does not have (it comes with the repro branch): {missing.body.splitlines()[0]}"
        )


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
