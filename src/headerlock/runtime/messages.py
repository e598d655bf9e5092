"""Conversation messages as the loop builds them, and their rebuild from the log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from headerlock.runtime.frozen import thaw
from headerlock.runtime.session import ASSISTANT_MESSAGE, TOOL_RESULT, USER_MESSAGE, Event


def user_message(content: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": content}


def assistant_message(content: str, tool_calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An assistant message; ``tool_calls`` is omitted when empty."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [thaw(c) for c in tool_calls]
    return message


def tool_message(call_id: str, name: str, content: str) -> dict[str, Any]:
    """A tool result message."""
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def messages_from_events(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Rebuild the conversation from ``user/message``, ``assistant/message`` and ``tool/result``."""
    messages: list[dict[str, Any]] = []
    for event in events:
        data = event.data
        if event.type == USER_MESSAGE:
            messages.append(user_message(data["content"]))
        elif event.type == ASSISTANT_MESSAGE:
            messages.append(assistant_message(data.get("content", ""), data.get("tool_calls", ())))
        elif event.type == TOOL_RESULT:
            messages.append(tool_message(data["id"], data["name"], data["content"]))
    return messages
