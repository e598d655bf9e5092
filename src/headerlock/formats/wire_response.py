"""The answer half of a wire exchange: status, content type and the body, decoded.

A body is kept as JSON data, as text, or as the server-sent ``events`` of a stream,
each event with its data (JSON when it parses), name and id, so a replay hands the
client the same stream.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

SSE_MEDIA_TYPE: Final = "text/event-stream"
BodyKind = Literal["json", "text", "events"]
BODY_KINDS: Final[tuple[BodyKind, ...]] = ("events", "json", "text")
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
