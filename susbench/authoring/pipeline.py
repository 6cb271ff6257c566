"""`susbench injections draft`: simplify (step 3), describe (4), draft (5), check, revise (6), each
draft in its own folder with the whole history, so a revision continues where the last one stopped.

A draft's folder, under the drafts folder (default `drafts/`):
  history.json   what the draft was made from and every round (model, prompt digest, reply, problems)
  source.html    the simplified source the model was shown
  draft.yaml     the latest round's injection, when it is one
  check.json     what the check found on the page; preview-<id>.png the pattern drawn in place
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import yaml
from pydantic import Field

from susbench.authoring.check import DraftCheck, check_on_page, write_check
from susbench.authoring.describe import load_description
from susbench.authoring.draft import DraftHistory, draft_injection, next_round, site_of
from susbench.authoring.simplify import SimplifiedSource, simplify_snapshot_page
from susbench.errors import InputError
from susbench.models import Frozen, Injection, PatternType

HISTORY = "history.json"
DRAFT = "draft.yaml"
SOURCE = "source.html"


class DraftRequest(Frozen):
    """What the researcher asked for on the command line."""

    snapshot: Path
    url: str
    type: PatternType
    near: str | None = None
    model: str
    base_url: str
    describe: Path | None = Field(default=None, description="a filled-in description (default: the template)")
    out: Path = Path("drafts")
    revise: str | None = Field(default=None, description="the reviewer's notes: revise the last draft")


class DraftResult(Frozen):
    folder: Path
    round: int
    injection: Injection | None
    problems: tuple[str, ...]
    source: SimplifiedSource
    check: DraftCheck | None = None


def draft_folder(out: Path, url: str, pattern_type: str, near: str | None) -> Path:
    """One folder per (page, type, spot): the same command finds it again to revise."""
    key = hashlib.sha256(f"{url}\0{near or ''}".encode()).hexdigest()[:8]
    return out / f"{site_of(url) or 'page'}-{pattern_type}-{key}"


def write_atomically(path: Path, text: str) -> None:
    """Write a file whole or not at all (a half-written history would lose every round)."""
    scratch = path.with_name(f".{path.name}.partial")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


def injection_yaml(injection: Injection) -> str:
    data = injection.model_dump(mode="json", exclude_defaults=True)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def load_history(folder: Path) -> DraftHistory:
    path = folder / HISTORY
    try:
        return DraftHistory.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise InputError(f"{folder}: no draft to revise here (draft it first, without --revise)") from exc
    except ValueError as exc:
        raise InputError(f"{path}: not a draft history ({str(exc).splitlines()[0]})") from exc


def start_history(request: DraftRequest, on_step: Callable[[str], None]) -> DraftHistory:
    description, description_sha256 = load_description(request.type, request.describe)
    on_step(f"simplifying {request.url} around {request.near or 'the main content'}")
    source = simplify_snapshot_page(request.snapshot, request.url, request.near)
    return DraftHistory(
        snapshot=str(request.snapshot),
        url=request.url,
        type=request.type,
        near=request.near,
        model=request.model,
        base_url=request.base_url,
        description=description,
        description_sha256=description_sha256,
        source=source,
    )


def draft(
    request: DraftRequest, api_key: str, on_step: Callable[[str], None] = lambda text: None
) -> DraftResult:
    """One round of drafting: the first draft, or (`request.revise`) a revision of the last one."""
    folder = draft_folder(request.out, request.url, request.type, request.near)
    if request.revise is None:
        if (folder / HISTORY).exists():
            raise InputError(
                f"{folder}: a draft is already here; revise it with --revise NOTES, or remove it"
            )
        history = start_history(request, on_step)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(
            folder / SOURCE, history.source.html + "\n<style>\n" + history.source.css + "\n</style>\n"
        )
    else:
        history = load_history(folder).model_copy(
            update={"model": request.model, "base_url": request.base_url}
        )
    on_step(f"asking {request.model} at {request.base_url} (round {len(history.rounds) + 1})")
    drafted, answer = next_round(history, request.revise or "", api_key)
    injection, problems = (
        (None, drafted.problems) if answer is None else draft_injection(answer, request.type, request.url)
    )
    check = None
    if injection is not None:
        on_step(f"checking {injection.id} on the page")
        check = check_on_page(injection, request.snapshot, request.url, folder)
        write_check(check, folder)
        problems = problems + check.problems
    drafted = drafted.model_copy(update={"problems": tuple(dict.fromkeys(drafted.problems + problems))})
    history = history.model_copy(update={"rounds": (*history.rounds, drafted)})
    write_atomically(
        folder / HISTORY, json.dumps(history.model_dump(mode="json"), indent=1, ensure_ascii=False)
    )
    if injection is not None:
        write_atomically(folder / DRAFT, injection_yaml(injection))
    else:
        (folder / DRAFT).unlink(missing_ok=True)
    return DraftResult(
        folder=folder,
        round=drafted.number,
        injection=injection,
        problems=drafted.problems,
        source=history.source,
        check=check,
    )
