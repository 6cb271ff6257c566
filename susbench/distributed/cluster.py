"""The connection to Ray for the length of a command: an embedded single node started for it, or an
existing cluster joined by address.

Ray is an optional extra and is imported only here, when `--backend ray` is asked for. A node
declares how many browsers it can run as a custom `browser` resource; every episode task needs
one, so no node runs more episodes at once than it has browsers for.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
from types import ModuleType

from susbench.controller.environment import WorkerSetup
from susbench.core.errors import SusbenchError
from susbench.distributed.executor import BROWSER, NODE_HINT, RayExecutor

CONNECT_TIMEOUT_S = 5.0
INSTALL_HINT = "pip install 'susbench-replay[ray]' (in a checkout: .venv/bin/pip install -e '.[ray]')"


def import_ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise SusbenchError(
            f"--backend ray needs Ray, an optional extra; install it with {INSTALL_HINT}"
        ) from None


def _check_reachable(address: str) -> None:
    """Refuse a HOST:PORT nobody answers at in seconds; Ray itself keeps retrying for minutes."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto", a ray:// client address: Ray resolves those itself
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise SusbenchError(
            f"--ray-address {address}: nothing answers there ({exc.strerror or exc}); expected the address "
            "`ray start --head` prints (HEAD:PORT)"
        ) from None


class RayCluster:
    """Connected while open; `executor` opens a `RayExecutor` per run (an `ExecutorFactory`)."""

    def __init__(self, address: str | None = None, browsers_per_node: int | None = None) -> None:
        self._address = address or os.environ.get("RAY_ADDRESS") or None
        self._browsers_per_node = browsers_per_node
        self._ray: ModuleType | None = None

    def __enter__(self) -> RayCluster:
        ray = import_ray()
        if self._address is None:
            ray.init(
                resources={BROWSER: self._browsers_per_node or os.cpu_count() or 1},
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
            self._ray = ray
        else:
            self._join(ray, self._address)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None

    def _join(self, ray: ModuleType, address: str) -> None:
        if self._browsers_per_node is not None:
            raise SusbenchError(
                "--browsers-per-node sets the browsers of the node `susbench run` starts itself; the nodes "
                f"of the cluster at {address} declare theirs with {NODE_HINT}"
            )
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; the user needs one line
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SusbenchError(
                f"--ray-address {address}: cannot join the Ray cluster: {first_line}"
            ) from None
        self._ray = ray
        if self.browsers() == 0:
            self.__exit__()
            raise SusbenchError(
                f"--ray-address {address}: no node of the cluster offers a '{BROWSER}' resource; "
                f"expected nodes started with {NODE_HINT}"
            )

    def browsers(self) -> int:
        """Browsers on the cluster's live nodes right now."""
        ray = self._connected()
        return int(ray.cluster_resources().get(BROWSER, 0))

    def executor(self, setup: WorkerSetup, size: int) -> RayExecutor:
        """An executor for one run. `size` (the local pool's worker count) does not apply: the
        cluster runs as many episodes at once as its nodes have browsers."""
        return RayExecutor(self._connected(), setup, self.browsers)

    def _connected(self) -> ModuleType:
        if self._ray is None:
            raise RuntimeError("use RayCluster as a context manager")
        return self._ray
