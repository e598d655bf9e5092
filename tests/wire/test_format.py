"""Wire recordings on disk, the header split per api, scrubbing and the comparison."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from headerlock.errors import WireRecordingError
from headerlock.formats.placeholders import SECRET
from headerlock.formats.secrets import header_secrets
from headerlock.formats.wire_recording import (
    WireEntry,
    WireRecording,
    load_wire_recording,
    parse_wire_recording,
)
from headerlock.formats.wire_response import WireResponse, parse_sse
from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.testing.wire.apis import detect_api, split_body
from headerlock.testing.wire.compare import entry_differences
from headerlock.testing.wire.entry import build_entry

# -- api detection and the split ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "api"),
    [
        ("POST", "/v1/chat/completions", "openai.chat"),
        ("POST", "/openai/deployments/x/chat/completions", "openai.chat"),
        ("POST", "/v1/responses", "openai.responses"),
        ("POST", "/v1/messages", "anthropic.messages"),
        ("POST", "/v1/messages/", "anthropic.messages"),
        ("GET", "/v1/responses", None),
        ("POST", "/v1/messages/count_tokens", None),
        ("POST", "/v1/embeddings", None),
    ],
)
def test_detect_api(method: str, path: str, api: str | None) -> None:
    assert detect_api(method, path) == api


CHAT = (
    b'{ "model" : "m",\n "tools" : [ {"type":"function","function":{"name":"b\\"q",'
    b'"parameters":{"type":"object"}}} , {"type":"function","function":{"name":"a"}} ],'
    b' "messages": [ {"role":"system","content":"S1 \\u00e9 \xc3\xa9 ]}"},'
    b' {"role": "developer", "content": "S2"}, {"role":"user","content":"hi"} ],'
    b' "user": "u-1", "metadata": {"user_id": "u-2", "team": "t"},'
    b' "stream_options": {"include_usage": true, "session_id": "s"} }'
)


def test_chat_split_cuts_the_prefix_bytes_out_of_the_body() -> None:
    split = split_body("openai.chat", CHAT)
    assert split.tools_raw == CHAT[CHAT.index(b"[ {") : CHAT.index(b' ], "messages"') + 2]
    start = CHAT.index(b'{"role":"system"')
    assert split.system_raw == CHAT[start : CHAT.index(b', {"role":"user"')]
    assert split.prefix_sha256 == hashlib.sha256(split.tools_raw + split.system_raw).hexdigest()
    assert [m["role"] for m in split.system] == ["system", "developer"]
    assert split.messages == [{"role": "user", "content": "hi"}]
    assert split.tool_names == ['b"q', "a"]
    assert split.config == {
        "model": "m",
        "metadata": {"team": "t"},
        "stream_options": {"include_usage": True},
    }


def test_responses_and_anthropic_splits() -> None:
    body = b'{"model":"m","instructions":"Be brief.","input":"hi","tools":[{"type":"web_search"}]}'
    split = split_body("openai.responses", body)
    assert (split.system, split.messages, split.tool_names) == ("Be brief.", "hi", ["web_search"])
    assert split.system_raw == b'"Be brief."' and split.config == {"model": "m"}
    blocks = b'[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]'
    body = b'{"system":' + blocks + b',"messages":[],"model":"c","max_tokens":9}'
    split = split_body("anthropic.messages", body)
    assert split.system_raw == blocks and split.tools_raw == b"" and split.tools is None
    assert split.config == {"model": "c", "max_tokens": 9}


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        split_body("openai.chat", b"[1, 2]")


# -- scrubbing ---------------------------------------------------------------------------


def test_scrubber_replaces_longest_secret_first_and_ignores_short_values() -> None:
    secrets = header_secrets([("Authorization", "Bearer sk-abcdef"), ("x-api-key", "key")])
    scrubber = Scrubber.of(secrets)
    assert scrubber.secrets == ("Bearer sk-abcdef", "sk-abcdef")  # "key" is too short
    assert scrubber.text("a Bearer sk-abcdef b sk-abcdef") == f"a {SECRET} b {SECRET}"
    assert scrubber.data({"k": ["sk-abcdef", 3]}) == {"k": [SECRET, 3]}


def test_ids_are_numbered_by_first_appearance() -> None:
    ids = IdTokens()
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "call_x"}, {"id": "call_y"}]},
        {"role": "tool", "tool_call_id": "call_y"},
        {"type": "tool_result", "tool_use_id": "call_x", "content": "id: 7"},
    ]
    assert ids.messages(messages) == [
        {"role": "assistant", "tool_calls": [{"id": "<<id:1>>"}, {"id": "<<id:2>>"}]},
        {"role": "tool", "tool_call_id": "<<id:2>>"},
        {"type": "tool_result", "tool_use_id": "<<id:1>>", "content": "id: 7"},
    ]
    assert ids.config({"previous_response_id": "resp_9", "model": "m"}) == {
        "previous_response_id": "<<id:3>>",
        "model": "m",
    }


# -- SSE and responses -------------------------------------------------------------------


def test_sse_parse_and_render() -> None:
    text = (
        ': keep-alive\r\nevent: message_start\r\nid: 7\r\ndata: {"a": 1}\r\n\r\n'
        "data: line one\ndata: line two\n\nretry: 5\n\ndata: [DONE]\n\n"
    )
    events = parse_sse(text)
    assert [(e.event, e.id, e.data, e.is_json) for e in events] == [
        ("message_start", "7", {"a": 1}, True),
        (None, None, "line one\nline two", False),
        (None, None, "[DONE]", False),
    ]
    rendered = "".join(e.render() for e in events)
    assert rendered == (
        'event: message_start\nid: 7\ndata: {"a":1}\n\n'
        "data: line one\ndata: line two\n\ndata: [DONE]\n\n"
    )
    assert parse_sse(rendered) == events


def test_responses_keep_only_the_decoded_body_and_content_type() -> None:
    json_reply = WireResponse.from_http(200, "application/json", b'{"b": 1, "a": [true]}')
    assert (json_reply.kind, json_reply.body) == ("json", {"b": 1, "a": [True]})
    assert json_reply.to_http() == (200, "application/json", b'{"b":1,"a":[true]}')
    text_reply = WireResponse.from_http(502, "text/html", b"<h1>bad gateway</h1>")
    assert text_reply.to_http() == (502, "text/html", b"<h1>bad gateway</h1>")
    broken = WireResponse.from_http(200, "application/json", b"{not json")
    assert (broken.kind, broken.body) == ("text", "{not json")


# -- the file ----------------------------------------------------------------------------


def _entry(pinned: bool, body: bytes = CHAT) -> WireEntry:
    split = split_body("openai.chat", body)
    response = WireResponse.from_http(
        200, "text/event-stream", b'data: {"x":1}\n\ndata: [DONE]\n\n'
    )
    return build_entry(
        split,
        "/v1/chat/completions",
        pinned=pinned,
        scrubber=Scrubber(),
        ids=IdTokens(),
        response=response,
    )


@pytest.mark.parametrize("pinned", [False, True], ids=["unpinned", "pinned"])
def test_recording_round_trips_byte_for_byte(pinned: bool) -> None:
    text = WireRecording(pinned, (_entry(pinned),)).to_text()
    assert parse_wire_recording(text, path="r.yaml").to_text() == text
    assert ("<<tools>>" in text) is not pinned
    assert ('tools: "[ {' in text) is pinned  # the raw prefix, as sent


def _data(pinned: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        json.dumps(WireRecording(pinned, (_entry(pinned),)).to_data())
    )
    return data


def _set(path: str, value: Any, *, pinned: bool = False) -> dict[str, Any]:
    data = _data(pinned)
    node: Any = data
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    for key in keys[:-1]:
        node = node[key]
    if value is KeyError:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "recording: must be a mapping, got list"),
        (_set("kind", "recording"), "kind: must be 'wire', got 'recording'"),
        (_set("version", 4), "version: wire format version 4 is newer than this headerlock"),
        (_set("version", 0), "version: unknown wire format version 0 (this headerlock reads 1"),
        (_set("extra", 1), "recording.extra: unknown key"),
        (_set("requests.0.api", "gemini"), "requests[0].api: unknown api 'gemini'"),
        (_set("requests.0.path", "http://h/v1"), "requests[0].path: must be a path"),
        (_set("requests.0.tools", []), "requests[0].tools: an unpinned recording holds <<tools>>"),
        (_set("requests.0.tool_names", ["b", "a"]), "requests[0].tool_names: must be sorted"),
        (_set("requests.0.prefix_sha256", "abc"), "requests[0].prefix_sha256: must be 64"),
        (_set("requests.0.response", KeyError), "requests[0].response: missing"),
        (_set("requests.0.response.status", "200"), "requests[0].response.status: must be an"),
        (_set("requests.0.response.json", {}), "requests[0].response: needs exactly one of"),
        (
            _set("requests.0.response.stream", 'data: {"x":1}\nevent: a b data: 1\n'),
            "requests[0].response.stream: line 2 is not an event's line",
        ),
        (
            _set("requests.0.response.stream", "data: 1"),
            "requests[0].response.stream: line 1 is not an event's line",
        ),
        (
            _set(
                "requests.0.response",
                {"status": 200, "content_type": None, "events": [{"json": 1, "text": "x"}]},
            ),
            "requests[0].response.events[0]: needs exactly one of json or text",
        ),
        (
            _set("requests.0.prefix", KeyError, pinned=True),
            "requests[0].prefix: missing",
        ),
    ],
)
def test_a_bad_recording_is_one_line_naming_file_and_key(data: Any, message: str) -> None:
    from headerlock.formats.canonical_yaml import dump

    with pytest.raises(WireRecordingError) as info:
        parse_wire_recording(dump(data), path="recordings/x.yaml")
    text = str(info.value)
    assert text.startswith("recordings/x.yaml: ") and message in text and "\n" not in text


def test_missing_and_unparsable_files(tmp_path: Path) -> None:
    with pytest.raises(WireRecordingError, match=r"nope.yaml: no such wire recording"):
        load_wire_recording(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: wire\nkind: wire\n")
    with pytest.raises(WireRecordingError, match=r"bad.yaml: line 2: duplicate key"):
        load_wire_recording(bad)


# -- comparison --------------------------------------------------------------------------


def _anthropic(system: bytes, tools: bytes = b'[{"name":"t","input_schema":{}}]') -> WireEntry:
    body = b'{"model":"c","system":' + system + b',"tools":' + tools + b',"messages":[]}'
    split = split_body("anthropic.messages", body)
    return build_entry(split, "/v1/messages", pinned=True, scrubber=Scrubber(), ids=IdTokens())


def test_a_system_change_under_a_pin_is_system_changed() -> None:
    old, new = _anthropic(b'"You help."'), _anthropic(b'"You hinder."')
    found = entry_differences(3, old, new, pinned=True)
    assert [d.segment for d in found] == ["system", "prefix"]
    assert (
        found[0].line()
        == "request 3 (anthropic.messages) system: system: 'You help.' -> 'You hinder.'"
    )
    prefix = found[1]
    tools_len = len(b'[{"name":"t","input_schema":{}}]')
    assert prefix.offset == tools_len + len(b'"You h')
    assert prefix.cache_reason == "system_changed" and prefix.tool is None


def test_spacing_in_the_system_is_only_a_prefix_difference() -> None:
    old, new = _anthropic(b'["a","b"]'), _anthropic(b'["a", "b"]')
    [found] = entry_differences(1, old, new, pinned=True)
    assert found.segment == "prefix" and "the same data in other bytes" in found.detail
    assert entry_differences(1, old, new, pinned=False) == []  # unpinned, no prefix check


def test_unpinned_comparison_sees_tool_names_not_tools() -> None:
    old = _entry(False)
    other = CHAT.replace(b'"name":"a"', b'"name":"c"')
    [found] = entry_differences(1, old, _entry(False, other), pinned=False)
    assert (found.segment, found.detail, found.tool) == ("tools", "removed a; added c", "a")
    reordered = _entry(False, CHAT.replace(b'"model" : "m"', b'"model" : "m2"'))
    [config] = entry_differences(1, old, reordered, pinned=False)
    assert config.line() == "request 1 (openai.chat) config: config.model: 'm' -> 'm2'"
