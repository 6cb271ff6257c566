"""The agents demo of docs/agents.md, run line by line as a user would (its port and files moved aside), and
the API key it exports found nowhere the project writes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from susbench.browser import free_port
from susbench.core.paths import REPO_ROOT
from susbench.results.store import Store, trace_folder

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]

MARKER = "<!-- agents-demo:"
DEMO_PORT = "8700"
DEMO_KEY = "sk-local-demo"


def demo_lines() -> list[str]:
    guide = (REPO_ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    block = guide[guide.index(MARKER) :].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def susbench(line: str) -> list[str]:
    words = shlex.split(line)
    assert words[0] == "susbench"
    return [sys.executable, "-m", "susbench", *words[1:]]


def test_the_agents_guide_demo(tmp_path: Path) -> None:
    port = str(free_port())
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    outputs: list[str] = []
    traced_steps = 0
    server = None
    try:
        for line in (line.replace(DEMO_PORT, port) for line in demo_lines()):
            if line.startswith("export "):
                env.update(pair.split("=", 1) for pair in shlex.split(line)[1:])
            elif line.endswith(" &"):
                server = subprocess.Popen(
                    susbench(line[:-2]),
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                assert server.stdout is not None
                for said in server.stdout:
                    outputs.append(said)
                    if said.startswith("model server on"):
                        break
                assert server.poll() is None, "".join(outputs)
            else:
                if "EPISODE_ID" in line:
                    with Store(tmp_path / "agents.duckdb", read_only=True) as store:
                        _, rows = store.query(
                            "SELECT episode_id, steps FROM agent_episodes ORDER BY steps DESC"
                        )
                    line = line.replace("EPISODE_ID", rows[0][0])
                    traced_steps = rows[0][1]
                done = subprocess.run(
                    susbench(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
                )
                outputs += [done.stdout, done.stderr]
                assert done.returncode == 0, done.stdout + done.stderr
    finally:
        if server is not None:
            server.terminate()
            outputs.append(server.communicate(timeout=30)[0])

    assert [re.search(r"outcomes: (.*)", text).group(1) for text in outputs if "episodes stored" in text] == [
        "avoided 2"
    ] * 3
    db = tmp_path / "agents.duckdb"
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, count(*), sum(steps) FROM agent_episodes GROUP BY ALL ORDER BY ALL"
        )
    assert [(operator, count) for operator, count, _ in rows] == [
        ("anthropic-cu", 2),
        ("openai-chat", 2),
        ("openai-cua", 2),
    ]
    page = (tmp_path / "trace.html").read_text(encoding="utf-8")
    assert traced_steps >= 4 and page.count("<img alt='step") == traced_steps
    assert "Step 0" in page and "outcome <b>avoided</b>" in page

    written = [db, tmp_path / "trace.html", *trace_folder(db).rglob("*")]
    assert [path for path in written if path.is_file() and DEMO_KEY.encode() in path.read_bytes()] == []
    assert [text for text in outputs if DEMO_KEY in text] == []
