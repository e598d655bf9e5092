"""OpenAI chat completions (``openai.chat``): ``POST .../chat/completions``.

The system is the leading ``system`` and ``developer`` messages; tools are
``tools`` (``{"type": "function", "function": {...}}``); a scripted answer is a
``chat.completion``, or ``chat.completion.chunk`` events ending in ``[DONE]``.
OpenAI caches an exact prefix of the rendered prompt and names no reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from headerlock.formats.placeholders import FINGERPRINT
from headerlock.formats.wire_vocabulary import Credentials, WireVocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis.base import (
    JSON,
    PER_USER,
    SSE,
    Call,
    ModelApi,
    Rendered,
    Turn,
    dumps,
    halves,
    items,
    sse,
    text_of,
)
from headerlock.testing.wire.apis.cache_rules import CacheRules, KeyedConfig, usage_reader
from headerlock.testing.wire.spans import Span, array_elements

SYSTEM_ROLES: Final = ("system", "developer")


def leading_system(body: bytes, span: Span | None, messages: Any) -> tuple[Any, Any, bytes]:
    """The leading system/developer messages, the rest, and the system's bytes."""
    if span is None or not isinstance(messages, list):
        return None, messages, b""
    count = 0
    while (
        count < len(messages)
        and isinstance(messages[count], Mapping)
        and messages[count].get("role") in SYSTEM_ROLES
    ):
        count += 1
    if count == 0:
        return None, messages, b""
    start, end = _system_span(body, span[0], count)
    return messages[:count], messages[count:], body[start:end]


def _system_span(body: bytes, at: int, count: int) -> Span:
    """Where the first ``count`` elements (JSON objects) of the array at ``body[at]`` (a
    parsed body) start and end: as the last body's when as many of them were there and
    its bytes from ``at`` to their end repeat (an object ends at its closing brace: they
    are the same objects; an agent sends the same system with every request), else
    scanned."""
    held = _SYSTEM[0]
    if held is not None and held[1] == count and body.startswith(held[0], at):
        return at + held[2], at + len(held[0])
    elements = array_elements(body, at, limit=count)
    start, end = elements[0][0], elements[count - 1][1]
    _SYSTEM[0] = (body[at:end], count, start - at)
    return start, end


_SYSTEM: list[tuple[bytes, int, int] | None] = [None]
"""The last system found: the bytes from its array's start to its end, how many
elements it is, and where its first one starts in those bytes."""


def error_body(message: str, code: str) -> dict[str, Any]:
    """OpenAI's error JSON (also the responses API's)."""
    error = {"message": message, "type": "invalid_request_error", "param": None}
    return {"error": {**error, "code": code}}


def _usage(turn: Turn) -> dict[str, Any]:
    return {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _call(call: Call, arguments: str) -> dict[str, Any]:
    function = {"name": call.name, "arguments": arguments}
    return {"id": call.call_id, "type": "function", "function": function}


def render(turn: Turn) -> Rendered:
    """A ``chat.completion``, or its chunks when the request streams."""
    head = {
        "id": turn.id("chatcmpl-"),
        "object": "chat.completion.chunk" if turn.stream else "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "service_tier": "default",
        "system_fingerprint": None,
    }
    finish = "tool_calls" if turn.calls else "stop"
    if not turn.stream:
        if turn.reply.error is not None:
            return 400, JSON, dumps(error_body(turn.reply.error, "scripted_error")).encode()
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.reply.text or None,
            "refusal": None,
            "annotations": [],
        }
        if turn.calls:
            message["tool_calls"] = [_call(c, c.arguments) for c in turn.calls]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        body = {**head, "choices": [choice], "usage": _usage(turn)}
        return 200, JSON, dumps(body).encode()
    return 200, SSE, sse(_events(turn, head, finish))


def _events(turn: Turn, head: dict[str, Any], finish: str) -> Iterator[tuple[str | None, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**head, "choices": [choice]}

    yield None, chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in turn.reply.text_chunks():
        yield None, chunk({"content": piece})
    if turn.reply.error is not None:
        yield None, error_body(turn.reply.error, "scripted_error")
        return
    for k, call in enumerate(turn.calls):
        yield None, chunk({"tool_calls": [{"index": k, **_call(call, "")}]})
        for piece in halves(call.arguments):
            yield None, chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    last = chunk({}, finish)
    options = turn.request.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage") is True:
        # On the last chunk that has choices: loops that read chunk.choices[0] keep working.
        last["usage"] = _usage(turn)
    yield None, last
    yield None, "[DONE]"


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last ``user`` message."""
    users = [m for m in items(request.get("messages")) if m.get("role") == "user"]
    return text_of(users[-1].get("content")) if users else None


def last_tool_result(request: Mapping[str, Any]) -> str | None:
    """The function whose call the last ``tool`` message answers."""
    messages = items(request.get("messages"))
    results = [m for m in messages if m.get("role") == "tool"]
    if not results:
        return None
    call_id = results[-1].get("tool_call_id")
    for message in messages:
        for call in items(message.get("tool_calls")):
            function = call.get("function")
            if call.get("id") == call_id and isinstance(function, Mapping):
                name = function.get("name")
                return name if isinstance(name, str) else None
    return None


CACHE: Final = CacheRules(
    provider="OpenAI",
    docs="https://platform.openai.com/docs/guides/prompt-caching",
    keyed=(
        KeyedConfig("model"),
        KeyedConfig("response_format"),  # structured outputs: the schema is in the prefix
        KeyedConfig("prompt_cache_key"),  # routes the request to a cache
        KeyedConfig("prompt_cache_retention"),  # in_memory or 24h: another cache
    ),
    default_minimum=1024,
    step=128,
    usage_of=usage_reader(
        (("usage",),),
        ("prompt_tokens",),
        (("prompt_tokens_details", "cached_tokens"),),
        (("prompt_tokens_details", "cache_write_tokens"),),
    ),
    arguments="arguments",
    minimums_text="OpenAI caches prompts from 1,024 tokens, hits growing in 128-token steps",
    notes=(
        (
            "config-changed",
            "OpenAI: the model, the response_format schema, prompt_cache_key"
            " (routes the request to a cache) and prompt_cache_retention (in_memory or 24h)"
            " key the cache",
        ),
    ),
)
"""Automatic from 1,024 tokens, hits in 128-token steps, an exact prefix with the
tools (in order) and the structured-output schema; ``prompt_cache_key`` and
``prompt_cache_retention`` key it; usage reports ``cached_tokens`` (and cache writes)
(https://platform.openai.com/docs/guides/prompt-caching, 2026)."""


HTTP_HEADERS: Final = ("openai-beta", "openai-organization", "openai-project")
"""Headers that pick the beta surface, organization and project: part of the header
(also the responses API's)."""


CREDENTIALS: Final = Credentials(
    env=("OPENAI_API_KEY",),
    url_env=("OPENAI_BASE_URL",),
    headers=("api-key",),  # Azure OpenAI's key header
    key_shapes=(("OpenAI", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{48,}"),),
)
"""The OpenAI SDK's key and base URL, Azure's ``api-key`` header, OpenAI's key shape."""
OBFUSCATION: Final = ("obfuscation", "<<obfuscation>>")
"""OpenAI's stream padding (random text of random length, in every event): stored so."""
VOCABULARY: Final = WireVocabulary(
    CREDENTIALS,
    message_ids=frozenset({"id", "tool_call_id"}),
    response_ids=frozenset({"id", "tool_call_id"}),
    times=frozenset({"created"}),
    fixed=(("system_fingerprint", FINGERPRINT), OBFUSCATION),
)
"""Tool call ids (``tool_call_id``), ``created``, ``system_fingerprint`` and the stream's
``obfuscation`` padding."""

API: Final = ModelApi(
    name="openai.chat",
    tool_shape=ToolShape("OpenAI chat", wrapper="function", kind="function"),
    vocabulary=VOCABULARY,
    path_suffixes=("/chat/completions",),
    messages_key="messages",
    system_keys=(),
    leading_system=leading_system,
    volatile=PER_USER,
    render=render,
    error_body=error_body,
    call_id_prefix="call_",
    cache=CACHE,
    http_headers=HTTP_HEADERS,
    last_user_text=last_user_text,
    last_tool_result=last_tool_result,
)
