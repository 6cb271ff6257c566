"""A document's shell blocks run as a reader would (tests/project/test_docs_commands.py, and the
authoring guide's test): every ```sh block in order as one bash script in an empty folder, servers
left running waited for, the documents' fixed ports swapped for free ones. A block after
`<!-- needs: COMMAND -->` runs only when `susbench COMMAND` exists.
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
