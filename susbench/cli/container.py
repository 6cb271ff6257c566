"""`susbench image base|build|info` on the host, and `susbench browser [serve]`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from susbench.container.image import (
    BASE_IMAGE,
    DEFAULT_IMAGE,
    MIRROR,
    SNAPSHOT_MOUNT,
    SOCKET_MOUNT,
    SUITE,
    build_image,
    host_ca_bundle,
    make_base,
)
from susbench.container.runtime import DockerApiRuntime
from susbench.core.errors import SusbenchError

# The browser's parts (Playwright, the replayer, the extension's builder) are imported by its commands.

image_app = typer.Typer(no_args_is_help=True)
browser_app = typer.Typer()


@image_app.command("base")
def base(
    tag: Annotated[str, typer.Option(help="tag of the base image")] = BASE_IMAGE,
    suite: Annotated[str, typer.Option(help="Debian release")] = SUITE,
    mirror: Annotated[str, typer.Option(help="Debian mirror")] = MIRROR,
    force: Annotated[bool, typer.Option("--force", help="make it again even if the tag exists")] = False,
) -> None:
    """Make the Debian base without a registry (root and debootstrap needed)."""
    runtime = DockerApiRuntime()
    image = None if force else runtime.image(tag)
    if image is None:
        image = make_base(runtime, tag=tag, suite=suite, mirror=mirror, on_line=typer.echo)
    typer.echo(f"{tag}  {image.id[:19]}  {image.size / 1e6:.0f} MB")


@image_app.command("build")
def build(
    tag: Annotated[str, typer.Option(help="tag of the browser image")] = DEFAULT_IMAGE,
    base: Annotated[
        str | None,
        typer.Option(help=f"base image (default: {BASE_IMAGE} if it exists, else the Dockerfile's)"),
    ] = None,
    ca_cert: Annotated[
        list[Path] | None,
        typer.Option(
            help="PEM certificate pip trusts during the build (default: this machine's "
            "/usr/local/share/ca-certificates)",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="print only the result")] = False,
) -> None:
    """Build the Dockerfile through the Docker API (Docker, or `podman system service`)."""
    bundle = "".join(path.read_text() for path in ca_cert) if ca_cert else host_ca_bundle()
    result = build_image(
        DockerApiRuntime(),
        tag=tag,
        base=base,
        ca_bundle=bundle,
        on_line=(lambda _: None) if quiet else typer.echo,
    )
    labels = result.image.labels
    typer.echo(
        f"{tag}  {result.image.id[:19]}  {result.image.size / 1e6:.0f} MB  built in {result.seconds:.0f} s  "
        f"(chromium {labels.get('io.susbench.chromium')}, {labels.get('io.susbench.fonts')})"
    )


@image_app.command("info")
def info(tag: Annotated[str, typer.Option(help="tag of the browser image")] = DEFAULT_IMAGE) -> None:
    """Print an image's id, size and labels (project, Chromium and font versions) as JSON."""
    image = DockerApiRuntime().image(tag)
    if image is None:
        raise SusbenchError(f"image {tag} not found: build it with `susbench image build --tag {tag}`")
    typer.echo(json.dumps(image.model_dump(), indent=2))


@browser_app.callback(invoke_without_command=True)
def browser(
    ctx: typer.Context,
    install: Annotated[
        bool, typer.Option("--install", help="apt-get install chromium when none is found")
    ] = False,
) -> None:
    """Find Chromium (installing Debian's package as root if asked) and print it; or `serve` it."""
    if ctx.invoked_subcommand is not None:
        return
    from susbench.browser import chromium_version, find_chromium  # Playwright's driver, for its download

    executable = find_chromium(install=install)
    typer.echo(f"{executable}  ({chromium_version(executable)})")


@browser_app.command("serve")
def serve(
    snapshot: Annotated[Path, typer.Option(help="snapshot to replay (mounted read-only)")] = Path(
        SNAPSHOT_MOUNT
    ),
    socket_dir: Annotated[Path, typer.Option(help="folder for cdp.sock and control.sock")] = Path(
        SOCKET_MOUNT
    ),
    extension: Annotated[
        Path | None, typer.Option(help="built extension (default: $SUSBENCH_EXTENSION, else built now)")
    ] = None,
    launch: Annotated[bool, typer.Option(help="start a browser at once (else on the first request)")] = True,
    hold_timeout: Annotated[
        float,
        typer.Option(
            help="stop unless a host holds the control socket within this many seconds, and "
            "when it lets go (0: serve until stopped)"
        ),
    ] = 0,
) -> None:
    """Inside the browser container: the replayer and Chromium, reachable only through SOCKET_DIR."""
    from susbench.container.serve import BrowserServer

    if not socket_dir.is_dir():
        raise SusbenchError(f"--socket-dir {socket_dir}: no such folder (mount one at {SOCKET_MOUNT})")
    extension_dir = extension or _default_extension()
    BrowserServer(snapshot, socket_dir, extension_dir, hold_timeout or None).run(launch)


def _default_extension() -> Path:
    configured = os.environ.get("SUSBENCH_EXTENSION")
    if configured:
        return Path(configured)
    from susbench.catalog.injections import build_extension, load_injections

    return build_extension(load_injections())
