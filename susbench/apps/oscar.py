"""django-oscar 4.2 as an app: its own virtualenv from PyPI in the cache, a migrated template
database made once, and per start a copy of it seeded with the day's content, served by gunicorn.

The shop's Django project (settings, the forked checkout with its card payment step, the seeding
and digest commands) is data in `apps/oscar/site/`; the virtualenv is the app's, not the
project's, so oscar's Django pins never meet ours.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

from susbench.apps.base import Log
from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.pictures import picture
from susbench.apps.pyapp import VirtualenvApp


class OscarDriver(VirtualenvApp):
    """django-oscar in `~/.cache/susbench/apps/oscar/` (venv/, static/, template.sqlite3)."""

    content_kinds = ("product",)

    def stamped(self) -> dict[str, Path]:
        return super().stamped() | {"settings": self.site / "fernhill" / "settings.py"}

    def env(self, run_dir: Path) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(run_dir),  # gunicorn keeps a control socket under $HOME: one per start
            "PYTHONPATH": str(self.site),
            "DJANGO_SETTINGS_MODULE": "fernhill.settings",
            "SUSBENCH_RUN": str(run_dir),
            "SUSBENCH_CACHE": str(self.cache),
            "SUSBENCH_HOSTS": ",".join(self.spec.hosts),
        }

    def install(self, log: Log) -> None:
        """The virtualenv from PyPI (pinned), the static files, a migrated template database."""
        fix = f"check that PyPI is reachable, then run `susbench apps install {self.spec.name}` again"
        self.install_virtualenv(log, fix, "about 20 s")
        secret = self.cache / "secret-key"
        if not secret.is_file():
            secret.write_text(secrets.token_urlsafe(48))
            secret.chmod(0o600)
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir()
        log("collectstatic and migrate (about 20 s)")
        manage = [str(self.python), "-m", "django"]
        self.run([*manage, "collectstatic", "--noinput", "--clear", "-v0"], build, "collectstatic", fix)
        self.run([*manage, "migrate", "--noinput", "-v0"], build, "migrate", fix)
        os.replace(build / "db.sqlite3", self.cache / "template.sqlite3")
        shutil.rmtree(build, ignore_errors=True)
        self.mark_installed()

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        shutil.copyfile(self.cache / "template.sqlite3", run_dir / "db.sqlite3")
        pictures = run_dir / "pictures"
        pictures.mkdir()
        for product in content.products:
            (pictures / f"{product.slug}.png").write_bytes(picture(product.slug, product.shape))
        (run_dir / "content.json").write_text(content.model_dump_json(), encoding="utf-8")
        log(f"seeding {len(content.products)} products for {content.date} (seed {content.seed})")
        fix = f"run `susbench apps install {self.spec.name}` again (its cache may be damaged)"
        self.run(
            [str(self.python), "-m", "django", "seed_content", str(run_dir / "content.json"), str(pictures)],
            run_dir,
            "seeding",
            fix,
        )
        self.serve(run_dir, port, "fernhill.wsgi")

    def digest(self) -> ContentDigest:
        out = self.run(
            [str(self.python), "-m", "django", "content_digest"],
            self.started_in(),
            "reading its content",
            "see its log",
        )
        return ContentDigest.of(json.loads(out))
