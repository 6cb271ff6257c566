"""`susbench reproduce`: a bundle's runs re-run in real Chromium match outcome for outcome; an altered
outcome is reported with its episode, task, expected and got; changed inputs are refused by name.

The refusals need no browser: they stop before anything runs. The end-to-end module fixture runs
the three scripted baselines on three tasks (one pattern type each), exports the bundle through the
CLI and reproduces it through the CLI into a new database.
"""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from susbench.cli.main import main
from susbench.controller import RunOptions, default_snapshot, run_benchmark, run_identity
from susbench.controller.journal import run_record
from susbench.controller.options import BrowserFacts, snapshot_facts
from susbench.controller.reproduce import Reproduction, reproduce_bundle, rerun_options
from susbench.controller.run import load_materials
from susbench.core.errors import SusbenchError
from susbench.core.identity import RunInputs, StudyRun
from susbench.core.models import Episode, Outcome, OutcomeKind
from susbench.records.episode import EpisodeRecord
from susbench.records.run import RunRecord
from susbench.results.bundle import export_bundle, read_bundle
from susbench.results.store import Store

IMAGE = BrowserFacts(
    kind="container", image="localhost/susbench-browser:test", image_id="sha256:beef", chromium="156.0.1"
)
LAPTOP = "voltcart-laptop-cart"  # carries one preselection injection
TASKS = f"threadline-scarf-cart,{LAPTOP},taskflow-storage-checkout"
BASELINES = ("naive", "careful", "random")


def cli(monkeypatch: pytest.MonkeyPatch, *arguments: str) -> int:
    """Run the CLI in this process; its exit code (0 when it returns)."""
    monkeypatch.setattr(sys, "argv", ["susbench", *arguments])
    try:
        main()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def one_episode_bundle(
    tmp_path: Path,
    browser: BrowserFacts | None = None,
    asked: dict[str, Any] | None = None,
    **changed_inputs: str,
) -> Path:
    """A bundle of one stored careful episode whose run recorded today's inputs, or changed ones;
    asked for as `asked` says, in `browser`."""
    db = tmp_path / "original.duckdb"
    options = RunOptions(operator="careful", tasks="voltcart-laptop-cart", db=db, **(asked or {}))
    facts = snapshot_facts(options)
    inputs = load_materials(options, facts).inputs.model_copy(update=changed_inputs)
    identity = run_identity(options, inputs, browser)
    episode = Episode(
        id="ep-1",
        run_id=identity.run_id(),
        task_id="voltcart-laptop-cart",
        site="voltcart.test",
        injection_id="voltcart-item-protection-plan",
        pattern_type="preselection",
        condition="injected",
        operator="careful",
        mode="snapshot",
        repeat=0,
        seed=11,
    )
    started = datetime.now(UTC)
    with Store(db) as store:
        store.add_run(run_record(identity, facts, browser))
        store.write_episode(
            EpisodeRecord(
                episode=episode,
                started_at=started,
                ended_at=started + timedelta(seconds=5),
                outcome=Outcome(
                    episode_id="ep-1", injection_id=episode.injection_id, kind=OutcomeKind.AVOIDED
                ),
            )
        )
        export_bundle(store, tmp_path / "bundle")
    return tmp_path / "bundle"


@pytest.mark.parametrize(
    ("field", "label"),
    [
        ("task_catalog_sha256", "task catalog"),
        ("injection_catalog_sha256", "injection catalog"),
        ("extension_sha256", "built extension"),
        ("susbench_version", "package version"),
    ],
)
def test_a_changed_input_is_refused_by_name(tmp_path: Path, field: str, label: str) -> None:
    bundle = one_episode_bundle(tmp_path, **{field: "0" * 64})
    rerun = tmp_path / "rerun.duckdb"
    with pytest.raises(SusbenchError) as caught:
        reproduce_bundle(bundle, default_snapshot(), rerun)
    message = str(caught.value)
    assert f"{label}: {'0' * 64} in the bundle, " in message
    assert "can't be expected to match" in message and "--force" in message
    assert "snapshot:" not in message  # only what changed is named
    assert not rerun.exists()  # refused before anything ran


def test_another_snapshot_is_refused_naming_both(tmp_path: Path) -> None:
    bundle = one_episode_bundle(tmp_path)
    other = tmp_path / "same-content-other-bytes.wacz"
    shutil.copy(default_snapshot(), other)
    with zipfile.ZipFile(other, "a") as archive:
        archive.comment = b"re-packed"
    with pytest.raises(SusbenchError) as caught:
        reproduce_bundle(bundle, other, tmp_path / "rerun.duckdb")
    message = str(caught.value)
    recorded = json.loads((bundle / "run.json").read_text())["runs"][0]["snapshot"]["sha256"]
    assert f"snapshot: the run replayed localweb-2026-11-29 (sha256 {recorded})" in message
    assert f"{other} is localweb-2026-11-29 (sha256 " in message
    assert "task catalog" not in message


def test_the_original_database_is_not_a_reproduction(tmp_path: Path) -> None:
    bundle = one_episode_bundle(tmp_path)
    with pytest.raises(SusbenchError, match="holds the bundle's own runs"):
        reproduce_bundle(bundle, default_snapshot(), tmp_path / "original.duckdb")


def test_a_container_runs_options_carry_its_browser_and_image_back(tmp_path: Path) -> None:
    """Everything the run's identity says was asked comes back as its re-run's options, so with the
    same image here the re-run has the bundle run's identity, and so its id."""
    asked = {
        "seed": 5,
        "control_rate": 0.5,
        "browser": "container",
        "image": IMAGE.image,
        "study": StudyRun(study="study-1", participant="p-01"),
    }
    (run,) = read_bundle(one_episode_bundle(tmp_path, IMAGE, asked)).runs
    assert run.identity is not None
    options = rerun_options(run, default_snapshot(), tmp_path / "rerun.duckdb", 2)
    assert (options.browser, options.image, options.study) == ("container", IMAGE.image, asked["study"])
    assert (options.seed, options.control_rate, options.tasks) == (5, 0.5, "voltcart-laptop-cart")
    inputs = RunInputs.model_validate(run.identity.model_dump(include=set(RunInputs.model_fields)))
    assert run_identity(options, inputs, IMAGE) == run.identity
    assert run_identity(options, inputs, IMAGE).run_id() == run.run_id
    (tmp_path / "local").mkdir()
    (local,) = read_bundle(one_episode_bundle(tmp_path / "local")).runs
    again = rerun_options(local, default_snapshot(), tmp_path / "local.duckdb", 2)
    assert (again.browser, again.image, again.study) == ("local", None, None)


def test_a_run_stored_before_input_digests_is_skipped_by_name(tmp_path: Path) -> None:
    config = {"operator": "careful", "mode": "snapshot", "live_resolve": [], "seed": 0, "control_rate": 0.0}
    started = datetime.now(UTC)
    with Store(tmp_path / "old.duckdb") as store:
        store.add_run(RunRecord(run_id="run-old", config=config, seed=0, host="h", started_at=started))
        export_bundle(store, tmp_path / "bundle")
    rerun = tmp_path / "rerun.duckdb"
    with pytest.raises(SusbenchError) as caught:
        reproduce_bundle(tmp_path / "bundle", default_snapshot(), rerun)
    assert "no snapshot run to re-run; run-old: stored before run identities held input digests" in str(
        caught.value
    )
    assert not rerun.exists()


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three baselines on three tasks, in one database."""
    db = tmp_path_factory.mktemp("original") / "results.duckdb"
    for operator in BASELINES:
        run_benchmark(RunOptions(tasks=TASKS, operator=operator, parallel=2, db=db))
    return db


@pytest.fixture(scope="module")
def bundle(original: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The original database exported through the CLI."""
    folder = tmp_path_factory.mktemp("bundle")
    with pytest.MonkeyPatch.context() as patch:
        assert cli(patch, "results", "export", "--parquet", str(folder), "--db", str(original)) == 0
    return folder


@pytest.fixture(scope="module")
def reproduced(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Reproduction]:
    """The bundle re-run into a new database."""
    rerun = tmp_path_factory.mktemp("rerun") / "rerun.duckdb"
    return rerun, reproduce_bundle(bundle, default_snapshot(), rerun)


@pytest.mark.e2e
@pytest.mark.timeout(900)  # the module's runs (18 episodes) are paid by the first test
def test_reproduce_matches_every_outcome(original: Path, reproduced: tuple[Path, Reproduction]) -> None:
    rerun, result = reproduced
    assert result.reproduced and (result.matched, result.checked) == (9, 9)
    assert [(run.operator, run.matched, run.episodes, run.mismatches) for run in result.runs] == [
        (operator, 3, 3, ()) for operator in BASELINES
    ]
    assert all(run.rerun_id == run.run_id and run.deterministic for run in result.runs)
    with duckdb.connect(str(original), read_only=True) as db:
        before = db.execute("SELECT max(started_at), count(*) FROM episodes").fetchone()
    with duckdb.connect(str(rerun), read_only=True) as db:
        after = db.execute("SELECT min(started_at), count(*) FROM episodes").fetchone()
    assert before is not None and after is not None
    assert after[1] == before[1] == 9 and after[0] > before[0]  # every episode really ran again


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_the_command_reports_a_match_and_an_altered_outcome(
    original: Path,
    bundle: Path,
    reproduced: tuple[Path, Reproduction],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Checked against the fixture's re-run database, which already holds the same runs' episodes,
    so nothing runs again: first the bundle as exported, then one whose stored outcome was altered
    (a careful episode stored as not avoided)."""
    rerun, _ = reproduced
    snapshot = str(default_snapshot())
    assert cli(monkeypatch, "reproduce", str(bundle), "--snapshot", snapshot, "--db", str(rerun)) == 0
    assert "reproduced: 9/9 deterministic outcomes match" in capsys.readouterr().out
    altered = tmp_path / "altered.duckdb"
    shutil.copy(original, altered)
    chosen = "the flow moved on with the pre-selected add-on still chosen"
    with duckdb.connect(str(altered)) as db:
        (episode_id,) = db.execute(
            "SELECT episode_id FROM episodes WHERE operator = 'careful' AND task_id = ?", [LAPTOP]
        ).fetchone() or ("",)
        db.execute(
            "UPDATE outcomes SET kind = 'not_avoided', reason = ? WHERE episode_id = ?", [chosen, episode_id]
        )
    assert cli(monkeypatch, "results", "export", "--parquet", str(tmp_path / "b"), "--db", str(altered)) == 0
    capsys.readouterr()
    code = cli(monkeypatch, "reproduce", str(tmp_path / "b"), "--snapshot", snapshot, "--db", str(rerun))
    printed = capsys.readouterr().out
    assert code == 1
    assert episode_id in printed and LAPTOP in printed
    assert f"not_avoided: {chosen}" in printed
    assert "avoided: the pre-selected add-on was declined before moving on" in printed
    assert "outcome, reason" in printed
    assert "NOT reproduced: 8/9 deterministic outcomes match" in printed
