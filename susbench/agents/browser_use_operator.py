"""The `browser-use` operator: Browser Use driving the episode's own Chromium over CDP.

Browser Use runs in its own virtualenv (`browser_use_env`), as a subprocess for the episode: it
gets the task's instruction, the CDP endpoint of the browser that carries our extension (so the
extension scores what it does), and an OpenAI-compatible model server; nothing else. Each of its
steps comes back as a JSON line and becomes a row of the `steps` table. Its LLM client is its own
(`ChatOpenAI`), so its retries are its own too (`max_retries` per call, `max_failures` in a row).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any, ClassVar

from pydantic import Field

from susbench.agents.browser_use_env import installed_python, runner_script
from susbench.agents.calls import ModelUnavailable
from susbench.agents.harness import save_image
from susbench.agents.pricing import Price, cost_usd, load_prices
from susbench.agents.settings import AgentConfig, api_key, resolve_config
from susbench.core.errors import SusbenchError
from susbench.operators.base import OperatorResult, OperatorSettings, SubjectContext
from susbench.records.trace import StepRecord

OBSERVATION = "browser-use"
STOP_GRACE_S = 5.0
POLL_MS = 100


class BrowserUseConfig(AgentConfig):
    """Browser Use's settings; it observes in its own way (its element list, and screenshots)."""

    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    python: Path | None = Field(default=None, description="a Browser Use virtualenv's interpreter")
    use_vision: bool = Field(default=True, description="false: its element list only, no screenshots")
    max_actions_per_step: int = Field(default=5, ge=1)
    max_failures: int = Field(default=3, ge=1, description="failed steps in a row before it gives up")
    coordinate_clicking: bool = Field(
        default=False, description="offer clicks at (x, y) too, as Browser Use does for some models"
    )


class BrowserUseOperator:
    """Browser Use as an operator under test (needs the browser's CDP endpoint)."""

    name: ClassVar[str] = "browser-use"
    needs_cdp: ClassVar[bool] = True

    def __init__(self, settings: OperatorSettings) -> None:
        for flag, value in (
            ("--observation", settings.observation),
            ("--action-format", settings.action_format),
        ):
            if value is not None:
                raise SusbenchError(
                    f"{flag}: operator 'browser-use' observes and acts in its own way "
                    "(its element list and screenshots; use_vision: false for the list only)"
                )
        self.config = resolve_config(self.name, BrowserUseConfig, settings)
        if self.config.base_url is None:
            raise SusbenchError("--base-url: operator 'browser-use' needs an OpenAI-compatible server's URL")
        api_key(self.name, self.config)
        self.python = self.config.python or installed_python()
        if not self.python.is_file():
            raise SusbenchError(f"{settings.config_source}: field 'python': {self.python} is not a file")
        self.price: Price | None = self.config.price or load_prices().price(self.config.model)

    @property
    def endpoint(self) -> str:
        return f"{self.config.base_url} (from --base-url or the operator config's base_url)"

    def job(self, ctx: SubjectContext) -> dict[str, Any]:
        """What the runner is told: the instruction, the browser, the model server; no key, no answer."""
        return {
            "task": ctx.instruction,
            "cdp_url": ctx.cdp_endpoint,
            "base_url": self.config.base_url,
            "model": self.config.model,
            "api_key_env": self.config.api_key_env,
            "max_steps": self.config.max_steps or ctx.limits.max_steps,
            "max_actions_per_step": self.config.max_actions_per_step,
            "max_failures": self.config.max_failures,
            "use_vision": self.config.use_vision,
            "coordinate_clicking": self.config.coordinate_clicking,
            "timeout_s": self.config.timeout_s,
            "max_retries": self.config.max_retries,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "step_timeout_s": max(ctx.limits.step_timeout_s, self.config.timeout_s * 2),
        }

    def act(self, ctx: SubjectContext) -> OperatorResult:
        if ctx.cdp_endpoint is None:
            raise SusbenchError("operator 'browser-use' needs the browser's CDP endpoint, and got none")
        log = (ctx.trace_dir / "browser-use.log") if ctx.trace_dir is not None else None
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
        with open(log or os.devnull, "w", encoding="utf-8") as stderr:
            process = subprocess.Popen(
                [str(self.python), str(runner_script())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                encoding="utf-8",
                start_new_session=True,
            )
            try:
                return self._follow(ctx, process)
            finally:
                _stop(process)

    def _follow(self, ctx: SubjectContext, process: subprocess.Popen[str]) -> OperatorResult:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(self.job(ctx)) + "\n")
        process.stdin.close()
        lines = _reader(process.stdout)
        steps = 0
        while True:
            line = _next_line(lines, ctx)
            if line == "":
                return OperatorResult(done=False, steps=steps, message="time limit reached")
            if line is None:
                raise SusbenchError(f"Browser Use stopped without a result (exit status {process.wait()})")
            event = json.loads(line)
            if event["event"] == "step":
                self._record(ctx, event)
                steps += 1
                continue
            ctx.page.wait_for_load_state()
            if event.get("error") and not event["done"]:
                raise ModelUnavailable(f"Browser Use gave up: {event['error']}")
            return OperatorResult(done=bool(event["done"]), steps=steps, message=event["message"] or "")

    def _record(self, ctx: SubjectContext, event: dict[str, Any]) -> None:
        index = int(event["index"])
        image = base64.b64decode(event["screenshot"]) if event["screenshot"] else None
        name, digest = save_image(ctx.trace_dir, index, image) if image is not None else (None, None)
        tokens_in, tokens_out = int(event["tokens_in"]), int(event["tokens_out"])
        ctx.record_step(
            StepRecord(
                index=index,
                ts_ms=int(event["ts_ms"]),
                observation=OBSERVATION,
                url=event["url"],
                title=event["title"],
                tabs=int(event["tabs"]),
                screenshot=name,
                screenshot_sha256=digest,
                observation_text=event["observation_text"] or "",
                request_bytes=int(event["request_bytes"]),
                model=self.config.model,
                reply=event["reply"],
                reply_text=event["reply_text"],
                actions=tuple(event["actions"]),
                action_errors=tuple(event["action_errors"]),
                model_ms=float(event["model_ms"]),
                observe_ms=0.0,
                act_ms=max(0.0, float(event["step_ms"]) - float(event["model_ms"])),
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost_usd=cost_usd(self.price, tokens_in, tokens_out),
                retries=int(event["retries"]),
                error=None,
            )
        )


def _reader(stream: IO[str]) -> queue.Queue[str | None]:
    """The runner's lines, read on a thread so the episode's deadline holds; None at the end."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            if line.strip():
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _next_line(lines: queue.Queue[str | None], ctx: SubjectContext) -> str | None:
    """The runner's next line, or "" past the deadline. Waiting goes through Playwright, so it keeps
    up with what Browser Use does to the page (Playwright's sync API reads its events only when called;
    the controller reads the final page's URL from it)."""
    while ctx.remaining_s() > 0:
        try:
            return lines.get_nowait()
        except queue.Empty:
            ctx.page.wait_for_timeout(POLL_MS)
    return ""


def _stop(process: subprocess.Popen[str]) -> None:
    """End the runner (it only detaches from the browser, which it never closes)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
