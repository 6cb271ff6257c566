"""The authoring pipeline with a real model: the packaged SmolLM2-135M on llama.cpp's server on this
CPU (the project's own local-model server, behind the recording relay), drafting one confirm-shaming
on the bundled snapshot's hotel page with a small reply budget.

What such a small model drafts is not asserted; only what must hold for any draft: the reply is kept
as the server sent it, the draft is validated (an injection that passed the schema is checked on the
page with the extension and scored for its look; anything else is listed as problems, with nothing
written), the review page reports it, and acceptance takes it only if it passed the checks (and,
when the score finds its look foreign, only when the reviewer accepts it despite its look).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
import yaml

from susbench.authoring.pipeline import DRAFT, DraftRequest, draft, load_history
from susbench.authoring.review import accept, review_page
from susbench.core.errors import InputError
from susbench.core.paths import SNAPSHOTS_DIR
from tests.support.local_model import RelayedModel

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

SNAPSHOT = sorted(SNAPSHOTS_DIR.glob("*.wacz"))[-1]
HOTEL = "https://staywise.test/hotel/harbor-view-hotel-lisbon"
MAX_TOKENS = 200


def test_the_local_models_draft_is_validated_reported_and_never_accepted_unchecked(
    local_model: RelayedModel, tmp_path: Path
) -> None:
    server = local_model.server
    out = tmp_path / "drafts"
    request = DraftRequest(
        snapshot=SNAPSHOT,
        url=HOTEL,
        types=("confirm_shaming",),
        near="buy_button",
        model=server.model,
        base_url=server.base_url,
        out=out,
        max_tokens=MAX_TOKENS,
    )
    [result] = draft(request, server.api_key)

    [round_] = load_history(result.folder).rounds
    sent = json.loads(local_model.relay.replies[-1])["choices"][0]
    assert round_.reply == sent["message"]["content"]
    assert round_.completion_tokens is not None and 0 < round_.completion_tokens <= MAX_TOKENS
    if result.injection is None:
        assert result.problems and result.check is None
        assert not (result.folder / DRAFT).exists()
    else:
        assert result.check is not None and (result.folder / "check.json").is_file()
        css = {anchor.css for anchor in result.injection.page.anchors if anchor.css}
        assert set(result.check.anchors) == css
        assert result.check.injected == (result.check.look is not None)
        assert result.check.injected or any("drew nothing" in problem for problem in result.problems)

    page = html.unescape(review_page(out).read_text(encoding="utf-8"))
    assert result.folder.name in page
    assert all(problem in page for problem in result.problems)
    look = result.check.look if result.check else None
    if look is not None:
        assert f"Nativeness score: {look.summary()}" in page

    catalog = tmp_path / "catalog"
    if result.problems:
        with pytest.raises(InputError, match="not accepted"):
            accept(result.folder, reviewer="R. Viewer", into=catalog, despite_look=True)
        assert not catalog.exists()
        return
    assert look is not None
    if not look.native:
        with pytest.raises(InputError, match="not accepted: it does not look native"):
            accept(result.folder, reviewer="R. Viewer", into=catalog)
    target = accept(result.folder, reviewer="R. Viewer", into=catalog, despite_look=True)
    provenance = yaml.safe_load(target.read_text(encoding="utf-8"))["provenance"]
    assert provenance["model"] == server.model and provenance["native"] is look.native
