"""Config schemas of the chain app → spine → SystemPrompt / agent loop.

Every schema keeps an omitted ``tool_order`` absent (``None``), never ``[]``;
forwarding passes it on only when it is set. Unknown keys are errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from headerlock.errors import ConfigError, ToolOrderError
from headerlock.runtime.tool_order import validate_tool_order

ModelT = TypeVar("ModelT", bound="Schema")


class Schema(BaseModel):
    """Base of config schemas: frozen, strict about unknown keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    def set_values(self) -> dict[str, Any]:
        """The keys that were given or are not ``None`` (what forwarding passes on)."""
        return self.model_dump(exclude_none=True)


class SystemPromptConfig(Schema):
    """Options of the SystemPrompt service."""

    persona: str | None = None
    tool_order: list[str] | None = Field(default=None)


class LoopConfig(Schema):
    """Options of the agent loop and the model request."""

    model: str = "demo"
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    max_steps: int = Field(default=8, gt=0)
    tool_timeout: float = Field(default=30.0, gt=0)


class SpineConfig(SystemPromptConfig, LoopConfig):
    """The agent core: the intersection of its owners' schemas, plus plugins
    (``plugin_timeout``: seconds each plugin has to load)."""

    plugins: list[str] = Field(default_factory=list)
    plugin_timeout: float = Field(default=30.0, gt=0)


class StdioAppConfig(SpineConfig):
    """The stdio demo app."""

    prompt: str = "> "


class AcpAppConfig(SpineConfig):
    """The ACP demo app."""

    agent_name: str = "headerlock-demo"


def parse_config(
    schema: type[ModelT], data: Mapping[str, Any] | None, *, source: str = "config"
) -> ModelT:
    """Validate ``data`` against ``schema``; errors name the key and the source.

    A ``tool_order`` of the wrong shape raises ``ToolOrderError``.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping, got {type(data).__name__}")
    if "tool_order" in data:
        try:
            validate_tool_order(data["tool_order"])
        except ToolOrderError as error:
            raise ToolOrderError(f"{source}: {error}", kind=error.kind, names=error.names) from None
    try:
        return schema.model_validate(dict(data))
    except ValidationError as error:
        raise config_error(error, source) from None


def first_error(error: ValidationError) -> Any:
    """The error to report first: an unknown key explains the rest, so it comes first."""
    errors = error.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def config_error(error: ValidationError, source: str) -> ConfigError:
    """A ``ConfigError`` naming the first offending key of a pydantic error."""
    first = first_error(error)
    key = ".".join(str(part) for part in first["loc"]) or "(root)"
    if first["type"] == "extra_forbidden":
        message = f"{source}: unknown key {key!r}"
    elif first["type"] == "missing":
        message = f"{source}: missing required key {key!r}"
    elif first["type"] == "value_error":  # a validator's own message names the value
        message = f"{source}: {key}: {str(first['msg']).removeprefix('Value error, ')}"
    else:
        message = f"{source}: {key}: {first['msg']} (got {first.get('input')!r})"
    return ConfigError(message, key=key)


def forward(config: Schema, schema: type[ModelT]) -> ModelT:
    """Pass the set keys of ``config`` that ``schema`` knows on to ``schema``."""
    fields = schema.model_fields
    return schema.model_validate({k: v for k, v in config.set_values().items() if k in fields})
