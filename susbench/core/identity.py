"""Run identity: which invocations are the same run (and so resume it) and which start a new one.

An identity is what was asked (`RunRequest`: operator, mode, seed, control share, live upstream,
browser and image; in a study, the study and the participant) plus digests of every input an
outcome depends on (`RunInputs`: snapshot, task catalog, injection catalog, built extension,
package version; and the browser image's Chromium). It is declared here, once, below every part
that reads it: the controller pins it, the journal stores it flat as `runs.config`, a result
bundle carries it as stored, and `reproduce` re-runs a bundle's run from it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import Field

from susbench.core.digests import canonical_json
from susbench.core.models import BrowserKind, Frozen, Mode

BROWSER_FIELDS = frozenset({"browser", "image", "image_chromium"})
"""Left out of a local run's id, so runs stored before a container browser existed keep theirs."""


class StudyRun(Frozen):
    """Whose episodes a study's run holds: one participant's of one study (their practice in a run
    of its own), so no other run, study or participant ever resumes, or is resumed as, theirs."""

    study: str = Field(min_length=1, description="a digest of what defines the study")
    participant: str = Field(min_length=1)
    practice: bool = False


class RunRequest(Frozen):
    """What was asked. The task selector and the repeat count are left out on purpose: asking for
    more tasks or more repeats later extends the same run instead of starting another."""

    operator: str
    operator_settings: dict[str, Any] = {}
    mode: Mode
    live_resolve: tuple[str, ...]
    live_date: date | None = None
    seed: int
    control_rate: float
    redraw_injections: bool = False
    browser: BrowserKind = "local"
    image: str | None = None
    study: StudyRun | None = None


class RunInputs(Frozen):
    """Digests of everything besides the request that decides what an episode means; each field's
    title is how a notice names it when it changed."""

    snapshot_sha256: str | None = Field(title="snapshot")
    task_catalog_sha256: str = Field(title="task catalog")
    injection_catalog_sha256: str = Field(title="injection catalog")
    extension_sha256: str = Field(title="built extension")
    susbench_version: str = Field(title="package version")


class RunIdentity(RunRequest, RunInputs):
    """The fields that make two invocations the same run (so the second one resumes the first):
    what was asked, the input digests, and the Chromium the asked image holds (an input too)."""

    image_chromium: str | None = Field(default=None, title="Chromium in the browser image")

    def run_id(self) -> str:
        """A digest of every field, less those whose value is what runs stored before the field
        existed had: an operator without settings (the baselines), a local run's browser fields, no
        study, and injections drawn once per task; so those runs keep their ids and resume."""
        unset = set() if self.operator_settings else {"operator_settings"}
        if not self.redraw_injections:
            unset.add("redraw_injections")
        if self.study is None:
            unset.add("study")
        if self.browser == "local":
            unset |= BROWSER_FIELDS
        dumped = self.model_dump(mode="json", exclude=unset)
        return "run-" + hashlib.sha256(canonical_json(dumped).encode()).hexdigest()[:16]

    def asked(self) -> dict[str, object]:
        return self.model_dump(mode="json", include=set(ASKED))

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> RunIdentity:
        """The identity a stored run's config holds beside its other fields; a ValidationError for
        a run stored before identities held input digests."""
        return cls.model_validate({name: value for name, value in config.items() if name in cls.model_fields})

    @classmethod
    def stored_config(cls, config: Mapping[str, object], name: str) -> object:
        """A field of a stored run's config; runs stored before a field existed had its default."""
        return config.get(name, cls.model_fields[name].default)


ASKED = tuple(RunRequest.model_fields)
INPUT_LABELS: dict[str, str] = {
    name: str(info.title) for name, info in RunIdentity.model_fields.items() if name not in ASKED
}
