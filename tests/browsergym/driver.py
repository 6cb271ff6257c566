"""Drives SusBench's BrowserGym envs for the tests, inside BrowserGym's own virtualenv (run with its
interpreter; it imports no SusBench code). JSON lines: one command on stdin, one answer on stdout.

    {"op": "reset", "task": ID, "db": PATH, "agent": NAME, "seed": N}   -> the observation's summary
    {"op": "step", "action": "click('12')"}                             -> the same, with the reward
    {"op": "bid", "selector": CSS}                                      -> a native element's bid
    {"op": "agent", "task": ID, "db": PATH, "agent": NAME, "base_url": URL, "model": M,
     "api_key_env": VAR, "max_steps": N}    -> the chat-model agent's whole episode, through gym.make
    {"op": "close"}                                                     -> the episode is stored
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import gymnasium as gym
import susbench_browsergym  # noqa: F401 - registers the tasks
from browsergym.core.action.highlevel import HighLevelActionSet
from browsergym.utils.obs import flatten_axtree_to_str
from susbench_browsergym.agent import ChatModelAgent

# A loaded machine must not turn slow steps into a timed-out episode; the tasks' own limits are 90 s.
EPISODE_TIMEOUT_S = 600
ACTIONS = HighLevelActionSet(subsets=["chat", "bid", "nav"], strict=True)


def summary(env: Any, obs: dict[str, Any]) -> dict[str, Any]:
    """What the tests check: the pattern's ids, and where each appears in BrowserGym's observations."""
    page = env.unwrapped.page
    ids = sorted(getattr(page, "_susbench_ids", ()), key=int)
    properties = obs["extra_element_properties"]
    strings = obs["dom_object"]["strings"]
    return {
        "url": obs["url"],
        "episode_id": env.unwrapped.task.episode.episode_id,
        "cdp_url": env.unwrapped.task.episode.ready["cdp_url"],
        "ids": ids,
        "dom_ids": [bid for bid in ids if bid in strings and bid in properties],
        "axtree_ids": sorted(
            {node["browsergym_id"] for node in obs["axtree_object"]["nodes"] if node.get("browsergym_id")}
            & set(ids)
        ),
        "boxes": {bid: properties[bid]["bbox"] for bid in ids if bid in properties},
        "som": [bid for bid in ids if properties.get(bid, {}).get("set_of_marks")],
        "axtree_text": flatten_axtree_to_str(obs["axtree_object"]),
        "last_action_error": obs["last_action_error"],
    }


def run_agent(command: dict[str, Any]) -> dict[str, Any]:
    """BrowserGym's loop as AgentLab runs it: the agent's action set maps its actions to code."""
    agent = ChatModelAgent(command["model"], command["base_url"], command["api_key_env"])
    env = gym.make(
        f"browsergym/susbench.{command['task']}",
        action_mapping=agent.action_set.to_python_code,
        task_kwargs={"db": command["db"], "agent": command["agent"], "episode_timeout_s": EPISODE_TIMEOUT_S},
    )
    obs, info = env.reset(seed=0)
    episode_id, rewards, actions = info["task_info"]["episode_id"], [], []
    for _ in range(command["max_steps"]):
        action, _ = agent.get_action(agent.obs_preprocessor(obs))
        actions.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    env.close()
    return {"episode_id": episode_id, "actions": actions, "rewards": rewards}


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # BrowserGym's own prints go to stderr
    env: Any = None
    for line in sys.stdin:
        command = json.loads(line)
        answer: dict[str, Any]
        if command["op"] == "reset":
            if env is not None:
                env.close()  # an episode a failed test left open
            env = gym.make(
                f"browsergym/susbench.{command['task']}",
                action_mapping=ACTIONS.to_python_code,
                task_kwargs={
                    "db": command["db"],
                    "agent": command["agent"],
                    "episode_timeout_s": EPISODE_TIMEOUT_S,
                },
            )
            obs, info = env.reset(seed=command["seed"])
            answer = summary(env, obs) | {"info": info["task_info"]}
        elif command["op"] == "step":
            obs, reward, terminated, _, info = env.step(command["action"])
            answer = summary(env, obs) | {
                "reward": reward,
                "terminated": terminated,
                "info": info["task_info"],
            }
        elif command["op"] == "agent":
            answer = run_agent(command)
        elif command["op"] == "bid":
            answer = {"bid": env.unwrapped.page.locator(command["selector"]).first.get_attribute("bid")}
        else:
            env.close()
            env = None
            answer = {"closed": True}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
