"""The append-only session log: the single source of truth of a run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from headerlock.errors import CorruptLogError
from headerlock.runtime.frozen import FrozenDict, deep_freeze, thaw

logger = logging.getLogger("headerlock")

TURN_START: Final = "turn/start"
USER_MESSAGE: Final = "user/message"
STEP_START: Final = "step/start"
REQUEST_HEADER: Final = "request/header"
REQUEST_HEADER_DELTA: Final = "request/header-delta"
ASSISTANT_CHUNK: Final = "assistant/chunk"
ASSISTANT_MESSAGE: Final = "assistant/message"
ASSISTANT_ERROR: Final = "assistant/error"
TOOL_CALL: Final = "tool/call"
TOOL_RESULT: Final = "tool/result"
STEP_END: Final = "step/end"
TURN_END: Final = "turn/end"
REQUEST_MESSAGES: Final = "request/messages"
"""Logged per model request of an ``app: wire`` run: ``{turn, step, api, path, messages}``."""


@dataclass(frozen=True, slots=True)
class Event:
    """One log entry: ``type``, ``seq`` (from 1, monotonic) and frozen ``data``."""

    type: str
    seq: int
    data: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", deep_freeze(self.data))

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``{seq, type, data}``."""
        return {"seq": self.seq, "type": self.type, "data": thaw(self.data)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Event:
        """Inverse of :meth:`to_data`; checks the field types."""
        _check_event(data, None)
        return cls(data["type"], data["seq"], data.get("data", {}))


SUBSCRIBER_ERROR: Final = "session/subscriber"
"""The name ``AgentApp`` reports a raising subscriber under on ``internal/error``."""

SubscriberErrorHandler = Callable[[Event, Exception], None]
"""Told ``(event, error)`` when a subscriber raises on ``event``."""


class SessionLog:
    """Append-only list of events; ``seq`` is assigned on append.

    A subscriber that raises cannot break an append (the event is in the log
    and the other subscribers still run): its error is logged and passed to
    ``on_subscriber_error`` (``AgentApp`` reports it on ``internal/error``).
    """

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._events: list[Event] = []
        self._listeners: list[Callable[[Event], None]] = []
        self.on_subscriber_error: SubscriberErrorHandler | None = None
        for event in events:
            if event.seq != len(self._events) + 1:
                raise CorruptLogError(
                    f"expected seq {len(self._events) + 1}, got {event.seq}", seq=event.seq
                )
            self._events.append(event)

    @property
    def events(self) -> list[Event]:
        """A copy of the events, in order."""
        return list(self._events)

    def events_since(self, index: int) -> list[Event]:
        """The events after the first ``index`` ones."""
        return self._events[index:]

    def __len__(self) -> int:
        return len(self._events)

    def append(self, type: str, data: Mapping[str, Any] | None = None) -> Event:
        """Add an event and tell the subscribers; a subscriber's error is reported,
        never raised."""
        event = Event(type, len(self._events) + 1, data or {})
        self._events.append(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception as error:
                self._report(event, error)
        return event

    def _report(self, event: Event, error: Exception) -> None:
        logger.error(
            "session subscriber raised %s on %s (seq %d): %s",
            type(error).__name__,
            event.type,
            event.seq,
            error,
        )
        handler = self.on_subscriber_error
        if handler is None:
            return
        try:
            handler(event, error)
        except Exception as nested:
            logger.error("session subscriber error handler raised %r", nested)

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``listener`` with every new event; returns the unsubscribe callable."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def to_data(self) -> list[dict[str, Any]]:
        """Plain data of every event."""
        return [e.to_data() for e in self._events]

    @classmethod
    def from_data(cls, data: Iterable[Mapping[str, Any]]) -> SessionLog:
        """Inverse of :meth:`to_data`."""
        return cls(Event.from_data(d) for d in data)


def check_events_data(data: Iterable[Any]) -> None:
    """Check the shape of plain event data (as ``SessionLog.from_data`` would), cheaply."""
    for expected, event in enumerate(data, 1):
        _check_event(event, expected)


def _check_event(event: Any, expected: int | None) -> None:
    if not isinstance(event, Mapping):
        raise CorruptLogError(f"an event must be a mapping, got {type(event).__name__}")
    seq, kind, payload = event.get("seq"), event.get("type"), event.get("data", {})
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise CorruptLogError(f"event seq must be a positive integer, got {seq!r}")
    if expected is not None and seq != expected:
        raise CorruptLogError(f"expected seq {expected}, got {seq}", seq=seq)
    if not isinstance(kind, str):
        raise CorruptLogError(f"event type must be a string, got {kind!r}", seq=seq)
    if not isinstance(payload, Mapping):
        raise CorruptLogError(f"event data must be a mapping, got {payload!r}", seq=seq)
