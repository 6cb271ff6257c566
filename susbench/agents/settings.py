"""Agent settings: the `--operator-config` file, overridden by the command line, checked once.

Errors name the file and the field. API keys never appear here: the settings name the environment
variable that holds the key (`api_key_env`), and the key is read from the environment only when a
client is made, so it is never part of a run's identity, the database, a trace or a log.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import Field

from susbench.agents.pricing import Price
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import validate_data
from susbench.core.models import Frozen
from susbench.operators.base import ObservationKind, OperatorSettings

CLI_FIELDS = ("model", "base_url", "observation", "max_steps", "action_format")


class AgentConfig(Frozen):
    """What every agent operator takes; each operator adds its own fields."""

    model: str
    base_url: str | None = Field(default=None, description="the SDK's base URL; default: the vendor's")
    observation: ObservationKind = "screenshot"
    max_steps: int | None = Field(default=None, ge=1, description="model turns; default: the task's limit")
    api_key_env: str = Field(min_length=1, description="environment variable holding the API key")
    timeout_s: float = Field(default=60.0, gt=0, description="one model call, before it is retried")
    max_retries: int = Field(default=4, ge=0, description="retries of one call after 429, 5xx or a timeout")
    retry_budget: int = Field(default=12, ge=0, description="retries allowed over a whole episode")
    backoff_s: float = Field(default=1.0, ge=0, description="first wait before a retry; doubles each time")
    backoff_max_s: float = Field(default=30.0, ge=0)
    max_tokens: int = Field(default=1024, ge=1, description="longest reply asked for")
    temperature: float | None = Field(default=None, ge=0, le=2)
    system_prompt: str | None = Field(default=None, description="replaces the built-in system prompt")
    keep_images: int = Field(default=1, ge=1, description="newest screenshots kept in the conversation")
    price: Price | None = Field(default=None, description="USD per million tokens; default: prices.yaml")
    compact: bool = Field(
        default=False, description="axtree: only what is on screen, one flat line per node (small contexts)"
    )
    max_episode_tokens: int | None = Field(
        default=None, ge=1, description="prompt plus completion tokens an episode may spend; then `error`"
    )


ConfigT = TypeVar("ConfigT", bound=AgentConfig)


def resolve_config(operator: str, model: type[ConfigT], settings: OperatorSettings) -> ConfigT:
    """The operator's config: the file's fields, then the command line's, validated together."""
    source = settings.config_source
    data: dict[str, Any] = dict(settings.config)
    if "api_key" in data:
        raise InputError(
            f"{source}: field 'api_key': API keys are read from the environment only; name the variable "
            "with api_key_env"
        )
    for name in CLI_FIELDS:
        value = getattr(settings, name)
        if value is None:
            continue
        if name not in model.model_fields:
            raise SusbenchError(f"--{name.replace('_', '-')}: operator {operator!r} takes no such setting")
        data[name] = value
    return validate_data(source, data, model)


def api_key_from(variable: str, reader: str) -> str:
    """An API key from the environment, or one clear error naming the variable."""
    key = os.environ.get(variable, "")
    if not key:
        raise SusbenchError(
            f"${variable} is not set: {reader} reads its API key from it "
            "(api_key_env in --operator-config names another variable; any value works for a local server)"
        )
    return key


def api_key(operator: str, config: AgentConfig) -> str:
    """The operator's API key, from the environment variable its config names."""
    return api_key_from(config.api_key_env, f"operator {operator!r}")
