"""CPU of one episode browser's start, with and without the omnibox's WebUI pop-ups, in one run.

    .venv/bin/python benchmarks/chromium_launch.py [--launches 10] [--out FILE.md]

(default FILE: benchmarks/results/chromium-launch-DATE.md)

Each launch is what an episode starts: Chromium's default context in a fresh profile with the project's
extension (`BrowserProfile.args`), then one page loaded and held for 2.5 s (an episode's shortest). Its
CPU is read from /proc for every process of that browser (found by its profile folder) just before it
closes, by process type. The two variants
alternate launch by launch, so the machine's load is the same for both; the ratio is what to compare.
"without" is today's profile; "with" puts back the two features `DISABLED_FEATURES` turns off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path

from susbench.browser.chromium import chromium_version, find_chromium
from susbench.browser.driver import playwright_driver
from susbench.browser.launch import launch_persistent_context
from susbench.browser.profiles import DISABLED_FEATURES, BrowserProfile
from susbench.catalog.injections import build_extension

OMNIBOX_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
HOLD_MS = 2500  # an episode lasts at least the extension's anchor wait; what starts in the background runs
PAGE = "data:text/html,<title>bench</title><h1>A product</h1><button>Add to cart</button>"
TICKS = os.sysconf("SC_CLK_TCK")


def browser_cpu(profile_folder: Path) -> Counter[str]:
    """CPU seconds so far of each process type of the Chromium whose profile is `profile_folder`."""
    spent: Counter[str] = Counter()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace").replace("\0", " ").split()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if not any(str(profile_folder) in part for part in command):
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        kind = next(
            (part.removeprefix("--type=") for part in command if part.startswith("--type=")), "browser"
        )
        spent[kind] += (int(fields[11]) + int(fields[12])) / TICKS
    return spent


def one_launch(profile: BrowserProfile, omnibox: bool) -> Counter[str]:
    features = [name for name in DISABLED_FEATURES if omnibox is False or name not in OMNIBOX_FEATURES]
    variant = profile.model_copy(update={"extra_args": ("--disable-features=" + ",".join(features),)})
    with (
        tempfile.TemporaryDirectory(prefix="susbench-launch-bench-") as folder,
        playwright_driver() as pw,
        launch_persistent_context(pw, variant, Path(folder)) as context,
    ):
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(PAGE)
        page.wait_for_timeout(HOLD_MS)
        return browser_cpu(Path(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument(
        "--out", type=Path, default=Path(f"benchmarks/results/chromium-launch-{date.today()}.md")
    )
    args = parser.parse_args()
    executable = find_chromium()
    profile = BrowserProfile(executable=executable, extension_dir=build_extension())
    runs: dict[str, list[Counter[str]]] = {"with the omnibox WebUI": [], "without (today's profile)": []}
    with playwright_driver():
        one_launch(profile, omnibox=False)  # warm-up: file cache, fontconfig
        for index in range(args.launches):
            print(f"launch {index + 1}/{args.launches}", flush=True)
            runs["with the omnibox WebUI"].append(one_launch(profile, omnibox=True))
            runs["without (today's profile)"].append(one_launch(profile, omnibox=False))
    totals = {name: [sum(run.values()) for run in launches] for name, launches in runs.items()}
    before, after = (statistics.median(values) for values in totals.values())
    kinds = sorted({kind for launches in runs.values() for run in launches for kind in run})
    lines = [
        "# Chromium's start, with and without the omnibox's WebUI pop-ups",
        "",
        f"`python benchmarks/chromium_launch.py --launches {args.launches}` on {date.today()}, "
        f"{chromium_version(executable)}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the end.",
        "Each launch: a fresh profile with the project's extension, one page loaded and held 2.5 s; "
        "CPU of every process of that browser. The variants alternate launch by launch.",
        "",
        "| variant | median CPU-s per launch | min | max | " + " | ".join(kinds) + " |",
        "|---|---|---|---|" + "---|" * len(kinds),
    ]
    for name, launches in runs.items():
        values = totals[name]
        per_kind = [statistics.median(run[kind] for run in launches) for kind in kinds]
        cells = " | ".join(f"{value:.3f}" for value in per_kind)
        lines.append(
            f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} | {cells} |"
        )
    lines += ["", f"Ratio without / with: {after / before:.2f} (the per-type columns are medians)."]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
