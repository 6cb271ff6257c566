"""What a new user meets on the command line: flags that survive a shell, counts that agree with
their lists, 80-column tables, errors in the user's terms, `doctor` and shell completion."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from susbench.analysis import tables
from susbench.analysis.summary import build_analysis
from susbench.cli.replay import _coverage_table
from susbench.cli.snapshot import SESSION_LABEL
from susbench.cli.terminal import json_words, shell_words
from susbench.core.models import HostMap, OutcomeKind
from susbench.core.paths import SNAPSHOTS_DIR
from susbench.recorder.failures import explain_load_failure
from susbench.replayer.service import Coverage, ReplayLogEntry
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.cli.test_narrow_tables import assert_shown, assert_table_shown
from tests.support.results import TASKS, add_episode, add_run

BUNDLED = next(iter(sorted(SNAPSHOTS_DIR.glob("*.wacz"))))
SUSBENCH = Path(sys.executable).with_name("susbench")
NARROW = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}


def susbench(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SUSBENCH), *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=cwd,
        env=env or NARROW,
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_flag_sets_survive_a_shell_with_globs_and_spaces(tmp_path: Path) -> None:
    flags = [
        "--host-resolver-rules=MAP * 127.0.0.1:8081, EXCLUDE localhost",
        "--proxy-bypass-list=<-loopback>",
    ]
    (tmp_path / "a-file-the-star-would-match").write_text("")
    echoed = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {shell_words(flags)}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert echoed.stdout.splitlines() == flags
    assert json.loads(json_words(flags)) == flags


def entry(url: str, kind: str) -> ReplayLogEntry:
    return ReplayLogEntry(ts=0.0, method="GET", url=url, kind=kind, status=404, episode_number=1)  # type: ignore[arg-type]


def test_a_run_with_bad_input_prints_its_error_and_no_empty_progress_bar(tmp_path: Path) -> None:
    """The bar used to be drawn (empty, 0/0) before the input was checked, then the error under it."""
    db = tmp_path / "results.duckdb"
    result = susbench("run", "--operator", "random", "--tasks", "nope-*", "--db", str(db))
    assert result.returncode == 2
    assert result.stdout.splitlines() == [f"results: {db.resolve()}"]
    assert result.stderr.startswith("error: --tasks 'nope-*' matches no task")
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_coverage_counts_equal_their_lists_and_background_stays_out_of_the_ratio() -> None:
    entries = [
        entry("https://pizzapalace.test/", "exact"),
        entry("https://pizzapalace.test/gone.js", "miss"),
        entry("https://pizzapalace.test/gone.js", "miss"),
        entry("https://pizzapalace.test/other.css", "miss"),
        entry("https://accounts.google.com/ListAccounts", "browser"),
        entry("https://accounts.google.com/ListAccounts", "browser"),
    ]
    coverage = Coverage.of(entries)
    assert coverage.requests == 4 and coverage.browser == 2
    assert coverage.miss == sum(coverage.misses.values()) == 3
    assert coverage.browser == sum(coverage.browser_requests.values())
    assert coverage.matched_ratio == pytest.approx(1 / 4)


def test_coverage_table_fits_80_columns_and_keeps_each_url_whole() -> None:
    """Pages too long for the page column come out one record per page, never wrapped mid-address."""
    coverage = Coverage.of([entry("https://dailyledger.test/a.css", "exact")])
    pages = [
        "https://dailyledger.test/article/central-banks-hold-rates-as-inflation-cools?ref=a",
        "https://dailyledger.test/article/central-banks-hold-rates-as-inflation-cools?ref=b",
    ]
    console = Console(width=80, record=True)
    table = _coverage_table("coverage", [(page, coverage) for page in pages])
    console.print(table)
    assert assert_shown(console.export_text(), table.headers, table.rows) == {"record"}
    assert [row[0] for row in table.rows] == [page.split("://")[1] for page in pages]


def test_coverage_of_no_request_is_no_figure() -> None:
    console = Console(width=80, record=True)
    console.print(_coverage_table("coverage", [("https://pizzapalace.test/", Coverage.of([]))]))
    row = next(line for line in console.export_text().splitlines() if line.strip().startswith("pizzapalace"))
    assert row.split() == ["pizzapalace.test/", "0", "0", "0", "0", "0", "0", "—"]


def test_report_episodes_table_shows_every_column_at_80_columns(tmp_path: Path) -> None:
    """Squeezed by its wrapping headers, the table came out a character too wide and lost `control`."""
    db = tmp_path / "results.duckdb"
    outcomes = [OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED, OutcomeKind.NOT_ENCOUNTERED, OutcomeKind.ERROR]
    with Store(db) as store:
        for operator in ("naive", "careful", "random"):
            add_run(store, f"run-{operator}", operator)
            for repeat in range(40):
                for index, task in enumerate(TASKS):
                    kind = outcomes[(repeat + index) % len(outcomes)]
                    add_episode(store, f"run-{operator}", operator, task, kind, repeat=repeat)
    result = susbench("report", "--db", str(db), "--no-model")
    assert result.returncode == 0, result.stderr
    with Store(db, read_only=True) as store:
        (group,) = build_analysis(store).groups
    episodes = tables.episodes(group)
    assert episodes.headers[-1] == "control"
    assert_table_shown(result.stdout, episodes)


def test_snapshot_info_at_80_columns_tells_pages_apart_and_says_what_time_is_frozen() -> None:
    result = susbench("snapshot", "info", str(BUNDLED))
    assert result.returncode == 0, result.stderr
    assert "recording time" in " ".join(result.stdout.split())
    with Snapshot.open(BUNDLED) as snapshot:
        pages = snapshot.manifest.pages
    assert len({page.url for page in pages}) < len(pages), "the bundled snapshot visits some URL twice"
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert max(len(line) for line in lines) <= 80
    for session in {page.session for page in pages}:
        start = lines.index(f"{SESSION_LABEL} {session}")  # each session's pages under their own title
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith(SESSION_LABEL)), len(lines)
        )
        shown = [[page.url.split("://")[1], page.title] for page in pages if page.session == session]
        assert_shown("\n".join(lines[start:end]), ("url", "title"), shown, partial=True)


@pytest.fixture
def direct_serve(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [str(SUSBENCH), "replay", "serve", str(BUNDLED), "--mode", "direct", "--port", "0", "--log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=NARROW,
        cwd=tmp_path,
    )
    yield process
    if process.poll() is None:
        process.kill()
        process.wait(timeout=30)


def _read_until(process: subprocess.Popen[str], marker: str, timeout_s: float = 180) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if marker in line:
            return lines
    raise AssertionError(f"no {marker!r} in: {lines}")


def _get(port: int, host: str, path: str) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_replay_serve_prints_quoted_flags_logs_each_request_and_reports_coverage_on_sigterm(
    direct_serve: subprocess.Popen[str],
) -> None:
    head = _read_until(direct_serve, "press Ctrl-C")
    flags = json.loads(head[-2])
    assert shlex.split(head[-3]) == flags
    rules = next(flag for flag in flags if flag.startswith("--host-resolver-rules="))
    port = int(re.search(r"127\.0\.0\.1:(\d+)", rules).group(1))  # type: ignore[union-attr]
    for _ in range(2):
        status, _ = _get(port, "pizzapalace.test", "/never-recorded")
        assert status == 404
    status, _ = _get(port, "accounts.google.com", "/ListAccounts")
    assert status == 404
    direct_serve.send_signal(signal.SIGTERM)
    assert direct_serve.stdout is not None
    tail = direct_serve.stdout.read().splitlines()
    assert direct_serve.wait(timeout=60) == 0
    log = [line for line in tail if line.startswith(("miss ", "browser "))]
    assert log == [
        "miss      404 GET http://pizzapalace.test/never-recorded",
        "miss      404 GET http://pizzapalace.test/never-recorded",
        "browser   404 GET http://accounts.google.com/ListAccounts",
    ]
    row = next(line for line in tail if line.lstrip().startswith("all requests"))
    counts = [int(cell) for cell in row.split()[2:8]]
    assert counts == [2, 0, 0, 0, 2, 1]  # requests, exact, canonical, fuzzy, misses, background
    assert "  miss x2: http://pizzapalace.test/never-recorded" in tail
    assert "  browser: http://accounts.google.com/ListAccounts" in tail


def test_a_sigterm_sent_as_soon_as_the_server_is_ready_still_reports_coverage(
    direct_serve: subprocess.Popen[str],
) -> None:
    _read_until(direct_serve, "press Ctrl-C")
    direct_serve.send_signal(signal.SIGTERM)  # no request first: the handler must already be set
    assert direct_serve.stdout is not None
    tail = direct_serve.stdout.read().splitlines()
    assert direct_serve.wait(timeout=60) == 0, tail
    assert any(line.lstrip().startswith("all requests") for line in tail), tail


def test_the_miss_page_runs_on_the_snapshot_clock(direct_serve: subprocess.Popen[str]) -> None:
    head = _read_until(direct_serve, "press Ctrl-C")
    port = int(re.search(r"127\.0\.0\.1:(\d+)", head[-2]).group(1))  # type: ignore[union-attr]
    with Snapshot.open(BUNDLED) as snapshot:
        seed = snapshot.manifest.clock_seed_ms
        timezone = snapshot.manifest.timezone
    status, page = _get(port, "pizzapalace.test", "/never-recorded")
    assert status == 404 and "Not in snapshot" in page
    assert str(seed) in page and timezone in page


def test_record_an_unreachable_local_site_says_what_to_try(tmp_path: Path) -> None:
    port = closed_port()
    message = explain_load_failure(
        "https://pizzapalace.test/",
        "Page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at https://pizzapalace.test/",
        HostMap.parse([f"*.test=127.0.0.1:{port}"]),
    )
    assert message.startswith("https://pizzapalace.test/: the page did not load:")
    assert f"127.0.0.1:{port}" in message and "susbench web serve" in message
    assert "Page.goto" not in message
    unmapped = explain_load_failure("https://pizzapalace.test/", "net::ERR_NAME_NOT_RESOLVED", HostMap())
    assert "--resolve" in unmapped and "--upstream-ca" in unmapped


@pytest.mark.e2e
def test_record_command_fails_in_the_users_terms(tmp_path: Path) -> None:
    port = closed_port()
    result = susbench(
        "record",
        "https://pizzapalace.test/",
        "--out",
        str(tmp_path / "p.wacz"),
        "--resolve",
        f"*.test=127.0.0.1:{port}",
    )
    assert result.returncode == 2, result.stdout + result.stderr
    error = " ".join(result.stderr.split())
    assert f"--resolve sends pizzapalace.test to 127.0.0.1:{port}, and nothing answers there" in error
    assert "Traceback" not in result.stderr and "Page.goto" not in result.stderr


def test_help_shows_no_bool_placeholder() -> None:
    for command in (["run"], ["record"], ["replay", "serve"], ["report"], []):
        result = susbench(*command, "--help")
        assert result.returncode == 0, result.stderr
        assert "<bool>" not in result.stdout, command


def test_extension_build_says_what_it_built_and_how_to_load_it(tmp_path: Path) -> None:
    result = susbench("extension", "build", "--out", str(tmp_path / "ext"))
    assert result.returncode == 0, result.stderr
    folder = (tmp_path / "ext").resolve()
    assert (folder / "manifest.json").is_file()
    assert re.search(
        rf"built the extension with \d+ injections of \d+ pattern types in {folder}", result.stdout
    )
    load_line = result.stdout.splitlines()[-1].split(": ", 1)[1]
    assert shlex.split(load_line) == [f"--disable-extensions-except={folder}", f"--load-extension={folder}"]


def test_query_names_unaliased_counts_as_a_reader_would(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    with Store(db):
        pass
    result = susbench("query", "SELECT count(*) FROM episode_outcomes", "--db", str(db), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"count": 0}]


def test_doctor_says_what_to_fix(tmp_path: Path) -> None:
    seen = susbench("doctor", "--db", str(tmp_path / "results.duckdb"), env={**NARROW, "COLUMNS": "400"})
    for check in ("chromium", "fonts", "local CAs", "results", "extra: agents"):
        assert re.search(rf"^(ok|note) +{check}:", seen.stdout, re.MULTILINE), (check, seen.stdout)
    # The documented ports may be taken by another server on a shared machine: a note, not a failure.
    assert re.search(r"^(ok|note) +ports:", seen.stdout, re.MULTILINE)
    assert seen.returncode == 0, seen.stdout + seen.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            holder.bind(("127.0.0.1", 8081))
            holder.listen()
        except OSError:
            pass  # already taken by someone else: the check must fail all the same
        failed = susbench("doctor", "--db", str(blocker / "results.duckdb"), env={**NARROW, "COLUMNS": "400"})
    assert failed.returncode == 1
    assert re.search(r"^FAIL results: cannot write in .*a-file", failed.stdout, re.MULTILINE)
    assert re.search(r"^note ports: in use on 127.0.0.1: .*8081", failed.stdout, re.MULTILINE)
    assert "1 problem(s): results" in failed.stdout
    assert failed.stdout.count("fix: ") >= 2


def complete(words: str, cwd: Path) -> list[str]:
    """What bash would offer after `words` (typer's completion, as the installed script runs it)."""
    env = {
        **os.environ,
        "_SUSBENCH_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    result = subprocess.run(
        [str(SUSBENCH)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_shell_completion_of_commands_tasks_operators_and_snapshots(tmp_path: Path) -> None:
    (tmp_path / "mine.wacz").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert complete("susbench rep", tmp_path) == ["replay", "report", "reproduce"]
    assert complete("susbench run --operator car", tmp_path) == ["careful"]
    assert "pizzapalace-margherita-order" in complete("susbench run --tasks pizzapalace-m", tmp_path)
    assert complete("susbench run --tasks voltcart.test,confirm_sh", tmp_path) == [
        "voltcart.test,confirm_shaming"
    ]
    offered = complete("susbench replay serve ", tmp_path)
    assert "mine.wacz" in offered and "notes.txt" not in offered
    assert os.path.relpath(BUNDLED, tmp_path) in offered
