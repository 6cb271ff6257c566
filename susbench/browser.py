"""Chromium discovery and launch, behind a small backend Protocol (local now, container later).

Every launch option lives in one typed `BrowserProfile`, so an episode's browser can be described,
stored with the results and reproduced exactly.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from playwright.sync_api import BrowserContext, Playwright, sync_playwright
from pydantic import Field

from susbench.errors import BrowserError
from susbench.models import Frozen, Viewport

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
APT_PACKAGES = ("chromium", "fonts-dejavu-core", "fonts-liberation")

DISABLED_FEATURES = (
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "PaintHolding",
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "ThirdPartyStoragePartitioning",
    "LensOverlay",
    "MediaRouter",
    "Translate",
    "OptimizationHints",
    "AutofillServerCommunication",
    "NetworkTimeServiceQuerying",
    "InterestFeedContentSuggestions",
    "PreconnectToSearch",
)

QUIET_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    # One switch only: Chromium keeps the last --disable-features, so this list repeats the
    # Playwright defaults that matter for replay (no HTTPS upgrades, no paint holding) and adds
    # the features that would phone home.
    "--disable-features=" + ",".join(DISABLED_FEATURES),
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
)

CHROMIUM_HELP = (
    "Chromium was not found. Set SUSBENCH_CHROMIUM to a Chromium/Chrome binary, or install "
    "Debian's package as root: `apt-get install -y chromium` (on Ubuntu, a non-snap build such as "
    "the `chromium` package from Debian or Google Chrome)."
)


def _playwright_chromium() -> Path | None:
    """Playwright's own download, if one happens to be installed (never required)."""
    try:
        with sync_playwright() as playwright:
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class BrowserProfile(Frozen):
    """Everything that decides how a Chromium for one episode is started."""

    executable: Path | None = None
    headless: bool = True
    viewport: Viewport = Viewport()
    locale: str = "en-US"
    timezone: str = "America/New_York"
    proxy: str | None = Field(default=None, description="e.g. http://127.0.0.1:8081")
    proxy_bypass_loopback: bool = Field(
        default=False, description="send loopback URLs through the proxy too (<-loopback>)"
    )
    host_resolver_rules: str | None = None
    spki_pins: tuple[str, ...] = Field(default=(), description="base64 SHA-256 SPKI hashes trusted")
    extension_dir: Path | None = None
    cdp: bool = Field(default=False, description="expose a CDP endpoint for agents")
    block_service_workers: bool = True
    extra_args: tuple[str, ...] = ()

    def args(self, cdp_port: int | None = None) -> list[str]:
        """The full Chromium command line this profile stands for."""
        args = [*QUIET_FLAGS, "--no-sandbox"]
        if self.proxy:
            args.append(f"--proxy-server={self.proxy}")
            if self.proxy_bypass_loopback:
                args.append("--proxy-bypass-list=<-loopback>")
        if self.host_resolver_rules:
            args.append(f"--host-resolver-rules={self.host_resolver_rules}")
        if self.spki_pins:
            args.append("--ignore-certificate-errors-spki-list=" + ",".join(self.spki_pins))
        if self.extension_dir is not None:
            extension = str(self.extension_dir.resolve())
            args += [f"--disable-extensions-except={extension}", f"--load-extension={extension}"]
        if cdp_port is not None:
            args += [f"--remote-debugging-port={cdp_port}", "--remote-debugging-address=127.0.0.1"]
        args += list(self.extra_args)
        return args


@dataclass
class BrowserSession:
    """A running browser: Playwright's persistent context and, if asked, a CDP endpoint."""

    context: BrowserContext
    profile: BrowserProfile
    executable: Path
    cdp_endpoint: str | None
    user_data_dir: Path


class BrowserBackend(Protocol):
    """Starts a browser for one episode and always cleans it up."""

    def launch(self, profile: BrowserProfile) -> AbstractContextManager[BrowserSession]: ...


class LocalBackend:
    """Chromium on this machine, in a fresh temporary profile per launch."""

    def __init__(self, playwright: Playwright | None = None) -> None:
        self._playwright = playwright

    @contextmanager
    def launch(self, profile: BrowserProfile) -> Iterator[BrowserSession]:
        executable = profile.executable or find_chromium()
        cdp_port = free_port() if profile.cdp else None
        with (
            tempfile.TemporaryDirectory(prefix="susbench-profile-") as user_data_dir,
            playwright_driver(self._playwright) as playwright,
        ):
            try:
                context = playwright.chromium.launch_persistent_context(
                    user_data_dir,
                    executable_path=str(executable),
                    headless=profile.headless,
                    args=profile.args(cdp_port),
                    viewport={"width": profile.viewport.width, "height": profile.viewport.height},
                    locale=profile.locale,
                    timezone_id=profile.timezone,
                    service_workers="block" if profile.block_service_workers else "allow",
                )
            except Exception as exc:  # noqa: BLE001 - Playwright raises plain Error types
                raise BrowserError(f"{executable}: Chromium failed to start: {exc}") from None
            try:
                yield BrowserSession(
                    context=context,
                    profile=profile,
                    executable=executable,
                    cdp_endpoint=f"http://127.0.0.1:{cdp_port}" if cdp_port else None,
                    user_data_dir=Path(user_data_dir),
                )
            finally:
                context.close()


@contextmanager
def playwright_driver(playwright: Playwright | None = None) -> Iterator[Playwright]:
    """Reuse a running Playwright driver, or start one (its sync API allows one per thread)."""
    if playwright is not None:
        yield playwright
        return
    with sync_playwright() as started:
        yield started
