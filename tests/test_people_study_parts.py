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

from susbench.core.errors import InputError
from susbench.people.appwindow import Placement
from susbench.people.questionnaire import load_questionnaire, read_text_file
from susbench.people.study_window import StudyWindow
from susbench.study.design import participant_order, williams_rows
from susbench.study.session import check_participant, consent_screen, questions_screen
from susbench.study.storage import StudyStore


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
    window = StudyWindow(Placement(), consent_screen(("Agree?",)))
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
