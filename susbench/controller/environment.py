"""The environment every worker runs its episodes in, sent to each worker once (serialisable, so a
worker can be another process or, later, another machine)."""

from __future__ import annotations

from pathlib import Path

from susbench.core.models import BrowserKind, Frozen, Mode, PageLook, ReplayMode
from susbench.operators import OperatorSettings


class WorkerSetup(Frozen):
    """What every worker needs to start its browser side once; the digests let a worker on another
    machine check that its copies of the snapshot and the extension are the run's."""

    mode: Mode
    snapshot: Path | None
    snapshot_sha256: str | None = None
    extension_dir: Path
    extension_sha256: str | None = None
    live_resolve: tuple[str, ...] = ()
    live_ca_cert: Path | None = None
    archive_dir: Path | None = None
    headless: bool = True
    replay_mode: ReplayMode = "direct"
    tmp_dir: Path
    look: PageLook = PageLook()
    operator_settings: OperatorSettings = OperatorSettings()
    trace_dir: Path | None = None
    browser: BrowserKind = "local"
    image: str | None = None
