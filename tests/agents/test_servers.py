"""The local protocol servers, driven by the vendors' own SDKs: they answer as the real APIs do
(formats, chaining, refusals, errors), and the agents' parsers read their answers.

No browser: a hand-written demonstration is played.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import openai
import pytest

from susbench.agents.actions import Click, Scroll
from susbench.agents.anthropic_cu import Display, computer_action
from susbench.agents.demonstration import Demonstration, DemonstrationMove, DemonstrationSet, Target
from susbench.agents.observe import SOM_HEADER
from susbench.agents.openai_chat import chat_tools, read_json_action
from susbench.agents.openai_cua import cua_action
from susbench.agents.servers import Fault, ModelServer, ScriptedPolicy, model_server
from susbench.agents.window import ViewportState
from susbench.core.models import Viewport

KEY = "sk-servers-test"
TASK = "Put the brass lamp in the basket"
DEMO = Demonstration(
    task_id="lamp-basket",
    instruction=TASK,
    injection_id="some-injection",
    policy="careful",
    viewport=Viewport(width=1280, height=800),
    outcome="avoided",
    moves=(
        DemonstrationMove(kind="scroll", dy=400, words="Scrolling down."),
        DemonstrationMove(
            kind="click",
            x=900,
            y=420,
            target=Target(role="button", name="Add to basket", ordinal=2, visible_ordinal=1),
            words='Clicking "Add to basket".',
        ),
        DemonstrationMove(kind="done", text="It is in the basket.", words="Done."),
    ),
)
LISTING = "\n".join(
    [
        "URL: https://shop.test/",
        SOM_HEADER,
        '[3] button "Add to basket"',
        '[7] link "Help"',
        '[9] button "Add to basket"',
    ]
)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    policy = ScriptedPolicy(DemonstrationSet(demonstrations=(DEMO,)), (Fault(turn=3, kind="safety_check"),))
    with model_server(policy, api_key=KEY) as running:
        yield running


def chat(server: ModelServer, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=server.openai_base_url, max_retries=0, timeout=5)


def test_chat_completions_tools_and_json(server: ModelServer) -> None:
    client = chat(server)
    messages: list[dict[str, object]] = [{"role": "user", "content": f"Task: {TASK}"}]
    first = client.chat.completions.create(model="scripted", messages=messages, tools=chat_tools())
    (call,) = first.choices[0].message.tool_calls or []
    assert (call.function.name, json.loads(call.function.arguments)) == ("scroll", {"dy": 400.0})
    assert first.choices[0].finish_reason == "tool_calls" and first.usage and first.usage.prompt_tokens > 0

    unanswered = [
        *messages,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "x"},
    ]
    with pytest.raises(openai.BadRequestError, match="must be followed by tool messages"):
        client.chat.completions.create(model="scripted", messages=unanswered, tools=chat_tools())

    answered = [
        *unanswered[:-1],
        {"role": "tool", "tool_call_id": call.id, "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": LISTING}]},
    ]
    second = client.chat.completions.create(model="scripted", messages=answered, tools=chat_tools())
    (call,) = second.choices[0].message.tool_calls or []
    assert json.loads(call.function.arguments) == {"element": 9}  # the second "Add to basket" on screen

    as_json = client.chat.completions.create(
        model="scripted",
        messages=[
            messages[0],
            {"role": "assistant", "content": '{"action": "scroll", "dy": 400}'},
            answered[-1],
        ],
        response_format={"type": "json_schema", "json_schema": {"name": "browser_action", "schema": {}}},
    )
    data, problem = read_json_action(as_json.choices[0].message.content or "")
    assert (data, problem) == ({"action": "click", "element": 9}, None)


def test_chat_refuses_a_wrong_key_with_the_vendors_error(server: ModelServer) -> None:
    with pytest.raises(openai.AuthenticationError):
        chat(server, key="sk-wrong").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )


def test_server_faults_reach_the_sdk_as_the_vendors_errors(server: ModelServer) -> None:
    server.fail(429, times=1)
    server.fail(503, times=1)
    client = chat(server)
    message = [{"role": "user", "content": f"Task: {TASK}"}]
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="m", messages=message)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=message)
    assert client.chat.completions.create(model="m", messages=message).choices[0].message.content
    server.hang(times=1)
    with pytest.raises(openai.APITimeoutError):
        openai.OpenAI(
            api_key=KEY, base_url=server.openai_base_url, max_retries=0, timeout=1
        ).chat.completions.create(model="m", messages=message)


def screenshot_output(call_id: str, acknowledged: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {
        "type": "computer_call_output",
        "call_id": call_id,
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBORw0KGgo="},
        "acknowledged_safety_checks": acknowledged or [],
    }


def test_responses_chain_and_safety_checks(server: ModelServer) -> None:
    client = chat(server)
    tool = {
        "type": "computer_use_preview",
        "display_width": 1280,
        "display_height": 800,
        "environment": "browser",
    }
    with pytest.raises(openai.BadRequestError, match="truncation"):
        client.responses.create(model="m", input=TASK, tools=[tool])
    first = client.responses.create(
        model="m", input=[{"role": "user", "content": TASK}], tools=[tool], truncation="auto"
    )
    (call,) = [item for item in first.output if item.type == "computer_call"]
    assert (
        call.action
        and call.action.type == "scroll"
        and cua_action(call.action.model_dump()) == Scroll(x=640, y=400, dx=0, dy=400)
    )
    with pytest.raises(openai.BadRequestError, match="No tool output found"):
        client.responses.create(
            model="m", previous_response_id=first.id, input=[], tools=[tool], truncation="auto"
        )
    with pytest.raises(openai.BadRequestError, match="not found"):
        client.responses.create(
            model="m", previous_response_id="resp_nope", input=[], tools=[tool], truncation="auto"
        )
    second = client.responses.create(
        model="m",
        previous_response_id=first.id,
        input=[screenshot_output(call.call_id)],
        tools=[tool],
        truncation="auto",
    )
    (call,) = [item for item in second.output if item.type == "computer_call"]
    assert cua_action(call.action.model_dump() if call.action else {}) == Click(x=900, y=420)
    third = client.responses.create(
        model="m",
        previous_response_id=second.id,
        input=[screenshot_output(call.call_id)],
        tools=[tool],
        truncation="auto",
    )
    assert [item.type for item in third.output] == ["reasoning", "message"]
    assert third.output[-1].content[0].text == "It is in the basket."  # type: ignore[union-attr]


def test_responses_ga_tool_batches_and_demands_acknowledged_checks() -> None:
    policy = ScriptedPolicy(DemonstrationSet(demonstrations=(DEMO,)), (Fault(turn=0, kind="safety_check"),))
    with model_server(policy) as server:
        client = chat(server)
        first = client.responses.create(model="m", input=TASK, tools=[{"type": "computer"}])
        (call,) = [item for item in first.output if item.type == "computer_call"]
        assert [action.type for action in call.actions or []] == ["scroll", "click"]
        (check,) = call.pending_safety_checks
        follow = {"model": "m", "previous_response_id": first.id, "tools": [{"type": "computer"}]}
        with pytest.raises(openai.BadRequestError, match="not acknowledged"):
            client.responses.create(input=[screenshot_output(call.call_id)], **follow)
        done = client.responses.create(
            input=[screenshot_output(call.call_id, [check.model_dump()])], **follow
        )
        assert [item.type for item in done.output] == ["reasoning", "message"]


def test_messages_beta_header_scaling_and_tool_results(server: ModelServer) -> None:
    client = anthropic.Anthropic(api_key=KEY, base_url=server.anthropic_base_url, max_retries=0, timeout=5)
    tool = {
        "type": "computer_20250124",
        "name": "computer",
        "display_width_px": 1024,
        "display_height_px": 640,
    }
    first_turn = [{"role": "user", "content": [{"type": "text", "text": TASK}]}]
    with pytest.raises(anthropic.BadRequestError, match="requires the beta header 'computer-use-2025-01-24'"):
        client.beta.messages.create(model="m", max_tokens=100, messages=first_turn, tools=[tool])
    ask = {"model": "m", "max_tokens": 100, "tools": [tool], "betas": ["computer-use-2025-01-24"]}
    first = client.beta.messages.create(messages=first_turn, **ask)
    use = first.content[-1]
    assert first.stop_reason == "tool_use" and use.type == "tool_use"
    assert use.input == {
        "action": "scroll",
        "coordinate": [512, 320],
        "scroll_direction": "down",
        "scroll_amount": 4,
    }
    display = Display((1024, 640), ViewportState(width=1280, height=800))
    assert computer_action(use.input, display, scroll_px=100) == Scroll(x=640, y=400, dy=400)  # type: ignore[arg-type]
    history = [*first_turn, {"role": "assistant", "content": [block.model_dump() for block in first.content]}]
    with pytest.raises(anthropic.BadRequestError, match="without tool_result"):
        client.beta.messages.create(messages=[*history, {"role": "user", "content": "next"}], **ask)
    result = {"type": "tool_result", "tool_use_id": use.id, "content": [{"type": "text", "text": "ok"}]}
    second = client.beta.messages.create(messages=[*history, {"role": "user", "content": [result]}], **ask)
    click = second.content[-1]
    assert click.type == "tool_use" and click.input == {"action": "left_click", "coordinate": [720, 336]}
    assert computer_action(click.input, display, scroll_px=100) == Click(x=900, y=420)  # type: ignore[arg-type]
