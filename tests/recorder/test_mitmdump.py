"""`mitmdump -s recorder/warc_addon.py` records on its own; warcio and `susbench replay serve` take it.

mitmdump runs as its own process from a Python that has mitmproxy but not this project installed
(`python -S` with only site-packages on PYTHONPATH, started outside the checkout), as a user's own
mitmproxy would: the script must find the checkout by itself.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from susbench.core.certs import MITMPROXY_CA_CERT
from susbench.core.paths import REPO_ROOT
from susbench.recorder.proxy import mitmproxy_confdir
from susbench.replayer.proxy import ca_confdir
from susbench.web import LocalWeb
from tests.support.proxy_client import fetch_via_proxy

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent
ADDON = Path(REPO_ROOT) / "recorder" / "warc_addon.py"
READY_TIMEOUT_S = 30.0
PAGE = "https://pizzapalace.test/"
STYLESHEET = "https://pizzapalace.test/static/site.css?v=3"


class Output:
    """Everything a process prints, collected by a thread so waiting for a line cannot block."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert process.stdout is not None
        self._thread = threading.Thread(target=self.lines.extend, args=(process.stdout,), daemon=True)
        self._thread.start()

    def wait_for(self, pattern: str, process: subprocess.Popen[str]) -> re.Match[str]:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            found = re.search(pattern, "".join(self.lines))
            if found:
                return found
            if process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in the output of {process.args}:\n{''.join(self.lines)}")


@contextmanager
def started(
    command: list[str], cwd: Path, env: dict[str, str]
) -> Iterator[tuple[subprocess.Popen[str], Output]]:
    """Run `command`; on exit interrupt it (Ctrl-C) as a user would, and wait for it to finish."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        yield process, Output(process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _mitmdump(web: LocalWeb, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-S",
        str(BIN / "mitmdump"),
        "-s",
        str(ADDON),
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        "0",
        "--set",
        f"confdir={mitmproxy_confdir()}",
        "--set",
        f"warc_out={out}",
        "--set",
        f"resolve=*.test={web.loopback}:{web.port}",
        "--set",
        f"ssl_verify_upstream_trusted_ca={web.ca_cert_path}",
        *extra,
    ]


def _without_project() -> dict[str, str]:
    """mitmproxy and the libraries importable, the project itself not (no .pth processing)."""
    return {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}


def test_mitmdump_records_a_warc_that_warcio_accepts_and_the_replayer_serves(
    local_web: LocalWeb, tmp_path: Path
) -> None:
    warc = tmp_path / "pizza.warc.gz"
    with started(_mitmdump(local_web, warc), tmp_path, _without_project()) as (process, output):
        port = int(output.wait_for(r"proxy listening at 127\.0\.0\.1:(\d+)", process).group(1))
        ca = mitmproxy_confdir() / MITMPROXY_CA_CERT
        live_page = fetch_via_proxy(port, ca, PAGE)
        live_css = fetch_via_proxy(port, ca, STYLESHEET)
    assert process.returncode == 0, "".join(output.lines)
    assert live_page.status == 200 and live_css.status == 200

    check = subprocess.run(
        [str(BIN / "warcio"), "check", "-v", str(warc)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("digest pass") >= 2

    serve = [str(BIN / "susbench"), "replay", "serve", str(warc), "--port", "0"]
    with started(serve, tmp_path, {**os.environ, "COLUMNS": "300"}) as (server, printed):
        port = int(printed.wait_for(r"on http://127\.0\.0\.1:(\d+)", server).group(1))
        replay_ca = ca_confdir() / MITMPROXY_CA_CERT
        css = fetch_via_proxy(port, replay_ca, STYLESHEET)
        page = fetch_via_proxy(port, replay_ca, PAGE)
        missing = fetch_via_proxy(port, replay_ca, "https://pizzapalace.test/never-recorded")
    assert css.body == live_css.body and css.header("X-Susbench-Replay") == "exact"
    assert page.status == 200 and page.header("X-Susbench-Replay") == "exact"
    title = re.search(rb"<title>[^<]+</title>", live_page.body)
    assert title and title.group(0) in page.body
    assert missing.status == 404 and missing.header("X-Susbench-Replay") == "miss"


def test_mitmdump_refuses_a_bad_option_naming_it(local_web: LocalWeb, tmp_path: Path) -> None:
    """mitmdump prints a script's configure error its own way (with the raising frame), then exits."""
    command = _mitmdump(local_web, tmp_path / "x.warc.gz", "--set", "resolve=shop.test")
    result = subprocess.run(
        command, cwd=tmp_path, env=_without_project(), capture_output=True, text=True, timeout=60
    )
    printed = result.stdout + result.stderr
    assert result.returncode != 0
    assert "resolve: host map rule 'shop.test': expected HOST[:PORT]=IP:PORT" in printed
    assert not (tmp_path / "x.warc.gz").exists()
