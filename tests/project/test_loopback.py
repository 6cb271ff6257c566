"""Loopback only: every server the project starts listens on 127.0.0.1 unless told otherwise.

Found by grepping the code for listening sockets: the local web, the replayer in both modes, the
recording proxy, the model servers of the agent tests, the container's CDP relay, Chromium's CDP port
(operators that ask for it), the remote seat of `run --serve` (its token gate is its one public
socket: x11vnc and Xvfb have no TCP socket, websockify is on loopback behind the gate), and the
command lines `web serve`, `replay serve`, mitmdump with our addon, `agents serve` (the local model
server) and `browser serve` (the browser container's one process, run here on the host: its replayer
and Chromium's DevTools port listen inside, the host reaches them only through the socket folder).
Each is started for real and its listening sockets are read from /proc (the kernel's own table, by
socket inode of the process), so what is checked is what is bound.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.agents.demonstration import Demonstration, DemonstrationMove, DemonstrationSet
from susbench.agents.servers.base import ModelServer
from susbench.browser import LocalBackend, routed_profile
from susbench.catalog.injections import build_extension, load_injections
from susbench.container.relay import TcpToUnixRelay
from susbench.controller import default_snapshot
from susbench.core.models import Viewport
from susbench.core.paths import REPO_ROOT
from susbench.people.remote import RemoteSeat, SeatOptions
from susbench.people.screen import APT_PACKAGES as PEOPLE_PACKAGES
from susbench.recorder.proxy import RecordingProxy
from susbench.replayer.factory import replay_server
from susbench.web import LocalWeb
from tests.support.processes import descendants

LISTEN = "0A"
LOOPBACK = {"127.0.0.1", "::1"}
START_TIMEOUT_S = 90.0


def _address(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1]), int(port, 16)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    address = socket.inet_ntop(socket.AF_INET6, words)
    return address.removeprefix("::ffff:") if address.startswith("::ffff:") else address, int(port, 16)


def _listening_inodes() -> dict[str, tuple[str, int]]:
    """Every listening TCP socket on the machine: inode -> (address, port)."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN:
                found[fields[9]] = _address(fields[1])
    return found


def listening(pid: int, with_children: bool = False) -> set[tuple[str, int]]:
    """(address, port) of each TCP socket that `pid` (and, asked, every process below it) listens on."""
    pids = [pid, *(info.pid for info in descendants(pid))] if with_children else [pid]
    sockets = _listening_inodes()
    found = set()
    for each in pids:
        try:
            fds = list(Path(f"/proc/{each}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            inode = target.removeprefix("socket:[").removesuffix("]")
            if target.startswith("socket:[") and inode in sockets:
                found.add(sockets[inode])
    return found


def on_port(port: int) -> set[str]:
    """The addresses this process listens on at `port`."""
    return {address for address, bound in listening(os.getpid()) if bound == port}


@pytest.mark.e2e  # Chromium with its CDP port
def test_every_in_process_server_listens_on_loopback_only(web_playwright: Playwright, tmp_path: Path) -> None:
    snapshot = default_snapshot()
    with ExitStack() as stack:
        servers = {
            "local web": stack.enter_context(LocalWeb(port=0)).port,
            "direct replayer": stack.enter_context(replay_server(snapshot, "direct")).port,
            "replay proxy": stack.enter_context(replay_server(snapshot, "proxy")).port,
            "recording proxy": stack.enter_context(RecordingProxy()).port,
            "model server": stack.enter_context(ModelServer([])).port,
            "container CDP relay": stack.enter_context(TcpToUnixRelay(tmp_path / "cdp.sock")).port,
        }
        for name, port in servers.items():
            assert on_port(port) == {"127.0.0.1"}, name
        replay = stack.enter_context(replay_server(snapshot, "direct"))
        profile = routed_profile(replay, cdp=True)
        session = stack.enter_context(LocalBackend(web_playwright).launch(profile))
        assert session.cdp_endpoint is not None
        cdp_port = int(session.cdp_endpoint.rsplit(":", 1)[1].split("/")[0])
        chromium = {address for address, port in _listening_inodes().values() if port == cdp_port}
        assert chromium and chromium <= LOOPBACK, chromium


@pytest.mark.e2e  # Xvfb, x11vnc and websockify
def test_the_remote_seat_listens_on_loopback_unless_told_otherwise() -> None:
    if any(shutil.which(tool) is None for tool in ("Xvfb", "x11vnc", "websockify")):
        pytest.fail(f"the remote seat needs {' '.join(PEOPLE_PACKAGES)}: run `make packages`")
    for host in ("127.0.0.1", "0.0.0.0"):
        with RemoteSeat(SeatOptions(host=host, port=0)) as seat:
            bound = listening(os.getpid(), with_children=True)
            gate = {address for address, port in bound if port == seat.port}
            others = {address for address, port in bound if port != seat.port}
        assert gate == {host}, bound
        assert others <= {"127.0.0.1"}, bound


@contextmanager
def serving(
    command: list[str], until: Callable[[set[tuple[str, int]]], bool] = bool
) -> Iterator[set[tuple[str, int]]]:
    """Run a server command until it listens (on what `until` asks for); yields what it listens on,
    then interrupts it."""
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not until(bound := listening(process.pid, with_children=True)):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, f"{command} did not listen within {START_TIMEOUT_S:g} s"
            time.sleep(0.2)
        yield bound
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


SUSBENCH = [sys.executable, "-m", "susbench"]
MITMDUMP = [sys.executable, str(Path(sys.executable).parent / "mitmdump"), "-s", "recorder/warc_addon.py"]
COMMANDS = {
    "web serve": [*SUSBENCH, "web", "serve", "--port", "0"],
    "replay serve (proxy)": [*SUSBENCH, "replay", "serve", str(default_snapshot()), "--port", "0"],
    "replay serve (direct)": [
        *SUSBENCH,
        "replay",
        "serve",
        str(default_snapshot()),
        "--port",
        "0",
        "--mode",
        "direct",
    ],
    "mitmdump with our addon": [*MITMDUMP, "--listen-port", "0"],
}
HOST_OPTION = {
    "web serve": "--host",
    "replay serve (proxy)": "--host",
    "replay serve (direct)": "--host",
    "mitmdump with our addon": "--listen-host",
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_server_command_listens_on_loopback_unless_told_otherwise(name: str) -> None:
    with serving(COMMANDS[name]) as bound:
        assert {address for address, _ in bound} == {"127.0.0.1"}, bound
    with serving([*COMMANDS[name], HOST_OPTION[name], "0.0.0.0"]) as bound:
        assert {address for address, _ in bound} == {"0.0.0.0"}, bound


def test_agents_serve_listens_on_loopback_only(tmp_path: Path) -> None:
    """`agents serve` has no host option: loopback is all it can listen on."""
    played = DemonstrationSet(
        demonstrations=(
            Demonstration(
                task_id="pizzapalace-margherita-order",
                instruction="order a margherita",
                injection_id=None,
                policy="careful",
                viewport=Viewport(),
                outcome="avoided",
                moves=(DemonstrationMove(kind="done", text="done"),),
            ),
        )
    ).save(tmp_path / "demonstrations.json")
    with serving([*SUSBENCH, "agents", "serve", "--demonstrations", str(played), "--port", "0"]) as bound:
        assert {address for address, _ in bound} == {"127.0.0.1"}, bound


@pytest.mark.e2e
def test_browser_serve_listens_on_loopback_only(tmp_path: Path) -> None:
    """The container's server on the host: its replayer and the browser it launches listen on loopback,
    so even outside a container without network they are not reachable from other machines."""
    sockets = tmp_path / "sockets"
    sockets.mkdir()
    extension = build_extension(load_injections(), tmp_path / "extension")
    command = [*SUSBENCH, "browser", "serve", "--snapshot", str(default_snapshot())]
    command += ["--socket-dir", str(sockets), "--extension", str(extension)]
    replayer_and_devtools = 2
    with serving(command, until=lambda bound: len(bound) >= replayer_and_devtools) as bound:
        assert {address for address, _ in bound} <= LOOPBACK, bound
