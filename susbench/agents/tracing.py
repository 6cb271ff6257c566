"""The trace viewer: an episode's steps as a timeline, one row per step: the screenshot the agent
saw with its actions drawn on it, and the model's words.

The HTML page is one self-contained file (images inlined), so it can be mailed or archived beside
the results.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from susbench.agents.drawing import describe_action, draw_actions
from susbench.core.models import Frozen
from susbench.records.trace import StepRecord

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px; } .meta { color: #555; margin-bottom: 18px; }
table { border-collapse: collapse; width: 100%; background: white; }
td { border-top: 1px solid #ddd; padding: 12px; vertical-align: top; }
td.shot { width: 660px; } td.shot img { width: 640px; border: 1px solid #ccc; }
.n { font-weight: 700; font-size: 16px; } .url { color: #555; word-break: break-all; }
.words { white-space: pre-wrap; background: #f3f3f7; padding: 8px; border-radius: 6px; margin: 6px 0; }
.act { font-family: ui-monospace, monospace; } .err { color: #b00020; } .num { color: #555; font-size: 12px; }
details pre { white-space: pre-wrap; font-size: 12px; max-height: 360px; overflow: auto; }
"""


class EpisodeSummary(Frozen):
    """What the viewer shows about the episode above its steps."""

    episode_id: str
    task_id: str
    operator: str
    outcome: str
    completed: bool | None = None
    final_message: str = ""
    error: str | None = None
    duration_s: float = 0.0


def step_images(step: StepRecord, folder: Path) -> bytes | None:
    """The step's screenshot with its actions drawn on it (None if the file is gone)."""
    if step.screenshot is None or not (folder / step.screenshot).is_file():
        return None
    return draw_actions((folder / step.screenshot).read_bytes(), list(step.actions))


def totals(steps: list[StepRecord]) -> dict[str, Any]:
    priced = [step.cost_usd for step in steps if step.cost_usd is not None]
    return {
        "steps": len(steps),
        "tokens_in": sum(step.tokens_in for step in steps),
        "tokens_out": sum(step.tokens_out for step in steps),
        "cost_usd": round(sum(priced), 6) if priced else None,
        "action_errors": sum(len(step.action_errors) for step in steps),
        "model_s": round(sum(step.model_ms for step in steps) / 1000, 2),
    }


def render_html(summary: EpisodeSummary, steps: list[StepRecord], folder: Path) -> str:
    """The whole timeline as one HTML page."""
    sums = totals(steps)
    cost = "unpriced" if sums["cost_usd"] is None else f"${sums['cost_usd']:.4f}"
    meta = (
        f"task {summary.task_id} · operator {summary.operator} · outcome <b>{summary.outcome}</b> · "
        f"completed {summary.completed} · {sums['steps']} steps · {sums['tokens_in']} tokens in, "
        f"{sums['tokens_out']} out · {cost} · model {sums['model_s']} s of {summary.duration_s:.1f} s · "
        f"{sums['action_errors']} refused actions"
    )
    rows = [_row(step, folder) for step in steps]
    ending = [f"final message: {summary.final_message}"] if summary.final_message else []
    ending += [f"error: {summary.error}"] if summary.error else []
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>trace {html.escape(summary.episode_id)}</title><style>{STYLE}</style></head><body>"
        f"<h1>Episode {html.escape(summary.episode_id)}</h1><div class='meta'>{meta}</div>"
        f"<table>{''.join(rows)}</table>"
        + "".join(f"<p class='meta'>{html.escape(line)}</p>" for line in ending)
        + "</body></html>"
    )


def _row(step: StepRecord, folder: Path) -> str:
    image = step_images(step, folder)
    shot = (
        f"<img alt='step {step.index}' src='data:image/png;base64,{base64.b64encode(image).decode()}'>"
        if image
        else "<i>(no screenshot)</i>"
    )
    actions = "".join(
        f"<div class='act'>→ {html.escape(describe_action(action))}</div>" for action in step.actions
    )
    errors = "".join(f"<div class='err'>✗ {html.escape(error)}</div>" for error in step.action_errors)
    failure = f"<div class='err'>model: {html.escape(step.error)}</div>" if step.error else ""
    words = f"<div class='words'>{html.escape(step.reply_text)}</div>" if step.reply_text else ""
    cost = "" if step.cost_usd is None else f" · ${step.cost_usd:.5f}"
    numbers = (
        f"model {step.model_ms:.0f} ms · observe {step.observe_ms:.0f} ms · act {step.act_ms:.0f} ms · "
        f"{step.tokens_in}/{step.tokens_out} tokens{cost} · {step.request_bytes / 1024:.0f} KiB sent"
        + (f" · {step.retries} retries" if step.retries else "")
    )
    observed = (
        f"<details><summary>what the model read ({step.observation})</summary>"
        f"<pre>{html.escape(step.observation_text)}</pre></details>"
    )
    return (
        f"<tr><td class='shot'>{shot}</td><td><div class='n'>Step {step.index}</div>"
        f"<div class='url'>{html.escape(step.url)}</div>{words}{actions}{errors}{failure}"
        f"<div class='num'>{numbers}</div>{observed}</td></tr>"
    )


def render_text_rows(steps: list[StepRecord]) -> list[tuple[str, str, str, str, str]]:
    """The timeline as table rows: step, page, actions, the model's words, numbers."""
    rows = []
    for step in steps:
        actions = "; ".join(describe_action(action) for action in step.actions)
        problems = "; ".join(step.action_errors) + (f" model: {step.error}" if step.error else "")
        rows.append(
            (
                str(step.index),
                step.url,
                actions + (f"  ✗ {problems}" if problems.strip() else ""),
                " ".join(step.reply_text.split())[:160],
                f"{step.model_ms:.0f} ms, {step.tokens_in}/{step.tokens_out} tok",
            )
        )
    return rows
