"""Splitting a request body member by member (long members parsed once, their ends found
by their bytes) gives what parsing the whole body gives, and refuses what it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headerlock.testing.wire.apis import model_api
from headerlock.testing.wire.members import DuplicateKeyError, _unique_keys
from headerlock.testing.wire.spans import body_members, object_members

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(max_size=8) | st.sampled_from(['"', "\\", "}", "]", "{[", ",", ":", "é"])
SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)
TOOLS = [{"type": "function", "function": {"name": f"tool_{n:03d}", "description": "x" * 40}}
         for n in range(40)]  # fmt: skip
SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")])
API = model_api("openai.chat")


def _whole(body: bytes) -> Any:
    """The slow path: the whole body parsed at once, duplicate keys refused."""
    return json.loads(body, object_pairs_hook=_unique_keys)


def _outcome(parse: Any, body: bytes) -> Any:
    try:
        return ("ok", parse(body))
    except DuplicateKeyError as error:
        return ("duplicate", error.key)
    except (ValueError, RecursionError):
        return ("refused", None)


def _split_data(body: bytes) -> dict[str, Any]:
    split = API.split(body)
    data = dict(split.config)
    data["tools"] = split.tools
    data["messages"] = split.messages
    return {k: v for k, v in data.items() if v is not None}


@PROPERTY
@given(extra=st.dictionaries(TEXT, JSON, max_size=4), separators=SEPARATORS, repeat=st.booleans())
def test_the_members_are_the_whole_bodys(
    extra: dict[str, Any], separators: tuple[str, str], repeat: bool
) -> None:
    extra = {k: v for k, v in extra.items() if k not in ("tools", "messages", "model")}
    data = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}
    body = json.dumps(data, separators=separators, ensure_ascii=False).encode()
    if repeat:  # the long tools member is then taken from the memo
        API.split(body)
    members = body_members(body)
    assert list(members) == list(data)
    assert {k: json.loads(body[s:e]) for k, (s, e) in members.items()} == _whole(body)
    assert API.split(body).tools == TOOLS


@PROPERTY
@given(value=st.dictionaries(TEXT, JSON, max_size=4), cut=st.integers(0, 400), junk=TEXT)
def test_a_damaged_body_is_refused_as_the_whole_parse_refuses_it(
    value: dict[str, Any], cut: int, junk: str
) -> None:
    body = json.dumps({"tools": TOOLS, **value}).encode()
    at = cut % (len(body) + 1)
    damaged = body[:at] + junk.encode() + body[at:]
    whole = _outcome(_whole, damaged)
    members = _outcome(
        lambda b: {k: json.loads(b[s:e]) for k, (s, e) in body_members(b).items()}, damaged
    )
    if whole[0] == "ok" and isinstance(whole[1], dict):
        assert members == whole
    elif whole[0] == "ok":
        assert members[0] == "refused"  # a body that is not an object
    else:
        assert members[0] != "ok" or whole[0] == "duplicate"


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1, "a": 2}',
        b'{"a": {"b": 1, "b": 2}}',
        b'{"tools": [{"x": 1, "x": 1}], "model": "m"}',
    ],
)
def test_a_key_twice_is_refused_at_any_depth(body: bytes) -> None:
    with pytest.raises(DuplicateKeyError):
        API.split(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a" 1}',
        b'{"a": 1 "b": 2}',
        b'{"a": 1,}',
        b'{"a": 1} x',
        b'{"a": 1',
        b"[1]",
        b'{"a": tru}',
    ],
)
def test_a_body_that_is_not_one_json_object_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError, match=r"\w") as refused:
        API.split(body)
    assert not isinstance(refused.value, DuplicateKeyError)


def test_a_repeated_tool_list_gives_each_split_its_own_objects() -> None:
    def body(question: str) -> bytes:
        return json.dumps({"model": "m", "tools": TOOLS,
                           "messages": [{"role": "user", "content": question}]}).encode()  # fmt: skip

    one, two = API.split(body("one")), API.split(body("two"))
    assert one.tools == two.tools == TOOLS and two.tools is not one.tools
    assert one.tool_names == two.tool_names == [f"tool_{n:03d}" for n in range(40)]
    one.tools.reverse()  # a test may change what its run shows; the next split is not
    one.tool_names.reverse()
    three = API.split(body("three"))
    assert three.tools == TOOLS and three.tool_names == two.tool_names
    changed = json.loads(body("four"))
    changed["tools"][0]["function"]["name"] = "renamed"
    four = API.split(json.dumps(changed).encode())
    assert four.tool_names[0] == "renamed" and three.tool_names[0] == "tool_000"


def test_a_key_twice_in_a_repeated_long_member_is_found_the_first_time() -> None:
    tools = json.dumps(TOOLS)[:-1] + ', {"x": 1, "x": 2}]'
    with pytest.raises(DuplicateKeyError):
        API.split(('{"model": "m", "tools": ' + tools + "}").encode())
    with pytest.raises(DuplicateKeyError):  # not remembered as checked
        API.split(('{"model": "m", "tools": ' + tools + "}").encode())


def _conversation(messages: list[Any], separators: tuple[str, str] = (",", ":")) -> bytes:
    return json.dumps({"model": "m", "messages": messages}, separators=separators).encode()


@PROPERTY
@given(
    turns=st.lists(st.lists(JSON, min_size=1, max_size=3), min_size=1, max_size=5),
    separators=SEPARATORS,
)
def test_a_growing_conversation_splits_as_each_whole_body_parses(
    turns: list[list[Any]], separators: tuple[str, str]
) -> None:
    messages: list[Any] = [{"role": "user", "content": "x" * 1100}]  # long: remembered
    for turn in turns:
        messages = messages + turn
        body = _conversation(messages, separators)
        assert API.split(body).messages == _whole(body)["messages"]
        assert list(body_members(body).values()) == list(object_members(body).values())


def test_a_key_twice_in_a_new_message_of_a_grown_conversation_is_found() -> None:
    first = [{"role": "user", "content": "x" * 1100}]
    API.split(_conversation(first))
    grown = _conversation(first)[:-2] + b',{"role":"tool","role":"user"}]}'
    with pytest.raises(DuplicateKeyError):
        API.split(grown)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('[{"a":"' + "x" * 1100 + '"},12]', '[{"a":"' + "x" * 1100 + '"},123]'),  # a longer number
        ('[{"a":"' + "x" * 1100 + '"},"s"]', '[{"a":"' + "x" * 1100 + '"},"s" ,1]'),
        ('[{"a":"' + "x" * 1100 + '"}]', '[{"a":"' + "x" * 1100 + '"}  ]'),
    ],
)
def test_an_array_is_taken_as_grown_only_past_whole_elements(before: str, after: str) -> None:
    API.split(('{"messages":' + before + "}").encode())
    body = ('{"messages":' + after + "}").encode()
    assert API.split(body).messages == json.loads(after)
    assert body_members(body)["messages"] == (12, len(body) - 1)
