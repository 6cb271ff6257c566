"""User-facing errors: the CLI prints these as one clear message, never a traceback."""

from __future__ import annotations


class SusbenchError(Exception):
    """An error caused by input or environment that the user can fix."""


class InputError(SusbenchError):
    """A user-written file (task, injection, capture plan) is invalid.

    The message always names the file, the field and what was expected.
    """


class SnapshotError(SusbenchError):
    """A snapshot or WARC is damaged, incomplete or fails its integrity check."""


class BrowserError(SusbenchError):
    """Chromium cannot be found or started."""
