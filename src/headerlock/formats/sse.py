"""Server-sent events: one event (its data, JSON when it parses, name and id), a stream's
text parsed into events, and the compact JSON both sides of a stream use."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from headerlock.formats.canonical_yaml import FlowMapping

SSE_MEDIA_TYPE: Final = "text/event-stream"
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


_SCAN: Final = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""What ``json.loads`` parses a value with (the same decoder settings), called directly:
a stream's events are each parsed."""


def parse_json(text: str) -> Any:
    """``text`` parsed as JSON; ``ValueError`` when it is not JSON or nests too deep."""
    if text.count("[") + text.count("{") <= JSON_MAX_DEPTH:  # it cannot nest deeper
        try:
            data, end = _SCAN(text, 0)
        except (StopIteration, ValueError):
            pass  # json.loads says why (or skips the white space around the value)
        else:
            if end == len(text):
                return data
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


def dump_json(value: Any) -> str:
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
            return f"{head}data: {dump_json(self.data)}\n\n"
        text = str(self.data)
        return head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"


class SseEvents(tuple[SseEvent, ...]):
    """The events ``parse_sse`` read, and the ``text`` they were read from (a recording's
    scrub checks that text once instead of each event's data: ``entry.scrub_response``)."""

    text: str

    def __new__(cls, events: Iterable[SseEvent], text: str) -> SseEvents:
        made = super().__new__(cls, events)
        made.text = text
        return made

    def __getnewargs__(self) -> tuple[tuple[SseEvent, ...], str]:
        return tuple(self), self.text  # copies and pickles keep the text


def parse_sse(text: str) -> SseEvents:
    """The events of an SSE stream (comments and ``retry`` dropped, data lines joined)."""
    return SseEvents(iter_sse(text), text)


def iter_sse(text: str) -> Iterator[SseEvent]:
    """``parse_sse(text)``'s events, one at a time. A blank line ends an event, so each
    block between two is read alone; one that is a single ``data: `` line (what model
    streams send) is read without splitting it into fields."""
    if "\r" in text:  # line breaks of every kind: read line by line
        yield from _events_of(text)
        return
    for block in text.split("\n\n"):
        if block.startswith("data: ") and "\n" not in block:
            yield sse_event(block[6:], None, None)
        elif block:
            yield from _events_of(block)


def _events_of(text: str) -> Iterator[SseEvent]:
    """The events of ``text`` read line by line."""
    data: list[str] = []
    name: str | None = None
    event_id: str | None = None
    for line in [*_LINE.split(text), ""]:
        if not line:
            if data:
                yield sse_event("\n".join(data), name, event_id)
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


def sse_event(text: str, name: str | None, event_id: str | None) -> SseEvent:
    """One event from its data text: JSON when it parses (and nests no deeper than
    ``JSON_MAX_DEPTH``), else the text."""
    try:
        return SseEvent(parse_json(text), True, name, event_id)
    except ValueError:
        return SseEvent(text, False, name, event_id)
