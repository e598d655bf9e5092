"""Each message scrubbed once per lock (``memo``): the same entries and keys as afresh."""

from __future__ import annotations

import json
from typing import Any

import pytest

from headerlock.formats.wire_scrub import IdTokens, Scrubber
from headerlock.testing.wire.apis import split_body
from headerlock.testing.wire.entry import build_entry
from headerlock.testing.wire.matching import request_key
from headerlock.testing.wire.memo import MessageMemo
from headerlock.testing.wire.spans import array_elements, repeated_elements


def _conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for n in range(turns):
        messages.append({"role": "user", "content": f"question {n} with sk-secret-0123456789"})
        call = {"id": f"call_{n % 3}", "type": "function", "function": {"name": "f"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{n % 3}", "content": "1"})
    return messages


def _bodies() -> list[tuple[str, bytes]]:
    """Growing sessions, an edited one, other apis and layouts, one after the other."""
    out: list[tuple[str, bytes]] = []
    for turns in range(6):
        body = {"model": "m", "messages": _conversation(turns), "tools": [{"type": "function"}]}
        out.append(("openai.chat", json.dumps(body).encode()))
    edited = _conversation(4)
    edited[2]["tool_calls"][0]["id"] = "call_other"
    out.append(("openai.chat", json.dumps({"messages": edited, "model": "m"}).encode()))
    out.append(("openai.chat", json.dumps({"messages": _conversation(5), "model": "m"}).encode()))
    conversation = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    out.append(("anthropic.messages", json.dumps({"messages": conversation}).encode()))
    with_one = {"messages": [*conversation, {"role": "assistant", "content": "x"}]}
    out.append(("anthropic.messages", json.dumps(with_one, indent=1).encode()))
    out.append(("openai.responses", json.dumps({"input": "just text", "model": "m"}).encode()))
    previous = {"input": [{"id": "call_1"}], "previous_response_id": "call_1"}
    out.append(("openai.responses", json.dumps(previous).encode()))
    return out


@pytest.mark.parametrize("pinned", [False, True])
def test_the_memo_builds_the_entries_and_keys_build_entry_does(pinned: bool) -> None:
    memo = MessageMemo()
    scrubber = Scrubber.of(["sk-secret-0123456789"], redact=str.upper)
    for api, body in [*_bodies(), *_bodies()]:
        split = split_body(api, body)
        fresh = build_entry(split, "/v1/x", pinned=pinned, scrubber=scrubber, ids=IdTokens())
        entry, key = memo.entry(split, body, "/v1/x", pinned=pinned, scrubber=scrubber)
        assert entry == fresh
        assert key == request_key(fresh)


def test_a_new_scrubber_starts_the_memo_afresh() -> None:
    memo = MessageMemo()
    api, body = _bodies()[3]
    split = split_body(api, body)
    for scrubber in (Scrubber(), Scrubber.of(["sk-secret-0123456789"])):
        fresh = build_entry(split, "/v1/x", pinned=False, scrubber=scrubber, ids=IdTokens())
        assert memo.entry(split, body, "/v1/x", pinned=False, scrubber=scrubber)[0] == fresh


def test_repeated_elements_are_the_spans_of_a_whole_scan() -> None:
    before = None
    for text in (
        b'{"m": [1, {"a": [2]}, "x"]}',
        b'{"m": [1, {"a": [2]}, "xy", 3]}',
        b'{"m": [12]}',
    ):
        found = repeated_elements(text, 6, before)
        assert found.spans == array_elements(text, 6)
        before = found


def test_plus_keeps_the_scrubber_when_nothing_is_new() -> None:
    scrubber = Scrubber.of(["sk-secret-0123456789"])
    assert scrubber.plus(["sk-secret-0123456789", "short"]) is scrubber
    assert scrubber.plus(["sk-other-0123456789"]).secrets[0] == "sk-secret-0123456789"


def test_shared_messages_are_the_ones_parsed_first_and_equal_to_the_sent() -> None:
    memo = MessageMemo()
    splits = []
    for api, body in _bodies():
        split = split_body(api, body)
        shared = memo.shared(split, body)
        assert shared == split
        assert json.dumps(shared.messages) == json.dumps(split.messages)
        splits.append(shared)
    assert splits[4].messages[0] is splits[5].messages[0]
    assert splits[4].messages[-1] is splits[5].messages[len(splits[4].messages) - 1]
