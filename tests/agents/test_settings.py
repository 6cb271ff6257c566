"""Agent settings fail early with one clear message naming the file and field (or the flag), keys come
from the environment only, and the pure translations (keys, vendor actions, JSON replies) hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.agents.actions import (
    ActionRefused,
    Click,
    Drag,
    Point,
    Press,
    Scroll,
    TypeText,
    Wait,
    action_schema,
    parse_action,
)
from susbench.agents.anthropic_cu import Display, computer_action
from susbench.agents.keys import UnknownKey, key_combination
from susbench.agents.openai_chat import read_json_action
from susbench.agents.openai_cua import cua_action
from susbench.agents.pricing import Price, cost_usd, load_prices
from susbench.agents.window import ViewportState
from susbench.cli.run import operator_settings
from susbench.core.errors import InputError, SusbenchError
from susbench.operators import OperatorSettings, check_operator, make_operator


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-settings-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-settings-test")


def config_file(tmp_path: Path, text: str) -> OperatorSettings:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    return operator_settings({}, path)


def test_config_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"agent\.yaml: field 'timeout_s': Input should be a valid number"):
        check_operator("openai-chat", config_file(tmp_path, "timeout_s: soon\n"))
    with pytest.raises(InputError, match=r"agent\.yaml: field 'temprature': Extra inputs are not permitted"):
        check_operator("anthropic-cu", config_file(tmp_path, "temprature: 0.2\n"))
    with pytest.raises(
        InputError, match=r"agent\.yaml: field 'api_key': API keys are read from the environment"
    ):
        check_operator("openai-cua", config_file(tmp_path, "api_key: sk-123\n"))
    with pytest.raises(InputError, match=r"agent\.yaml: line 2: invalid YAML"):
        config_file(tmp_path, "model: [unclosed\n")
    with pytest.raises(InputError, match=r"agent\.yaml: expected a mapping of settings, got list"):
        config_file(tmp_path, "- model\n")


def test_settings_an_operator_cannot_honour_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SusbenchError, match="--action-format: operator 'openai-cua' takes no such setting"):
        check_operator("openai-cua", OperatorSettings(action_format="json"))
    with pytest.raises(
        SusbenchError, match="--observation som: operator 'anthropic-cu' sees screenshot only"
    ):
        check_operator("anthropic-cu", OperatorSettings(observation="som"))
    with pytest.raises(SusbenchError, match="needs --observation axtree"):
        check_operator("openai-chat", OperatorSettings(observation="som", config={"vision": False}))
    with pytest.raises(SusbenchError, match="--model, --observation: 'careful' is a scripted baseline"):
        check_operator("careful", OperatorSettings(model="gpt-4o", observation="som"))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(SusbenchError, match=r"\$ANTHROPIC_API_KEY is not set: operator 'anthropic-cu' reads"):
        check_operator("anthropic-cu")
    with pytest.raises(SusbenchError, match=r"\$MY_KEY is not set"):
        check_operator("openai-chat", OperatorSettings(config={"api_key_env": "MY_KEY"}))


def test_command_line_wins_over_the_file(tmp_path: Path) -> None:
    from_file = config_file(tmp_path, "model: gpt-4.1\nobservation: axtree\nmax_tokens: 300\n")
    settings = from_file.model_copy(update={"model": "local-llama", "base_url": "http://127.0.0.1:9/v1"})
    operator = make_operator("openai-chat", settings)
    config = operator.config  # type: ignore[union-attr]
    assert (config.model, config.observation, config.max_tokens) == ("local-llama", "axtree", 300)
    assert str(operator.client.base_url) == "http://127.0.0.1:9/v1/"  # type: ignore[union-attr]
    assert "sk-settings-test" not in settings.model_dump_json()  # what travels to workers and the journal


def test_prices_are_data_and_unknown_models_stay_unpriced() -> None:
    table = load_prices()
    assert table.price("gpt-4o-2024-08-06") == Price(input=2.5, output=10.0)
    assert table.price("gpt-4o-mini") == Price(input=0.15, output=0.6)
    assert table.price("my-local-llama") is None
    assert cost_usd(Price(input=3.0, output=15.0), 1_000_000, 100_000) == pytest.approx(4.5)
    assert cost_usd(None, 10, 10) is None


def test_key_names_from_every_vendor() -> None:
    assert key_combination("ctrl+a") == "Control+a"
    assert key_combination(["CTRL", "SHIFT", "T"]) == "Control+Shift+t"
    assert key_combination("Return") == "Enter"
    assert key_combination("Page_Down") == "PageDown"
    assert key_combination("+") == "+"
    assert key_combination("F5") == "F5"
    with pytest.raises(UnknownKey, match="unknown key 'hyper'"):
        key_combination("hyper+a")


def test_vendor_actions_map_onto_one_vocabulary() -> None:
    assert cua_action({"type": "double_click", "x": 5, "y": 6}) == Click(x=5, y=6, clicks=2)
    assert cua_action({"type": "click", "button": "wheel", "x": 1, "y": 2}) == Click(
        x=1, y=2, button="middle"
    )
    assert cua_action({"type": "keypress", "keys": ["CTRL", "L"]}) == Press(keys="CTRL+L")
    assert cua_action({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}) == Drag(
        path=(Point(x=1, y=2), Point(x=3, y=4))
    )
    assert cua_action({"type": "wait"}) == Wait(seconds=2.0)
    with pytest.raises(ActionRefused, match="unknown computer action 'teleport'"):
        cua_action({"type": "teleport"})

    display = Display((1024, 640), ViewportState(width=1280, height=800))
    assert computer_action({"action": "triple_click", "coordinate": [100, 200]}, display, 100) == Click(
        x=125, y=250, clicks=3
    )
    assert computer_action(
        {"action": "scroll", "scroll_direction": "up", "scroll_amount": 2}, display, 100
    ) == (Scroll(x=640, y=400, dy=-200))
    assert computer_action({"action": "type", "text": "hi"}, display, 100) == TypeText(text="hi")
    with pytest.raises(ActionRefused, match=r"\(1024, 3\) is outside the 1024x640 display"):
        computer_action({"action": "left_click", "coordinate": [1024, 3]}, display, 100)
    with pytest.raises(ActionRefused, match="unsupported computer action 'zoom'"):
        computer_action({"action": "zoom", "region": [0, 0, 10, 10]}, display, 100)


def test_json_replies_actions_and_final_messages() -> None:
    assert read_json_action('```json\n{"action": "done", "answer": "ok"}\n```') == (
        {"action": "done", "answer": "ok"},
        None,
    )
    assert read_json_action("I added the lamp to the basket.") == (None, None)  # a final message
    data, problem = read_json_action('{"action": "click", "x": ')
    assert data is None and problem is not None and problem.startswith("malformed JSON action")
    assert parse_action({"action": "double_click", "element": 4}) == Click(element=4, clicks=2)
    with pytest.raises(ActionRefused, match="give either x and y, or element"):
        parse_action({"action": "click", "x": 3})
    with pytest.raises(ActionRefused, match="invalid action"):
        parse_action({"action": "fly"})


def test_held_keys_are_a_closed_list_in_the_action_and_in_its_schema() -> None:
    """SmolLM2 filled a free-string `modifiers` array until its token budget ran out, on every step;
    the schema a constraining server enforces now allows four keys, at most four times."""
    assert parse_action({"action": "click", "element": 3, "modifiers": ["ctrl", "SHIFT", "cmd"]}) == Click(
        element=3, modifiers=("Control", "Shift", "Meta")
    )
    assert computer_action(
        {"action": "left_click", "coordinate": [8, 8], "text": "shift"},
        Display((1280, 800), ViewportState(width=1280, height=800)),
        100,
    ) == Click(x=8, y=8, modifiers=("Shift",))
    with pytest.raises(ActionRefused, match=r"modifiers\.0"):
        parse_action({"action": "click", "element": 3, "modifiers": ["Arc Pro Gaming Mouse"]})
    with pytest.raises(ActionRefused, match="modifiers"):
        parse_action({"action": "click", "element": 3, "modifiers": ["Alt"] * 5})
    click = next(v for v in action_schema()["anyOf"] if v["properties"]["action"] == {"const": "click"})
    held = click["properties"]["modifiers"]
    assert held["items"]["enum"] == ["Alt", "Control", "Meta", "Shift"] and held["maxItems"] == 4
    clicks = [v for v in action_schema([7, 3])["anyOf"] if v["properties"]["action"] == {"const": "click"}]
    by_element, by_point = clicks
    assert by_element["properties"]["element"]["enum"] == [3, 7] and "x" not in by_element["properties"]
    assert by_element["required"] == ["action", "element"] and by_point["required"] == ["action", "x", "y"]
    assert "element" not in by_point["properties"] and by_point["properties"]["x"]["type"] == "number"
    typing = next(v for v in action_schema([])["anyOf"] if v["properties"]["action"] == {"const": "type"})
    assert typing["properties"]["element"]["anyOf"] == [{"type": "null"}]
    no_elements = [v for v in action_schema([])["anyOf"] if v["properties"]["action"] == {"const": "click"}]
    assert [v["required"] for v in no_elements] == [["action", "x", "y"]]
