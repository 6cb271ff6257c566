"""How a Chromium is started, as one typed `BrowserProfile`, and the one builder for routed profiles.

Every launch option lives in the profile, so an episode's browser can be described, stored with
the results and reproduced exactly. A `Route` is anything that tells a browser where its traffic
goes (the replayer, a recording proxy, the local web); the browser layer never imports those parts,
it only needs the three facts a route offers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import Field

from susbench.core.models import (
    DEFAULT_LOCALE,
    DEFAULT_TIMEZONE,
    Frozen,
    PageLook,
    SnapshotManifest,
    Viewport,
)

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
    # The omnibox's WebUI pop-ups are preloaded into a renderer of their own at every start, even
    # headless: more than half of a launch's CPU (benchmarks/results/chromium-launch-2026-12-04.md).
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
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


class Route(Protocol):
    """Where a browser's traffic goes: through a proxy, or every host resolved to one server.

    The replay servers, `LocalWeb` and `ProxyRoute` (a recording proxy) all offer these.
    """

    @property
    def proxy_url(self) -> str | None: ...

    @property
    def host_resolver_rules(self) -> str | None: ...

    @property
    def spki(self) -> str: ...


class RecordedSnapshot(Protocol):
    @property
    def manifest(self) -> SnapshotManifest: ...


class ReplayEndpoint(Route, Protocol):
    """A running replayer: a route plus the snapshot whose look it replays."""

    @property
    def snapshot(self) -> RecordedSnapshot: ...


class ProxyRoute(Frozen):
    """A plain HTTP(S) proxy whose leaf certificates carry one key (e.g. the recording proxy)."""

    proxy_url: str
    spki: str
    host_resolver_rules: None = None


DEFAULT_LOOK = PageLook()


class BrowserProfile(Frozen):
    """Everything that decides how a Chromium for one episode is started."""

    executable: Path | None = None
    headless: bool = True
    viewport: Viewport = Viewport()
    locale: str = DEFAULT_LOCALE
    timezone: str = DEFAULT_TIMEZONE
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

    def route_args(self) -> list[str]:
        """The flags that decide where traffic goes and which certificate key is trusted."""
        args = []
        if self.proxy:
            args.append(f"--proxy-server={self.proxy}")
            if self.proxy_bypass_loopback:
                args.append("--proxy-bypass-list=<-loopback>")
        if self.host_resolver_rules:
            args.append(f"--host-resolver-rules={self.host_resolver_rules}")
        if self.spki_pins:
            args.append("--ignore-certificate-errors-spki-list=" + ",".join(self.spki_pins))
        return args

    def args(self, cdp_port: int | None = None) -> list[str]:
        """The full Chromium command line this profile stands for."""
        args = [*QUIET_FLAGS, "--no-sandbox", *self.route_args()]
        if self.extension_dir is not None:
            extension = str(self.extension_dir.resolve())
            args += [f"--disable-extensions-except={extension}", f"--load-extension={extension}"]
        if cdp_port is not None:
            args += [f"--remote-debugging-port={cdp_port}", "--remote-debugging-address=127.0.0.1"]
        args += list(self.extra_args)
        return args


def routed_profile(
    route: Route,
    look: PageLook = DEFAULT_LOOK,
    *,
    headless: bool = True,
    extension_dir: Path | None = None,
    cdp: bool = False,
    executable: Path | None = None,
) -> BrowserProfile:
    """A profile whose traffic goes only where `route` says (loopback included), trusting only its key."""
    return BrowserProfile(
        executable=executable,
        headless=headless,
        proxy=route.proxy_url,
        proxy_bypass_loopback=route.proxy_url is not None,
        host_resolver_rules=route.host_resolver_rules,
        spki_pins=(route.spki,),
        extension_dir=extension_dir,
        cdp=cdp,
        viewport=look.viewport,
        locale=look.locale,
        timezone=look.timezone,
    )


def replay_profile(server: ReplayEndpoint) -> BrowserProfile:
    """Chromium reaching a replayer (by proxy or, direct mode, every host resolved to it) with the
    snapshot's time zone, locale and viewport."""
    return routed_profile(server, server.snapshot.manifest.look)
