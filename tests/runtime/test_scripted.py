"""Scripted replies: ``match:`` is read (and checked) with the reply, kept through a
recording, and refused by the runtime's in-order ``ScriptedAdapter``."""

from __future__ import annotations

import pytest

from headerlock.errors import ConfigError
from headerlock.runtime.adapters.recorded import ReplayAdapter, replies_from_events
from headerlock.runtime.adapters.scripted import (
    Reply,
    ScriptedAdapter,
    parse_reply,
    reply_to_data,
)
from headerlock.runtime.session import ASSISTANT_ERROR, ASSISTANT_MESSAGE, STEP_START, Event


def test_a_match_survives_reply_to_data_and_a_recorded_event() -> None:
    reply = parse_reply({"text": "a", "match": {"user": "q 1"}}, where="model[0]")
    assert reply == Reply(text="a", match={"user": "q 1"})
    assert reply_to_data(reply) == {"text": "a", "match": {"user": "q 1"}}
    assert parse_reply(reply_to_data(reply)) == reply
    events = [
        Event(STEP_START, 1, {"turn": 1, "step": 1}),
        Event(ASSISTANT_MESSAGE, 2, {"content": "a", "match": {"user": "q 1"}}),
        Event(STEP_START, 3, {"turn": 1, "step": 2}),
        Event(ASSISTANT_ERROR, 4, {"message": "boom", "match": {"tool_result": "t"}}),
        Event(STEP_START, 5, {"turn": 1, "step": 3}),
        Event(ASSISTANT_MESSAGE, 6, {"content": "b"}),
    ]
    assert [r.match for r in replies_from_events(events)] == [
        {"user": "q 1"},
        {"tool_result": "t"},
        None,
    ]
    bad = [Event(ASSISTANT_MESSAGE, 7, {"content": "a", "match": {"users": "q"}})]
    with pytest.raises(ConfigError, match=r"event 7\.match\.users: unknown key"):
        replies_from_events(bad)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"text": "a", "match": "q"}, r"r\.match: expected a mapping with user and/or tool_result"),
        ({"text": "a", "match": {}}, r"r\.match: expected a mapping"),
        ({"text": "a", "match": {"usr": "q"}}, r"r\.match\.usr: unknown key; expected user,"),
        ({"text": "a", "match": {"user": ""}}, r"r\.match\.user: expected a non-empty string"),
        ({"match": {"user": "q"}}, r"r: a reply needs text, tool_calls or error"),
    ],
)
def test_a_bad_match_is_named(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_reply(spec, where="r")


def test_the_in_order_adapter_refuses_a_match() -> None:
    with pytest.raises(ConfigError) as info:
        ScriptedAdapter(["ok", {"text": "a", "match": {"user": "q"}}])
    assert str(info.value).startswith(
        "replies[1].match: only applies to `app: wire` fixtures and wire scripts"
    )
    assert str(info.value).endswith("; this model answers its requests in order")
    ScriptedAdapter(["ok"])
    ReplayAdapter([Event(ASSISTANT_MESSAGE, 1, {"content": "a"})])
