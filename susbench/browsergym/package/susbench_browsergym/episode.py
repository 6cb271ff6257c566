"""One SusBench episode seen from BrowserGym's side: `susbench run` in the project's own install,
and the socket its operator answers on.

The run launches Chromium with the extension and the replay, opens the start page and connects
here (`susbench.browsergym.operator`); from then on each request is one JSON line and gets one back.
When the env ends the episode the controller scores it and stores it in DuckDB; the run then exits.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from susbench_browsergym.host import host_python

CHANNEL_VARIABLE = "SUSBENCH_BROWSERGYM_CHANNEL"
READY_TIMEOUT_S = 180.0
END_TIMEOUT_S = 120.0
REPLY_TIMEOUT_S = 60.0


class EpisodeError(RuntimeError):
    """The episode could not be started or ended; the message says why and where its log is."""


@dataclass
class EpisodeSpec:
    """What `susbench run` is asked for one BrowserGym episode."""

    task_id: str
    task_set: str
    agent: str
    db: Path
    seed: int
    snapshot: Path | None = None
    live: bool = False
    headless: bool = True
    episode_timeout_s: float | None = None


@dataclass
class Episode:
    """A running episode: its run process, its socket, and what the operator said when ready."""

    spec: EpisodeSpec
    process: subprocess.Popen[bytes]
    folder: Path
    connection: socket.socket
    ready: dict[str, Any] = field(default_factory=dict)
    buffer: bytes = b""

    @classmethod
    def start(cls, spec: EpisodeSpec) -> Episode:
        folder = Path(tempfile.mkdtemp(prefix="susbench-browsergym-"))  # mode 0700: ours alone
        path = folder / "channel.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(1)
        config = folder / "operator.json"
        config.write_text(
            json.dumps({"browsergym": version("browsergym-core"), "playwright": version("playwright")}),
            encoding="utf-8",
        )
        command = [
            str(host_python()),
            "-m",
            "susbench",
            "run",
            "--tasks",
            spec.task_id,
            "--task-set",
            spec.task_set,
            "--operator",
            f"browsergym:{spec.agent}",
            "--operator-config",
            str(config),
            "--db",
            str(spec.db),
            "--seed",
            str(spec.seed),
            *(["--live"] if spec.live else []),
            *(["--snapshot", str(spec.snapshot)] if spec.snapshot else []),
            *([] if spec.headless else ["--headed"]),
            *(["--episode-timeout", str(spec.episode_timeout_s)] if spec.episode_timeout_s else []),
        ]
        log = open(folder / "run.log", "wb")  # noqa: SIM115 - kept open for the run's lifetime
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, CHANNEL_VARIABLE: str(path)},
            start_new_session=True,
        )
        log.close()
        try:
            connection = _accept(listener, process, folder)
        finally:
            listener.close()
        episode = cls(spec=spec, process=process, folder=folder, connection=connection)
        episode.ready = episode._receive(READY_TIMEOUT_S)
        return episode

    @property
    def episode_id(self) -> str:
        return str(self.ready["episode_id"])

    def ask(self, op: str, **request: Any) -> dict[str, Any]:
        """One request to the controller's side, and its answer."""
        self.connection.sendall(json.dumps({"op": op, **request}).encode() + b"\n")
        return self._receive(REPLY_TIMEOUT_S)

    def end(self, done: bool, message: str) -> int:
        """End the episode; the run scores and stores it, then exits (its exit status)."""
        try:
            self.ask("end", done=done, message=message)
        except (EpisodeError, OSError):
            pass  # the controller ended it first (its time limit): the stored episode says so
        finally:
            self.connection.close()
        try:
            status = self.process.wait(END_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise EpisodeError(
                f"susbench run did not store the episode in {END_TIMEOUT_S:g} s; {self._log()}"
            ) from None
        if status != 0:
            raise EpisodeError(f"susbench run failed (exit status {status}); {self._log()}")
        return status

    def abandon(self) -> None:
        """Stop the run without an end (the env is going away mid-episode)."""
        self.connection.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(END_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or (
                self.process.poll() is not None and not select.select([self.connection], [], [], 0)[0]
            ):
                raise EpisodeError(f"no answer from the episode's controller; {self._log()}")
            if select.select([self.connection], [], [], min(left, 0.5))[0]:
                chunk = self.connection.recv(1 << 16)
                if not chunk:
                    raise EpisodeError(f"the episode's controller went away; {self._log()}")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def _log(self) -> str:
        return _log_tail(self.folder)


def _accept(listener: socket.socket, process: subprocess.Popen[bytes], folder: Path) -> socket.socket:
    """The operator's connection, once the run has launched the episode; its failure, if it fails."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if select.select([listener], [], [], 0.5)[0]:
            connection, _ = listener.accept()
            return connection
        if process.poll() is not None:
            raise EpisodeError(f"susbench run ended before the episode started; {_log_tail(folder)}")
    process.kill()
    raise EpisodeError(f"the episode did not start in {READY_TIMEOUT_S:g} s; {_log_tail(folder)}")


def _log_tail(folder: Path) -> str:
    log = folder / "run.log"
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() if log.is_file() else []
    return f"its log ({log}) ends: {' / '.join(lines[-4:]) or '(empty)'}"
