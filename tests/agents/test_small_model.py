"""What a small local model needs from `openai-chat`, checked without a browser: a server that
refuses structured outputs is asked again without them (the prompt asks for JSON anyway), the
compact observation is refused where it has no meaning, and a bad GGUF path is named."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from openai.types.chat import ChatCompletion

from susbench.agents import local_model
from susbench.agents.actions import Click, History, parse_action
from susbench.agents.local_model import LocalModelSettings, local_model_missing, local_model_server
from susbench.agents.observe import Element, Observation
from susbench.agents.openai_chat import ChatConversation, OpenAIChatOperator
from susbench.agents.window import ViewportState
from susbench.browser.bridge import Box
from susbench.core.errors import InputError, SusbenchError
from susbench.operators import OperatorSettings, check_operator

REFUSAL = {"error": {"message": "response_format: json_schema is not supported", "type": "invalid_request"}}


@pytest.fixture
def no_schema_server() -> Iterator[tuple[str, list[dict[str, object]]]]:
    """A chat-completions server without structured outputs: HTTP 400 for response_format."""
    seen: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append(request)
            refused = "response_format" in request
            body = REFUSAL if refused else _completion('{"action": "scroll", "dy": 400}')
            data = json.dumps(body).encode()
            self.send_response(400 if refused else 200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def _completion(content: str) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "small",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def shop_page(number: int, text: str) -> Observation:
    """An axtree observation listing one "Buy" button as element `number`."""
    buy = Element(
        id=number,
        role="button",
        name="Buy",
        box=Box(x=0, y=0, width=40, height=20),
        in_viewport=True,
        visible=True,
        node=5,
    )
    return Observation(
        kind="axtree",
        url="https://shop.test/",
        title="Shop",
        tabs=[],
        screenshot=b"",
        image=None,
        viewport=ViewportState(width=1280, height=800, scroll_x=0, scroll_y=0, page_height=800),
        text=text,
        elements={number: buy},
    )


def _chat_reply(content: str) -> ChatCompletion:
    return ChatCompletion.model_validate(_completion(content))


def test_a_server_without_structured_outputs_gets_json_in_the_prompt(
    no_schema_server: tuple[str, list[dict[str, object]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, seen = no_schema_server
    monkeypatch.setenv("SMALL_KEY", "sk-small")
    settings = OperatorSettings(
        model="small",
        base_url=base_url,
        observation="axtree",
        action_format="json",
        config={"api_key_env": "SMALL_KEY", "vision": False, "seed": 7, "temperature": 0},
    )
    operator = OpenAIChatOperator(settings)
    page = shop_page(1, "[1] button")
    conversation = ChatConversation(operator, "Buy a mug.", page)
    for _ in range(2):
        conversation.prepare(page, [])
        turn = conversation.accept(conversation.send(30).parse())
        assert [proposal.action.model_dump()["dy"] for proposal in turn.proposals] == [400.0]
    assert ["response_format" in request for request in seen] == [True, False, False]
    click = next(
        variant
        for variant in seen[0]["response_format"]["json_schema"]["schema"]["anyOf"]
        if variant["properties"]["action"] == {"const": "click"}
    )
    assert click["properties"]["element"]["enum"] == [1], "only the page's own element numbers"
    assert all(request["seed"] == 7 and request["temperature"] == 0 for request in seen)
    assert "exactly one JSON object" in json.dumps(seen[1]["messages"][0])


def test_the_small_model_settings_offer_element_actions_named_by_their_lines(
    no_schema_server: tuple[str, list[dict[str, object]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve-local's settings: only element actions, each element named by its listed line, the task
    under every observation, and examples that name no element a model could copy."""
    base_url, seen = no_schema_server
    monkeypatch.setenv("SMALL_KEY", "sk-small")
    config = {"api_key_env": "SMALL_KEY", "vision": False, "compact": True}
    settings = OperatorSettings(
        model="small",
        base_url=base_url,
        observation="axtree",
        action_format="json",
        config={**config, **LocalModelSettings().model_dump(mode="json")},
    )
    operator = OpenAIChatOperator(settings)
    page = shop_page(4, '[4] button "Buy"')
    conversation = ChatConversation(operator, "Buy a mug.", page)
    conversation.prepare(page, [])
    conversation.accept(conversation.send(30).parse())
    schema = seen[0]["response_format"]["json_schema"]["schema"]
    offered = {variant["properties"]["action"]["const"]: variant for variant in schema["anyOf"]}
    assert set(offered) == {"click", "type", "scroll", "back", "done"}
    assert set(offered["click"]["properties"]) == {"action", "element"}, "no coordinates, buttons or keys"
    assert offered["click"]["properties"]["element"]["enum"] == ['[4] button "Buy"']
    system, first_task, observed = seen[0]["messages"]
    assert first_task["content"] == "Task: Buy a mug."
    assert observed["content"][0]["text"].endswith("Task: Buy a mug.")
    assert '"element": "[N] role' in system["content"] and not re.search(
        r'"element": "?\[?\d', system["content"]
    )
    assert "modifiers" not in system["content"] and "goto" not in system["content"]
    assert parse_action({"action": "click", "element": '[4] button "Buy"'}) == Click(element=4)
    turn = conversation.accept(_chat_reply('{"action": "goto", "url": "https://elsewhere.test/"}'))
    assert turn.proposals[0].action is None and "the actions are: click, type" in turn.proposals[0].error
    assert parse_action({"action": "forward"}) == History(action="forward"), (
        "the full space takes every action"
    )


def test_compact_is_for_the_axtree_and_a_bad_model_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SusbenchError, match="compact: true shortens the axtree observation, not som"):
        check_operator("openai-chat", OperatorSettings(observation="som", config={"compact": True}))
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(InputError, match=r"model\.gguf: not a GGUF file"), local_model_server(not_gguf):
        pass
    missing = tmp_path / "missing.gguf"
    with pytest.raises(InputError, match=r"missing\.gguf: no such file"), local_model_server(missing):
        pass


def test_the_demo_says_why_it_leaves_the_model_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """`susbench demo` runs the packaged model when it is installed; otherwise it names what is missing."""
    assert local_model_missing() is None, "make local-model installed it for this suite"
    monkeypatch.setattr(local_model, "MODEL_MODULE", "no_such_model_package")
    missing = local_model_missing()
    assert missing is not None and "susbench agents install-local-model" in missing
