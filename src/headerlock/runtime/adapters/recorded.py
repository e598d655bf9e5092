"""Replay: rebuild the model's output from recorded ``assistant/*`` events."""

from __future__ import annotations

from collections.abc import Iterable

from headerlock.runtime.adapters.scripted import Reply, ScriptedAdapter, ScriptedToolCall
from headerlock.runtime.session import (
    ASSISTANT_CHUNK,
    ASSISTANT_ERROR,
    ASSISTANT_MESSAGE,
    STEP_START,
    Event,
)


def replies_from_events(events: Iterable[Event]) -> list[Reply]:
    """One reply per step that reached the model, in log order."""
    replies: list[Reply] = []
    chunks: list[str] = []
    for event in events:
        if event.type == STEP_START:
            chunks = []
        elif event.type == ASSISTANT_CHUNK:
            chunks.append(str(event.data["text"]))
        elif event.type == ASSISTANT_ERROR:
            text = "".join(chunks)
            replies.append(Reply(text=text, chunks=tuple(chunks), error=str(event.data["message"])))
        elif event.type == ASSISTANT_MESSAGE:
            calls = tuple(
                ScriptedToolCall(c["name"], c.get("arguments", {}), c["id"])
                for c in event.data.get("tool_calls", ())
            )
            replies.append(
                Reply(
                    text=str(event.data.get("content", "")), tool_calls=calls, chunks=tuple(chunks)
                )
            )
    return replies


class ReplayAdapter(ScriptedAdapter):
    """A scripted adapter whose script is a recorded session's model output."""

    def __init__(self, events: Iterable[Event]) -> None:
        super().__init__(replies_from_events(events))
