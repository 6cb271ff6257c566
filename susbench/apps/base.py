"""What every app's driver offers (`AppDriver`), and the error an app raises when it cannot go on.

(`susbench.web.app.WebApp` is the local web's request handler, hence the name `AppDriver`.)
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
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


def _live_members(group: int) -> list[int]:
    """The processes of a process group that still run (zombies left for init to reap are done)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


def stop_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """Stops a server's whole process group and returns once none of it runs, even when the leader
    itself is already gone: Apache's and gunicorn's workers outlive a leader killed by SIGKILL."""
    group = process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)
    deadline = time.monotonic() + grace_s
    while _live_members(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    process.wait(timeout=5)
    deadline = time.monotonic() + 5
    while _live_members(group) and time.monotonic() < deadline:
        time.sleep(0.05)


class AppError(SusbenchError):
    """An app cannot install, start or serve: which app, why, and what to run."""

    def __init__(self, app: str, why: str, fix: str) -> None:
        super().__init__(f"{app}: {why}; {fix}")
        self.app, self.why, self.fix = app, why, fix


def run_command(
    app: str,
    args: list[str],
    what: str,
    fix: str,
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """One of an app's set-up commands; its stdout, or `AppError` naming the app, what failed and the
    last lines the command wrote (a failed install or migration is read there first)."""
    try:
        done = subprocess.run(
            args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AppError(app, f"{what} failed: {exc}", fix) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise AppError(app, f"{what} failed: {' / '.join(tail)}", fix)
    return done.stdout


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
