"""Before and after: the hostile page suite against the extension as it was at a git revision and as it
is now, one row per case, as a Markdown table (the closing note of issue 16).

    python -m tools.hostile_table --before 337f432 [--out table.md]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from susbench.browser import LocalBackend, routed_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.browser.driver import playwright_driver
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks
from susbench.web import LocalWeb
from tests.support.extension import build_extension_at
from tests.support.hostile_cases import host_look, load_cases, run_case
from tests.support.web import WEB_DATE, WEB_SEED

FINGERPRINT_INJECTION = "voltcart-item-protection-plan"


def measure(extension: Path) -> dict[str, str]:
    """Every case's outcome, and what page JavaScript reads off the host, with one extension build."""
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks()
    found: dict[str, str] = {}
    with (
        LocalWeb(port=0, date=WEB_DATE, seed=WEB_SEED) as web,
        playwright_driver() as playwright,
        LocalBackend(playwright).launch(routed_profile(web, extension_dir=extension)) as session,
    ):
        bridge = ExtensionBridge(session.context)
        for case, clicks in load_cases():
            report, _ = run_case(session.context, bridge, case, clicks, injections[case.injection], tasks)
            found[case.name(clicks)] = report.outcome.value
        page = session.context.new_page()
        with bridge.episode("fingerprint", FINGERPRINT_INJECTION):
            page.goto(str(injections[FINGERPRINT_INJECTION].page.example))
            bridge.choices(page, wait=5.0)
            look = host_look(page)
        copied = sorted(set(look["own"]) - set(look["inherited"]))
        found["fingerprint"] = f"{len(copied)} copied custom properties on the host, :empty {look['empty']}"
    return found


def table(before_rev: str, before: dict[str, str], after: dict[str, str]) -> str:
    injections = {item.id: item for item in load_injections()}
    lines = [
        f"| class | page behaviour | pattern | operator | clicks | due | {before_rev} | now |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case, clicks in load_cases():
        name = case.name(clicks)
        kind = injections[case.injection].type
        due = case.expected.value
        cells = (case.attack, case.quirk, kind, case.operator, clicks, due, before[name], after[name])
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    cells = (
        "-",
        "fingerprint",
        "preselection",
        "-",
        "-",
        "none",
        before["fingerprint"],
        after["fingerprint"],
    )
    lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="337f432", help="git revision of the extension to compare with")
    parser.add_argument("--out", type=Path, help="write the table here as well")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        injections = load_injections()
        before = measure(build_extension_at(args.before, injections, Path(scratch) / "before"))
        after = measure(build_extension(injections, Path(scratch) / "after"))
    text = table(args.before, before, after)
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
