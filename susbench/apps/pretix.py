"""pretix as an app: its own virtualenv from PyPI in the cache, a migrated template database made
once, and per start a copy of it seeded with the day's trips, served by gunicorn behind WhiteNoise.

pretix's configuration, its WSGI wrapper and the seeding and digest scripts are data in
`apps/pretix/site/`. The wheel from PyPI carries its compiled static files and translations, so no
`pretix rebuild` is run; its migrations take about 100 s of CPU, once, into the template.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from susbench.apps.base import Log
from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.pyapp import VirtualenvApp


class PretixDriver(VirtualenvApp):
    """pretix in `~/.cache/susbench/apps/pretix/` (venv/, template.sqlite3)."""

    content_kinds = ("trip",)
    command_timeout_s = 1800.0  # migrate on a loaded machine

    def stamped(self) -> dict[str, Path]:
        return super().stamped() | {"config": self.site / "pretix.cfg"}

    def _configure(self, run_dir: Path) -> None:
        """pretix.cfg for a start in `run_dir` (its database, data folder and public URL)."""
        text = (self.site / "pretix.cfg").read_text(encoding="utf-8")
        (run_dir / "pretix.cfg").write_text(
            text.format(run_dir=run_dir, host=self.spec.hosts[0]), encoding="utf-8"
        )

    def env(self, run_dir: Path) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(run_dir),  # gunicorn keeps a control socket under $HOME: one per start
            "PYTHONPATH": str(self.site),
            "DJANGO_SETTINGS_MODULE": "pretix.settings",
            "PRETIX_CONFIG_FILE": str(run_dir / "pretix.cfg"),
        }

    def install(self, log: Log) -> None:
        """The virtualenv from PyPI (pinned) and a migrated template database."""
        fix = f"check that PyPI is reachable, then run `susbench apps install {self.spec.name}` again"
        self.install_virtualenv(log, fix, "1 to 4 min, mostly download")
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir()
        self._configure(build)
        log("migrate (about 100 s of CPU)")
        self.run([str(self.python), "-m", "pretix", "migrate", "--noinput", "-v0"], build, "migrate", fix)
        os.replace(build / "db.sqlite3", self.cache / "template.sqlite3")
        shutil.rmtree(build, ignore_errors=True)
        self.mark_installed()

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        self._configure(run_dir)
        shutil.copyfile(self.cache / "template.sqlite3", run_dir / "db.sqlite3")
        (run_dir / "content.json").write_text(content.model_dump_json(), encoding="utf-8")
        log(f"seeding {len(content.trips)} trips for {content.date} (seed {content.seed})")
        fix = f"run `susbench apps install {self.spec.name}` again (its cache may be damaged)"
        seed = [str(self.python), str(self.site / "seed.py"), str(run_dir / "content.json")]
        self.run(seed, run_dir, "seeding", fix)
        self.serve(run_dir, port, "wsgi_static:application")

    def digest(self) -> ContentDigest:
        digest = [str(self.python), str(self.site / "digest.py")]
        return ContentDigest.of(
            json.loads(self.run(digest, self.started_in(), "reading its content", "see its log"))
        )
