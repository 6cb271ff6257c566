"""pretix as an app: its own virtualenv from PyPI in the cache, a migrated template database made
once, and per start a copy of it seeded with the day's trips, served by gunicorn behind WhiteNoise.

pretix's configuration, its WSGI wrapper and the seeding and digest scripts are data in
`apps/pretix/site/`; the virtualenv is the app's, so pretix's Django pins never meet ours. The
wheel from PyPI carries its compiled static files and translations, so no `pretix rebuild` is run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from susbench.apps.base import AppError, Log, die_with_parent
from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.oscar import tree_digest
from susbench.apps.spec import AppSpec, app_cache

START_TIMEOUT_S = 90.0
COMMAND_TIMEOUT_S = 1800.0


class PretixDriver:
    """pretix in `~/.cache/susbench/apps/pretix/` (venv/, template.sqlite3)."""

    content_kinds = ("trip",)

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

    def _wanted(self) -> dict[str, str]:
        return {
            "version": self.spec.version,
            "requirements": tree_digest(self.requirements),
            "config": tree_digest(self.site / "pretix.cfg"),
        }

    def installed(self) -> bool:
        try:
            return json.loads(self.stamp.read_text(encoding="utf-8")) == self._wanted()
        except (OSError, ValueError):
            return False

    def _configure(self, run_dir: Path) -> Path:
        """pretix.cfg for a start in `run_dir` (its database, data folder and public URL)."""
        config = run_dir / "pretix.cfg"
        text = (self.site / "pretix.cfg").read_text(encoding="utf-8")
        config.write_text(text.format(run_dir=run_dir, host=self.spec.hosts[0]), encoding="utf-8")
        return config

    def _env(self, run_dir: Path) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(run_dir),  # gunicorn keeps a control socket under $HOME: one per start
            "PYTHONPATH": str(self.site),
            "DJANGO_SETTINGS_MODULE": "pretix.settings",
            "PRETIX_CONFIG_FILE": str(run_dir / "pretix.cfg"),
        }

    def _run(self, args: list[str], run_dir: Path, what: str, fix: str) -> str:
        try:
            done = subprocess.run(
                args,
                env=self._env(run_dir),
                cwd=run_dir,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AppError(self.spec.name, f"{what} failed: {exc}", fix) from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise AppError(self.spec.name, f"{what} failed: {' / '.join(tail)}", fix)
        return done.stdout

    def install(self, log: Log) -> None:
        """The virtualenv from PyPI (pinned) and a migrated template database."""
        fix = f"check that PyPI is reachable, then run `susbench apps install {self.spec.name}` again"
        venv = self.cache / "venv"
        wanted = self._wanted()
        stamp = self.cache / "venv.stamp"
        if not (self.python.is_file() and stamp.is_file() and stamp.read_text() == wanted["requirements"]):
            shutil.rmtree(venv, ignore_errors=True)
            log(f"virtualenv {venv}")
            self._run([sys.executable, "-m", "venv", str(venv)], self.cache, "creating its virtualenv", fix)
            log(f"pip install -r {self.requirements} (about a minute; pretix's wheel is 40 MB)")
            self._run(
                [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                + ["-r", str(self.requirements)],
                self.cache,
                "pip install",
                fix,
            )
            stamp.write_text(wanted["requirements"])
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir()
        self._configure(build)
        log("migrate (about 100 s of CPU)")
        self._run([str(self.python), "-m", "pretix", "migrate", "--noinput", "-v0"], build, "migrate", fix)
        os.replace(build / "db.sqlite3", self.cache / "template.sqlite3")
        shutil.rmtree(build, ignore_errors=True)
        self.stamp.write_text(json.dumps(wanted), encoding="utf-8")

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        self._configure(run_dir)
        shutil.copyfile(self.cache / "template.sqlite3", run_dir / "db.sqlite3")
        (run_dir / "content.json").write_text(content.model_dump_json(), encoding="utf-8")
        log(f"seeding {len(content.trips)} trips for {content.date} (seed {content.seed})")
        fix = f"run `susbench apps install {self.spec.name}` again (its cache may be damaged)"
        self._run([str(self.python), str(self.site / "seed.py"), str(run_dir / "content.json")], run_dir, "seeding", fix)
        self._run_dir = run_dir
        gunicorn = self.cache / "venv" / "bin" / "gunicorn"
        with (run_dir / "gunicorn.log").open("wb") as output:
            self._process = subprocess.Popen(
                [str(gunicorn), "wsgi_static:application", "--bind", f"127.0.0.1:{port}"]
                + ["--workers", "1", "--threads", "8", "--worker-class", "gthread", "--timeout", "120"]
                + ["--forwarded-allow-ips", "127.0.0.1"],
                env=self._env(run_dir),
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
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)

    def digest(self) -> ContentDigest:
        if self._run_dir is None:
            raise AppError(self.spec.name, "not started", "start it first (susbench apps serve)")
        out = self._run([str(self.python), str(self.site / "digest.py")], self._run_dir, "reading its content", "see its log")
        return ContentDigest.of(json.loads(out))
