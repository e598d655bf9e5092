"""Model requests, stream items and the LLM service that dispatches them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from headerlock.errors import ModelError
from headerlock.runtime.context import Context
from headerlock.runtime.frozen import FrozenDict, deep_freeze, thaw
from headerlock.runtime.header import RequestHeader

STREAM_EVENT: Final = "llm/stream"
"""Serial event run with the request before an adapter sees it (invariants listen here)."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A deep-frozen model request: the header and the conversation messages."""

    header: RequestHeader
    messages: Sequence[Mapping[str, Any]] = ()
    """A tuple, or the loop's read-only ``Conversation`` (equal to the tuple)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", deep_freeze(tuple(self.messages)))

    @classmethod
    def of_frozen(
        cls, header: RequestHeader, messages: Sequence[Mapping[str, Any]]
    ) -> ModelRequest:
        """The request of ``messages`` that are each deep-frozen already (the loop
        freezes every message once, when it is added): nothing is refrozen."""
        request = object.__new__(cls)
        object.__setattr__(request, "header", header)
        object.__setattr__(request, "messages", messages)
        return request

    def to_data(self) -> dict[str, Any]:
        """Plain data: the header's parts and the messages."""
        return {**self.header.to_data(), "messages": thaw(self.messages)}


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """The model asks for a tool: ``id`` (unique in the step), ``name``, ``arguments``."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", deep_freeze(self.arguments))

    def to_data(self) -> dict[str, Any]:
        """Plain data."""
        return {"id": self.id, "name": self.name, "arguments": thaw(self.arguments)}


StreamItem = TextDelta | ToolCallRequest


class LlmAdapter(Protocol):
    """Turns a request into a stream of text pieces and tool calls."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]: ...


class LlmService:
    """The ``llm`` service: runs ``llm/stream`` listeners, then the adapter."""

    def __init__(self, ctx: Context, adapter: LlmAdapter) -> None:
        self.ctx = ctx
        self.adapter = adapter

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Check the request with the ``llm/stream`` listeners, then stream the reply."""
        await self.ctx.serial(STREAM_EVENT, request)
        try:
            async for item in self.adapter.stream(request):
                if not isinstance(item, (TextDelta, ToolCallRequest)):
                    raise ModelError(f"adapter yielded {type(item).__name__}, not a stream item")
                yield item
        except ModelError:
            raise
        except Exception as error:
            raise ModelError(f"{type(error).__name__}: {error}") from error
