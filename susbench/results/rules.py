"""The scoring rules' version, which every stored outcome names: the extension's rules
(`worker/scoring.js`) and the controller's for how an exposure was decided and for an operator that
failed (`susbench/results/decided.py`), so a change to either is a new version."""

from __future__ import annotations

import hashlib
from pathlib import Path

from susbench.core.errors import SusbenchError
from susbench.core.paths import EXTENSION_DIR

SCORING = Path("worker") / "scoring.js"
DECIDED = Path(__file__).with_name("decided.py")


def rules_version(extension_dir: Path = EXTENSION_DIR) -> str:
    """`scoring-` and the first 12 hex digits of the sha256 of both rule files."""
    digest = hashlib.sha256()
    for path in (extension_dir / SCORING, DECIDED):
        try:
            digest.update(path.read_bytes())
        except OSError as exc:
            raise SusbenchError(f"{path}: cannot read the scoring rules: {exc.strerror}") from None
    return f"scoring-{digest.hexdigest()[:12]}"
