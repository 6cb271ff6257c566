"""`susbench injections preview` refuses what it cannot show before it starts a browser: an unknown
`--id` is one line and writes no gallery, and `--injections DIR` (as in `run`) reads the folder."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli


def test_an_unknown_id_is_one_line_and_no_gallery(tmp_path: Path) -> None:
    result = run_cli("injections", "preview", "--id", "no-such-injection", "--out", str(tmp_path / "g"))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "--id no-such-injection: no such injection" in line
    assert not (tmp_path / "g").exists()


def test_a_folder_of_ones_own_injections_is_read_and_checked(tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "bazaarly.test"
    mine.mkdir(parents=True)
    (mine / "my-card.yaml").write_text("id: my-card\ntype: disguised_ad\n", encoding="utf-8")
    result = run_cli(
        "injections", "preview", "--injections", str(tmp_path / "mine"), "--out", str(tmp_path / "g")
    )
    assert result.returncode != 0
    assert "my-card.yaml" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "g").exists()
