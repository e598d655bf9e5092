"""Volatile fields of live responses, normalized so a re-record does not churn.

A live endpoint answers the same request with a new response id, new tool-call and
item ids, a new ``created`` time, now and then a new ``system_fingerprint`` and, in
OpenAI's streams (Chat Completions and Responses), a random ``obfuscation`` padding
in every event.
Recorded raw, every re-record would rewrite every file. So, as request ids are
tokenized, a live recording's responses keep:

- ids (the values of ``RESPONSE_ID_KEYS`` at any depth, plain bodies and stream
  events alike) as their provider prefix plus a token numbered by first appearance
  over the whole recording: ``chatcmpl-<<id:1>>``, ``call_<<id:2>>``; one id gets one
  token everywhere (every chunk of a stream, a later response that repeats it), and
  different ids different tokens, so the requests the agent sends back tokenize alike;
- times (``TIME_KEYS``) as ``EPOCH`` (2026-01-01T00:00:00Z), the number or ISO text;
- ``system_fingerprint`` as ``<<fingerprint>>``;
- ``obfuscation`` (``OBFUSCATION_KEY``, at any depth) as ``<<obfuscation>>``;
- Bedrock's ``latencyMs`` as 0 (its stream padding ``p`` is dropped when the
  event-stream frames are decoded: ``aws_eventstream``).

Request ids in response headers are never stored (a recording keeps status, content
type and body only). Normalizing a normalized recording changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from headerlock.formats.placeholders import FINGERPRINT
from headerlock.formats.wire_recording import WireEntry, WireRecording
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import IdTokens

RESPONSE_ID_KEYS: Final = frozenset(
    {
        "id",
        "call_id",
        "item_id",
        "tool_call_id",
        "tool_use_id",
        "toolUseId",
        "response_id",
        "responseId",
    }
)
TIME_KEYS: Final = frozenset({"created", "created_at", "createTime"})
EPOCH: Final = 1_767_225_600
EPOCH_TEXT: Final = "2026-01-01T00:00:00Z"
LATENCY_KEY: Final = "latencyMs"
"""Bedrock's ``metrics.latencyMs``: stored as 0."""
OBFUSCATION_KEY: Final = "obfuscation"
OBFUSCATION: Final = "<<obfuscation>>"
"""What OpenAI's stream padding (random text of random length) is stored as."""
_PREFIX: Final = re.compile(r"^[A-Za-z]+[-_]")


class _Normalizer:
    def __init__(self) -> None:
        self.ids = IdTokens()

    def id(self, value: str) -> str:
        found = _PREFIX.match(value)
        prefix = found.group(0) if found else ""
        return prefix + self.ids.token(value[len(prefix) :])

    def data(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: self.field(k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def field(self, key: str, value: Any) -> Any:
        if key in RESPONSE_ID_KEYS and isinstance(value, str) and value:
            return self.id(value)
        if key in TIME_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            return EPOCH
        if key in TIME_KEYS and isinstance(value, str):
            return EPOCH_TEXT
        if key == "system_fingerprint" and isinstance(value, str):
            return FINGERPRINT
        if key == LATENCY_KEY and isinstance(value, int) and not isinstance(value, bool):
            return 0
        if key == OBFUSCATION_KEY and isinstance(value, str):
            return OBFUSCATION
        return self.data(value)

    def response(self, response: WireResponse) -> WireResponse:
        if response.kind == "json":
            return replace(response, body=self.data(response.body))
        if response.kind == "events":
            events = tuple(
                replace(e, data=self.data(e.data)) if e.is_json else e for e in response.body
            )
            return replace(response, body=events)
        return response


def normalize_responses(recording: WireRecording) -> WireRecording:
    """``recording`` with the volatile fields of its model responses normalized."""
    normalizer = _Normalizer()
    entries: list[WireEntry] = []
    for entry in recording.requests:
        response = entry.response
        entries.append(
            entry if response is None else replace(entry, response=normalizer.response(response))
        )
    return replace(recording, requests=tuple(entries))
