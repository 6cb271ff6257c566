"""What the Python apps (django-oscar, pretix) share: their own virtualenv from PyPI in the cache, a
stamp saying what it was made from, the app's commands run with its environment, and gunicorn on
loopback, waited for and stopped with its whole process group.

The virtualenv is the app's, not the project's, so the app's Django pins never meet ours.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from susbench.apps.base import AppError, Log, die_with_parent, run_command, stop_group
from susbench.apps.spec import AppSpec, app_cache

START_TIMEOUT_S = 90.0


def tree_digest(*paths: Path) -> str:
    """A digest of files' names and bytes (what a stamp is made from)."""
    digest = hashlib.sha256()
    for root in paths:
        files = (
            sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
            if root.is_dir()
            else [root]
        )
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class VirtualenvApp:
    """A Python web app in `~/.cache/susbench/apps/<app>/venv`, served by gunicorn. A driver says
    what its stamp is made from (`stamped`), its processes' environment (`env`), and how long its
    slowest command may take (`command_timeout_s`)."""

    command_timeout_s = 600.0

    def __init__(self, spec: AppSpec) -> None:
        self.spec = spec
        self.cache = app_cache(spec.name)
        self.site = spec.folder / "site"
        self.requirements = spec.folder / "requirements.txt"
        self._process: subprocess.Popen[bytes] | None = None
        self._run_dir: Path | None = None

    @property
    def python(self) -> Path:
        return self.cache / "venv" / "bin" / "python"

    @property
    def stamp(self) -> Path:
        return self.cache / "installed.json"

    def stamped(self) -> dict[str, Path]:
        """The files whose bytes an install is made from, by name (the requirements at least)."""
        return {"requirements": self.requirements}

    def env(self, run_dir: Path) -> dict[str, str]:
        raise NotImplementedError

    def _wanted(self) -> dict[str, str]:
        return {"version": self.spec.version} | {
            name: tree_digest(path) for name, path in self.stamped().items()
        }

    def installed(self) -> bool:
        try:
            return json.loads(self.stamp.read_text(encoding="utf-8")) == self._wanted()
        except (OSError, ValueError):
            return False

    def mark_installed(self) -> None:
        self.stamp.write_text(json.dumps(self._wanted()), encoding="utf-8")

    def run(self, args: list[str], run_dir: Path, what: str, fix: str) -> str:
        """One of the app's commands in `run_dir` with its environment."""
        return run_command(
            self.spec.name,
            args,
            what,
            fix,
            timeout_s=self.command_timeout_s,
            cwd=run_dir,
            env=self.env(run_dir),
        )

    def install_virtualenv(self, log: Log, fix: str, how_long: str) -> None:
        """The virtualenv with the pinned requirements, unless one made from the same pins is there."""
        venv = self.cache / "venv"
        pins = tree_digest(self.requirements)
        stamp = self.cache / "venv.stamp"
        if self.python.is_file() and stamp.is_file() and stamp.read_text() == pins:
            return
        shutil.rmtree(venv, ignore_errors=True)
        log(f"virtualenv {venv}")
        self.run([sys.executable, "-m", "venv", str(venv)], self.cache, "creating its virtualenv", fix)
        log(f"pip install -r {self.requirements} ({how_long})")
        pip = [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        self.run([*pip, "-r", str(self.requirements)], self.cache, "pip install", fix)
        stamp.write_text(pins)

    def serve(self, run_dir: Path, port: int, wsgi: str) -> None:
        """gunicorn serving `wsgi` on 127.0.0.1:`port` from `run_dir`, until it answers."""
        self._run_dir = run_dir
        gunicorn = self.cache / "venv" / "bin" / "gunicorn"
        options = ["--workers", "1", "--threads", "8", "--worker-class", "gthread", "--timeout", "120"]
        options += ["--forwarded-allow-ips", "127.0.0.1"]
        with (run_dir / "gunicorn.log").open("wb") as output:
            self._process = subprocess.Popen(
                [str(gunicorn), wsgi, "--bind", f"127.0.0.1:{port}", *options],
                env=self.env(run_dir),
                cwd=run_dir,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        self._wait(port, run_dir)

    def _wait(self, port: int, run_dir: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                tail = (run_dir / "gunicorn.log").read_text(errors="replace").strip().splitlines()[-3:]
                raise AppError(
                    self.spec.name, f"gunicorn exited: {' / '.join(tail)}", f"see {run_dir}/gunicorn.log"
                )
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{self.spec.start_path}",
                headers={"Host": self.spec.hosts[0], "X-Forwarded-Proto": "https"},
            )
            try:
                with urllib.request.urlopen(request, timeout=30):
                    return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise AppError(
            self.spec.name,
            f"no answer on 127.0.0.1:{port} in {START_TIMEOUT_S:.0f} s",
            f"see {run_dir}/gunicorn.log",
        )

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_group(process, grace_s=10)

    def started_in(self) -> Path:
        """The running start's folder (for reading its content back)."""
        if self._run_dir is None:
            raise AppError(self.spec.name, "not started", "start it first (susbench apps serve)")
        return self._run_dir
