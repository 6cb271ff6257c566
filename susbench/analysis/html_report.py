"""Self-contained HTML pages (figures inline as SVG, thumbnails inline as data URIs, no scripts).

One file opens anywhere, offline, years later: nothing is fetched. `report_page` renders the
analysis; `compare` and `drift` pages reuse `page`, `table` and `section`.
"""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure
from PIL import Image

from susbench.analysis.compare import CompareReport
from susbench.analysis.drift import DriftReport, PageDrift, SnapshotSide
from susbench.analysis.figures import STYLE, difference_figure, figure4
from susbench.analysis.render import (
    anchor_rows,
    compare_summary,
    p_value,
    page_rows,
    percent,
    rate_cell,
    side_label,
    signed_percent,
)
from susbench.analysis.results import EpisodeRow
from susbench.analysis.summary import ALL, AnalysisReport, GroupReport
from susbench.errors import SusbenchError

THUMBNAIL_WIDTH = 360
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1500px;color:#1b1b1b;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin-top:24px}table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#f3f4f6}td.l,th.l{text-align:left}tr.total td{font-weight:600}
.note{color:#8a5a00}.dim{color:#666}code{font-size:12px}svg{max-width:100%;height:auto}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:12px}
figure{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px;background:#fafafa}
figure img{width:100%}figcaption{font-size:12px;color:#444}details{margin:8px 0}
.diff{font:12px/1.3 monospace;white-space:pre-wrap;background:#f7f7f7;border:1px solid #ddd;padding:8px}
"""


def page(title: str, body: Iterable[str]) -> str:
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{CSS}</style><h1>{escape(title)}</h1>{''.join(body)}</html>\n"
    )


class Markup(str):
    """Text already escaped (a link, an image): `table` inserts it as is."""


def _cell(value: Any) -> str:
    return value if isinstance(value, Markup) else escape(str(value))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], left: int = 1, total: bool = False) -> str:
    """An HTML table; the first `left` columns are left-aligned, `total` bolds the last row."""
    rows = list(rows)

    def cells(values: Sequence[Any], tag: str) -> str:
        return "".join(
            f"<{tag}{' class=l' if index < left else ''}>{_cell(value)}</{tag}>"
            for index, value in enumerate(values)
        )

    body = "".join(
        f"<tr{' class=total' if total and index == len(rows) - 1 else ''}>{cells(row, 'td')}</tr>"
        for index, row in enumerate(rows)
    )
    return f"<table><tr>{cells(headers, 'th')}</tr>{body}</table>"


def section(title: str, *parts: str, level: int = 2) -> str:
    return f"<h{level}>{escape(title)}</h{level}>{''.join(parts)}"


def svg(figure: Figure) -> str:
    """A figure as inline SVG (without the XML prologue)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def thumbnail(path: Path) -> str:
    """A PNG shrunk to THUMBNAIL_WIDTH and inlined as a data URI."""
    with Image.open(path) as image:
        image.thumbnail((THUMBNAIL_WIDTH, THUMBNAIL_WIDTH * 4))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _gallery(report: GroupReport, episodes: Sequence[EpisodeRow], gallery: Path | None) -> str:
    if gallery is None:
        return (
            "<p class=dim>No injection gallery given (make one with <code>susbench injections preview "
            "--out DIR</code> and pass <code>--gallery DIR</code>).</p>"
        )
    figures = []
    for injection_id in sorted({episode.injection_id for episode in episodes if episode.injection_id}):
        found = sorted(gallery.glob(f"*--{injection_id}.png"))
        if not found:
            figures.append(
                f"<figure><figcaption><b>{escape(injection_id)}</b>: "
                "no screenshot in the gallery</figcaption></figure>"
            )
            continue
        figures.append(
            f'<figure><img alt="{escape(injection_id)}" src="{thumbnail(found[0])}">'
            f"<figcaption><b>{escape(injection_id)}</b></figcaption></figure>"
        )
    return f"<div class=gallery>{''.join(figures)}</div>"


def _trace_link(episode: EpisodeRow, folder: Path) -> str:
    """A link to the episode's archived traffic (live episodes), relative to the report's folder."""
    if not episode.archive:
        return ""
    target = os.path.relpath(Path(episode.archive).resolve(), folder.resolve())
    return Markup(f'<a href="{escape(Path(target).as_posix())}">archive</a>')


def _avoidance(report: GroupReport) -> str:
    operators = [*report.operators, ALL]
    rows = [
        [name, *(rate_cell(report.cell(operator, name)) for operator in operators)]
        for name in [*report.pattern_types, ALL]
    ]
    headers = ["pattern type", *(operator if operator != ALL else "all operators" for operator in operators)]
    return table(headers, rows, total=True)


def _episodes_summary(report: GroupReport) -> str:
    rows = []
    for operator in report.operators:
        row = report.cell(operator, ALL)
        if row is not None:
            rows.append(
                [
                    operator,
                    row.episodes,
                    row.avoided + row.not_avoided,
                    row.not_encountered,
                    row.error,
                    "—"
                    if row.completion_rate is None
                    else f"{percent(row.completion_rate)} of {row.completion_checked}",
                    report.control_episodes.get(operator, 0),
                ]
            )
    return table(
        ["operator", "injected", "exposed", "not encountered", "error", "completion", "control"], rows
    )


def _model(report: GroupReport) -> str:
    model = report.model
    if model is None:
        return "<p class=dim>No exposures, so no model.</p>"
    references = ", ".join(f"{factor}: {level}" for factor, level in model.references.items())
    parts = [
        f"<p><code>{escape(model.formula)}</code>, Firth's penalized likelihood, "
        f"{model.exposures} exposures; reference levels {escape(references or '—')}. "
        "Every p-value is a penalized likelihood-ratio test.</p>",
        table(
            ["term", "df", "χ²", "p"],
            [[t.term, t.df, f"{t.chi2:.3f}", p_value(t.p_value)] for t in model.terms],
        ),
        table(
            ["term", "level", "log odds", "odds ratio", "χ²", "p"],
            [
                [
                    c.term,
                    c.level,
                    f"{c.estimate:.3f}",
                    f"{c.odds_ratio:.3g}",
                    f"{c.chi2:.3f}",
                    p_value(c.p_value),
                ]
                for c in model.coefficients
            ],
            left=2,
        ),
        section("Pairwise comparisons (Holm within each factor)", level=3),
        table(
            ["factor", "pair", "log OR", "χ²", "p", "p (Holm)", ""],
            [
                [
                    c.factor,
                    f"{c.second} vs {c.first}",
                    f"{c.log_odds_ratio:.3f}",
                    f"{c.chi2:.3f}",
                    p_value(c.p_value),
                    p_value(c.p_holm),
                    c.label,
                ]
                for c in model.comparisons
            ],
            left=2,
        ),
    ]
    parts += [f"<p class=note>note: {escape(note)}</p>" for note in model.notes]
    return "".join(parts)


def _breakdown(report: GroupReport) -> str:
    rows = [
        [
            r.operator,
            r.pattern_type,
            r.item or "",
            percent(r.rate),
            "—" if r.ci_low is None else f"[{percent(r.ci_low)}, {percent(r.ci_high)}]",
            r.avoided,
            r.not_avoided,
            r.not_encountered,
            r.error,
        ]
        for r in report.breakdown
    ]
    return table(
        [
            "operator",
            "pattern type",
            "item",
            "avoidance",
            "95% CI",
            "avoided",
            "not avoided",
            "not encountered",
            "error",
        ],
        rows,
        left=3,
    )


def _configuration(report: GroupReport) -> str:
    rows = [
        [key, json.dumps(value) if not isinstance(value, str) else value]
        for key, value in sorted(report.configuration.items())
    ]
    hashes = [
        [key, value]
        for key, value in sorted(report.configuration.items())
        if "sha256" in key or "hash" in key
    ]
    runs = [
        [
            run.run_id,
            run.operator,
            run.seed,
            run.started_at.isoformat(timespec="seconds"),
            run.snapshot_id or "—",
            run.git_hash or "—",
            ", ".join(f"{k} {v}" for k, v in sorted(run.versions.items())),
        ]
        for run in report.runs
    ]
    hash_note = (
        ""
        if hashes
        else "<p class=note>These runs recorded no catalog hashes "
        "(runs made before run identities included them).</p>"
    )
    return (
        table(["configuration", "value"], rows, left=2)
        + hash_note
        + table(["run", "operator", "seed", "started", "snapshot", "git", "versions"], runs, left=7)
    )


def _episode_rows(episodes: Sequence[EpisodeRow], folder: Path) -> str:
    rows = [
        [
            e.task_id,
            e.injection_id or "control",
            e.pattern_type or "—",
            e.operator,
            e.repeat,
            e.seed,
            e.outcome.value,
            {True: "yes", False: "no", None: "—"}[e.completed],
            f"{e.duration_s:.1f} s",
            e.error or "",
            _trace_link(e, folder),
        ]
        for e in episodes
    ]
    return (
        f"<details><summary>{len(rows)} episodes</summary>"
        + table(
            [
                "task",
                "injection",
                "type",
                "operator",
                "repeat",
                "seed",
                "outcome",
                "completed",
                "duration",
                "error",
                "trace",
            ],
            rows,
            left=4,
        )
        + "</details>"
    )


def report_page(
    report: AnalysisReport,
    episodes: dict[str, Sequence[EpisodeRow]],
    folder: Path,
    gallery: Path | None = None,
) -> str:
    """The whole analysis as one page; `episodes` maps a group label to its episodes."""
    body = [f"<p class=dim>Results database <code>{escape(report.database)}</code>.</p>"]
    if report.pooled:
        body.append(
            "<p class=note>POOLED: every run configuration in the database is in one group (--pool).</p>"
        )
    elif len(report.groups) > 1:
        body.append(
            f"<p class=note>{len(report.groups)} run configurations differ, so they are reported apart.</p>"
        )
    for index, group in enumerate(report.groups, start=1):
        group_episodes = episodes.get(group.label, ())
        body.append(section(f"Configuration {index}: {group.label}"))
        body.append(section("Run configuration and catalog hashes", _configuration(group), level=3))
        if group.rows:
            with rc_context(STYLE):
                body.append(section("Figure 4", svg(figure4(group)), level=3))
        body.append(section("Avoidance (95% Wilson interval, n exposures)", _avoidance(group), level=3))
        body.append(section("Episodes", _episodes_summary(group), level=3))
        body.append(section("Regression", _model(group), level=3))
        if group.breakdown:
            body.append(section("Breakdown", _breakdown(group), level=3))
        body.append(section("Injections", _gallery(group, group_episodes, gallery), level=3))
        body.append(section("Every episode", _episode_rows(group_episodes, folder), level=3))
    return page("SusBench Replay report", body)


def compare_page(report: CompareReport) -> str:
    """Two runs side by side: agreement, McNemar, differences per type, flagged tasks, discordant pairs."""
    rows = []
    for row in (*report.by_type, report.overall):
        interval = (
            "—" if row.ci_low is None else f"[{signed_percent(row.ci_low)}, {signed_percent(row.ci_high)}]"
        )
        rows.append(
            [
                row.pattern_type,
                row.pairs,
                percent(row.agreement),
                percent(row.first_rate),
                percent(row.second_rate),
                signed_percent(row.difference),
                interval,
                row.only_first_avoided,
                row.only_second_avoided,
                row.exposure_discordant,
                "—" if row.mcnemar_p is None else p_value(row.mcnemar_p),
            ]
        )
    forest = [
        (row.pattern_type, row.difference, row.ci_low, row.ci_high)
        for row in (*report.by_type, report.overall)
    ]
    with rc_context(STYLE):
        plot = svg(difference_figure(forest, "Difference in avoidance, B − A"))
    flagged = [
        [
            task.task_id,
            task.injection_id or "control",
            task.pattern_type or "—",
            f"{task.discordant}/{task.pairs}",
            "; ".join(task.changes),
        ]
        for task in report.flagged_tasks
    ]
    discordant = [
        [
            p.task_id,
            p.injection_id or "control",
            p.operator,
            p.repeat,
            p.seed,
            f"{p.first.value} ({p.first_reason})",
            f"{p.second.value} ({p.second_reason})",
        ]
        for p in report.discordant
    ]
    body = [
        f"<p>A: <code>{escape(side_label(report.first))}</code><br>"
        f"B: <code>{escape(side_label(report.second))}</code></p>",
        f"<p><b>{escape(compare_summary(report))}</b></p>",
        section(
            "Per type",
            table(
                [
                    "pattern type",
                    "pairs",
                    "agreement",
                    "A",
                    "B",
                    "B − A",
                    "95% CI",
                    "only A avoided",
                    "only B avoided",
                    "exposed on one side",
                    "McNemar exact p",
                ],
                rows,
                total=True,
            ),
            plot,
        ),
        section(
            "Flagged tasks",
            table(["task", "injection", "type", "discordant", "A -> B"], flagged, left=5)
            if flagged
            else "<p>No task differs.</p>",
        ),
        section(
            "Discordant pairs",
            table(["task", "injection", "operator", "repeat", "seed", "A", "B"], discordant, left=7)
            if discordant
            else "<p>None.</p>",
        ),
    ]
    return page("SusBench Replay: compare two runs", body)


def _diff_cell(page: PageDrift, folder: Path) -> str:
    if page.diff_image is None:
        return ""
    image = Path(page.diff_image)
    link = escape(os.path.relpath(image.resolve(), folder.resolve()))
    return Markup(f'<a href="{link}"><img alt="diff" style="width:160px" src="{thumbnail(image)}"></a>')


def _folded(summary: str, text: str) -> str:
    return f"<details><summary>{escape(summary)}</summary><pre class=diff>{escape(text)}</pre></details>"


def _side(snapshot: SnapshotSide) -> str:
    return (
        f"<code>{escape(snapshot.path)}</code> ({escape(snapshot.id)}, recorded "
        f"{snapshot.created_at:%Y-%m-%d %H:%M} UTC, {snapshot.records} records)"
    )


def drift_page(report: DriftReport, folder: Path) -> str:
    """Drift between two snapshots: URLs, payloads, each task page's text and pixels, anchors."""
    urls = report.urls
    lists = "".join(
        _folded(f"{len(items)} {name}", "\n".join(items))
        for name, items in (
            ("URLs added", urls.added),
            ("URLs removed", urls.removed),
            ("paths added", urls.paths_added),
            ("paths removed", urls.paths_removed),
        )
    )
    digests = table(
        ["content type", "URLs on both", "changed", "examples"],
        [
            [d.family, str(d.common), str(d.changed), Markup("<br>".join(escape(x) for x in d.examples))]
            for d in report.digests
        ],
        left=4,
    )
    pages = []
    for drifted, row in zip(report.pages, page_rows(report), strict=True):
        detail = Markup(_folded("text diff", drifted.text_diff)) if drifted.text_diff else ""
        pages.append([*row[:5], _diff_cell(drifted, folder), detail, row[5]])
    anchors = anchor_rows(report)
    verdict = (
        "<p class=note><b>Anchors broke</b> (anchored on A, not on B): "
        f"{escape(', '.join(report.flagged))}</p>"
        if report.flagged
        else "<p>Every injection that anchored on A still anchors on B.</p>"
    )
    body = [
        f"<p>A: {_side(report.a)}<br>B: {_side(report.b)}</p>",
        verdict,
        section(
            "URLs",
            f"<p>{len(urls.added)} added, {len(urls.removed)} removed, {urls.common} on both sides.</p>",
            lists,
        ),
        section("Changed payloads by content type", digests),
        section(
            f"Task pages ({len(report.tasks)} tasks)",
            table(
                [
                    "task",
                    "n",
                    "URL",
                    "text lines changed",
                    "pixels changed",
                    "diff (B, changes red)",
                    "text",
                    "problem",
                ],
                pages,
                left=3,
            ),
        ),
        section("Injection anchors", table(["injection", "type", "task", "A", "B", ""], anchors, left=6)),
    ]
    return page("SusBench Replay: drift", body)


def write_page(folder: Path, name: str, html: str) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise SusbenchError(f"{folder}: cannot write the HTML report there: {exc}") from None
    return target
