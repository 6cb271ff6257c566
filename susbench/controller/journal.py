"""The run's journal entry: its identity plus what is needed to reproduce it (versions, commit, host)."""

from __future__ import annotations

import platform
import socket
import subprocess
from datetime import UTC, datetime
from importlib import metadata

from susbench import __version__
from susbench.browser import chromium_version, find_chromium
from susbench.controller.options import BrowserFacts, SnapshotFacts
from susbench.core.errors import SusbenchError
from susbench.core.identity import RunIdentity
from susbench.core.paths import REPO_ROOT
from susbench.records.run import RunRecord, RunSettings

RECORDED_PACKAGES = ("playwright", "mitmproxy", "duckdb", "pydantic", "warcio")


def git_hash() -> str | None:
    """The checkout's commit, read-only; None outside a git checkout (an installed wheel's folder may
    lie inside some other repository, whose commit is not ours)."""
    if not (REPO_ROOT / ".git").exists():
        return None
    try:
        result = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def tool_versions() -> dict[str, str]:
    versions = {"susbench": __version__, "python": platform.python_version()}
    for package in RECORDED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def browser_version(browser: BrowserFacts | None) -> str:
    """The episodes' Chromium: the browser image's label, else this machine's binary as it reports itself."""
    if browser is not None and browser.kind == "container":
        return browser.chromium or "unknown (the image names none)"
    try:
        return chromium_version(find_chromium())
    except SusbenchError as exc:
        return f"unknown ({exc})"


def run_record(
    identity: RunIdentity,
    snapshot: SnapshotFacts | None,
    browser: BrowserFacts | None = None,
    settings: RunSettings | None = None,
) -> RunRecord:
    """The journal entry; its `config` is the identity (flat JSON) plus the snapshot's path and the
    browser image's id."""
    return RunRecord(
        run_id=identity.run_id(),
        settings=settings,
        config={
            **identity.model_dump(mode="json"),
            "snapshot": None if snapshot is None else str(snapshot.path),
            "image_id": None if browser is None else browser.image_id,
        },
        versions={**tool_versions(), "chromium": browser_version(browser)},
        git_hash=git_hash(),
        snapshot_id=None if snapshot is None else snapshot.id,
        snapshot_sha256=None if snapshot is None else snapshot.sha256,
        seed=identity.seed,
        host=socket.gethostname(),
        started_at=datetime.now(UTC),
    )
