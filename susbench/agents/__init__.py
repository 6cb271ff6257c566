"""Agents as operators under test: a model sees the task and what is on screen, and acts as a person would.

actions.py      the action vocabulary (and the tools / JSON schema chat models are offered)
window.py       the tabs, and a read-only CDP line to each
observe.py      observations (screenshot, som, axtree) that leave no trace in the page
execute.py      actions as real, trusted input
drawing.py      Set-of-Marks and trace images (Pillow)
harness.py      the loop every vendor shares          calls.py      model calls, retries and budgets
settings.py     --operator-config + command line; API keys from the environment only
pricing.py      estimated cost from prices.yaml
openai_chat.py, openai_cua.py, anthropic_cu.py    the vendor loops (entry points `susbench.operators`)
servers/        local servers speaking the vendors' wire protocols, playing scripted policies
demonstrate.py  demonstrations for those policies, walked by a scripted baseline
tracing.py      the trace viewer (text and HTML)
"""
