"""Step 5 and 6 of the paper's pipeline: a model combines the description and the simplified source
into a draft injection; the researcher's notes revise it, round after round, with the history kept.

Any OpenAI-compatible chat endpoint drafts (a vendor's, llama.cpp's, vLLM's, Ollama's, or the
project's own local model). The answer is asked for under a JSON schema where the endpoint takes
`response_format`; where it refuses one, the schema goes into the prompt instead. What the model
decides is only what needs judgement (where, which placement, which words); the site, the type and
the page come from the researcher's command.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError

from susbench.authoring.describe import Description
from susbench.authoring.simplify import SimplifiedSource
from susbench.core.errors import SusbenchError
from susbench.core.loading import describe_validation_error
from susbench.core.models import POPUP_PLACEMENTS, TEXT_KEYS, Frozen, Injection, PatternType

EndpointKind = Literal["openai-compatible", "by-hand"]
PLACEMENTS = ("before", "after", "prepend", "append")
MAX_ID = 80
REQUEST_TIMEOUT_S = 600.0
JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class DraftRound(Frozen):
    """One request to the model and what came back of it."""

    number: int = Field(ge=1)
    notes: str = Field(default="", description="the reviewer's notes this round answers ('' for the first)")
    prompt_sha256: str
    structured: bool = Field(description="asked under response_format json_schema (else schema in prompt)")
    reply: str = Field(description="the model's own words, as received")
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    problems: tuple[str, ...] = ()
    drafted_at: datetime


class DraftHistory(Frozen):
    """Everything one draft was made from, and every round: `history.json` in the draft's folder."""

    snapshot: str
    url: str
    type: PatternType
    near: str | None
    model: str
    base_url: str
    endpoint_kind: EndpointKind = "openai-compatible"
    description: Description
    description_sha256: str
    source: SimplifiedSource
    rounds: tuple[DraftRound, ...] = ()

    def messages(self) -> list[dict[str, str]]:
        """The conversation so far, to continue with a revision."""
        conversation = [
            {"role": "system", "content": system_prompt(self.type)},
            {"role": "user", "content": first_prompt(self.description, self.source)},
        ]
        for previous, round_ in zip((None, *self.rounds), self.rounds, strict=False):
            if previous is not None:
                conversation.append(
                    {"role": "user", "content": revision_prompt(round_.notes, previous.problems)}
                )
            conversation.append({"role": "assistant", "content": round_.reply})
        return conversation


def answer_schema(pattern_type: PatternType) -> dict[str, Any]:
    """The JSON schema of a draft answer for one pattern type."""
    required, optional = TEXT_KEYS[pattern_type]
    placements = list(POPUP_PLACEMENTS) if pattern_type == "popup_ad" else list(PLACEMENTS)
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]*$", "maxLength": MAX_ID},
            "type": {"type": "string", "enum": [pattern_type]},
            "description": {"type": "string"},
            "anchors": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
            "placement": {"type": "string", "enum": placements},
            "texts": {
                "type": "object",
                "properties": {key: {"type": "string"} for key in required + optional},
                "required": list(required),
                "additionalProperties": False,
            },
        },
        "required": ["id", "type", "description", "anchors", "placement", "texts"],
        "additionalProperties": False,
    }


def system_prompt(pattern_type: PatternType) -> str:
    required, optional = TEXT_KEYS[pattern_type]
    placements = POPUP_PLACEMENTS if pattern_type == "popup_ad" else PLACEMENTS
    return (
        "You draft one dark-pattern injection for a research benchmark of deceptive designs. "
        f"The pattern type is {pattern_type}. Answer with one JSON object and nothing else, with the keys: "
        "id (lower-case words joined by '-', naming site, spot and idea), type (the pattern type), "
        "description (one sentence for the catalog), anchors (1 to 3 CSS selectors of elements that exist in "
        "the source shown, most specific first; the pattern is placed relative to the first that matches), "
        f"placement (one of: {', '.join(placements)}), texts (an object with the keys "
        f"{', '.join(required)} and optionally {', '.join(optional) or 'none'}). "
        "Write every text in the page's own language and tone, as the site itself would word it. "
        f"The JSON schema: {json.dumps(answer_schema(pattern_type), separators=(',', ':'))}"
    )


def first_prompt(description: Description, source: SimplifiedSource) -> str:
    wording = "\n".join(f"- {key}: {guidance}" for key, guidance in description.wording.items())
    return (
        f"What to draft\nFunctionality: {description.functionality}\n"
        f"Visual features: {description.visual_features}\nAssets: {description.assets or 'none'}\n"
        f"Wording:\n{wording}\n{description.notes}\n\n"
        f"The page: {source.url}\nTitle: {source.title}\n"
        f"Language (lang attribute): {source.lang or 'not given'}\n"
        f"The spot: {source.spot} ({source.found_by}), text: {source.spot_text!r}\n\n"
        f"The page's source around the spot, simplified (markup, then the computed styles):\n{source.html}\n"
        f"<style>\n{source.css}\n</style>"
    )


def revision_prompt(notes: str, problems: tuple[str, ...]) -> str:
    found = "".join(f"\n- {problem}" for problem in problems)
    return (
        "Revise your last draft. Answer with the whole JSON object again.\n"
        + (f"Reviewer's notes: {notes}\n" if notes else "")
        + (f"Problems found when checking it:{found}" if found else "")
    )


def digest(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def parse_answer(reply: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object in the model's reply, or why there is none (fences and prose around it are fine)."""
    text = reply.strip()
    match = JSON_OBJECT.search(text)
    if match is None:
        return None, "the model's reply holds no JSON object"
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        return None, f"the model's reply is not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return None, "the model's reply is not a JSON object"
    return value, None


def site_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def page_glob(url: str) -> str:
    parts = urlsplit(url)
    return f"{site_of(url)}{parts.path or '/'}"


def draft_injection(
    answer: dict[str, Any], pattern_type: PatternType, url: str
) -> tuple[Injection | None, tuple[str, ...]]:
    """The injection a draft answer describes on `url`, or the problems that keep it from being one."""
    problems: list[str] = []
    drafted_type = answer.get("type", pattern_type)
    if drafted_type != pattern_type:
        problems.append(f"type: the draft is a {drafted_type!r}, but a {pattern_type} was asked for")
    anchors = answer.get("anchors") or []
    if isinstance(anchors, str):
        anchors = [anchors]
    locators = [anchor if isinstance(anchor, dict) else {"css": anchor} for anchor in anchors]
    data = {
        "id": answer.get("id"),
        "type": pattern_type,
        "site": site_of(url),
        "description": answer.get("description", ""),
        "page": {"url": page_glob(url), "anchors": locators, "example": url},
        "placement": answer.get("placement", "after"),
        "texts": answer.get("texts", {}),
    }
    try:
        injection = Injection.model_validate(data)
    except ValidationError as exc:
        problems += describe_validation_error("draft", exc).splitlines()
        return None, tuple(problems)
    return (None if problems else injection), tuple(problems)


class ModelReply(Frozen):
    """One chat completion's answer, as the endpoint gave it."""

    text: str
    structured: bool = Field(description="asked under response_format json_schema (else schema in prompt)")
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cut: bool = Field(default=False, description="the endpoint stopped it at the token limit")


def ask_model(
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    model: str,
    base_url: str,
    api_key: str,
    max_tokens: int | None = None,
) -> ModelReply:
    """One chat completion, under `schema` where the endpoint takes one (else as it comes)."""
    try:
        import openai
    except ImportError as exc:
        raise SusbenchError("drafting needs the OpenAI SDK: pip install -e '.[agents]'") from exc
    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=REQUEST_TIMEOUT_S, max_retries=2)
    formats: list[dict[str, Any] | None] = [
        {"type": "json_schema", "json_schema": {"name": "injection_draft", "schema": schema}},
        None,
    ]
    for response_format in formats:
        extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
        if max_tokens is not None:
            extra["max_tokens"] = max_tokens
        try:
            completion = client.chat.completions.create(
                model=model, messages=messages, temperature=0, **extra
            )
        except openai.BadRequestError as exc:
            if response_format is not None:
                continue
            raise SusbenchError(f"{base_url}: the endpoint refused the request ({exc.message})") from exc
        except openai.APIConnectionError as exc:
            raise SusbenchError(f"{base_url}: no OpenAI-compatible endpoint answers there ({exc})") from exc
        except openai.APIStatusError as exc:
            raise SusbenchError(f"{base_url}: HTTP {exc.status_code} ({exc.message})") from exc
        usage = completion.usage
        choice = completion.choices[0]
        return ModelReply(
            text=choice.message.content or "",
            structured=response_format is not None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            cut=choice.finish_reason == "length",
        )
    raise SusbenchError(f"{base_url}: the endpoint refused the request")


def next_round(
    history: DraftHistory, notes: str, api_key: str, max_tokens: int | None = None
) -> tuple[DraftRound, dict[str, Any] | None]:
    """Ask the model for the next draft: the first, or a revision answering the reviewer's `notes` and
    the problems the last draft's check found."""
    messages = history.messages()
    if history.rounds:
        messages.append({"role": "user", "content": revision_prompt(notes, history.rounds[-1].problems)})
    schema = answer_schema(history.type)
    reply = ask_model(messages, schema, history.model, history.base_url, api_key, max_tokens)
    answer, unreadable = parse_answer(reply.text)
    if unreadable and reply.cut:
        unreadable = f"the model's reply was cut at the token limit (--max-tokens {max_tokens}): {unreadable}"
    drafted = DraftRound(
        number=len(history.rounds) + 1,
        notes=notes,
        prompt_sha256=digest(messages),
        structured=reply.structured,
        reply=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        problems=(unreadable,) if unreadable else (),
        drafted_at=datetime.now(UTC),
    )
    return drafted, answer
