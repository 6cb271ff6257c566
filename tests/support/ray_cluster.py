"""Real Ray for the distributed tests: the `susbench run` command with its processes marked, and a
cluster of two nodes on this machine started with `ray start` (separate ports, resources and
SusBench caches), stopped by process id and checked to leave nothing behind.

Every Ray process here runs with token authentication and a token made for the test, so no test
reads or writes the user's own `~/.ray` token.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from susbench.core.paths import REPO_ROOT
from tests.support.processes import Watch, marked_env

RAY = Path(sys.executable).with_name("ray")


@dataclass(frozen=True)
class RaySandbox:
    """An environment for Ray commands: a process mark (and a watch on what carries it or descends
    from it), an auth token, short temporary folders."""

    root: Path
    mark: str
    token_path: Path
    watch: Watch

    def env(self, **extra: str) -> dict[str, str]:
        return marked_env(
            self.mark,
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN_PATH=str(self.token_path),
            RAY_USAGE_STATS_ENABLED="0",
            PYTHONUNBUFFERED="1",
            TMPDIR=str(self.root / "tmp"),
            **extra,
        )

    def susbench(self, *args: str, home: str = "driver") -> subprocess.Popen[str]:
        """`susbench ARGS` with this sandbox's environment and its own SusBench cache; output merged."""
        return subprocess.Popen(
            [sys.executable, "-m", "susbench", *args],
            cwd=REPO_ROOT,
            env=self.env(SUSBENCH_HOME=str(self.root / home)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )


def require_ray() -> None:
    """Ray is an optional extra of the package, and `make setup` installs it for the tests."""
    if importlib.util.find_spec("ray") is None:
        pytest.fail("Ray is not installed: run `make setup` (it installs the [ray] extra)")


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A free loopback port never handed out before in this process: the system may give back a port
    just closed, and a Ray node refuses two of its components on one port (final4: metrics_export)."""
    while True:
        with closing(socket.socket()) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def start_node(sandbox: RaySandbox, name: str, browsers: int, head_port: int | None = None) -> str:
    """`ray start` one node with `browsers` browsers and its own SusBench cache; the head's address."""
    ports = ["--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--metrics-export-port"]
    ports += ["--runtime-env-agent-port"]
    command = [str(RAY), "start", "--num-cpus=1", f"--resources={json.dumps({'browser': browsers})}"]
    command += ["--object-store-memory=100000000", "--min-worker-port=0", "--max-worker-port=0"]
    command += [f"{flag}={free_port()}" for flag in ports]
    if head_port is None:
        head_port = free_port()
        command += ["--head", f"--port={head_port}", "--include-dashboard=false"]
    else:
        command += [f"--address=127.0.0.1:{head_port}"]
    env = sandbox.env(SUSBENCH_HOME=str(sandbox.root / name))
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, f"ray start ({name}) failed:\n{result.stdout}\n{result.stderr}"
    return f"127.0.0.1:{head_port}"
