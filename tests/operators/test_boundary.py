"""An operator under test sees what a person sees: the subject's context, never the oracle.

A probe operator is registered like any plugin and run through the controller's real episode
runner (bundled snapshot, direct replay, Chromium with the extension); everything it can reach
besides the page is searched for the answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.browser import LocalBackend
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import RunOptions, plan_episodes
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.controller.options import snapshot_facts
from susbench.core.models import CHOICE_ROLES, PATTERN_TYPES
from susbench.operators import OPERATORS, OperatorResult, OperatorSettings, SubjectContext, register_operator

pytestmark = pytest.mark.e2e

TASK = "voltcart-laptop-cart"


class Probe:
    """Looks at everything it was given, then stops without acting."""

    name = "probe"
    needs_cdp = True
    seen: list[SubjectContext] = []
    built: list[OperatorSettings] = []

    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings
        self.built.append(settings)

    def act(self, ctx: SubjectContext, *oracle: object) -> OperatorResult:
        assert oracle == ()
        self.seen.append(ctx)
        return OperatorResult(done=True, message="looked only")


@pytest.fixture
def probe() -> Iterator[type[Probe]]:
    register_operator("probe", Probe)
    Probe.seen.clear()
    Probe.built.clear()
    yield Probe
    del OPERATORS["probe"]


def test_an_operator_under_test_never_reaches_the_oracle(
    probe: type[Probe], web_playwright: Playwright, tmp_path: Path
) -> None:
    injections = {item.id: item for item in load_injections()}
    options = RunOptions(operator="probe", tasks=TASK, db=tmp_path / "unused.duckdb")
    snapshot = snapshot_facts(options)
    assert snapshot is not None
    (job,) = plan_episodes("run-probe", select_tasks(load_tasks(), TASK, injections), injections, options)
    setup = WorkerSetup(
        mode="snapshot",
        snapshot=snapshot.path,
        extension_dir=build_extension(injections.values()),
        tmp_dir=tmp_path,
        look=snapshot.look,
        trace_dir=tmp_path / "traces",
    )
    # A second episode in the same worker, with a seed of its own: the operator is not built again.
    reseeded = job.episode.model_copy(update={"id": f"{job.episode.id}-again", "seed": job.episode.seed + 1})
    with EpisodeRunner(setup, LocalBackend(web_playwright)) as runner:
        record = runner.run(job)
        again = runner.run(job.model_copy(update={"episode": reseeded}))

    assert record.error is None and record.final_message == "looked only"
    assert again.error is None and len(probe.built) == 1
    ctx, ctx_again = probe.seen
    assert (ctx_again.seed, ctx_again.episode_id) == (reseeded.seed, reseeded.id)
    given = {field.name for field in dataclasses.fields(ctx)}
    assert given == {
        "instruction",
        "page",
        "cdp_endpoint",
        "limits",
        "record",
        "trace_dir",
        "record_step",
        "marks",
        "episode_id",
        "seed",
        "completed",
        "started",
    }
    assert ctx.seed == job.episode.seed  # the worker's one operator gets each episode's own seed
    assert ctx.cdp_endpoint is not None and ctx.cdp_endpoint.startswith("http://127.0.0.1:")
    assert ctx.trace_dir is not None and ctx.trace_dir.name == job.episode.id
    visible = repr([getattr(ctx, name) for name in sorted(given - {"page", "trace_dir"})]).lower()
    secrets = [job.episode.injection_id or "", *PATTERN_TYPES, *CHOICE_ROLES]
    secrets += [step.selector for step in job.task.reference_path if step.selector]
    assert job.episode.injection_id and job.episode.pattern_type
    assert [secret for secret in secrets if secret.lower() in visible] == []
    assert record.outcome.kind != "error", record.outcome.reason  # the extension scored the episode
