"""What every app's driver offers (`AppDriver`), and the error an app raises when it cannot go on.

(`susbench.web.app.WebApp` is the local web's request handler, hence the name `AppDriver`.)
"""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.spec import AppSpec
from susbench.core.errors import SusbenchError

Log = Callable[[str], None]


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """`preexec_fn` of an app's server process: Linux sends it SIGTERM when the process that started
    it dies, even by SIGKILL, so a killed `apps serve` or recording leaves no server behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class AppError(SusbenchError):
    """An app cannot install, start or serve: which app, why, and what to run."""

    def __init__(self, app: str, why: str, fix: str) -> None:
        super().__init__(f"{app}: {why}; {fix}")
        self.app, self.why, self.fix = app, why, fix


class AppDriver(Protocol):
    """One real web application: installed once into its cache, started fresh and seeded each time.

    `start` serves plain HTTP on 127.0.0.1:`port` from `run_dir` (a new, empty folder), seeded with
    `content`, and returns once the app answers; the front adds TLS and passes the Host header and
    `X-Forwarded-Proto: https`, so the app must build its URLs as https://<host>/. `digest` reads the
    content back from the running app's own database (`SiteContent.canonical` strings).
    """

    spec: AppSpec
    content_kinds: tuple[str, ...]  # which items of `SiteContent.canonical` it holds: product, article, plan

    def installed(self) -> bool: ...

    def install(self, log: Log) -> None: ...

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None: ...

    def stop(self) -> None: ...

    def digest(self) -> ContentDigest: ...
