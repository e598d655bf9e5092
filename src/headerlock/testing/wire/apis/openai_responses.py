"""OpenAI responses (``openai.responses``): ``POST .../responses``.

The system is ``instructions``, the messages ``input``, tools ``tools``
(``{"type": "function", "name": ...}`` or a built-in tool named by its type); a
scripted answer is a ``response``, or the numbered ``response.*`` events.
Errors have OpenAI's shape; the cache names no reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from headerlock.formats.wire_vocabulary import WireVocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis.base import (
    JSON,
    PER_USER,
    SSE,
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
from headerlock.testing.wire.apis.openai_chat import (
    CACHE as CHAT_CACHE,
    CREDENTIALS,
    HTTP_HEADERS,
    OBFUSCATION,
    error_body,
)

_ECHOED: Final[tuple[tuple[str, Any], ...]] = (
    ("instructions", None),
    ("max_output_tokens", None),
    ("metadata", {}),
    ("parallel_tool_calls", True),
    ("previous_response_id", None),
    ("store", True),
    ("temperature", 1.0),
    ("text", {"format": {"type": "text"}}),
    ("tool_choice", "auto"),
    ("tools", []),
    ("top_p", 1.0),
)
"""Request fields a response repeats, with the defaults the API reports."""


def _usage(turn: Turn) -> dict[str, Any]:
    return {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }


def _response(turn: Turn, status: str, output: list[Any], done: bool) -> dict[str, Any]:
    echoed = {key: turn.request.get(key, default) for key, default in _ECHOED}
    return {
        "id": turn.id("resp_"),
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "model": turn.model,
        "output": output,
        "reasoning": {"effort": None, "summary": None},
        "truncation": "disabled",
        "usage": _usage(turn) if done else None,
        **echoed,
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message_item(turn: Turn, status: str, text: str | None) -> dict[str, Any]:
    content = [] if text is None else [_text_part(text)]
    return {
        "id": turn.id("msg_"),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _function_item(turn: Turn, k: int, status: str, arguments: str) -> dict[str, Any]:
    call = turn.calls[k]
    return {
        "id": turn.id("fc_", k),
        "type": "function_call",
        "status": status,
        "call_id": call.call_id,
        "name": call.name,
        "arguments": arguments,
    }


def _output(turn: Turn) -> list[dict[str, Any]]:
    items = [_message_item(turn, "completed", turn.reply.text)] if turn.reply.text else []
    items += [_function_item(turn, k, "completed", c.arguments) for k, c in enumerate(turn.calls)]
    return items


def render(turn: Turn) -> Rendered:
    """A ``response``, or its numbered events when the request streams."""
    if turn.stream:
        return 200, SSE, sse(_numbered(_events(turn)))
    if turn.reply.error is not None:
        return 400, JSON, dumps(error_body(turn.reply.error, "scripted_error")).encode()
    body = _response(turn, "completed", _output(turn), done=True)
    return 200, JSON, dumps(body).encode()


def _numbered(events: Iterator[dict[str, Any]]) -> Iterator[tuple[str | None, Any]]:
    for number, event in enumerate(events):
        yield event["type"], {**event, "sequence_number": number}


def _events(turn: Turn) -> Iterator[dict[str, Any]]:
    yield {"type": "response.created", "response": _response(turn, "in_progress", [], False)}
    yield {"type": "response.in_progress", "response": _response(turn, "in_progress", [], False)}
    position = 0
    if turn.reply.text or turn.reply.error is not None:
        where = {"item_id": turn.id("msg_"), "output_index": 0}
        item = _message_item(turn, "in_progress", None)
        yield {"type": "response.output_item.added", "output_index": 0, "item": item}
        part = {**where, "content_index": 0}
        yield {"type": "response.content_part.added", **part, "part": _text_part("")}
        for piece in turn.reply.text_chunks():
            yield {"type": "response.output_text.delta", **part, "delta": piece, "logprobs": []}
        if turn.reply.error is not None:
            yield {"type": "error", "code": "server_error", "message": turn.reply.error}
            failed = _response(turn, "failed", [], False)
            failed["error"] = {"code": "server_error", "message": turn.reply.error}
            yield {"type": "response.failed", "response": failed}
            return
        text = turn.reply.text
        yield {"type": "response.output_text.done", **part, "text": text, "logprobs": []}
        yield {"type": "response.content_part.done", **part, "part": _text_part(text)}
        done = _message_item(turn, "completed", text)
        yield {"type": "response.output_item.done", "output_index": 0, "item": done}
        position = 1
    for k, call in enumerate(turn.calls):
        at = position + k
        where = {"item_id": turn.id("fc_", k), "output_index": at}
        added = _function_item(turn, k, "in_progress", "")
        yield {"type": "response.output_item.added", "output_index": at, "item": added}
        for piece in halves(call.arguments):
            yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
        yield {
            "type": "response.function_call_arguments.done",
            **where,
            "name": call.name,
            "arguments": call.arguments,
        }
        done = _function_item(turn, k, "completed", call.arguments)
        yield {"type": "response.output_item.done", "output_index": at, "item": done}
    final = _response(turn, "completed", _output(turn), True)
    yield {"type": "response.completed", "response": final}


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last ``user`` input item (the whole input when it is a string)."""
    given = request.get("input")
    if isinstance(given, str):
        return given
    users = [m for m in items(given) if m.get("role") == "user"]
    return text_of(users[-1].get("content")) if users else None


def last_tool_result(request: Mapping[str, Any]) -> str | None:
    """The function whose call the last ``function_call_output`` item answers."""
    given = items(request.get("input"))
    outputs = [m for m in given if m.get("type") == "function_call_output"]
    if not outputs:
        return None
    call_id = outputs[-1].get("call_id")
    for item in given:
        if item.get("type") == "function_call" and item.get("call_id") == call_id:
            name = item.get("name")
            return name if isinstance(name, str) else None
    return None


CACHE: Final = CacheRules(
    provider=CHAT_CACHE.provider,
    docs=CHAT_CACHE.docs,
    keyed=(
        KeyedConfig("model"),
        KeyedConfig("text"),
        KeyedConfig("prompt_cache_key"),
        KeyedConfig("prompt_cache_retention"),
    ),
    default_minimum=CHAT_CACHE.default_minimum,
    step=CHAT_CACHE.step,
    server_side=("previous_response_id", "conversation"),
    usage_of=usage_reader(
        (("usage",), ("response", "usage")),
        ("input_tokens",),
        (("input_tokens_details", "cached_tokens"),),
        (("input_tokens_details", "cache_write_tokens"),),
    ),
    arguments=CHAT_CACHE.arguments,
    minimums_text=CHAT_CACHE.minimums_text,
    notes=(
        (
            "config-changed",
            "OpenAI: the model, the text.format schema, prompt_cache_key and"
            " prompt_cache_retention (in_memory or 24h) key the cache",
        ),
    ),
)
"""OpenAI's rules (as chat completions); ``text`` holds the structured-output format, and
``previous_response_id``/``conversation`` keep the history on the server."""


VOCABULARY: Final = WireVocabulary(
    CREDENTIALS,
    message_ids=frozenset({"id", "call_id"}),
    config_ids=frozenset({"previous_response_id"}),
    response_ids=frozenset({"id", "call_id", "item_id", "response_id"}),
    times=frozenset({"created_at"}),
    fixed=(OBFUSCATION,),
)
"""Call and item ids, ``previous_response_id`` in the config, ``created_at`` and the
stream's ``obfuscation`` padding (the OpenAI SDK's credentials)."""

API: Final = ModelApi(
    name="openai.responses",
    tool_shape=ToolShape("OpenAI responses"),
    vocabulary=VOCABULARY,
    path_suffixes=("/responses",),
    messages_key="input",
    system_keys=("instructions",),
    volatile=PER_USER,
    render=render,
    error_body=error_body,
    call_id_prefix="call_",
    cache=CACHE,
    http_headers=HTTP_HEADERS,
    last_user_text=last_user_text,
    last_tool_result=last_tool_result,
)
