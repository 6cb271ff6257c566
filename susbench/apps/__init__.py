"""Real web applications (django-oscar, WordPress, Ghost) run here as the benchmark's live web.

Public API: `load_specs`/`find_spec` (apps/<name>/app.yaml), `driver` (an app's `AppDriver`),
`serve_app` (started, seeded for a date and seed, verified, fronted like the local web), and
`site_content` (the project's own content every app is seeded with).
"""

from susbench.apps.base import AppDriver, AppError
from susbench.apps.content import ContentDigest, SiteContent, site_content
from susbench.apps.front import AppFront
from susbench.apps.registry import driver
from susbench.apps.serve import ServedApp, serve_app
from susbench.apps.spec import AppSpec, app_cache, find_spec, load_specs

__all__ = [
    "AppDriver",
    "AppError",
    "AppFront",
    "AppSpec",
    "ContentDigest",
    "ServedApp",
    "SiteContent",
    "app_cache",
    "driver",
    "find_spec",
    "load_specs",
    "serve_app",
    "site_content",
]
