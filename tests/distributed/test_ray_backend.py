"""The Ray backend's parts that need no cluster: option errors, artifacts shipped by content hash
(on the bundled snapshot and the real extension build), and signed records."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

import pytest

from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import RunOptions, default_snapshot, plan_episodes
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import error_record
from susbench.core.digests import tree_sha256
from susbench.core.errors import SusbenchError
from susbench.distributed import BackendOptions, RayCluster, local_parallel, open_backend
from susbench.distributed.artifacts import ArtifactError, localize, pack
from susbench.distributed.signing import SignedRecord, UnverifiedRecord, new_run_key, open_record, sign_record
from susbench.snapshot import Snapshot
from tests.support.ray_cluster import require_ray


class ObjectStore:
    """The object store's contract for artifacts (put bytes, get them back by reference), counting gets."""

    def __init__(self) -> None:
        self.objects: dict[int, bytes] = {}
        self.gets = 0
        self._ids = count()

    def put(self, data: bytes) -> int:
        ref = next(self._ids)
        self.objects[ref] = data
        return ref

    def get(self, ref: int) -> bytes:
        self.gets += 1
        return self.objects[ref]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> WorkerSetup:
    snapshot = default_snapshot()
    extension = build_extension()
    with Snapshot.open(snapshot) as opened:
        digest = opened.sha256
    return WorkerSetup(
        mode="snapshot",
        snapshot=snapshot,
        snapshot_sha256=digest,
        extension_dir=extension,
        extension_sha256=tree_sha256(extension),
        tmp_dir=tmp_path_factory.mktemp("tmp"),
    )


def test_artifacts_reach_a_node_once_and_are_verified(setup: WorkerSetup, tmp_path: Path) -> None:
    store = ObjectStore()
    shipment, refs = pack(setup, "0.1.0", store.put)
    assert {artifact.field for artifact in shipment.artifacts} == {"snapshot", "extension_dir"}
    node_setup, fetched = localize(shipment, refs, store.get, tmp_path)
    assert fetched == ["snapshot", "extension_dir"]
    assert node_setup.snapshot == tmp_path / f"{setup.snapshot_sha256}.wacz"
    assert node_setup.snapshot.read_bytes() == setup.snapshot.read_bytes()  # type: ignore[union-attr]
    assert tree_sha256(node_setup.extension_dir) == setup.extension_sha256
    gets = store.gets
    again, fetched = localize(shipment, refs, store.get, tmp_path)
    assert (again, fetched, store.gets) == (node_setup, [], gets)
    # A damaged copy on the node fails its digest and is fetched again.
    (node_setup.extension_dir / "manifest.json").write_text("{}")
    _, fetched = localize(shipment, refs, store.get, tmp_path)
    assert fetched == ["extension_dir"]
    assert tree_sha256(node_setup.extension_dir) == setup.extension_sha256


def test_a_corrupted_shipment_is_refused(setup: WorkerSetup, tmp_path: Path) -> None:
    store = ObjectStore()
    shipment, refs = pack(setup, "0.1.0", store.put)
    first = refs["snapshot"][0]
    store.objects[first] = b"X" + store.objects[first][1:]
    with pytest.raises(
        ArtifactError, match=r"snapshot: the copy shipped to this node has sha256 \w+; expected"
    ):
        localize(shipment, refs, store.get, tmp_path)
    assert not any(tmp_path.glob("*.wacz"))


def test_a_snapshot_changed_since_the_run_started_is_not_shipped(setup: WorkerSetup, tmp_path: Path) -> None:
    assert setup.snapshot is not None
    copy = tmp_path / "changed.wacz"
    shutil.copyfile(setup.snapshot, copy)
    with open(copy, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ArtifactError, match=r"changed.wacz: changed since the run started"):
        pack(setup.model_copy(update={"snapshot": copy}), "0.1.0", ObjectStore().put)


def test_records_are_stored_only_with_their_signature_and_episode(tmp_path: Path) -> None:
    injections = {injection.id: injection for injection in load_injections()}
    tasks = select_tasks(load_tasks(injections=injections), "voltcart-laptop-cart", injections)
    (job,) = plan_episodes("run-1", tasks, injections, RunOptions(operator="naive", db=tmp_path / "r.duckdb"))
    episode_id = job.episode.id
    record = error_record(job, datetime.now(UTC), "boom")
    key = new_run_key()
    signed = sign_record(record, key)
    assert open_record(signed, key, episode_id) == record
    with pytest.raises(UnverifiedRecord, match="failed its signature check"):
        open_record(signed, new_run_key(), episode_id)
    forged = SignedRecord(payload=signed.payload.replace('"boom"', '"fine"'), signature=signed.signature)
    assert forged.payload != signed.payload
    with pytest.raises(UnverifiedRecord, match="failed its signature check"):
        open_record(forged, key, episode_id)
    with pytest.raises(UnverifiedRecord, match=f"returned the record of {episode_id}"):
        open_record(signed, key, "ep-other")


def test_backend_options_that_contradict_each_other() -> None:
    with pytest.raises(SusbenchError, match="--parallel sizes the local worker pool"):
        local_parallel(BackendOptions(backend="ray"), 2, default=1)
    assert local_parallel(BackendOptions(backend="ray"), None, default=1) == 1
    assert local_parallel(BackendOptions(), 3, default=1) == 3
    with (
        pytest.raises(SusbenchError, match="need --backend ray"),
        open_backend(BackendOptions(browsers_per_node=2)),
    ):
        pass


def test_ray_missing_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets where the extra is not installed
    with pytest.raises(SusbenchError, match=r"--backend ray needs Ray.*pip install 'susbench-replay\[ray\]'"):
        RayCluster().__enter__()


def test_an_address_nobody_answers_at_is_refused_at_once() -> None:
    require_ray()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"  # bound, never listening: refused
        # Our own probe says so (Ray would retry for minutes before saying it cannot join).
        with pytest.raises(SusbenchError, match=f"--ray-address {address}: nothing answers there"):
            RayCluster(address).__enter__()


def test_cli_refuses_parallel_with_ray(tmp_path: Path) -> None:
    command = [
        "run",
        "--operator",
        "naive",
        "--backend",
        "ray",
        "--parallel",
        "2",
        "--db",
        str(tmp_path / "r"),
    ]
    result = subprocess.run(
        [sys.executable, "-m", "susbench", *command], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2
    assert "--parallel sizes the local worker pool" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
