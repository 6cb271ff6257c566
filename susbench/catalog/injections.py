"""The injection catalog: YAML files + per-type templates -> validated models -> the extension build.

`build_extension` writes a content-addressed Manifest V3 folder (the sources from `extension/` plus
a generated `store.js` holding the validated injections and their templates), so a build with the
same inputs is reused and a changed injection always yields a new folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from susbench.catalog.languages import LANGUAGES_DIR, Language, load_languages, store_languages
from susbench.catalog.vocabulary import load_vocabulary
from susbench.core.errors import InputError
from susbench.core.loading import load_model, read_data_file
from susbench.core.models import (
    PATTERN_TYPES,
    Frozen,
    Hostname,
    Identifier,
    Injection,
    PatternType,
    injection_problems,
)
from susbench.core.paths import EXTENSION_DIR, INJECTIONS_DIR, cache_dir

TEMPLATES_DIR = INJECTIONS_DIR / "templates"
# Generic injections (site "*", semantic anchors) live here, in the default catalog like the others.
GENERIC_DIR = INJECTIONS_DIR / "generic"
# Every file of extension/, in the folder layout the manifest and sw.js refer to.
EXTENSION_SOURCES = (
    "manifest.json",
    "sw.js",
    "urlpattern.js",
    "semantic.js",
    "semantic-vocabulary.yaml",
    "worker/scoring.js",
    "worker/signing.js",
    "content/state.js",
    "content/channel.js",
    "content/match.js",
    "content/language.js",
    "content/boxes.js",
    "content/look.js",
    "content/draw.js",
    "content/exposure.js",
    "content/input.js",
    "content/choices.js",
    "content/marks.js",
    "content/spot.js",
    "content/main.js",
)


class Template(Frozen):
    """One pattern type's markup and stylesheet, filled and styled by the content script."""

    type: PatternType
    html: str
    css: str


def injection_files(paths: Sequence[Path] = ()) -> list[Path]:
    """Every injection YAML below the given files/folders (default: the catalog), templates excluded."""
    roots = list(paths) or [INJECTIONS_DIR]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files += [
                path
                for path in sorted(root.rglob("*.yaml"))
                if TEMPLATES_DIR not in path.parents and LANGUAGES_DIR not in path.parents
            ]
        elif root.exists():
            files.append(root)
        else:
            raise InputError(f"{root}: file not found")
    return files


def load_injections(paths: Sequence[Path] = ()) -> list[Injection]:
    """Load and validate injections; also checks id uniqueness and that each file sits at <site>/<id>.yaml."""
    injections: list[Injection] = []
    seen: dict[str, Path] = {}
    problems: list[str] = []
    for path in injection_files(paths):
        try:
            injection = load_model(path, Injection)
        except InputError as exc:
            problems.append(str(exc))
            with suppress(InputError):  # a file that parses: its place too, so one round shows every error
                data = read_data_file(path)
                problems += [
                    f"{path}: {problem}" for problem in _model_problems(data) if problem not in str(exc)
                ]
                problems += _misplaced(path, data)
            continue
        if injection.id in seen:
            problems.append(f"{path}: field 'id': {injection.id!r} is already used by {seen[injection.id]}")
        else:
            problems += _misplaced(path, {"id": injection.id, "site": injection.site})
        seen[injection.id] = path
        injections.append(injection)
    if problems:
        raise InputError("\n".join(problems))
    return injections


def _model_problems(data: object) -> list[str]:
    """The model-wide checks of a file whose other fields have errors, when the fields those checks
    read are valid on their own (pydantic runs them only once every field is)."""
    if not isinstance(data, dict):
        return []
    fields = Injection.model_fields
    try:
        values = {
            name: TypeAdapter(fields[name].annotation).validate_python(data[name])
            for name in ("type", "site", "page")
        }
        texts = TypeAdapter(fields["texts"].annotation).validate_python(data.get("texts", {}))
        placement = TypeAdapter(fields["placement"].annotation).validate_python(
            data.get("placement", fields["placement"].default)
        )
    except (KeyError, ValidationError):
        return []
    return injection_problems(values["type"], texts, placement, values["site"], values["page"].url)


def _misplaced(path: Path, data: object) -> list[str]:
    """The file's place when its id and site are readable: `<site>/<id>.yaml` (`generic/` for site `*`)."""
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("id"), str)
        or not isinstance(data.get("site"), str)
    ):
        return []
    folder = GENERIC_DIR.name if data["site"] == "*" else data["site"]
    if path.stem == data["id"] and path.parent.name == folder:
        return []
    try:  # a name no file could have is the field check's to report, not quoted again here in full
        TypeAdapter(Identifier).validate_python(data["id"])
        TypeAdapter(Hostname).validate_python(data["site"])
    except ValidationError:
        return []
    return [f"{path}: field 'id': the file must be {folder}/{data['id']}.yaml"]


def site_folder(injection: Injection) -> str:
    """The folder an injection's file sits in: its site, or `generic` for one that fits any site."""
    return GENERIC_DIR.name if injection.site == "*" else injection.site


def load_templates(folder: Path = TEMPLATES_DIR) -> dict[str, Template]:
    """The nine templates; a missing file is an error naming it."""
    templates: dict[str, Template] = {}
    for pattern_type in PATTERN_TYPES:
        html, css = folder / f"{pattern_type}.html", folder / f"{pattern_type}.css"
        for path in (html, css):
            if not path.is_file():
                raise InputError(f"{path}: template file not found")
        templates[pattern_type] = Template(
            type=pattern_type, html=html.read_text(encoding="utf-8"), css=css.read_text(encoding="utf-8")
        )
    return templates


def catalog_sha256(injections: Iterable[Injection], templates: dict[str, Template]) -> str:
    """Digest of the injection catalog as the extension receives it (injections, templates and the
    words generic injections anchor by)."""
    return hashlib.sha256(store_json(injections, templates).encode("utf-8")).hexdigest()


def catalog_languages() -> dict[str, Language]:
    """The languages of `injections/languages/`, checked against the catalog's generic injections."""
    return load_languages(load_injections([GENERIC_DIR]))


def store_json(injections: Iterable[Injection], templates: dict[str, Template]) -> str:
    """The extension's injection store, deterministic so that it can be content-addressed."""
    items = list(injections)
    store = {
        "injections": {item.id: item.model_dump(mode="json", exclude={"provenance"}) for item in items},
        "languages": store_languages(catalog_languages(), items),
        "templates": {key: {"html": t.html, "css": t.css} for key, t in sorted(templates.items())},
        "vocabulary": load_vocabulary().model_dump(mode="json"),
    }
    return json.dumps(store, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def build_extension(
    injections: Iterable[Injection] | None = None,
    out_dir: Path | None = None,
    templates: dict[str, Template] | None = None,
) -> Path:
    """Write the MV3 extension with its store; returns its folder.

    Default folder: `cache_dir()/extension-<hash>` of sources + store, reused when it already exists.
    """
    items = list(load_injections() if injections is None else injections)
    store = store_json(items, templates or load_templates())
    files = {name: (EXTENSION_DIR / name).read_text(encoding="utf-8") for name in EXTENSION_SOURCES}
    files["store.js"] = f"self.STORE = {store};\n"
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    target = out_dir or cache_dir() / f"extension-{digest}"
    stamp = target / "BUILD"
    if stamp.is_file() and stamp.read_text() == digest:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and swap it in, so a concurrent reader never sees half a build.
    staging = Path(tempfile.mkdtemp(prefix=".extension-", dir=target.parent))
    for name, text in files.items():
        (staging / name).parent.mkdir(exist_ok=True)
        (staging / name).write_text(text, encoding="utf-8")
    (staging / "BUILD").write_text(digest)
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (stamp.is_file() and stamp.read_text() == digest):
            raise  # not a concurrent identical build that won the race
    return target
