"""The records the parts hand each other: a run, an episode with its evidence, an operator's steps.

The controller makes them and the results store keeps them; the parts that only make or read a
record (operators, agents, distributed) import these, never the store.
"""
