"""What `susbench run` was asked to do, checked once before anything starts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.identity import StudyRun
from susbench.core.models import BrowserKind, ControlDesign, Frozen, Mode, PageLook, ReplayMode, SplitChoice
from susbench.core.paths import DEFAULT_DB, SNAPSHOTS_DIR
from susbench.operators import OperatorCheck, OperatorSettings, check_operator, is_seated
from susbench.web.edition import DEFAULT_DATE


class RunOptions(Frozen):
    """Everything `susbench run` was asked to do; its command-line options are these fields."""

    tasks: str = Field(
        default="all", description="all, a task id, a site host, a pattern type or a glob over ids"
    )
    split: SplitChoice = Field(
        default="all",
        description="only the tasks of the held-out split: dev (to tune on) or test (to report; tune nothing "
        "on it); all: every selected task",
    )
    operator: str = Field(description="who acts in the browser: an operator's name, or module:factory")
    operator_settings: OperatorSettings = OperatorSettings()
    snapshot: Path | None = Field(default=None, description="WACZ to replay (default: the bundled one)")
    live: bool = Field(default=False, description="run against the live (local) web, archiving episodes")
    live_resolve: tuple[str, ...] = Field(
        default=(), description="upstream for --live, as curl's --resolve (default: the local web)"
    )
    live_date: date | None = Field(
        default=None, description=f"the local web's date for --live (default: {DEFAULT_DATE})"
    )
    repeats: int = Field(
        default=1, ge=1, le=10_000, description="episodes per task: replicates of its injection"
    )
    seed: int = Field(default=0, description="seeds injection choice, control share and operators")
    control_rate: float = Field(default=0.0, ge=0.0, le=1.0, description="share of control episodes")
    control: ControlDesign = Field(
        default="none",
        description="paired: each injected episode also runs as a control (same task, seed, operator)",
    )
    redraw_injections: bool = Field(
        default=False,
        description="draw each repeat's injection anew (default: repeats replicate the task's injection)",
    )
    parallel: int = Field(default=1, ge=1, le=64, description="episodes at once")
    db: Path = Field(default=DEFAULT_DB, description="DuckDB results file")
    step_timeout_s: float = Field(default=15.0, gt=0, description="seconds one operator step may take")
    episode_timeout_s: float | None = Field(
        default=None, gt=0, description="seconds one episode may take (default: the task's max_seconds)"
    )
    headless: bool = Field(default=True, description="hide the browser, or show it")
    replay_mode: ReplayMode = Field(
        default="direct",
        description="direct: Chromium's host-resolver rules to the replayer (fast); proxy: HTTP(S) proxy",
    )
    tasks_dir: Path | None = Field(default=None, description="the task catalog (default: tasks/)")
    extra_injections: tuple[Path, ...] = Field(
        default=(), description="folders of further injections beside the project's catalog (accepted drafts)"
    )
    browser: BrowserKind = Field(
        default="local",
        description="local: Chromium on this machine; container: the browser image, with no network",
    )
    image: str | None = Field(
        default=None,
        description="browser image for --browser container (default: $SUSBENCH_IMAGE, else the version's)",
    )
    study: StudyRun | None = Field(default=None, description="set by `susbench study` alone, never by `run`")

    @property
    def mode(self) -> Mode:
        return "live" if self.live else "snapshot"


class BrowserFacts(Frozen):
    """The browser a run's episodes get: this machine's Chromium, or a browser image (with the
    Chromium version its label names and its id)."""

    kind: BrowserKind = "local"
    image: str | None = None
    image_id: str | None = None
    chromium: str | None = None


class SnapshotFacts(Frozen):
    """The snapshot a run replays: where it is, what it is, and the look it fixes for every episode."""

    path: Path
    id: str
    sha256: str
    look: PageLook


def check_options(options: RunOptions) -> OperatorCheck:
    """Refuse contradictory or impossible options with one clear message each; what checking the
    operator learned comes back, so the run need not build it again."""
    checked = check_operator(options.operator, options.operator_settings)
    if options.parallel > 1 and is_seated(options.operator):
        raise SusbenchError(
            f"--parallel {options.parallel}: operator {options.operator!r} is a person, who works one "
            "episode at a time; expected --parallel 1"
        )
    if not options.db.parent.is_dir():
        raise SusbenchError(f"--db {options.db}: its folder does not exist; expected a writable path")
    if options.control == "paired" and options.control_rate > 0:
        raise SusbenchError(
            f"--control paired gives every injected episode its own control; --control-rate "
            f"{options.control_rate:g} draws controls instead of injections: expected one of them"
        )
    if options.live and options.snapshot is not None:
        raise SusbenchError("--snapshot and --live exclude each other; expected one of them")
    if options.live_date is not None and not (options.live and not options.live_resolve):
        raise SusbenchError("--live-date sets the local web's date: it needs --live and no --live-resolve")
    from susbench.core.hostmap import parse_host_map  # its resolver loads asyncio: not for `run --help`

    parse_host_map(options.live_resolve, "--live-resolve")
    _check_browser(options)
    return checked


def _check_browser(options: RunOptions) -> None:
    if options.browser == "local":
        if options.image is not None:
            raise SusbenchError(
                "--image names the browser image of --browser container; expected both or neither"
            )
        return
    if options.live:
        raise SusbenchError(
            "--live needs --browser local: the browser container has no network by construction and "
            "replays snapshots only"
        )
    if not options.headless:
        raise SusbenchError("--headed needs --browser local: the browser container has no display")
    if options.replay_mode != "direct":
        raise SusbenchError(
            "--replay-mode proxy needs --browser local: the browser container replays in direct mode, inside"
        )


def default_snapshot() -> Path:
    """The newest bundled snapshot in `snapshots/`."""
    found = sorted(SNAPSHOTS_DIR.glob("*.wacz"))
    if not found:
        raise SusbenchError(
            f"no snapshot given and none bundled in {SNAPSHOTS_DIR}; expected --snapshot FILE.wacz or --live"
        )
    return found[-1]


def browser_facts(options: RunOptions) -> BrowserFacts:
    """The run's browser; for a container, the image as the engine reports it (it must exist)."""
    if options.browser == "local":
        return BrowserFacts()
    # The container runtime and the snapshot reader are imported on use: `run --help` reads RunOptions.
    from susbench.container import DEFAULT_IMAGE, ContainerError, DockerApiRuntime
    from susbench.container.image import LABEL_CHROMIUM

    tag = options.image or DEFAULT_IMAGE
    image = DockerApiRuntime().image(tag)
    if image is None:
        raise ContainerError(
            f"--image {tag}: no such image; build it with `susbench image build --tag {tag}`"
        )
    return BrowserFacts(
        kind="container", image=tag, image_id=image.id, chromium=image.labels.get(LABEL_CHROMIUM)
    )


def snapshot_facts(options: RunOptions) -> SnapshotFacts | None:
    """The replayed snapshot's identity and look (verified on opening); None in live mode."""
    if options.live:
        return None
    path = options.snapshot or default_snapshot()
    if not path.is_file():
        raise SusbenchError(f"{path}: snapshot not found; expected a .wacz file")
    from susbench.snapshot import Snapshot

    with Snapshot.open(path) as snapshot:
        return SnapshotFacts(
            path=path, id=snapshot.manifest.id, sha256=snapshot.sha256, look=snapshot.manifest.look
        )
