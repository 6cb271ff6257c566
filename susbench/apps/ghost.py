"""Ghost 5 as an app: unpacked from npm into the cache, its MariaDB template made once, and per start
a copy of that database served by Ghost's own server and seeded through its Admin API.

Why it is installed the way it is (each learned on this machine, Node 20 and npm 11):
- `npm install ghost` cannot resolve Ghost's tree, so the package is unpacked with `npm pack` and
  its production dependencies installed with yarn 1 (a pinned copy in the cache), after dropping
  the development dependencies (one points at GitHub);
- install scripts are skipped: the SQLite driver and re2 would compile from source for minutes
  (their prebuilt binaries are on GitHub, out of reach). MariaDB from Debian replaces SQLite, and
  re2 is only loaded by the link-preview scraper, which nothing here uses; sharp's binary is an npm
  package of its own;
- ghost-cli wants Node 22, so Ghost's `index.js` runs with a config file of ours;
- Casper's jQuery and Ghost's Portal and search scripts come from CDNs on the live web: npm copies
  are served from the theme instead (`apps/ghost/packages.yaml`);
- a member's sign-up mails a link: a sendmail stand-in keeps each mail as a file in the run folder.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

import yaml

from susbench.apps.base import AppError, Log, die_with_parent, run_command, stop_group
from susbench.apps.content import Article, ContentDigest, SiteContent
from susbench.apps.ghost_admin import GhostAdmin
from susbench.apps.pictures import picture
from susbench.apps.serve import free_port
from susbench.apps.spec import AppSpec, app_cache
from susbench.core.loading import SAFE_LOADER

START_TIMEOUT_S = 180.0
COMMAND_TIMEOUT_S = 1200.0
NODE_MINIMUM = (20, 11)
THEME = "quill"


def _tree_digest(*paths: Path) -> str:
    """A digest of files' names and bytes (what a stamp is made from)."""
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _cents(amount: float) -> int:
    return round(amount * 100)


def _article_html(article: Article) -> str:
    return "".join(f"<p>{escape(paragraph)}</p>" for paragraph in article.paragraphs)


class _Process:
    """A server this driver started: its own process group, stopped by pid."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], log_file: Path) -> None:
        self.log_file = log_file
        with log_file.open("ab") as output:
            self.popen = subprocess.Popen(
                args,
                cwd=cwd,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )

    def exited(self) -> bool:
        return self.popen.poll() is not None

    def tail(self) -> str:
        lines = self.log_file.read_text(errors="replace").strip().splitlines()[-3:]
        return " / ".join(re.sub(r"\x1b\[[0-9;]*m", "", line) for line in lines)

    def stop(self) -> None:
        stop_group(self.popen, grace_s=30)


class GhostDriver:
    """Ghost in `~/.cache/susbench/apps/ghost/`: ghost/ (the package and its node_modules), theme/
    (Casper made "quill"), template-db/ (a migrated MariaDB datadir with the site's owner)."""

    content_kinds = ("article", "plan")

    def __init__(self, spec: AppSpec) -> None:
        self.spec = spec
        self.cache = app_cache(spec.name)
        self.site: dict[str, Any] = yaml.load(
            (spec.folder / "site.yaml").read_text(encoding="utf-8"), Loader=SAFE_LOADER
        )
        self.packages: dict[str, Any] = yaml.load(
            (spec.folder / "packages.yaml").read_text(encoding="utf-8"), Loader=SAFE_LOADER
        )
        self._servers: list[_Process] = []
        self._admin: GhostAdmin | None = None
        self._content: SiteContent | None = None

    # -- install ---------------------------------------------------------------------------

    @property
    def stamp(self) -> Path:
        return self.cache / "installed.json"

    def _wanted(self) -> dict[str, str]:
        folder = self.spec.folder
        return {
            "version": self.spec.version,
            "packages": _tree_digest(folder / "packages.yaml"),
            "theme": _tree_digest(folder / "theme", folder / "theme-patches.yaml"),
        }

    def installed(self) -> bool:
        try:
            return json.loads(self.stamp.read_text(encoding="utf-8")) == self._wanted()
        except (OSError, ValueError):
            return False

    def _run(self, args: list[str], cwd: Path, what: str, fix: str, env: dict[str, str] | None = None) -> str:
        return run_command(
            self.spec.name,
            args,
            what,
            fix,
            timeout_s=COMMAND_TIMEOUT_S,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )

    def _check_needs(self) -> None:
        apt = "apt-get install -y mariadb-server (Debian), and Node 20.11+ with npm"
        for command in self.spec.needs:
            if shutil.which(command) is None:
                raise AppError(self.spec.name, f"{command} not found", f"install it: {apt}")
        version = self._run(["node", "--version"], self.cache, "node --version", apt).strip().lstrip("v")
        major, minor = (int(part) for part in version.split(".")[:2])
        if (major, minor) < NODE_MINIMUM or major >= 23:
            raise AppError(
                self.spec.name, f"Node {version} found; Ghost {self.spec.version} wants Node 20.11+", apt
            )

    def _npm_pack(self, package: str, version: str, into: Path, fix: str) -> Path:
        """The package's tarball unpacked into `into`/package."""
        downloads = self.cache / "downloads"
        downloads.mkdir(exist_ok=True)
        name = (
            self._run(
                ["npm", "pack", "--silent", f"{package}@{version}", "--pack-destination", str(downloads)],
                downloads,
                f"npm pack {package}@{version}",
                fix,
            )
            .strip()
            .splitlines()[-1]
        )
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        with tarfile.open(downloads / name) as archive:
            archive.extractall(into, filter="data")
        return into / "package"

    def install(self, log: Log) -> None:
        """Ghost and its dependencies from npm (pinned), the theme, a migrated template database."""
        self._check_needs()
        fix = f"check that npm's registry answers, then run `susbench apps install {self.spec.name}` again"
        ghost = self.cache / "ghost"
        if (ghost / ".version").is_file() and (ghost / ".version").read_text() == self.spec.version:
            log(f"Ghost {self.spec.version} already unpacked in {ghost}")
        else:
            self._install_ghost(ghost, log, fix)
        wanted = self._wanted()
        theme_stamp = self.cache / "theme.stamp"
        if not (theme_stamp.is_file() and theme_stamp.read_text() == wanted["theme"] + wanted["packages"]):
            self._install_theme(log, fix)
            theme_stamp.write_text(wanted["theme"] + wanted["packages"])
        template_stamp = self.cache / "template-db.stamp"
        if not (template_stamp.is_file() and template_stamp.read_text() == self.spec.version):
            self._make_template_db(log)
            template_stamp.write_text(self.spec.version)
        self.stamp.write_text(json.dumps(self._wanted()), encoding="utf-8")

    def _install_ghost(self, ghost: Path, log: Log, fix: str) -> None:
        tools = self.cache / "tools"
        yarn_version = self.packages["yarn"]
        log(f"yarn {yarn_version} from npm into {tools}")
        self._run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(tools), f"yarn@{yarn_version}"],
            self.cache,
            "npm install yarn",
            fix,
        )
        log(f"npm pack ghost@{self.spec.version}")
        build = self._npm_pack("ghost", self.spec.version, self.cache / "ghost-build", fix)
        manifest = json.loads((build / "package.json").read_text(encoding="utf-8"))
        manifest.pop("devDependencies", None)
        manifest.get("optionalDependencies", {}).pop("sqlite3", None)
        (build / "package.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        log("yarn install --production (about 2 minutes; no compiling)")
        self._run(
            [
                str(tools / "node_modules" / ".bin" / "yarn"),
                "install",
                "--production",
                "--pure-lockfile",
                "--ignore-scripts",
                "--non-interactive",
                "--no-progress",
                "--cache-folder",
                str(self.cache / "yarn-cache"),
            ],
            build,
            "yarn install",
            fix,
        )
        (build / ".version").write_text(self.spec.version)
        shutil.rmtree(ghost, ignore_errors=True)
        build.rename(ghost)
        shutil.rmtree(self.cache / "ghost-build", ignore_errors=True)

    def _install_theme(self, log: Log, fix: str) -> None:
        """Casper from the package, patched (`theme-patches.yaml`), with our templates and the
        npm copies of the scripts it would load from CDNs."""
        build = self.cache / "theme-build"
        shutil.rmtree(build, ignore_errors=True)
        shutil.copytree(self.cache / "ghost" / "content" / "themes" / "casper", build)
        patches_file = self.spec.folder / "theme-patches.yaml"
        for patch in yaml.load(patches_file.read_text(encoding="utf-8"), Loader=SAFE_LOADER):
            target = build / patch["file"]
            text = target.read_text(encoding="utf-8")
            if text.count(patch["find"]) != 1:
                raise AppError(
                    self.spec.name,
                    f"{patches_file}: the text to replace in {patch['file']} occurs "
                    f"{text.count(patch['find'])} times in Casper {self.spec.version} (expected once)",
                    "update the patch for this version of Casper",
                )
            target.write_text(text.replace(patch["find"], patch["replace"]), encoding="utf-8")
        shutil.copytree(self.spec.folder / "theme", build, dirs_exist_ok=True)
        vendor = build / "assets" / "vendor"
        vendor.mkdir(parents=True, exist_ok=True)
        for item in self.packages["frontend"]:
            log(f"npm pack {item['package']}@{item['version']}")
            unpacked = self._npm_pack(item["package"], item["version"], self.cache / "frontend-build", fix)
            for source, target in item["files"].items():
                shutil.copyfile(unpacked / source, vendor / target)
        shutil.rmtree(self.cache / "frontend-build", ignore_errors=True)
        shutil.rmtree(self.cache / "theme", ignore_errors=True)
        build.rename(self.cache / "theme")

    def _make_template_db(self, log: Log) -> None:
        """A MariaDB datadir holding Ghost's migrated schema, fixtures and the site's owner."""
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir()
        log("mariadb-install-db")
        self._run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={build / 'db'}",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                f"--user={getpass.getuser()}",
            ],
            build,
            "mariadb-install-db",
            "see the message above",
        )
        owner = self._owner()
        log("Ghost's first start: migrations and fixtures (about 30-60 s)")
        with self._servers_in(build, free_port(), log) as admin:
            admin.set_up(owner["name"], owner["email"], owner["password"], self.site["title"])
        shutil.rmtree(self.cache / "template-db", ignore_errors=True)
        (build / "db").rename(self.cache / "template-db")
        shutil.rmtree(build, ignore_errors=True)

    def _owner(self) -> dict[str, str]:
        """The site owner's login, made once per machine; the password stays in the cache (0600)."""
        path = self.cache / "owner.json"
        if not path.is_file():
            owner = {**self.site["owner"], "password": secrets.token_urlsafe(24)}
            path.write_text(json.dumps(owner), encoding="utf-8")
            path.chmod(0o600)
        return dict(json.loads(path.read_text(encoding="utf-8")))

    # -- servers ---------------------------------------------------------------------------

    def _config(self, run_dir: Path, port: int) -> dict[str, Any]:
        host = self.spec.hosts[0]
        vendor = f"https://{host}/assets/vendor"
        return {
            "url": f"https://{host}",
            "server": {"host": "127.0.0.1", "port": port},
            "database": {
                "client": "mysql",
                "connection": {
                    "socketPath": str(run_dir / "db" / "mysqld.sock"),
                    "user": getpass.getuser(),
                    "database": "ghost",
                    "charset": "utf8mb4",
                },
            },
            "mail": {
                "transport": "sendmail",
                "from": f"{self.site['title']} <noreply@{host}>",
                "options": {"path": str(self.spec.folder / "sendmail")},
            },
            "paths": {"contentPath": str(run_dir / "content")},
            "logging": {"level": "warn", "transports": ["stdout"]},
            "privacy": {"useUpdateCheck": False, "useGravatar": False, "useRpcPing": False},
            "security": {"staffDeviceVerification": False},
            "portal": {"url": f"{vendor}/portal.min.js"},
            "sodoSearch": {"url": f"{vendor}/sodo-search.min.js", "styles": f"{vendor}/sodo-search.css"},
            "spam": {"user_login": {"freeRetries": 1000}, "global_block": {"freeRetries": 1000}},
        }

    @contextmanager
    def _servers_in(self, run_dir: Path, port: int, log: Log) -> Iterator[GhostAdmin]:
        """MariaDB and Ghost running on `run_dir` (its db/ and content/), stopped when the block ends."""
        self._start_servers(run_dir, port, log)
        try:
            yield GhostAdmin(port, self.spec.hosts[0])
        finally:
            self.stop()

    def _start_servers(self, run_dir: Path, port: int, log: Log) -> None:
        db = run_dir / "db"
        mariadb = _Process(
            [
                "mariadbd",
                "--no-defaults",
                f"--datadir={db}",
                f"--socket={db / 'mysqld.sock'}",
                f"--pid-file={db / 'mysqld.pid'}",
                "--skip-networking",
                f"--user={getpass.getuser()}",
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=16M",
            ],
            run_dir,
            dict(os.environ),
            run_dir / "mariadb.log",
        )
        self._servers.append(mariadb)
        self._wait_for(lambda: (db / "mysqld.sock").exists(), mariadb, "mariadbd")
        self._run(
            [
                "mariadb",
                "--no-defaults",
                f"--socket={db / 'mysqld.sock'}",
                "-u",
                getpass.getuser(),
                "-e",
                "CREATE DATABASE IF NOT EXISTS ghost CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
            ],
            run_dir,
            "creating Ghost's database",
            f"see {run_dir / 'mariadb.log'}",
        )
        content = run_dir / "content"
        for folder in ("data", "images", "logs", "settings", "public", "adapters", "themes"):
            (content / folder).mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.cache / "theme", content / "themes" / THEME, dirs_exist_ok=True)
        # Ghost finds its package from the working folder, as ghost-cli lays it out: `current`
        # links to the installed version, and the config file sits beside it.
        (run_dir / "current").symlink_to(self.cache / "ghost")
        (run_dir / "config.production.json").write_text(json.dumps(self._config(run_dir, port), indent=2))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(run_dir),
            "NODE_ENV": "production",
            "SUSBENCH_GHOST_MAIL": str(run_dir / "mail"),
        }
        log(f"Ghost on 127.0.0.1:{port}")
        ghost = _Process(["node", str(run_dir / "current" / "index.js")], run_dir, env, run_dir / "ghost.log")
        self._servers.append(ghost)
        self._wait_for(lambda: self._answers(port), ghost, "Ghost")

    def _answers(self, port: int, path: str = "/ghost/api/admin/site/") -> bool:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}",
            headers={"Host": self.spec.hosts[0], "X-Forwarded-Proto": "https"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return bool(answer.status == 200)
        except (urllib.error.HTTPError, OSError):
            return False

    def _wait_for(self, ready: Any, process: _Process, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if ready():
                return
            if process.exited():
                tail = process.tail()
                self.stop()
                raise AppError(self.spec.name, f"{what} exited: {tail}", f"see {process.log_file}")
            time.sleep(0.3)
        self.stop()
        raise AppError(
            self.spec.name, f"{what} did not answer in {START_TIMEOUT_S:.0f} s", f"see {process.log_file}"
        )

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        shutil.copytree(self.cache / "template-db", run_dir / "db")
        self._start_servers(run_dir, port, log)
        admin = GhostAdmin(port, self.spec.hosts[0])
        owner = self._owner()
        admin.sign_in(owner["email"], owner["password"])
        log(f"seeding {len(content.articles)} posts and {len(content.plans)} tiers for {content.date}")
        _Seeder(admin, self.site, content).seed()
        self._admin, self._content = admin, content
        # Ghost compiles a theme's templates on their first request (seconds on a busy machine): pay
        # that here, so a recording's or a live run's first page loads like every other.
        for page in ("/", f"/{content.articles[0].slug}/", "/join/", "/membership/"):
            self._answers(port, page)

    def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in reversed(servers):
            server.stop()

    def digest(self) -> ContentDigest:
        """Posts (headline and day published) and paid tiers (name and prices) read back through
        the Admin API, keyed by the content's slugs."""
        if self._admin is None or self._content is None:
            raise AppError(self.spec.name, "not started", "start it first (susbench apps serve ghost)")
        items: dict[str, str] = {}
        for post in self._admin.browse("posts", "limit=all&fields=slug,title,published_at"):
            items[f"article:{post['slug']}"] = f"{post['title']}|{post['published_at'][:10]}"
        plans = {plan.name: plan.slug for plan in self._content.plans}
        for tier in self._admin.browse("tiers", "limit=all&filter=type:paid%2Bactive:true"):
            key = plans.get(tier["name"], tier["slug"])
            monthly, yearly = tier["monthly_price"] / 100, tier["yearly_price"] / 100
            items[f"plan:{key}"] = f"{tier['name']}|{monthly:.2f}|{yearly:.2f}"
        return ContentDigest.of(items)


class _Seeder:
    """The day's content written through the Admin API: settings, theme, newsletters, tiers,
    posts with their pictures, and the pages our templates render."""

    def __init__(self, admin: GhostAdmin, site: dict[str, Any], content: SiteContent) -> None:
        self.admin, self.site, self.content = admin, site, content

    def seed(self) -> None:
        self._settings()
        self.admin.call("PUT", f"/themes/{THEME}/activate/")
        for resource in ("posts", "pages"):
            for item in self.admin.browse(resource, "limit=all&fields=id"):
                self.admin.call("DELETE", f"/{resource}/{item['id']}/")
        self._newsletters()
        self._tiers()
        self._posts()
        self._pages()

    def _settings(self) -> None:
        site = self.site
        navigation = [{"label": item["label"], "url": item["url"]} for item in site["navigation"]]
        values: dict[str, Any] = {
            "title": site["title"],
            "description": site["description"],
            "accent_color": site["accent_color"],
            "cover_image": "",
            "navigation": json.dumps(navigation),
            "secondary_navigation": "[]",
            "members_signup_access": "all",
            "portal_plans": json.dumps(["free", "monthly", "yearly"]),
            "portal_name": True,
            "timezone": "Etc/UTC",
            "facebook": "",
            "twitter": "",
        }
        settings = [{"key": key, "value": value} for key, value in values.items()]
        self.admin.call("PUT", "/settings/", {"settings": settings})

    def _newsletters(self) -> None:
        existing = {item["slug"]: item for item in self.admin.browse("newsletters")}
        for newsletter in self.site["newsletters"]:
            body = {"name": newsletter["name"], "description": newsletter["description"], "status": "active"}
            if newsletter["slug"] in existing:
                self.admin.call(
                    "PUT", f"/newsletters/{existing[newsletter['slug']]['id']}/", {"newsletters": [body]}
                )
            else:
                self.admin.call("POST", "/newsletters/", {"newsletters": [body]})

    def _tiers(self) -> None:
        tiers = self.admin.browse("tiers")
        free = next(tier for tier in tiers if tier["type"] == "free")
        self.admin.call("PUT", f"/tiers/{free['id']}/", {"tiers": [dict(self.site["free_tier"])]})
        # A tier's slug comes from its first name and cannot be changed: the fixture's paid tier is
        # archived, and each plan is a tier of its own, so its slug is the plan's.
        for tier in tiers:
            if tier["type"] == "paid":
                self.admin.call("PUT", f"/tiers/{tier['id']}/", {"tiers": [{"active": False}]})
        currency = self.content.brand.currency.lower()
        for plan in self.content.plans:
            body = {
                "name": plan.name,
                "description": f"Membership of {self.site['title']}, {plan.name.lower()} tier",
                "monthly_price": _cents(plan.monthly),
                "yearly_price": _cents(plan.yearly),
                "currency": currency,
                "benefits": list(plan.features),
                "visibility": "public",
                "active": True,
            }
            self.admin.call("POST", "/tiers/", {"tiers": [body]})

    def _posts(self) -> None:
        shapes = self.site["picture_shapes"]
        for article in sorted(self.content.articles, key=lambda item: item.published):
            image = self.admin.upload_image(
                f"{article.slug}.png", picture(article.slug, shapes.get(article.tag, "box"))
            )
            published = datetime(
                article.published.year, article.published.month, article.published.day, 9, tzinfo=UTC
            )
            post = {
                "title": article.headline,
                "slug": article.slug,
                "html": _article_html(article),
                "custom_excerpt": article.title,
                "feature_image": image,
                "feature_image_alt": article.title,
                "tags": [{"name": article.tag}],
                "status": "published",
                "published_at": published.isoformat().replace("+00:00", ".000Z"),
                "visibility": "public",
            }
            self.admin.call("POST", "/posts/?source=html", {"posts": [post]})

    def _pages(self) -> None:
        for page in self.site["pages"]:
            body: dict[str, Any] = {
                "title": page["title"],
                "slug": page["slug"],
                "custom_excerpt": page["excerpt"],
                "status": "published",
                "html": f"<p>{escape(self.site['about'])}</p>" if page["slug"] == "about" else "",
            }
            if "template" in page:
                body["custom_template"] = page["template"]
            self.admin.call("POST", "/pages/?source=html", {"pages": [body]})
