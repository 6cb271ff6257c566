"""The questionnaire a participant answers after each task: a YAML file the researcher edits.

Kinds: `yes_no`, `choice` (one of `options`), `scale` (an integer from `low` to `high`, with optional
words at both ends) and `text` (free text, at most `max_length` characters). Answers are checked
here, in the server, not only by the form: a stored answer always fits its question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Frozen
from susbench.core.paths import DATA_ROOT

STUDY_DIR = DATA_ROOT / "study"
DEFAULT_QUESTIONNAIRE = STUDY_DIR / "questionnaire.yaml"
YES_NO = ("yes", "no")


class Question(Frozen):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$", description="a short name, stored with each answer")
    text: str = Field(min_length=1, max_length=400)
    kind: Literal["yes_no", "choice", "scale", "text"]
    required: bool = True
    options: tuple[str, ...] = Field(default=(), description="choice: the answers offered")
    low: int = Field(default=1, description="scale: the lowest value")
    high: int = Field(default=5, description="scale: the highest value")
    low_label: str = Field(default="", max_length=60)
    high_label: str = Field(default="", max_length=60)
    max_length: int = Field(default=1000, ge=1, le=10_000, description="text: the longest answer")

    @model_validator(mode="after")
    def _fits_kind(self) -> Question:
        if self.kind == "choice" and len(self.options) < 2:
            raise ValueError("a choice question needs at least two options")
        if self.kind != "choice" and self.options:
            raise ValueError(f"options belong to choice questions, not {self.kind}")
        if self.kind == "scale" and not self.low < self.high <= self.low + 10:
            raise ValueError("a scale needs low < high, at most 11 points")
        return self

    @property
    def offered(self) -> tuple[str, ...]:
        """The answers a yes/no, choice or scale question accepts, as stored."""
        if self.kind == "yes_no":
            return YES_NO
        if self.kind == "scale":
            return tuple(str(value) for value in range(self.low, self.high + 1))
        return self.options

    def check(self, answer: object) -> str | None:
        """The answer as stored (None: left empty), or ValueError naming the question."""
        text = "" if answer is None else str(answer).strip()
        if not text:
            if self.required:
                raise ValueError(f"{self.id}: please answer “{self.text}”")
            return None
        if self.kind == "text":
            if len(text) > self.max_length:
                raise ValueError(f"{self.id}: at most {self.max_length} characters")
            return text
        if text not in self.offered:
            raise ValueError(f"{self.id}: expected one of {', '.join(self.offered)}")
        return text


class Questionnaire(Frozen):
    title: str = Field(default="A few questions about this task", max_length=120)
    questions: tuple[Question, ...] = Field(min_length=1, max_length=30)

    @model_validator(mode="after")
    def _unique_ids(self) -> Questionnaire:
        ids = [question.id for question in self.questions]
        repeated = sorted({name for name in ids if ids.count(name) > 1})
        if repeated:
            raise ValueError(f"question ids must be unique: {', '.join(repeated)} repeated")
        return self

    def check(self, answers: Mapping[str, object]) -> dict[str, str | None]:
        """Every question's stored answer (None: an optional one left empty); ValueError for the first
        that does not fit."""
        unknown = sorted(set(answers) - {question.id for question in self.questions})
        if unknown:
            raise ValueError(f"no such question: {', '.join(unknown)}")
        return {question.id: question.check(answers.get(question.id)) for question in self.questions}


def load_questionnaire(path: Path = DEFAULT_QUESTIONNAIRE) -> Questionnaire:
    """The researcher's questionnaire; one InputError naming the file and field when it is wrong."""
    return load_model(path, Questionnaire)


def read_text_file(path: Path, what: str) -> tuple[str, ...]:
    """A researcher's text (consent, debrief) as paragraphs, split at blank lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the {what} text: {exc}; expected a UTF-8 text file") from None
    paragraphs = tuple(" ".join(part.split()) for part in re.split(r"\n\s*\n", text) if part.strip())
    if not paragraphs:
        raise InputError(f"{path}: the {what} text is empty; expected the text participants read")
    return paragraphs
