"""The environment every worker runs its episodes in, sent to each worker once (serialisable, so a
worker can be another process or, later, another machine)."""

from __future__ import annotations

from pathlib import Path

from susbench.models import Frozen, Mode, PageLook, ReplayMode


class WorkerSetup(Frozen):
    """What every worker needs to start its browser side once."""

    mode: Mode
    snapshot: Path | None
    extension_dir: Path
    live_resolve: tuple[str, ...] = ()
    live_ca_cert: Path | None = None
    archive_dir: Path | None = None
    headless: bool = True
    replay_mode: ReplayMode = "direct"
    tmp_dir: Path
    look: PageLook = PageLook()
