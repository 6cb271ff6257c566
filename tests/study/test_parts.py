"""The study's parts without a screen: the counterbalanced order, the questionnaire file and its
answers, the participant code, the window's replies, and what a refusal stores."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from http import HTTPStatus
from pathlib import Path

import duckdb
import pytest

from susbench.analysis.report import build_report
from susbench.analysis.stats import wilson_interval
from susbench.analysis.tables import episodes
from susbench.core.errors import InputError
from susbench.core.models import OutcomeKind
from susbench.people.appwindow import WindowPlacement
from susbench.people.questionnaire import load_questionnaire, read_text_file
from susbench.people.study_window import StudyWindow
from susbench.records.run import RunRecord
from susbench.results.store import Store
from susbench.study.design import participant_order, williams_rows
from susbench.study.session import (
    StudyResult,
    check_participant,
    consent_screen,
    questions_screen,
    session_line,
)
from susbench.study.storage import StudySettings, StudyStore, TaskResponse
from susbench.study.summary import realism_summary
from tests.support.results import record, run_record


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10])
def test_a_williams_design_balances_position_and_carry_over(n: int) -> None:
    rows = williams_rows(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    assert all(sorted(row) == list(range(n)) for row in rows)
    per_position = [Counter(row[position] for row in rows) for position in range(n)]
    assert all(set(counts.values()) == {len(rows) // n} for counts in per_position)
    follows = Counter((row[i], row[i + 1]) for row in rows for i in range(n - 1))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) <= 1


def test_participants_get_the_rows_of_one_seeded_base_order() -> None:
    tasks = [f"task-{index}" for index in range(4)]
    orders = [participant_order(tasks, seed=7, row=row) for row in range(4)]
    assert participant_order(tasks, seed=7, row=4) == orders[0]
    assert {tuple(order) for order in orders} == {tuple(order) for order in orders[:4]}
    assert [Counter(order[position] for order in orders) for position in range(4)] == [
        Counter(tasks) for _ in range(4)
    ]
    assert (
        participant_order(tasks, seed=8, row=0) != orders[0]
        or participant_order(tasks, seed=9, row=0) != orders[0]
    )


@pytest.mark.parametrize("code", ["Jane Doe", "", "a" * 33, "p/1", "Zoë"])
def test_a_participant_code_is_short_and_plain(code: str) -> None:
    with pytest.raises(InputError, match=re.escape(f"--participant {code!r}: expected a pseudonymous code")):
        check_participant(code)
    assert check_participant("P-07_b") == "P-07_b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("questions: []\n", "field 'questions': Tuple should have at least 1 item"),
        (
            "questions:\n  - {id: q, text: Which, kind: scale, low: 5, high: 1}\n",
            "a scale needs low < high",
        ),
        ("questions:\n  - {id: q, text: Which, kind: choice, options: [a]}\n", "at least two options"),
        ("questions:\n  - {id: q, text: Which, kind: yes_no, colour: red}\n", "field 'questions.0.colour'"),
        ("questions:\n  - {id: Q 1, text: Which, kind: text}\n", "field 'questions.0.id'"),
        (
            "questions:\n  - {id: q, text: Alpha, kind: text}\n  - {id: q, text: Beta, kind: text}\n",
            "q repeated",
        ),
    ],
)
def test_a_wrong_questionnaire_names_the_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "questions.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_questionnaire(path)
    assert str(caught.value).startswith(str(path)) and expected in str(caught.value)
    assert "pydantic" not in str(caught.value)


def test_an_empty_consent_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "consent.txt"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}: the consent text is empty")):
        read_text_file(path, "consent")


def post(window: StudyWindow, payload: dict[str, object]) -> tuple[HTTPStatus, str]:
    answer = window.post("reply", json.dumps(payload).encode())
    assert answer is not None
    return answer.status, answer.body.decode()


def test_the_window_keeps_only_answers_that_fit_the_questions() -> None:
    """The server checks, not only the form: a missing, unknown or out-of-range answer is refused."""
    window = StudyWindow(WindowPlacement(), consent_screen(("Agree?",)))
    window.show(questions_screen(load_questionnaire(), "After task 1 of 1", "Questions"))
    good = {"unusual": "yes", "unusual_what": "a timer", "realism": 4}
    refused = [
        ({"version": 1, "choice": "submit", "answers": good}, HTTPStatus.CONFLICT, "moved on"),
        ({"version": 2, "choice": "accept", "answers": good}, HTTPStatus.BAD_REQUEST, "no such choice"),
        (
            {"version": 2, "choice": "submit", "answers": {"realism": 4}},
            HTTPStatus.BAD_REQUEST,
            "unusual: please",
        ),
        (
            {"version": 2, "choice": "submit", "answers": {**good, "realism": 9}},
            HTTPStatus.BAD_REQUEST,
            "1, 2",
        ),
        ({"version": 2, "choice": "submit", "answers": {**good, "age": 30}}, HTTPStatus.BAD_REQUEST, "age"),
    ]
    for payload, status, words in refused:
        got_status, body = post(window, payload)
        assert (got_status, words in body) == (status, True), body
        assert window.reply is None
    assert post(window, {"version": 2, "choice": "submit", "answers": good})[0] == HTTPStatus.NO_CONTENT
    assert window.reply is not None
    assert window.reply.answers == {"unusual": "yes", "unusual_what": "a timer", "realism": "4"}
    assert post(window, {"version": 2, "choice": "submit", "answers": good})[0] == HTTPStatus.CONFLICT


def test_a_refusal_stores_nothing_but_the_refusal(tmp_path: Path) -> None:
    db = tmp_path / "study.duckdb"
    at = datetime(2026, 12, 1, 10, 0)
    with StudyStore(db) as study:
        study.decline("P09", at)
        study.decline("P09", at.replace(hour=11))
        _, rows = study.store.query("SELECT * EXCLUDE (session_id) FROM study_sessions")
        _, answers = study.store.query("SELECT count(*) FROM responses")
        _, episodes = study.store.query("SELECT count(*) FROM episodes")
        assert study.next_design_row() == 0
    assert rows == [
        ("P09", "declined", None, None, None, None, None, None, None, None, at.replace(hour=11), None)
    ]
    assert answers == [(0,)] and episodes == [(0,)]


def test_the_study_tables_export_like_any_run(tmp_path: Path) -> None:
    db = tmp_path / "study.duckdb"
    with StudyStore(db) as study:
        study.decline("P09", datetime(2026, 12, 1, 10, 0))
        written = study.store.export_parquet(tmp_path / "out")
    names = {path.name for path in written}
    assert {
        "episodes.parquet",
        "study_sessions.parquet",
        "responses.parquet",
        "study_responses.parquet",
    } <= names
    rows = duckdb.sql(
        f"SELECT participant, state FROM '{tmp_path / 'out' / 'study_sessions.parquet'}'"
    ).fetchall()
    assert rows == [("P09", "declined")]


def test_the_realism_share_counts_only_participants_who_met_the_pattern(tmp_path: Path) -> None:
    """Who never met a disguised ad (the extension saw it not encountered, or the episode failed) is
    reported apart, not as "noticed 0 of 1"."""
    db = tmp_path / "study.duckdb"
    met = {
        # participant: (pattern type, outcome, answer to `unusual`)
        "P1": [("disguised_ad", OutcomeKind.NOT_AVOIDED, "yes"), ("popup_ad", OutcomeKind.ERROR, "no")],
        "P2": [("disguised_ad", OutcomeKind.AVOIDED, "no")],
        "P3": [("disguised_ad", OutcomeKind.NOT_ENCOUNTERED, "no")],
        "P4": [("disguised_ad", OutcomeKind.NOT_ENCOUNTERED, "yes")],
    }
    settings = StudySettings(
        tasks="all", practice=None, seed=0, run_id="run-1", practice_run_id=None, questionnaire_sha256="x"
    )
    at = datetime(2026, 12, 1, 10, 0)
    with StudyStore(db) as study:
        for row, (participant, tasks) in enumerate(met.items()):
            session = study.consent(participant, row, [], settings, at)
            for position, (pattern_type, outcome, said) in enumerate(tasks, start=1):
                stored = record(f"ep-{participant}-{position}", outcome, pattern=pattern_type)
                stored = stored.model_copy(
                    update={"episode": stored.episode.model_copy(update={"task_id": f"t{position}"})}
                )
                study.store.write_episode(stored)
                answers = {"unusual": said, "realism": "3"}
                study.add_response(
                    TaskResponse(
                        session=session,
                        episode_id=stored.episode.id,
                        task_id=f"t{position}",
                        practice=False,
                        position=position,
                        answers=answers,
                    ),
                    at,
                )
    found = realism_summary(db)
    by_type = {row.pattern_type: row for row in found.types}
    ad, popup = by_type["disguised_ad"], by_type["popup_ad"]
    assert (ad.participants, ad.noticed, ad.share, ad.unexposed, ad.unexposed_yes) == (2, 1, 0.5, 2, 1)
    assert (ad.low, ad.high) == pytest.approx(wilson_interval(1, 2))
    assert (ad.answers, ad.yes_answers) == (2, 1)
    assert (popup.participants, popup.share, popup.unexposed) == (0, None, 1)
    assert found.participants == 2


def test_the_report_says_which_control_episodes_were_practice(tmp_path: Path) -> None:
    """A study's practice task is a control episode of a run of its own; the report names it."""
    practice_run = RunRecord(
        run_id="run-practice",
        config={"operator": "careful", "study": {"study": "s", "participant": "P1", "practice": True}},
        seed=0,
        host="h",
        started_at=datetime(2026, 12, 1, 10, 0),
    )
    practice = record("ep-practice", OutcomeKind.NOT_ENCOUNTERED, pattern=None)
    practice = practice.model_copy(
        update={"episode": practice.episode.model_copy(update={"run_id": "run-practice"})}
    )
    with Store(tmp_path / "r.duckdb") as store:
        store.add_run(run_record())
        store.add_run(practice_run)
        store.write_episode(record("ep-task", OutcomeKind.AVOIDED))
        store.write_episode(record("ep-control", OutcomeKind.NOT_ENCOUNTERED, pattern=None))
        store.write_episode(practice)
        report = build_report(store)
    (group,) = report.groups
    assert (group.control_episodes, group.practice_episodes) == ({"careful": 2}, {"careful": 1})
    table = episodes(group)
    assert [row[table.headers.index("control")] for row in table.rows] == ["2 (1 practice)"]


def test_the_closing_line_says_when_the_practice_task_is_among_the_tasks_run() -> None:
    with_practice = StudyResult(participant="P01", state="finished", ran=3, practice_ran=True)
    assert "3 tasks run now (the practice task among them), 0 already done" in session_line(
        with_practice, Path("study.duckdb")
    )
    resumed = StudyResult(participant="P01", state="finished", ran=3, skipped=2)
    assert "3 tasks run now, 2 already done" in session_line(resumed, Path("study.duckdb"))
