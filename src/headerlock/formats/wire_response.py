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
from dataclasses import dataclass
from typing import Any, Final, Literal

from headerlock.formats import aws_eventstream
from headerlock.formats.sse import (
    JSON_MAX_DEPTH,
    SSE_MEDIA_TYPE,
    SseEvent,
    deeper_than,
    dump_json,
    parse_json,
    parse_sse,
    sse_event,
)
from headerlock.formats.stream_text import EventLines, stream_text

STREAM_KEY: Final = "stream"
"""A stream's events as text, one per line (``stream_text``), in a recording."""
BodyKind = Literal["json", "text", "events", "base64"]
BODY_KINDS: Final[tuple[BodyKind, ...]] = ("base64", "events", "json", "text")


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
                return cls(status, content_type, "json", parse_json(text))
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
            text = dump_json(self.body)
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


__all__ = [
    "BODY_KINDS",
    "JSON_MAX_DEPTH",
    "SSE_MEDIA_TYPE",
    "STREAM_KEY",
    "BodyKind",
    "SseEvent",
    "WireResponse",
    "deeper_than",
    "parse_sse",
    "sse_event",
]
