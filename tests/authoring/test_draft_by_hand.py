"""A hand-written injection through the authoring pipeline: checked on the recorded page with the
real extension like a model's draft, reviewed, and accepted with provenance saying it was written by
hand (`susbench injections draft --by-hand`, then `review --accept`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.authoring.pipeline import draft_by_hand, load_history
from susbench.authoring.review import accept
from susbench.catalog.tasksets import app_snapshot
from susbench.core.errors import InputError
from susbench.core.loading import load_model
from susbench.core.models import Injection
from susbench.core.paths import APPS_DIR

DRAFTS = APPS_DIR / "oscar" / "injection-drafts"


@pytest.mark.e2e
def test_a_hand_written_draft_is_checked_reviewed_and_accepted_as_by_hand(tmp_path: Path) -> None:
    written = DRAFTS / "oscar-preview-partner-offers.yaml"
    result = draft_by_hand(
        app_snapshot("oscar"), "https://oscarshop.test/checkout/preview/", written, out=tmp_path / "drafts"
    )
    assert result.problems == () and result.check is not None and result.check.injected
    assert result.check.preview is not None and (result.folder / result.check.preview).is_file()
    history = load_history(result.folder)
    assert (history.model, history.endpoint_kind, len(history.rounds)) == ("by-hand", "by-hand", 1)
    assert history.rounds[0].reply == written.read_text(encoding="utf-8")
    target = accept(result.folder, "a reviewer", tmp_path / "catalog", despite_look=True)
    accepted = load_model(target, Injection)
    assert accepted.provenance is not None and accepted.provenance.model == "by-hand"
    assert accepted.model_copy(update={"provenance": None}) == load_model(written, Injection)


def test_a_hand_written_draft_for_another_site_is_named(tmp_path: Path) -> None:
    written = DRAFTS / "oscar-preview-partner-offers.yaml"
    with pytest.raises(
        InputError, match=r"oscar-preview-partner-offers.yaml: field 'site': 'oscarshop.test'"
    ):
        draft_by_hand(tmp_path / "none.wacz", "https://bazaarly.test/checkout", written, out=tmp_path)
