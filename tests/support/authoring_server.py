"""A local OpenAI-compatible chat endpoint that serves the drafts a test chose, for requests the test
checks: the authoring pipeline's tests know exactly which draft the model "wrote" and why."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from susbench.agents.servers.base import ModelServer, ProtocolHandler, Refused, require
from susbench.agents.servers.chat import chat_completion

DraftWriter = Callable[[dict[str, Any]], str]


class ServedDrafts(ProtocolHandler):
    """`POST /v1/chat/completions` answering each request with `answer(request)` as the content;
    `structured=False` refuses `response_format` as a server without structured outputs does."""

    path = "/v1/chat/completions"

    def __init__(self, answer: DraftWriter, structured: bool = True) -> None:
        self.answer_for = answer
        self.structured = structured

    def authorized(self, headers: dict[str, str], api_key: str) -> bool:
        return headers.get("authorization") == f"Bearer {api_key}"

    def error_body(self, status: int, kind: str, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def answer(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        require(request, "model", "messages")
        if request.get("response_format") and not self.structured:
            raise Refused(400, "invalid_request_error", "response_format is not supported by this server")
        message = {"role": "assistant", "content": self.answer_for(request), "refusal": None}
        return chat_completion(request, message, "stop")


def draft_server(answer: DraftWriter, structured: bool = True, api_key: str = "test-key") -> ModelServer:
    return ModelServer([ServedDrafts(answer, structured)], api_key=api_key)


def user_text(request: dict[str, Any]) -> str:
    return "\n".join(message["content"] for message in request["messages"] if message["role"] == "user")


def as_json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


def requested_type(request: dict[str, Any]) -> str:
    """The pattern type a draft request asks for (the schema's one allowed `type`)."""
    schema = (request.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    allowed = schema.get("properties", {}).get("type", {}).get("enum") or [""]
    return str(allowed[0])


def requested_site(request: dict[str, Any]) -> str:
    """The site of the page a draft request shows the model (its prompt's `The page:` line)."""
    found = re.search(r"^The page: (\S+)$", user_text(request), re.MULTILINE)
    return (urlsplit(found.group(1)).hostname or "") if found else ""
