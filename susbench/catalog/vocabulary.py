"""The words semantic anchors look for (`extension/semantic-vocabulary.yaml`), validated.

Data of the injection catalog as much as of the browser: the extension build puts it into the
store its content scripts read, and `injections anchor` and the crawl pass it to semantic.js.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Frozen
from susbench.core.paths import EXTENSION_DIR

VOCABULARY_FILE = EXTENSION_DIR / "semantic-vocabulary.yaml"


class KindWords(Frozen):
    """The words of one element kind in `extension/semantic-vocabulary.yaml`."""

    names: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="language -> label prefixes")
    exact: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="language -> whole labels")
    attributes: tuple[str, ...] = Field(default=(), description="substrings of id/class/name/data-testid")
    form_actions: tuple[str, ...] = Field(default=(), description="substrings of a buying form's action")
    currencies: tuple[str, ...] = Field(default=(), description="symbols and codes a price shows")
    topics: tuple[str, ...] = Field(default=(), description="words a consent banner's text mentions")
    slack: int | None = Field(default=None, ge=0, le=80, description="this kind's own label slack")


class SemanticVocabulary(Frozen):
    """What semantic anchors look for, per element kind (passed to semantic.js as JSON)."""

    slack: int = Field(ge=0, le=80, description="characters a label may have beyond its phrase")
    buy_button: KindWords
    checkout_button: KindWords
    price: KindWords = Field(description="needs `currencies`")
    title: KindWords
    image: KindWords
    grid_item: KindWords
    options: KindWords
    consent: KindWords = Field(description="the accept button of a consent layer, and what it speaks of")


def load_vocabulary(path: Path = VOCABULARY_FILE) -> SemanticVocabulary:
    vocabulary = load_model(path, SemanticVocabulary)
    if not vocabulary.price.currencies:
        raise InputError(f"{path}: field 'price.currencies': expected at least one currency")
    return vocabulary
