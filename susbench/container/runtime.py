"""The container engine behind a small Protocol: Docker, or Podman's Docker-compatible API.

Everything goes through the Docker Engine API with the `docker` SDK, which Docker serves natively
and Podman serves with `podman system service`; `DOCKER_HOST` picks the engine. Podman's
peculiarities stay in here (an import ignores the tag it is given; the default ulimits can exceed
the machine's hard limits), so the rest of the package sees one engine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen

PODMAN_SOCKET = Path("/run/podman/podman.sock")
DOCKER_SOCKET = Path("/var/run/docker.sock")
ENGINE_HELP = (
    "no container engine answers: start Docker, or serve Podman's Docker API as root with "
    f"`podman system service --time=0 unix://{PODMAN_SOCKET}` (ci/podman-service.sh start) and set "
    f"DOCKER_HOST=unix://{PODMAN_SOCKET}"
)
LOW_NOFILE = 4096


class ContainerError(SusbenchError):
    """The container engine refused or failed an operation; the message names image or container."""


class ImageInfo(Frozen):
    """A local image as the engine reports it."""

    id: str
    tags: tuple[str, ...]
    labels: dict[str, str]
    size: int = Field(description="bytes, as the engine counts them")


class Mount(Frozen):
    """A host path bound into the container."""

    source: Path
    target: str
    read_only: bool = True


class ContainerSpec(Frozen):
    """Everything that decides how one container is started.

    There is no network setting: every container gets `--network none` (a loopback interface and
    no route out), so an airgapped run cannot be switched off by a wrong option.
    """

    image: str
    command: tuple[str, ...]
    mounts: tuple[Mount, ...] = ()
    labels: dict[str, str] = {}
    environment: dict[str, str] = {}


class ContainerRuntime(Protocol):
    """What SusBench needs from a container engine."""

    def import_rootfs(self, tarball: Path, tag: str) -> ImageInfo: ...
    def build(
        self,
        context: Path,
        tag: str,
        buildargs: dict[str, str],
        on_line: Callable[[str], None],
        no_cache: bool = False,
    ) -> ImageInfo: ...
    def image(self, tag: str) -> ImageInfo | None: ...
    def start(self, spec: ContainerSpec) -> str: ...
    def exec(self, container_id: str, command: list[str], user: str = "") -> tuple[int, str]: ...
    def state(self, container_id: str) -> str: ...
    def logs(self, container_id: str) -> str: ...
    def remove(self, container_id: str) -> None: ...


def default_base_url() -> str | None:
    """DOCKER_HOST, else Docker's socket, else Podman's root socket (None: let the SDK decide)."""
    if os.environ.get("DOCKER_HOST"):
        return None
    if not DOCKER_SOCKET.exists() and PODMAN_SOCKET.exists():
        return f"unix://{PODMAN_SOCKET}"
    return None


class DockerApiRuntime:
    """The Docker Engine API, spoken by Docker and by `podman system service`."""

    def __init__(self, base_url: str | None = None) -> None:
        import docker

        self._errors = docker.errors
        url = base_url or default_base_url()
        try:
            client = docker.DockerClient(base_url=url) if url else docker.from_env()
            client.ping()
        except docker.errors.DockerException as exc:
            raise ContainerError(f"{ENGINE_HELP} ({_first_line(exc)})") from None
        self._client = client

    def _fail(self, what: str, exc: Exception) -> ContainerError:
        explanation = getattr(exc, "explanation", None) or str(exc)
        return ContainerError(f"{what}: {_first_line(explanation)}")

    def import_rootfs(self, tarball: Path, tag: str) -> ImageInfo:
        """`docker import` of a root file system tarball, tagged `tag`."""
        try:
            answer = self._client.api.import_image_from_file(str(tarball))
            image_id = _last_status(answer)["id"]
            repository, _, name = tag.rpartition(":")
            self._client.images.get(image_id).tag(repository, name)  # Podman ignores import's tag
        except (self._errors.DockerException, KeyError, ValueError) as exc:
            raise self._fail(f"importing {tarball} as {tag}", exc) from None
        found = self.image(tag)
        if found is None:
            raise ContainerError(f"importing {tarball}: the engine did not tag the image {tag}")
        return found

    def build(
        self,
        context: Path,
        tag: str,
        buildargs: dict[str, str],
        on_line: Callable[[str], None],
        no_cache: bool = False,
    ) -> ImageInfo:
        """Build `context`/Dockerfile (honouring .dockerignore), streaming the build log to `on_line`."""
        tail: list[str] = []
        try:
            for chunk in self._client.api.build(
                path=str(context),
                tag=tag,
                buildargs=buildargs,
                rm=True,
                forcerm=True,
                nocache=no_cache,
                decode=True,
            ):
                for line in _build_lines(chunk):
                    tail = [*tail[-30:], line]
                    on_line(line)
                if "error" in chunk:
                    log = "\n".join(tail)
                    raise ContainerError(f"building {tag} from {context}/Dockerfile failed:\n{log}")
        except self._errors.DockerException as exc:
            raise self._fail(f"building {tag} from {context}", exc) from None
        found = self.image(tag)
        if found is None:
            raise ContainerError(f"building {tag}: the engine reported success but has no such image")
        return found

    def image(self, tag: str) -> ImageInfo | None:
        try:
            image = self._client.images.get(tag)
        except self._errors.ImageNotFound:
            return None
        except self._errors.DockerException as exc:
            raise self._fail(f"inspecting image {tag}", exc) from None
        attrs = image.attrs
        return ImageInfo(
            id=image.id,
            tags=tuple(image.tags),
            labels=dict((attrs.get("Config") or {}).get("Labels") or {}),
            size=int(attrs.get("Size") or 0),
        )

    def start(self, spec: ContainerSpec) -> str:
        """Create and start a detached container; its id."""
        from docker.types import Mount as DockerMount
        from docker.types import Ulimit

        mounts = [
            DockerMount(target=m.target, source=str(m.source), type="bind", read_only=m.read_only)
            for m in spec.mounts
        ]
        try:
            container = self._client.containers.run(
                spec.image,
                list(spec.command),
                detach=True,
                mounts=mounts,
                network_mode="none",
                labels=spec.labels,
                environment=spec.environment,
                ulimits=[
                    Ulimit(name="nofile", soft=LOW_NOFILE, hard=LOW_NOFILE),
                    Ulimit(name="nproc", soft=LOW_NOFILE, hard=LOW_NOFILE),
                ],
            )
        except self._errors.ImageNotFound:
            raise ContainerError(
                f"image {spec.image} not found: build it with `susbench image build --tag {spec.image}`"
            ) from None
        except self._errors.DockerException as exc:
            raise self._fail(f"starting a container of {spec.image}", exc) from None
        return str(container.id)

    def exec(self, container_id: str, command: list[str], user: str = "") -> tuple[int, str]:
        """Run `command` in a running container (as `user`, default the image's): exit code and output."""
        try:
            result = self._client.containers.get(container_id).exec_run(command, user=user)
        except self._errors.DockerException as exc:
            raise self._fail(f"exec in container {container_id[:12]}", exc) from None
        return int(result.exit_code), result.output.decode("utf-8", "replace")

    def state(self, container_id: str) -> str:
        """Docker's words: "created", "running", "exited"...; "gone" when there is no such container.

        Podman's "stopped" (exited, not yet cleaned up) is "exited".
        """
        try:
            status = str(self._client.containers.get(container_id).status)
        except self._errors.NotFound:
            return "gone"
        except self._errors.DockerException as exc:
            raise self._fail(f"inspecting container {container_id[:12]}", exc) from None
        return "exited" if status == "stopped" else status

    def logs(self, container_id: str) -> str:
        try:
            return self._client.containers.get(container_id).logs().decode("utf-8", "replace")
        except self._errors.DockerException as exc:
            return f"(no logs: {_first_line(exc)})"

    def remove(self, container_id: str) -> None:
        """Kill and remove; a container that is already gone is fine."""
        try:
            self._client.containers.get(container_id).remove(force=True)
        except self._errors.NotFound:
            return
        except self._errors.DockerException as exc:
            raise self._fail(f"removing container {container_id[:12]}", exc) from None


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__


def _last_status(answer: Any) -> dict[str, Any]:
    """The last JSON object of an import's streamed answer."""
    lines = [line for line in str(answer).splitlines() if line.strip()]
    return dict(json.loads(lines[-1]))


def _build_lines(chunk: dict[str, Any]) -> Iterator[str]:
    text = chunk.get("stream") or chunk.get("error") or ""
    for line in str(text).splitlines():
        if line.strip():
            yield line.rstrip()
