"""The containerized browser: image build, the container runtime, and the container backend.

from susbench.container import ContainerBackend
with ContainerBackend(Path("snapshots/localweb-2026-11-29.wacz")) as backend:
    with backend.launch(BrowserProfile()) as session:     # a ContainerSession
        page = session.context.new_page()                 # the default context: the extension runs
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.container.backend import BrowserContainer, ContainerBackend, ContainerSession
    from susbench.container.image import BASE_IMAGE, DEFAULT_IMAGE, build_image, make_base
    from susbench.container.runtime import ContainerError, ContainerRuntime, DockerApiRuntime

__getattr__ = lazy_names(
    __name__,
    {
        "backend": (
            "BrowserContainer",
            "ContainerBackend",
            "ContainerSession",
        ),
        "image": (
            "BASE_IMAGE",
            "DEFAULT_IMAGE",
            "build_image",
            "make_base",
        ),
        "runtime": (
            "ContainerError",
            "ContainerRuntime",
            "DockerApiRuntime",
        ),
    },
)

__all__ = [
    "BASE_IMAGE",
    "DEFAULT_IMAGE",
    "BrowserContainer",
    "ContainerBackend",
    "ContainerError",
    "ContainerRuntime",
    "ContainerSession",
    "DockerApiRuntime",
    "build_image",
    "make_base",
]
