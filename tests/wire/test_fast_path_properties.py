"""Each fast path equals its slow path on generated recordings and requests (issue 26
item 7): ``canonical_load`` the strict loader, ``memo`` a fresh ``build_entry``,
``request_key`` built around memoized message texts ``canonical_json`` of the whole, and
a stream served from its text (format 2) the stream rendered from its events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headerlock.errors import HeaderlockError
from headerlock.formats import aws_eventstream, canonical_load
from headerlock.formats.canonical_load import load_repeating
from headerlock.formats.canonical_yaml import dump
from headerlock.formats.stream_text import stream_text
from headerlock.formats.strict_yaml import loads
from headerlock.formats.wire_recording import (
    WIRE_MAX_DEPTH,
    WireEntry,
    WirePrefix,
    parse_wire_recording,
)
from headerlock.formats.wire_response import SSE_MEDIA_TYPE, SseEvent, WireResponse, parse_sse
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.runtime.canonical import canonical_json
from headerlock.testing.wire.apis import split_body
from headerlock.testing.wire.entry import build_entry
from headerlock.testing.wire.matching import request_key
from headerlock.testing.wire.memo import MessageMemo

SECRET = "sk-secret-0123456789"
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_CHAR = st.characters(exclude_categories=["Cs"])
TEXT = st.text(_CHAR, max_size=12) | st.sampled_from(
    ["", "- a", "a: b", "x\ny\n", "  lead", "trail ", "null", "017", SECRET, "call_7", "\t#"]
)
SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
KEY = TEXT | st.sampled_from(["messages", "message", "messages2", "Messages", "model", "m"])


@st.composite
def sessions(draw: st.DrawFn) -> list[list[Any]]:
    """The messages of a growing session's requests (each repeats the ones before), and
    now and then one that edits an earlier message."""
    messages = draw(st.lists(JSON, min_size=1, max_size=6))
    cuts = sorted(draw(st.lists(st.integers(0, len(messages)), min_size=1, max_size=4)))
    requests = [messages[:cut] for cut in cuts]
    if draw(st.booleans()) and messages:
        edited = list(messages)
        edited[draw(st.integers(0, len(messages) - 1))] = draw(JSON)
        requests.append(edited)
    return requests


def _recording(requests: list[list[Any]], config: dict[str, Any], stream: bool) -> Any:
    answer: dict[str, Any] = {"content_type": None, "status": 200, "json": {"n": 1}}
    if stream:
        del answer["json"]
        answer["stream"] = 'event: a data: {"x":1}\ndata: [DONE]\n'
    entry: dict[str, Any] = {
        "api": "openai.chat",
        "config": config,
        "path": "/v1/chat/completions",
        "response": answer,
        "system": None,
        "tool_names": [],
        "tools": None,
    }
    return {
        "kind": "wire",
        "version": 2,
        "pinned": False,
        "requests": [{**entry, "messages": messages} for messages in requests],
    }


@pytest.fixture(autouse=True)
def _any_length(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical_load, "MIN_CHARS", 0)  # the shortcut on short texts too
    monkeypatch.setattr(canonical_load, "MIN_ITEMS", 0)


@PROPERTY
@given(sessions(), st.dictionaries(KEY, JSON, max_size=3), st.booleans())
def test_canonical_load_is_the_strict_loader_on_a_written_recording(
    requests: list[list[Any]], config: dict[str, Any], stream: bool
) -> None:
    text = dump(_recording(requests, config, stream))
    fast = load_repeating(text, max_depth=WIRE_MAX_DEPTH)
    assert fast is not None  # the shortcut ran: something was compared
    assert fast == loads(text, max_depth=WIRE_MAX_DEPTH)
    assert json.dumps(fast, sort_keys=True) == json.dumps(loads(text), sort_keys=True)


@PROPERTY
@given(sessions(), st.data())
def test_canonical_load_of_an_edited_text_is_the_strict_loaders_or_none(
    requests: list[list[Any]], data: st.DataObject
) -> None:
    text = dump(_recording(requests, {"model": "m"}, True))
    at = data.draw(st.integers(0, len(text)))
    cut = data.draw(st.integers(0, 3))
    edited = (
        text[:at]
        + data.draw(st.sampled_from(["", " ", "\n", "- ", "a: 1\n", "  "]))
        + (text[at + cut :])
    )
    fast = load_repeating(edited, max_depth=WIRE_MAX_DEPTH)
    try:
        strict = loads(edited, max_depth=WIRE_MAX_DEPTH)
    except HeaderlockError:
        assert fast is None
        return
    assert fast is None or fast == strict


def _message(draw: st.DrawFn, n: int) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    message: dict[str, Any] = {"role": role, "content": draw(TEXT | JSON)}
    if role == "assistant" and draw(st.booleans()):
        call = f"call_{draw(st.sampled_from(['a1', 'b2', 'c3']))}"
        message["tool_calls"] = [{"id": call, "type": "function", "function": {"name": "f"}}]
    if role == "tool":
        message["tool_call_id"] = f"call_{draw(st.sampled_from(['a1', 'b2', str(n)]))}"
    return message


@st.composite
def chat_requests(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    """The bodies of a growing chat session (some indented, one with its own config)."""
    messages = [_message(draw, n) for n in range(draw(st.integers(1, 6)))]
    if draw(st.booleans()):
        messages.insert(0, {"role": "system", "content": "be brief"})
    bodies = []
    for cut in sorted(draw(st.lists(st.integers(1, len(messages)), min_size=1, max_size=4))):
        body = {"model": "m", "messages": messages[:cut], "tools": [{"type": "function"}]}
        indent = draw(st.sampled_from([None, 1]))
        bodies.append(("openai.chat", json.dumps(body, indent=indent).encode()))
    turns = [{"role": "user", "content": [{"type": "text", "text": draw(TEXT)}]}]
    bodies.append(("anthropic.messages", json.dumps({"messages": turns, "model": "c"}).encode()))
    return bodies


@PROPERTY
@given(chat_requests(), st.booleans())
def test_the_memo_builds_the_entry_and_key_a_fresh_build_entry_does(
    bodies: list[tuple[str, bytes]], pinned: bool
) -> None:
    memo = MessageMemo()
    scrubber = Scrubber.of([SECRET])
    for api, body in [*bodies, *bodies]:  # again: every message then comes from the memo
        split = split_body(api, body)
        fresh = build_entry(split, "/v1/x", pinned=pinned, scrubber=scrubber, ids=IdTokens())
        entry, key = memo.entry(split, body, "/v1/x", pinned=pinned, scrubber=scrubber)
        assert entry == fresh
        assert key == request_key(fresh) == canonical_json(fresh.request_data())
        assert SECRET not in key


@PROPERTY
@given(
    st.dictionaries(KEY, JSON, max_size=4),
    st.lists(JSON, max_size=4) | TEXT,
    st.lists(TEXT, max_size=3),
    st.sampled_from(["header", "pinned", "neither"]),
)
def test_request_key_around_message_texts_is_canonical_json_of_the_whole(
    config: dict[str, Any], messages: Any, names: list[str], form: str
) -> None:
    pinned = form == "pinned"
    entry = WireEntry(
        api="openai.chat",
        path="/v1/chat/completions",
        config=config,
        system=None,
        tools=None,
        tool_names=tuple(sorted(names)),
        prefix_sha256="0" * 64 if pinned else None,
        messages=messages,
        prefix=WirePrefix(json.dumps(names), '"be brief"') if pinned else None,
        header="0123456789ab" if form == "header" else None,
    )
    texts = [canonical_json(m) for m in messages] if isinstance(messages, list) else None
    assert request_key(entry, texts) == canonical_json(entry.request_data())


def _not_json(text: str) -> bool:
    """Whether ``text`` is no JSON (an SSE event whose data parses is a JSON event)."""
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, tuple[SseEvent, ...]]:
    """A content type and the events of a stream (AWS frames: named, JSON objects)."""
    aws = draw(st.booleans())
    name = st.sampled_from(["message_start", "contentBlockDelta", "a b", "", "exception:Oops"])
    events = []
    for _ in range(draw(st.integers(0, 5))):
        data: Any
        if aws:
            data = draw(st.dictionaries(TEXT, JSON, max_size=3))
            frame = draw(name.filter(lambda n: bool(n) and " " not in n))
            events.append(SseEvent(data, True, frame))
            continue
        is_json = draw(st.booleans())
        data = draw(JSON) if is_json else draw(TEXT.filter(_not_json))
        event_id = draw(st.none() | st.sampled_from(["7", "", "a b"]))
        events.append(SseEvent(data, is_json, draw(st.none() | name), event_id))
    return ("application/vnd.amazon.eventstream" if aws else SSE_MEDIA_TYPE), tuple(events)


@PROPERTY
@given(streams())
def test_a_stream_served_from_its_text_is_the_stream_served_from_its_events(
    stream: tuple[str, tuple[SseEvent, ...]],
) -> None:
    content_type, events = stream
    recorded = WireResponse(200, content_type, "events", events)
    text = dump({"kind": "wire", "version": 2, "pinned": False, "requests": [], "http": [
        {"method": "GET", "path": "/s", "query": "", "response": recorded.to_data()}]})  # fmt: skip
    if events and stream_text(events) is not None:  # one event per line, in a literal block
        assert "    stream: |" in text
    loaded = parse_wire_recording(text, path="r.yaml").http[0].response
    assert loaded is not None
    served, expected = loaded.to_http()[2], recorded.to_http()[2]
    if content_type == SSE_MEDIA_TYPE:
        assert parse_sse(served.decode()) == parse_sse(expected.decode())
    else:
        assert aws_eventstream.decode(served) == aws_eventstream.decode(expected)
    assert list(loaded.body) == list(recorded.body)
