"""WordPress 6.1 as an app: Debian's `wordpress` with PHP 8.2 under Apache, and MariaDB, all from
Debian, run as the project's own processes (Debian's service scripts never start them).

Installing checks the packages, puts the one-line `/etc/wordpress/config-susbench-wordpress.php`
that Debian's `wp-config.php` reads, and makes a template MariaDB data folder with an empty
database. Each start copies that folder, starts `mariadbd` on a socket (no TCP), installs WordPress
and seeds the day's content with PHP's CLI (`apps/wordpress/seed.php`), then starts `apache2` on
the loopback port. The magazine's newsletter and membership forms are the project's must-use
plugin (`apps/wordpress/mu-plugins/`); everything else is WordPress's own.

Apache's workers run as www-data, which cannot enter the run folder under the cache (`/root` is
private), so what they read (settings, wp-content, the database socket) is in a web folder of its
own under the system's temporary folder, removed on stop. The database and the logs stay in the
run folder. No password exists: the database accepts its users by their Unix account
(unix_socket), and WordPress's keys are random per start and never leave the web folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from susbench.apps.base import AppError, Log, die_with_parent, run_command, stop_group
from susbench.apps.content import ContentDigest, SiteContent
from susbench.apps.pictures import picture
from susbench.apps.spec import AppSpec, app_cache

DEBIAN_PACKAGES = "wordpress wordpress-theme-twentytwentyone apache2 libapache2-mod-php mariadb-server"
APT_FIX = f"as root: apt-get install -y {DEBIAN_PACKAGES}"
WORDPRESS = Path("/usr/share/wordpress")
THEMES = WORDPRESS / "wp-content" / "themes"
THEME = "twentytwentyone"
CONFIG_NAME = "susbench-wordpress"
CONFIG_FILE = Path(f"/etc/wordpress/config-{CONFIG_NAME}.php")
WEB_USER = "www-data"
START_TIMEOUT_S = 60.0
COMMAND_TIMEOUT_S = 300.0
# Small settings: two cores and little memory shared with much else.
MARIADB_OPTIONS = (
    "--innodb-buffer-pool-size=16M",
    "--innodb-log-file-size=4M",
    "--innodb-data-file-path=ibdata1:4M:autoextend",
    "--performance-schema=off",
    "--skip-log-bin",
    "--key-buffer-size=1M",
    "--aria-pagecache-buffer-size=1M",
    "--max-connections=20",
    "--skip-name-resolve",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_unicode_ci",
)
CURRENCY_SYMBOLS = {"GBP": "£", "EUR": "€", "USD": "$"}
SECTION_SHAPES = {"Kitchen": "pan", "Home": "lamp", "Outdoors": "bag", "Desk": "book"}
KEYS = (
    "AUTH_KEY",
    "SECURE_AUTH_KEY",
    "LOGGED_IN_KEY",
    "NONCE_KEY",
    "AUTH_SALT",
    "SECURE_AUTH_SALT",
    "LOGGED_IN_SALT",
    "NONCE_SALT",
)


def _digest_of(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        for file in sorted(p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()):
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def _php_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def seed_document(content: SiteContent, host: str, pictures: Path) -> dict[str, object]:
    """What `seed.php` inserts: the magazine's sections, articles (a picture each) and pages."""
    sections = sorted({article.tag for article in content.articles}, key=content.categories.index)
    articles = []
    for article in content.articles:
        image = pictures / f"{article.slug}.png"
        image.write_bytes(picture(article.slug, SECTION_SHAPES.get(article.tag, "box")))
        articles.append(
            {
                "slug": article.slug,
                "title": article.headline,
                "standfirst": article.title + ".",
                "author": article.author,
                "published": f"{article.published.isoformat()} 07:00:00",
                "category": article.tag.lower(),
                "tags": [article.tag.lower(), "fernhill"],
                "paragraphs": list(article.paragraphs),
                "image": str(image),
                "image_alt": f"{article.title}: an illustration",
            }
        )
    pages = [
        {
            "slug": "membership",
            "title": "Become a member",
            "content": "<!-- wp:paragraph -->\n<p>Members keep the journal independent. Choose the "
            "membership that suits you; you can change or cancel it at any time.</p>\n"
            "<!-- /wp:paragraph -->\n\n<!-- wp:shortcode -->\n[fjournal_plans]\n<!-- /wp:shortcode -->",
        },
        {
            "slug": "checkout",
            "parent": "membership",
            "title": "Your membership",
            "content": "<!-- wp:shortcode -->\n[fjournal_checkout]\n<!-- /wp:shortcode -->",
        },
        {
            "slug": "welcome",
            "parent": "membership",
            "title": "Welcome",
            "content": "<!-- wp:shortcode -->\n[fjournal_welcome]\n<!-- /wp:shortcode -->",
        },
        {
            "slug": "newsletter",
            "title": "The Sunday Letter",
            "content": "<!-- wp:shortcode -->\n[fjournal_newsletter]\n<!-- /wp:shortcode -->",
        },
        {
            "slug": "thanks",
            "parent": "newsletter",
            "title": "You are on the list",
            "content": '<!-- wp:paragraph {"className":"newsletter-confirmation"} -->\n'
            '<p class="newsletter-confirmation">Thank you for signing up. The next Sunday Letter '
            "will be in your inbox this weekend.</p>\n<!-- /wp:paragraph -->",
        },
    ]
    return {
        "site": {
            "host": host,
            "title": "Fernhill Journal",
            "tagline": f"Stories on home, kitchen and the outdoors from {content.brand.name}",
            "editor": content.articles[0].author,
            "date": content.date.isoformat(),
            "theme": THEME,
            "currency_symbol": CURRENCY_SYMBOLS.get(content.brand.currency, content.brand.currency + " "),
        },
        "categories": [
            {"slug": section.lower(), "name": section, "description": f"{section} stories from the journal."}
            for section in sections
        ],
        "articles": articles,
        "plans": [plan.model_dump(mode="json") for plan in content.plans],
        "pages": pages,
    }


class WordPressDriver:
    """WordPress from Debian; the template database in `~/.cache/susbench/apps/wordpress/`."""

    content_kinds = ("article", "plan")

    def __init__(self, spec: AppSpec) -> None:
        self.spec = spec
        self.cache = app_cache(spec.name)
        self.data = spec.folder
        self._processes: list[subprocess.Popen[bytes]] = []
        self._run_dir: Path | None = None
        self._web: Path | None = None

    @property
    def stamp(self) -> Path:
        return self.cache / "installed.json"

    @property
    def template(self) -> Path:
        return self.cache / "template-db"

    def _wanted(self) -> dict[str, str]:
        return {"version": self.spec.version, "config": _digest_of(self.data / "config.php")}

    def installed(self) -> bool:
        try:
            stamp = json.loads(self.stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return (
            stamp == self._wanted()
            and self.template.is_dir()
            and CONFIG_FILE.is_file()
            and (THEMES / THEME).is_dir()
        )

    def _missing(self) -> list[str]:
        needed = [command for command in self.spec.needs if shutil.which(command) is None]
        needed += [str(path) for path in (WORDPRESS / "wp-load.php", THEMES / THEME) if not path.exists()]
        return needed

    def _run(self, args: list[str], what: str, fix: str, env: dict[str, str] | None = None) -> str:
        return run_command(self.spec.name, args, what, fix, timeout_s=COMMAND_TIMEOUT_S, env=env)

    def install(self, log: Log) -> None:
        """Check Debian's packages, put Debian's host config file, make the template database."""
        missing = self._missing()
        if missing:
            raise AppError(self.spec.name, f"missing {', '.join(missing)}", APT_FIX)
        if not CONFIG_FILE.is_file() or CONFIG_FILE.read_bytes() != (self.data / "config.php").read_bytes():
            try:
                shutil.copyfile(self.data / "config.php", CONFIG_FILE)
                CONFIG_FILE.chmod(0o644)
            except OSError as exc:
                raise AppError(
                    self.spec.name,
                    f"cannot write {CONFIG_FILE}: {exc.strerror}",
                    f"as root: cp {self.data / 'config.php'} {CONFIG_FILE}",
                ) from None
        build = self.cache / "template-build"
        shutil.rmtree(build, ignore_errors=True)
        log("mariadb-install-db: a template data folder (about 10 s)")
        fix = f"see the error above, then run `susbench apps install {self.spec.name}` again"
        self._run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={build}",
                "--user=root",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                *MARIADB_OPTIONS,
            ],
            "mariadb-install-db",
            fix,
        )
        socket_dir = Path(tempfile.mkdtemp(prefix="susbench-wordpress-install-"))
        try:
            server = self._start_mariadb(build, socket_dir, self.cache / "template-mariadb.log")
            try:
                self._sql(
                    socket_dir,
                    "CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
                    f"CREATE USER '{WEB_USER}'@'localhost' IDENTIFIED VIA unix_socket;"
                    f"GRANT ALL ON wordpress.* TO '{WEB_USER}'@'localhost';",
                    fix,
                )
            finally:
                stop_group(server, grace_s=20)
        finally:
            shutil.rmtree(socket_dir, ignore_errors=True)
        shutil.rmtree(self.template, ignore_errors=True)
        os.replace(build, self.template)
        self.stamp.write_text(json.dumps(self._wanted()), encoding="utf-8")

    def _start_mariadb(self, datadir: Path, socket_dir: Path, log_file: Path) -> subprocess.Popen[bytes]:
        socket = socket_dir / "mysqld.sock"
        process = subprocess.Popen(
            [
                "mariadbd",
                "--no-defaults",
                f"--datadir={datadir}",
                f"--socket={socket}",
                f"--pid-file={socket_dir / 'mysqld.pid'}",
                f"--log-error={log_file}",
                "--skip-networking",
                "--user=root",
                *MARIADB_OPTIONS,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not socket.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                stop_group(process, grace_s=20)
                tail = log_file.read_text(errors="replace").strip().splitlines()[-2:]
                raise AppError(
                    self.spec.name, f"mariadbd did not start: {' / '.join(tail)}", f"see {log_file}"
                )
            time.sleep(0.1)
        return process

    def _sql(self, socket_dir: Path, statements: str, fix: str) -> None:
        self._run(
            [
                "mariadb",
                "--no-defaults",
                f"--socket={socket_dir / 'mysqld.sock'}",
                "-u",
                "root",
                "-e",
                statements,
            ],
            "setting up the database",
            fix,
        )

    def _web_folder(self) -> Path:
        """The folder Apache's workers read: settings, wp-content (themes, the plugin, uploads), the
        database socket."""
        web = Path(tempfile.mkdtemp(prefix="susbench-wordpress-"))
        web.chmod(0o755)
        content = web / "wp-content"
        for folder in ("themes", "plugins", "mu-plugins", "uploads"):
            (content / folder).mkdir(parents=True)
        for theme in THEMES.iterdir():
            (content / "themes" / theme.name).symlink_to(theme)
        for plugin in (self.data / "mu-plugins").glob("*.php"):
            shutil.copyfile(plugin, content / "mu-plugins" / plugin.name)
        host = self.spec.hosts[0]
        settings = [
            "<?php",
            "/* This instance's settings, written by susbench.apps.wordpress for one start. */",
            "define('DB_NAME', 'wordpress');",
            "define('DB_USER', posix_getpwuid(posix_geteuid())['name']);",
            "define('DB_PASSWORD', '');",
            f"define('DB_HOST', {_php_string('localhost:' + str(web / 'mysqld.sock'))});",
            "define('DB_CHARSET', 'utf8mb4');",
            f"define('WP_CONTENT_DIR', {_php_string(str(content))});",
            f"define('WP_CONTENT_URL', 'https://{host}/wp-content');",
            f"define('WP_HOME', 'https://{host}');",
            f"define('WP_SITEURL', 'https://{host}');",
            "define('DISABLE_WP_CRON', true);",
            "define('AUTOMATIC_UPDATER_DISABLED', true);",
            "define('WP_HTTP_BLOCK_EXTERNAL', true);",
            "define('WP_DEBUG', false);",
            "define('WP_ENVIRONMENT_TYPE', 'production');",
            *(f"define('{key}', {_php_string(secrets.token_urlsafe(48))});" for key in KEYS),
        ]
        (web / "wp-instance.php").write_text("\n".join(settings) + "\n", encoding="utf-8")
        (web / "wp-instance.php").chmod(0o644)
        return web

    def _php_env(self) -> dict[str, str]:
        assert self._web is not None
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "WORDPRESS_CONFIG": CONFIG_NAME,
            "SUSBENCH_WP_WEB": str(self._web),
            "SUSBENCH_WP_HOST": self.spec.hosts[0],
        }

    def start(self, run_dir: Path, port: int, content: SiteContent, log: Log) -> None:
        self._run_dir = run_dir
        self._web = web = self._web_folder()
        try:
            datadir = run_dir / "db"
            shutil.copytree(self.template, datadir, symlinks=True)
            self._processes.append(self._start_mariadb(datadir, web, run_dir / "mariadb.log"))
            pictures = run_dir / "pictures"
            pictures.mkdir()
            document = seed_document(content, self.spec.hosts[0], pictures)
            (run_dir / "seed.json").write_text(json.dumps(document), encoding="utf-8")
            log(f"seeding {len(content.articles)} articles and {len(content.plans)} plans for {content.date}")
            fix = f"see {run_dir}; run `susbench apps install {self.spec.name}` again if its cache is damaged"
            self._run(
                ["php", str(self.data / "seed.php"), str(run_dir / "seed.json")],
                "seeding",
                fix,
                self._php_env(),
            )
            uploads = web / "wp-content" / "uploads"
            for path in (uploads, *uploads.rglob("*")):
                path.chmod(0o755 if path.is_dir() else 0o644)
            conf = (self.data / "apache.conf").read_text(encoding="utf-8")
            for key, value in {
                "{host}": self.spec.hosts[0],
                "{port}": str(port),
                "{run}": str(run_dir),
            }.items():
                conf = conf.replace(key, value)
            (run_dir / "apache.conf").write_text(conf.replace("{web}", str(web)), encoding="utf-8")
            with (run_dir / "apache.out").open("wb") as output:
                self._processes.append(
                    subprocess.Popen(
                        ["apache2", "-f", str(run_dir / "apache.conf"), "-DFOREGROUND"],
                        stdout=output,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        preexec_fn=die_with_parent,
                    )
                )
            self._wait(port, run_dir)
        except BaseException:
            self.stop()
            raise

    def _wait(self, port: int, run_dir: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        apache = self._processes[-1]
        while time.monotonic() < deadline:
            if apache.poll() is not None:
                lines = [run_dir / "apache.out", run_dir / "apache-error.log"]
                tail = " / ".join(
                    line for path in lines if path.is_file() for line in path.read_text().splitlines()[-2:]
                )
                raise AppError(self.spec.name, f"apache2 exited: {tail}", f"see {run_dir}/apache-error.log")
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/",
                headers={"Host": self.spec.hosts[0], "X-Forwarded-Proto": "https"},
            )
            try:
                with urllib.request.urlopen(request, timeout=5):
                    return
            except urllib.error.HTTPError as exc:
                raise AppError(
                    self.spec.name, f"its home page answered {exc.code}", f"see {run_dir}/apache-error.log"
                ) from None
            except OSError:
                time.sleep(0.2)
        raise AppError(
            self.spec.name, f"no answer on 127.0.0.1:{port} in {START_TIMEOUT_S:.0f} s", f"see {run_dir}"
        )

    def stop(self) -> None:
        while self._processes:
            stop_group(self._processes.pop(), grace_s=20)
        if self._web is not None:
            shutil.rmtree(self._web, ignore_errors=True)
            self._web = None

    def digest(self) -> ContentDigest:
        if self._web is None:
            raise AppError(self.spec.name, "not started", "start it first (susbench apps serve)")
        out = self._run(
            ["php", str(self.data / "digest.php")],
            "reading its content",
            "see its run folder",
            self._php_env(),
        )
        return ContentDigest.of(json.loads(out))
