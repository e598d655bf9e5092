"""A body whose bytes around its messages repeat the last body's has only its messages
read (``around.Around``): its split is the split of the whole body read afresh, it refuses
what that refuses (the same key named twice), and it gets its own objects."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from headerlock.testing.wire.apis import Split, base, model_api, openai_chat
from headerlock.testing.wire.members import DuplicateKeyError

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(max_size=6) | st.sampled_from(['"', "\\", "}", "]", "{[", ",", ":", "é", "role"])
SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant"]), "content": JSON}
)
TOOL = st.fixed_dictionaries(
    {"type": st.just("function"), "function": st.fixed_dictionaries({"name": TEXT})}
)
SEPARATORS = st.sampled_from([(",", ":"), (", ", ": ")])
APIS = [
    "openai.chat",
    "anthropic.messages",
    "bedrock.converse",
    "gemini.generate",
    "openai.responses",
]
MESSAGES_KEY = {"gemini.generate": "contents", "openai.responses": "input"}
SYSTEM_KEY = {
    "anthropic.messages": "system",
    "bedrock.converse": "system",
    "gemini.generate": "systemInstruction",
    "openai.responses": "instructions",
}
MIDDLES = [
    '[{"role":"user","role":"user"}]',  # a key twice
    '[{"role":"user"}],"model":"other"',  # a member more: not one value
    '[{"role":"user"}],"messages":[]',  # the messages twice
    ' [{"role":"user"}]',  # white space at an end
    '[{"role":"user"}] ',
    "[1,",
    '"text"',
    "[]",
    "{}",
    "1",
    '[{"a":{"b":1,"b":2}}],"x":{"y":1,"y":2}',
    "\ud800",
]


def _outcome(api: str, body: bytes) -> Any:
    try:
        split = model_api(api).split(body)
    except DuplicateKeyError as error:
        return ("duplicate", error.key)
    except (ValueError, RecursionError):
        return ("refused", None)
    return (
        "ok",
        split.config,
        split.system,
        split.tools,
        split.messages,
        split.tools_raw,
        split.system_raw,
        split.tool_names,
        split.messages_at,
    )


def _body(api: str, data: dict[str, Any], separators: tuple[str, str]) -> bytes:
    return json.dumps(data, separators=separators, ensure_ascii=False).encode()


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, bytes, bytes]:
    """An api, a body of it, and a body with the same bytes around another messages value
    (a JSON value, or text that is not one)."""
    api = draw(st.sampled_from(APIS))
    key = MESSAGES_KEY.get(api, "messages")
    data: dict[str, Any] = {"model": "gpt-a"}
    before = draw(st.lists(MESSAGE, min_size=1, max_size=3))
    data[key] = before
    if draw(st.booleans()):
        tools = draw(st.lists(TOOL, max_size=3))
        if api == "bedrock.converse":
            data["toolConfig"] = {"tools": tools, "toolChoice": {"auto": {}}}
        else:
            data["tools"] = tools
    if api in SYSTEM_KEY and draw(st.booleans()):
        data[SYSTEM_KEY[api]] = draw(JSON)
    extra = draw(st.dictionaries(TEXT, JSON, max_size=2))
    data.update({k: v for k, v in extra.items() if k not in data})
    order = draw(st.permutations(list(data)))
    separators = draw(SEPARATORS)
    body = _body(api, {k: data[k] for k in order}, separators)
    marker = json.dumps(before, separators=separators, ensure_ascii=False).encode()
    head, _, tail = body.partition(marker)
    grown = [*before, *draw(st.lists(MESSAGE, max_size=2))]
    middle = draw(
        st.sampled_from(MIDDLES).map(lambda t: t.encode("utf-8", "surrogatepass"))
        | st.lists(MESSAGE, max_size=3).map(
            lambda m: json.dumps(m, separators=separators, ensure_ascii=False).encode()
        )
        | st.just(json.dumps(grown, separators=separators, ensure_ascii=False).encode())
    )
    if draw(st.booleans()):  # another model (as long), before or after the messages
        head, tail = (part.replace(b'"gpt-a"', b'"gpt-b"') for part in (head, tail))
    return api, body, head + middle + tail


@PROPERTY
@given(bodies())
def test_a_body_split_around_its_messages_is_the_body_split_afresh(
    case: tuple[str, bytes, bytes],
) -> None:
    api, body, again = case
    base._AROUND.clear()
    afresh = _outcome(api, again)
    base._AROUND.clear()
    first = _outcome(api, body)
    assert first[0] == "ok"
    assert base._AROUND[api].owner is model_api(api)  # the bytes around are remembered
    assert _outcome(api, again) == afresh


def test_a_body_split_around_its_messages_gets_its_own_objects() -> None:
    api = model_api("anthropic.messages")
    data = {"model": "m", "system": [{"type": "text", "text": "s"}], "tools": [{"name": "t"}]}
    first = api.split(
        _body("", {**data, "messages": [{"role": "user", "content": "a"}]}, (",", ":"))
    )
    second = api.split(
        _body("", {**data, "messages": [{"role": "user", "content": "b"}]}, (",", ":"))
    )
    assert second.messages == [{"role": "user", "content": "b"}]
    assert second.tools == first.tools and second.tools is not first.tools
    assert second.system == first.system and second.system is not first.system
    assert second.config == first.config and second.config is not first.config
    first.tools.append({"name": "changed"})
    first.config["model"] = "changed"
    third = api.split(
        _body("", {**data, "messages": [{"role": "user", "content": "c"}]}, (",", ":"))
    )
    assert third.tools == [{"name": "t"}] and third.config == {"model": "m"}


def test_a_split_with_other_messages_is_the_split_replaced_field_by_field() -> None:
    split = model_api("openai.chat").split(
        b'{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],'
        b'"tools":[{"type":"function","function":{"name":"t"}}]}'
    )
    other = [{"role": "user", "content": "v"}]
    made, want = split.with_messages(other), dataclasses.replace(split, messages=other)
    for field in dataclasses.fields(Split):  # every field, compared or not
        assert getattr(made, field.name) is getattr(want, field.name)


SYSTEMS = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "developer", "user"]), "content": TEXT | JSON}
    ),
    max_size=4,
)


@PROPERTY
@given(st.lists(st.tuples(SYSTEMS, SEPARATORS, st.sampled_from(["", " ", "\n "])), max_size=6))
def test_a_leading_system_found_from_the_last_ones_bytes_is_the_one_scanned(
    bodies: list[tuple[list[Any], tuple[str, str], str]],
) -> None:
    api = model_api("openai.chat")
    assert api.leading_system is not None
    for messages, separators, space in [*bodies, *bodies]:
        text = json.dumps(messages, separators=separators, ensure_ascii=False)
        body = ('{"messages":' + space + text + space + "}").encode()
        span = (len('{"messages":') + len(space), len(body) - len(space) - 1)
        got = api.leading_system(body, span, messages)
        openai_chat._SYSTEM[0] = None
        assert got == api.leading_system(body, span, messages)  # scanned afresh
