"""Shared fixtures come from per-part plugin modules so each part owns its own."""

pytest_plugins = [
    "tests.fixtures.tiers",
    "tests.fixtures.evidence",
    "tests.fixtures.web",
    "tests.fixtures.replay",
    "tests.fixtures.snapshot",
    "tests.fixtures.extension",
    "tests.fixtures.shared",
    "tests.fixtures.container",
    "tests.fixtures.wacz_tools",
    "tests.fixtures.fuzzing",
    "tests.fixtures.replaywebpage",
    "tests.fixtures.agents",
    "tests.fixtures.browsergym",
    "tests.fixtures.local_model",
    "tests.fixtures.ray_cluster",
    "tests.fixtures.unseen_shop",
    "tests.fixtures.people",
]
