"""Which executor runs a command's episodes: local worker processes, or Ray (embedded or a cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import Field

from susbench.controller.pool import ExecutorFactory, LocalProcessPool
from susbench.core.errors import SusbenchError
from susbench.core.models import Backend, Frozen
from susbench.distributed.cluster import RayCluster


class BackendOptions(Frozen):
    """Where episodes run; the results do not depend on it (it is not part of the run's identity)."""

    backend: Backend = "local"
    ray_address: str | None = None
    browsers_per_node: int | None = Field(default=None, ge=1, le=1024)


@contextmanager
def open_backend(options: BackendOptions) -> Iterator[ExecutorFactory]:
    """The executor factory for the command's runs, connected (to Ray) for as long as it is open."""
    if options.backend == "local":
        if options.ray_address is not None or options.browsers_per_node is not None:
            raise SusbenchError("--ray-address and --browsers-per-node need --backend ray")
        yield LocalProcessPool
        return
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
