"""The distributed tests' fixture: a Ray sandbox (tests/support/ray_cluster.py) whose processes are all
gone afterwards."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Watch, new_mark
from tests.support.ray_cluster import RaySandbox, require_ray


@pytest.fixture
def ray_sandbox() -> Iterator[RaySandbox]:
    """A sandbox whose processes are all gone afterwards (stopped by id if they are still running)."""
    require_ray()
    # Ray's Unix sockets live under TMPDIR: keep the path short (a socket path has at most 107 bytes).
    root = Path(tempfile.mkdtemp(prefix="sbray-", dir="/tmp"))
    (root / "tmp").mkdir()
    token_path = root / "token"
    token_path.write_text(secrets.token_hex(32))
    mark = new_mark()
    sandbox = RaySandbox(root=root, mark=mark, token_path=token_path, watch=Watch(mark))
    try:
        yield sandbox
    finally:
        survivors = sandbox.watch.stop_all()
        sandbox.watch.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert not survivors, f"processes survived SIGKILL: {survivors}"
