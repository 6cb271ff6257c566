"""`susbench rescore`: every stored outcome computed again, offline, from the signed evidence it was
computed from, with the current scoring rules.

The rules run as the extension runs them: `rescore.js` loads the extension's own
`worker/scoring.js` and `worker/signing.js` into Node and checks each report's HMAC before scoring it,
so a re-score cannot drift from a run. The controller's own rule for an operator that failed
(`decided.after_failure`) and how the exposure was decided (`decided.decided_by`) are the run's
functions too. Nothing stored is changed: each re-score adds its rows to `rescores` under a new id,
and the `scored_outcomes` view (read by `episode_outcomes`) shows each episode's latest scoring. The
changes reported are against what the run stored (`outcomes`), so an outcome edited there is found
whenever a re-score runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from susbench.core.errors import SusbenchError
from susbench.core.models import Event, Frozen, Outcome, OutcomeKind
from susbench.core.paths import EXTENSION_DIR
from susbench.records.episode import DecidedBy, RequestRecord
from susbench.results.decided import EpisodeFacts, after_failure, decided_by
from susbench.results.rules import rules_version
from susbench.results.store import Store, outcome_checksum

RUNNER = Path(__file__).with_name("rescore.js")


class Scored(Frozen):
    """One episode's outcome as its run stored it and as the current rules score it."""

    episode_id: str
    before: OutcomeKind
    after: OutcomeKind
    reason: str
    decided_before: DecidedBy | None
    decided_after: DecidedBy | None
    rules_before: str | None
    why: str


class Unscored(Frozen):
    """An episode that could not be re-scored, and why (no evidence stored, a signature that fails)."""

    episode_id: str
    outcome: OutcomeKind
    why: str


class Rescore(Frozen):
    """What a re-score did: its id, the rules it used, the episodes it scored, changed and named."""

    rescore_id: str
    rules_version: str
    scored: int
    changed: tuple[Scored, ...]
    classified: int = 0
    """Decided episodes stored before `decided_by` existed that it now classifies."""
    unscored: tuple[Unscored, ...]


EPISODES_SQL = """
SELECT e.episode_id, e.site, e.pattern_type, e.completed, e.error, o.kind, o.reason, o.decided_by,
       o.rules_version, o.injection_id, o.checksum, v.payload, v.signature, v.key
FROM episodes e JOIN outcomes o USING (episode_id) LEFT JOIN evidence v USING (episode_id)
ORDER BY e.run_id, e.task_id, e.repeat, e.episode_id
"""


def _node_scores(lines: list[dict[str, str]], extension_dir: Path) -> dict[str, dict]:
    node = shutil.which("node")
    if node is None:
        raise SusbenchError(
            "susbench rescore runs the extension's scoring in Node.js: `node` is not on PATH; install Node 20"
        )
    if not lines:
        return {}
    done = subprocess.run(
        [node, str(RUNNER), str(extension_dir)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SusbenchError(f"{RUNNER}: the extension's scoring failed in Node: {last}")
    verdicts = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {verdict["episode_id"]: verdict for verdict in verdicts}


def _facts_sources(store: Store) -> tuple[dict[str, list[Event]], dict[str, list[RequestRecord]]]:
    own: dict[str, list[Event]] = defaultdict(list)
    _, rows = store.query(
        "SELECT episode_id, ts_ms, source, kind, detail FROM events WHERE source <> 'extension' "
        "ORDER BY episode_id, seq"
    )
    for episode_id, ts_ms, source, kind, detail in rows:
        own[episode_id].append(Event(ts_ms=ts_ms, source=source, kind=kind, detail=json.loads(detail)))
    requests: dict[str, list[RequestRecord]] = defaultdict(list)
    _, rows = store.query("SELECT episode_id, url, miss, session FROM requests ORDER BY episode_id, seq")
    for episode_id, url, miss, session in rows:
        requests[episode_id].append(RequestRecord(url=url, miss=miss, session=session))
    return own, requests


def rescore_store(db: Path, extension_dir: Path = EXTENSION_DIR) -> Rescore:
    """Re-score every episode of `db` from its stored evidence; adds one `rescores` row per episode
    scored, changes nothing stored."""
    version = rules_version(extension_dir)
    with Store(db) as store:
        _, rows = store.query(EPISODES_SQL)
        stored = [
            (episode_id, payload, signature, key)
            for episode_id, *_, payload, signature, key in rows
            if payload is not None
        ]
        verdicts = _node_scores(
            [{"episode_id": e, "payload": p, "signature": s, "key": k} for e, p, s, k in stored],
            extension_dir,
        )
        own, requests = _facts_sources(store)
        rescore_id = "rescore-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        at = datetime.now(UTC).replace(tzinfo=None)
        changed, unscored, new_rows, classified = [], [], [], 0
        for row in rows:
            episode_id, site, pattern_type, completed, error, kind, reason, decided, rules = row[:9]
            injection_id, checksum, payload = row[9:12]
            before = OutcomeKind(kind)
            verdict = verdicts.get(episode_id)
            if payload is None or verdict is None:
                unscored.append(
                    Unscored(episode_id=episode_id, outcome=before, why="no signed evidence stored")
                )
                continue
            if not verdict["signature_valid"]:
                why = "its stored evidence does not verify (signature or episode id changed)"
                unscored.append(Unscored(episode_id=episode_id, outcome=before, why=why))
                continue
            events = tuple(Event.model_validate(event) for event in json.loads(payload)["events"])
            after, new_reason = after_failure(
                OutcomeKind(verdict["outcome"]), verdict["reason"], events, verdict["deciding"], error
            )
            facts = EpisodeFacts.of(site, completed, own[episode_id], requests[episode_id])
            new_decided = decided_by(after, pattern_type, events, verdict["deciding"], facts)
            new_rows.append([rescore_id, episode_id, after.value, new_reason, new_decided, version, at])
            if after == before and new_decided == decided:
                continue
            if after == before and decided is None:
                classified += 1
                continue
            why = f"{before.value} -> {after.value}: {new_reason}"
            if new_decided != decided:
                why += f" (decided by {decided or '?'} -> {new_decided or '-'})"
            if checksum != outcome_checksum(
                Outcome(
                    episode_id=episode_id,
                    injection_id=injection_id,
                    kind=before,
                    reason=reason,
                    evidence=events,
                )
            ):
                why += "; the stored outcome does not match its checksum (changed after the run stored it)"
            elif rules != version:
                why += f"; rules {rules or 'unversioned'} -> {version}"
            changed.append(
                Scored(
                    episode_id=episode_id,
                    before=before,
                    after=after,
                    reason=new_reason,
                    decided_before=decided,
                    decided_after=new_decided,
                    rules_before=rules,
                    why=why,
                )
            )
        store.add_rescore(new_rows)
    return Rescore(
        rescore_id=rescore_id,
        rules_version=version,
        scored=len(new_rows),
        changed=tuple(changed),
        classified=classified,
        unscored=tuple(unscored),
    )
