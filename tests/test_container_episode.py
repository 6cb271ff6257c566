"""An episode in the container browser, scored by the extension through the same signed channel."""

from __future__ import annotations

import pytest

from susbench.browser import BrowserProfile
from susbench.container import ContainerBackend
from susbench.extension_bridge import ExtensionBridge
from susbench.injections_cli import open_example
from susbench.models import Injection, OutcomeKind
from tests.fixtures.container import CONTAINER_TIMEOUT_S
from tests.fixtures.extension import scripted_operator

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

INJECTION = "pizzapalace-home-app-popup"


def test_naive_falls_for_it_and_careful_avoids_it(
    container_backend: ContainerBackend, catalog: dict[str, Injection]
) -> None:
    injection = catalog[INJECTION]
    seen = []
    for policy, expected in (("naive", OutcomeKind.NOT_AVOIDED), ("careful", OutcomeKind.AVOIDED)):
        with container_backend.launch(BrowserProfile()) as session:
            bridge = ExtensionBridge(session.context)
            bridge.start_episode(f"container-{policy}", injection.id)
            page = session.context.pages[0]
            open_example(page, injection)
            scripted_operator(bridge, page, injection, policy)
            report = bridge.finish()
            log = session.replay_log()
        assert report.signature_valid
        assert report.outcome == expected, report.reason
        assert (report.episode_id, report.pattern_type) == (f"container-{policy}", "popup_ad")
        served = [entry for entry in log if entry.url.startswith("https://pizzapalace.test/")]
        assert served and all(entry.kind != "miss" for entry in served)
        seen.append((session.episode, session.user_data_dir, session.container_id))
    (first_episode, first_profile, first_id), (second_episode, second_profile, second_id) = seen
    assert first_id == second_id, "one warm container serves both episodes"
    assert second_episode > first_episode and second_profile != first_profile, "each gets a fresh browser"
