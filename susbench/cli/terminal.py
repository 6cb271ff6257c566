"""Command-line output that survives being pasted into a shell and read in an 80-column terminal."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Self

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress


def shell_words(args: Sequence[str]) -> str:
    """The arguments as one line a POSIX shell splits back into exactly these words (no globbing)."""
    return shlex.join(args)


def json_words(args: Sequence[str]) -> str:
    """The same arguments for programs: a JSON array of strings."""
    return json.dumps(list(args))


LOG_WIDTH = 160


def output_console(log_width: int = LOG_WIDTH) -> Console:
    """A console as wide as the terminal, or `$COLUMNS` when set; `log_width` in a file or CI log."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        width: int | None = int(columns)
    else:
        width = None if sys.stdout.isatty() else log_width
    return Console(highlight=False, width=width)


def progress_lines() -> Callable[[str], None]:
    """Progress of long work as plain lines on stderr, so stdout keeps only the result (`--json`)."""
    errors = Console(stderr=True, highlight=False)

    def show(line: str) -> None:
        errors.print(line, soft_wrap=True, markup=False)

    return show


class ShownProgress:
    """Bars drawn from the display's first event until the `with` block ends; a display builds its
    `Progress` and says what moved. Nothing is drawn before the work starts, so an error in the input
    is the only line printed."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._shown = False

    def __enter__(self) -> Self:
        return self

    def _show(self) -> None:
        if not self._shown:
            self._shown = True
            self._progress.start()

    def __exit__(self, *exc_info: object) -> None:
        if self._shown:
            self._progress.stop()
