"""Volatile fields of live responses, normalized so a re-record does not churn.

A live endpoint answers the same request with a new response id, new tool-call and
item ids, a new creation time, now and then a new fingerprint, a latency, or a random
padding in every event of a stream. Recorded raw, every re-record would rewrite every
file. So, as request ids are tokenized, a live recording's responses keep (by the keys
each API's module declares: ``WireVocabulary`` in ``formats.wire_vocabulary``):

- ids (the values of ``response_ids`` keys at any depth, plain bodies and stream
  events alike) as their provider prefix plus a token numbered by first appearance
  over the whole recording: ``chatcmpl-<<id:1>>``, ``call_<<id:2>>``; one id gets one
  token everywhere (every chunk of a stream, a later response that repeats it), and
  different ids different tokens, so the requests the agent sends back tokenize alike;
- times (``times`` keys) as ``EPOCH`` (2026-01-01T00:00:00Z), the number or ISO text;
- each ``fixed`` key (a fingerprint, a stream's padding, a latency) as its declared
  value, when it has that value's type (a stream padding the framing carries outside the
  events is dropped when its frames are decoded: ``aws_eventstream``).

Request ids in response headers are never stored (a recording keeps status, content
type and body only). Normalizing a normalized recording changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from headerlock.formats.wire_recording import WireEntry, WireRecording
from headerlock.formats.wire_response import SseEvent, WireResponse
from headerlock.formats.wire_scrub import IdTokens
from headerlock.formats.wire_vocabulary import WireVocabulary, vocabulary

EPOCH: Final = 1_767_225_600
EPOCH_TEXT: Final = "2026-01-01T00:00:00Z"
_PREFIX: Final = re.compile(r"^[A-Za-z]+[-_]")


_SCALARS: Final = frozenset((str, int, float, bool, type(None)))
"""The types of JSON's scalars: ``data`` gives them back as they are."""


class _Normalizer:
    def __init__(self, words: WireVocabulary) -> None:
        self.ids = IdTokens()
        self.id_keys = words.response_ids
        self.times = words.times
        self.fixed = dict(words.fixed)
        self.keys = frozenset((*self.id_keys, *self.times, *self.fixed))
        """Every key whose value ``field`` may replace."""

    def id(self, value: str) -> str:
        found = _PREFIX.match(value)
        prefix = found.group(0) if found else ""
        return prefix + self.ids.token(value[len(prefix) :])

    def data(self, value: Any) -> Any:
        kind = type(value)
        if kind is dict or kind is list:  # parsed JSON: a copy only where a value changes
            return self._parsed(value)
        if isinstance(value, Mapping):
            return {k: self.field(k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def _parsed(self, value: dict[str, Any] | list[Any]) -> Any:
        """``data(value)`` for a dict or list: equal to the copy ``data`` makes, in the same
        order (ids are numbered as they come), sharing every part that has nothing to
        normalize (a stream's events are mostly such parts)."""
        if type(value) is list:
            items: list[Any] | None = None
            for n, item in enumerate(value):
                if type(item) not in _SCALARS:
                    new = self.data(item)
                    if new is not item:
                        items = list(value) if items is None else items
                        items[n] = new
            return value if items is None else items
        assert isinstance(value, dict)
        changed: dict[str, Any] | None = None
        keys = self.keys
        for key, item in value.items():
            if key in keys:
                new = self.field(key, item)
            elif type(item) not in _SCALARS:
                new = self.data(item)
            else:
                continue
            if new is not item:
                changed = {} if changed is None else changed
                changed[key] = new
        return value if changed is None else {**value, **changed}

    def field(self, key: str, value: Any) -> Any:
        if key in self.id_keys and isinstance(value, str) and value:
            return self.id(value)
        if key in self.times and isinstance(value, (int, float)) and not isinstance(value, bool):
            return EPOCH
        if key in self.times and isinstance(value, str):
            return EPOCH_TEXT
        if key in self.fixed:
            fixed = self.fixed[key]
            if isinstance(value, type(fixed)) and not isinstance(value, bool):
                return fixed
        return self.data(value)

    def response(self, response: WireResponse) -> WireResponse:
        if response.kind == "json":
            return replace(response, body=self.data(response.body))
        if response.kind == "events":
            events = tuple(self._event(e) for e in response.body)
            return replace(response, body=events)
        return response

    def _event(self, event: SseEvent) -> SseEvent:
        if not event.is_json:
            return event
        data = self.data(event.data)
        return event if data is event.data else SseEvent(data, True, event.event, event.id)


def normalize_responses(recording: WireRecording) -> WireRecording:
    """``recording`` with the volatile fields of its model responses normalized."""
    normalizer = _Normalizer(vocabulary())
    entries: list[WireEntry] = []
    for entry in recording.requests:
        response = entry.response
        entries.append(
            entry if response is None else replace(entry, response=normalizer.response(response))
        )
    return replace(recording, requests=tuple(entries))
