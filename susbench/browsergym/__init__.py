"""SusBench tasks as BrowserGym environments: BrowserGym agents run our tasks unchanged.

BrowserGym 0.14.3 pins Playwright 1.44 (this project: 1.65), so it lives in a virtualenv of its own
(`environment.py`, made by `susbench agents install-browsergym`) with the package `susbench_browsergym`
(`package/`, shipped as data and installed there). Its tasks start each episode with `susbench run
--operator browsergym:<agent>` in this install; the controller's `operator.py` then serves the
BrowserGym side over a socket: the CDP endpoint of the episode's Chromium, the extension's element ids
inside the pattern's closed shadow root, the completion check, and each step for the trace.

environment.py  the virtualenv: made once, its interpreter found
catalog.py      the tasks and task sets the virtualenv registers (JSON, for `import susbench_browsergym`)
operator.py     the controller's side of a BrowserGym episode
package/        the in-virtualenv package: tasks, env, the benchmark, a chat-model agent
"""
