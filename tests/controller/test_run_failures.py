"""Runs whose operator never worked say so: the model server is named at the start with where its
address came from, a run of nothing but `error` episodes exits non-zero, and running it again
retries those episodes. A live run stores the date its local web served."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from susbench.operators import OperatorSettings, check_operator
from susbench.results.store import Store
from susbench.web.edition import DEFAULT_DATE

SUSBENCH = Path(sys.executable).with_name("susbench")
TASK = "pizzapalace-margherita-order"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def susbench(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SUSBENCH), *args], capture_output=True, text=True, timeout=600, check=False, cwd=cwd, env=env
    )


def test_an_agent_without_base_url_names_the_vendors_default_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is called: the operator is only built, as `run` builds it to check its settings."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    notice = check_operator("openai-chat", OperatorSettings(model="gpt-4o")).notice
    assert notice == (
        "operator 'openai-chat' calls https://api.openai.com/v1/ "
        "(the openai SDK's default: no --base-url given and $OPENAI_BASE_URL unset)"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    notice = check_operator("anthropic-cu", OperatorSettings(model="claude-sonnet-4-5")).notice
    assert notice == "operator 'anthropic-cu' calls http://127.0.0.1:9 (from $ANTHROPIC_BASE_URL)"
    given = OperatorSettings(model="gpt-4o", base_url="http://127.0.0.1:9/v1")
    assert check_operator("openai-chat", given).notice == (
        "operator 'openai-chat' calls http://127.0.0.1:9/v1/ "
        "(from --base-url or the operator config's base_url)"
    )
    assert check_operator("careful").notice is None


@pytest.mark.e2e
def test_a_run_of_only_errors_fails_and_its_rerun_retries_them(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("max_retries: 0\ntimeout_s: 5\n")
    server = f"http://127.0.0.1:{closed_port()}/v1"
    env = {**os.environ, "COLUMNS": "80", "OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": server}
    args = ("run", "--operator", "openai-chat", "--model", "gpt-4o", "--tasks", TASK)
    args += ("--operator-config", "agent.yaml", "--db", "r.duckdb")
    first = susbench(*args, cwd=tmp_path, env=env)
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"operator 'openai-chat' calls {server}/ (from $OPENAI_BASE_URL)" in first.stdout
    assert "every episode of this run ended in error" in first.stdout
    again = susbench(*args, cwd=tmp_path, env=env)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "retrying 1 episode stored as error" in again.stdout
    assert "1 episode stored, 0 already stored (of 1)" in again.stdout
    with Store(tmp_path / "r.duckdb", read_only=True) as store:
        _, rows = store.query("SELECT outcome FROM episode_outcomes")
    assert rows == [("error",)]  # the retry replaced the first attempt; nothing is stored twice


@pytest.mark.e2e
def test_a_live_run_without_live_date_stores_the_date_served(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "80"}
    ran = susbench(
        "run", "--operator", "careful", "--tasks", TASK, "--live", "--db", "r.duckdb", cwd=tmp_path, env=env
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    served = DEFAULT_DATE.isoformat()
    with Store(tmp_path / "r.duckdb", read_only=True) as store:
        _, rows = store.query("SELECT config->>'live_date' FROM runs")
    assert rows == [(served,)]
    report = susbench("report", "--db", "r.duckdb", "--no-model", cwd=tmp_path, env=env)
    assert f"live date {served}" in " ".join(report.stdout.split())
    exported = susbench("results", "export", "--parquet", "bundle", "--db", "r.duckdb", cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads((tmp_path / "bundle" / "run.json").read_text())
    assert [run["identity"]["live_date"] for run in manifest["runs"]] == [served]
