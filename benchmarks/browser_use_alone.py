"""Browser Use on its own, as a user would run it: the baseline of `browser_use_overhead.py`.

Run with the interpreter of Browser Use's virtualenv; one job (JSON) on stdin, as the runner takes
it; prints {"steps": N, "done": bool}. Same settings as our runner (telemetry, judge, planning,
highlights off; attached over CDP), but stock Browser Use: no hooks, no timing, no step records, no
hit-test fix.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "susbench" / "agents"))
from browser_use_runner import QUIET_ENVIRONMENT


async def run(job: dict) -> dict:
    from browser_use import Agent, BrowserSession
    from browser_use.llm.openai.chat import ChatOpenAI

    llm = ChatOpenAI(
        model=job["model"],
        base_url=job["base_url"],
        api_key=os.environ[job["api_key_env"]],
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
    )
    agent = Agent(
        task=job["task"],
        llm=llm,
        browser_session=session,
        use_judge=False,
        enable_planning=False,
        directly_open_url=False,
        enable_signal_handler=False,
        max_failures=job["max_failures"],
        file_system_path=tempfile.mkdtemp(prefix="browser-use-files-"),
    )
    history = await agent.run(max_steps=job["max_steps"])
    return {"steps": len(history.history), "done": history.is_done()}


if __name__ == "__main__":
    job = json.loads(sys.stdin.readline())
    os.environ.update(QUIET_ENVIRONMENT)
    os.environ["BROWSER_USE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="browser-use-config-")
    print(json.dumps(asyncio.run(run(job))), flush=True)
