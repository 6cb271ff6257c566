"""The frozen held-out split: every task file states its split, the rule decides it, and about 30%
of the catalog is held out for reporting."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from pydantic import ValidationError

from susbench.catalog.full import catalog_sets
from susbench.core.loading import load_model
from susbench.core.models import Task, task_split

TASK_FILES = sorted(path for chosen in catalog_sets() for path in chosen.tasks_dir.glob("*.yaml"))


def test_the_rule_is_the_stated_one() -> None:
    """The shared decision, written out independently: sha256 of the id, first 8 hex digits, mod 100,
    below 30 is test (a change of the function that moves any of these ids fails here)."""
    ids = [path.stem for path in TASK_FILES]
    for task_id in ids:
        bucket = int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % 100
        assert task_split(task_id) == ("test" if bucket < 30 else "dev"), task_id
    assert {task_split(task_id) for task_id in ids} == {"dev", "test"}


def test_every_task_file_states_its_split_by_the_rule() -> None:
    assert len(TASK_FILES) >= 100
    for path in TASK_FILES:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert "split" in raw, f"{path}: no 'split:' line; expected split: {task_split(raw['id'])}"
        assert raw["split"] == task_split(raw["id"]), f"{path}: split {raw['split']!r} is not the rule's"


def test_test_share_of_the_catalog_is_25_to_35_percent() -> None:
    splits = [load_model(path, Task).split for path in TASK_FILES]
    share = splits.count("test") / len(splits)
    assert 0.25 <= share <= 0.35, f"test share {share:.1%} of {len(splits)} tasks"


def test_a_split_against_the_rule_is_refused_and_a_missing_one_is_derived() -> None:
    fields = {
        "id": "shop-mug-order",
        "site": "shop.test",
        "start_url": "https://shop.test/",
        "instruction": "Buy the mug",
        "injections": ["shop-mug-ad"],
    }
    derived = Task.model_validate(fields)
    assert derived.split == task_split("shop-mug-order")
    other = "dev" if derived.split == "test" else "test"
    with pytest.raises(ValidationError, match="by the split rule"):
        Task.model_validate({**fields, "split": other})
    # A drafted task's YAML (dumped without defaults) carries its split.
    assert derived.model_dump(exclude_defaults=True)["split"] == derived.split
