"""Anthropic messages (``anthropic.messages``): ``POST .../messages``, and its cloud routes.

On AWS Bedrock (``AnthropicBedrock``) the same body goes to ``/model/{model}/invoke``
(``/invoke-with-response-stream``: AWS event-stream frames, each a ``chunk`` wrapping
one Anthropic event), on Google Vertex (``AnthropicVertex``) to
``.../models/{model}:rawPredict`` (``:streamRawPredict``: server-sent events). Both
routes serve other models too, so a request there is this API's when its body holds
``anthropic_version``; the model is then in the path (percent-encoded or not).

The system is ``system`` (a string or text blocks), tools ``tools``
(``{"name": ..., "input_schema": ...}`` or a named server tool); a scripted
answer is a ``message``, or the ``message_start`` ... ``message_stop`` events.
Anthropic renders tools, then system, then messages: a change in the tools
invalidates its cache from there (``tools_changed``), one in the system after
the tools (``system_changed``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

from headerlock.formats import aws_eventstream
from headerlock.formats.wire_vocabulary import Credentials, WireVocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis.base import (
    JSON,
    PER_USER,
    SSE,
    ModelApi,
    Rendered,
    Turn,
    body_holds,
    dumps,
    halves,
    items,
    sse,
)
from headerlock.testing.wire.apis.cache_rules import CacheRules, KeyedConfig, usage_reader

BEDROCK_STREAM: Final = "/invoke-with-response-stream"
CLOUD_ROUTES: Final = ("/invoke", BEDROCK_STREAM, ":rawPredict", ":streamRawPredict")
EVENTSTREAM: Final = aws_eventstream.MEDIA_TYPE


def cloud_route(path: str, body: bytes) -> bool:
    """A Bedrock ``/invoke`` or Vertex ``:rawPredict`` request whose body holds
    ``anthropic_version`` (Vertex's ``count-tokens:rawPredict`` is no message)."""
    if not path.endswith(CLOUD_ROUTES) or path.endswith("/count-tokens:rawPredict"):
        return False
    return body_holds(body, "anthropic_version")


def model_of(path: str, request: Mapping[str, Any]) -> str:
    """The body's ``model``; on a cloud route the one in the path (``/model/{id}/invoke``,
    ``.../models/{id}:rawPredict``), URL-decoded."""
    model = request.get("model")
    if isinstance(model, str):
        return model
    path = path.rstrip("/")
    if path.endswith(("/invoke", BEDROCK_STREAM)):
        found = path.rpartition("/")[0].rpartition("/")[2]
    else:
        found = path.rpartition("/")[2].partition(":")[0]
    return unquote(found) or "scripted"


def streams(path: str, request: Mapping[str, Any]) -> bool:
    """``"stream": true`` in the body, or a streaming cloud route."""
    path = path.rstrip("/")
    return request.get("stream") is True or path.endswith((BEDROCK_STREAM, ":streamRawPredict"))


def error_body(message: str, code: str) -> dict[str, Any]:
    """Anthropic's error JSON (it has no code field)."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _message(turn: Turn, content: list[Any], done: bool) -> dict[str, Any]:
    stop = ("tool_use" if turn.calls else "end_turn") if done else None
    return {
        "id": turn.id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": turn.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": turn.output_tokens if done else 1,
            "service_tier": "standard",
        },
    }


def _tool_use(turn: Turn, k: int, complete: bool) -> dict[str, Any]:
    call = turn.calls[k]
    return {
        "type": "tool_use",
        "id": call.call_id,
        "name": call.name,
        "input": call.input if complete else {},
    }


def render(turn: Turn) -> Rendered:
    """A ``message``, or its events when the request streams."""
    if turn.stream and turn.path.rstrip("/").endswith(BEDROCK_STREAM):
        chunks = (("chunk", data) for _, data in _events(turn))
        return 200, EVENTSTREAM, aws_eventstream.frames(chunks)
    if turn.stream:
        return 200, SSE, sse(_events(turn))
    if turn.reply.error is not None:
        return 400, JSON, dumps(error_body(turn.reply.error, "scripted_error")).encode()
    content = [{"type": "text", "text": turn.reply.text}] if turn.reply.text else []
    content += [_tool_use(turn, k, True) for k in range(len(turn.calls))]
    return 200, JSON, dumps(_message(turn, content, done=True)).encode()


def _events(turn: Turn) -> Iterator[tuple[str | None, Any]]:
    def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, **fields}

    yield event("message_start", message=_message(turn, [], done=False))
    yield event("ping")
    block = 0
    if turn.reply.text or turn.reply.error is not None:
        yield event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        for piece in turn.reply.text_chunks():
            yield event("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
        if (error := turn.reply.error) is not None:
            yield "error", {"type": "error", "error": {"type": "api_error", "message": error}}
            return
        yield event("content_block_stop", index=0)
        block = 1
    for k, call in enumerate(turn.calls):
        at = block + k
        yield event("content_block_start", index=at, content_block=_tool_use(turn, k, False))
        for piece in halves(call.arguments):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield event("content_block_delta", index=at, delta=delta)
        yield event("content_block_stop", index=at)
    stop = "tool_use" if turn.calls else "end_turn"
    yield event(
        "message_delta",
        delta={"stop_reason": stop, "stop_sequence": None},
        usage={"output_tokens": turn.output_tokens},
    )
    yield event("message_stop")


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else items(content)


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last ``user`` message that has text (tool results are not text)."""
    for message in reversed(items(request.get("messages"))):
        texts = [b.get("text") for b in _blocks(message) if b.get("type") == "text"]
        if message.get("role") == "user" and texts:
            return "\n\n".join(t for t in texts if isinstance(t, str))
    return None


def last_tool_result(request: Mapping[str, Any]) -> str | None:
    """The tool whose ``tool_use`` the last ``tool_result`` block answers."""
    blocks = [b for m in items(request.get("messages")) for b in _blocks(m)]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if not results:
        return None
    use_id = results[-1].get("tool_use_id")
    for block in blocks:
        if block.get("type") == "tool_use" and block.get("id") == use_id:
            name = block.get("name")
            return name if isinstance(name, str) else None
    return None


CACHE: Final = CacheRules(
    provider="Anthropic",
    docs="https://platform.claude.com/docs/en/build-with-claude/prompt-caching",
    keyed=(
        KeyedConfig("model"),
        KeyedConfig("tool_choice", code="tool-choice-changed", scope="messages"),
        KeyedConfig("thinking", scope="messages"),
    ),
    minimums=(
        ("opus-4-5", 4096),
        ("haiku-4-5", 4096),
        ("3-5-haiku", 2048),
        ("3-haiku", 2048),
        ("haiku-3", 2048),
    ),
    default_minimum=1024,
    breakpoints=True,
    max_breakpoints=4,
    lookback=20,
    marker="cache_control",
    usage_of=usage_reader(
        (("usage",), ("message", "usage")),
        ("input_tokens",),
        (("cache_read_input_tokens",),),
        (("cache_creation_input_tokens",),),
        (
            ("diagnostics", "cache_miss_reason", "type"),
            ("message", "diagnostics", "cache_miss_reason", "type"),
        ),
    ),
    arguments="input",
    stream_arguments="partial_json",
    miss_reasons=(
        ("model_changed", "config"),
        ("tools_changed", "tools"),
        ("system_changed", "system"),
        ("messages_changed", "messages"),
    ),
    minimums_text="Anthropic caches up to a breakpoint from 1,024 tokens (Sonnet, Opus 4.x),"
    " 2,048 (Haiku 3.x), 4,096 (Opus 4.5, Haiku 4.5); shorter is silently not cached",
    notes=(
        (
            "config-changed",
            "Anthropic: caches are per model; thinking changes invalidate the messages",
        ),
        (
            "system-changed",
            "Anthropic: a system change invalidates the system and messages (tools stay cached)",
        ),
        (
            "no-breakpoint",
            "Anthropic caches only up to a cache_control breakpoint (on a block,"
            " or top-level cache_control: automatic caching at the last block)",
        ),
        ("too-many-breakpoints", "Anthropic: at most 4 cache_control breakpoints per request"),
        (
            "breakpoint-lookback",
            "Anthropic: a breakpoint checks for hits at most 20 blocks before it",
        ),
        (
            "tool-choice-changed",
            "Anthropic: tool_choice changes invalidate the messages (tools and system stay cached)",
        ),
    ),
)
"""Explicit ``cache_control`` breakpoints (at most 4, each looking back 20 blocks), or a
top-level ``cache_control`` (automatic caching: a breakpoint at the last block), tools
then system then messages; ``tool_choice`` and ``thinking`` invalidate the messages only;
minimum 1,024 tokens (Sonnet, Opus 4.x), 2,048 (Haiku 3.x), 4,096 (Opus 4.5, Haiku 4.5);
usage reports cache reads and writes, and with the cache-diagnosis beta
(https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics) a
``diagnostics.cache_miss_reason``."""


HTTP_HEADERS: Final = ("anthropic-beta", "anthropic-version")
"""Headers that switch the API's version and beta features on: part of the header."""


VOCABULARY: Final = WireVocabulary(
    Credentials(
        env=("ANTHROPIC_API_KEY",),
        url_env=("ANTHROPIC_BASE_URL",),
        headers=("x-api-key",),
        key_shapes=(("Anthropic", r"sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{93}AA"),),
    ),
    message_ids=frozenset({"id", "tool_use_id"}),
    response_ids=frozenset({"id", "tool_use_id"}),
)
"""The Anthropic SDK's key and base URL, its ``x-api-key`` header and key shape; tool
use ids."""

API: Final = ModelApi(
    name="anthropic.messages",
    tool_shape=ToolShape("Anthropic"),
    vocabulary=VOCABULARY,
    schema_at=("input_schema",),
    path_suffixes=("/messages",),
    cloud_route=cloud_route,
    model_of=model_of,
    streams=streams,
    messages_key="messages",
    system_keys=("system",),
    volatile=PER_USER,
    render=render,
    error_body=error_body,
    call_id_prefix="toolu_",
    cache_reasons=(("tools", "tools_changed"), ("system", "system_changed")),
    cache=CACHE,
    http_headers=HTTP_HEADERS,
    last_user_text=last_user_text,
    last_tool_result=last_tool_result,
)
