"""Operators written elsewhere: an installed plugin (entry point `susbench.operators`) or a
`module:factory` path, found by name in every worker process, with their settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from susbench.controller import RunOptions, run_benchmark
from susbench.core.errors import SusbenchError
from susbench.operators import OperatorSettings, check_operator, operator_names
from susbench.results.store import Store

PLUGIN = '''
from susbench.operators import OperatorResult


class Looker:
    """Looks at the start page, says which model it was told to use, and stops."""

    name = "looker"
    needs_cdp = False

    def __init__(self, settings):
        self.model = settings.model

    def act(self, ctx):
        ctx.record("plugin.looked", {"url": ctx.page.url, "model": self.model})
        return OperatorResult(done=True, message="looked")


def make(settings):
    return Looker(settings)
'''
TASK = "taskflow-storage-checkout"  # its pattern shows only after a click, so looking never meets it


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin module, and an installed distribution naming it in the entry-point group."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "looker_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = folder / "looker_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: looker-plugin\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[susbench.operators]\nlooker = looker_plugin:make\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(folder))  # worker processes are spawned with the parent's sys.path
    return folder


def test_unknown_plugins_are_one_clear_error(plugin_path: Path) -> None:
    assert "looker" in operator_names()
    with pytest.raises(SusbenchError, match="cannot import 'no_such_module'"):
        check_operator("no_such_module:make")
    with pytest.raises(SusbenchError, match="'looker_plugin' has no callable 'missing'"):
        check_operator("looker_plugin:missing")
    with pytest.raises(SusbenchError, match="unknown operator 'lookr'"):
        check_operator("lookr")


@pytest.mark.e2e
@pytest.mark.parametrize("operator", ["looker", "looker_plugin:make"])
def test_plugins_run_in_worker_processes_with_their_settings(
    plugin_path: Path, tmp_path: Path, operator: str
) -> None:
    db = tmp_path / "plugin.duckdb"
    settings = OperatorSettings(model="plugin-model")
    summary = run_benchmark(RunOptions(operator=operator, operator_settings=settings, tasks=TASK, db=db))
    assert summary.outcomes == {"not_encountered": 1}
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT o.operator, e.final_message, ev.detail FROM episode_outcomes o JOIN episodes e "
            "USING (episode_id) JOIN events ev USING (episode_id) WHERE ev.kind = 'plugin.looked'"
        )
        _, runs = store.query("SELECT config FROM runs")
    ((name, message, detail),) = rows
    assert (name, message) == (operator, "looked")
    assert json.loads(detail)["model"] == "plugin-model"
    assert json.loads(runs[0][0])["operator_settings"] == {"model": "plugin-model"}
