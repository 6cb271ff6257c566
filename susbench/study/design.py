"""The order a participant meets the tasks: a seeded base order, counterbalanced across participants
by a Williams design (a balanced Latin square).

Rows of the square are positions in the base order. Over a complete set of rows (n for an even
number of tasks, 2n for an odd one) every task takes every position equally often, and every task
follows every other task equally often, so neither position nor carry-over favours any task.
Participant k (counted in the order they consented) gets row k mod the number of rows.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def williams_rows(n: int) -> list[list[int]]:
    """A Williams design for n treatments: n rows for even n, 2n (the square and its mirror) for odd n."""
    if n < 1:
        raise ValueError("a design needs at least one task")
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(position + shift) % n for position in first] for shift in range(n)]
    if n % 2:
        rows += [list(reversed(row)) for row in rows]
    return rows


def base_order(task_ids: Sequence[str], seed: int) -> list[str]:
    """The study's seeded base order (the same for every participant of a study)."""
    ordered = sorted(task_ids)
    random.Random(f"study-order\x1f{seed}").shuffle(ordered)
    return ordered


def participant_order(task_ids: Sequence[str], seed: int, row: int) -> list[str]:
    """The tasks in the order of row `row` (mod the number of rows) over the seeded base order."""
    base = base_order(task_ids, seed)
    rows = williams_rows(len(base))
    return [base[position] for position in rows[row % len(rows)]]
