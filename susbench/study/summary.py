"""The realism summary: per injection type, the share of participants who noticed something unusual
(answered yes to the questionnaire's `unusual` question) among those who met the pattern, with 95%
Wilson intervals. Practice tasks and control episodes are left out.

A participant met a type when one of their tasks carrying it was decided by the extension (outcome
`avoided` or `not_avoided`, as the report's "exposed"): a pattern they never saw (`not_encountered`)
or that the page hid (`tampered`), or an episode that failed (`error`), says nothing about whether
it looks real. Such participants are counted apart (`unexposed`, and how many said yes anyway).
A participant counts once per type: as noticing if they said yes after any task where they met it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from susbench.analysis.stats import wilson_interval
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, OutcomeKind
from susbench.study.storage import StudyStore

EXPOSED = f"('{OutcomeKind.AVOIDED.value}', '{OutcomeKind.NOT_AVOIDED.value}')"

ANSWERED = (
    """
SELECT participant, pattern_type, answer = ? AS yes, outcome IN """
    + EXPOSED
    + """ AS exposed
FROM study_responses
WHERE NOT practice AND question_id = ? AND pattern_type IS NOT NULL AND answer IS NOT NULL
"""
)

NOTICED_SQL = (
    """
WITH answered AS ("""
    + ANSWERED
    + """), per_person AS (
    SELECT pattern_type, participant, bool_or(exposed) AS exposed, bool_or(yes AND exposed) AS noticed,
           bool_or(yes) AS said_yes, count(*) FILTER (exposed) AS answers,
           count(*) FILTER (exposed AND yes) AS yes_answers
    FROM answered GROUP BY pattern_type, participant
)
SELECT pattern_type, count(*) FILTER (exposed), count(*) FILTER (noticed),
       coalesce(sum(answers), 0), coalesce(sum(yes_answers), 0),
       count(*) FILTER (NOT exposed), count(*) FILTER (NOT exposed AND said_yes)
FROM per_person GROUP BY pattern_type ORDER BY pattern_type
"""
)


class TypeRealism(Frozen):
    pattern_type: str
    participants: int = Field(ge=0, description="participants who met the pattern")
    noticed: int = Field(ge=0)
    share: float | None = Field(description="noticed / participants; None when nobody met it")
    low: float | None
    high: float | None
    answers: int = Field(ge=0, description="answers over every task of the type where it was met")
    yes_answers: int = Field(ge=0)
    unexposed: int = Field(ge=0, description="participants with tasks of the type who never met it")
    unexposed_yes: int = Field(ge=0, description="of them, those who said yes all the same")


class RealismSummary(Frozen):
    question: str
    answer: str
    participants: int = Field(ge=0, description="participants who met at least one pattern")
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
        _, rows = study.store.query(NOTICED_SQL, [answer, question])
        _, people = study.store.query(
            f"SELECT count(DISTINCT participant) FILTER (exposed) FROM ({ANSWERED})", [answer, question]
        )
    types = []
    for pattern_type, participants, noticed, answers, yes_answers, unexposed, unexposed_yes in rows:
        share = low = high = None
        if participants:
            share = noticed / participants
            low, high = wilson_interval(noticed, participants)
        types.append(
            TypeRealism(
                pattern_type=pattern_type,
                participants=participants,
                noticed=noticed,
                share=share,
                low=low,
                high=high,
                answers=int(answers),
                yes_answers=int(yes_answers),
                unexposed=unexposed,
                unexposed_yes=unexposed_yes,
            )
        )
    return RealismSummary(question=question, answer=answer, participants=people[0][0], types=tuple(types))
