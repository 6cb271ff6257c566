"""One participant's session: consent, a practice task, the tasks in the participant's
counterbalanced order with a questionnaire after each and breaks between, then the debrief.

Each task is one episode of `susbench run --operator human` (its own controls window, fresh
profile, scored by the extension), stored under the participant's own run: the run identity holds
the study and the participant, so no other run (a plain `run --operator human`, another
participant) shares its episodes. The practice task runs without a dark pattern (a control
episode) in a run of its own, so it never enters the study's rates. Participant k's episodes are
repeat k of their run (so the injections drawn differ between participants), and a session started
again skips every task whose episode and answers are stored.

A stop (SIGINT, SIGTERM) ends the session at once, wherever it is: a task in progress is stored as
the controller stores a stopped person's turn (`error`, reason "stopped after N s: ...", unless the
participant had already decided the pattern), answers not yet given are not stored.
"""

from __future__ import annotations

import hashlib
import random
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from pydantic import Field

from susbench.catalog.tasks import select_tasks
from susbench.controller import (
    EpisodeJob,
    RunOptions,
    episode_key,
    plan_episodes,
    run_benchmark,
    run_identity,
)
from susbench.controller.options import check_options, snapshot_facts
from susbench.controller.planning import Planner
from susbench.controller.run import load_materials
from susbench.controller.stopping import raise_if_stopped, stop_asked, stop_signal
from susbench.core.digests import canonical_json
from susbench.core.errors import InputError, SusbenchError
from susbench.core.identity import StudyRun
from susbench.core.models import Frozen, Injection, Task
from susbench.people.appwindow import WindowPlacement
from susbench.people.questionnaire import (
    DEFAULT_QUESTIONNAIRE,
    STUDY_DIR,
    Questionnaire,
    load_questionnaire,
    read_text_file,
)
from susbench.people.study_window import Button, Screen, StudyWindow
from susbench.study.design import participant_order
from susbench.study.storage import StudySession, StudySettings, StudyStore, TaskResponse

DEFAULT_DEBRIEF = STUDY_DIR / "debrief.txt"
PARTICIPANT_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
CONTINUE = (Button(choice="continue", label="Continue"),)


def consent_screen(text: tuple[str, ...]) -> Screen:
    buttons = (
        Button(choice="accept", label="I agree"),
        Button(choice="decline", label="I do not agree", secondary=True),
    )
    return Screen(
        kind="consent", title="Consent", heading="Before we start", paragraphs=text, buttons=buttons
    )


def starting_screen(heading: str, title: str) -> Screen:
    text = (
        "The task opens in a moment. Its instruction, Done and Give up appear in this corner; the "
        "website opens on the right.",
    )
    return Screen(kind="wait", title=title, heading=heading, paragraphs=text)


def welcome_back_screen() -> Screen:
    text = ("The study continues where it stopped. Press Continue when you are ready.",)
    return Screen(
        kind="break", title="Welcome back", heading="Welcome back", paragraphs=text, buttons=CONTINUE
    )


def break_screen(done: int, total: int) -> Screen:
    text = (f"You have finished {done} of {total} tasks. Rest as long as you like, then press Continue.",)
    return Screen(kind="break", title="Break", heading="Take a break", paragraphs=text, buttons=CONTINUE)


def questions_screen(questionnaire: Questionnaire, heading: str, title: str) -> Screen:
    return Screen(
        kind="questionnaire",
        title=title,
        heading=heading,
        questionnaire=questionnaire,
        buttons=(Button(choice="submit", label="Next"),),
    )


def debrief_screen(text: tuple[str, ...]) -> Screen:
    finish = (Button(choice="finish", label="Finish"),)
    return Screen(kind="debrief", title="Thank you", heading="Thank you", paragraphs=text, buttons=finish)


class StudyOptions(Frozen):
    participant: str = Field(pattern=PARTICIPANT_PATTERN)
    consent: Path
    tasks: str
    practice: str | None = Field(default="auto", description="a task id, auto (seeded) or None")
    questionnaire: Path = DEFAULT_QUESTIONNAIRE
    debrief: Path = DEFAULT_DEBRIEF
    break_every: int = Field(default=0, ge=0, description="a break after every N tasks (0: none)")
    seed: int = 0
    snapshot: Path | None = None
    db: Path
    episode_timeout_s: float | None = Field(default=None, gt=0)
    placement: WindowPlacement = WindowPlacement()


class SessionTask(NamedTuple):
    """One task of the session: position 0 is the practice."""

    position: int
    task: Task
    options: RunOptions
    run_id: str

    @property
    def practice(self) -> bool:
        return self.position == 0


class StudyResult(Frozen):
    participant: str
    state: str
    ran: int = Field(default=0, description="tasks whose episode this invocation ran and stored")
    skipped: int = Field(default=0, description="tasks done (episode and answers) before it")
    practice_ran: bool = Field(default=False, description="the practice task is one of `ran`")
    interrupted_by: int | None = None
    stopped_at: str = Field(default="", description="what the participant was shown when the stop came")


def session_line(result: StudyResult, db: Path) -> str:
    """What the command says at the end: the counts, and after a stop what became of the session."""
    practice = " (the practice task among them)" if result.practice_ran else ""
    counts = f"{result.ran} tasks run now{practice}, {result.skipped} already done"
    if result.interrupted_by is None:
        return (
            f"participant {result.participant}: {result.state}; {counts}; results in {db} "
            "(tables study_sessions, responses; view study_responses)"
        )
    name = signal.Signals(result.interrupted_by).name
    if result.state == "not started":
        where = result.stopped_at or "before consent"
        return f"participant {result.participant}: stopped by {name} {where}; nothing is stored"
    return (
        f"participant {result.participant}: stopped by {name} {result.stopped_at}; {counts}; a task in "
        "progress is stored as the stopped episode it is (outcome error, unless the pattern was already "
        "decided), answers not given are not; the same command resumes the session"
    )


def check_participant(participant: str) -> str:
    """A pseudonymous code; anything that could be a name with spaces, or too long, is refused."""
    if not re.fullmatch(PARTICIPANT_PATTERN, participant):
        raise InputError(
            f"--participant {participant!r}: expected a pseudonymous code of 1-32 characters from "
            "A-Z a-z 0-9 _ - (e.g. P07); never a participant's name"
        )
    return participant


def study_digest(options: StudyOptions, practice: str | None, questionnaire_sha256: str) -> str:
    """What defines the study (its tasks, practice task, seed and questionnaire), as a short digest."""
    defined = {
        "tasks": options.tasks,
        "practice": practice,
        "seed": options.seed,
        "questionnaire_sha256": questionnaire_sha256,
    }
    return "study-" + hashlib.sha256(canonical_json(defined).encode()).hexdigest()[:16]


def one_episode(task_id: str, repeat: int) -> Planner:
    """Plan only `task_id`'s episode `repeat` (the participant's), drawn as the controller draws it."""

    def plan(
        run_id: str, tasks: Sequence[Task], injections: Mapping[str, Injection], options: RunOptions
    ) -> list[EpisodeJob]:
        chosen = [task for task in tasks if task.id == task_id]
        jobs = plan_episodes(run_id, chosen, injections, options.model_copy(update={"repeats": repeat + 1}))
        return [job for job in jobs if job.episode.repeat == repeat]

    return plan


class Study:
    """A session for one participant, ready to run: every input is checked before a window opens."""

    def __init__(self, options: StudyOptions, say: Callable[[str], None] = lambda line: None) -> None:
        check_participant(options.participant)
        self.options = options
        self.say = say
        self.questionnaire: Questionnaire = load_questionnaire(options.questionnaire)
        self.consent = read_text_file(options.consent, "consent")
        self.debrief = read_text_file(options.debrief, "debrief")
        base = RunOptions(
            operator="human",
            tasks=options.tasks,
            snapshot=options.snapshot,
            seed=options.seed,
            db=options.db,
            episode_timeout_s=options.episode_timeout_s,
            headless=False,
        )
        check_options(base)
        materials = load_materials(base, snapshot_facts(base))
        self.tasks = {task.id: task for task in materials.tasks}
        chosen = select_tasks(materials.tasks, options.tasks, materials.injections)
        self.task_ids = [task.id for task in chosen]
        practice = self._practice_task(options.practice, set(self.task_ids))
        questionnaire_sha256 = hashlib.sha256(options.questionnaire.read_bytes()).hexdigest()
        study = study_digest(options, practice, questionnaire_sha256)
        self.study_options = base.model_copy(
            update={"study": StudyRun(study=study, participant=options.participant)}
        )
        self.run_id = run_identity(self.study_options, materials.inputs).run_id()
        self.practice_options = None
        self.practice_run_id = None
        if practice is not None:
            practice_run = StudyRun(study=study, participant=options.participant, practice=True)
            self.practice_options = base.model_copy(
                update={"tasks": practice, "control_rate": 1.0, "study": practice_run}
            )
            self.practice_run_id = run_identity(self.practice_options, materials.inputs).run_id()
        self.settings = StudySettings(
            tasks=options.tasks,
            practice=practice,
            seed=options.seed,
            run_id=self.run_id,
            practice_run_id=self.practice_run_id,
            questionnaire_sha256=questionnaire_sha256,
        )

    def _practice_task(self, asked: str | None, studied: set[str]) -> str | None:
        if asked is None:
            return None
        if asked == "auto":
            spare = sorted(set(self.tasks) - studied)
            if not spare:
                raise SusbenchError(
                    "--practice auto: every task of the catalog is in --tasks; expected a practice task "
                    "outside the study (--practice TASK_ID) or --practice none"
                )
            return random.Random(f"study-practice\x1f{self.options.seed}").choice(spare)
        if asked not in self.tasks:
            raise SusbenchError(f"--practice {asked!r}: no such task; expected a task id, auto or none")
        if asked in studied:
            raise SusbenchError(
                f"--practice {asked}: the task is also in --tasks; expected a practice task outside the study"
            )
        return asked

    def _store(self) -> StudyStore:
        return StudyStore(self.options.db)

    def run(self) -> StudyResult:
        """The whole session, or what is left of it; a stop (SIGINT, SIGTERM) ends it at once."""
        participant = self.options.participant
        self._result = StudyResult(participant=participant, state="not started", stopped_at="at consent")
        try:
            return self._run()
        except KeyboardInterrupt as exc:
            return self._result.model_copy(update={"interrupted_by": stop_signal(exc)})
        except Exception:
            # A served study stopped while it opened its database died with a traceback, exit 1.
            asked = stop_asked()
            if asked is None:
                raise
            return self._result.model_copy(update={"interrupted_by": asked})

    def _now_at(self, stopped_at: str, **counts: int | bool) -> None:
        self._result = self._result.model_copy(update={"stopped_at": stopped_at, **counts})

    def _run(self) -> StudyResult:
        participant = self.options.participant
        with self._store() as study:
            session = study.session(participant)
        if session is not None and session.state == "finished":
            self.say(
                f"participant {participant} finished their session on {session.finished_at:%Y-%m-%d %H:%M}"
            )
            return StudyResult(participant=participant, state="finished")
        if session is not None and session.state == "consented":
            self._check_same(session)
        # A stop whose exception was lost on the way still ends the wait for a person's reply.
        starting = starting_screen("Study", "Please wait")
        with StudyWindow(self.options.placement, starting, on_poll=raise_if_stopped) as window:
            if session is None or session.state == "declined":
                session = self._ask_consent(window)
                if session is None:
                    self.say(f"participant {participant} declined; only the refusal is stored")
                    return StudyResult(participant=participant, state="declined")
            else:
                self._result = self._result.model_copy(update={"state": "consented"})
                self._now_at("at the welcome back screen")
                window.ask(welcome_back_screen())
            return self._tasks(window, session)

    def _check_same(self, session: StudySession) -> None:
        stored = session.settings
        if stored is None or stored == self.settings:
            return
        differs = [
            name
            for name in StudySettings.model_fields
            if getattr(stored, name) != getattr(self.settings, name)
        ]
        was = ", ".join(f"{name} {getattr(stored, name)}" for name in differs)
        raise SusbenchError(
            f"participant {session.participant}'s session was started with other settings (it had {was}); "
            "expected the same command to resume it, or a new --participant"
        )

    def _ask_consent(self, window: StudyWindow) -> StudySession | None:
        reply = window.ask(consent_screen(self.consent))
        now = datetime.now(UTC).replace(tzinfo=None)
        with self._store() as study:
            if reply.choice == "decline":
                study.decline(self.options.participant, now)
                return None
            row = study.next_design_row()
            order = participant_order(self.task_ids, self.options.seed, row)
            session = study.consent(self.options.participant, row, order, self.settings, now)
        self._result = self._result.model_copy(update={"state": "consented"})
        return session

    def _steps(self, session: StudySession) -> list[SessionTask]:
        steps = []
        if self.settings.practice is not None and self.practice_options and self.practice_run_id:
            steps.append(
                SessionTask(
                    0, self.tasks[self.settings.practice], self.practice_options, self.practice_run_id
                )
            )
        steps += [
            SessionTask(position, self.tasks[task_id], self.study_options, self.run_id)
            for position, task_id in enumerate(session.task_order, start=1)
        ]
        return steps

    def _tasks(self, window: StudyWindow, session: StudySession) -> StudyResult:
        assert session.design_row is not None
        repeat = session.design_row
        with self._store() as study:
            answered = study.answered_tasks(session)
            stored = study.store.stored_episode_ids(self.run_id) | (
                study.store.stored_episode_ids(self.practice_run_id) if self.practice_run_id else set()
            )
        total = len(session.task_order)
        for step in self._steps(session):
            ran, skipped = self._result.ran, self._result.skipped
            episode = episode_key(step.run_id, step.task.id, repeat)
            label = "the practice task" if step.practice else f"task {step.position} of {total}"
            if step.task.id in answered and episode in stored:
                self._now_at(f"after {label}", skipped=skipped + 1)
                continue
            if episode not in stored:
                heading = "Practice" if step.practice else f"Task {step.position} of {total}"
                window.show(starting_screen(heading, f"Starting {label}"))
                self.say(f"{session.participant}: {label} ({step.task.id})")
                self._now_at(f"during {label}")
                summary = run_benchmark(step.options, plan=one_episode(step.task.id, repeat))
                practice_ran = self._result.practice_ran or (step.practice and summary.stored > 0)
                if summary.interrupted:
                    self._now_at(f"during {label}", ran=ran + summary.stored, practice_ran=practice_ran)
                    return self._result.model_copy(update={"interrupted_by": summary.stop_signal})
                self._now_at(f"after {label}", ran=ran + summary.stored, practice_ran=practice_ran)
            if step.task.id not in answered:
                self._now_at(f"at the questions after {label}")
                self._ask_questions(window, session, step, episode, label)
            if self._break_due(step, total):
                self._now_at(f"at the break after {label}")
                window.ask(break_screen(step.position, total))
        self._now_at("at the debrief")
        window.ask(debrief_screen(self.debrief))
        with self._store() as study:
            study.finish(session, datetime.now(UTC).replace(tzinfo=None))
        return self._result.model_copy(update={"state": "finished", "stopped_at": ""})

    def _break_due(self, step: SessionTask, total: int) -> bool:
        every = self.options.break_every
        return bool(every) and not step.practice and step.position % every == 0 and step.position < total

    def _ask_questions(
        self, window: StudyWindow, session: StudySession, step: SessionTask, episode: str, label: str
    ) -> None:
        total = len(session.task_order)
        heading = "Practice" if step.practice else f"After task {step.position} of {total}"
        reply = window.ask(questions_screen(self.questionnaire, heading, f"Questions after {label}"))
        response = TaskResponse(
            session=session,
            episode_id=episode,
            task_id=step.task.id,
            practice=step.practice,
            position=step.position,
            answers=reply.answers,
        )
        with self._store() as study:
            study.add_response(response, datetime.now(UTC).replace(tzinfo=None))
