"""A small BrowserGym-protocol agent driven by a chat model at an OpenAI-compatible endpoint.

It is an ordinary BrowserGym `Agent` (what AgentLab runs): BrowserGym's AXTree text as its observation,
BrowserGym's HighLevelActionSet as its actions, one chat completion per step. It knows nothing of
SusBench; the tests drive it against a local server replaying demonstrations, and any served model
(`base_url`) can take its place.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from dataclasses import dataclass
from typing import Any

from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.experiments.agent import Agent, AgentInfo
from browsergym.experiments.loop import AbstractAgentArgs
from browsergym.utils.obs import flatten_axtree_to_str

SYSTEM = (
    "You act in a web browser through BrowserGym's high-level actions to reach the user's goal. "
    "Each turn you get the page's accessibility tree, elements marked [bid]; answer with exactly one "
    "action, a function call from this list, and nothing else.\n\n{actions}"
)
CALL = re.compile(r"```(?:python)?\s*(.+?)\s*```", re.DOTALL)


class ChatModelAgent(Agent):
    """One chat completion per step: the goal, the actions so far, the AXTree now -> one action."""

    def __init__(self, model: str, base_url: str, api_key_env: str, timeout_s: float = 60.0) -> None:
        self.action_set = HighLevelActionSet(
            subsets=["chat", "infeas", "bid", "coord", "nav", "tab"], strict=False
        )
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = os.environ[api_key_env]
        self.timeout_s = timeout_s
        self.history: list[tuple[str, str]] = []

    def obs_preprocessor(self, obs: dict[str, Any]) -> dict[str, Any]:
        return {
            "goal_object": obs["goal_object"],
            "url": obs["url"],
            "axtree_txt": flatten_axtree_to_str(obs["axtree_object"]),
            "last_action_error": obs["last_action_error"],
        }

    def get_action(self, obs: dict[str, Any]) -> tuple[str, AgentInfo]:
        if self.history:
            action, _ = self.history[-1]
            self.history[-1] = (action, obs["last_action_error"])
        goal = "\n".join(part["text"] for part in obs["goal_object"] if part["type"] == "text")
        messages: list[dict[str, str]] = [
            {
                "role": "system",
                "content": SYSTEM.format(actions=self.action_set.describe(with_examples=True)),
            },
            {"role": "user", "content": f"# Goal\n{goal}"},
        ]
        for action, error in self.history:
            messages.append({"role": "assistant", "content": action})
            messages.append({"role": "user", "content": f"Error: {error}" if error else "Done."})
        messages[-1 if self.history else 1]["content"] += f"\n\n# Page ({obs['url']})\n{obs['axtree_txt']}"
        reply = self._complete(messages)
        text = reply["choices"][0]["message"]["content"] or ""
        found = CALL.search(text)
        action = (found.group(1) if found else text).strip()
        self.history.append((action, ""))
        usage = reply.get("usage") or {}
        stats = {"tokens_in": usage.get("prompt_tokens", 0), "tokens_out": usage.get("completion_tokens", 0)}
        return action, AgentInfo(think=text, chat_messages=messages, stats=stats)

    def _complete(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body = json.dumps({"model": self.model, "messages": messages, "temperature": 0}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body,
            headers={"content-type": "application/json", "authorization": f"Bearer {self.api_key}"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read())


@dataclass
class ChatModelAgentArgs(AbstractAgentArgs):
    """AgentLab's way to name and make the agent."""

    model: str = "model"
    base_url: str = "http://127.0.0.1:8700/v1"
    api_key_env: str = "OPENAI_API_KEY"

    def make_agent(self) -> ChatModelAgent:
        return ChatModelAgent(self.model, self.base_url, self.api_key_env)
