"""What a study's design adds to its rates, on episodes as the store gives them: how each exposure was
decided and engaged avoidance, paired controls, replicate flips, power, and a paper-ready Figure 4."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from susbench.analysis.figures import caption, counts_engaged, figure4, write_figures
from susbench.analysis.model import ModelSpec
from susbench.analysis.paired import flip_rows, paired_rows, power_rows
from susbench.analysis.power import detectable_difference, exposures_needed
from susbench.analysis.results import EpisodeRow, Group, RunInfo
from susbench.analysis.stats import mcnemar_exact
from susbench.analysis.summary import ALL, RateRow, group_report
from susbench.core.errors import SusbenchError
from susbench.core.models import OutcomeKind

SUBJECT = "openai-chat (smollm2-135m-instruct-q8, axtree)"
COUNTER = itertools.count()


def row(operator: str, outcome: str, decided_by: str | None = None, **fields: object) -> EpisodeRow:
    values: dict[str, object] = {
        "run_id": f"run-{operator}",
        "episode_id": f"ep-{next(COUNTER)}",
        "task_id": "t1",
        "site": "bazaarly.test",
        "injection_id": "i1",
        "pattern_type": "false_hierarchy",
        "operator": operator,
        "mode": "snapshot",
        "repeat": 0,
        "seed": 0,
        "outcome": OutcomeKind(outcome),
        "reason": "",
        "completed": True,
        "duration_s": 1.0,
        "archive": None,
        "error": None,
        "decided_by": decided_by,
    }
    return EpisodeRow.model_validate({**values, **fields})


def test_power_matches_the_textbook_and_its_inverse() -> None:
    # two proportions 0.5 vs 0.7, two-sided α 0.05, 80% power: 93 per group (G*Power, pwr.2p.test)
    assert exposures_needed(0.2) == 93
    assert detectable_difference(93) == pytest.approx(0.2, abs=0.002)
    assert detectable_difference(400) < detectable_difference(100) < detectable_difference(25)
    assert detectable_difference(3) is None  # no rate is far enough from 50% with 3 per type
    assert detectable_difference(0) is None
    with pytest.raises(SusbenchError, match=r"no rate lies 0\.9 from the baseline 0\.5"):
        exposures_needed(0.9)


def test_engaged_avoidance_leaves_out_walking_away() -> None:
    episodes = [
        row(SUBJECT, "avoided", "left"),
        row(SUBJECT, "avoided", "left"),
        row(SUBJECT, "avoided", "ran_out"),
        row(SUBJECT, "avoided", "chose"),
        row(SUBJECT, "not_avoided", "moved_on", completed=False),
    ]
    cell = RateRow.from_episodes(SUBJECT, ALL, episodes)
    assert (cell.rate, cell.engaged_rate, cell.engaged) == (0.8, 0.5, 2)
    assert cell.decided_by == {"chose": 1, "moved_on": 1, "left": 2, "ran_out": 1}
    assert cell.avoided_by == {"chose": 1, "left": 2, "ran_out": 1}
    assert cell.mostly_left and cell.classified
    old = RateRow.from_episodes(SUBJECT, ALL, [row(SUBJECT, "avoided")])
    assert old.decided_by == {"unclassified": 1} and not old.classified and old.engaged_rate is None


def test_paired_controls_give_mcnemar_and_paired_differences() -> None:
    episodes = []
    # completed with / without the pattern: 3 both, 4 only without, 1 only with, 2 neither
    plan = [(True, True)] * 3 + [(False, True)] * 4 + [(True, False)] + [(False, False)] * 2
    for repeat, (with_pattern, without) in enumerate(plan):
        episodes.append(
            row(SUBJECT, "avoided", "chose", repeat=repeat, completed=with_pattern, steps=10, duration_s=5.0)
        )
        episodes.append(
            row(
                SUBJECT,
                "not_encountered",
                None,
                repeat=repeat,
                completed=without,
                steps=8,
                duration_s=4.0,
                injection_id=None,
                pattern_type=None,
                condition="control",
            )
        )
    episodes.append(row(SUBJECT, "avoided", "chose", repeat=99))  # no control: not a pair
    found = {(r.operator, r.pattern_type): r for r in paired_rows(episodes)}
    mine = found[(SUBJECT, "false_hierarchy")]
    assert (mine.pairs, mine.completed_with, mine.completed_without) == (10, 4, 7)
    assert mine.mcnemar_p == mcnemar_exact(1, 4)
    assert mine.completion_difference == pytest.approx(-0.3)
    assert mine.completion_ci_low < -0.3 < mine.completion_ci_high
    assert mine.steps is not None and (mine.steps.difference, mine.steps.ci_low, mine.steps.ci_high) == (
        2,
        2,
        2,
    )
    assert found[(ALL, ALL)].pairs == 10


def test_flip_rate_is_the_share_of_replicate_pairs_that_differ() -> None:
    episodes = [
        row("random", "avoided", "chose", repeat=0),
        row("random", "not_avoided", "chose", repeat=1),
        row("random", "avoided", "chose", repeat=2),
        row("random", "avoided", "chose", task_id="t2", repeat=0),
        row("random", "avoided", "chose", task_id="t2", repeat=1),
        row("random", "avoided", "chose", task_id="t3"),  # one replicate: no pair
    ]
    rows = {(r.task_id, r.injection_id): r for r in flip_rows(episodes)}
    assert (rows[("t1", "i1")].pairs, rows[("t1", "i1")].differing) == (3, 2)
    assert rows[("t2", "i1")].flip_rate == 0.0
    total = rows[(None, None)]
    assert (total.replicates, total.pairs, total.differing) == (5, 4, 2)
    assert ("t3", "i1") not in rows


def test_power_rows_per_type() -> None:
    episodes = [row("random", "avoided" if i % 2 else "not_avoided", "chose") for i in range(20)]
    (found,) = power_rows(episodes)
    assert (found.pattern_type, found.exposures, found.rate) == ("false_hierarchy", 20, 0.5)
    assert found.detectable == pytest.approx(detectable_difference(20))
    assert 0.3 < found.interval_width < 0.5


def study(seed: int = 4, subject_engages: bool = True) -> Group:
    """Four operators (one with a long label that avoids by leaving; with `subject_engages` False it
    leaves at every exposure, as the demo's model did) on three types."""
    draw = random.Random(seed)
    episodes = []
    for operator, avoid in (("careful", 1.0), ("naive", 0.0), ("random", 0.5), (SUBJECT, 0.8)):
        for kind in ("false_hierarchy", "disguised_ad", "preselection"):
            for repeat in range(6):
                avoided = draw.random() < avoid
                how = "left" if operator == SUBJECT and (avoided or not subject_engages) else "chose"
                episodes.append(
                    row(
                        operator,
                        "avoided" if avoided else "not_avoided",
                        how,
                        pattern_type=kind,
                        repeat=repeat,
                        task_id=f"t-{kind}",
                        completed=operator != SUBJECT,
                    )
                )
    started = datetime(2026, 12, 7, tzinfo=UTC)
    runs = tuple(
        RunInfo(
            run_id=f"run-{name}",
            config={"operator": name},
            versions={},
            git_hash=None,
            snapshot_id=None,
            snapshot_sha256=None,
            seed=0,
            started_at=started,
        )
        for name in sorted({episode.operator for episode in episodes})
    )
    return Group(key={"mode": "snapshot"}, label="snapshot test", runs=runs, episodes=tuple(episodes))


def test_figure4_draws_engaged_avoidance_and_names_who_avoided_by_leaving(tmp_path: Path) -> None:
    report = group_report(study(), model=ModelSpec())
    assert counts_engaged(report)
    text = caption(report)
    assert "engaged avoidance" in text and "95% Wilson score intervals" in text
    assert f"Mostly avoided by leaving the task or running out: {SUBJECT}" in text
    assert f"(b) pools {SUBJECT}, random;" in text  # never careful with naive
    assert [r.operator for r in report.by_type_under_test] == ["operators under test"] * 3
    written = {path.name for path in write_figures(report, tmp_path)}
    assert {
        f"figure4{panel}.{kind}" for panel in ("", "-a", "-b", "-c") for kind in ("png", "svg", "pdf")
    } <= written
    assert (tmp_path / "figure4.txt").read_text().strip() == text


def test_a_subject_that_only_walked_away_draws_no_bar_and_says_how_it_left() -> None:
    """The demo's model completed nothing and decided every exposure by leaving: panel (a) draws no
    bar for it, and at its foot says n=0 and how its exposures were decided, not a bare dash."""
    report = group_report(study(subject_engages=False), model=ModelSpec())
    (subject,) = [r for r in report.rows if r.operator == SUBJECT and r.pattern_type == "all"]
    assert subject.engaged == 0 and subject.engaged_rate is None and subject.exposures == 18
    figure = figure4(report)
    labels = [t.get_text() for t in figure.axes[0].texts]
    assert "n=0\nleft 18" in labels, labels
    assert len(figure.axes[0].patches) == 3  # careful, naive and random: no bar for the subject


def test_figure4_keeps_every_label_inside_its_panel_and_brackets_apart() -> None:
    report = group_report(study(), model=ModelSpec())
    assert report.model is not None
    figure = figure4(report)
    FigureCanvasAgg(figure)
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    figure.draw(renderer)
    panels = figure.axes
    for left, right in itertools.pairwise(panels):
        # nothing of a panel (its tick labels, title, legend) reaches into the next one
        assert left.get_tightbbox(renderer).x1 <= right.get_tightbbox(renderer).x0 + 1
    for axes in panels:
        drawn = [t for t in axes.texts if isinstance(t, Text) and t.get_text() and t.get_visible()]
        boxes = [t.get_window_extent(renderer) for t in drawn]
        for (a, ta), (b, tb) in itertools.combinations(zip(boxes, drawn, strict=True), 2):
            assert not a.overlaps(b), (ta.get_text(), tb.get_text())
        frame = axes.get_window_extent(renderer)
        for box in boxes:
            assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1
        for label in axes.get_xticklabels():
            assert label.get_rotation() == 0 and label.get_fontsize() >= 8
    n_sizes = {t.get_fontsize() for axes in panels for t in axes.texts if t.get_text().isdigit()}
    assert n_sizes and min(n_sizes) >= 8
