"""`susbench trace` at 80 columns cuts no value: a long page address is printed whole, one longer
than a line split over lines of its own under its field, every character kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from susbench.records.trace import StepRecord
from susbench.results.store import Store
from tests.support.results import record, run_record

URL = "https://voltcart.test/checkout/shipping?step=address&session=0123"
LONG_URL = URL + "&return=https%3A%2F%2Fvoltcart.test%2Fcart%3Fitems%3Dpulse-anc-headphones%2Caero-14-laptop"


def test_the_timeline_keeps_every_address_whole_at_80_columns(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    steps = (
        StepRecord(index=0, ts_ms=1, observation="screenshot", url=URL, actions=({"name": "click"},)),
        StepRecord(index=1, ts_ms=2, observation="screenshot", url=URL + "&more=1", reply_text="done"),
        StepRecord(index=2, ts_ms=3, observation="screenshot", url=LONG_URL),
    )
    with Store(db) as store:
        store.add_run(run_record())
        store.write_episode(record("ep-1").model_copy(update={"trace": steps, "steps": 3}))
    shown = subprocess.run(
        [sys.executable, "-m", "susbench", "trace", "ep-1", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert shown.returncode == 0, shown.stderr
    assert URL in shown.stdout and URL + "&more=1" in shown.stdout
    assert "…" not in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    lines = shown.stdout.splitlines()
    under = lines[lines.index("  page:", lines.index("step: 2")) + 1 :]
    folded = [
        line.removeprefix("    ") for line in under[: next(i for i, x in enumerate(under) if x[:4] != "    ")]
    ]
    assert len(LONG_URL) > 80 and "".join(folded) == LONG_URL, shown.stdout
