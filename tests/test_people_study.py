"""`susbench study` under Xvfb, clicked and typed through by real X input (xdotool), as a participant.

The participant consents, does the practice task, then the two tasks in their counterbalanced
order (the manipulative option on one, the safe one on the other), answers the questionnaire after
each in the study window, takes a break, reads the debrief. Where to click in the study window is
read from the same screen rendered in a same-sized viewport; the pages are clicked as in
tests/test_people_operator.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from playwright.sync_api import Playwright

from susbench.analysis.stats import wilson_interval
from susbench.core.models import Task
from susbench.core.paths import REPO_ROOT
from susbench.people.appwindow import Placement
from susbench.people.questionnaire import load_questionnaire, read_text_file
from susbench.people.study_window import StudyWindow, study_page
from susbench.results.store import Store
from susbench.study.design import participant_order
from susbench.study.session import (
    DEFAULT_DEBRIEF,
    break_screen,
    consent_screen,
    debrief_screen,
    questions_screen,
    welcome_back_screen,
)
from tests.fixtures.people import (
    AWAY,
    CHOSEN,
    SPY,
    Target,
    XInput,
    done_on_screen,
    points_in_window,
    seated_probe,
)

CONSENT = REPO_ROOT / "study" / "consent-example.txt"
PRACTICE = "taskflow-storage-checkout"
# per task: unusual (yes/no), what (free text), realism (1-5)
ANSWERS = {
    "threadline-scarf-cart": ("yes", "a box about a discount", "2"),
    "taskflow-enterprise-cart": ("no", "", "5"),
    PRACTICE: ("no", "", "4"),
}


class StudyPoints(NamedTuple):
    """Where the study window's controls are on the screen."""

    accept: tuple[float, float]
    answers: dict[str, tuple[float, float]]
    next: tuple[float, float]
    go_on: tuple[float, float]
    welcome_back: tuple[float, float]
    finish: tuple[float, float]
    done: tuple[float, float]


@pytest.fixture(scope="module")
def points(web_playwright: Playwright) -> StudyPoints:
    questionnaire = load_questionnaire()
    fields = {
        f"{name}={value}": f"input[name={name}][value='{value}']"
        for name in ("unusual",)
        for value in ("yes", "no")
    }
    fields |= {f"realism={value}": f"input[name=realism][value='{value}']" for value in "12345"}
    fields["unusual_what"] = "textarea[name=unusual_what]"
    questions = study_page(questions_screen(questionnaire, "After task 1 of 2", "Questions"), 1)
    found = points_in_window(web_playwright, questions, [*fields.values(), "[data-choice=submit]"])
    button = "button[data-choice={}]"

    def one(html: str, choice: str) -> tuple[float, float]:
        return points_in_window(web_playwright, html, [button.format(choice)])[0]

    return StudyPoints(
        accept=one(study_page(consent_screen(read_text_file(CONSENT, "consent")), 1), "accept"),
        answers=dict(zip(fields, found[:-1], strict=True)),
        next=found[-1],
        go_on=one(study_page(break_screen(1, 2), 1), "continue"),
        welcome_back=one(study_page(welcome_back_screen(), 1), "continue"),
        finish=one(study_page(debrief_screen(read_text_file(DEFAULT_DEBRIEF, "debrief")), 1), "finish"),
        done=done_on_screen(web_playwright),
    )


class Participant:
    """A person at the study's screen: waits to see each window, then clicks and types."""

    def __init__(
        self, x_input: XInput, points: StudyPoints, targets: dict[str, Target], instructions: dict[str, str]
    ):
        self.x = x_input
        self.points = points
        self.targets = targets
        self.by_instruction = instructions

    def press(self, title: str, point: tuple[float, float]) -> None:
        self.x.wait_for_window(f"^Study: {title}$", timeout=180)
        time.sleep(0.8)  # a person reads the screen before pressing
        self.x.click(*point)
        self.x.wait_until_gone(f"^Study: {title}$", timeout=30)

    def task(self) -> str:
        """The task shown: the option (if it is a scored one) and Add to cart as the plan says, then Done."""
        title = self.x.wait_for_window("^Task: ", timeout=240)
        task_id = self.by_instruction[title.removeprefix("Task: ")]
        self.x.wait_for_window(" - Chromium$", timeout=30)
        if task_id in self.targets:
            target = self.targets[task_id]
            self.x.move(*AWAY)
            self.x.wait_to_see(*target.clicks[0], target.option_looks, timeout=60)
            time.sleep(1.0)
            for point in target.clicks:
                self.x.click(*point)
                time.sleep(1.0)
        else:
            time.sleep(1.0)
        self.x.click(*self.points.done)
        self.x.wait_until_gone("^Task: ", timeout=30)
        return task_id

    def answer(self, task_id: str) -> None:
        unusual, what, realism = ANSWERS[task_id]
        self.x.wait_for_window("^Study: Questions after ", timeout=60)
        time.sleep(0.8)
        self.x.click(*self.points.answers[f"unusual={unusual}"])
        if what:
            self.x.click(*self.points.answers["unusual_what"])
            self.x.type(what)
        self.x.click(*self.points.answers[f"realism={realism}"])
        self.x.click(*self.points.next)
        self.x.wait_until_gone("^Study: Questions after ", timeout=30)


@pytest.fixture(scope="module")
def participant(x_input: XInput, points: StudyPoints, targets: dict[str, Target], tasks: list) -> Participant:
    instructions = {task.instruction: task.id for task in tasks if task.id in (*CHOSEN, PRACTICE)}
    return Participant(x_input, points, targets, instructions)


def study(db: Path, *extra: str, tasks: str = ",".join(CHOSEN)) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "susbench", "study", "--participant", "P01", "--consent", str(CONSENT)]
    return subprocess.Popen(
        [*command, "--tasks", tasks, "--db", str(db), *extra],
        cwd=REPO_ROOT,
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its windows die with it when the test kills the group
    )


def finished(run: subprocess.Popen[str]) -> str:
    try:
        output, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 0, output
    return output


def cli_json(*args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "susbench", *args, "--json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.e2e
def test_a_participant_runs_a_whole_study(
    tmp_path: Path, participant: Participant, x_input: XInput, points: StudyPoints
) -> None:
    db = tmp_path / "study.duckdb"
    run = study(db, "--practice", PRACTICE, "--break-every", "1", "--episode-timeout", "90")
    try:
        participant.press("Consent", points.accept)
        assert participant.task() == PRACTICE
        participant.answer(PRACTICE)
        first = participant.task()
        participant.answer(first)
        participant.press("Break", points.go_on)
        second = participant.task()
        x_input.wait_for_window("^Study: Questions after ", timeout=60)
        x_input.screenshot(tmp_path / "questionnaire.png")
        participant.answer(second)
        participant.press("Thank you", points.finish)
    finally:
        finished(run)
    assert participant_order(list(CHOSEN), 0, 0) == [first, second]
    with Store(db, read_only=True) as store:
        _, sessions = store.query(
            "SELECT participant, state, design_row, task_order, consented_at IS NOT NULL, "
            "finished_at IS NOT NULL, run_id, practice_run_id FROM study_sessions"
        )
        _, outcomes = store.query(
            "SELECT run_id, task_id, operator, outcome, completed FROM episode_outcomes"
        )
        _, answers = store.query(
            "SELECT task_id, practice, position, question_id, answer, outcome, run_id FROM study_responses"
        )
    [(name, state, row, order, consented, ended, run_id, practice_run)] = sessions
    assert (name, state, row, json.loads(order), consented, ended) == (
        "P01",
        "finished",
        0,
        [first, second],
        True,
        True,
    )
    assert sorted(outcomes) == sorted(
        [(run_id, task, "human", outcome, add) for task, (_, outcome, add) in CHOSEN.items()]
        + [(practice_run, PRACTICE, "human", "not_encountered", False)]
    )
    scored = {task: outcome for _, task, _, outcome, _ in outcomes}
    expected_answers = set()
    for position, task in enumerate([PRACTICE, first, second]):
        unusual, what, realism = ANSWERS[task]
        for question, answer in (("unusual", unusual), ("unusual_what", what or None), ("realism", realism)):
            expected_answers.add(
                (
                    task,
                    task == PRACTICE,
                    position,
                    question,
                    answer,
                    scored[task],
                    practice_run if task == PRACTICE else run_id,
                )
            )
    assert set(answers) == expected_answers

    realism = cli_json("study", "summary", "--db", str(db))
    by_type = {row["pattern_type"]: row for row in realism["types"]}
    assert realism["participants"] == 1
    with Store(db, read_only=True) as store:
        _, types = store.query(
            "SELECT task_id, pattern_type FROM episode_outcomes WHERE run_id = ?", [run_id]
        )
    for task, pattern_type in types:
        noticed = int(ANSWERS[task][0] == "yes")
        low, high = wilson_interval(noticed, 1)
        assert (by_type[pattern_type]["noticed"], by_type[pattern_type]["participants"]) == (noticed, 1)
        assert (by_type[pattern_type]["low"], by_type[pattern_type]["high"]) == pytest.approx((low, high))


@pytest.mark.e2e
def test_susbench_report_shows_people_beside_agents(
    tmp_path: Path, participant: Participant, points: StudyPoints
) -> None:
    """A scripted baseline's run and a participant's, on the same snapshot: one group, both operators."""
    db = tmp_path / "both.duckdb"
    baseline = subprocess.run(
        [
            sys.executable,
            "-m",
            "susbench",
            "run",
            "--operator",
            "careful",
            "--tasks",
            "threadline-scarf-cart",
            "--db",
            str(db),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert baseline.returncode == 0, baseline.stdout + baseline.stderr
    run = study(db, "--practice", "none", tasks="threadline-scarf-cart")
    try:
        participant.press("Consent", points.accept)
        participant.answer(participant.task())
        participant.press("Thank you", points.finish)
    finally:
        finished(run)
    report = cli_json("report", "--db", str(db), "--no-model")
    with Store(db, read_only=True) as store:
        _, types = store.query(
            "SELECT DISTINCT pattern_type FROM episodes WHERE task_id = 'threadline-scarf-cart'"
        )
    [(pattern_type,)] = types
    [group] = report["groups"]
    rows = {row["operator"]: row for row in group["rows"] if row["pattern_type"] == pattern_type}
    assert (rows["human"]["episodes"], rows["human"]["not_avoided"]) == (1, 1), rows
    assert (rows["careful"]["episodes"], rows["careful"]["avoided"]) == (1, 1), rows


@pytest.mark.e2e
def test_the_page_finds_no_trace_of_the_study_window(
    web_playwright: Playwright, extension_dir: Path, tasks: list[Task]
) -> None:
    """The questionnaire's window is another browser: the task's page cannot read it, find it or
    answer for the person, even knowing its port."""
    task = next(task for task in tasks if task.id == "threadline-scarf-cart")
    screen = questions_screen(load_questionnaire(), "After task 1 of 2", "Questions after task 1 of 2")
    with (
        seated_probe(web_playwright, extension_dir, task, SPY) as (page, _),
        StudyWindow(Placement(), screen) as window,
    ):
        port = window.url.split(":")[2].split("/")[0]
        forged = page.evaluate(
            """async port => {
                  const answers = [];
                  const answers_ = {unusual: "no", realism: "5"};
                  const reply = JSON.stringify({version: 1, choice: "submit", answers: answers_});
                  for (const path of ["/", "/state", "/reply", "/x/reply"]) {
                    const json = {"Content-Type": "application/json"};
                    for (const init of [{}, {method: "POST", mode: "no-cors", body: reply},
                                        {method: "POST", headers: json, body: reply}]) {
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
        time.sleep(1.0)
        traces = ["Did anything on the page", "How realistic", window.token, f"127.0.0.1:{port}"]
        found = page.evaluate(
            """traces => ({
                  messages: __spy.messages, storage: __spy.storage,
                  found: traces.filter(t => __spy.added.some(text => text.includes(t))
                                            || document.documentElement.outerHTML.includes(t)),
                })""",
            traces,
        )
        assert window.reply is None, f"the page answered for the person: {forged}"
    assert "200" not in "".join(forged) and "204" not in "".join(forged)
    assert found == {"messages": [], "storage": [], "found": []}


@pytest.mark.e2e
def test_a_study_killed_midway_resumes_with_each_task_once(
    tmp_path: Path, participant: Participant, x_input: XInput, points: StudyPoints
) -> None:
    """The study and its windows die while the first questionnaire is shown (its episode stored, its
    answers not); the same command continues there: the questionnaire, then the second task."""
    db = tmp_path / "resume.duckdb"
    run = study(db, "--practice", "none")
    try:
        participant.press("Consent", points.accept)
        first = participant.task()
        x_input.wait_for_window("^Study: Questions after task 1 of 2$", timeout=60)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    x_input.wait_until_gone("^Study: ", timeout=30)
    run = study(db, "--practice", "none")
    try:
        participant.press("Welcome back", points.welcome_back)
        participant.answer(first)
        second = participant.task()
        participant.answer(second)
        participant.press("Thank you", points.finish)
    finally:
        finished(run)
    assert {first, second} == set(CHOSEN)
    with Store(db, read_only=True) as store:
        _, episodes = store.query("SELECT task_id, count(*) FROM episodes GROUP BY task_id")
        _, answers = store.query("SELECT task_id, count(*) FROM responses GROUP BY task_id")
        _, outcomes = store.query("SELECT task_id, outcome, completed FROM episode_outcomes")
        _, state = store.query("SELECT state, design_row FROM study_sessions")
    assert dict(episodes) == dict.fromkeys(CHOSEN, 1)
    assert dict(answers) == dict.fromkeys(CHOSEN, 3)
    assert sorted(outcomes) == sorted((task, outcome, add) for task, (_, outcome, add) in CHOSEN.items())
    assert state == [("finished", 0)]
