"""Recording a stream: the faster path writes the bytes the plain one wrote (issue 31).

A stream's events are scrubbed by one search of its text when nothing in it is a
secret, normalized sharing what has nothing to normalize, and written in one go; each
property compares with the plain path (each event's data scrubbed, copied, written)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings, strategies as st

from headerlock.formats.sse import SseEvent, SseEvents, parse_sse
from headerlock.formats.stream_text import event_line, stream_text
from headerlock.formats.wire_response import WireResponse
from headerlock.formats.wire_scrub import Scrubber
from headerlock.formats.wire_vocabulary import vocabulary
from headerlock.formats.wire_volatile import _Normalizer
from headerlock.testing.wire.entry import scrub_response

SECRET = "sk-live-secret/0123456789"
_words = st.sampled_from(
    [
        "w",
        "id",
        "created",
        SECRET,
        f"x{SECRET}y",
        "a\nb",
        'q"',
        "é\u2028",
        "AKIAABCDEFGHIJKLMNOP",
        "",
    ]
)
_values = st.recursive(
    st.none() | st.integers(-5, 5) | st.floats(allow_nan=False) | _words,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_words, inner, max_size=3),
    max_leaves=8,
)
_data = st.dictionaries(_words | st.sampled_from(["id", "created", "system_fingerprint"]), _values)


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    """The text of an SSE stream as a server sends it (escaped its own way)."""
    parts = []
    for data in draw(st.lists(_data | st.sampled_from(["[DONE]", "plain text"]), max_size=5)):
        if isinstance(data, str):
            parts.append(f"data: {data}\n\n")
            continue
        text = json.dumps(data, ensure_ascii=draw(st.booleans()))
        name = draw(st.none() | st.sampled_from(["delta", "done"]))
        parts.append(("" if name is None else f"event: {name}\n") + f"data: {text}\n\n")
    return "".join(parts).encode()


def _plain_scrub(response: WireResponse, scrubber: Scrubber) -> WireResponse:
    events = tuple(parse_sse(response.body.text))  # a plain tuple: every event scrubbed
    return scrub_response(
        WireResponse(response.status, response.content_type, "events", events), scrubber
    )


class _Copying(_Normalizer):
    """The normalizer as it was: every mapping and list copied."""

    def data(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: self.field(k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


@settings(max_examples=400, deadline=None)
@given(_streams(), st.booleans())
def test_a_recorded_stream_is_what_the_plain_path_records(body: bytes, known: bool) -> None:
    scrubber = Scrubber.of([SECRET] if known else [])
    response = WireResponse.from_http(200, "text/event-stream", body)
    assert isinstance(response.body, SseEvents)
    fast, plain = scrub_response(response, scrubber), _plain_scrub(response, scrubber)
    assert fast == plain
    normalized = _Normalizer(vocabulary()).response(fast)
    assert normalized == _Copying(vocabulary()).response(plain)
    assert stream_text(normalized.body) == _lines(_Copying(vocabulary()).response(plain).body)
    if known:
        assert SECRET not in json.dumps(normalized.to_data(), ensure_ascii=False)


def _lines(events: Any) -> str | None:
    lines = [event_line(e) for e in events]
    return None if None in lines else "".join(f"{line}\n" for line in lines)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.builds(
            SseEvent,
            _data | _words,
            st.booleans(),
            st.none() | st.sampled_from(["delta", "a\x7fb", "two words"]),
            st.none() | st.sampled_from(["7", "\ufeff1"]),
        ),
        max_size=6,
    )
)
def test_a_stream_is_written_as_each_event_line_says(events: list[SseEvent]) -> None:
    events = [
        e if e.is_json or isinstance(e.data, str) else SseEvent(e.data, True, e.event, e.id)
        for e in events
    ]
    assert stream_text(events) == _lines(events)


def test_a_secret_escaped_by_the_server_is_still_found() -> None:
    """A server that escapes every character hides no secret from the one-search scrub."""
    escaped = "".join(f"\\u{ord(c):04x}" for c in SECRET)
    body = f'data: {{"text":"{escaped}"}}\n\n'.encode()
    response = WireResponse.from_http(200, "text/event-stream", body)
    scrubbed = scrub_response(response, Scrubber.of([SECRET]))
    assert [e.data for e in scrubbed.body] == [{"text": "<<secret>>"}]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "data: ",
                "data:",
                'data: {"a":1}',
                "event: x",
                "id: 7",
                ": comment",
                "",
                "\n",
                "\r\n",
                "\r",
                "data: two\nwords",
                "retry: 5",
                "data: [DONE]",
                " data: x",
                "data",
            ]
        ),
        max_size=12,
    ).map("\n".join)
)
def test_a_stream_is_read_as_line_by_line(text: str) -> None:
    from headerlock.formats.sse import _events_of

    assert parse_sse(text) == tuple(_events_of(text))
