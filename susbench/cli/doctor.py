"""`susbench doctor`: the checks of what a run needs, one line each, with the fix for what is missing."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Annotated

import typer

from susbench.cli.options import DEFAULT_DB


def _wrapped(line: str, width: int) -> str:
    """At word boundaries, continued under the text, so a long path or hint stays readable at 80 columns."""
    return textwrap.fill(
        line, width=width, subsequent_indent=" " * 5, break_on_hyphens=False, break_long_words=False
    )


def doctor(
    db: Annotated[Path, typer.Option(help="the results file runs will write")] = DEFAULT_DB,
    container: Annotated[
        bool, typer.Option("--container", help="also check Docker or Podman (for the container backend)")
    ] = False,
) -> None:
    """Check what a run needs here; for each missing part, say what to do. Non-zero if a required part
    is missing; an optional extra or a busy default port is a note (exit 0)."""
    from susbench.controller.doctor import run_checks  # the checks load Playwright and the controller

    checks = run_checks(db, container)
    width = shutil.get_terminal_size().columns
    for check in checks:
        status = "ok" if check.ok else ("note" if check.optional else "FAIL")
        typer.echo(_wrapped(f"{status:<4} {check.name}: {check.detail}", width))
        if check.fix and not check.ok:
            typer.echo(_wrapped(f"     fix: {check.fix}", width))
    failed = [check.name for check in checks if not check.ok and not check.optional]
    if failed:
        typer.echo(f"{len(failed)} problem(s): {', '.join(failed)}")
        raise typer.Exit(1)
    typer.echo("ready: every required part is here")
