"""The languages generic injections speak: one YAML per language in `injections/languages/`.

A generic injection (site "*") is drawn on pages of any shop, so its texts exist in every language
of the catalog: its own `texts` are the English ones, and `injections/languages/<tag>.yaml` holds
the same keys in that language, with the words the content script tells the page's language by
when the page does not declare it. A page in a language missing here gets no generic injection.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Frozen, Identifier, Injection
from susbench.core.paths import INJECTIONS_DIR

LANGUAGES_DIR = INJECTIONS_DIR / "languages"
DEFAULT_LANGUAGE = "en"
# A BCP 47 primary language, or with its script or region where that decides the texts (zh-Hant, pt-BR).
LanguageTag = Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[A-Z][a-z]{3}|-[A-Z]{2})?$")]
Script = Literal["latin", "cyrillic", "greek", "hebrew", "arabic", "hangul", "han", "kana"]


class Language(Frozen):
    """One language of the catalog: how a page is told to be in it, and the generic texts in it."""

    language: LanguageTag
    name: str = Field(min_length=1, description="the language's own name for itself")
    script: Script = Field(description="the writing system its pages are mostly in")
    declared: tuple[str, ...] = Field(
        default=(), description="lang attribute values (lower case) that mean this language beyond its tag"
    )
    words: tuple[str, ...] = Field(
        default=(), description="frequent short words of running text, lower case (content detection)"
    )
    texts: dict[Identifier, dict[str, str]] = Field(
        default_factory=dict, description="generic injection id -> its texts in this language"
    )


def language_files(folder: Path = LANGUAGES_DIR) -> list[Path]:
    return sorted(folder.glob("*.yaml"))


def load_languages(generic: Iterable[Injection], folder: Path = LANGUAGES_DIR) -> dict[str, Language]:
    """Every language file, checked against the catalog's generic injections: each has every
    injection's texts, with exactly its English keys (an error names the file and the field)."""
    wanted = {item.id: item for item in generic if item.site == "*"}
    languages: dict[str, Language] = {}
    problems: list[str] = []
    for path in language_files(folder):
        try:
            language = load_model(path, Language)
        except InputError as exc:
            problems.append(str(exc))
            continue
        if path.stem != language.language:
            problems.append(f"{path}: field 'language': the file must be {language.language}.yaml")
        if language.script not in ("hangul", "han", "kana") and len(language.words) < 12:
            problems.append(f"{path}: field 'words': expected at least 12 words to tell the language by")
        needs_texts = language.language != DEFAULT_LANGUAGE
        for injection_id in sorted(set(language.texts) - set(wanted)):
            problems.append(f"{path}: field 'texts.{injection_id}': no generic injection has this id")
        for injection_id, injection in sorted(wanted.items()):
            texts = language.texts.get(injection_id)
            if texts is None:
                if needs_texts:
                    problems.append(f"{path}: field 'texts.{injection_id}': missing")
                continue
            expected = {key for key, value in injection.texts.items() if value.strip()}
            given = {key for key, value in texts.items() if value.strip()}
            if given != expected:
                problems.append(
                    f"{path}: field 'texts.{injection_id}': expected the keys {', '.join(sorted(expected))}"
                    f" (got {', '.join(sorted(given)) or 'none'})"
                )
        languages[language.language] = language
    if DEFAULT_LANGUAGE not in languages and not problems:
        problems.append(f"{folder}: {DEFAULT_LANGUAGE}.yaml is missing (the words English is told by)")
    if problems:
        raise InputError("\n".join(problems))
    return languages


def store_languages(languages: dict[str, Language], injections: Iterable[Injection]) -> dict[str, object]:
    """The store's `languages`: per tag, how to tell it and each generic injection's texts in it
    (English from the injections themselves; a translation whose keys no longer fit is left out)."""
    generic = {item.id: item for item in injections if item.site == "*"}
    store: dict[str, object] = {}
    for tag, language in sorted(languages.items()):
        texts = {key: dict(item.texts) for key, item in generic.items()} if tag == DEFAULT_LANGUAGE else {}
        for key, value in language.texts.items():
            if key in generic and set(value) == {k for k, v in generic[key].texts.items() if v.strip()}:
                texts[key] = value
        store[tag] = {
            "script": language.script,
            "declared": list(language.declared),
            "words": list(language.words),
            "texts": texts,
        }
    return store
