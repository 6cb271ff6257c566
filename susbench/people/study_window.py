"""The study's own window, beside the episode's browser and never inside a page: consent, the
questionnaire after each task, breaks and the debrief, one screen at a time.

The study asks (`ask(screen)`), the window shows the screen (its page reloads when the screen
changes) and the person's reply comes back checked by the server: a questionnaire reply is
stored only when every answer fits its question.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from http import HTTPStatus
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import Field, ValidationError

from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.people.appwindow import PageResponse, WindowedPages, WindowPlacement
from susbench.people.questionnaire import Question, Questionnaire

PAGE = Template(files("susbench.people").joinpath("study.html").read_text(encoding="utf-8"))
POLL_S = 0.25


class Button(Frozen):
    choice: str = Field(pattern=r"^[a-z_]+$")
    label: str
    secondary: bool = False


class Screen(Frozen):
    """One screen of the study window: a heading, paragraphs, maybe a questionnaire, and buttons
    (none: the person waits, e.g. while a task runs beside it)."""

    kind: Literal["consent", "wait", "questionnaire", "break", "debrief"]
    title: str
    heading: str
    paragraphs: tuple[str, ...] = ()
    questionnaire: Questionnaire | None = None
    buttons: tuple[Button, ...] = ()


class ScreenReply(Frozen):
    choice: str
    answers: dict[str, str | None] = Field(default_factory=dict)


class _Posted(Frozen):
    version: int
    choice: str
    answers: dict[str, str | int | None] = Field(default_factory=dict)


class StudyWindowClosed(SusbenchError):
    """The person (or a crash) closed the study window."""


def _question_html(question: Question) -> str:
    name = html.escape(question.id)
    legend = f"<legend>{html.escape(question.text)}</legend>"
    if question.kind == "text":
        field = (
            f'<textarea name="{name}" data-question="{name}" maxlength="{question.max_length}" '
            f'aria-label="{html.escape(question.text)}"></textarea>'
        )
        return f'<fieldset class="question" id="q-{name}">{legend}{field}</fieldset>'
    options = "".join(
        f'<label><input type="radio" name="{name}" value="{html.escape(value)}" data-question="{name}">'
        f"{html.escape(value)}</label>"
        for value in question.offered
    )
    ends = ""
    if question.kind == "scale" and (question.low_label or question.high_label):
        ends = (
            f'<div class="scale-ends"><span>{question.low} = {html.escape(question.low_label)}</span>'
            f"<span>{question.high} = {html.escape(question.high_label)}</span></div>"
        )
    choices = f'<div class="options">{options}</div>'
    return f'<fieldset class="question" id="q-{name}">{legend}{choices}{ends}</fieldset>'


def study_page(screen: Screen, version: int) -> str:
    """The screen's HTML as the window shows it (window title `Study: <title>`)."""
    parts = [f"<h1>{html.escape(screen.heading)}</h1>"]
    if screen.questionnaire is not None:
        parts.append(f"<h2>{html.escape(screen.questionnaire.title)}</h2>")
    parts += [f"<p>{html.escape(paragraph)}</p>" for paragraph in screen.paragraphs]
    if screen.questionnaire is not None:
        parts += [_question_html(question) for question in screen.questionnaire.questions]
    if screen.buttons:
        buttons = "".join(
            f'<button type="button" data-choice="{button.choice}"'
            f"{' class=secondary' if button.secondary else ''}>{html.escape(button.label)}</button>"
            for button in screen.buttons
        )
        parts.append(f'<div class="actions">{buttons}</div>')
    return PAGE.substitute(title=html.escape(screen.title), body="\n".join(parts), version=version)


class StudyWindow(WindowedPages):
    """The study's window for one participant's session; one screen at a time."""

    def __init__(
        self,
        placement: WindowPlacement,
        first: Screen,
        executable: Path | None = None,
        on_poll: Callable[[], None] = lambda: None,
    ) -> None:
        """`on_poll` runs at each poll while a screen waits for its reply; it may raise to end the wait."""
        self._on_poll = on_poll
        self._lock = threading.Lock()
        self._screen = first
        self._version = 1
        self._reply: ScreenReply | None = None
        self._replied = threading.Event()
        super().__init__(placement, executable)

    def show(self, screen: Screen) -> None:
        with self._lock:
            self._screen = screen
            self._version += 1
            self._reply = None
            self._replied.clear()

    @property
    def reply(self) -> ScreenReply | None:
        """The reply to the screen shown, once one came."""
        return self._reply

    def ask(self, screen: Screen) -> ScreenReply:
        """Show the screen and wait for the person's reply; StudyWindowClosed if the window goes."""
        self.show(screen)
        while not self._replied.wait(POLL_S):
            self._on_poll()
            if self.window.closed:
                raise StudyWindowClosed(
                    "the study window was closed; nothing after the last answer is stored, and running "
                    "the same command again resumes the session where it stopped"
                )
        assert self._reply is not None
        return self._reply

    def get(self, name: str) -> PageResponse | None:
        with self._lock:
            screen, version = self._screen, self._version
        if name == "":
            return PageResponse(
                HTTPStatus.OK, study_page(screen, version).encode(), "text/html; charset=utf-8"
            )
        if name == "state":
            return PageResponse(HTTPStatus.OK, json.dumps({"version": version}).encode(), "application/json")
        return None

    def post(self, name: str, body: bytes) -> PageResponse | None:
        if name != "reply":
            return None
        try:
            posted = _Posted.model_validate(json.loads(body))
        except (ValueError, ValidationError):
            return PageResponse(
                HTTPStatus.BAD_REQUEST, b'expected {"version": N, "choice": "...", "answers": {...}}'
            )
        with self._lock:
            screen = self._screen
            if posted.version != self._version or self._replied.is_set():
                return PageResponse(HTTPStatus.CONFLICT, b"This screen has already moved on.")
            if posted.choice not in {button.choice for button in screen.buttons}:
                return PageResponse(HTTPStatus.BAD_REQUEST, f"no such choice: {posted.choice}".encode())
            answers: dict[str, str | None] = {}
            if screen.questionnaire is not None:
                try:
                    answers = screen.questionnaire.check(posted.answers)
                except ValueError as exc:
                    return PageResponse(HTTPStatus.BAD_REQUEST, str(exc).encode())
            self._reply = ScreenReply(choice=posted.choice, answers=answers)
            self._replied.set()
        return PageResponse(HTTPStatus.NO_CONTENT)
