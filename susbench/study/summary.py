"""The realism summary: per injection type, the share of participants who noticed something unusual
(answered yes to the questionnaire's `unusual` question after a task carrying that type), with 95%
Wilson intervals. Practice tasks and control episodes are left out.

A participant counts once per type: as noticing if they said yes after any of their tasks of that
type. Per task answer counts are given beside it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from susbench.analysis.stats import wilson_interval
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.study.storage import StudyStore

NOTICED_SQL = """
SELECT pattern_type,
       count(DISTINCT participant) AS participants,
       count(DISTINCT participant) FILTER (answer = ?) AS noticed,
       count(*) AS answers,
       count(*) FILTER (answer = ?) AS yes_answers
FROM study_responses
WHERE NOT practice AND question_id = ? AND pattern_type IS NOT NULL AND answer IS NOT NULL
GROUP BY pattern_type ORDER BY pattern_type
"""


class TypeRealism(Frozen):
    pattern_type: str
    participants: int = Field(ge=0)
    noticed: int = Field(ge=0)
    share: float
    low: float
    high: float
    answers: int = Field(ge=0, description="answers over every task of the type")
    yes_answers: int = Field(ge=0)


class RealismSummary(Frozen):
    question: str
    answer: str
    participants: int = Field(ge=0, description="participants with at least one answer counted")
    types: tuple[TypeRealism, ...]


def realism_summary(db: Path, question: str = "unusual", answer: str = "yes") -> RealismSummary:
    with StudyStore(db, read_only=True) as study:
        _, tables = study.store.query(
            "SELECT count(*) FROM duckdb_views() WHERE view_name = 'study_responses'"
        )
        if not tables[0][0]:
            raise SusbenchError(
                f"{db}: no study stored here; expected a database written by `susbench study`"
            )
        _, rows = study.store.query(NOTICED_SQL, [answer, answer, question])
        _, people = study.store.query(
            "SELECT count(DISTINCT participant) FROM study_responses WHERE NOT practice AND question_id = ? "
            "AND pattern_type IS NOT NULL AND answer IS NOT NULL",
            [question],
        )
    types = []
    for pattern_type, participants, noticed, answers, yes_answers in rows:
        low, high = wilson_interval(noticed, participants)
        types.append(
            TypeRealism(
                pattern_type=pattern_type,
                participants=participants,
                noticed=noticed,
                share=noticed / participants,
                low=low,
                high=high,
                answers=answers,
                yes_answers=yes_answers,
            )
        )
    return RealismSummary(question=question, answer=answer, participants=people[0][0], types=tuple(types))
