"""The `browsergym:<agent name>` operator: the controller's side of an episode a BrowserGym env drives.

A BrowserGym task (`susbench_browsergym`, in BrowserGym's own virtualenv) starts the episode with
`susbench run --operator browsergym:<agent>`; the controller launches Chromium with our extension and
the replay, opens the start page, and this operator connects to the task's socket (its path in
`SUSBENCH_BROWSERGYM_CHANNEL`) and answers it until the env ends the episode:

    -> {"event": "ready", "cdp_url": ..., "episode_id": ..., "instruction": ..., "start_url": ...}
    <- {"op": "mark"|"unmark"|"target", "url": ..., ...}   the extension's ids inside the pattern
    <- {"op": "validate"}                                   the task's completion check now
    <- {"op": "step", ...}                                  one BrowserGym step, for the trace
    <- {"op": "end", "done": bool, "message": str}          the env's teardown

Every request gets one JSON line back. The controller then scores and stores the episode as any other.
"""

from __future__ import annotations

import base64
import json
import os
import socket
from typing import Any, ClassVar

from pydantic import Field

from susbench.agents.harness import save_image
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen
from susbench.operators.base import OperatorResult, OperatorSettings, SubjectContext
from susbench.records.trace import StepRecord

CHANNEL_VARIABLE = "SUSBENCH_BROWSERGYM_CHANNEL"
OBSERVATION = "browsergym"
POLL_S = 0.1
MARK_OPS = frozenset({"mark", "unmark", "target"})


class BrowserGymConfig(Frozen):
    """What the BrowserGym side says about itself: part of the run's identity."""

    browsergym: str = Field(min_length=1, description="BrowserGym's version (browsergym-core)")
    playwright: str = Field(default="", description="the Playwright version BrowserGym drives with")


class BrowserGymOperator:
    """A BrowserGym env and its agent, in their own virtualenv, acting over CDP in the episode's browser."""

    name: ClassVar[str] = "browsergym"
    needs_cdp: ClassVar[bool] = True

    def __init__(self, settings: OperatorSettings) -> None:
        given = [flag for flag in settings.given() if flag != "--operator-config"]
        if given:
            raise SusbenchError(
                f"{', '.join(given)}: a browsergym operator is configured by its BrowserGym env, not here"
            )
        try:
            self.config = BrowserGymConfig.model_validate(settings.config)
        except ValueError as exc:
            raise SusbenchError(f"{settings.config_source}: {exc}") from None

    def act(self, ctx: SubjectContext) -> OperatorResult:
        path = os.environ.get(CHANNEL_VARIABLE)
        if not path:
            raise SusbenchError(
                f"{CHANNEL_VARIABLE} is not set: a browsergym operator is started by a BrowserGym task "
                "(gymnasium.make('browsergym/susbench.<task>')), not by hand"
            )
        if ctx.cdp_endpoint is None or ctx.marks is None:
            raise SusbenchError(
                "a browsergym operator needs the browser's CDP endpoint and the extension's ids"
            )
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as channel:
            channel.connect(path)
            channel.settimeout(POLL_S)
            stream = _Lines(channel)
            stream.send(
                {
                    "event": "ready",
                    "cdp_url": ctx.cdp_endpoint,
                    "episode_id": ctx.episode_id,
                    "instruction": ctx.instruction,
                    "start_url": ctx.page.url,
                    "max_steps": ctx.limits.max_steps,
                }
            )
            return self._serve(ctx, stream)

    def _serve(self, ctx: SubjectContext, stream: _Lines) -> OperatorResult:
        steps = 0
        while ctx.remaining_s() > 0:
            request = stream.receive()
            if request is None:
                ctx.page.wait_for_timeout(1)  # let Playwright read the browser's events meanwhile
                continue
            op = request.get("op")
            if op == "end":
                stream.send({"ok": True})
                return OperatorResult(
                    done=bool(request.get("done")), steps=steps, message=str(request.get("message", ""))
                )
            if op in MARK_OPS:
                stream.send(
                    ctx.marks(str(request["url"]), {key: request[key] for key in request if key != "url"})
                )
            elif op == "validate":
                stream.send({"completed": ctx.completed()})
            elif op == "step":
                self._record(ctx, request)
                steps += 1
                stream.send({"ok": True})
            else:
                stream.send({"error": f"unknown request {op!r}"})
        return OperatorResult(done=False, steps=steps, message="time limit reached")

    def _record(self, ctx: SubjectContext, step: dict[str, Any]) -> None:
        index = int(step["index"])
        image = base64.b64decode(step["screenshot"]) if step.get("screenshot") else None
        name, digest = save_image(ctx.trace_dir, index, image) if image is not None else (None, None)
        ctx.record_step(
            StepRecord(
                index=index,
                ts_ms=int(step["ts_ms"]),
                observation=OBSERVATION,
                url=str(step["url"]),
                title=str(step["title"]),
                tabs=int(step["tabs"]),
                screenshot=name,
                screenshot_sha256=digest,
                observation_text=str(step["observation_text"]),
                reply_text=str(step.get("thought", "")),
                actions=({"action": str(step["action"])},),
                action_errors=tuple(error for error in (step.get("action_error") or "",) if error),
                observe_ms=float(step["observe_ms"]),
                act_ms=float(step["act_ms"]),
                error=None,
            )
        )


class _Lines:
    """JSON lines over the task's socket, read without blocking the controller's thread."""

    def __init__(self, channel: socket.socket) -> None:
        self.channel = channel
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        self.channel.sendall(json.dumps(message).encode() + b"\n")

    def receive(self) -> dict[str, Any] | None:
        """The next request, or None if none has come yet; the task going away is an error."""
        while b"\n" not in self.buffer:
            try:
                chunk = self.channel.recv(1 << 16)
            except TimeoutError:
                return None
            if not chunk:
                raise SusbenchError("the BrowserGym task closed its channel before ending the episode")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)
