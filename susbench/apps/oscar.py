"""django-oscar 4.2 as an app: its own virtualenv from PyPI in the cache, a migrated template
database made once, and per start a copy of it seeded with the day's content, served by gunicorn.

The shop's Django project (settings, the forked checkout with its card payment step, the seeding
and digest commands) is data in `apps/oscar/site/`; the virtualenv is the app's, not the
project's, so oscar's Django pins never meet ours.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from susbench.apps.base import AppError, Log, die_with_parent, stop_group
from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.pictures import picture
from susbench.apps.spec import AppSpec, app_cache

START_TIMEOUT_S = 60.0
COMMAND_TIMEOUT_S = 600.0


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


class OscarDriver:
    """django-oscar in `~/.cache/susbench/apps/oscar/` (venv/, static/, template.sqlite3)."""

    content_kinds = ("product",)

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
            "settings": tree_digest(self.site / "fernhill" / "settings.py"),
        }

    def installed(self) -> bool:
        try:
            return json.loads(self.stamp.read_text(encoding="utf-8")) == self._wanted()
        except (OSError, ValueError):
            return False

    def _env(self, run_dir: Path) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(run_dir),  # gunicorn keeps a control socket under $HOME: one per start
            "PYTHONPATH": str(self.site),
            "DJANGO_SETTINGS_MODULE": "fernhill.settings",
            "SUSBENCH_RUN": str(run_dir),
            "SUSBENCH_CACHE": str(self.cache),
            "SUSBENCH_HOSTS": ",".join(self.spec.hosts),
        }

    def _run(self, args: list[str], run_dir: Path, what: str, fix: str) -> str:
        try:
            done = subprocess.run(
                args,
                env=self._env(run_dir),
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
        """The virtualenv from PyPI (pinned), the static files, a migrated template database."""
        fix = f"check that PyPI is reachable, then run `susbench apps install {self.spec.name}` again"
        venv = self.cache / "venv"
        wanted = self._wanted()
        stamp = self.cache / "venv.stamp"
        if not (self.python.is_file() and stamp.is_file() and stamp.read_text() == wanted["requirements"]):
            shutil.rmtree(venv, ignore_errors=True)
            log(f"virtualenv {venv}")
            self._run([sys.executable, "-m", "venv", str(venv)], self.cache, "creating its virtualenv", fix)
            log(f"pip install -r {self.requirements} (about 20 s)")
            self._run(
                [
                    str(self.python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                    str(self.requirements),
                ],
                self.cache,
                "pip install",
                fix,
            )
            stamp.write_text(wanted["requirements"])
        secret = self.cache / "secret-key"
        if not secret.is_file():
            secret.write_text(secrets.token_urlsafe(48))
            secret.chmod(0o600)
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir()
        log("collectstatic and migrate (about 20 s)")
        manage = [str(self.python), "-m", "django"]
        self._run([*manage, "collectstatic", "--noinput", "--clear", "-v0"], build, "collectstatic", fix)
        self._run([*manage, "migrate", "--noinput", "-v0"], build, "migrate", fix)
        os.replace(build / "db.sqlite3", self.cache / "template.sqlite3")
        shutil.rmtree(build, ignore_errors=True)
        self.stamp.write_text(json.dumps(wanted), encoding="utf-8")

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        shutil.copyfile(self.cache / "template.sqlite3", run_dir / "db.sqlite3")
        pictures = run_dir / "pictures"
        pictures.mkdir()
        for product in content.products:
            (pictures / f"{product.slug}.png").write_bytes(picture(product.slug, product.shape))
        (run_dir / "content.json").write_text(content.model_dump_json(), encoding="utf-8")
        log(f"seeding {len(content.products)} products for {content.date} (seed {content.seed})")
        fix = f"run `susbench apps install {self.spec.name}` again (its cache may be damaged)"
        self._run(
            [str(self.python), "-m", "django", "seed_content", str(run_dir / "content.json"), str(pictures)],
            run_dir,
            "seeding",
            fix,
        )
        self._run_dir = run_dir
        gunicorn = self.cache / "venv" / "bin" / "gunicorn"
        with (run_dir / "gunicorn.log").open("wb") as output:
            self._process = subprocess.Popen(
                [
                    str(gunicorn),
                    "fernhill.wsgi",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--workers",
                    "1",
                    "--threads",
                    "8",
                    "--worker-class",
                    "gthread",
                    "--timeout",
                    "120",
                    "--forwarded-allow-ips",
                    "127.0.0.1",
                ],
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
                f"http://127.0.0.1:{port}/", headers={"Host": self.spec.hosts[0]}
            )
            try:
                with urllib.request.urlopen(request, timeout=5):
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

    def digest(self) -> ContentDigest:
        if self._run_dir is None:
            raise AppError(self.spec.name, "not started", "start it first (susbench apps serve)")
        out = self._run(
            [str(self.python), "-m", "django", "content_digest"],
            self._run_dir,
            "reading its content",
            "see its log",
        )
        return ContentDigest.of(json.loads(out))
