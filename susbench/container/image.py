"""The browser image: a registry-free Debian base (`susbench image base`) and the build of the Dockerfile.

Where a registry is reachable the Dockerfile's `FROM debian:bookworm-slim` is pulled as usual.
Where none is, `make_base` builds the same kind of base with `debootstrap --variant=minbase`,
trimmed the way Debian's slim images are, and imports it under a local tag that `build_image`
passes as the Dockerfile's `BASE`. The build itself needs only the Debian and Python registries.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from susbench import __version__
from susbench.container.runtime import ContainerError, ContainerRuntime, ImageInfo
from susbench.core.models import Frozen
from susbench.core.paths import REPO_ROOT

IMAGE_ENV = "SUSBENCH_IMAGE"
DEFAULT_IMAGE = os.environ.get(IMAGE_ENV) or f"localhost/susbench-browser:{__version__}"
"""The browser image `image build` makes and `run --browser container` uses; `$SUSBENCH_IMAGE` names
another (e.g. one per checkout, where several share one engine)."""
BASE_IMAGE = "localhost/susbench-base:bookworm"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")

# The Dockerfile's pinned packages and the build argument that pins each one.
PINNED_PACKAGES = {
    "chromium": "CHROMIUM_VERSION",
    "fonts-dejavu-core": "FONTS_DEJAVU_CORE_VERSION",
    "fonts-liberation": "FONTS_LIBERATION_VERSION",
}
# Where `susbench browser serve` in the image finds its snapshot and the host finds its sockets.
SNAPSHOT_MOUNT = "/snapshot.wacz"
SOCKET_MOUNT = "/run/susbench"
LABEL_VERSION = "org.opencontainers.image.version"
LABEL_CHROMIUM = "io.susbench.chromium"
LABEL_FONTS = "io.susbench.fonts"

# What Debian's slim images leave out (docs, man pages, translations), kept out of later installs too.
SLIM_DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
"""
SLIM_TRIMMED = ("usr/share/man", "usr/share/groff", "usr/share/info", "usr/share/lintian", "usr/share/linda")
TAR_EXCLUDES = (
    "./dev/*",
    "./proc/*",
    "./sys/*",
    "./run/*",
    "./tmp/*",
    "./var/cache/apt/*",
    "./var/lib/apt/lists/*",
)


class BuildResult(Frozen):
    """A finished `susbench image build`: the image, how long it took, the arguments it got."""

    image: ImageInfo
    seconds: float
    buildargs: dict[str, str]


def debian_sources(suite: str, mirror: str = MIRROR, security: str = SECURITY_MIRROR) -> str:
    """deb822 sources as in Debian's images: the release, its updates, and security."""
    return (
        f"Types: deb\nURIs: {mirror}\nSuites: {suite} {suite}-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        f"Types: deb\nURIs: {security}\nSuites: {suite}-security\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def make_base(
    runtime: ContainerRuntime,
    tag: str = BASE_IMAGE,
    suite: str = SUITE,
    mirror: str = MIRROR,
    on_line: Callable[[str], None] = lambda line: None,
) -> ImageInfo:
    """debootstrap a minbase Debian, trim it like debian:*-slim, and import it as `tag`."""
    if os.geteuid() != 0:
        raise ContainerError("susbench image base runs debootstrap, which needs root")
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ContainerError("susbench image base needs debootstrap: apt-get install -y debootstrap")
    with tempfile.TemporaryDirectory(prefix="susbench-base-") as work:
        root = Path(work) / "rootfs"
        on_line(f"debootstrap --variant=minbase {suite} from {mirror}")
        _run([debootstrap, "--variant=minbase", suite, str(root), mirror], f"debootstrap {suite}")
        _slim(root, suite, mirror)
        tarball = Path(work) / "rootfs.tar"
        excludes = [f"--exclude={pattern}" for pattern in TAR_EXCLUDES]
        _run(["tar", "--numeric-owner", "-C", str(root), *excludes, "-cf", str(tarball), "."], "tar")
        on_line(f"importing {tarball.stat().st_size / 1e6:.0f} MB as {tag}")
        return runtime.import_rootfs(tarball, tag)


def _slim(root: Path, suite: str, mirror: str) -> None:
    """What Debian's image build does after debootstrap: sources, no docs, no host leftovers."""
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(debian_sources(suite, mirror))
    (root / "etc/dpkg/dpkg.cfg.d/slim").write_text(SLIM_DPKG_EXCLUDES)
    for folder in SLIM_TRIMMED:
        shutil.rmtree(root / folder, ignore_errors=True)
    for locale in (root / "usr/share/locale").glob("*"):
        if locale.name != "locale.alias":
            shutil.rmtree(locale, ignore_errors=True)
    for doc in (root / "usr/share/doc").glob("*/*"):
        if doc.name != "copyright":
            shutil.rmtree(doc) if doc.is_dir() else doc.unlink()
    for leftover in ("etc/resolv.conf", "etc/hostname"):  # the engine provides its own
        (root / leftover).write_text("")


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-15:])
        raise ContainerError(f"{what} failed (exit {result.returncode}):\n{tail}")


def dockerfile_args(context: Path = REPO_ROOT) -> dict[str, str]:
    """The Dockerfile's `ARG NAME=default` values (the pins users get with a plain `docker build`)."""
    dockerfile = context / "Dockerfile"
    if not dockerfile.is_file():
        raise ContainerError(f"{dockerfile}: no such file; `susbench image build` needs a source checkout")
    pattern = re.compile(r"^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$")
    found = (pattern.match(line) for line in dockerfile.read_text().splitlines())
    return {match[1]: match[2] for match in found if match}


def host_debian_suite() -> str | None:
    """The host's Debian codename (None on other systems)."""
    try:
        fields = dict(
            line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
        )
    except OSError:
        return None
    if fields.get("ID", "").strip('"') != "debian":
        return None
    return fields.get("VERSION_CODENAME", "").strip('"') or None


def host_package_versions(packages: list[str]) -> dict[str, str]:
    """Versions of those Debian packages installed on this host (the ones that are)."""
    if shutil.which("dpkg-query") is None:
        return {}
    versions = {}
    for package in packages:
        result = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}|${Version}", package],
            capture_output=True,
            text=True,
            check=False,
        )
        status, _, version = result.stdout.partition("|")
        if result.returncode == 0 and status.endswith(" installed") and version:
            versions[package] = version
    return versions


def pinned_versions(context: Path = REPO_ROOT, suite: str = SUITE) -> dict[str, str]:
    """Build arguments pinning Chromium and the fonts: the host's own versions when the host runs
    the same Debian release (so host and container draw the same pixels), else the Dockerfile's."""
    args = dockerfile_args(context)
    pins = {arg: args[arg] for arg in PINNED_PACKAGES.values() if arg in args}
    if host_debian_suite() == suite:
        for package, version in host_package_versions(list(PINNED_PACKAGES)).items():
            pins[PINNED_PACKAGES[package]] = version
    return pins


def host_ca_bundle(directory: Path = HOST_CA_DIR) -> str:
    """The certificates this machine's administrator added (Debian's local CA folder), as PEM text.

    pip inside the build trusts them too, which is what a TLS-intercepting proxy needs.
    """
    if not directory.is_dir():
        return ""
    return "".join(path.read_text() for path in sorted(directory.glob("**/*.crt")))


def build_image(
    runtime: ContainerRuntime,
    tag: str = DEFAULT_IMAGE,
    base: str | None = None,
    context: Path = REPO_ROOT,
    ca_bundle: str = "",
    pins: dict[str, str] | None = None,
    on_line: Callable[[str], None] = lambda line: None,
    no_cache: bool = False,
) -> BuildResult:
    """Build the Dockerfile in `context` as `tag` through the engine's API.

    `base` defaults to the local debootstrap base when it exists, else the Dockerfile's own
    (pulled from a registry).
    """
    if base is None and runtime.image(BASE_IMAGE) is not None:
        base = BASE_IMAGE
    buildargs = {"SUSBENCH_VERSION": __version__, **(pins if pins is not None else pinned_versions(context))}
    if base is not None:
        buildargs["BASE"] = base
    started = time.monotonic()
    image = runtime.build(context, tag, {**buildargs, "BUILD_CA_CERTS": ca_bundle}, on_line, no_cache)
    return BuildResult(image=image, seconds=time.monotonic() - started, buildargs=buildargs)
