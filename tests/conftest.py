"""The fixtures every part may take come from the plugin modules below (tests/support/); a part's own
fixtures are in its folder's conftest.py (tests/<part>/conftest.py)."""

pytest_plugins = [
    "tests.support.tiers",
    "tests.support.evidence",
    "tests.support.web",
    "tests.support.snapshot",
    "tests.support.extension",
    "tests.support.shared",
    "tests.support.fuzzing",
    "tests.support.agents",
    "tests.support.local_model",
    "tests.support.unseen_shop",
    "tests.support.people",
]
