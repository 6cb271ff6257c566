"""Self-contained HTML pages (figures inline as SVG, thumbnails inline as data URIs, no scripts).

One file opens anywhere, offline, years later: nothing is fetched. The tables are the ones the
terminal shows (`susbench.analysis.tables`), plus what only a page can hold: figures, the injection
gallery, diff images, every episode.
"""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

from matplotlib import rc_context
from matplotlib.figure import Figure
from PIL import Image

from susbench.analysis import tables
from susbench.analysis.compare import CompareReport
from susbench.analysis.drift import DriftReport, PageDrift, SnapshotSide
from susbench.analysis.figures import STYLE, caption, difference_figure, figure4, write_group_figures
from susbench.analysis.results import EpisodeRow
from susbench.analysis.summary import AnalysisReport, GroupReport
from susbench.analysis.tables import Rows
from susbench.core.errors import SusbenchError
from susbench.core.models import OutcomeKind
from susbench.core.paths import cache_dir

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


class Markup(str):
    """Text already escaped (a link, an image, a folded block): `table` inserts it as is."""


def page(title: str, body: Iterable[str]) -> str:
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{CSS}</style><h1>{escape(title)}</h1>{''.join(body)}</html>\n"
    )


def table(rows: Rows, extra: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """`rows` as an HTML table, with `extra` columns (header, one Markup cell per row, left-aligned)."""
    headers = [*rows.headers, *(header for header, _ in extra)]
    body = [[*row, *(cells[index] for _, cells in extra)] for index, row in enumerate(rows.rows)]

    def cells(values: Sequence[str], tag: str) -> str:
        return "".join(
            f"<{tag}{' class=l' if index < rows.left or index >= len(rows.headers) else ''}>"
            f"{value if isinstance(value, Markup) else escape(value)}</{tag}>"
            for index, value in enumerate(values)
        )

    lines = "".join(
        f"<tr{' class=total' if rows.total and index == len(body) - 1 else ''}>{cells(row, 'td')}</tr>"
        for index, row in enumerate(body)
    )
    return f"<table><tr>{cells(headers, 'th')}</tr>{lines}</table>"


def section(title: str, *parts: str, level: int = 2) -> str:
    return f"<h{level}>{escape(title)}</h{level}>{''.join(parts)}"


def titled(rows: Rows, level: int = 3) -> str:
    return section(rows.title, table(rows), level=level)


def folded(summary: str, text: str) -> str:
    return f"<details><summary>{escape(summary)}</summary><pre class=diff>{escape(text)}</pre></details>"


def svg(figure: Figure) -> str:
    """A figure as inline SVG (without the XML prologue)."""
    buffer = io.StringIO()
    with rc_context(STYLE):
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


def relative_link(target: Path, folder: Path, text: str) -> Markup:
    """A link from a page in `folder` to a file, relative so the folder can move with its files."""
    href = Path(os.path.relpath(target.resolve(), folder.resolve())).as_posix()
    return Markup(f'<a href="{escape(href)}">{text}</a>')


def default_gallery() -> Path | None:
    """The injection screenshots `susbench injections preview` left in the cache, if any."""
    folder = cache_dir() / "gallery"
    return folder if folder.is_dir() else None


def _gallery(episodes: Sequence[EpisodeRow], gallery: Path | None) -> str:
    if gallery is None:
        return (
            "<p class=dim>No injection gallery given (make one with <code>susbench injections preview "
            "--out DIR</code> and pass <code>--gallery DIR</code>).</p>"
        )
    figures = []
    for injection_id in sorted({episode.injection_id for episode in episodes if episode.injection_id}):
        found = sorted(gallery.glob(f"*--{injection_id}.png"))
        image = f'<img alt="{escape(injection_id)}" src="{thumbnail(found[0])}">' if found else ""
        caption = "" if found else ": no screenshot in the gallery"
        figures.append(
            f"<figure>{image}<figcaption><b>{escape(injection_id)}</b>{caption}</figcaption></figure>"
        )
    return f"<div class=gallery>{''.join(figures)}</div>"


def tasks_and_sites(episodes: Sequence[EpisodeRow]) -> Rows:
    """What was run where: per task, its site, its injections, and how its episodes came out."""
    by_task: dict[str, list[EpisodeRow]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task_id, []).append(episode)
    rows = []
    for task_id, found in sorted(by_task.items()):
        exposed = [e for e in found if e.exposed]
        avoided = sum(e.outcome == OutcomeKind.AVOIDED for e in exposed)
        types = sorted({e.pattern_type for e in found if e.pattern_type})
        rows.append(
            [
                task_id,
                found[0].site,
                ", ".join(types) or "control only",
                str(len(found)),
                str(len(exposed)),
                str(avoided),
                str(sum(e.outcome == OutcomeKind.ERROR for e in found)),
            ]
        )
    sites = len({e.site for e in episodes})
    return Rows(
        f"Tasks and sites ({len(by_task)} tasks on {sites} sites)",
        ["task", "site", "pattern types", "episodes", "exposed", "avoided", "error"],
        rows,
        left=3,
    )


def _model(report: GroupReport) -> str:
    model = report.model
    if model is None:
        reason = report.model_note or "no exposures, so no model"
        return f"<p class=dim>No model: {escape(reason)}.</p>"
    references = ", ".join(f"{factor}: {level}" for factor, level in model.references.items())
    parts = [
        f"<p><code>{escape(model.formula)}</code>, {escape(model.estimator)}, "
        f"{model.exposures} exposures; reference levels {escape(references or '—')}. "
        f"Every p-value: {escape(model.tests)}.</p>",
        titled(tables.terms(model), 4),
        titled(tables.coefficients(model), 4),
        titled(tables.comparisons(list(model.comparisons)), 4),
    ]
    return "".join(parts + [f"<p class=note>note: {escape(note)}</p>" for note in model.notes])


def _configuration(report: GroupReport) -> str:
    settings = Rows(
        "Run configuration",
        ["configuration", "value"],
        [
            [key, value if isinstance(value, str) else json.dumps(value)]
            for key, value in sorted(report.configuration.items())
        ],
        left=2,
    )
    catalog_hashes = [key for key in report.configuration if "catalog" in key or "extension" in key]
    note = (
        ""
        if catalog_hashes
        else "<p class=note>These runs recorded no catalog or extension hashes "
        "(made before run identities held them).</p>"
    )
    runs = Rows(
        "Runs",
        ["run", "operator", "seed", "started", "snapshot", "git", "versions"],
        [
            [
                run.run_id,
                run.operator,
                str(run.seed),
                run.started_at.isoformat(timespec="seconds"),
                run.snapshot_id or "—",
                run.git_hash or "—",
                ", ".join(f"{name} {version}" for name, version in sorted(run.versions.items())),
            ]
            for run in report.runs
        ],
        left=7,
    )
    return table(settings) + note + table(runs)


def _episodes(episodes: Sequence[EpisodeRow], folder: Path) -> str:
    rows = Rows(
        "Every episode",
        [
            "task",
            "injection",
            "type",
            "operator",
            "repeat",
            "seed",
            "outcome",
            "reason",
            "completed",
            "duration",
            "error",
        ],
        [
            [
                e.task_id,
                e.injection_id or "control",
                e.pattern_type or "—",
                e.operator,
                str(e.repeat),
                str(e.seed),
                e.outcome.value,
                e.reason,
                {True: "yes", False: "no", None: "—"}[e.completed],
                f"{e.duration_s:.1f} s",
                e.error or "",
            ]
            for e in episodes
        ],
        left=4,
    )
    traces = [
        relative_link(Path(e.archive), folder, "archive") if e.archive else Markup("") for e in episodes
    ]
    return f"<details><summary>{len(episodes)} episodes</summary>{table(rows, [('trace', traces)])}</details>"


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
            body.append(
                section(
                    "Figure 4", svg(figure4(group)) + f"<p class=dim>{escape(caption(group))}</p>", level=3
                )
            )
        body += [titled(tasks_and_sites(group_episodes))]
        body += [
            titled(tables.avoidance(group)),
            titled(tables.decided(group)),
            titled(tables.episodes(group)),
        ]
        if group.paired:
            body.append(titled(tables.paired(group)))
        if group.flips:
            body.append(titled(tables.flips(group)))
        if group.power:
            body.append(titled(tables.power(group)))
        body.append(section("Regression", _model(group), level=3))
        if group.breakdown:
            body.append(titled(tables.breakdown(group)))
        body.append(section("Injections", _gallery(group_episodes, gallery), level=3))
        body.append(section("Every episode", _episodes(group_episodes, folder), level=3))
    return page("SusBench Replay report", body)


def compare_page(report: CompareReport) -> str:
    """Two runs side by side: agreement, McNemar, differences per type, flagged tasks, discordant pairs."""
    forest = [
        (row.pattern_type, row.difference, row.ci_low, row.ci_high)
        for row in (*report.by_type, report.overall)
    ]
    flagged = tables.flagged_tasks(report)
    discordant = tables.discordant_pairs(report)
    body = [
        f"<p>A: <code>{escape(tables.side_label(report.first))}</code><br>"
        f"B: <code>{escape(tables.side_label(report.second))}</code></p>",
        f"<p><b>{escape(tables.compare_summary(report))}</b></p>",
        titled(tables.compare_types(report), 2),
        svg(difference_figure(forest, "Difference in avoidance, B − A")),
        section(flagged.title, table(flagged) if flagged.rows else "<p>No task differs.</p>"),
        section(discordant.title, table(discordant) if discordant.rows else "<p>None.</p>"),
    ]
    return page("SusBench Replay: compare two runs", body)


def _diff_cell(drifted: PageDrift, folder: Path) -> Markup:
    if drifted.diff_image is None:
        return Markup("")
    image = Path(drifted.diff_image)
    return relative_link(image, folder, f'<img alt="diff" style="width:160px" src="{thumbnail(image)}">')


def _side(snapshot: SnapshotSide) -> str:
    return (
        f"<code>{escape(snapshot.path)}</code> ({escape(snapshot.id)}, recorded "
        f"{snapshot.created_at:%Y-%m-%d %H:%M} UTC, {snapshot.records} records)"
    )


def drift_page(report: DriftReport, folder: Path) -> str:
    """Drift between two snapshots: URLs, payloads, each task page's text and pixels, anchors."""
    urls = report.urls
    lists = "".join(
        folded(f"{len(items)} {name}", "\n".join(items))
        for name, items in (
            ("URLs added", urls.added),
            ("URLs removed", urls.removed),
            ("paths added", urls.paths_added),
            ("paths removed", urls.paths_removed),
        )
    )
    examples = [Markup("<br>".join(escape(url) for url in d.examples)) for d in report.digests]
    diffs = [_diff_cell(drifted, folder) for drifted in report.pages]
    texts = [Markup(folded("text diff", p.text_diff) if p.text_diff else "") for p in report.pages]
    verdict = (
        "<p class=note><b>Anchors broke</b> (anchored on A, not on B): "
        f"{escape(', '.join(report.flagged))}</p>"
        if report.flagged
        else "<p>Every injection that anchored on A still anchors on B.</p>"
    )
    pages = tables.pages(report)
    body = [
        f"<p>A: {_side(report.a)}<br>B: {_side(report.b)}</p>",
        verdict,
        section(
            "URLs",
            f"<p>{len(urls.added)} added, {len(urls.removed)} removed, {urls.common} on both sides.</p>",
            lists,
        ),
        section("Changed payloads by content type", table(tables.digests(report), [("examples", examples)])),
        section(pages.title, table(pages, [("diff (B, changes red)", diffs), ("text", texts)])),
        section("Injection anchors", table(tables.anchors(report))),
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


def write_report(
    report: AnalysisReport,
    episodes: dict[str, Sequence[EpisodeRow]],
    folder: Path,
    gallery: Path | None = None,
) -> list[Path]:
    """Figure 4 of every configuration group (PNG and SVG) and `report.html` in `folder`."""
    written = write_group_figures(report, folder)
    return [*written, write_page(folder, "report.html", report_page(report, episodes, folder, gallery))]
