"""The injection catalog: validation, listing, templates, role policy and the extension build."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from susbench.apps import load_specs
from susbench.catalog.injections import build_extension, load_injections, load_templates
from susbench.cli.injections import injections_app
from susbench.core.errors import InputError
from susbench.core.models import CHOICE_ROLES, PATTERN_TYPES
from susbench.core.paths import INJECTIONS_DIR
from susbench.core.urlpattern import url_matches
from susbench.operators.scripted import ROLE_POLICY
from susbench.web import SITES

GOOD = """\
id: {id}
type: popup_ad
site: shop.test
page: {{url: 'shop.test/*', anchors: [{{role: main}}], example: 'https://shop.test/x'}}
placement: overlay
texts: {{title: T, body: B, cta: Go, close: Close}}
"""


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(injections_app, list(args))


def test_catalog_has_three_per_type_across_all_sites() -> None:
    injections = load_injections()
    counts = Counter(item.type for item in injections)
    assert len(injections) >= 27
    assert all(counts[name] >= 3 for name in PATTERN_TYPES), counts
    own = [item for item in injections if item.site != "*"]  # generic ones fit any site
    app_hosts = {host for spec in load_specs() for host in spec.hosts}
    assert (
        {site.host for site in SITES}
        <= {item.site for item in own}
        <= {site.host for site in SITES} | app_hosts
    )
    for item in own:
        assert item.page.example and url_matches(item.page.url, item.page.example), item.id


def test_templates_offer_the_roles_the_policy_and_rules_need() -> None:
    templates = load_templates()
    for pattern_type, policy in ROLE_POLICY.items():
        roles = set(re.findall(r'data-role="([a-z]+)"', templates[pattern_type].html))
        assert roles <= set(CHOICE_ROLES)
        assert {policy.naive, policy.careful} - {None} <= roles, pattern_type
        assert "susbench" not in templates[pattern_type].html + templates[pattern_type].css


def test_bad_injection_names_file_and_field(tmp_path: Path) -> None:
    site = tmp_path / "shop.test"
    site.mkdir()
    (site / "ok.yaml").write_text(GOOD.format(id="ok"))
    (site / "no-cta.yaml").write_text(GOOD.format(id="no-cta").replace("cta: Go, ", ""))
    elsewhere = GOOD.format(id="bad-url").replace("https://shop.test/x", "https://elsewhere.test/")
    (site / "bad-url.yaml").write_text(elsewhere)
    (site / "broken.yaml").write_text("id: [unclosed\n")
    (site / "renamed.yaml").write_text(GOOD.format(id="other"))
    with pytest.raises(InputError) as error:
        load_injections([tmp_path])
    message = str(error.value)
    assert f"{site / 'no-cta.yaml'}: field '(top level)'" in message
    assert "needs 'cta'" in message
    assert "bad-url.yaml: field 'page'" in message and "does not match" in message
    assert re.search(r"broken.yaml: line \d+: invalid YAML", message)
    assert "renamed.yaml: field 'id'" in message
    assert load_injections([site / "ok.yaml"])[0].id == "ok"


def test_validate_command_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "shop.test" / "x.yaml"
    bad.parent.mkdir()
    bad.write_text(GOOD.format(id="x").replace("type: popup_ad", "type: dark_ad"))
    result = run_cli("validate", str(tmp_path))
    assert isinstance(result.exception, InputError)  # the root app prints it in red and exits 2
    assert "x.yaml: field 'type'" in str(result.exception)
    ok = run_cli("validate")
    assert ok.exit_code == 0 and "injections valid" in ok.output


def test_list_json_is_one_object_per_injection() -> None:
    result = run_cli("list", "--json")
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    assert len(rows) == len([*INJECTIONS_DIR.rglob("*.test/*.yaml"), *INJECTIONS_DIR.glob("generic/*.yaml")])
    assert set(rows[0]) == {"id", "type", "site", "page"}
    assert rows[0]["page"]["anchors"]


def test_build_is_content_addressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUSBENCH_HOME", str(tmp_path))
    injections = load_injections()
    first = build_extension(injections)
    assert first == build_extension(injections)
    assert first.name.startswith("extension-") and first.parent == tmp_path
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3 and "externally_connectable" not in manifest
    store = json.loads((first / "store.js").read_text().removeprefix("self.STORE = ").rstrip(";\n"))
    assert set(store["injections"]) == {item.id for item in injections}
    assert build_extension(injections[:3]) != first


def test_a_new_injection_file_shows_every_error_in_one_round(tmp_path: Path) -> None:
    """A bad field no longer hides a misplaced file: both come in the first validation."""
    source = next(INJECTIONS_DIR.glob("bazaarly.test/*.yaml"))
    text = source.read_text(encoding="utf-8").replace(f"id: {source.stem}\n", "id: my-new-card\n")
    folder = tmp_path / "bazaarly.test"
    folder.mkdir()
    (folder / "my-card.yaml").write_text(text + "placement_typo: after\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_injections((tmp_path,))
    message = str(raised.value)
    assert "placement_typo" in message
    assert "the file must be bazaarly.test/my-new-card.yaml" in message


def test_field_errors_and_the_model_wide_checks_come_in_one_round(tmp_path: Path) -> None:
    """A field error used to hide the checks across fields (they ran only once every field was valid)."""
    source = INJECTIONS_DIR / "bazaarly.test" / "bazaarly-home-sponsored-card.yaml"
    text = source.read_text(encoding="utf-8").replace("  label: Sponsored\n", "")  # a disguised_ad needs it
    text = text.replace("bazaarly.test/\n", "voltcart.test/\n")  # its page (url, example) not on its site
    folder = tmp_path / "bazaarly.test"
    folder.mkdir()
    (folder / "my-card.yaml").write_text(text + "placement_typo: after\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_injections((tmp_path,))
    lines = str(raised.value).splitlines()
    assert any("placement_typo" in line for line in lines)
    assert any(line.endswith("texts: a disguised_ad needs 'label'") for line in lines)
    assert any(line.endswith("page.url: 'voltcart.test/' is not on site 'bazaarly.test'") for line in lines)
    assert any("the file must be bazaarly.test/bazaarly-home-sponsored-card.yaml" in line for line in lines)
    (folder / "my-card.yaml").write_text(text, encoding="utf-8")  # no field error: each check said once
    with pytest.raises(InputError) as raised:
        load_injections((tmp_path,))
    message = str(raised.value)
    assert message.count("needs 'label'") == 1 and message.count("is not on site") == 1


def test_an_id_no_file_could_have_is_quoted_once_and_short(tmp_path: Path) -> None:
    """The place check used to repeat a 200,000-character id whole (the fuzz test found it)."""
    source = INJECTIONS_DIR / "bazaarly.test" / "bazaarly-home-sponsored-card.yaml"
    huge = "x" * 200_000
    text = source.read_text(encoding="utf-8").replace(f"id: {source.stem}\n", f"id: {huge}\n")
    folder = tmp_path / "bazaarly.test"
    folder.mkdir()
    (folder / f"{source.stem}.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_injections((tmp_path,))
    message = str(raised.value)
    assert "field 'id': String should have at most 80 characters" in message
    assert "the file must be" not in message and len(message) < 1000
