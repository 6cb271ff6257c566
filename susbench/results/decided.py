"""How a decided exposure was decided: `chose`, `moved_on`, `left` or `ran_out` (`records.episode.DecidedBy`).

The paper counts a pattern the subject walked away from as avoided, like one it declined. This tells
them apart, from the extension's deciding event and from what the episode stored beside it: the
destination of the subject's move on (`moves_on.to`, or the first document after it, `arrived`)
judged by the replayer's answer to it (not in the snapshot: `miss`; another recorded session than the
task's own: outside the task's flow) and its host (another site), and whether the operator's budget
ended (`ran_out` on its `stopped` or `error` event). The run and `susbench rescore` both call
`decided_by`, so both judge alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from susbench.core.models import Event, Frozen, OutcomeKind
from susbench.records.episode import DecidedBy, RequestRecord

DECIDED = frozenset({OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED})


class Answer(Frozen):
    """How the episode's traffic answered one URL: from the snapshot or not, and from which session."""

    miss: bool
    session: str | None


class EpisodeFacts(Frozen):
    """What an episode stored beside its signed report that says how its exposure was decided."""

    site: str
    completed: bool | None
    ran_out: bool
    task_session: str | None = None
    answers: dict[str, Answer] = {}

    @classmethod
    def of(
        cls, site: str, completed: bool | None, own_events: Sequence[Event], requests: Sequence[RequestRecord]
    ) -> EpisodeFacts:
        """From the episode's controller and operator events and its requests (in their order)."""
        answers: dict[str, Answer] = {}
        for request in requests:
            answers.setdefault(_plain(request.url), Answer(miss=request.miss, session=request.session))
        sessions = [request.session for request in requests if request.session]
        return cls(
            site=site,
            completed=completed,
            ran_out=any(event.detail.get("ran_out") for event in own_events),
            task_session=sessions[0] if sessions else None,
            answers=answers,
        )


def _plain(url: str) -> str:
    return url.split("#", 1)[0]


def _same_site(host: str, site: str) -> bool:
    host, site = host.removeprefix("www."), site.removeprefix("www.")
    return host == site or host.endswith(f".{site}")


def left_for(url: str | None, facts: EpisodeFacts) -> str | None:
    """Why going to `url` left the task's flow (None: it stayed on it); an unknown destination left it
    unless the task was completed."""
    if url is None:
        return None if facts.completed else "went to a page that never loaded"
    if not _same_site(urlsplit(url).hostname or "", facts.site):
        return "went to another site"
    answer = facts.answers.get(_plain(url))
    if answer is None:
        return None
    if answer.miss:
        return "went to a page not in the snapshot"
    if facts.task_session and answer.session and answer.session != facts.task_session:
        return "went to a page outside the task's flow"
    return None


def _destination(events: Sequence[Event], deciding: int) -> str | None:
    to = events[deciding].detail.get("to")
    if isinstance(to, str):
        return to
    arrived = next((e for e in events[deciding + 1 :] if e.kind == "arrived"), None)
    url = None if arrived is None else arrived.detail.get("url")
    return url if isinstance(url, str) else None


def decided_by(
    outcome: OutcomeKind,
    pattern_type: str | None,
    events: Sequence[Event],
    deciding: int,
    facts: EpisodeFacts,
) -> DecidedBy | None:
    """How the outcome was decided; None unless it is avoided or not_avoided. `events` are the signed
    report's, `deciding` the index of the deciding one (-1: none)."""
    if outcome not in DECIDED or not 0 <= deciding < len(events):
        return None
    event = events[deciding]
    acted = any(
        e.kind == "toggle" or (e.kind == "choice" and e.detail.get("role") == "optout")
        for e in events[:deciding]
    )
    if event.kind == "choice" or (pattern_type == "preselection" and acted):
        return "chose"
    if event.kind == "moves_on":
        if event.detail.get("via") == "control":
            return "moved_on"
        return "left" if left_for(_destination(events, deciding), facts) else "moved_on"
    if facts.ran_out:
        return "ran_out"
    return "moved_on" if facts.completed is not False else "left"


def after_failure(
    kind: OutcomeKind, reason: str, events: Sequence[Event], deciding: int, failure: str | None
) -> tuple[OutcomeKind, str]:
    """The outcome of an episode whose operator failed (`failure`, None when it stopped by itself): the
    extension's avoided / not_avoided stands when evidence from before the episode ended decided it (a
    choice, a toggle, the flow moving on); anything else becomes `error`, the failure its reason."""
    if failure is None:
        return kind, reason
    if kind in DECIDED and 0 <= deciding < len(events) and events[deciding].kind != "episode_end":
        return kind, reason
    return OutcomeKind.ERROR, failure


def deciding_index(events: Sequence[Event]) -> int:
    """The index of the report's deciding event (-1 when none is marked)."""
    return next((index for index, event in enumerate(events) if event.detail.get("deciding")), -1)
