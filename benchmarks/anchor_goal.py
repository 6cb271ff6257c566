"""The issue-13 goal, measured: generic injections on real product pages, with held-out shops.

Runs `susbench.preview.anchors.measure` (the same code as `susbench injections anchor`) on
`../shared/realdata/product-pages` and reports, per pattern type, the share of (page, injection)
pairs that anchored, showed and covered no page control, separately for the shops the anchors were
tuned on, the held-out shops, and all. Shops are split by brand (amazon.de and amazon.com are one
shop) with a fixed hash, so the split does not depend on what the anchors find.
Also runs the whole pages of `realdata/pages` and the books.toscrape.com WARC.

Run: .venv/bin/python benchmarks/anchor_goal.py [--split tune|holdout|all] [--out FILE.md] [--failures]
     .venv/bin/python benchmarks/anchor_goal.py --split tune --pages 1 --skip-others   # smallest
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from susbench.core.models import SEMANTIC_KINDS
from susbench.core.paths import shared_dir
from susbench.preview.anchors import (
    GOAL,
    AnchorRow,
    PageSurvey,
    generic_injections,
    load_truth,
    measure,
    saved_stem,
    summarize,
)

REALDATA = shared_dir() / "realdata"
PRODUCT_PAGES = REALDATA / "product-pages"
SECOND_LEVEL = {"co", "com", "org", "net", "ac", "gov"}


def brand(host: str) -> str:
    """`www.amazon.co.uk` -> amazon, `kids.1k.by` -> 1k: one shop across its country sites."""
    labels = host.lower().split(".")[:-1]
    if len(labels) > 1 and labels[-1] in SECOND_LEVEL:
        labels = labels[:-1]
    return labels[-1] if labels else host


def half(host: str) -> str:
    return "tune" if hashlib.sha256(brand(host).encode()).digest()[0] % 2 == 0 else "holdout"


def product_pages(split: str) -> list[Path]:
    truths = load_truth(PRODUCT_PAGES)
    pages = sorted(PRODUCT_PAGES.glob("*.html.gz"))
    if split == "all":
        return pages
    from urllib.parse import urlsplit

    return [page for page in pages if half(urlsplit(truths[saved_stem(page)].url).hostname or "") == split]


def share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%"


def type_table(rows: Sequence[AnchorRow], title: str) -> list[str]:
    shops = len({brand(row.shop) for row in rows})
    sites = len({row.shop for row in rows})
    pages = len({row.page for row in rows})
    lines = [
        f"#### {title}: {pages} pages, {sites} sites of {shops} shops",
        "",
        "| type | pairs | anchored | visible | no control overlapped (goal ≥ 95%) |",
        "|---|---:|---:|---:|---:|",
    ]
    for summary in summarize(rows):
        mark = "met" if summary.met else "**missed**"
        shares = [share(count, summary.pairs) for count in (summary.anchored, summary.visible, summary.clean)]
        lines.append(f"| {summary.type} | {summary.pairs} | {shares[0]} | {shares[1]} | {shares[2]} {mark} |")
    return [*lines, ""]


def injection_table(rows: Sequence[AnchorRow]) -> list[str]:
    lines = [
        "| injection | type | clean | not anchored | not visible | overlaps |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for injection in sorted({row.injection for row in rows}):
        mine = [row for row in rows if row.injection == injection]
        lines.append(
            f"| {injection} | {mine[0].type} | {sum(r.clean for r in mine)}/{len(mine)} | "
            f"{sum(not r.anchored for r in mine)} | {sum(r.anchored and not r.visible for r in mine)} | "
            f"{sum(r.overlaps > 0 for r in mine)} |"
        )
    return [*lines, ""]


def kind_table(surveys: Sequence[PageSurvey]) -> list[str]:
    rules = ("microdata", "json-ld", "role", "text", "vocabulary")
    lines = [f"| kind | found | {' | '.join(rules)} |", f"|---|---:|{'---:|' * len(rules)}"]
    for kind in SEMANTIC_KINDS:
        used = Counter(survey.kinds.get(kind) for survey in surveys)  # type: ignore[call-overload]
        found = len(surveys) - used[None]
        counts = " | ".join(str(used[rule]) for rule in rules)
        lines.append(f"| {kind} | {found}/{len(surveys)} | {counts} |")
    distances = [s.price_distance for s in surveys if s.price_distance is not None]
    with_truth = sum(s.truth_found for s in surveys)
    if not with_truth:
        return [*lines, ""]
    return [
        *lines,
        "",
        f"Price anchor vs. ground truth: the true price is visible on {with_truth} pages; the found price "
        f"is that element (0 px) on {sum(d == 0 for d in distances)}, within 100 px on "
        f"{sum(d <= 100 for d in distances)}; median {statistics.median(distances)} px, "
        f"max {max(distances)} px.",
        "",
    ]


def price_misses(surveys: Iterable[PageSurvey]) -> list[str]:
    return [
        f"- price {s.shop} {s.page[:12]}: {s.price_distance} px off, found {s.elements.get('price')}"
        for s in surveys
        if s.price_distance
    ]


def failures(rows: Iterable[AnchorRow]) -> list[str]:
    lines = []
    for row in rows:
        if not row.clean:
            why = row.error or (
                "not anchored" if not row.anchored else "not visible" if not row.visible else ""
            )
            lines.append(
                f"- {row.shop} {row.page[:12]} {row.injection}: {why} {row.slot or ''} "
                f"covered={list(row.covered)[:3]} displaced={list(row.displaced)[:3]}"
            )
    return lines


def run(targets: Sequence[str]) -> tuple[list[AnchorRow], list[PageSurvey]]:
    rows: list[AnchorRow] = []
    surveys: list[PageSurvey] = []
    for record in measure(targets, generic_injections()):
        (surveys if isinstance(record, PageSurvey) else rows).append(record)  # type: ignore[arg-type]
    return rows, surveys


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=("tune", "holdout", "all"), default="all")
    parser.add_argument("--out", type=Path, help="write the report as Markdown here too")
    parser.add_argument("--failures", action="store_true", help="list every pair that missed the goal")
    parser.add_argument("--skip-others", action="store_true", help="only the product pages")
    parser.add_argument("--pages", type=int, help="only the first N product pages of the split (smallest: 1)")
    args = parser.parse_args()

    started = time.perf_counter()
    rows, surveys = run([str(page) for page in product_pages(args.split)[: args.pages]])
    seconds = time.perf_counter() - started
    report = [f"### Generic injections on real product pages (goal: ≥ {GOAL:.0%} per type)", ""]
    for part in ("tune", "holdout") if args.split == "all" else (args.split,):
        report += type_table([row for row in rows if half(row.shop) == part], f"{part} shops")
    if args.split == "all":
        report += type_table(rows, "all shops")
    report += ["#### Per injection", "", *injection_table(rows), "#### Which rule found each kind", ""]
    report += kind_table(surveys)
    report.append(
        f"{len(surveys)} pages x {len(generic_injections())} injections in {seconds:.0f} s (2 shared cores)."
    )
    report.append("")
    if not args.skip_others:
        for label, targets in (
            ("realdata/pages (whole pages with inline CSS)", [str(REALDATA / "pages")]),
            (
                "realdata/warc/books.toscrape.warc (through the replayer)",
                [str(REALDATA / "warc" / "books.toscrape.warc")],
            ),
        ):
            other_rows, other_surveys = run(targets)
            report += type_table(other_rows, label)
            report += kind_table(other_surveys)
            if args.failures:
                report += failures(other_rows)
    if args.failures:
        report += ["#### Pairs that missed", "", *failures(rows), *price_misses(surveys)]
    text = "\n".join(report)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
