"""An assistant turn as the model emitted it (the recorded response) and as the agent
sent it back (a message of the next request): its text and its tool calls.

Read generically with the API's ``CacheRules.arguments`` key: a tool call is a mapping
with a ``name`` and that key (OpenAI's ``arguments`` string, Anthropic's ``input`` and
Gemini's ``args`` objects). A stream is read event by event: a fragment of arguments
without a name extends the last call (OpenAI chat deltas, Anthropic's
``stream_arguments``); a call that starts with a name and its ``stream_call_id`` but no
arguments (Bedrock's ``contentBlockStart``) takes its text fragments as pieces of JSON,
joined and parsed as Anthropic's are; a stream that ends with the whole response (the
Responses API's ``response.completed``) is read from it alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from headerlock.formats.wire_response import WireResponse
from headerlock.testing.wire.apis.cache_rules import CacheRules

_TEXT_KEYS: Final = ("text", "content")
_COMPLETED: Final = "response.completed"


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: its name and arguments (a string as emitted, or an object)."""

    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class Turn:
    """An assistant turn: its text (concatenated) and its tool calls, in order."""

    text: str
    calls: tuple[Call, ...]

    def answers(self, sent: Turn) -> bool:
        """Whether ``sent`` is this turn sent back (its text and call names)."""
        text = sent.text.strip()
        if text and text not in self.text:
            return False
        names = [c.name for c in self.calls]
        return all(call.name in names for call in sent.calls)


class _Reader:
    def __init__(self, rules: CacheRules, *, canonical: bool = False) -> None:
        self.canonical = canonical
        self.key = rules.arguments
        self.delta = rules.stream_arguments
        self.start_id = rules.stream_call_id
        self.texts: list[str] = []
        self.calls: list[Call] = []
        self.pieces: dict[int, list[str]] = {}

    def walk(self, value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                self.walk(item)
            return
        if not isinstance(value, Mapping):
            return
        name = value.get("name")
        if self.key and self.key in value:
            if isinstance(name, str):
                self.calls.append(Call(name, value[self.key]))
                return
            fragment = value[self.key]
            if self.calls and isinstance(fragment, str):
                last = self.calls[-1]
                if isinstance(last.arguments, str):
                    self.calls[-1] = replace(last, arguments=last.arguments + fragment)
                elif last.arguments is None:  # its arguments stream in after its start
                    self.pieces.setdefault(len(self.calls) - 1, []).append(fragment)
                return
        if self.start_id and self.start_id in value and isinstance(name, str):  # args follow
            self.calls.append(Call(name, None))
            return
        piece = value.get(self.delta) if self.delta else None
        if isinstance(piece, str) and self.calls:
            self.pieces.setdefault(len(self.calls) - 1, []).append(piece)
            return
        for key, item in value.items():
            if key in _TEXT_KEYS and isinstance(item, str):
                self.texts.append(item)
            else:
                self.walk(item)

    def turn(self) -> Turn:
        calls = list(self.calls)
        for at, pieces in sorted(self.pieces.items()):
            text = "".join(pieces)
            if not text.strip():
                continue  # nothing streamed: the arguments its start carried, if any
            try:
                parsed = json.loads(text)
                if self.canonical:  # as a recording keeps the messages sent back: keys sorted
                    parsed = json.loads(json.dumps(parsed, sort_keys=True))
                calls[at] = replace(calls[at], arguments=parsed)
            except ValueError:
                calls[at] = replace(calls[at], arguments=text)
        calls = [replace(c, arguments={}) if c.arguments is None else c for c in calls]
        return Turn("".join(self.texts), tuple(calls))


def sent_turn(rules: CacheRules, messages: Sequence[Any]) -> Turn:
    """The turn the given messages (an assistant turn as sent) carry."""
    reader = _Reader(rules)
    reader.walk(list(messages))
    return reader.turn()


def response_turn(
    rules: CacheRules, response: WireResponse | None, *, canonical: bool = False
) -> Turn | None:
    """The turn a recorded response carries (``None``: no readable body); ``canonical``:
    read from a recording, whose messages keep their data with keys sorted, so arguments
    parsed from a stream's pieces are compared with their keys sorted too."""
    if response is None:
        return None
    if response.kind == "json":
        objects: list[Any] = [response.body]
    elif response.kind == "events":
        objects = [event.data for event in response.body if event.is_json]
        done = [
            o["response"]
            for o in objects
            if isinstance(o, Mapping) and o.get("type") == _COMPLETED and "response" in o
        ]
        objects = done[-1:] or objects
    else:
        return None
    reader = _Reader(rules, canonical=canonical)
    for item in objects:
        reader.walk(item)
    return reader.turn()


def _bytes(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def reserialized(emitted: Turn, sent: Turn) -> tuple[int, Call, str] | None:
    """The first tool call sent back in other bytes than emitted: its index, the sent
    call and the change in words (``None``: every call as emitted)."""
    for index, (made, back) in enumerate(zip(emitted.calls, sent.calls, strict=False)):
        if made.name != back.name:
            return None
        before, after = _bytes(made.arguments), _bytes(back.arguments)
        if before == after:
            continue
        try:
            same = json.loads(before) == json.loads(after)
        except ValueError:
            same = False
        how = "the same data in other bytes" if same else "other arguments"
        return index, back, f"{how}: {_short(before)} -> {_short(after)}"
    return None


def _short(text: str) -> str:
    return text if len(text) <= 60 else f"{text[:57]}..."
