"""`susbench study` under Xvfb, clicked and typed through by real X input (xdotool), as a participant.

The participant consents, does the practice task, then the two tasks in their counterbalanced
order (the manipulative option on one, the safe one on the other), answers the questionnaire after
each in the study window, takes a break, reads the debrief. Where to click in the study window is
read from the same screen rendered in a same-sized viewport; the pages are clicked as in
tests/people/test_operator.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.analysis.stats import wilson_interval
from susbench.core.models import Task
from susbench.core.paths import REPO_ROOT
from susbench.people.appwindow import WindowPlacement
from susbench.people.questionnaire import load_questionnaire
from susbench.people.study_window import StudyWindow
from susbench.results.store import Store
from susbench.study.design import participant_order
from susbench.study.session import (
    questions_screen,
)
from tests.support.people import (
    AWAY,
    CHOSEN,
    CONSENT,
    SPY,
    SeatedTask,
    StudyPoints,
    XInput,
    descendants,
    seated_probe,
    still_running,
)
from tests.support.processes import descendants as process_tree

PRACTICE = "taskflow-storage-checkout"
# per task: unusual (yes/no), what (free text), realism (1-5)
ANSWERS = {
    "threadline-scarf-cart": ("yes", "a box about a discount", "2"),
    "taskflow-enterprise-cart": ("no", "", "5"),
    PRACTICE: ("no", "", "4"),
}


class Participant:
    """A person at the study's screen: waits to see each window, then clicks and types."""

    def __init__(
        self,
        x_input: XInput,
        points: StudyPoints,
        targets: dict[str, SeatedTask],
        instructions: dict[str, str],
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
            self.x.wait_until_still(*target.clicks[0], timeout=30)  # still long enough to count a click
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
def participant(
    x_input: XInput, points: StudyPoints, targets: dict[str, SeatedTask], tasks: list
) -> Participant:
    instructions = {task.instruction: task.id for task in tasks if task.id in (*CHOSEN, PRACTICE)}
    return Participant(x_input, points, targets, instructions)


def study(
    db: Path, *extra: str, tasks: str = ",".join(CHOSEN), participant: str = "P01"
) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "susbench", "study", "--participant", participant]
    return subprocess.Popen(
        [*command, "--consent", str(CONSENT), "--tasks", tasks, "--db", str(db), *extra],
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
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        output, _ = run.communicate()
        raise AssertionError(f"the study did not end within 120 s; it printed:\n{output}") from None
    assert run.returncode == 0, output
    return output


def ended(run: subprocess.Popen[str]) -> None:
    """In a `finally`: end the study's process group if it still runs, and add its processes and what
    it printed to a failure on its way (a window that never came is told apart from a study that
    failed to start, and a window's Chromium that never started from one that never showed)."""
    failure = sys.exception()
    if failure is not None:
        tree = "\n".join(
            f"  {info.pid} <- {info.ppid}: {info.cmdline[:160]}" for info in process_tree(run.pid)
        )
        failure.add_note(f"the study's processes when it failed:\n{tree or '  none'}")
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)
    if failure is not None and run.stdout is not None and not run.stdout.closed:
        failure.add_note(f"the study (exit status {run.wait()}) printed:\n{run.stdout.read()}")


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
        StudyWindow(WindowPlacement(), screen) as window,
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


@pytest.mark.e2e
def test_a_study_runs_its_own_episode_beside_a_plain_human_run(
    tmp_path: Path, participant: Participant, points: StudyPoints
) -> None:
    """A plain `run --operator human` episode of the task is stored first; the participant still
    does the task, and their answers are joined to the episode they did, not to the earlier one."""
    db = tmp_path / "collision.duckdb"
    task = "threadline-scarf-cart"
    plain = subprocess.Popen(
        [sys.executable, "-m", "susbench", "run", "--operator", "human", "--tasks", task, "--db", str(db)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert participant.task() == task
    finally:
        finished(plain)
    run = study(db, "--practice", "none", tasks=task, participant="P09")
    try:
        participant.press("Consent", points.accept)
        assert participant.task() == task
        participant.answer(task)
        participant.press("Thank you", points.finish)
    finally:
        output = finished(run)
    assert "participant P09: finished; 1 tasks run now, 0 already done" in output
    with Store(db, read_only=True) as store:
        _, episodes = store.query("SELECT run_id, episode_id, started_at FROM episodes ORDER BY started_at")
        _, sessions = store.query("SELECT run_id, consented_at FROM study_sessions")
        _, answered = store.query("SELECT DISTINCT episode_id, run_id FROM study_responses")
        _, studies = store.query("SELECT run_id, config->'study'->>'participant' FROM runs ORDER BY run_id")
    [(plain_run, _, _), (study_run, study_episode, started)] = episodes
    [(session_run, consented_at)] = sessions
    assert plain_run != study_run == session_run
    assert started.replace(tzinfo=None) >= consented_at
    assert answered == [(study_episode, study_run)]
    assert sorted(studies) == sorted([(plain_run, None), (study_run, "P09")])


@pytest.mark.e2e
def test_sigterm_during_a_task_stops_at_once_and_stores_the_stopped_episode(
    tmp_path: Path, participant: Participant, x_input: XInput, points: StudyPoints
) -> None:
    db = tmp_path / "stopped.duckdb"
    run = study(db, "--practice", "none", tasks="taskflow-enterprise-cart", participant="P02")
    try:
        participant.press("Consent", points.accept)
        x_input.wait_for_window("^Task: ", timeout=240)
        x_input.wait_for_window(" - Chromium$", timeout=30)
        started = descendants(run.pid)
        sent = time.monotonic()
        run.send_signal(signal.SIGTERM)
        output, _ = run.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        ended(run)
    assert run.returncode == 143, output
    assert took < 30, f"the study took {took:.0f} s to stop"
    assert "participant P02: stopped by SIGTERM during task 1 of 1; 1 tasks run now, 0 already done" in output
    assert still_running(started, timeout=20) == {}
    with Store(db, read_only=True) as store:
        _, outcomes = store.query("SELECT outcome, reason FROM episode_outcomes")
        _, answers = store.query("SELECT count(*) FROM responses")
        _, state = store.query("SELECT participant, state FROM study_sessions")
    [(outcome, reason)] = outcomes
    assert (outcome, reason.startswith("stopped after ")) == ("error", True), reason
    assert "the run was stopped during the person's turn" in reason
    assert answers == [(0,)] and state == [("P02", "consented")]


@pytest.mark.e2e
def test_sigterm_at_consent_exits_143_with_a_message(tmp_path: Path, x_input: XInput) -> None:
    db = tmp_path / "consent.duckdb"
    run = study(db, "--practice", "none", tasks="taskflow-enterprise-cart", participant="P04")
    try:
        x_input.wait_for_window("^Study: Consent$", timeout=180)
        started = descendants(run.pid)
        run.send_signal(signal.SIGTERM)
        output, _ = run.communicate(timeout=60)
    finally:
        ended(run)
    assert run.returncode == 143, output
    assert "participant P04: stopped by SIGTERM at consent; nothing is stored" in output
    assert still_running(started, timeout=20) == {}
    with Store(db, read_only=True) as store:
        _, sessions = store.query("SELECT count(*) FROM study_sessions")
    assert sessions == [(0,)]


@pytest.mark.e2e
def test_sigkill_of_the_study_leaves_no_process_behind(
    tmp_path: Path, participant: Participant, x_input: XInput, points: StudyPoints
) -> None:
    """Killed mid-task (the study window, the controls, the task's browser and its worker all open),
    every process the study started ends with it: none is in its process group to be killed with it."""
    run = study(tmp_path / "killed.duckdb", "--practice", "none", tasks="taskflow-enterprise-cart")
    try:
        participant.press("Consent", points.accept)
        x_input.wait_for_window("^Task: ", timeout=240)
        x_input.wait_for_window(" - Chromium$", timeout=30)
        started = descendants(run.pid)
        assert sum(name.startswith("chromium") for name in started.values()) >= 3, started
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=10)
        left = still_running(started, timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert left == {}
    x_input.wait_until_gone("^(Study|Task): ", timeout=10)
