"""Replay: rebuild the model's output from recorded ``assistant/*`` events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from headerlock.runtime.adapters.scripted import (
    Reply,
    ScriptedAdapter,
    ScriptedToolCall,
    parse_match,
)
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    STEP_START,
    Event,
)


def replies_from_events(events: Iterable[Event]) -> list[Reply]:
    """One reply per step that reached the model, in log order (with the ``match`` an
    ``app: wire`` reply was logged with)."""
    replies: list[Reply] = []
    chunks: list[str] = []
    for event in events:
        if event.type == STEP_START:
            chunks = []
        elif event.type == ASSISTANT_CHUNK:
            chunks.append(str(event.data["text"]))
        elif event.type == ASSISTANT_ERROR:
            text = "".join(chunks)
            message = str(event.data["message"])
            match = _match(event)
            replies.append(Reply(text=text, chunks=tuple(chunks), error=message, match=match))
        elif event.type == ASSISTANT_MESSAGE:
            calls = tuple(
                ScriptedToolCall(c["name"], c.get("arguments", {}), c["id"])
                for c in event.data.get("tool_calls", ())
            )
            text = str(event.data.get("content", ""))
            match = _match(event)
            replies.append(Reply(text=text, tool_calls=calls, chunks=tuple(chunks), match=match))
    return replies


def _match(event: Event) -> Mapping[str, str] | None:
    spec = event.data.get("match")
    return None if spec is None else parse_match(spec, f"event {event.seq}")


class ReplayAdapter(ScriptedAdapter):
    """A scripted adapter whose script is a recorded session's model output."""

    def __init__(self, events: Iterable[Event]) -> None:
        super().__init__(replies_from_events(events))
