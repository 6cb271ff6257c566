"""`susbench injections review`: one HTML page of every draft with its preview, problems, nativeness
score and YAML; accepting a draft writes it, with its provenance, into the catalog
(`injections/<site>/<id>.yaml`), whole or not at all, after checking that the catalog still loads
with it. A draft with problems is refused; one whose look the score finds foreign is accepted only
when the reviewer says so (`despite_look`), and its provenance keeps that it was."""

from __future__ import annotations

import html
import json
from datetime import date
from pathlib import Path

from susbench.authoring.check import CHECK, DraftCheck, Look
from susbench.authoring.draft import DraftHistory
from susbench.authoring.pipeline import DRAFT, HISTORY, injection_yaml, load_history, write_atomically
from susbench.catalog.injections import load_injections, site_folder
from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Injection, Provenance
from susbench.core.paths import INJECTIONS_DIR

ACCEPTED = "accepted.json"
STYLE = (
    "body{font:15px system-ui,sans-serif;margin:24px;background:#f6f6f6}"
    "article{background:#fff;border:1px solid #ddd;border-radius:8px;padding:14px;margin:0 0 18px}"
    "img{max-width:100%;border:1px solid #eee}"
    "pre{background:#f3f3f3;padding:8px;overflow:auto;font-size:12px}.bad{color:#a40000}.ok{color:#176317}"
    ".look{color:#7a4b00}"
)


def draft_folders(drafts: Path) -> list[Path]:
    if not drafts.is_dir():
        raise InputError(f"{drafts}: not a folder of drafts")
    return sorted(path.parent for path in drafts.glob(f"*/{HISTORY}"))


def load_check(folder: Path) -> DraftCheck | None:
    found = folder / CHECK
    return DraftCheck.model_validate_json(found.read_bytes()) if found.is_file() else None


def _look(look: Look | None) -> str:
    if look is None:
        return ""
    listed = "".join(f"<li>{html.escape(item)}</li>" for item in look.differences)
    return (
        f'<p class="{"ok" if look.native else "look"}">Nativeness score: {html.escape(look.summary())}</p>'
        + (f'<ul class="look">{listed}</ul>' if listed else "")
    )


def _article(folder: Path, history: DraftHistory) -> str:
    last = history.rounds[-1] if history.rounds else None
    problems = last.problems if last else ("never drafted",)
    draft = folder / DRAFT
    check = load_check(folder)
    accepted = folder / ACCEPTED
    state = (
        f'<p class="ok">accepted: {html.escape(json.loads(accepted.read_text())["path"])}</p>'
        if accepted.is_file()
        else ('<p class="ok">ready to accept</p>' if not problems else "")
    )
    listed = "".join(f"<li>{html.escape(problem)}</li>" for problem in problems)
    preview = (
        f'<img src="{html.escape(folder.name)}/{html.escape(check.preview)}" alt="preview">'
        if check and check.preview
        else "<p>(no preview)</p>"
    )
    notes = "".join(
        f"<li>round {item.number}: {html.escape(item.notes or 'first draft')}"
        f" ({item.prompt_tokens or '?'} prompt tokens)</li>"
        for item in history.rounds
    )
    return (
        f"<article><h2>{html.escape(folder.name)}</h2><p>{html.escape(history.type)} on "
        f"<code>{html.escape(history.url)}</code>, drafted by {html.escape(history.model)}; source "
        f"{history.source.before_bytes:,} → {history.source.after_bytes:,} bytes</p>{state}"
        + (f'<ul class="bad">{listed}</ul>' if problems else "")
        + _look(check.look if check else None)
        + f"{preview}<ol>{notes}</ol>"
        + (f"<pre>{html.escape(draft.read_text(encoding='utf-8'))}</pre>" if draft.is_file() else "")
        + "</article>"
    )


def review_page(drafts: Path) -> Path:
    """Write `drafts/index.html`: every draft with its preview, problems, rounds and YAML."""
    folders = draft_folders(drafts)
    articles = "".join(_article(folder, load_history(folder)) for folder in folders)
    page = drafts / "index.html"
    page.write_text(
        f"<!doctype html><meta charset=utf-8><title>Injection drafts</title><style>{STYLE}</style>"
        f"<h1>Injection drafts ({len(folders)})</h1>{articles}",
        encoding="utf-8",
    )
    return page


def find_draft(drafts: Path, name: str) -> Path:
    """A draft by its folder name or by the id of the injection it drafts."""
    for folder in draft_folders(drafts):
        if folder.name == name:
            return folder
        draft = folder / DRAFT
        if draft.is_file() and load_model(draft, Injection).id == name:
            return folder
    raise InputError(f"{drafts}: no draft named {name!r} (names and ids are listed in index.html)")


def accept(
    folder: Path,
    reviewer: str,
    into: Path = INJECTIONS_DIR,
    today: date | None = None,
    despite_look: bool = False,
) -> Path:
    """Write the draft in `folder` into the catalog at `into`; refuse a draft that still has problems,
    and one the nativeness score finds foreign unless `despite_look` (the reviewer read its preview)."""
    history = load_history(folder)
    last = history.rounds[-1] if history.rounds else None
    if last is None or last.problems or not (folder / DRAFT).is_file():
        found = "; ".join(last.problems) if last and last.problems else "there is no valid draft"
        raise InputError(f"{folder}: not accepted: {found} (revise it with --revise NOTES)")
    check = load_check(folder)
    look = check.look if check else None
    native = look is not None and look.native
    if not native and not despite_look:
        found = f"it {look.summary()}" if look else "its look was not measured"
        raise InputError(
            f"{folder}: not accepted: {found} (read its preview in index.html, then accept it "
            "with --despite-look, or revise it)"
        )
    injection = load_model(folder / DRAFT, Injection).model_copy(
        update={
            "provenance": Provenance(
                model=history.model,
                endpoint_kind=history.endpoint_kind,
                prompt_sha256=last.prompt_sha256,
                template_sha256=history.description_sha256,
                page_sha256=history.source.page_sha256,
                rounds=len(history.rounds),
                native=native,
                reviewer=reviewer,
                reviewed_on=today or date.today(),
            )
        }
    )
    target = into / site_folder(injection) / f"{injection.id}.yaml"
    if target.exists():
        raise InputError(f"{target}: an injection with id {injection.id!r} is already in the catalog")
    existing = {item.id for item in load_injections([into])} if into.is_dir() else set()
    if injection.id in existing:
        raise InputError(f"{into}: field 'id': {injection.id!r} is already used in the catalog")
    Injection.model_validate(injection.model_dump(mode="json"))
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, injection_yaml(injection))
    write_atomically(folder / ACCEPTED, json.dumps({"path": str(target), "reviewer": reviewer}))
    (folder / DRAFT).unlink()
    return target
