"""A stream's events as text, one event per line (wire format version 2).

A recording keeps a streamed answer (server-sent events, or AWS's binary
event-stream frames decoded: ``aws_eventstream``) as the text of its events, one
line each, so a diff of a changed event is one line and a replay serves the text
without parsing or encoding an event::

    [event: <name> ][id: <id> ]data: <data>

(``data:`` alone when the data is empty). ``<name>`` and ``<id>`` hold no white space;
``<data>`` is the event's data on one line: compact JSON with sorted keys (characters
YAML cannot keep in a literal block escaped as JSON ``\\u`` escapes of four hex
digits, the same JSON) or, when it is not JSON, its text. The text is written once,
at record time, from the events already scrubbed and id-tokenized; a stream
with an event that has no such line (a multi-line text event, a name with a space)
is kept as a list of ``events`` instead. Serving SSE rewrites the whole text at once
(``sse_text``); the binary framing frames each line's data as it stands
(``aws_frames``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from json import encoder as json_encoder
from typing import Final

from headerlock.formats import aws_eventstream
from headerlock.formats.sse import SseEvent, sse_event

_TOKEN: Final = re.compile(r"\S+")
_LINE: Final = re.compile(r"(?:event: (\S+) )?(?:id: (\S+) )?data:(?: (.*))?")
LINES: Final = re.compile(r"(?:(?:event: \S+ )?(?:id: \S+ )?data:(?: [^\n]*)?\n)*")
"""A whole stream text: every line an event's (checked in one match on load)."""
_UNSAFE_TEXT: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]|[ ]$"
)
"""What a text event's line cannot hold: a line break, a character YAML's literal block
cannot keep, a trailing space."""
_ESCAPED: Final = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
"""Characters compact JSON keeps as they are that a literal block cannot: escaped."""
_EVENT_FIELD: Final = re.compile(r"^(event: \S+) (?=(?:id: \S+ )?data:)", re.MULTILINE)
_ID_FIELD: Final = re.compile(r"^(id: \S+) (?=data:)", re.MULTILINE)
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _joined(encoder: Callable[[object, int], Sequence[str]], value: object) -> str:
    return "".join(encoder(value, 0))


def json_line(value: object) -> str:
    """``value`` as compact JSON on one line that a YAML literal block keeps exactly."""
    return _ESCAPED.sub(lambda m: f"\\u{ord(m[0]):04x}", _ENCODER.encode(value))


def event_line(event: SseEvent) -> str | None:
    """The line of one event (``None``: it has none, see the module docstring)."""
    head = ""
    if event.event is not None:
        if not _TOKEN.fullmatch(event.event):
            return None
        head = f"event: {event.event} "
    if event.id is not None:
        if not _TOKEN.fullmatch(event.id):
            return None
        head += f"id: {event.id} "
    if event.is_json:
        return f"{head}data: {json_line(event.data)}"
    text = str(event.data)
    if _UNSAFE_TEXT.search(text):
        return None
    return f"{head}data: {text}" if text else f"{head}data:"


_C_ENCODER: Final = getattr(json_encoder, "c_make_encoder", None)
_WRITE: Final = (
    _ENCODER.encode
    if _C_ENCODER is None
    else partial(
        _joined,
        _C_ENCODER(None, _ENCODER.default, json_encoder.encode_basestring, None, ":", ",",
                   True, False, True),
    )
)  # fmt: skip
"""``_ENCODER.encode``, by the C encoder it makes on each call, made once (no check for
circular data: a stream's events are parsed JSON)."""


def stream_text(events: Iterable[SseEvent]) -> str | None:
    """The text of a whole stream (``None`` when an event has no line): ``event_line`` of
    each event, the JSON of those with neither name nor id written in one go and
    escaped (``json_line``) over the whole text at once."""
    lines: list[str] = []
    write, events = _WRITE, tuple(events)
    for event in events:
        if event.is_json and event.event is None and event.id is None:
            lines.append(f"data: {write(event.data)}\n")
            continue
        line = event_line(event)
        if line is None:
            return None
        lines.append(line + "\n")
    text = "".join(lines)
    if _ESCAPED.search(text) is None:
        return text
    return "".join(f"{event_line(event)}\n" for event in events)  # escaped line by line


def bad_line(text: str) -> int | None:
    """The number (from 1) of the first line of ``text`` that is not an event's, or
    ``None`` when all are (a text that does not end with a line break: its last line)."""
    if LINES.fullmatch(text):
        return None
    lines = text.split("\n")
    for number, line in enumerate(lines[:-1], start=1):
        if not _LINE.fullmatch(line):
            return number
    return len(lines)


@dataclass(frozen=True, slots=True)
class EventLines:
    """A stream kept as its text (one event per line); iterating parses the events
    (the cache report reads them), serving does not."""

    text: str

    def __iter__(self) -> Iterator[SseEvent]:
        for line in self.text.split("\n"):
            found = _LINE.fullmatch(line)
            if found is not None:
                yield sse_event(found[3] or "", found[1], found[2])

    def __len__(self) -> int:
        return self.text.count("\n")

    def sse_text(self) -> str:
        """The stream as server-sent events: each line's fields on lines of their own,
        a blank line after each event (the whole text rewritten at once)."""
        text = self.text.replace("\n", "\n\n")
        if "event: " in text:
            text = _EVENT_FIELD.sub(r"\1\n", text)
        if "id: " in text:
            text = _ID_FIELD.sub(r"\1\n", text)
        return text

    def aws_frames(self) -> bytes:
        """The stream as AWS event-stream frames: each line's JSON data framed as it
        stands (a ``chunk``'s wrapped in ``bytes``)."""
        pieces: list[bytes] = []
        for line in self.text.split("\n"):
            found = _LINE.fullmatch(line)
            if found is not None:
                pieces.append(aws_eventstream.frame_text(found[1] or "", found[3] or ""))
        return b"".join(pieces)
