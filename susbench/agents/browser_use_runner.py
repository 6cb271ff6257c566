"""Browser Use, run for one episode inside its own virtualenv: a script, not part of the package's API.

Browser Use pins exact versions (openai 3.x with h11 0.16, pydantic, rich, click, ...) that the main
install cannot take beside mitmproxy 11, so `susbench.agents.browser_use` starts this file with the
interpreter of a separate virtualenv. It imports only the standard library and Browser Use.

Protocol (JSON lines): one job on stdin; on stdout, one `step` line per Browser Use step and a last
`end` line. Browser Use's own logging goes to stderr. It attaches over CDP to the episode's browser,
with its telemetry, cloud sync, judge, planning, highlights and bundled extensions off.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

QUIET_ENVIRONMENT = {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_VERSION_CHECK": "false",
    "BROWSER_USE_CLOUD_HINTS": "false",
    "BROWSER_USE_SETUP_LOGGING": "true",
    "BROWSER_USE_LOGGING_LEVEL": "warning",
}

# Browser Use asks `document.elementFromPoint` whether a click target is covered. For an element in a
# closed shadow root that returns the shadow host, which Browser Use reads as "covered" and clicks with
# a script `element.click()` (not trusted) instead of real input. Our patterns are injected in closed
# shadow roots, where a live site has them in its ordinary DOM; this asks the element's own root
# instead, and the document whether the host is on top, so Browser Use clicks them as it would there.
HIT_TEST = """
function(x, y) {
  const root = this.getRootNode();
  const hit = root.elementFromPoint(x, y);
  const related = (a, b) => a === b || a.contains(b) || b.contains(a);
  if (!hit || !(related(this, hit) || (hit.tagName === "LABEL" && hit.contains(this)))) return false;
  let host = root.host;
  while (host) {
    const above = host.getRootNode().elementFromPoint(x, y);
    if (!above || !related(host, above)) return false;
    host = host.getRootNode().host;
  }
  return true;
}
"""

# Browser Use's click parameters under the names our traces use (`susbench trace` draws them).
TRACE_NAMES = {"index": "element", "coordinate_x": "x", "coordinate_y": "y"}


@dataclass
class Call:
    """One HTTP exchange with the model server."""

    request_bytes: int
    status: int = 0
    reply: str = ""


@dataclass
class StepCalls:
    """The model calls of the step under way: latency, usage and the raw bodies."""

    calls: list[Call] = field(default_factory=list)
    model_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0


def patch_hit_test() -> None:
    from browser_use.browser.watchdogs.default_action_watchdog import DefaultActionWatchdog

    async def check_element_occlusion(
        self: Any, backend_node_id: int, x: float, y: float, cdp_session: Any
    ) -> bool:
        send, session_id = cdp_session.cdp_client.send, cdp_session.session_id
        try:
            node = await send.DOM.resolveNode(
                params={"backendNodeId": backend_node_id}, session_id=session_id
            )
            result = await send.Runtime.callFunctionOn(
                params={
                    "objectId": node["object"]["objectId"],
                    "functionDeclaration": HIT_TEST,
                    "arguments": [{"value": x}, {"value": y}],
                    "returnByValue": True,
                },
                session_id=session_id,
            )
        except Exception:  # noqa: BLE001 - Browser Use's own rule: a failed check is not an occlusion
            return False
        return result.get("result", {}).get("value") is not True

    DefaultActionWatchdog._check_element_occlusion = check_element_occlusion


def emit(out: Any, event: dict[str, Any]) -> None:
    out.write(json.dumps(event) + "\n")
    out.flush()


async def run(job: dict[str, Any], out: Any) -> None:
    import httpx
    from browser_use import Agent, BrowserSession, Tools
    from browser_use.llm.openai.chat import ChatOpenAI

    patch_hit_test()
    current = StepCalls()

    async def on_request(request: httpx.Request) -> None:
        current.calls.append(Call(request_bytes=len(request.content)))

    async def on_response(response: httpx.Response) -> None:
        await response.aread()
        if current.calls:
            current.calls[-1].status = response.status_code
            current.calls[-1].reply = response.text

    class TimedChatOpenAI(ChatOpenAI):
        """Browser Use's own OpenAI client, timed; usage as the server reported it."""

        async def ainvoke(self, messages: Any, output_format: Any = None, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                completion = await super().ainvoke(messages, output_format, **kwargs)
            finally:
                current.model_ms += 1000 * (time.perf_counter() - started)
            if completion.usage is not None:
                current.tokens_in += completion.usage.prompt_tokens
                current.tokens_out += completion.usage.completion_tokens
            return completion

    http_client = httpx.AsyncClient(
        event_hooks={"request": [on_request], "response": [on_response]}, timeout=job["timeout_s"]
    )
    llm = TimedChatOpenAI(
        model=job["model"],
        base_url=job["base_url"],
        api_key=os.environ[job["api_key_env"]],
        http_client=http_client,
        max_retries=job["max_retries"],
        temperature=job["temperature"],
        max_completion_tokens=job["max_tokens"],
    )
    session = BrowserSession(
        cdp_url=job["cdp_url"],
        keep_alive=True,
        headless=False,
        no_viewport=True,
        enable_default_extensions=False,
        highlight_elements=False,
        dom_highlight_elements=False,
        auto_download_pdfs=False,
    )
    screenshots: dict[int, str | None] = {}

    def on_new_step(state: Any, model_output: Any, step: int) -> None:
        screenshots[step] = state.screenshot

    tools = Tools()
    tools.set_coordinate_clicking(job["coordinate_clicking"])
    agent = Agent(
        task=job["task"],
        llm=llm,
        browser_session=session,
        tools=tools,
        use_vision=job["use_vision"],
        use_judge=False,
        enable_planning=False,
        calculate_cost=False,
        generate_gif=False,
        directly_open_url=False,
        enable_signal_handler=False,
        max_actions_per_step=job["max_actions_per_step"],
        max_failures=job["max_failures"],
        llm_timeout=int(job["timeout_s"]),
        step_timeout=int(job["step_timeout_s"]),
        register_new_step_callback=on_new_step,
        file_system_path=tempfile.mkdtemp(prefix="browser-use-files-"),
    )
    emitted = 0

    async def on_step_start(_agent: Any) -> None:
        nonlocal current
        current = StepCalls()

    async def on_step_end(agent: Any) -> None:
        nonlocal emitted
        for item in agent.history.history[emitted:]:
            emit(out, step_event(emitted, item, current, screenshots.get(emitted + 1)))
            emitted += 1

    history = await agent.run(
        max_steps=job["max_steps"], on_step_start=on_step_start, on_step_end=on_step_end
    )
    for item in history.history[emitted:]:
        emit(out, step_event(emitted, item, current, screenshots.get(emitted + 1)))
        emitted += 1
    errors = [error for error in history.errors() if error]
    emit(
        out,
        {
            "event": "end",
            "done": history.is_done(),
            "success": history.is_successful(),
            "steps": len(history.history),
            "message": history.final_result() or "",
            "error": errors[-1] if errors and not history.is_done() else None,
        },
    )


def step_event(index: int, item: Any, calls: StepCalls, screenshot: str | None) -> dict[str, Any]:
    """One Browser Use step as the parent records it."""
    output = item.model_output
    words = ""
    actions: list[dict[str, Any]] = []
    if output is not None:
        words = " ".join(dict.fromkeys(part for part in (output.thinking, output.next_goal) if part))
        actions = [
            {"action": name, **{TRACE_NAMES.get(key, key): value for key, value in (params or {}).items()}}
            for action in output.action
            for name, params in action.model_dump(exclude_none=True, mode="json").items()
        ]
    replies = [call.reply for call in calls.calls if call.status == 200]
    started = item.metadata.step_start_time if item.metadata else time.time()
    return {
        "event": "step",
        "index": index,
        "ts_ms": int(1000 * started),
        "url": item.state.url,
        "title": item.state.title,
        "tabs": len(item.state.tabs),
        "screenshot": screenshot,
        "observation_text": item.state_message,
        "request_bytes": sum(call.request_bytes for call in calls.calls),
        "reply": replies[-1] if replies else "",
        "reply_text": words,
        "actions": actions,
        "action_errors": [result.error for result in item.result if result.error],
        "model_ms": calls.model_ms,
        "step_ms": 1000 * item.metadata.duration_seconds if item.metadata else 0.0,
        "tokens_in": calls.tokens_in,
        "tokens_out": calls.tokens_out,
        "retries": max(0, len(calls.calls) - 1),
    }


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    job = json.loads(sys.stdin.readline())
    os.environ.update(QUIET_ENVIRONMENT)
    os.environ["BROWSER_USE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="browser-use-config-")
    try:
        asyncio.run(run(job, out))
    except Exception as exc:
        emit(
            out,
            {
                "event": "end",
                "done": False,
                "steps": 0,
                "message": "",
                "error": f"{type(exc).__name__}: {exc}",
            },
        )
        raise SystemExit(1) from exc


if __name__ == "__main__":
    main()
