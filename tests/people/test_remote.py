"""`--operator human --serve`: a remote participant works on a task from their own browser, through
noVNC, with the token in their link; without it (or with a wrong one) nothing is shown or sent.

The participant is a second, headless Chromium on the link. It finds where to click the way a
person would: a probe (the task's page seated as the operator's episode, on the test's own Xvfb)
tells where the option and Done are drawn and what they look like; the participant waits until its
noVNC canvas shows them there, then clicks the canvas. The outcome comes from the extension's report.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from playwright.sync_api import Page, Playwright

from susbench.browser import BrowserProfile, fresh_context, launch_browser
from susbench.core.errors import SusbenchError
from susbench.core.models import Task, Viewport
from susbench.core.paths import REPO_ROOT
from susbench.people.control import ControlPanel, WindowPlacement
from susbench.people.questionnaire import load_questionnaire, read_text_file
from susbench.people.remote import RemoteSeat, SeatOptions
from susbench.people.screen import APT_PACKAGES, ScreenSize
from susbench.people.study_window import StudyWindow
from susbench.results.store import Store
from susbench.study.session import DEFAULT_DEBRIEF, consent_screen, debrief_screen, questions_screen
from tests.support.cli import run_cli
from tests.support.people import (
    AWAY,
    CONSENT,
    PATCH_RADIUS,
    Patch,
    StudyPoints,
    XInput,
    difference,
    done_on_screen,
    option_on_screen,
    seated_probe,
    wait_until_still,
)

TASK = "taskflow-enterprise-cart"  # trick wording; the safe option, then Done: avoided, not completed
SCREEN = ScreenSize()
CANVAS = "#noVNC_container canvas"
LOOKS_ALIKE = 12.0
"""Mean difference per colour channel under which two squares look the same (noVNC's JPEG is lossy)."""

END_SCREEN = "Thank you — you can close this window The session has ended."
HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


@pytest.fixture(scope="module")
def seat_packages() -> None:
    missing = [tool for tool in ("Xvfb", "x11vnc", "websockify") if shutil.which(tool) is None]
    if missing or not Path("/usr/share/novnc/vnc.html").is_file():
        pytest.fail(f"{missing or 'noVNC'} not installed: run `make packages` ({' '.join(APT_PACKAGES)})")


def websocket_answer(port: int, path: str) -> bytes:
    """Everything a WebSocket handshake on `path` gets back within two seconds."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
        connection.sendall(HANDSHAKE.format(path=path).encode())
        try:
            while chunk := connection.recv(4096):
                answer += chunk
        except TimeoutError:
            pass
    return answer


class Viewer:
    """The participant's browser page on the link: it looks at the noVNC canvas and clicks on it."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def looks(self, x: float, y: float) -> Patch:
        """The square around a point of the remote screen, as the participant's canvas shows it."""
        data = self.page.evaluate(
            """([canvas, x, y, r]) => Array.from(document.querySelector(canvas)
                 .getContext("2d").getImageData(x - r, y - r, 2 * r + 1, 2 * r + 1).data)""",
            [CANVAS, round(x), round(y), PATCH_RADIUS],
        )
        return [(data[i], data[i + 1], data[i + 2]) for i in range(0, len(data), 4)]

    def wait_to_see(self, x: float, y: float, seen: Patch, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if difference(seen, self.looks(x, y)) < LOOKS_ALIKE:
                return
            assert time.monotonic() < deadline, f"({x:.0f}, {y:.0f}) never looked as seen in {timeout:g} s"
            time.sleep(0.2)

    def wait_until_still(self, x: float, y: float, timeout: float) -> None:
        """Until the square around the point has not changed for STILL_S on the participant's canvas."""
        wait_until_still(lambda: self.looks(x, y), f"({x:.0f}, {y:.0f})", timeout, changed=LOOKS_ALIKE)

    def click(self, x: float, y: float) -> None:
        """A real click on the canvas where the remote screen's point is drawn (scaled to the window)."""
        box = self.page.locator(CANVAS).bounding_box()
        assert box is not None
        self.page.mouse.click(
            box["x"] + x * box["width"] / SCREEN.width, box["y"] + y * box["height"] / SCREEN.height
        )


class ClickTargets(NamedTuple):
    option: tuple[float, float]
    option_looks: Patch
    done: tuple[float, float]
    done_looks: Patch


@pytest.fixture(scope="module")
def target(
    x_input: XInput, web_playwright: Playwright, extension_dir: Path, tasks: list[Task]
) -> ClickTargets:
    """Where the safe option and Done are on a seated screen, and how they look there."""
    task = next(task for task in tasks if task.id == TASK)
    done = done_on_screen(web_playwright)
    with seated_probe(web_playwright, extension_dir, task) as (page, bridge):
        option = option_on_screen(page, bridge, "safe", x_input)
        with ControlPanel(task.instruction, 60, WindowPlacement()):
            x_input.wait_for_window("^Task: ", timeout=30)
            x_input.move(1, 1)
            time.sleep(1.0)  # both windows have settled
            return ClickTargets(option, x_input.patch(*option), done, x_input.patch(*done))


@pytest.fixture
def viewer(web_playwright: Playwright) -> Iterator[Viewer]:
    profile = BrowserProfile(viewport=Viewport(width=SCREEN.width, height=SCREEN.height))
    with launch_browser(web_playwright, profile) as browser:
        yield Viewer(fresh_context(browser, profile).new_page())


def lines_of(process: subprocess.Popen[str]) -> queue.Queue[str]:
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            found.put(line)

    threading.Thread(target=read, daemon=True).start()
    return found


def link_in(lines: queue.Queue[str], timeout: float) -> tuple[str, list[str]]:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if line.startswith("participant's link: "):
            return line.removeprefix("participant's link: ").strip(), seen
    raise AssertionError(f"no link printed within {timeout:g} s: {seen}")


@pytest.mark.e2e
def test_a_remote_participant_is_scored_through_novnc(
    seat_packages: None, tmp_path: Path, target: ClickTargets, viewer: Viewer
) -> None:
    db = tmp_path / "remote.duckdb"
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    command = [sys.executable, "-m", "susbench", "run", "--operator", "human", "--tasks", TASK]
    run = subprocess.Popen(
        [*command, "--db", str(db), "--serve", "--port", "0"],
        cwd=REPO_ROOT,
        env={**env, "COLUMNS": "500"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = lines_of(run)
        link, seen = link_in(lines, timeout=60)
        assert link.startswith("http://127.0.0.1:")
        viewer.page.goto(link)
        viewer.page.wait_for_selector(CANVAS, timeout=60_000)
        viewer.wait_to_see(*target.done, target.done_looks, timeout=120)
        viewer.wait_to_see(*target.option, target.option_looks, timeout=60)
        viewer.wait_until_still(*target.option, timeout=30)  # still long enough to count a click
        viewer.click(*target.option)
        time.sleep(1.0)
        viewer.click(*target.done)
        ended = end_screen(viewer, tmp_path / "remote-end-after-done.png")
        run.wait(timeout=120)
        time.sleep(0.5)  # the reader thread has taken the last lines
        output = "".join([*seen, *lines.queue])
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 0, output
    assert ended == END_SCREEN
    assert output.count("participant's link: ") == 1, output
    assert "only through TLS" in output and "ssh -N -L" in output
    with Store(db, read_only=True) as store:
        _, outcomes = store.query("SELECT operator, outcome, completed, error FROM episode_outcomes")
        _, events = store.query(
            "SELECT source, kind, detail FROM events WHERE (source = 'operator' AND kind = 'finish') "
            "OR (source = 'extension' AND kind = 'choice')"
        )
    assert outcomes == [("human", "avoided", False, None)], events
    details = {kind: json.loads(detail) for _, kind, detail in events}
    assert details["finish"]["how"] == "done"
    assert details["choice"]["role"] == "safe"  # the extension scores only trusted input


@pytest.fixture(scope="module")
def seat(seat_packages: None) -> Iterator[RemoteSeat]:
    with RemoteSeat(SeatOptions(port=0)) as opened:
        yield opened


@pytest.mark.e2e
def test_the_link_without_its_token_shows_and_sends_nothing(seat: RemoteSeat, viewer: Viewer) -> None:
    base = f"http://127.0.0.1:{seat.port}"
    wrong = "x" * len(seat.token)
    statuses = {}
    for name, path in {"no token": "/vnc.html", "wrong token": f"/{wrong}/vnc.html", "token": ""}.items():
        response = viewer.page.goto(base + path if path else seat.link)
        assert response is not None
        statuses[name] = response.status
    assert statuses == {"no token": 403, "wrong token": 403, "token": 200}
    assert viewer.page.title() == "Remote screen"
    opened = viewer.page.evaluate(
        """async urls => Promise.all(urls.map(url => new Promise(done => {
              const socket = new WebSocket(url, ["binary"]);
              socket.onmessage = () => done("message");
              socket.onerror = () => done("refused");
              setTimeout(() => done("silent"), 3000);
           })))""",
        [f"ws://127.0.0.1:{seat.port}/websockify", f"ws://127.0.0.1:{seat.port}/{wrong}/websockify",
         f"ws://127.0.0.1:{seat.port}/{seat.token}/websockify"],
    )  # fmt: skip
    assert opened == ["refused", "refused", "message"]
    for path in ("/websockify", f"/{wrong}/websockify", f"/{seat.token[:-1]}/websockify"):
        answer = websocket_answer(seat.port, path)
        assert answer.startswith(b"HTTP/1.1 403 ") and b"RFB" not in answer, (path, answer[:80])
    answer = websocket_answer(seat.port, f"/{seat.token}/websockify")
    assert answer.startswith(b"HTTP/1.1 101 ") and b"RFB 003." in answer


def test_a_taken_port_and_a_bad_host_get_one_clear_error(seat_packages: None) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SusbenchError, match=rf"^--port {port}: already in use on 127\.0\.0\.1; expected"):
            RemoteSeat(SeatOptions(port=port)).__enter__()
    with pytest.raises(SusbenchError, match=r"^--host 192\.0\.2\.1: cannot listen there"):
        RemoteSeat(SeatOptions(host="192.0.2.1", port=0)).__enter__()


def test_missing_packages_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        SusbenchError, match=re.escape("x11vnc is not installed; expected: apt-get install -y")
    ):
        RemoteSeat(SeatOptions(port=0)).__enter__()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--operator", "naive", "--port", "7000"], "--port and --host belong to --serve"),
        pytest.param(
            ["--operator", "naive", "--serve", "--port", "0"],
            "--serve: operator 'naive' has no person at",
            marks=pytest.mark.e2e,  # the operator is asked on the seat's own display: Xvfb starts
        ),
        (["--operator", "human", "--serve", "--backend", "ray"], "--serve needs --backend local"),
    ],
)
def test_serve_options_get_one_clear_error(
    seat_packages: None, tmp_path: Path, args: list[str], expected: str
) -> None:
    done = run_cli("run", *args, "--tasks", TASK, "--db", str(tmp_path / "x.duckdb"))
    assert done.returncode != 0
    assert expected in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def serve_study(tmp_path: Path, participant: str, *extra: str) -> subprocess.Popen[str]:
    """`study --serve` on the remote task, the participant's link printed on its output."""
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    command = [sys.executable, "-m", "susbench", "study", "--participant", participant]
    session = ["--consent", str(CONSENT), "--tasks", TASK, "--practice", "none"]
    return subprocess.Popen(
        [*command, *session, "--db", str(tmp_path / "study.duckdb"), "--serve", *extra],
        cwd=REPO_ROOT,
        env={**env, "COLUMNS": "500"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def end_screen(viewer: Viewer, shot: Path) -> str:
    """The participant's page once it shows the end screen (saved to `shot`), as text."""
    viewer.page.wait_for_selector("#end", state="visible", timeout=120_000)
    viewer.page.screenshot(path=shot)
    return " ".join(viewer.page.inner_text("#end").split())


def refused(link: str) -> bool:
    host, port = link.split("/")[2].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


class StudyLooks(NamedTuple):
    """How the study window's buttons look on a seated screen: Consent's, Next's, Finish's."""

    consent: Patch
    questions: Patch
    debrief: Patch


@pytest.fixture(scope="module")
def study_looks(x_input: XInput, points: StudyPoints) -> StudyLooks:
    screens = [
        (consent_screen(read_text_file(CONSENT, "consent")), points.accept),
        (questions_screen(load_questionnaire(), "After task 1 of 1", "Questions"), points.next),
        (debrief_screen(read_text_file(DEFAULT_DEBRIEF, "debrief")), points.finish),
    ]
    looks = []
    for screen, point in screens:
        with StudyWindow(WindowPlacement(), screen) as study_window:
            x_input.wait_for_window(f"^Study: {screen.title}$", timeout=120, window=study_window.window)
            x_input.move(*AWAY)
            time.sleep(1.0)  # the window has drawn
            looks.append(x_input.patch(*point))
    return StudyLooks(*looks)


@pytest.mark.e2e
def test_a_remote_participant_does_a_study_and_sees_the_end_screen(
    seat_packages: None,
    tmp_path: Path,
    viewer: Viewer,
    target: ClickTargets,
    points: StudyPoints,
    study_looks: StudyLooks,
) -> None:
    """Consent, the task, the questionnaire and the debrief, all clicked on the noVNC canvas; after
    Finish the participant's page says they can close it, and the seat is closed."""
    study = serve_study(tmp_path, "R01")
    try:
        link, _ = link_in(lines_of(study), timeout=120)
        viewer.page.goto(link)
        viewer.page.wait_for_selector(CANVAS, timeout=60_000)
        viewer.wait_to_see(*points.accept, study_looks.consent, timeout=120)
        viewer.page.screenshot(path=tmp_path / "remote-consent.png")
        time.sleep(0.8)  # a person reads before pressing
        viewer.click(*points.accept)
        viewer.wait_to_see(*target.done, target.done_looks, timeout=180)
        viewer.wait_to_see(*target.option, target.option_looks, timeout=60)
        viewer.wait_until_still(*target.option, timeout=30)
        viewer.click(*target.option)
        time.sleep(1.0)
        viewer.click(*target.done)
        viewer.wait_to_see(*points.next, study_looks.questions, timeout=120)
        time.sleep(0.8)
        for answer in ("unusual=no", "realism=5"):
            viewer.click(*points.answers[answer])
        viewer.click(*points.next)
        viewer.wait_to_see(*points.finish, study_looks.debrief, timeout=60)
        time.sleep(0.8)
        viewer.click(*points.finish)
        ended = end_screen(viewer, tmp_path / "remote-end-after-debrief.png")
        study.wait(timeout=60)
    finally:
        if study.poll() is None:
            os.killpg(study.pid, signal.SIGKILL)
            study.wait()
    assert study.returncode == 0
    assert ended == END_SCREEN
    assert refused(link)
    with Store(tmp_path / "study.duckdb", read_only=True) as store:
        _, answers = store.query("SELECT question_id, answer, outcome FROM study_responses ORDER BY 1")
    assert answers == [
        ("realism", "5", "avoided"),
        ("unusual", "no", "avoided"),
        ("unusual_what", None, "avoided"),
    ]


@pytest.mark.e2e
def test_a_remote_participant_who_declines_sees_the_end_screen(
    seat_packages: None, tmp_path: Path, viewer: Viewer, points: StudyPoints, study_looks: StudyLooks
) -> None:
    study = serve_study(tmp_path, "R02")
    try:
        lines = lines_of(study)
        link, _ = link_in(lines, timeout=120)
        viewer.page.goto(link)
        viewer.page.wait_for_selector(CANVAS, timeout=60_000)
        viewer.wait_to_see(*points.accept, study_looks.consent, timeout=120)
        time.sleep(0.8)
        viewer.click(*points.decline)
        ended = end_screen(viewer, tmp_path / "remote-end-after-decline.png")
        study.wait(timeout=60)
        time.sleep(0.5)  # the reader thread has taken the last lines
        output = "".join(lines.queue)
    finally:
        if study.poll() is None:
            os.killpg(study.pid, signal.SIGKILL)
            study.wait()
    assert study.returncode == 0
    assert ended == END_SCREEN
    assert "participant R02 declined; only the refusal is stored" in output
    assert refused(link)


SEAT_ON_EVERY_ADDRESS = """
import json, socket, subprocess, sys, urllib.request
for command in (["link", "set", "lo", "up"], ["link", "add", "seat0", "type", "veth", "peer", "seat1"],
                ["addr", "add", "10.77.0.1/24", "dev", "seat0"], ["link", "set", "seat0", "up"],
                ["link", "set", "seat1", "up"]):
    subprocess.run(["ip", *command], check=True)
study = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
printed = []
for line in study.stdout:
    printed.append(line)
    if "only through TLS" in line:
        break
links = [line.split(": ", 1)[1].strip() for line in printed if line.startswith("participant's link: ")]
checked = {}
for link in links:
    page = urllib.request.urlopen(link, timeout=30)
    host, port = link.split("/")[2].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(sys.argv[1].format(path="/" + link.split("/")[3] + "/websockify").encode())
        answer = b""
        while b"RFB 003." not in answer and (chunk := connection.recv(4096)):
            answer += chunk
    checked[link] = [page.status, "you can close this window" in page.read().decode(), b"RFB 003." in answer]
study.terminate()
output = "".join(printed) + study.stdout.read()
print(json.dumps({"links": links, "checked": checked, "returncode": study.wait(), "output": output}))
"""


@pytest.mark.e2e
def test_each_link_printed_for_a_wildcard_host_opens_the_seat(seat_packages: None, tmp_path: Path) -> None:
    """`--host 0.0.0.0` inside a network namespace of the test's own (loopback and one private
    address, 10.77.0.1, which nothing outside it reaches): one link per address, each as printed
    opens the seat's page and its screen; then the note about TLS or an SSH tunnel."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("needs unshare (util-linux) and ip (iproute2): run `make packages` (ci/test-packages.sh)")
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    study = [sys.executable, "-m", "susbench", "study", "--participant", "N01", "--consent", str(CONSENT)]
    session = ["--tasks", TASK, "--practice", "none", "--db", str(tmp_path / "n.duckdb")]
    served = ["--serve", "--host", "0.0.0.0", "--port", "0"]
    done = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", SEAT_ON_EVERY_ADDRESS, HANDSHAKE, *study, *session, *served],
        cwd=REPO_ROOT,
        env={**env, "COLUMNS": "500"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    hosts = [link.split("/")[2].rsplit(":", 1)[0] for link in found["links"]]
    assert hosts == ["10.77.0.1", "127.0.0.1"], found["output"]
    assert found["checked"] == {link: [200, True, True] for link in found["links"]}
    assert found["returncode"] == 143 and "stopped by SIGTERM" in found["output"], found["output"]
