"""Open the replayer for a mode: the one place that knows both front ends."""

from __future__ import annotations

from pathlib import Path

from susbench.core.models import ReplayMode
from susbench.replayer.direct import DirectReplayServer
from susbench.replayer.service import ReplayService


def replay_server(
    path: Path, mode: ReplayMode = "proxy", port: int = 0, host: str = "127.0.0.1"
) -> ReplayService:
    """The proxy (any browser, a person's or an agent's own) or direct (a Chromium we launch, fastest)."""
    if mode == "direct":
        return DirectReplayServer(path, port=port, host=host)
    # Imported here: the proxy front end is mitmproxy's, half of a direct-mode worker's imports otherwise.
    from susbench.replayer.proxy import ReplayServer

    return ReplayServer(path, port=port, host=host)
