"""Running a benchmark past one machine: the same run on Ray, from an embedded node to a cluster.

backend.py    which executor a command uses (local pool or Ray)    cluster.py   joining or starting Ray
executor.py   episodes as Ray tasks: deadlines, retries, records   worker.py    what a Ray worker runs
artifacts.py  snapshot and extension shipped by content hash       signing.py   records signed per run

Each name is imported from its module on first use: the backend's options are `run --help`'s, and
the cluster's modules load the controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.distributed.backend import Backend, BackendOptions, local_parallel, open_backend
    from susbench.distributed.cluster import RayCluster

__getattr__ = lazy_names(
    __name__,
    {
        "backend": ("Backend", "BackendOptions", "local_parallel", "open_backend"),
        "cluster": ("RayCluster",),
    },
)

__all__ = ["Backend", "BackendOptions", "RayCluster", "local_parallel", "open_backend"]
