"""Local servers speaking the vendors' wire protocols, playing a scripted policy: the agents' tests and
demos run the real SDKs against them, with no vendor and no network."""

from susbench.agents.servers.base import Captured, ModelServer, ProtocolHandler, Refused
from susbench.agents.servers.chat import ChatCompletions
from susbench.agents.servers.messages import Messages
from susbench.agents.servers.policy import Dialogue, Fault, ScriptedPolicy
from susbench.agents.servers.responses import Responses


def model_server(policy: ScriptedPolicy, api_key: str | None = None, port: int = 0) -> ModelServer:
    """One server answering all three protocols from one policy."""
    return ModelServer(
        [ChatCompletions(policy), Responses(policy), Messages(policy)], api_key=api_key, port=port
    )


__all__ = [
    "Captured",
    "ChatCompletions",
    "Dialogue",
    "Fault",
    "Messages",
    "ModelServer",
    "ProtocolHandler",
    "Refused",
    "Responses",
    "ScriptedPolicy",
    "model_server",
]
