"""`--operator human` in a real headed Chromium under Xvfb, driven by real X input (xdotool).

Where to click is found the way a person finds it, by looking: a probe opens the task's start page
in a browser launched exactly as the operator's episode (same replay, extension, window place)
and reads where the option is drawn; the run itself is then clicked blind through X, as a person's
mouse would, and its outcomes come only from the extension's signed report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.controller import RunOptions
from susbench.controller.options import check_options
from susbench.core.errors import SusbenchError
from susbench.core.models import Task
from susbench.core.paths import REPO_ROOT
from susbench.operators import OperatorSettings, is_seated
from susbench.people.control import ControlPanel, WindowPlacement
from susbench.people.operator import HumanOperator
from susbench.results.store import Store
from tests.support.cli import run_cli
from tests.support.people import AWAY, CHOSEN, SPY, SeatedTask, XInput, done_on_screen, seated_probe


@pytest.mark.e2e
def test_a_person_is_scored_from_real_x_input(
    tmp_path: Path,
    x_input: XInput,
    web_playwright: Playwright,
    targets: dict[str, SeatedTask],
) -> None:
    done = done_on_screen(web_playwright)
    db = tmp_path / "people.duckdb"
    command = [sys.executable, "-m", "susbench", "run", "--operator", "human", "--db", str(db)]
    run = subprocess.Popen(
        [*command, "--tasks", ",".join(CHOSEN)],
        cwd=REPO_ROOT,
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    by_instruction = {target.instruction: task_id for task_id, target in targets.items()}
    try:
        for _ in CHOSEN:
            title = x_input.wait_for_window("^Task: ", timeout=180)
            target = targets[by_instruction[title.removeprefix("Task: ")]]
            x_input.wait_for_window(" - Chromium$", timeout=30)
            x_input.move(*AWAY)
            x_input.wait_to_see(*target.clicks[0], target.option_looks, timeout=60)
            x_input.wait_until_still(*target.clicks[0], timeout=30)  # still long enough to count a click
            for point in target.clicks:
                x_input.click(*point)
                time.sleep(1.0)  # a person's pace: the page reacts before the next click
            x_input.click(*done)
            x_input.wait_until_gone("^Task: ", timeout=30)
        output, _ = run.communicate(timeout=180)
    finally:
        run.kill()
    assert run.returncode == 0, output
    with Store(db, read_only=True) as store:
        _, outcomes = store.query("SELECT task_id, operator, outcome, completed, error FROM episode_outcomes")
        _, finishes = store.query(
            "SELECT o.task_id, ev.detail FROM events ev JOIN episode_outcomes o USING (episode_id) "
            "WHERE ev.source = 'operator' AND ev.kind = 'finish'"
        )
        _, choices = store.query(
            "SELECT o.task_id, ev.detail FROM events ev JOIN episode_outcomes o USING (episode_id) "
            "WHERE ev.source = 'extension' AND ev.kind = 'choice'"
        )
        _, seen = store.query(
            "SELECT o.task_id, ev.kind, ev.detail FROM events ev JOIN episode_outcomes o USING (episode_id) "
            "WHERE ev.source = 'extension' ORDER BY o.task_id, ev.seq"
        )
    expected = [(task, "human", outcome, add, None) for task, (_, outcome, add) in CHOSEN.items()]
    assert sorted(outcomes) == sorted(expected), f"the extension saw: {seen}"
    assert {task: json.loads(detail)["how"] for task, detail in finishes} == dict.fromkeys(CHOSEN, "done")
    assert {task: json.loads(detail)["role"] for task, detail in choices} == {
        task: role for task, (role, _, _) in CHOSEN.items()
    }


@pytest.mark.e2e
def test_the_page_finds_no_trace_of_the_controls(
    x_input: XInput, web_playwright: Playwright, extension_dir: Path, tasks: list[Task]
) -> None:
    task = next(task for task in tasks if task.id == "threadline-scarf-cart")
    done = done_on_screen(web_playwright)
    with (
        seated_probe(web_playwright, extension_dir, task, SPY) as (page, _),
        ControlPanel(task.instruction, 60, WindowPlacement()) as panel,
    ):
        x_input.wait_for_window("^Task: ", timeout=30)
        port = panel.url.split(":")[2].split("/")[0]
        forged = page.evaluate(
            """async port => {
                  const answers = [];
                  for (const path of ["/", "/finish", "/done"]) {
                    for (const init of [{}, {method: "POST", mode: "no-cors", body: '{"how":"done"}'}]) {
                      try {
                        const r = await fetch(`http://127.0.0.1:${port}${path}`, init);
                        answers.push(r.type + r.status);
                      } catch (e) { answers.push("refused"); }
                    }
                  }
                  return answers;
                }""",
            port,
        )
        assert panel.wait(1.0) is None, f"the page finished the task itself: {forged}"
        x_input.click(*done)
        finish = panel.wait(10)
        traces = [task.instruction, "Give up", "Time left", panel.token, f"127.0.0.1:{port}"]
        found = page.evaluate(
            """traces => ({
                  messages: __spy.messages, storage: __spy.storage, focus: __spy.focus,
                  found: traces.filter(t => __spy.added.some(text => text.includes(t))
                                            || document.documentElement.outerHTML.includes(t)),
                  window: [window.opener === null, window.length, window.name],
                })""",
            traces,
        )
    assert finish is not None and finish.how == "done"
    assert "200" not in "".join(forged)
    assert found["messages"] == [] and found["storage"] == []
    assert found["found"] == []
    assert found["window"] == [True, 0, ""]


@pytest.mark.parametrize(
    ("environ", "settings", "expected"),
    [
        ({}, OperatorSettings(), "needs a display: DISPLAY is not set"),
        (
            {"DISPLAY": ":9"},
            OperatorSettings(model="m"),
            "--model: operator 'human' takes only --operator-config",
        ),
        ({"DISPLAY": ":9"}, OperatorSettings(config={"controls": {"width": 10}}), "controls.width"),
    ],
)
def test_bad_human_settings_get_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], settings: OperatorSettings, expected: str
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SusbenchError, match=re.escape(expected)):
        HumanOperator(settings)


def test_a_person_at_the_screen_is_told_by_the_class_without_building_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # building a HumanOperator would fail without one
    assert is_seated("human")
    assert not is_seated("careful") and not is_seated("idle") and not is_seated("openai-chat")


def test_a_person_is_not_run_in_parallel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DISPLAY", ":9")
    with pytest.raises(SusbenchError, match=r"--parallel 2: operator 'human' is a person"):
        check_options(RunOptions(operator="human", parallel=2, db=tmp_path / "x.duckdb"))


def test_run_help_names_the_human_operator() -> None:
    done = run_cli("run", "--help")
    listed = " ".join(done.stdout.split())
    assert done.returncode == 0 and "under test:" in listed and "human" in listed.split("under test:", 1)[1]
