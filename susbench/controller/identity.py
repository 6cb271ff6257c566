"""Run identity: which invocations are the same run (and so resume it) and which start a new one.

An identity is what was asked (operator, mode, seed, control share, live upstream, browser and
image) plus digests of every input an outcome depends on (snapshot, task catalog, injection
catalog, built extension, package version, the browser image's Chromium). Asking for more tasks
or more repeats later extends the same run; changing any input starts a new run, and
`resume_notice` says which input changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any, ClassVar

from pydantic import ValidationError

from susbench.core.models import BrowserKind, Frozen, Mode, Task
from susbench.results.store import StoredRun, canonical_json

INPUT_LABELS = {
    "snapshot_sha256": "snapshot",
    "task_catalog_sha256": "task catalog",
    "injection_catalog_sha256": "injection catalog",
    "extension_sha256": "built extension",
    "susbench_version": "package version",
    "image_chromium": "Chromium in the browser image",
}
BROWSER_FIELDS = frozenset({"browser", "image", "image_chromium"})


class RunInputs(Frozen):
    """Digests of everything besides the request that decides what an episode means."""

    snapshot_sha256: str | None
    task_catalog_sha256: str
    injection_catalog_sha256: str
    extension_sha256: str
    susbench_version: str


class RunIdentity(RunInputs):
    """The fields that make two invocations the same run (so the second one resumes the first):
    the input digests plus what was asked.

    The task selector and the repeat count are left out on purpose: asking for more tasks or more
    repeats later extends the same run instead of starting another.
    """

    ASKED: ClassVar[tuple[str, ...]] = (
        "operator",
        "operator_settings",
        "mode",
        "live_resolve",
        "live_date",
        "seed",
        "control_rate",
        "browser",
        "image",
    )

    operator: str
    operator_settings: dict[str, Any] = {}
    mode: Mode
    live_resolve: tuple[str, ...]
    live_date: date | None = None
    seed: int
    control_rate: float
    browser: BrowserKind = "local"
    image: str | None = None
    image_chromium: str | None = None

    def run_id(self) -> str:
        """A digest of every field, less those whose value is what runs stored before the field
        existed had: an operator without settings (the baselines), and a local run's browser fields;
        so those runs keep their ids and resume."""
        unset = set() if self.operator_settings else {"operator_settings"}
        if self.browser == "local":
            unset |= BROWSER_FIELDS
        dumped = self.model_dump(mode="json", exclude=unset)
        return "run-" + hashlib.sha256(canonical_json(dumped).encode()).hexdigest()[:16]

    def asked(self) -> dict[str, object]:
        dumped = self.model_dump(mode="json")
        return {name: dumped[name] for name in self.ASKED}

    @classmethod
    def stored_config(cls, config: dict[str, object], name: str) -> object:
        """A field of a stored run's config; runs stored before a field existed had its default."""
        return config.get(name, cls.model_fields[name].default)


def episode_key(run_id: str, task_id: str, repeat: int) -> str:
    return "ep-" + hashlib.sha256(f"{run_id}\x1f{task_id}\x1f{repeat}".encode()).hexdigest()[:20]


def task_catalog_sha256(tasks: Iterable[Task]) -> str:
    """Digest of the whole task catalog (every task, in id order), not only the selected tasks."""
    ordered = sorted(tasks, key=lambda task: task.id)
    return hashlib.sha256(
        canonical_json([task.model_dump(mode="json") for task in ordered]).encode()
    ).hexdigest()


def resume_notice(identity: RunIdentity, stored: Sequence[StoredRun]) -> str | None:
    """Why this run starts fresh although the database holds a run asked for the same way.

    None when this run resumes itself or nothing alike is stored.
    """
    run_id = identity.run_id()
    if any(run.run_id == run_id for run in stored):
        return None
    asked = identity.asked().items()
    alike = [run for run in stored if all(RunIdentity.stored_config(run.config, k) == v for k, v in asked)]
    if not alike:
        return None
    previous = alike[-1]
    reused = f"its {previous.episodes} stored episodes are not reused"
    try:
        before = RunIdentity.model_validate(
            {k: v for k, v in previous.config.items() if k in RunIdentity.model_fields}
        )
    except ValidationError:
        return (
            f"started {run_id} fresh: {previous.run_id} in this database was asked for the same way but was "
            f"made before run identities held input digests; {reused}"
        )
    changed = [
        label for name, label in INPUT_LABELS.items() if getattr(before, name) != getattr(identity, name)
    ]
    return (
        f"started {run_id} fresh: {previous.run_id} in this database was asked for the same way but with "
        f"another {', '.join(changed)}; {reused}"
    )
