"""Tables for a terminal of any width: columns when the cells fit side by side, else one record per row."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

TABLE_GAP = 1  # the space between two columns
RECORD_FOLD = "    "  # starts each line of a value too long to follow its header


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 episode`, `2 episodes`: every count a message or a caption prints agrees with its noun."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=1)


def _fold(value: str, width: int) -> list[str]:
    """Lines of at most `width`, broken at spaces; a word longer than a whole line (a long address)
    alone is split, into lines of its own, so each of its characters is kept under the fold."""
    lines: list[str] = []
    for line in textwrap.wrap(value, width, break_long_words=False, break_on_hyphens=False):
        lines += [line[start : start + width] for start in range(0, len(line), width)]
    return lines


@dataclass(frozen=True)
class FittedTable:
    """A table drawn as columns when every cell fits on one line, else as one record per row.

    A narrow terminal never cuts, folds or drops a cell: a header may wrap at its spaces, but when the
    cells themselves do not fit side by side, each row is printed as `header: value` lines instead
    (its first field at the margin, the others indented two spaces; a value too long for its line
    follows on lines of its own, indented four, broken at spaces, and a word longer than such a line
    split over lines of its own), so every statistic stays
    whole and findable.
    """

    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    title: str | None = None
    caption: str | None = None
    left: int | None = None  # the first `left` columns are text (left-justified); None: all of them
    bold_last: bool = False

    def widths(self) -> list[int]:
        return [
            max([_longest_word(header), *(cell_len(row[index]) for row in self.rows)])
            for index, header in enumerate(self.headers)
        ]

    def fits(self, width: int) -> bool:
        widths = self.widths()
        return sum(widths) + TABLE_GAP * (len(widths) - 1) <= width

    def columns(self) -> Table:
        table = Table(
            title=self.title,
            title_justify="left",
            caption=self.caption,
            caption_justify="left",
            box=box.SIMPLE_HEAD,
            padding=(0, 0),
            show_edge=False,
        )
        left = len(self.headers) if self.left is None else self.left
        for index, (header, width) in enumerate(zip(self.headers, self.widths(), strict=True)):
            table.add_column(
                header, justify="left" if index < left else "right", min_width=width, max_width=width
            )
        for index, row in enumerate(self.rows):
            table.add_row(*row, style="bold" if self.bold_last and index == len(self.rows) - 1 else None)
        return table

    def records(self, width: int) -> Group:
        lines: list[RenderableType] = []
        if self.title:
            lines.append(Text(self.title, style="italic"))
        for index, row in enumerate(self.rows):
            total = self.bold_last and index == len(self.rows) - 1
            for position, (header, cell) in enumerate(zip(self.headers, row, strict=True)):
                indent = "" if position == 0 else "  "
                style = "bold" if total or position == 0 else ""
                if cell_len(f"{indent}{header}: {cell}") <= width:
                    lines.append(Text(f"{indent}{header}: {cell}", style=style))
                    continue
                lines.append(Text(f"{indent}{header}:", style=style))
                folded = _fold(cell, width - len(RECORD_FOLD))
                lines += [Text(RECORD_FOLD + part, style=style) for part in folded]
        if self.caption:
            lines.append(Text(self.caption, style="dim"))
        return Group(*lines)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.columns() if self.fits(options.max_width) else self.records(options.max_width)
