"""Fuzzing the user-written inputs: task YAML, injection YAML and capture plans.

Near-valid files are made from the project's own tasks/ and injections/ (tests/support/fuzzing.py):
damaged fields, damaged text, wrong encodings, alias bombs, deep nesting, huge scalars. Every case
ends in success or in one clean InputError naming the file and the field or line.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from susbench.catalog.injections import injection_files, load_injections
from susbench.core.loading import load_model
from susbench.core.models import Task
from susbench.core.paths import INJECTIONS_DIR, TASKS_DIR
from susbench.recorder.capture import load_target
from tests.support.fuzzing import YAML_SPECIALS, near_valid_yaml, run_case, write_case

TASK_FILES = sorted(TASKS_DIR.glob("*.yaml"))[:6]
INJECTION_FILES = injection_files()[:6]
pytestmark = pytest.mark.timeout(600)


def _plan_text(task_file: Path) -> str:
    """A task's capture plan as a file of its own (what `susbench record plan.yaml` reads)."""
    return yaml.safe_dump(yaml.safe_load(task_file.read_text(encoding="utf-8"))["capture"], sort_keys=False)


@given(data=st.data())
def test_fuzz_task_yaml(data: st.DataObject, memory_bound: None) -> None:
    seed = data.draw(st.sampled_from(TASK_FILES))
    raw = data.draw(near_valid_yaml(seed.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_case(Path(tmp), seed.name, raw)
        run_case("task YAML", str(path), lambda: load_model(path, Task))


HOSTILE_GLOB = (
    "id: bazaarly-checkout-partner-offers\ntype: trick_wording\nsite: bazaarly.test\n"
    "description: a glob that backtracks\npage:\n  url: '*a*a*a*a*a*a*a*c'\n  anchors: [{css: button}]\n"
    "  example: https://" + "a" * 20_000 + "b\nplacement: before\n"
    "texts: {title: t, body: b, manipulative: m, safe: s}\n"
)
"""A regex of `.*`s (fnmatch) took minutes on this page rule; the URL-pattern matcher is linear."""


@pytest.mark.parametrize(
    "text", [HOSTILE_GLOB, *(special.decode("utf-8", "replace") for special in YAML_SPECIALS)]
)
def test_hostile_injection_files_end_quickly_and_cleanly(text: str, tmp_path: Path) -> None:
    path = write_case(tmp_path, "bazaarly.test/bazaarly-checkout-partner-offers.yaml", text.encode())
    run_case("injection YAML", str(path), lambda: load_injections([path]))


@given(data=st.data())
def test_fuzz_injection_yaml(data: st.DataObject, memory_bound: None) -> None:
    """Loaded through the catalog loader, which also checks the file sits at <site>/<id>.yaml."""
    seed = data.draw(st.sampled_from(INJECTION_FILES))
    raw = data.draw(near_valid_yaml(seed.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_case(Path(tmp), str(seed.relative_to(INJECTIONS_DIR)), raw)
        run_case("injection YAML", str(path), lambda: load_injections([path]))


@given(data=st.data())
def test_fuzz_capture_plan(data: st.DataObject, memory_bound: None) -> None:
    """A capture plan file, or a task file whose plan the recorder walks."""
    seed = data.draw(st.sampled_from(TASK_FILES))
    as_plan = data.draw(st.booleans())
    text = _plan_text(seed) if as_plan else seed.read_text(encoding="utf-8")
    raw = data.draw(near_valid_yaml(text))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_case(Path(tmp), "plan.yaml" if as_plan else seed.name, raw)
        run_case("capture plan", str(path), lambda: load_target(str(path)))
