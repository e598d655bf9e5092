"""Wire recordings: the model requests an agent sent over HTTP, and the answers.

Canonical YAML with ``kind: wire`` and a format ``version``. Each entry holds
the request's api and path (never the host), its config, system and tools
(``<<system>>``/``<<tools>>`` plus sorted ``tool_names`` when unpinned; as sent,
with the raw ``prefix`` text, when pinned), ``prefix_sha256``, the messages with
ids tokenized, and the response: status, content type and a ``json`` body, a
``text`` body or the server-sent ``events``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, NoReturn

from headerlock.errors import WireRecordingError, YamlError
from headerlock.formats import placeholders
from headerlock.formats.atomic import atomic_write
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.strict_yaml import loads, read_text
from headerlock.runtime.canonical import code_unit_key

WIRE_FORMAT_VERSION: Final = 1
WIRE_KIND: Final = "wire"
APIS: Final = ("anthropic.messages", "openai.chat", "openai.responses")
SSE_MEDIA_TYPE: Final = "text/event-stream"

BodyKind = Literal["json", "text", "events"]
_BODY_KINDS: Final[tuple[BodyKind, ...]] = ("events", "json", "text")
_TOP_KEYS: Final = ("kind", "pinned", "requests", "version")
_ENTRY_KEYS: Final = (
    "api",
    "config",
    "messages",
    "path",
    "prefix",
    "prefix_sha256",
    "response",
    "system",
    "tool_names",
    "tools",
)
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_LINE: Final = re.compile(r"\r\n|\r|\n")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its ``data`` (parsed JSON when ``is_json``), name and id."""

    data: Any
    is_json: bool
    event: str | None = None
    id: str | None = None

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``json`` or ``text``, plus ``event``/``id`` when set."""
        data: dict[str, Any] = {"json" if self.is_json else "text": self.data}
        if self.event is not None:
            data["event"] = self.event
        if self.id is not None:
            data["id"] = self.id
        return data

    def render(self) -> str:
        """The event as SSE text, ending in a blank line."""
        head = "" if self.event is None else f"event: {self.event}\n"
        head += "" if self.id is None else f"id: {self.id}\n"
        text = _dumps(self.data) if self.is_json else str(self.data)
        return head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"


def parse_sse(text: str) -> tuple[SseEvent, ...]:
    """The events of an SSE stream (comments and ``retry`` dropped, data lines joined)."""
    events: list[SseEvent] = []
    data: list[str] = []
    name: str | None = None
    event_id: str | None = None
    for line in [*_LINE.split(text), ""]:
        if not line:
            if data:
                events.append(_event("\n".join(data), name, event_id))
            data, name, event_id = [], None, None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
        elif field == "id":
            event_id = value
    return tuple(events)


def _event(text: str, name: str | None, event_id: str | None) -> SseEvent:
    try:
        return SseEvent(json.loads(text), True, name, event_id)
    except ValueError:
        return SseEvent(text, False, name, event_id)


def _is_json_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


@dataclass(frozen=True, slots=True)
class WireResponse:
    """A decoded HTTP answer: status, content type and the body as ``kind`` says."""

    status: int
    content_type: str | None
    kind: BodyKind
    body: Any

    @classmethod
    def from_http(cls, status: int, content_type: str | None, body: bytes) -> WireResponse:
        """Parse a decoded body: SSE events, JSON data, or text."""
        text = body.decode("utf-8", errors="replace")
        media = (content_type or "").split(";")[0].strip().lower()
        if media == SSE_MEDIA_TYPE:
            return cls(status, content_type, "events", parse_sse(text))
        if _is_json_type(content_type):
            try:
                return cls(status, content_type, "json", json.loads(text))
            except ValueError:
                pass
        return cls(status, content_type, "text", text)

    def to_http(self) -> tuple[int, str | None, bytes]:
        """Status, content type and body bytes to hand back to a client."""
        if self.kind == "events":
            text = "".join(event.render() for event in self.body)
        elif self.kind == "json":
            text = _dumps(self.body)
        else:
            text = self.body
        return self.status, self.content_type, text.encode()

    def to_data(self) -> dict[str, Any]:
        """Plain data for the recording."""
        body = [e.to_data() for e in self.body] if self.kind == "events" else self.body
        return {"status": self.status, "content_type": self.content_type, self.kind: body}


@dataclass(frozen=True, slots=True)
class WirePrefix:
    """The cacheable prefix as sent: the raw JSON text of ``tools`` and of the system."""

    tools: str
    system: str

    @property
    def raw(self) -> bytes:
        """Tools then system, the bytes ``prefix_sha256`` is taken over."""
        return self.tools.encode() + self.system.encode()


@dataclass(frozen=True, slots=True)
class WireEntry:
    """One model request, scrubbed, and (in a recording) its response."""

    api: str
    path: str
    config: dict[str, Any]
    system: Any
    tools: Any
    tool_names: tuple[str, ...]
    prefix_sha256: str
    messages: Any
    prefix: WirePrefix | None = None
    response: WireResponse | None = None

    def request_data(self) -> dict[str, Any]:
        """Plain data of the request side (what replay compares)."""
        data: dict[str, Any] = {
            "api": self.api,
            "path": self.path,
            "config": self.config,
            "system": self.system,
            "tools": self.tools,
            "tool_names": list(self.tool_names),
            "prefix_sha256": self.prefix_sha256,
            "messages": self.messages,
        }
        if self.prefix is not None:
            data["prefix"] = {"tools": self.prefix.tools, "system": self.prefix.system}
        return data

    def to_data(self) -> dict[str, Any]:
        """Plain data for the recording."""
        data = self.request_data()
        if self.response is not None:
            data["response"] = self.response.to_data()
        return data


@dataclass(frozen=True, slots=True)
class WireRecording:
    """A whole wire recording: whether it is pinned, and its requests in order."""

    pinned: bool
    requests: tuple[WireEntry, ...]

    def to_data(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "kind": WIRE_KIND,
            "version": WIRE_FORMAT_VERSION,
            "pinned": self.pinned,
            "requests": [entry.to_data() for entry in self.requests],
        }

    def to_text(self) -> str:
        """Canonical YAML text."""
        return dump(self.to_data())


def sorted_names(names: Sequence[str]) -> tuple[str, ...]:
    """Tool names in code-unit order."""
    return tuple(sorted(names, key=code_unit_key))


# -- loading ---------------------------------------------------------------------------


class _Reader:
    """Validates loaded data; every error names the file and the key."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key: str, message: str) -> NoReturn:
        raise WireRecordingError(message, path=self.path, key=key)

    def mapping(self, value: Any, key: str, allowed: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(key, f"must be a mapping, got {type(value).__name__}")
        unknown = sorted(k for k in value if k not in allowed)
        if unknown:
            self.fail(f"{key}.{unknown[0]}", "unknown key")
        return value

    def need(self, data: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in data:
            self.fail(f"{where}.{key}", "missing")
        return data[key]

    def int_(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(key, f"must be an integer, got {value!r}")
        return value

    def str_(self, value: Any, key: str, *, optional: bool = False) -> Any:
        if not (isinstance(value, str) or (optional and value is None)):
            self.fail(key, f"must be a string, got {value!r}")
        return value

    def recording(self, data: Any) -> WireRecording:
        top = self.mapping(data, "recording", _TOP_KEYS)
        for key in ("kind", "version", "pinned", "requests"):
            if key not in top:
                self.fail(key, "missing")
        if top["kind"] != WIRE_KIND:
            self.fail("kind", f"must be {WIRE_KIND!r}, got {top['kind']!r}")
        version = self.int_(top["version"], "version")
        if version != WIRE_FORMAT_VERSION:
            newer = " (newer than this headerlock reads; upgrade it)" if version > 1 else ""
            self.fail("version", f"unknown wire format version {version}{newer}")
        pinned = top["pinned"]
        if not isinstance(pinned, bool):
            self.fail("pinned", f"must be true or false, got {pinned!r}")
        requests = top["requests"]
        if not isinstance(requests, list):
            self.fail("requests", "must be a list")
        entries = tuple(
            self.entry(item, f"requests[{n}]", pinned) for n, item in enumerate(requests)
        )
        return WireRecording(pinned, entries)

    def entry(self, value: Any, key: str, pinned: bool) -> WireEntry:
        data = self.mapping(value, key, _ENTRY_KEYS)
        for name in ("api", "path", "config", "system", "tools", "tool_names", "prefix_sha256"):
            self.need(data, name, key)
        self.need(data, "messages", key)
        api = self.str_(data["api"], f"{key}.api")
        if api not in APIS:
            self.fail(f"{key}.api", f"unknown api {api!r}; expected one of {', '.join(APIS)}")
        path = self.str_(data["path"], f"{key}.path")
        if not path.startswith("/"):
            self.fail(f"{key}.path", f"must be a path starting with '/', got {path!r}")
        config = data["config"]
        if not isinstance(config, Mapping):
            self.fail(f"{key}.config", "must be a mapping")
        names = data["tool_names"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self.fail(f"{key}.tool_names", "must be a list of strings")
        if list(sorted_names(names)) != names:
            self.fail(f"{key}.tool_names", "must be sorted (code-unit order)")
        sha = self.str_(data["prefix_sha256"], f"{key}.prefix_sha256")
        if not _SHA256.fullmatch(sha):
            self.fail(f"{key}.prefix_sha256", "must be 64 lowercase hex digits")
        system, tools = data["system"], data["tools"]
        prefix = self.prefix(data, key, pinned)
        if not pinned:
            if system not in (placeholders.SYSTEM, None):
                self.fail(f"{key}.system", f"an unpinned recording holds {placeholders.SYSTEM}")
            if tools not in (placeholders.TOOLS, None):
                self.fail(f"{key}.tools", f"an unpinned recording holds {placeholders.TOOLS}")
        elif tools is not None and not isinstance(tools, list):
            self.fail(f"{key}.tools", "must be a list (as sent) or null")
        return WireEntry(
            api=api,
            path=path,
            config=dict(config),
            system=system,
            tools=tools,
            tool_names=tuple(names),
            prefix_sha256=sha,
            messages=data["messages"],
            prefix=prefix,
            response=self.response(self.need(data, "response", key), f"{key}.response"),
        )

    def prefix(self, data: Mapping[str, Any], key: str, pinned: bool) -> WirePrefix | None:
        if not pinned:
            if "prefix" in data:
                self.fail(f"{key}.prefix", "only pinned recordings keep the raw prefix")
            return None
        raw = self.mapping(self.need(data, "prefix", key), f"{key}.prefix", ("system", "tools"))
        tools = self.str_(self.need(raw, "tools", f"{key}.prefix"), f"{key}.prefix.tools")
        system = self.str_(self.need(raw, "system", f"{key}.prefix"), f"{key}.prefix.system")
        return WirePrefix(tools, system)

    def response(self, value: Any, key: str) -> WireResponse:
        allowed = ("content_type", "events", "json", "status", "text")
        data = self.mapping(value, key, allowed)
        status = self.int_(self.need(data, "status", key), f"{key}.status")
        if not 100 <= status <= 599:
            self.fail(f"{key}.status", f"must be an HTTP status (100-599), got {status}")
        content_type = self.str_(
            self.need(data, "content_type", key), f"{key}.content_type", optional=True
        )
        kinds: list[BodyKind] = [k for k in _BODY_KINDS if k in data]
        if len(kinds) != 1:
            self.fail(key, "needs exactly one of events, json or text")
        kind = kinds[0]
        body = data[kind]
        if kind == "text":
            self.str_(body, f"{key}.text")
        elif kind == "events":
            if not isinstance(body, list):
                self.fail(f"{key}.events", "must be a list")
            body = tuple(self.event(e, f"{key}.events[{n}]") for n, e in enumerate(body))
        return WireResponse(status, content_type, kind, body)

    def event(self, value: Any, key: str) -> SseEvent:
        data = self.mapping(value, key, ("event", "id", "json", "text"))
        kinds = [k for k in ("json", "text") if k in data]
        if len(kinds) != 1:
            self.fail(key, "needs exactly one of json or text")
        name = self.str_(data.get("event"), f"{key}.event", optional=True)
        event_id = self.str_(data.get("id"), f"{key}.id", optional=True)
        if kinds[0] == "text":
            self.str_(data["text"], f"{key}.text")
        return SseEvent(data[kinds[0]], kinds[0] == "json", name, event_id)


def wire_recording_from_data(data: Any, *, path: str) -> WireRecording:
    """Validate loaded data; a ``WireRecordingError`` names the file and the key."""
    return _Reader(path).recording(data)


def is_wire_data(data: Any) -> bool:
    """Whether loaded YAML data claims to be a wire recording."""
    return isinstance(data, Mapping) and data.get("kind") == WIRE_KIND


def parse_wire_recording(text: str, *, path: str) -> WireRecording:
    """Parse and validate wire recording text."""
    try:
        data = loads(text, path=path)
    except YamlError as error:
        where = f"line {error.line}" if error.line else None
        raise WireRecordingError(error.reason, path=path, key=where) from None
    return wire_recording_from_data(data, path=path)


def load_wire_recording(path: Path) -> WireRecording:
    """Read and validate the wire recording at ``path``."""
    try:
        text = read_text(path, missing="no such wire recording")
    except YamlError as error:
        raise WireRecordingError(error.reason, path=str(path)) from None
    return parse_wire_recording(text, path=str(path))


def save_wire_recording(recording: WireRecording, path: Path) -> None:
    """Write ``recording`` atomically (a reader sees the old file or the new one)."""
    atomic_write(path, recording.to_text())
