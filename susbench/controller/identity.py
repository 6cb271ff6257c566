"""Which invocations are one run: episode keys, the task catalog's digest, and why a run started
fresh although one asked for the same way is stored. The identity itself (`RunIdentity`) is
declared in `susbench.core.identity`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from pydantic import ValidationError

from susbench.core.digests import canonical_json
from susbench.core.identity import INPUT_LABELS, RunIdentity
from susbench.core.models import Task
from susbench.records.run import StoredRun


def episode_key(run_id: str, task_id: str, repeat: int, paired_control: bool = False) -> str:
    """The episode of a task and repeat in a run; its paired control (`--control paired`) is another."""
    arm = "\x1fcontrol" if paired_control else ""
    return "ep-" + hashlib.sha256(f"{run_id}\x1f{task_id}\x1f{repeat}{arm}".encode()).hexdigest()[:20]


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
        before = RunIdentity.from_config(previous.config)
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
