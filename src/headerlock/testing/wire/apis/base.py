"""What a model API module provides: one ``ModelApi``, and the values all of them share.

A ``ModelApi`` says which requests are its own (path suffixes), how a body
splits into config, system, tools and messages (``split``), which config keys
are volatile, how its tools are listed and named, what an error and a scripted
answer look like (``render`` gets a ``Turn``), and what its provider's cache
calls a change of the prefix. No provider is special here: ``Split`` and
``Turn`` are the values the rest of the wire code and the renderers pass around,
and the helpers are the ones several API modules use.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from headerlock.formats.sse import SSE_MEDIA_TYPE, iter_sse
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_vocabulary import NOTHING, WireVocabulary
from headerlock.runtime.tools import ToolSchema
from headerlock.runtime.wire_tools import FLAT, ToolShape, tool_name
from headerlock.testing.wire.apis.cache_rules import IMPLICIT, CacheRules
from headerlock.testing.wire.around import Around
from headerlock.testing.wire.members import (
    CHECKED_MIN,
    DuplicateKeyError,
    member_values,
)
from headerlock.testing.wire.spans import (
    DuplicateMember,
    Span,
    array_elements,
    body_members,
    object_members,
)

if TYPE_CHECKING:  # the runtime's LLM service (asyncio) is no import of order_wire_tools
    from headerlock.runtime.adapters.scripted import Reply

JSON: Final = "application/json"
SSE: Final = "text/event-stream; charset=utf-8"

EPOCH: Final = 1_767_225_600
"""2026-01-01T00:00:00Z; a scripted reply's ``created`` is this plus its index."""

Rendered = tuple[int, str, bytes]
"""An HTTP answer: status, content type and body."""


@dataclass(frozen=True, slots=True)
class Split:
    """A model request body split into its header (config, system, tools) and messages.

    ``system`` and ``tools`` are ``None`` when the request has none; the raw
    fields are their bytes as sent (``b""`` when absent); ``tool_names`` are
    the names of the tools in the order sent; ``api`` is the API it was split by (the
    object: whoever holds a ``Split`` asks it, never looks it up again by name).
    """

    api: ModelApi
    config: dict[str, Any]
    system: Any
    tools: Any
    messages: Any
    tools_raw: bytes
    system_raw: bytes
    tool_names: list[str]
    messages_at: int | None = field(default=None, compare=False)
    """The byte offset of the messages' value in the body (``None``: not in it)."""

    def with_messages(self, messages: Any) -> Split:
        """This split with other ``messages`` (``dataclasses.replace``, without its
        field-by-field look-up)."""
        return Split(
            self.api,
            self.config,
            self.system,
            self.tools,
            messages,
            self.tools_raw,
            self.system_raw,
            self.tool_names,
            self.messages_at,
        )

    @property
    def prefix(self) -> bytes:
        """The cacheable prefix: tools then system, as sent."""
        return self.tools_raw + self.system_raw

    @property
    def prefix_sha256(self) -> str:
        """SHA-256 (hex) of the cacheable prefix (the last one remembered by its two
        parts' bytes: an agent sends the same tools and system with every request)."""
        tools, system = self.tools_raw, self.system_raw
        held = _PREFIX[0]
        if held[0] == tools and held[1] == system:
            return held[2]
        digest = hashlib.sha256(tools + system).hexdigest()
        _PREFIX[0] = (tools, system, digest)
        return digest


_PREFIX: list[tuple[bytes, bytes, str]] = [(b"", b"", hashlib.sha256(b"").hexdigest())]
"""The tools' and the system's bytes of the last prefix hashed, and its SHA-256."""


@dataclass(frozen=True, slots=True)
class Volatile:
    """Config keys that change per user or per run, not with what the agent asks:
    ``keys`` at the top, ``nested`` inside each mapping named in ``inside``."""

    keys: tuple[str, ...] = ()
    inside: tuple[str, ...] = ()
    nested: tuple[str, ...] = ()

    def drop(self, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` without the volatile keys (nested mappings are copied, never edited)."""
        for key in self.keys:
            config.pop(key, None)
        for key in self.inside:
            value = config.get(key)
            if isinstance(value, Mapping):
                config[key] = {k: v for k, v in value.items() if k not in self.nested}
        return config


PER_USER: Final = Volatile(
    keys=("user",),
    inside=("metadata", "stream_options"),
    nested=("user_id", "id", "session_id", "request_id"),
)
"""The volatile config of the OpenAI and Anthropic APIs: the top-level ``user``, and
the ids inside ``metadata`` and ``stream_options``."""


SIGNED_QUERY: Final = ("x-amz-",)
"""A presigned (SigV4) URL's query parameters: per request, never locked."""


# -- what a renderer gets --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a scripted reply, with its id and JSON arguments."""

    name: str
    arguments: str
    input: dict[str, Any]
    call_id: str


def script_id(prefix: str, index: int, call: int | None = None) -> str:
    """A deterministic id, e.g. ``msg_script0002`` or ``call_script0002t1``."""
    tail = "" if call is None else f"t{call}"
    return f"{prefix}script{index:04d}{tail}"


@dataclass(frozen=True, slots=True)
class Turn:
    """What every renderer needs: the request, the reply and values derived from them."""

    request: Mapping[str, Any]
    reply: Reply
    index: int
    calls: tuple[Call, ...]
    input_tokens: int
    """A plausible estimate: a token per four characters of the canonical request."""
    model: str
    stream: bool
    path: str = ""
    """The request's path (a route may choose the stream's framing)."""

    @property
    def created(self) -> int:
        return EPOCH + self.index

    def id(self, prefix: str, call: int | None = None) -> str:
        """A provider id of this reply (or of its tool call number ``call``)."""
        return script_id(prefix, self.index, call)

    @property
    def output_tokens(self) -> int:
        size = len(self.reply.text) + sum(len(c.name) + len(c.arguments) for c in self.calls)
        return max(1, size // 4)


def dumps(value: Any, *, allow_nan: bool = True) -> str:
    """Compact JSON, UTF-8 where possible (``\\u`` escapes for a lone surrogate)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=allow_nan)
    return text


def sse(events: Iterator[tuple[str | None, Any]]) -> bytes:
    """``event:``/``data:`` blocks; a ``str`` payload is sent as is (``[DONE]``)."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name is not None else ""
        payload = data if isinstance(data, str) else dumps(data)
        out.append(f"{head}data: {payload}\n\n")
    return "".join(out).encode()


def halves(text: str) -> list[str]:
    """Tool arguments stream in two pieces, so clients must join deltas."""
    half = len(text) // 2
    return [text[:half], text[half:]] if half else [text]


# -- defaults a module may replace -----------------------------------------------------


def model_in_body(path: str, request: Mapping[str, Any]) -> str:
    """The ``model`` of the request body (``scripted`` when it has none)."""
    model = request.get("model")
    return model if isinstance(model, str) else "scripted"


def stream_in_body(path: str, request: Mapping[str, Any]) -> bool:
    """Whether the body asks for a stream (``"stream": true``)."""
    return request.get("stream") is True


def body_holds(body: bytes, key: str) -> bool:
    """Whether ``body`` is a JSON object with a top-level ``key``."""
    if json.dumps(key).encode() not in body:
        return False  # the common case, without parsing
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and key in data


def tools_listed(tools: Any) -> list[Any]:
    """The tools of a ``tools`` list, one per element."""
    return list(tools) if isinstance(tools, list) else []


def items(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list (a request's messages, blocks or parts); ``[]`` otherwise."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def text_of(value: Any) -> str:
    """The text of a system prompt in any shape: a string, blocks, messages, parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("content", "text", "parts"):
            if key in value:
                return text_of(value[key])
        return ""
    if isinstance(value, Sequence):
        return "\n\n".join(t for t in (text_of(v) for v in value) if t)
    return str(value)


_AROUND: dict[str, Around] = {}
"""Per API, the bytes around the messages of the last body split (``ModelApi.split``)."""

_NAMED: dict[str, tuple[ModelApi, bytes, tuple[str, ...]]] = {}
"""Per API, the bytes of the last long tool list named, and its names."""


def _names_of(api: ModelApi, tools: Any, raw: bytes) -> list[str]:
    """``api.tool_names(tools)`` (``raw``: the tools' bytes as sent), found once while
    the bytes repeat."""
    held = _NAMED.get(api.name)
    if held is not None and held[0] is api and held[1] == raw and raw:
        return list(held[2])
    names = api.tool_names(tools)
    if len(raw) >= CHECKED_MIN:
        _NAMED[api.name] = (api, raw, tuple(names))
    return names


def answer_problem(content_type: str | None, body: bytes) -> str | None:
    """Why a successful answer to a model request is not one a model API gives (``None``:
    it is): the APIs answer JSON data (an object, or a list of them for a stream that
    is not SSE) or server-sent events; a proxy's HTML error page sent with HTTP 200 is
    neither."""
    is_sse = (content_type or "").split(";")[0].strip().lower() == SSE_MEDIA_TYPE
    if is_sse and any(e.is_json for e in iter_sse(body.decode("utf-8", errors="replace"))):
        return None  # read up to the first JSON event only
    answer = WireResponse.from_http(200, content_type, body)
    if answer.kind == "json" and isinstance(answer.body, dict | list):
        return None
    if answer.kind == "events" and any(event.is_json for event in answer.body):
        return None
    shown = content_type or "no content type"
    return f"a body that is not a model API answer ({shown}, {len(body)} bytes)"


@dataclass(frozen=True, slots=True)
class ClientPatch:
    """A method of a provider's SDK that a lock patches while it is open (what the API
    needs of its SDK beyond the HTTP client it sends through, e.g. the secrets a request
    is signed with): ``owner.method`` of the module ``module``, replaced by
    ``wrap(original)`` and restored after; ``library`` is the SDK as a user knows it
    (its requests are seen through the HTTP client it sends with)."""

    library: str
    module: str
    owner: str
    method: str
    wrap: Callable[[Any], Any]


LeadingSystem = Callable[[bytes, Span | None, Any], tuple[Any, Any, bytes]]
"""Cuts the system out of the messages: ``(body, messages span, messages)`` to
``(system, the other messages, the system's bytes)``."""


@dataclass(frozen=True, slots=True)
class ModelApi:
    """Everything the wire code knows about one model API.

    ``name`` is ``provider.endpoint``; a POST whose path ends with one of
    ``path_suffixes`` is this API's, and one ``cloud_route(path, body)`` accepts (a
    cloud route that serves several APIs, told apart by the body). The body's
    ``messages_key`` holds the messages, the first of ``system_keys`` present the system (or
    ``leading_system`` cuts it out of the messages), the key path ``tools_at``
    the tools (the other members of an object on that path are config);
    config is the rest minus ``volatile``. ``tools_of`` lists the tools one per
    name and ``tool_spans`` their bytes in the same order. ``error_body(message,
    code)`` is the provider's error JSON; ``render`` answers a scripted ``Turn``
    (tool call ids start with ``call_id_prefix``); ``model_of`` and ``streams``
    read the model and the stream flag from path and body. ``cache_reasons``
    pairs a prefix segment (``tools``, ``system``) with the provider cache's name
    for its change; ``cache`` holds the provider cache's rules (``CacheRules``: render
    order, keyed config, minimum length, breakpoints, usage fields), which the cache
    report applies.
    """

    name: str
    path_suffixes: tuple[str, ...]
    messages_key: str
    system_keys: tuple[str, ...]
    render: Callable[[Turn], Rendered]
    error_body: Callable[[str, str], dict[str, Any]]
    call_id_prefix: str
    volatile: Volatile = Volatile()
    cache_reasons: tuple[tuple[str, str], ...] = ()
    cache: CacheRules = IMPLICIT
    cloud_route: Callable[[str, bytes], bool] | None = None
    tools_at: tuple[str, ...] = ("tools",)
    leading_system: LeadingSystem | None = None
    model_of: Callable[[str, Mapping[str, Any]], str] = model_in_body
    streams: Callable[[str, Mapping[str, Any]], bool] = stream_in_body
    tools_of: Callable[[Any], list[Any]] = tools_listed
    tool_spans: Callable[[bytes], list[Span]] = array_elements
    system_text: Callable[[Any], str] = text_of
    last_user_text: Callable[[Mapping[str, Any]], str | None] = lambda request: None
    """The text of the request's last user message (for a scripted reply's ``match:``)."""
    last_tool_result: Callable[[Mapping[str, Any]], str | None] = lambda request: None
    """The name of the tool whose result the request carries last (``match:``)."""
    http_headers: tuple[str, ...] = ()
    """The HTTP headers (lowercase) that say what the model does, locked with the header
    (``anthropic-beta``); never a credential, nor what changes per SDK version or request
    (``user-agent``, ``x-stainless-*``, retry counters, idempotency keys, dates)."""
    unlocked_query: tuple[str, ...] = SIGNED_QUERY
    """Query parameter name prefixes (lowercase) left out of the header; every other
    non-credential parameter (Azure's ``api-version``) is locked with it."""
    tool_shape: ToolShape = FLAT
    """How its tool list holds its tools (``order_wire_tools`` and tool names)."""
    schema_at: tuple[str, ...] = ("parameters",)
    """The key path of a tool's parameter schema in its definition."""
    client_patches: tuple[ClientPatch, ...] = ()
    """The SDK methods a lock patches for it (``clients.sdk_patches`` installs them)."""
    vocabulary: WireVocabulary = NOTHING
    """What the format layer must know of it: the credentials its clients carry, its id
    keys, the volatile fields of its answers (the registry merges every API's)."""

    @property
    def provider(self) -> str:
        """The provider part of the name (``anthropic`` of ``anthropic.messages``)."""
        return self.name.partition(".")[0]

    def matches(self, path: str, body: bytes = b"") -> bool:
        """Whether a POST of ``body`` to ``path`` is a request of this API."""
        path = path.rstrip("/")
        if path.endswith(self.path_suffixes):
            return True
        return self.cloud_route is not None and self.cloud_route(path, body)

    def tool_name(self, tool: Any) -> str:
        """The name of one tool of ``tools_of`` as sent (``?``: it has none)."""
        return tool_name(tool, (self.tool_shape,), strict=False)

    def tool_schema(self, tool: Any) -> ToolSchema:
        """One tool of ``tools_of`` as a runtime ``ToolSchema`` (name, description,
        parameters)."""
        if not isinstance(tool, Mapping):
            return ToolSchema(str(tool))
        wrapper = self.tool_shape.wrapper
        inner = tool.get(wrapper) if wrapper is not None else None
        spec = inner if isinstance(inner, Mapping) else tool
        schema: Any = spec
        for key in self.schema_at:
            schema = schema.get(key, {}) if isinstance(schema, Mapping) else {}
        return ToolSchema(
            name=self.tool_name(tool),
            description=str(spec.get("description", "")),
            parameters=schema if isinstance(schema, Mapping) else {},
        )

    def tool_names(self, tools: Any) -> list[str]:
        """The names of ``tools`` in the order sent."""
        return [self.tool_name(t) for t in self.tools_of(tools)]

    def cache_reason(self, segment: str) -> str | None:
        """What the provider's cache calls a change in ``segment`` (``None``: nothing)."""
        return dict(self.cache_reasons).get(segment)

    def split(self, body: bytes) -> Split:
        """Split a request body; ``ValueError`` when it is not a JSON object
        (``DuplicateKeyError`` when an object in it holds a key twice). A body whose
        bytes around its messages are the last body's (``around.Around``) has only its
        messages read."""
        around = _AROUND.get(self.name)
        if around is not None and around.owner is self:
            found = around.messages(body)
            if found is not None:
                return self._split_around(body, around, *found)
        try:
            spans = body_members(body)
        except DuplicateMember as error:
            raise DuplicateKeyError(error.key) from None
        data = member_values(body, spans)
        tools, tools_raw = self._tools(body, data, spans)
        messages = data.get(self.messages_key)
        system_key = next((k for k in self.system_keys if k in data), None)
        if system_key is not None:
            system, system_raw = data[system_key], body[slice(*spans[system_key])]
        elif self.leading_system is not None:
            span = spans.get(self.messages_key)
            system, messages, system_raw = self.leading_system(body, span, messages)
        else:
            system, system_raw = None, b""
        cut = (self.tools_at[0], self.messages_key, *self.system_keys)
        config = {k: v for k, v in data.items() if k not in cut}
        holder = data.get(self.tools_at[0])
        if len(self.tools_at) > 1 and isinstance(holder, dict):
            rest = {k: v for k, v in holder.items() if k != self.tools_at[1]}
            if rest:  # e.g. Bedrock's toolConfig.toolChoice
                config[self.tools_at[0]] = rest
        config = self.volatile.drop(config)
        names = _names_of(self, tools, tools_raw)
        span = spans.get(self.messages_key)
        if span is not None and system_key != self.messages_key:
            outside = None if system_key is None else system
            kept = (tools_raw, system_raw if system_key else b"", tuple(names), system_key)
            read = (config, tools, outside)
            remembered = Around.of(self, body, self.messages_key, span, read, kept)
            if remembered is not None:
                _AROUND[self.name] = remembered
        at = None if span is None else span[0]
        return Split(self, config, system, tools, messages, tools_raw, system_raw, names, at)

    def _split_around(self, body: bytes, around: Around, messages: Any, span: Span) -> Split:
        """``split(body)`` of a body that is ``around``'s but for its ``messages`` (at
        ``span``): the rest is the last body's, unpacked afresh."""
        config, tools, system = around.read()
        tools_raw, system_raw, names, system_key = around.kept
        if system_key is None and self.leading_system is not None:
            system, messages, system_raw = self.leading_system(body, span, messages)
        return Split(
            self, config, system, tools, messages, tools_raw, system_raw, list(names), span[0]
        )

    def _tools(
        self, body: bytes, data: dict[str, Any], spans: dict[str, Span]
    ) -> tuple[Any, bytes]:
        """The tools at ``tools_at`` and their bytes as sent (``None``, ``b""``: none)."""
        value: Any = data
        start = end = 0
        for depth, key in enumerate(self.tools_at):
            if not isinstance(value, dict) or key not in value or key not in spans:
                return None, b""
            value = value[key]
            start, end = spans[key]
            if depth + 1 < len(self.tools_at):
                spans = object_members(body, start) if body[start : start + 1] == b"{" else {}
        return value, body[start:end]
