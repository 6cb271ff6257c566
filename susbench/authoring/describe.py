"""Step 4 of the paper's pipeline: the researcher's description of what to draft, one template per
pattern type (`injections/templates/<type>.describe.yaml`), filled in or given as a file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import Field, model_validator

from susbench.catalog.injections import TEMPLATES_DIR
from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import TEXT_KEYS, Frozen, PatternType


class Description(Frozen):
    """Functionality, visual features, assets and wording of one pattern to draft."""

    type: PatternType
    functionality: str = Field(min_length=10, description="what the pattern does and how it is scored")
    visual_features: str = Field(min_length=10, description="how it should look on the host page")
    assets: str = Field(default="", description="images or icons it may use")
    wording: dict[str, str] = Field(description="guidance per text of the type's template")
    notes: str = ""

    @model_validator(mode="after")
    def _wording_fits_template(self) -> Description:
        required, optional = TEXT_KEYS[self.type]
        unknown = sorted(set(self.wording) - set(required) - set(optional))
        if unknown:
            allowed = ", ".join(required + optional)
            raise ValueError(f"wording: unknown {', '.join(map(repr, unknown))} (allowed: {allowed})")
        return self


def description_path(pattern_type: str) -> Path:
    return TEMPLATES_DIR / f"{pattern_type}.describe.yaml"


def load_description(pattern_type: PatternType, path: Path | None = None) -> tuple[Description, str]:
    """The description (the type's template unless `path` is given) and the sha256 of its file."""
    source = path or description_path(pattern_type)
    description = load_model(source, Description)
    if description.type != pattern_type:
        raise InputError(
            f"{source}: field 'type': describes a {description.type}, but --type is {pattern_type}"
        )
    return description, hashlib.sha256(source.read_bytes()).hexdigest()
