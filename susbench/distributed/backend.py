"""Which executor runs a command's episodes: local worker processes, or Ray (embedded or a cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.models import Backend, Frozen

# The pools (the controller, Ray) are imported when a backend opens: `run --help` reads only the options.
if TYPE_CHECKING:
    from susbench.controller.pool import ExecutorFactory


class BackendOptions(Frozen):
    """Where episodes run; the results do not depend on it (it is not part of the run's identity)."""

    backend: Backend = Field(
        default="local",
        description="local: worker processes on this machine; ray: Ray tasks on an embedded node or a "
        "cluster",
    )
    ray_address: str | None = Field(
        default=None,
        description="join this Ray cluster (default: $RAY_ADDRESS; neither: start an embedded node)",
    )
    browsers_per_node: int | None = Field(
        default=None, ge=1, le=1024, description="browsers of the embedded Ray node (default: its CPU count)"
    )


@contextmanager
def open_backend(options: BackendOptions) -> Iterator[ExecutorFactory]:
    """The executor factory for the command's runs, connected (to Ray) for as long as it is open."""
    if options.backend == "local":
        if options.ray_address is not None or options.browsers_per_node is not None:
            raise SusbenchError("--ray-address and --browsers-per-node need --backend ray")
        from susbench.controller.pool import LocalProcessPool

        yield LocalProcessPool
        return
    from susbench.distributed.cluster import RayCluster

    with RayCluster(options.ray_address, options.browsers_per_node) as cluster:
        yield cluster.executor


def local_parallel(options: BackendOptions, parallel: int | None, default: int) -> int:
    """Episodes at once for the local pool; a Ray cluster's browsers set that for Ray instead."""
    if options.backend == "ray" and parallel is not None:
        raise SusbenchError(
            "--parallel sizes the local worker pool; with --backend ray a node runs as many episodes at "
            "once as it has browsers (--browsers-per-node for the embedded node)"
        )
    return parallel or default
