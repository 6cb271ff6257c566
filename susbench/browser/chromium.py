"""Finding the Chromium binary: `$SUSBENCH_CHROMIUM`, Debian's package, Playwright's own, else apt.

`playwright install` is never needed (it downloads from the open internet); Debian's package is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from susbench.browser.driver import playwright_driver
from susbench.core.errors import BrowserError

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
APT_PACKAGES = ("chromium", "fonts-dejavu-core", "fonts-liberation")

CHROMIUM_HELP = (
    "Chromium was not found. Set SUSBENCH_CHROMIUM to a Chromium/Chrome binary, or install "
    "Debian's package as root: `apt-get install -y chromium` (on Ubuntu, a non-snap build such as "
    "the `chromium` package from Debian or Google Chrome)."
)


def _playwright_chromium() -> Path | None:
    """Playwright's own download, if one happens to be installed (never required)."""
    try:
        with playwright_driver() as playwright:
            path = Path(playwright.chromium.executable_path)
    except Exception:  # noqa: BLE001 - any failure simply means "not available"
        return None
    return path if path.is_file() else None


def find_chromium(install: bool = False) -> Path:
    """SUSBENCH_CHROMIUM, then /usr/bin/chromium, then Playwright's browser, then apt (as root)."""
    configured = os.environ.get("SUSBENCH_CHROMIUM")
    if configured:
        path = Path(configured)
        if not path.is_file():
            raise BrowserError(f"SUSBENCH_CHROMIUM={configured}: no such file")
        return path
    if DEBIAN_CHROMIUM.is_file():
        return DEBIAN_CHROMIUM
    bundled = _playwright_chromium()
    if bundled is not None:
        return bundled
    if install and os.geteuid() == 0 and shutil.which("apt-get"):
        _apt_install_chromium()
        if DEBIAN_CHROMIUM.is_file():
            return DEBIAN_CHROMIUM
    raise BrowserError(CHROMIUM_HELP)


def _apt_install_chromium() -> None:
    """Debian's package (never Playwright's download, which needs the open internet)."""
    quiet = {"capture_output": True, "text": True, "check": False}
    subprocess.run(["apt-get", "update", "-qq"], **quiet)  # type: ignore[call-overload]
    result = subprocess.run(["apt-get", "install", "-y", "-qq", *APT_PACKAGES], **quiet)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise BrowserError(
            f"apt-get install {' '.join(APT_PACKAGES)} failed:\n{result.stderr.strip()}\n{CHROMIUM_HELP}"
        )


def chromium_version(executable: Path) -> str:
    """`Chromium 156.0...` as the binary reports it; recorded with every snapshot and run."""
    try:
        result = subprocess.run(
            [str(executable), "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrowserError(f"{executable}: cannot run it to read its version: {exc}") from None
    return result.stdout.strip()
