"""A scripted model that answers in the wire format of each model API.

Replies use the fixture ``model:`` format (``{"text": ...}`` or
``{"tool_calls": [{"name", "arguments"}]}``) and are rendered as an OpenAI chat
completion, an OpenAI response or an Anthropic message, as server-sent events
when the request streams. Every id and timestamp derives from the reply's
index, so the same script gives the same bytes in every run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from headerlock.errors import ConfigError, ScriptExhaustedError
from headerlock.runtime.adapters.scripted import Reply, ReplySpec, parse_reply
from headerlock.runtime.canonical import canonical_json
from headerlock.runtime.frozen import thaw

APIS: Final = ("anthropic.messages", "openai.chat", "openai.responses")
"""The model APIs a script can answer."""

JSON: Final = "application/json"
SSE: Final = "text/event-stream; charset=utf-8"

_EPOCH: Final = 1_767_225_600
"""2026-01-01T00:00:00Z; a reply's ``created`` is this plus its index."""

Rendered = tuple[int, str, bytes]
"""An HTTP answer: status, content type and body."""


def _dumps(value: Any, *, allow_nan: bool = True) -> str:
    """Compact JSON, UTF-8 where possible (``\\u`` escapes for a lone surrogate)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=allow_nan)
    return text


def _sse(events: Iterator[tuple[str | None, Any]]) -> bytes:
    """``event:``/``data:`` blocks; a ``str`` payload is sent as is (``[DONE]``)."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name is not None else ""
        payload = data if isinstance(data, str) else _dumps(data)
        out.append(f"{head}data: {payload}\n\n")
    return "".join(out).encode()


def _halves(text: str) -> list[str]:
    """Tool arguments stream in two pieces, so clients must join deltas."""
    half = len(text) // 2
    return [text[:half], text[half:]] if half else [text]


@dataclass(frozen=True, slots=True)
class _Call:
    """One tool call of a reply, with its ids and JSON arguments."""

    name: str
    arguments: str
    input: dict[str, Any]
    call_id: str


@dataclass(frozen=True, slots=True)
class _Turn:
    """What every renderer needs: the request, the reply and derived values."""

    request: Mapping[str, Any]
    reply: Reply
    index: int
    calls: tuple[_Call, ...]
    input_tokens: int
    """A plausible estimate: a token per four characters of the canonical request."""

    @property
    def model(self) -> str:
        model = self.request.get("model")
        return model if isinstance(model, str) else "scripted"

    @property
    def stream(self) -> bool:
        return self.request.get("stream") is True

    @property
    def created(self) -> int:
        return _EPOCH + self.index

    def id(self, prefix: str, call: int | None = None) -> str:
        """A provider id of this reply (or of its tool call number ``call``)."""
        return _script_id(prefix, self.index, call)

    @property
    def output_tokens(self) -> int:
        size = len(self.reply.text) + sum(len(c.name) + len(c.arguments) for c in self.calls)
        return max(1, size // 4)


def _script_id(prefix: str, index: int, call: int | None = None) -> str:
    """A deterministic id, e.g. ``msg_script0002`` or ``call_script0002t1``."""
    tail = "" if call is None else f"t{call}"
    return f"{prefix}script{index:04d}{tail}"


def _turn(request: Mapping[str, Any], reply: Reply, index: int, call_prefix: str) -> _Turn:
    calls = []
    for k, call in enumerate(reply.tool_calls):
        arguments = thaw(call.arguments)
        try:
            text = _dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"script[{index}].tool_calls[{k}].arguments: not JSON ({exc})", key="arguments"
            ) from exc
        call_id = call.id or _script_id(call_prefix, index, k)
        calls.append(_Call(call.name, text, arguments, call_id))
    input_tokens = max(1, len(canonical_json(request)) // 4)
    return _Turn(request, reply, index, tuple(calls), input_tokens)


# -- OpenAI chat completions -----------------------------------------------------------


def _chat_usage(turn: _Turn) -> dict[str, Any]:
    return {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _openai_error(message: str) -> dict[str, Any]:
    error = {"message": message, "type": "invalid_request_error", "param": None}
    return {"error": {**error, "code": "scripted_error"}}


def _chat_call(call: _Call, arguments: str) -> dict[str, Any]:
    function = {"name": call.name, "arguments": arguments}
    return {"id": call.call_id, "type": "function", "function": function}


def _chat(turn: _Turn) -> Rendered:
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
            return 400, JSON, _dumps(_openai_error(turn.reply.error)).encode()
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.reply.text or None,
            "refusal": None,
            "annotations": [],
        }
        if turn.calls:
            message["tool_calls"] = [_chat_call(c, c.arguments) for c in turn.calls]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        body = {**head, "choices": [choice], "usage": _chat_usage(turn)}
        return 200, JSON, _dumps(body).encode()
    return 200, SSE, _sse(_chat_events(turn, head, finish))


def _chat_events(
    turn: _Turn, head: dict[str, Any], finish: str
) -> Iterator[tuple[str | None, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**head, "choices": [choice]}

    yield None, chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in turn.reply.text_chunks():
        yield None, chunk({"content": piece})
    if turn.reply.error is not None:
        yield None, _openai_error(turn.reply.error)
        return
    for k, call in enumerate(turn.calls):
        yield None, chunk({"tool_calls": [{"index": k, **_chat_call(call, "")}]})
        for piece in _halves(call.arguments):
            yield None, chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    last = chunk({}, finish)
    options = turn.request.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage") is True:
        # On the last chunk that has choices: loops that read chunk.choices[0] keep working.
        last["usage"] = _chat_usage(turn)
    yield None, last
    yield None, "[DONE]"


# -- OpenAI responses ------------------------------------------------------------------


def _responses_usage(turn: _Turn) -> dict[str, Any]:
    return {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }


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


def _response(turn: _Turn, status: str, output: list[Any], done: bool) -> dict[str, Any]:
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
        "usage": _responses_usage(turn) if done else None,
        **echoed,
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message_item(turn: _Turn, status: str, text: str | None) -> dict[str, Any]:
    content = [] if text is None else [_text_part(text)]
    return {
        "id": turn.id("msg_"),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _function_item(turn: _Turn, k: int, status: str, arguments: str) -> dict[str, Any]:
    call = turn.calls[k]
    return {
        "id": turn.id("fc_", k),
        "type": "function_call",
        "status": status,
        "call_id": call.call_id,
        "name": call.name,
        "arguments": arguments,
    }


def _output(turn: _Turn) -> list[dict[str, Any]]:
    items = [_message_item(turn, "completed", turn.reply.text)] if turn.reply.text else []
    items += [_function_item(turn, k, "completed", c.arguments) for k, c in enumerate(turn.calls)]
    return items


def _responses(turn: _Turn) -> Rendered:
    if turn.stream:
        return 200, SSE, _sse(_numbered(_responses_events(turn)))
    if turn.reply.error is not None:
        return 400, JSON, _dumps(_openai_error(turn.reply.error)).encode()
    body = _response(turn, "completed", _output(turn), done=True)
    return 200, JSON, _dumps(body).encode()


def _numbered(events: Iterator[dict[str, Any]]) -> Iterator[tuple[str | None, Any]]:
    for number, event in enumerate(events):
        yield event["type"], {**event, "sequence_number": number}


def _responses_events(turn: _Turn) -> Iterator[dict[str, Any]]:
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
        for piece in _halves(call.arguments):
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


# -- Anthropic messages ----------------------------------------------------------------


def _anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _message(turn: _Turn, content: list[Any], done: bool) -> dict[str, Any]:
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


def _tool_use(turn: _Turn, k: int, complete: bool) -> dict[str, Any]:
    call = turn.calls[k]
    return {
        "type": "tool_use",
        "id": call.call_id,
        "name": call.name,
        "input": call.input if complete else {},
    }


def _anthropic(turn: _Turn) -> Rendered:
    if turn.stream:
        return 200, SSE, _sse(_anthropic_events(turn))
    if turn.reply.error is not None:
        return 400, JSON, _dumps(_anthropic_error(turn.reply.error)).encode()
    content = [{"type": "text", "text": turn.reply.text}] if turn.reply.text else []
    content += [_tool_use(turn, k, True) for k in range(len(turn.calls))]
    return 200, JSON, _dumps(_message(turn, content, done=True)).encode()


def _anthropic_events(turn: _Turn) -> Iterator[tuple[str | None, Any]]:
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
        for piece in _halves(call.arguments):
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


# -- public ----------------------------------------------------------------------------

_RENDERERS: Final[dict[str, tuple[Callable[[_Turn], Rendered], str]]] = {
    "anthropic.messages": (_anthropic, "toolu_"),
    "openai.chat": (_chat, "call_"),
    "openai.responses": (_responses, "call_"),
}


def _check_api(api: str) -> None:
    if api not in _RENDERERS:
        raise ConfigError(f"unknown model api {api!r}; expected one of {', '.join(APIS)}")


def render_reply(api: str, request: Mapping[str, Any], reply: ReplySpec, *, index: int) -> Rendered:
    """The HTTP answer ``(status, content_type, body)`` of scripted reply ``index``.

    ``api`` is one of :data:`APIS`; ``request`` is the parsed request body (its
    ``model`` is echoed, ``"stream": true`` selects server-sent events). A reply
    with ``error`` fails the stream after its text, or answers HTTP 400 (which
    the SDKs do not retry) when the request does not stream. Raises
    ``ConfigError`` naming ``script[index]`` for a malformed reply.
    """
    _check_api(api)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ConfigError(f"a reply index must be an int >= 0, got {index!r}", key="index")
    if not isinstance(request, Mapping):
        raise ConfigError(f"script[{index}]: the request body is not a JSON object")
    render, call_prefix = _RENDERERS[api]
    parsed = parse_reply(reply, where=f"script[{index}]")
    return render(_turn(request, parsed, index, call_prefix))


class WireScript:
    """A script's replies, handed out in order to the requests of one lock.

    Replies are checked when the script is built; ``answer`` is thread-safe
    and raises ``ScriptExhaustedError`` once every reply has been used.
    """

    def __init__(self, replies: Sequence[ReplySpec]) -> None:
        if isinstance(replies, (str, Mapping)) or not isinstance(replies, Sequence):
            raise ConfigError(
                f"script: expected a list of replies, got {type(replies).__name__}", key="script"
            )
        self.replies = tuple(parse_reply(r, where=f"script[{i}]") for i, r in enumerate(replies))
        self._used = 0
        self._asked = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """How many replies have been handed out."""
        return self._used

    def answer(self, api: str, request: Mapping[str, Any]) -> Rendered:
        """Render the next reply for ``request`` in the wire format of ``api``."""
        _check_api(api)
        with self._lock:
            self._asked += 1
            index = self._used
            if index >= len(self.replies):
                raise ScriptExhaustedError(api=api, request=self._asked, replies=len(self.replies))
            self._used += 1
        return render_reply(api, request, self.replies[index], index=index)
