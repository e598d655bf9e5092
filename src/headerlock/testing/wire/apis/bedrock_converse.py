"""AWS Bedrock Converse (``bedrock.converse``): ``POST /model/{modelId}/converse``, and
``/converse-stream`` for a stream (``boto3``'s ``bedrock-runtime`` ``converse`` and
``converse_stream``; botocore sends them through urllib3).

The model is in the path (URL-decoded). The system is ``system`` (text blocks), the
messages ``messages`` (``toolUse``/``toolResult`` blocks, their ``toolUseId``
tokenized), the tools ``toolConfig.tools``: one ``{"toolSpec": {"name", "description",
"inputSchema": {"json": ...}}}`` per tool; a ``{"cachePoint": ...}`` entry there is a
cache breakpoint, not a tool (it is not listed, named or compared as one, and
``order_wire_tools`` keeps it at its index in the list: one at the end stays there).
``toolConfig.toolChoice``, ``inferenceConfig``, ``additionalModelRequestFields`` and the
rest are config.

A scripted answer is a Converse response (``output.message``, ``stopReason``, ``usage``
with ``cacheReadInputTokens``/``cacheWriteInputTokens``, ``metrics``), or a
ConverseStream in AWS's event-stream framing (``formats.aws_eventstream``):
``messageStart``, ``contentBlockStart``/``Delta``/``Stop`` per block, ``messageStop``
and ``metadata``. Bedrock caches only up to explicit ``cachePoint`` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

from headerlock.formats import aws_eventstream
from headerlock.formats.secrets import add_signing_secrets
from headerlock.formats.wire_vocabulary import Credentials, TextShape, WireVocabulary
from headerlock.runtime.wire_tools import ToolShape
from headerlock.testing.wire.apis.base import (
    JSON,
    ClientPatch,
    ModelApi,
    Rendered,
    Turn,
    dumps,
    halves,
    items,
)
from headerlock.testing.wire.apis.cache_rules import CacheRules, KeyedConfig, usage_reader
from headerlock.testing.wire.spans import Span, array_elements, object_members

CONVERSE: Final = "/converse"
STREAM: Final = "/converse-stream"
EVENTSTREAM: Final = aws_eventstream.MEDIA_TYPE
TOOL_SPEC: Final = "toolSpec"
CACHE_POINT: Final = "cachePoint"


def model_of(path: str, request: Mapping[str, Any]) -> str:
    """The model id of the path (``/model/{modelId}/converse``), URL-decoded."""
    model = path.rstrip("/").rpartition("/")[0].rpartition("/")[2]
    return unquote(model) or "scripted"


def streams(path: str, request: Mapping[str, Any]) -> bool:
    """Whether the request is ``/converse-stream``."""
    return path.rstrip("/").endswith(STREAM)


def _is_cache_point(entry: Any) -> bool:
    return isinstance(entry, Mapping) and list(entry) == [CACHE_POINT]


def tools_of(tools: Any) -> list[Any]:
    """Each ``toolSpec`` (a tool named by its ``name``); any other entry but a
    ``cachePoint`` as it is (a tool of an unknown shape, named by its only key)."""
    if not isinstance(tools, list):
        return []
    found: list[Any] = []
    for entry in tools:
        if _is_cache_point(entry):
            continue
        spec = entry.get(TOOL_SPEC) if isinstance(entry, Mapping) else None
        found.append(spec if isinstance(spec, Mapping) else entry)
    return found


def tool_spans(raw: bytes) -> list[Span]:
    """The bytes of each tool of ``tools_of`` (its ``toolSpec`` value), in its order."""
    spans: list[Span] = []
    for start, end in array_elements(raw):
        members = object_members(raw, start) if raw[start : start + 1] == b"{" else {}
        if list(members) != [CACHE_POINT]:
            spans.append(members.get(TOOL_SPEC, (start, end)))
    return spans


def error_body(message: str, code: str) -> dict[str, Any]:
    """Bedrock's error JSON: botocore reads the error code from ``__type``."""
    return {"__type": "ValidationException", "message": message, "reason": code}


def _usage(turn: Turn) -> dict[str, Any]:
    return {
        "inputTokens": turn.input_tokens,
        "outputTokens": turn.output_tokens,
        "totalTokens": turn.input_tokens + turn.output_tokens,
        "cacheReadInputTokens": 0,
        "cacheWriteInputTokens": 0,
    }


def _stop(turn: Turn) -> str:
    return "tool_use" if turn.calls else "end_turn"


def render(turn: Turn) -> Rendered:
    """A Converse response, or a ConverseStream when the request streams."""
    if turn.stream:
        return 200, EVENTSTREAM, aws_eventstream.frames(_events(turn))
    if turn.reply.error is not None:
        return 400, JSON, dumps(error_body(turn.reply.error, "scripted_error")).encode()
    content: list[dict[str, Any]] = [{"text": turn.reply.text}] if turn.reply.text else []
    content += [
        {"toolUse": {"toolUseId": c.call_id, "name": c.name, "input": c.input}} for c in turn.calls
    ]
    body = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop(turn),
        "usage": _usage(turn),
        "metrics": {"latencyMs": 0},
    }
    return 200, JSON, dumps(body).encode()


def _events(turn: Turn) -> Iterator[tuple[str, Any]]:
    """The ConverseStream events; an error ends the stream after the text with a
    ``modelStreamErrorException``."""
    yield "messageStart", {"role": "assistant"}
    block = 0
    if turn.reply.text or turn.reply.error is not None:
        for piece in turn.reply.text_chunks():
            yield "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}}
        if (error := turn.reply.error) is not None:
            yield "exception:modelStreamErrorException", {"message": error}
            return
        yield "contentBlockStop", {"contentBlockIndex": 0}
        block = 1
    for k, call in enumerate(turn.calls):
        at = block + k
        start = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
        yield "contentBlockStart", {"contentBlockIndex": at, "start": start}
        for piece in halves(call.arguments):
            yield (
                "contentBlockDelta",
                {"contentBlockIndex": at, "delta": {"toolUse": {"input": piece}}},
            )
        yield "contentBlockStop", {"contentBlockIndex": at}
    yield "messageStop", {"stopReason": _stop(turn)}
    yield "metadata", {"usage": _usage(turn), "metrics": {"latencyMs": 0}}


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last ``user`` message that has text blocks."""
    for message in reversed(items(request.get("messages"))):
        texts = [b.get("text") for b in items(message.get("content")) if "text" in b]
        if message.get("role") == "user" and texts:
            return "\n\n".join(t for t in texts if isinstance(t, str))
    return None


def last_tool_result(request: Mapping[str, Any]) -> str | None:
    """The tool whose ``toolUse`` the last ``toolResult`` block answers."""
    blocks = [b for m in items(request.get("messages")) for b in items(m.get("content"))]
    results = [b["toolResult"] for b in blocks if isinstance(b.get("toolResult"), Mapping)]
    if not results:
        return None
    use_id = results[-1].get("toolUseId")
    for block in blocks:
        use = block.get("toolUse")
        if isinstance(use, Mapping) and use.get("toolUseId") == use_id:
            name = use.get("name")
            return name if isinstance(name, str) else None
    return None


CACHE: Final = CacheRules(
    provider="Bedrock",
    docs="https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html",
    keyed=(
        KeyedConfig("model"),
        KeyedConfig("toolConfig", code="tool-choice-changed", scope="messages"),
        KeyedConfig("additionalModelRequestFields", scope="messages"),
    ),
    minimums=(
        ("opus-4-5", 4096),
        ("haiku-4-5", 4096),
        ("3-5-haiku", 2048),
        ("nova", 1000),
    ),
    default_minimum=1024,
    breakpoints=True,
    max_breakpoints=4,
    lookback=20,
    marker=CACHE_POINT,
    marker_block=True,
    usage_of=usage_reader(
        (("usage",),),
        ("inputTokens",),
        (("cacheReadInputTokens",),),
        (("cacheWriteInputTokens",),),
    ),
    arguments="input",
    stream_call_id="toolUseId",
    minimums_text="Bedrock caches up to a cachePoint from 1,024 tokens (Claude Sonnet, Opus 4,"
    " 3.7 Sonnet), 2,048 (Claude 3.5 Haiku), 4,096 (Claude Opus 4.5, Haiku 4.5), 1,000"
    " (Amazon Nova) per checkpoint; shorter is not cached",
    notes=(
        ("no-breakpoint", "Bedrock caches only up to a cachePoint block (system, messages, tools)"),
        ("too-many-breakpoints", "Bedrock: at most 4 cachePoint blocks per request"),
        ("breakpoint-lookback", "Bedrock: a cachePoint checks about 20 blocks before it"),
        (
            "tool-choice-changed",
            "Bedrock: a toolConfig.toolChoice change invalidates the messages",
        ),
    ),
)
"""Explicit ``cachePoint`` blocks (at most 4 per request, each looking back 20 blocks)
in ``toolConfig.tools``, ``system`` and ``messages``, rendered tools, system, messages;
minimum tokens per checkpoint: 1,024 (Claude Sonnet, Opus 4, 3.7), 2,048 (Claude 3.5
Haiku), 4,096 (Claude Opus 4.5, Haiku 4.5), 1,000 (Amazon Nova). A tool call's arguments
are ``toolUse.input`` (an object in a Converse response; in a ConverseStream, text pieces
joined and parsed)."""


AWS_KEY_ID: Final = r"(?:AKIA|ASIA)[A-Z0-9]{16}"
"""An AWS access key id (long-term ``AKIA``, temporary ``ASIA``): 20 characters."""
_SIGV4_PART: Final = re.compile(r"(?:Credential=([^/,\s]+)|Signature=([0-9a-fA-F]+))")


def sigv4_secrets(value: str) -> list[str]:
    """The access key id and the signature of an AWS SigV4 ``Authorization`` value."""
    if not value.startswith("AWS4-"):
        return []
    return [part for pair in _SIGV4_PART.findall(value) for part in pair if part]


def signer(original: Any) -> Any:
    """botocore's ``SigV4Auth.add_auth``, keeping the credentials it signs with as secrets
    (the secret key and session token never travel: only their signature does)."""

    def add_auth(self: Any, request: Any) -> Any:
        credentials = getattr(self, "credentials", None)
        if credentials is not None:
            add_signing_secrets(
                getattr(credentials, name, None) for name in ("access_key", "secret_key", "token")
            )
        return original(self, request)

    return add_auth


SIGNER: Final = ClientPatch("botocore", "botocore.auth", "SigV4Auth", "add_auth", signer)
"""botocore sends through urllib3 (``clients.urllib3_client``); its signer is patched too."""


VOCABULARY: Final = WireVocabulary(
    Credentials(
        env=(
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_BEARER_TOKEN_BEDROCK",
        ),
        key_shapes=(("AWS", AWS_KEY_ID),),
        text_shapes=(TextShape(("AKIA", "ASIA"), AWS_KEY_ID),),
        header_parts=(sigv4_secrets,),
    ),
    message_ids=frozenset({"id", "toolUseId"}),
    response_ids=frozenset({"id", "toolUseId"}),
    fixed=(("latencyMs", 0),),
)
"""botocore's credentials (and a SigV4 signature's key id and signature; the secret key
and session token it signed with are kept by the urllib3 client), an access key id
anywhere by its shape, ``toolUseId`` and ``metrics.latencyMs`` (stored as 0)."""

API: Final = ModelApi(
    name="bedrock.converse",
    tool_shape=ToolShape("Bedrock", wrapper=TOOL_SPEC, breakpoint=CACHE_POINT),
    vocabulary=VOCABULARY,
    client_patches=(SIGNER,),
    schema_at=("inputSchema", "json"),
    path_suffixes=(CONVERSE, STREAM),
    messages_key="messages",
    system_keys=("system",),
    tools_at=("toolConfig", "tools"),
    model_of=model_of,
    streams=streams,
    tools_of=tools_of,
    tool_spans=tool_spans,
    render=render,
    error_body=error_body,
    call_id_prefix="tooluse_",
    cache_reasons=(("tools", "tools_changed"), ("system", "system_changed")),
    cache=CACHE,
    last_user_text=last_user_text,
    last_tool_result=last_tool_result,
)
