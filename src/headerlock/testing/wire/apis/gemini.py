"""Gemini (``gemini.generate``): ``POST .../models/{model}:generateContent``, and
``:streamGenerateContent?alt=sse`` for a stream (the ``google-genai`` SDK's
``models.generate_content`` and ``generate_content_stream``).

The model is in the path, not the body. The system is ``systemInstruction``
(``system_instruction`` too), the messages ``contents``, the tools ``tools``:
entries each holding ``functionDeclarations`` (one tool per declaration) or a
built-in tool (``{"googleSearch": {}}``, named by its key). Config is
``generationConfig`` and the rest. A scripted answer is a
``GenerateContentResponse``, or one per server-sent event. Gemini's implicit
cache keys on an exact prefix and names no reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from headerlock.formats.wire_vocabulary import Credentials, WireVocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis.base import (
    JSON,
    SSE,
    Call,
    ModelApi,
    Rendered,
    Turn,
    dumps,
    items,
    sse,
)
from headerlock.testing.wire.apis.cache_rules import CacheRules, KeyedConfig, usage_reader
from headerlock.testing.wire.spans import Span, array_elements, object_members

GENERATE: Final = ":generateContent"
STREAM: Final = ":streamGenerateContent"
GEMINI_DECLARATIONS: Final = ("functionDeclarations", "function_declarations")
"""The keys a Gemini ``tools[]`` entry lists its function declarations under (the REST
API's camelCase, which the SDK sends, and the SDK's own snake_case)."""


def model_of(path: str, request: Mapping[str, Any]) -> str:
    """The model named in the path (``.../models/gemini-2.5-flash:generateContent``)."""
    model = path.rstrip("/").rpartition("/")[2].partition(":")[0]
    return model or "scripted"


def streams(path: str, request: Mapping[str, Any]) -> bool:
    """Whether the request is ``:streamGenerateContent``."""
    return path.rstrip("/").endswith(STREAM)


def tools_of(tools: Any) -> list[Any]:
    """One tool per function declaration, and each built-in tool as ``{key: value}``."""
    if not isinstance(tools, list):
        return []
    found: list[Any] = []
    for entry in tools:
        if not isinstance(entry, Mapping) or not entry:
            found.append(entry)
            continue
        for key, value in entry.items():
            if key in GEMINI_DECLARATIONS and isinstance(value, list):
                found += value
            else:
                found.append({key: value})
    return found


def tool_spans(raw: bytes) -> list[Span]:
    """The bytes of each tool of ``tools_of``, in its order."""
    spans: list[Span] = []
    for start, end in array_elements(raw):
        members = object_members(raw, start) if raw[start : start + 1] == b"{" else {}
        if not members:
            spans.append((start, end))
            continue
        for key, (first, last) in members.items():
            if key in GEMINI_DECLARATIONS and raw[first : first + 1] == b"[":
                spans += array_elements(raw, first)
            else:
                spans.append((first, last))
    return spans


def error_body(message: str, code: str) -> dict[str, Any]:
    """Google's error JSON; ``code`` becomes the ``ErrorInfo`` reason."""
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": code}
    error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
    return {"error": {**error, "details": [{**info, "domain": "headerlock"}]}}


def _call(call: Call) -> dict[str, Any]:
    return {"functionCall": {"id": call.call_id, "name": call.name, "args": call.input}}


def _usage(turn: Turn) -> dict[str, Any]:
    return {
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": turn.output_tokens,
        "totalTokenCount": turn.input_tokens + turn.output_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": turn.input_tokens}],
    }


def _response(turn: Turn, parts: list[dict[str, Any]], done: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if done:
        candidate["finishReason"] = "STOP"
    body: dict[str, Any] = {"candidates": [{**candidate, "index": 0}]}
    if done:
        body["usageMetadata"] = _usage(turn)
    return {**body, "modelVersion": turn.model, "responseId": turn.id("")}


def render(turn: Turn) -> Rendered:
    """A ``GenerateContentResponse``, or one per event when the request streams."""
    if turn.stream:
        return 200, SSE, sse((None, event) for event in _events(turn))
    if turn.reply.error is not None:
        return 400, JSON, dumps(error_body(turn.reply.error, "scripted_error")).encode()
    parts = [{"text": turn.reply.text}] if turn.reply.text else []
    parts += [_call(call) for call in turn.calls]
    return 200, JSON, dumps(_response(turn, parts, done=True)).encode()


def _events(turn: Turn) -> Iterator[dict[str, Any]]:
    """A chunk per text piece, then one with every function call; the last one
    says ``STOP`` and carries the usage. An error ends the stream after the text."""
    groups = [[{"text": piece}] for piece in turn.reply.text_chunks()]
    if turn.reply.error is not None:
        yield from (_response(turn, parts, done=False) for parts in groups)
        error = {"code": 500, "message": turn.reply.error, "status": "INTERNAL"}
        yield {"error": error}
        return
    if turn.calls:
        groups.append([_call(call) for call in turn.calls])
    for number, parts in enumerate(groups, 1):
        yield _response(turn, parts, done=number == len(groups))


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last ``user`` content that has text parts."""
    for content in reversed(items(request.get("contents"))):
        texts = [p.get("text") for p in items(content.get("parts")) if "text" in p]
        if content.get("role", "user") == "user" and texts:
            return "".join(t for t in texts if isinstance(t, str))
    return None


def last_tool_result(request: Mapping[str, Any]) -> str | None:
    """The name of the last ``functionResponse`` part."""
    parts = [p for c in items(request.get("contents")) for p in items(c.get("parts"))]
    responses = [
        p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), Mapping)
    ]
    name = responses[-1].get("name") if responses else None
    return name if isinstance(name, str) else None


CACHE: Final = CacheRules(
    provider="Gemini",
    docs="https://ai.google.dev/gemini-api/docs/caching",
    keyed=(KeyedConfig("model"), KeyedConfig("cachedContent"), KeyedConfig("cached_content")),
    minimums=(("pro", 4096),),
    default_minimum=1024,
    usage_of=usage_reader(
        (("usageMetadata",), ("usage_metadata",)),
        ("promptTokenCount",),
        (("cachedContentTokenCount",), ("cached_content_token_count",)),
    ),
    arguments="args",
    minimums_text="Gemini caches implicitly from 1,024 tokens (Flash), 4,096 (Pro)",
    notes=(("config-changed", "Gemini: caches are per model; cachedContent names the cache"),),
)
"""Implicit caching of an exact prefix from 1,024 tokens (Flash) or 4,096 (Pro); the model
is the one in the URL path (``model_of``)."""


VOCABULARY: Final = WireVocabulary(
    Credentials(
        env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        headers=("x-goog-api-key",),
        key_shapes=(("Google", r"AIza[A-Za-z0-9_-]{35}"),),
    ),
    message_ids=frozenset({"id"}),
    response_ids=frozenset({"id", "responseId"}),
    times=frozenset({"createTime"}),
)
"""The google-genai SDK's keys, its ``x-goog-api-key`` header and Google's key shape;
``responseId`` and ``createTime`` of an answer."""

API: Final = ModelApi(
    name="gemini.generate",
    tool_shape=ToolShape("Gemini", groups=GEMINI_DECLARATIONS),
    vocabulary=VOCABULARY,
    path_suffixes=(GENERATE, STREAM),
    messages_key="contents",
    system_keys=("systemInstruction", "system_instruction"),
    model_of=model_of,
    streams=streams,
    tools_of=tools_of,
    tool_spans=tool_spans,
    render=render,
    error_body=error_body,
    call_id_prefix="call_",
    cache=CACHE,
    last_user_text=last_user_text,
    last_tool_result=last_tool_result,
)
