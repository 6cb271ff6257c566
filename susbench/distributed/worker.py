"""What runs inside a Ray worker process: one episode per task, on a runner kept for the process's life.

A Ray worker process runs task after task, like a local pool's worker, so it keeps one
`EpisodeRunner` (its Playwright and replay server) per run and opens a fresh browser per episode.
A task tells the driver where it runs and when its episode starts (the driver times set-up and
episode from those), then returns the episode's record signed with the run's key.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from susbench import __version__
from susbench.controller.episode import EpisodeRunner
from susbench.controller.planning import EpisodeJob
from susbench.core.models import Frozen
from susbench.core.paths import cache_dir
from susbench.distributed.artifacts import Shipment, localize
from susbench.distributed.signing import SignedRecord, sign_record

TMP_PREFIX = "susbench-ray-"
TMP_ROOT = Path(tempfile.gettempdir())


class WorkerPlacement(Frozen):
    """Where a task runs: the Ray node and the worker process."""

    node_id: str
    worker_pid: int


class Ready(Frozen):
    """The worker is set up and starts the episode; `fetched` names the artifacts it had to fetch."""

    fetched: tuple[str, ...] = ()


class WorkerSetupFailed(Exception):
    """The worker could not get ready (artifacts, version, browser side): not the episode's fault."""


@dataclass(frozen=True)
class _Prepared:
    """The runner of one run in this process (`key`: the digest of the run's shipment)."""

    key: str
    runner: EpisodeRunner
    resources: ExitStack


_prepared: _Prepared | None = None


def run_episode(
    shipment_json: str, refs: Mapping[str, Sequence[Any]], job_json: str, key: bytes
) -> Iterator[WorkerPlacement | Ready | SignedRecord]:
    """The body of the Ray task, a generator so the driver hears where it runs and when the episode
    starts: a placement, then (set up) ready, then the signed record."""
    import ray

    yield WorkerPlacement(node_id=ray.get_runtime_context().get_node_id(), worker_pid=os.getpid())
    job = EpisodeJob.model_validate_json(job_json)
    prepared, fetched = _prepare(shipment_json, refs, ray.get)
    yield Ready(fetched=tuple(fetched))
    yield sign_record(prepared.runner.run(job), key)


def _prepare(
    shipment_json: str, refs: Mapping[str, Sequence[Any]], fetch: Callable[[Any], bytes]
) -> tuple[_Prepared, list[str]]:
    """This process's runner for the run (made on its first episode); also what that had to fetch."""
    global _prepared
    key = hashlib.sha256(shipment_json.encode()).hexdigest()
    if _prepared is not None and _prepared.key == key:
        return _prepared, []
    if _prepared is not None:
        _prepared.resources.close()
        _prepared = None
    resources = ExitStack()
    try:
        shipment = Shipment.model_validate_json(shipment_json)
        if shipment.susbench_version != __version__:
            raise WorkerSetupFailed(
                f"this node has susbench {__version__}; the driver runs {shipment.susbench_version}"
            )
        setup, fetched = localize(shipment, refs, fetch, cache_dir() / "artifacts")
        tmp_dir = _private_tmp()
        resources.callback(shutil.rmtree, tmp_dir, ignore_errors=True)
        if setup.archive_dir is not None:
            setup.archive_dir.mkdir(parents=True, exist_ok=True)
        runner = resources.enter_context(EpisodeRunner(setup.model_copy(update={"tmp_dir": tmp_dir})))
    except Exception as exc:  # the driver requeues the episode and counts the failure
        resources.close()
        if isinstance(exc, WorkerSetupFailed):
            raise
        raise WorkerSetupFailed(f"{type(exc).__name__}: {exc}") from exc
    _prepared = _Prepared(key, runner, resources)
    return _prepared, fetched


def _private_tmp() -> Path:
    """A temporary folder for this process's browser profiles (as a local worker's TMPDIR), removed
    at exit; folders left by killed workers on this node are removed first."""
    for stale in TMP_ROOT.glob(f"{TMP_PREFIX}*"):
        pid = stale.name.removeprefix(TMP_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=TMP_ROOT))
    os.environ["TMPDIR"] = tmp_dir.as_posix()
    tempfile.tempdir = None
    return tmp_dir


@atexit.register
def _close_at_exit() -> None:
    if _prepared is not None:
        _prepared.resources.close()
