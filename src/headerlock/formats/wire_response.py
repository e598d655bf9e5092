"""The answer half of a wire exchange: status, content type and the body, decoded.

A body is kept as JSON data, as text, as the server-sent ``events`` of a stream, each
event with its data (JSON when it parses), name and id, so a replay hands the client the
same stream (AWS's binary event-stream frames too, decoded: ``aws_eventstream``), or as
``base64`` of its bytes when it is not UTF-8 (an image a tool fetched). A recording keeps
a stream as its text, one event per line (``stream_text``); a stream loaded from one has
an ``EventLines`` body, served from that text without parsing an event.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from headerlock.formats import aws_eventstream
from headerlock.formats.canonical_yaml import FlowMapping
from headerlock.formats.stream_text import EventLines, stream_text

SSE_MEDIA_TYPE: Final = "text/event-stream"
STREAM_KEY: Final = "stream"
"""A stream's events as text, one per line (``stream_text``), in a recording."""
BodyKind = Literal["json", "text", "events", "base64"]
BODY_KINDS: Final[tuple[BodyKind, ...]] = ("base64", "events", "json", "text")
_LINE: Final = re.compile(r"\r\n|\r|\n")
JSON_MAX_DEPTH: Final = 256
"""A JSON body nesting deeper than this is kept as its text: the recording's reader
(``WIRE_MAX_DEPTH``) and the YAML writer stay far from their limits, and a body too
deep for ``json.loads`` (a ``RecursionError``) is kept exactly too."""


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` lists and mappings deep (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _json(text: str) -> Any:
    """``text`` parsed as JSON; ``ValueError`` when it is not JSON or nests too deep."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep to parse") from None
    if deeper_than(data, JSON_MAX_DEPTH):
        raise ValueError(f"JSON nested more than {JSON_MAX_DEPTH} levels deep")
    return data


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""What ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` uses, made once
(``dumps`` makes one per call: a stream's events are each encoded)."""


def _dumps(value: Any) -> str:
    return _ENCODER.encode(value)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its ``data`` (parsed JSON when ``is_json``), name and id."""

    data: Any
    is_json: bool
    event: str | None = None
    id: str | None = None

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``json`` or ``text``, plus ``event``/``id`` when set."""
        value = self.data
        if self.is_json and isinstance(value, Mapping):  # one line per event
            value = FlowMapping(value.items())
        data: dict[str, Any] = {"json" if self.is_json else "text": value}
        if self.event is not None:
            data["event"] = self.event
        if self.id is not None:
            data["id"] = self.id
        return data

    def render(self) -> str:
        """The event as SSE text, ending in a blank line."""
        head = "" if self.event is None else f"event: {self.event}\n"
        head += "" if self.id is None else f"id: {self.id}\n"
        if self.is_json:  # compact JSON holds no line break: one data line
            return f"{head}data: {_dumps(self.data)}\n\n"
        text = str(self.data)
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
                events.append(sse_event("\n".join(data), name, event_id))
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


def sse_event(text: str, name: str | None, event_id: str | None) -> SseEvent:
    """One event from its data text: JSON when it parses (and nests no deeper than
    ``JSON_MAX_DEPTH``), else the text."""
    try:
        return SseEvent(_json(text), True, name, event_id)
    except ValueError:
        return SseEvent(text, False, name, event_id)


def _media(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def _is_json_type(content_type: str | None) -> bool:
    media = _media(content_type)
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
        """Parse a decoded body: SSE events, JSON data, text, or base64 of bytes that
        are not UTF-8 (kept exactly)."""
        media = (content_type or "").split(";")[0].strip().lower()
        if media == aws_eventstream.MEDIA_TYPE:
            frames = aws_eventstream.decode(body)
            if frames is None:
                return cls(status, content_type, "base64", base64.b64encode(body).decode("ascii"))
            events = tuple(SseEvent(data, True, name) for name, data in frames)
            return cls(status, content_type, "events", events)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            if media != SSE_MEDIA_TYPE:
                return cls(status, content_type, "base64", base64.b64encode(body).decode("ascii"))
            text = body.decode("utf-8", errors="replace")
        if media == SSE_MEDIA_TYPE:
            return cls(status, content_type, "events", parse_sse(text))
        if _is_json_type(content_type):
            try:
                return cls(status, content_type, "json", _json(text))
            except ValueError:
                pass
        return cls(status, content_type, "text", text)

    def to_http(self) -> tuple[int, str | None, bytes]:
        """Status, content type and body bytes to hand back to a client."""
        if self.kind == "base64":
            return self.status, self.content_type, base64.b64decode(self.body)
        if isinstance(self.body, EventLines):  # a loaded stream: served from its text
            if _media(self.content_type) == aws_eventstream.MEDIA_TYPE:
                return self.status, self.content_type, self.body.aws_frames()
            return self.status, self.content_type, self.body.sse_text().encode()
        if self.kind == "events" and _media(self.content_type) == aws_eventstream.MEDIA_TYPE:
            pairs = ((e.event or "", e.data) for e in self.body)
            return self.status, self.content_type, aws_eventstream.frames(pairs)
        if self.kind == "events":
            text = "".join(event.render() for event in self.body)
        elif self.kind == "json":
            text = _dumps(self.body)
        else:
            text = self.body
        return self.status, self.content_type, text.encode()

    def to_data(self) -> dict[str, Any]:
        """Plain data for the recording: a stream as its ``stream`` text, one event per
        line, or (an event with no such line) as the list of its ``events``."""
        data: dict[str, Any] = {"status": self.status, "content_type": self.content_type}
        if isinstance(self.body, EventLines):
            data[STREAM_KEY] = self.body.text
        elif self.kind == "events":
            text = stream_text(self.body)
            if text is None:
                data["events"] = [e.to_data() for e in self.body]
            else:
                data[STREAM_KEY] = text
        else:
            data[self.kind] = self.body
        return data
