"""A scripted model: replies come from a list, requests are kept for inspection."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from headerlock.errors import ConfigError, ModelError
from headerlock.runtime.frozen import FrozenDict, deep_freeze, thaw
from headerlock.runtime.llm import ModelRequest, StreamItem, TextDelta, ToolCallRequest

_CHUNKS = re.compile(r"\s*\S+\s*|\s+")

MATCH_KEYS: Final = ("user", "tool_result")
"""What a reply's ``match:`` may ask of the request it answers (``app: wire`` only)."""


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """A tool call in a scripted reply; ``id`` defaults to ``call_<n>``."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=FrozenDict)
    id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", deep_freeze(self.arguments))


@dataclass(frozen=True, slots=True)
class Reply:
    """One model reply: text (streamed in word chunks) and/or tool calls."""

    text: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    chunks: tuple[str, ...] | None = None
    error: str | None = None
    """When set, the stream fails with this message after the text."""
    match: Mapping[str, str] | None = None
    """Which request it answers (``MATCH_KEYS``): read by the wire script only; the
    runtime's ``ScriptedAdapter`` refuses it."""

    def __post_init__(self) -> None:
        if self.match is not None:
            object.__setattr__(self, "match", deep_freeze(self.match))

    def text_chunks(self) -> tuple[str, ...]:
        """The pieces the text streams in (``chunks`` when given, else words)."""
        if self.chunks is not None:
            return self.chunks
        return tuple(_CHUNKS.findall(self.text))


ReplySpec = str | Reply | Mapping[str, Any]

MATCH_ONLY_WIRE: Final = (
    "only applies to `app: wire` fixtures and wire scripts (script=, the headerlock_wire"
    " marker), where it says which of an agent's concurrent requests a reply answers"
)
"""Why a reply's ``match:`` is refused by a model that answers its requests in order."""


def parse_match(spec: Any, where: str) -> dict[str, str]:
    """A reply's ``match:`` checked: a mapping of ``MATCH_KEYS`` to non-empty strings."""
    if not isinstance(spec, Mapping) or not spec:
        raise ConfigError(
            f"{where}.match: expected a mapping with {' and/or '.join(MATCH_KEYS)}", key="match"
        )
    unknown = sorted(str(k) for k in spec if k not in MATCH_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}.match.{unknown[0]}: unknown key; expected {', '.join(MATCH_KEYS)}",
            key="match",
        )
    for name, value in spec.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}.match.{name}: expected a non-empty string", key="match")
    return dict(spec)


def parse_reply(spec: ReplySpec, *, where: str = "reply") -> Reply:
    """A ``Reply`` from text, a ``Reply`` or ``{text?, tool_calls?, chunks?, error?,
    match?}``."""
    if isinstance(spec, Reply):
        return spec
    if isinstance(spec, str):
        return Reply(text=spec)
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: expected text or a mapping, got {type(spec).__name__}")
    unknown = sorted(set(spec) - {"text", "tool_calls", "chunks", "error", "match"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}", key=unknown[0])
    text = spec.get("text", "")
    if not isinstance(text, str):
        raise ConfigError(f"{where}.text: expected a string, got {text!r}", key="text")
    calls = spec.get("tool_calls", [])
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise ConfigError(f"{where}.tool_calls: expected a list", key="tool_calls")
    parsed = []
    for i, call in enumerate(calls):
        at = f"{where}.tool_calls[{i}]"
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ConfigError(f"{at}: expected a mapping with a string 'name'", key="name")
        extra = sorted(set(call) - {"name", "arguments", "id"})
        if extra:
            raise ConfigError(f"{at}: unknown key {extra[0]!r}", key=extra[0])
        arguments = call.get("arguments", {})
        if not isinstance(arguments, Mapping):
            raise ConfigError(f"{at}.arguments: expected a mapping", key="arguments")
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise ConfigError(f"{at}.id: expected a string", key="id")
        parsed.append(ScriptedToolCall(call["name"], arguments, call_id))
    chunks = spec.get("chunks")
    if chunks is not None and (
        not isinstance(chunks, Sequence)
        or not all(isinstance(c, str) for c in chunks)
        or "".join(chunks) != text
    ):
        raise ConfigError(f"{where}.chunks: must be strings that join to the text", key="chunks")
    error = spec.get("error")
    if error is not None and not isinstance(error, str):
        raise ConfigError(f"{where}.error: expected a string, got {error!r}", key="error")
    match = parse_match(spec["match"], where) if "match" in spec else None
    if not text and not parsed and error is None:
        raise ConfigError(f"{where}: a reply needs text, tool_calls or error")
    return Reply(
        text=text,
        tool_calls=tuple(parsed),
        chunks=tuple(chunks) if chunks is not None else None,
        error=error,
        match=match,
    )


def reply_to_data(reply: Reply) -> dict[str, Any]:
    """Plain data that ``parse_reply`` reads back to an equal ``Reply``."""
    data: dict[str, Any] = {"text": reply.text}
    if reply.chunks is not None:
        data["chunks"] = list(reply.chunks)
    if reply.error is not None:
        data["error"] = reply.error
    if reply.tool_calls:
        data["tool_calls"] = [
            {"name": c.name, "arguments": thaw(c.arguments), **({"id": c.id} if c.id else {})}
            for c in reply.tool_calls
        ]
    if reply.match is not None:
        data["match"] = dict(reply.match)
    return data


class ScriptedAdapter:
    """Replies in script order; ``requests`` holds every request received (unless
    ``keep_requests`` is false: each request carries the whole conversation, so a
    long run would keep a quadratic amount of it). A reply with ``match`` is refused:
    this model answers one request at a time, in order."""

    def __init__(self, replies: Sequence[ReplySpec], *, keep_requests: bool = True) -> None:
        self.replies = [parse_reply(r, where=f"replies[{i}]") for i, r in enumerate(replies)]
        for i, reply in enumerate(self.replies):
            if reply.match is not None:
                raise ConfigError(
                    f"replies[{i}].match: {MATCH_ONLY_WIRE}; this model answers its requests"
                    " in order",
                    key="match",
                )
        self.requests: list[ModelRequest] = []
        self.keep_requests = keep_requests
        self._received = 0
        self._calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Stream the next scripted reply."""
        if self.keep_requests:
            self.requests.append(request)
        index = self._received
        self._received += 1
        if index >= len(self.replies):
            raise ModelError(
                f"the scripted model has no reply for request {index + 1}"
                f" (the script has {len(self.replies)})"
            )
        reply = self.replies[index]
        for chunk in reply.text_chunks():
            yield TextDelta(chunk)
        if reply.error is not None:
            raise ModelError(reply.error)
        for call in reply.tool_calls:
            self._calls += 1
            yield ToolCallRequest(call.id or f"call_{self._calls}", call.name, call.arguments)
