"""What a run needs on this machine (`susbench doctor`), and what to do about each missing part."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509

from susbench.browser import APT_PACKAGES, chromium_version, find_chromium
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.core.paths import cache_dir
from susbench.replayer.service import check_port

REQUIRED_FONTS = ("DejaVu Sans", "Liberation Sans")
CA_FOLDERS = {"local web": "localweb-ca", "replayer": "replay-ca", "recorder (mitmproxy)": "mitmproxy"}
CA_FILES = ("ca.pem", "mitmproxy-ca-cert.pem")
CA_WARN_BEFORE = timedelta(days=30)
PORTS = {8080: "susbench web serve", 8081: "susbench replay serve"}
EXTRAS = {"agents": ("openai", "anthropic"), "ray": ("ray",), "local-model": ("xllamacpp",)}


class Check(Frozen):
    """One thing a run needs: found or not, what was seen, and what to do when it is missing."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    optional: bool = False


def check_chromium() -> Check:
    try:
        executable = find_chromium()
        version = chromium_version(executable)
    except SusbenchError as exc:
        return Check(name="chromium", ok=False, detail="not found", fix=str(exc))
    return Check(name="chromium", ok=True, detail=f"{version or 'unknown version'} ({executable})")


def check_fonts() -> Check:
    """The fonts the container image pins, so pages draw the same pixels on the host."""
    install = f"apt-get install -y {' '.join(package for package in APT_PACKAGES if 'font' in package)}"
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return Check(
            name="fonts",
            ok=False,
            detail="fc-list not found",
            fix=f"apt-get install -y fontconfig; {install}",
        )
    families = subprocess.run([fc_list, ":", "family"], capture_output=True, text=True, check=False).stdout
    missing = [font for font in REQUIRED_FONTS if font not in families]
    if missing:
        return Check(name="fonts", ok=False, detail=f"missing: {', '.join(missing)}", fix=install)
    return Check(name="fonts", ok=True, detail=", ".join(REQUIRED_FONTS))


def _ca_expiry(folder: Path) -> datetime | None:
    for name in CA_FILES:
        if (folder / name).is_file():
            return x509.load_pem_x509_certificate((folder / name).read_bytes()).not_valid_after_utc
    return None


def check_cas() -> Check:
    """The private CAs (local web, replayer, recorder): present and current, or made on first use."""
    try:
        home = cache_dir()
    except OSError as exc:
        return Check(
            name="local CAs", ok=False, detail=f"cannot create the cache: {exc}", fix="set SUSBENCH_HOME"
        )
    if not os.access(home, os.W_OK):
        return Check(
            name="local CAs",
            ok=False,
            detail=f"{home} is not writable",
            fix="set SUSBENCH_HOME to a folder of yours",
        )
    now = datetime.now(UTC)
    states = []
    for label, folder in CA_FOLDERS.items():
        try:
            expiry = _ca_expiry(home / folder)
        except ValueError:
            return Check(
                name="local CAs",
                ok=False,
                detail=f"{home / folder}: unreadable certificate",
                fix=f"remove {home / folder}; it is made again on first use",
            )
        if expiry is None:
            states.append(f"{label}: made on first use")
        elif expiry - now < CA_WARN_BEFORE:
            return Check(
                name="local CAs",
                ok=False,
                detail=f"{label} CA expires {expiry:%Y-%m-%d}",
                fix=f"remove {home / folder}; it is made again on first use",
            )
        else:
            states.append(f"{label}: until {expiry:%Y-%m-%d}")
    return Check(name="local CAs", ok=True, detail=f"in {home} ({'; '.join(states)})")


def check_ports() -> Check:
    busy = []
    for port, command in PORTS.items():
        try:
            check_port("127.0.0.1", port)
        except SusbenchError:
            busy.append(f"{port} ({command})")
    if busy:
        return Check(
            name="ports",
            ok=False,
            detail=f"in use on 127.0.0.1: {', '.join(busy)}",
            fix="pass --port with another number to those commands (0 picks any free port)",
            optional=True,  # the documented defaults only: every command takes another port
        )
    return Check(name="ports", ok=True, detail=", ".join(f"{port} free" for port in PORTS))


def check_results(db: Path) -> Check:
    folder = db.resolve().parent
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".susbench-doctor-"):
            pass
    except OSError as exc:
        return Check(
            name="results",
            ok=False,
            detail=f"cannot write in {folder}: {exc.strerror}",
            fix="run from a folder you can write, or pass --db PATH to run and report",
        )
    return Check(name="results", ok=True, detail=f"{db.resolve()} (and its -archives/, -traces/ folders)")


def check_container_engine() -> Check:
    from susbench.container.runtime import DockerApiRuntime

    try:
        DockerApiRuntime()
    except SusbenchError as exc:
        return Check(name="container engine", ok=False, detail="no answer", fix=str(exc))
    return Check(name="container engine", ok=True, detail="Docker API answers")


def check_extras() -> list[Check]:
    checks = []
    for extra, modules in EXTRAS.items():
        missing = [module for module in modules if importlib.util.find_spec(module) is None]
        checks.append(
            Check(
                name=f"extra: {extra}",
                ok=not missing,
                detail=f"missing {', '.join(missing)}" if missing else "installed",
                fix=f"pip install -e '.[{extra}]'" if missing else None,
                optional=True,
            )
        )
    return checks


def check_apps() -> Check:
    """The real web applications and which are installed here (none installed is only a note)."""
    from susbench.apps import driver, load_specs

    specs = load_specs()
    installed = [spec for spec in specs if driver(spec.name).installed()]
    listed = ", ".join(
        f"{spec.name} ({spec.title} {spec.version}{'' if spec in installed else ', not installed'})"
        for spec in specs
    )
    missing = [spec.name for spec in specs if spec not in installed]
    return Check(
        name="apps",
        ok=not missing,
        detail=f"{len(installed)} of {len(specs)} installed: {listed}",
        fix=f"make apps (or susbench apps install {' '.join(missing)})" if missing else None,
        optional=True,
    )


def run_checks(db: Path, container: bool) -> list[Check]:
    steps: list[Callable[[], Check]] = [check_chromium, check_fonts, check_cas, check_ports]
    checks = [step() for step in steps]
    checks.append(check_results(db))
    checks.append(check_apps())
    if container:
        checks.append(check_container_engine())
    return checks + check_extras()
