"""The results store: transactional episode writes, the stable view, export, query CLI."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from susbench.core.errors import SusbenchError
from susbench.core.models import OutcomeKind
from susbench.results.store import (
    EPISODE_OUTCOME_COLUMNS,
    TABLES,
    VIEWS,
    Store,
    outcome_checksum,
)
from tests.support.results import record, run_record


def test_episode_is_written_with_everything_and_checksum(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.add_run(run_record())
        store.add_run(run_record())
        rec = record("ep-1")
        store.write_episode(rec)
        assert store.stored_episode_ids("run-1") == {"ep-1"}
        counts = [store.query(f"SELECT count(*) FROM {t}")[1][0][0] for t in ("runs", "events", "requests")]
        assert counts == [1, 2, 2]
        _, rows = store.query("SELECT checksum FROM outcomes")
        assert rows == [(outcome_checksum(rec.outcome),)]
        _, rows = store.query("SELECT count(*) FROM requests WHERE miss")
        assert rows == [(1,)]


def test_failed_episode_write_leaves_nothing(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.write_episode(record("ep-1"))
        with pytest.raises(SusbenchError, match=r"r\.duckdb: could not store episode ep-1: Duplicate key"):
            store.write_episode(record("ep-1"))
        assert store.query("SELECT count(*) FROM events")[1] == [(2,)]
        assert store.query("SELECT count(*) FROM requests")[1] == [(2,)]


def test_view_columns_are_the_contract(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.write_episode(record("ep-1"))
        store.write_episode(record("ep-2", OutcomeKind.NOT_ENCOUNTERED, pattern=None))
        columns, rows = store.query("SELECT * FROM episode_outcomes ORDER BY episode_id")
    assert tuple(columns) == EPISODE_OUTCOME_COLUMNS
    assert rows[0][9] == "avoided" and rows[0][12] == pytest.approx(2.5)
    assert rows[1][5] is None and rows[1][9] == "not_encountered"


def test_export_parquet(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.write_episode(record("ep-1"))
        written = store.export_parquet(tmp_path / "out")
    names = sorted(path.name for path in written)
    assert names == sorted(f"{name}.parquet" for name in (*TABLES, *VIEWS))
    rows = duckdb.sql(f"SELECT outcome FROM '{tmp_path / 'out' / 'episode_outcomes.parquet'}'").fetchall()
    assert rows == [("avoided",)]


def test_bad_paths_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(SusbenchError, match="no results database"):
        Store(tmp_path / "missing.duckdb", read_only=True)
    with pytest.raises(SusbenchError, match="does not exist"):
        Store(tmp_path / "no" / "such" / "r.duckdb")
    (tmp_path / "junk.duckdb").write_text("not a database")
    with pytest.raises(SusbenchError, match="cannot open"):
        Store(tmp_path / "junk.duckdb")
    with Store(tmp_path / "r.duckdb") as store, pytest.raises(SusbenchError, match="query failed"):
        store.query("SELECT nope FROM nowhere")


def test_query_and_export_commands(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from susbench.cli.main import app

    db = tmp_path / "r.duckdb"
    with Store(db) as store:
        store.write_episode(record("ep-1"))
    runner = CliRunner()
    result = runner.invoke(app, ["query", "SELECT task_id, outcome FROM episode_outcomes", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "pizza-order" in result.output and "avoided" in result.output
    result = runner.invoke(app, ["results", "export", "--parquet", str(tmp_path / "pq"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pq" / "outcomes.parquet").is_file()


def test_an_older_results_file_gains_the_new_columns(tmp_path: Path) -> None:
    """A file written before requests had `session` opens, takes new episodes and shows `error`."""
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute(
            "CREATE TABLE requests (episode_id VARCHAR NOT NULL, seq INTEGER NOT NULL, url VARCHAR NOT NULL, "
            "method VARCHAR NOT NULL, match_kind VARCHAR, rule VARCHAR, score DOUBLE, status INTEGER, "
            "miss BOOLEAN NOT NULL, PRIMARY KEY (episode_id, seq))"
        )
        db.execute(
            "INSERT INTO requests VALUES ('ep-0', 0, 'https://pizzapalace.test/', 'GET', 'exact', NULL, "
            "NULL, 200, false)"
        )
    failed = record("ep-1").model_copy(update={"error": "operator timed out after 9 s"})
    served = failed.requests[0].model_copy(update={"session": "pizza-order"})
    with Store(path) as store:
        store.write_episode(failed.model_copy(update={"requests": (served,)}))
        _, sessions = store.query("SELECT episode_id, session FROM requests ORDER BY episode_id")
        _, outcomes = store.query("SELECT outcome, error FROM episode_outcomes")
    assert sessions == [("ep-0", None), ("ep-1", "pizza-order")]
    assert outcomes == [("avoided", "operator timed out after 9 s")]


def test_an_error_episode_is_replaced_by_its_retry_and_nothing_else_is(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.add_run(run_record())
        store.write_episode(record("ep-1", OutcomeKind.ERROR))
        store.write_episode(record("ep-2"))
        assert store.settled_episode_ids("run-1") == {"ep-2"}
        store.write_episode(record("ep-1"))
        assert store.settled_episode_ids("run-1") == {"ep-1", "ep-2"}
        assert store.query("SELECT episode_id, kind FROM outcomes ORDER BY 1")[1] == [
            ("ep-1", "avoided"),
            ("ep-2", "avoided"),
        ]
        assert store.query("SELECT count(*) FROM events")[1] == [(4,)]


def test_a_blank_duckdb_file_is_named_as_holding_no_results(tmp_path: Path) -> None:
    blank = tmp_path / "blank.duckdb"
    duckdb.connect(str(blank)).close()
    with pytest.raises(SusbenchError, match=r"blank\.duckdb: a DuckDB file with no results in it"):
        Store(blank, read_only=True)
