"""The three model APIs on the wire: which one a request is, and its header split.

``openai.chat`` (``POST .../chat/completions``): system = the leading ``system``
and ``developer`` messages. ``openai.responses`` (``.../responses``): system =
``instructions``, messages = ``input``. ``anthropic.messages`` (``.../messages``):
system = ``system``. Tools are ``tools`` in all three; config is the rest of the
body minus volatile keys. The cacheable prefix is the raw bytes of the tools
then the system exactly as sent, cut out of the body, never re-serialized.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

API_SUFFIXES: Final = (
    ("/chat/completions", "openai.chat"),
    ("/responses", "openai.responses"),
    ("/messages", "anthropic.messages"),
)
SYSTEM_ROLES: Final = ("system", "developer")
VOLATILE_NESTED: Final = ("user_id", "id", "session_id", "request_id")
"""Keys dropped from ``metadata`` and ``stream_options`` (with the top-level ``user``):
they change per user or per run, not with what the agent asks."""

_SPLIT_KEYS: Final = {
    "openai.chat": ("messages", None),
    "openai.responses": ("input", "instructions"),
    "anthropic.messages": ("messages", "system"),
}
_WS: Final = b" \t\r\n"
_STRUCTURE: Final = re.compile(rb'["{}\[\]]')
_SCALAR_END: Final = re.compile(rb"[,}\]\s]")


def detect_api(method: str, path: str) -> str | None:
    """The model api of a request, or ``None`` for any other traffic."""
    if method.upper() != "POST":
        return None
    path = path.rstrip("/")
    return next((api for suffix, api in API_SUFFIXES if path.endswith(suffix)), None)


def tool_name(tool: Any) -> str:
    """A tool's name in any of the three shapes (a built-in tool is named by its type)."""
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        for key in ("name", "type"):
            if isinstance(tool.get(key), str):
                return str(tool[key])
    return "?"


# -- raw JSON spans --------------------------------------------------------------------


def _skip(raw: bytes, i: int) -> int:
    while i < len(raw) and raw[i] in _WS:
        i += 1
    return i


def _string_end(raw: bytes, i: int) -> int:
    """The end of the JSON string starting at ``raw[i] == '"'``."""
    j = i + 1
    while True:
        j = raw.index(b'"', j)
        backslashes = 0
        while raw[j - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return j + 1
        j += 1


def value_end(raw: bytes, i: int) -> int:
    """The end of the JSON value starting at ``raw[i]`` (the text is valid JSON)."""
    first = raw[i : i + 1]
    if first == b'"':
        return _string_end(raw, i)
    if first not in (b"{", b"["):
        match = _SCALAR_END.search(raw, i)
        return match.start() if match else len(raw)
    depth, j = 0, i
    while (match := _STRUCTURE.search(raw, j)) is not None:
        j = match.start()
        char = raw[j : j + 1]
        if char == b'"':
            j = _string_end(raw, j)
            continue
        depth += 1 if char in (b"{", b"[") else -1
        j += 1
        if depth == 0:
            return j
    raise ValueError("unterminated JSON value")


def object_members(raw: bytes, start: int = 0) -> dict[str, tuple[int, int]]:
    """Byte spans of the values of the JSON object at ``start`` (last duplicate wins)."""
    spans: dict[str, tuple[int, int]] = {}
    i = _skip(raw, start)
    if raw[i : i + 1] != b"{":
        raise ValueError("not a JSON object")
    i = _skip(raw, i + 1)
    while raw[i : i + 1] == b'"':
        key_end = _string_end(raw, i)
        key = json.loads(raw[i:key_end])
        i = _skip(raw, _skip(raw, key_end) + 1)  # past the colon
        end = value_end(raw, i)
        spans[key] = (i, end)
        i = _skip(raw, end)
        if raw[i : i + 1] == b",":
            i = _skip(raw, i + 1)
    return spans


def array_elements(raw: bytes, start: int = 0) -> list[tuple[int, int]]:
    """Byte spans of the elements of the JSON array at ``start``."""
    i = _skip(raw, start)
    if raw[i : i + 1] != b"[":
        raise ValueError("not a JSON array")
    spans: list[tuple[int, int]] = []
    i = _skip(raw, i + 1)
    while raw[i : i + 1] not in (b"]", b""):
        end = value_end(raw, i)
        spans.append((i, end))
        i = _skip(raw, end)
        if raw[i : i + 1] == b",":
            i = _skip(raw, i + 1)
    return spans


# -- the split -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Split:
    """A model request body split into its header (config, system, tools) and messages.

    ``system`` and ``tools`` are ``None`` when the request has none; the raw
    fields are their bytes as sent (``b""`` when absent).
    """

    api: str
    config: dict[str, Any]
    system: Any
    tools: Any
    messages: Any
    tools_raw: bytes
    system_raw: bytes

    @property
    def prefix(self) -> bytes:
        """The cacheable prefix: tools then system, as sent."""
        return self.tools_raw + self.system_raw

    @property
    def prefix_sha256(self) -> str:
        """SHA-256 (hex) of the cacheable prefix."""
        return hashlib.sha256(self.prefix).hexdigest()

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools in the order sent."""
        return [tool_name(t) for t in self.tools] if isinstance(self.tools, list) else []


def _drop_volatile(config: dict[str, Any]) -> dict[str, Any]:
    """Drop ``user``, ``metadata.user_id`` and any ``stream_options`` id (copies, never edits)."""
    config.pop("user", None)
    for key in ("metadata", "stream_options"):
        value = config.get(key)
        if isinstance(value, Mapping):
            config[key] = {k: v for k, v in value.items() if k not in VOLATILE_NESTED}
    return config


def split_body(api: str, body: bytes) -> Split:
    """Split a request body of ``api``; ``ValueError`` when it is not a JSON object."""
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("the request body is not a JSON object")
    messages_key, system_key = _SPLIT_KEYS[api]
    spans = object_members(body)
    tools = data.get("tools")
    tools_raw = body[slice(*spans["tools"])] if "tools" in spans else b""
    messages = data.get(messages_key)
    if system_key is not None:
        system = data.get(system_key)
        system_raw = body[slice(*spans[system_key])] if system_key in spans else b""
    else:
        system, messages, system_raw = _leading_system(body, spans.get(messages_key), messages)
    config = {k: v for k, v in data.items() if k not in ("tools", messages_key, system_key or "")}
    return Split(api, _drop_volatile(config), system, tools, messages, tools_raw, system_raw)


def _leading_system(
    body: bytes, span: tuple[int, int] | None, messages: Any
) -> tuple[Any, Any, bytes]:
    """OpenAI chat: the leading system/developer messages, the rest, and their bytes."""
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
    elements = array_elements(body, span[0])
    return messages[:count], messages[count:], body[elements[0][0] : elements[count - 1][1]]
