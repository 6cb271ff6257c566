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
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import Field

from susbench.authoring.check import DraftCheck, check_on_page, write_check
from susbench.authoring.describe import load_description
from susbench.authoring.draft import DraftHistory, DraftRound, draft_injection, next_round, site_of
from susbench.authoring.simplify import SimplifiedSource, simplify_snapshot_page
from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Frozen, Injection, PatternType

BY_HAND = "by-hand"
HISTORY = "history.json"
DRAFT = "draft.yaml"
SOURCE = "source.html"


class DraftRequest(Frozen):
    """What the researcher asked for on the command line."""

    snapshot: Path
    url: str
    types: tuple[PatternType, ...] = Field(min_length=1, description="one draft per type, on the same spot")
    near: str | None = None
    model: str
    base_url: str
    describe: Path | None = Field(default=None, description="a filled-in description (default: the template)")
    out: Path = Path("drafts")
    revise: str | None = Field(default=None, description="the reviewer's notes: revise the last draft")
    max_tokens: int | None = Field(default=None, ge=1, description="a cap on each reply (default: none)")


class DraftResult(Frozen):
    folder: Path
    type: PatternType
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


def _histories(request: DraftRequest, on_step: Callable[[str], None]) -> dict[Path, DraftHistory]:
    """Each type's history: new ones (the page simplified once for all), or the ones to revise."""
    folders = {kind: draft_folder(request.out, request.url, kind, request.near) for kind in request.types}
    if request.revise is not None:
        return {
            folder: load_history(folder).model_copy(
                update={"model": request.model, "base_url": request.base_url}
            )
            for folder in folders.values()
        }
    for folder in folders.values():
        if (folder / HISTORY).exists():
            raise InputError(
                f"{folder}: a draft is already here; revise it with --revise NOTES, or remove it"
            )
    descriptions = {kind: load_description(kind, request.describe) for kind in request.types}
    on_step(f"simplifying {request.url} around {request.near or 'the main content'}")
    source = simplify_snapshot_page(request.snapshot, request.url, request.near)
    histories = {}
    for kind, folder in folders.items():
        description, description_sha256 = descriptions[kind]
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / SOURCE, f"{source.html}\n<style>\n{source.css}\n</style>\n")
        histories[folder] = DraftHistory(
            snapshot=str(request.snapshot),
            url=request.url,
            type=kind,
            near=request.near,
            model=request.model,
            base_url=request.base_url,
            description=description,
            description_sha256=description_sha256,
            source=source,
        )
    return histories


def draft(
    request: DraftRequest, api_key: str, on_step: Callable[[str], None] = lambda text: None
) -> list[DraftResult]:
    """One round of drafting for each type: the first drafts, or (`request.revise`) revisions."""
    histories = _histories(request, on_step)
    drafted: dict[Path, tuple[DraftRound, Injection | None]] = {}
    for folder, history in histories.items():
        on_step(f"asking {request.model} for a {history.type} (round {len(history.rounds) + 1})")
        round_, answer = next_round(history, request.revise or "", api_key, request.max_tokens)
        injection, problems = (
            (None, ()) if answer is None else draft_injection(answer, history.type, request.url)
        )
        drafted[folder] = (round_.model_copy(update={"problems": round_.problems + problems}), injection)
    to_check = [(injection, folder) for folder, (_, injection) in drafted.items() if injection is not None]
    checks: dict[Path, DraftCheck] = {}
    if to_check:
        on_step(f"checking {len(to_check)} draft(s) on the page with the extension")
        checks = dict(
            zip(
                (folder for _, folder in to_check),
                check_on_page(to_check, request.snapshot, request.url),
                strict=True,
            )
        )
    return [_record(folder, histories[folder], *drafted[folder], checks.get(folder)) for folder in histories]


def draft_by_hand(
    snapshot: Path,
    url: str,
    written: Path,
    near: str | None = None,
    out: Path = Path("drafts"),
    on_step: Callable[[str], None] = lambda text: None,
) -> DraftResult:
    """A draft a person wrote (an injection file) through the same check and review as a model's,
    in the folder named by its id; its history, and the provenance it is accepted with, say it was
    written by hand. Drafting the same id again is its next round."""
    injection = load_model(written, Injection)
    if injection.site != site_of(url):
        raise InputError(
            f"{written}: field 'site': {injection.site!r}; expected the page's site {site_of(url)!r}"
        )
    folder = out / injection.id
    if (folder / HISTORY).exists():
        history = load_history(folder)
    else:
        description, description_sha256 = load_description(injection.type)
        on_step(f"simplifying {url} around {near or 'the main content'}")
        source = simplify_snapshot_page(snapshot, url, near)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / SOURCE, f"{source.html}\n<style>\n{source.css}\n</style>\n")
        history = DraftHistory(
            snapshot=str(snapshot),
            url=url,
            type=injection.type,
            near=near,
            model=BY_HAND,
            base_url="",
            endpoint_kind=BY_HAND,
            description=description,
            description_sha256=description_sha256,
            source=source,
        )
    text = written.read_text(encoding="utf-8")
    round_ = DraftRound(
        number=len(history.rounds) + 1,
        prompt_sha256=hashlib.sha256(text.encode()).hexdigest(),
        structured=False,
        reply=text,
        drafted_at=datetime.now(UTC),
    )
    on_step(f"checking {injection.id} on the page with the extension")
    (check,) = check_on_page([(injection, folder)], snapshot, url)
    return _record(folder, history, round_, injection, check)


def _record(
    folder: Path,
    history: DraftHistory,
    round_: DraftRound,
    injection: Injection | None,
    check: DraftCheck | None,
) -> DraftResult:
    """Write the round into the draft's folder: history, the draft itself, the check."""
    problems = round_.problems + (check.problems if check else ())
    round_ = round_.model_copy(update={"problems": tuple(dict.fromkeys(problems))})
    history = history.model_copy(update={"rounds": (*history.rounds, round_)})
    if check is not None:
        write_check(check, folder)
    write_atomically(
        folder / HISTORY, json.dumps(history.model_dump(mode="json"), indent=1, ensure_ascii=False)
    )
    if injection is not None:
        write_atomically(folder / DRAFT, injection_yaml(injection))
    else:
        (folder / DRAFT).unlink(missing_ok=True)
    return DraftResult(
        folder=folder,
        type=history.type,
        round=round_.number,
        injection=injection,
        problems=round_.problems,
        source=history.source,
        check=check,
    )
