"""The wire script, read by the real openai and anthropic SDKs over real HTTP."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import anthropic
import httpx
import openai
import pydantic
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from hypothesis import given, settings, strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from headerlock.errors import ConfigError, ScriptExhaustedError
from headerlock.testing.wire.script import JSON, SSE, WireScript, render_reply
from tests.model_server import HttpError, ModelServer, serve

APIS = ("anthropic.messages", "openai.chat", "openai.responses")
"""The apis whose SDKs this file reads (Gemini's: tests/wire/test_gemini.py)."""
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]
TEXT: dict[str, Any] = {"text": "Hello there, world"}
TOOLS: dict[str, Any] = {
    "text": "Let me look.",
    "tool_calls": [
        {"name": "read_file", "arguments": {"path": "a.txt", "lines": [1, 2]}},
        {"name": "grep", "arguments": {"pattern": "é"}},
    ],
}
Seen = tuple[str, list[tuple[str, Any, str]]]
"""What a client saw: the text and each tool call's (name, arguments, id)."""


@dataclass(frozen=True)
class Live:
    """One server for the module and a client of each SDK pointed at it."""

    server: ModelServer
    openai: openai.OpenAI
    anthropic: anthropic.Anthropic

    def load(self, *replies: dict[str, Any] | HttpError, echo: str | None = None) -> ModelServer:
        """Start over: these replies, no hits yet."""
        self.server.reset()
        self.server.script(replies, echo_header=echo)
        return self.server


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    with serve() as server:
        yield Live(
            server,
            openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0),
            anthropic.Anthropic(api_key="sk-ant-test", base_url=server.origin, max_retries=0),
        )


def _chat(live: Live, stream: bool) -> Seen:
    client = live.openai
    if not stream:
        message = client.chat.completions.create(model="gpt-t", messages=MESSAGES).choices[0]
        calls = message.message.tool_calls or []
        return message.message.content or "", [
            (c.function.name, json.loads(c.function.arguments), c.id)
            for c in calls
            if c.type == "function"
        ]
    text, parts = "", dict[int, tuple[str, str, str]]()
    # The loop most agents write: chunk.choices[0] on every chunk.
    for chunk in client.chat.completions.create(model="gpt-t", messages=MESSAGES, stream=True):
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for call in delta.tool_calls or []:
            name, arguments, call_id = parts.get(call.index, ("", "", ""))
            function = call.function
            parts[call.index] = (
                name + (function.name or "" if function else ""),
                arguments + (function.arguments or "" if function else ""),
                call_id + (call.id or ""),
            )
    return text, [(n, json.loads(a), i) for n, a, i in parts.values()]


def _responses(live: Live, stream: bool) -> Seen:
    client = live.openai
    if stream:
        events = list(client.responses.create(model="gpt-t", input="hi", stream=True))
        completed = [e for e in events if e.type == "response.completed"]
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        response = completed[0].response
        assert "".join(deltas) == response.output_text
    else:
        response = client.responses.create(model="gpt-t", input="hi")
    calls = [
        (item.name, json.loads(item.arguments), item.call_id)
        for item in response.output
        if item.type == "function_call"
    ]
    return response.output_text, calls


def _messages(live: Live, stream: bool) -> Seen:
    client = live.anthropic
    if not stream:
        message = client.messages.create(model="claude-t", max_tokens=64, messages=MESSAGES)
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = [(b.name, b.input, b.id) for b in message.content if b.type == "tool_use"]
        assert message.stop_reason == ("tool_use" if calls else "end_turn")
        return text, calls
    text, blocks, stop = "", {}, None
    events = client.messages.create(model="claude-t", max_tokens=64, messages=MESSAGES, stream=True)
    for event in events:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            blocks[event.index] = (block.name, "", block.id)
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            text += event.delta.text
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            name, partial, block_id = blocks[event.index]
            blocks[event.index] = (name, partial + event.delta.partial_json, block_id)
        elif event.type == "message_delta":
            stop = event.delta.stop_reason
    assert stop == ("tool_use" if blocks else "end_turn")
    return text, [(n, json.loads(a), i) for n, a, i in blocks.values()]


READERS = {"openai.chat": _chat, "openai.responses": _responses, "anthropic.messages": _messages}
CALL_IDS = {"openai.chat": "call_", "openai.responses": "call_", "anthropic.messages": "toolu_"}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("reply", [TEXT, TOOLS], ids=["text", "tool_calls"])
def test_the_sdks_read_every_api_plain_and_streamed(
    live: Live, api: str, stream: bool, reply: dict[str, Any]
) -> None:
    server = live.load({"text": "first"}, reply)
    READERS[api](live, stream)
    text, calls = READERS[api](live, stream)
    assert text == reply["text"]
    expected = [(c["name"], c["arguments"]) for c in reply.get("tool_calls", [])]
    assert [(name, arguments) for name, arguments, _ in calls] == expected
    assert [i for *_, i in calls] == [f"{CALL_IDS[api]}script0001t{k}" for k in range(len(calls))]
    assert [r.json().get("stream", False) for r in server.hits] == [stream, stream]


def test_the_sdk_helpers_accept_the_script(live: Live) -> None:
    live.load(TOOLS, TEXT, TOOLS, TOOLS, TEXT)
    client, claude = live.openai, live.anthropic
    with client.chat.completions.stream(model="gpt-t", messages=MESSAGES) as chat:
        final = chat.get_final_completion().choices[0]
    parsed = client.chat.completions.parse(model="gpt-t", messages=MESSAGES).choices[0]
    with client.responses.stream(model="gpt-t", input="hi") as responses:
        response = responses.get_final_response()
    with claude.messages.stream(model="claude-t", max_tokens=64, messages=MESSAGES) as s:
        streamed = "".join(s.text_stream)
        message = s.get_final_message()
    with claude.messages.stream(model="claude-t", max_tokens=64, messages=MESSAGES) as s:
        plain = s.get_final_message()
    assert final.finish_reason == "tool_calls"
    assert [c.function.name for c in final.message.tool_calls or []] == ["read_file", "grep"]
    assert parsed.message.content == TEXT["text"]
    assert response.output_text == TOOLS["text"]
    assert [i.type for i in response.output] == ["message", "function_call", "function_call"]
    assert streamed == TOOLS["text"]
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[1].type == "tool_use"
    assert message.content[1].input == {"path": "a.txt", "lines": [1, 2]}
    assert plain.content[0].type == "text"
    assert plain.content[0].text == TEXT["text"]


def test_async_clients_and_a_legacy_httpx_client(live: Live) -> None:
    async def run(server: ModelServer) -> list[str]:
        async with (
            openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0) as client,
            anthropic.AsyncAnthropic(api_key="k", base_url=server.origin, max_retries=0) as claude,
        ):
            async with client.chat.completions.stream(model="m", messages=MESSAGES) as chat:
                completion = await chat.get_final_completion()
            async with claude.messages.stream(model="c", max_tokens=9, messages=MESSAGES) as s:
                message = await s.get_final_message()
            response = await client.responses.create(model="m", input="hi")
        block = message.content[0]
        assert block.type == "text"
        return [completion.choices[0].message.content or "", block.text, response.output_text]

    server = live.load({"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"})
    seen = asyncio.run(run(server))
    with httpx.Client() as http:
        legacy = openai.OpenAI(
            api_key="k", base_url=server.base_url, max_retries=0, http_client=cast(Any, http)
        )
        chunks = legacy.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        seen.append("".join(c.choices[0].delta.content or "" for c in chunks))
    assert seen == ["a", "b", "c", "d"]


def test_a_chat_stream_with_usage_never_ends_on_a_chunk_without_choices(live: Live) -> None:
    live.load(TOOLS)
    chunks = list(
        live.openai.chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )
    assert all(len(c.choices) == 1 for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0


# -- bytes -----------------------------------------------------------------------------

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)
_CALLS = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,20}", fullmatch=True),
            "arguments": st.dictionaries(st.text(max_size=8), _JSON_VALUES, max_size=3),
        }
    ),
    max_size=3,
)
_STREAM_EVENT = pydantic.TypeAdapter(ResponseStreamEvent)
_MESSAGE_EVENT = pydantic.TypeAdapter(RawMessageStreamEvent)
_REPLIES = st.builds(
    lambda text, calls: {"text": text, "tool_calls": calls}, st.text(max_size=40), _CALLS
).filter(lambda r: bool(r["text"] or r["tool_calls"]))


def _events(body: bytes) -> Iterator[dict[str, Any]]:
    for block in body.decode().split("\n\n")[:-1]:
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        if lines["data"] != "[DONE]":
            event = json.loads(lines["data"])
            assert lines.get("event", event.get("type")) == event.get("type")
            yield event


def _validate(api: str, stream: bool, body: bytes) -> tuple[str, list[Any]]:
    """Validate ``body`` strictly with the SDK's own models; return text and arguments."""
    if not stream:
        data = json.loads(body)
        if api == "openai.chat":
            message = ChatCompletion.model_validate(data).choices[0].message
            calls = [c.function.arguments for c in message.tool_calls or [] if c.type == "function"]
            return message.content or "", [json.loads(a) for a in calls]
        if api == "openai.responses":
            response = Response.model_validate(data)
            calls = [i.arguments for i in response.output if i.type == "function_call"]
            return response.output_text, [json.loads(a) for a in calls]
        blocks = Message.model_validate(data).content
        text = "".join(b.text for b in blocks if b.type == "text")
        return text, [b.input for b in blocks if b.type == "tool_use"]
    text, arguments = "", dict[int, str]()
    for event in _events(body):
        if api == "openai.chat":
            delta = ChatCompletionChunk.model_validate(event).choices[0].delta
            text += delta.content or ""
            for call in delta.tool_calls or []:
                piece = call.function.arguments if call.function else None
                arguments[call.index] = arguments.get(call.index, "") + (piece or "")
        elif api == "openai.responses":
            item = _STREAM_EVENT.validate_python(event)
            if item.type == "response.output_text.delta":
                text += item.delta
            elif item.type == "response.function_call_arguments.delta":
                arguments[item.output_index] = arguments.get(item.output_index, "") + item.delta
        elif event["type"] != "ping":
            raw = _MESSAGE_EVENT.validate_python(event)
            if raw.type == "content_block_delta" and raw.delta.type == "text_delta":
                text += raw.delta.text
            elif raw.type == "content_block_delta" and raw.delta.type == "input_json_delta":
                arguments[raw.index] = arguments.get(raw.index, "") + raw.delta.partial_json
    return text, [json.loads(a) for a in arguments.values()]


@settings(max_examples=25, deadline=None)
@given(reply=_REPLIES, index=st.integers(0, 20_000), stream=st.booleans())
def test_bodies_validate_strictly_and_repeat_byte_for_byte(
    reply: dict[str, Any], index: int, stream: bool
) -> None:
    request = {"model": "m", "stream": stream, "messages": MESSAGES}
    for api in APIS:
        status, content_type, body = render_reply(api, request, reply, index=index)
        assert (status, content_type) == (200, SSE if stream else JSON)
        assert render_reply(api, request, reply, index=index)[2] == body
        text, arguments = _validate(api, stream, body)
        assert text == reply["text"]
        assert arguments == [c["arguments"] for c in reply["tool_calls"]]


@pytest.mark.parametrize("api", APIS)
def test_ids_and_created_come_from_the_index_alone(api: str) -> None:
    request = {"model": "m", "stream": True}
    first = render_reply(api, request, TOOLS, index=3)[2].decode()
    assert render_reply(api, dict(request), dict(TOOLS), index=3)[2].decode() == first
    other = render_reply(api, request, TOOLS, index=4)[2].decode()
    assert "script0003" in first
    assert "script0003" not in other
    assert other.replace("script0004", "script0003").replace("1767225604", "1767225603") == first


def test_a_given_tool_call_id_is_kept() -> None:
    reply = {"tool_calls": [{"name": "f", "id": "call_mine"}]}
    body = render_reply("openai.chat", {"model": "m"}, reply, index=0)[2]
    assert json.loads(body)["choices"][0]["message"]["tool_calls"][0]["id"] == "call_mine"


# -- errors ----------------------------------------------------------------------------


def test_an_error_reply_fails_the_stream_or_answers_400(live: Live) -> None:
    failing = {"text": "partial", "error": "model overloaded"}
    live.load(*[failing] * 5)
    client, claude = live.openai, live.anthropic
    with pytest.raises(openai.BadRequestError, match="model overloaded"):
        client.chat.completions.create(model="m", messages=MESSAGES)
    with pytest.raises(openai.APIError, match="model overloaded"):
        list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    with pytest.raises(anthropic.APIStatusError, match="model overloaded"):
        list(claude.messages.create(model="c", max_tokens=9, messages=MESSAGES, stream=True))
    with pytest.raises(anthropic.BadRequestError, match="model overloaded"):
        claude.messages.create(model="c", max_tokens=9, messages=MESSAGES)
    events = list(client.responses.create(model="m", input="hi", stream=True))
    assert [e.type for e in events][-2:] == ["error", "response.failed"]


def test_an_exhausted_script_says_how_many_replies_it_had() -> None:
    script = WireScript([TEXT])
    assert script.answer("openai.chat", {"model": "m"})[0] == 200
    with pytest.raises(ScriptExhaustedError) as caught:
        script.answer("anthropic.messages", {"model": "m"})
    assert str(caught.value) == (
        "the script has no reply for request 2 (anthropic.messages): it has 1 reply;"
        " add a reply for every model request the agent makes"
    )
    assert (caught.value.request, caught.value.replies) == (2, 1)
    with pytest.raises(ScriptExhaustedError, match=r"request 3 .* it has 1 reply;"):
        script.answer("openai.chat", {"model": "m"})


def test_the_server_answers_an_exhausted_script_with_a_400(live: Live) -> None:
    live.load(TEXT, TEXT)
    client = live.openai
    client.responses.create(model="m", input="a")
    client.responses.create(model="m", input="b")
    with pytest.raises(openai.BadRequestError, match=r"no reply for request 3 .* 2 replies"):
        client.responses.create(model="m", input="c")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"tool_calls": [{"arguments": {}}]}, r"script\[3\]\.tool_calls\[0\]: expected a mapping"),
        ({"txt": "x"}, r"script\[3\]: unknown key 'txt'"),
        ({}, r"script\[3\]: a reply needs text"),
        (
            {"tool_calls": [{"name": "f", "arguments": {"x": float("nan")}}]},
            r"script\[3\]\.tool_calls\[0\]\.arguments: not JSON",
        ),
    ],
)
def test_a_bad_reply_names_its_index(reply: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        render_reply("openai.chat", {"model": "m"}, reply, index=3)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"script\[1\]: unknown key"):
        WireScript([TEXT, {"bogus": 1}])
    with pytest.raises(ConfigError, match="expected a list of replies"):
        WireScript(TEXT)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"unknown model api 'openai\.completions'"):
        render_reply("openai.completions", {}, TEXT, index=0)
    with pytest.raises(ConfigError, match="index must be an int >= 0"):
        render_reply("openai.chat", {}, TEXT, index=-1)
    with pytest.raises(ConfigError, match="unknown model api"):
        WireScript([TEXT]).answer("nope", {})


# -- the test server -------------------------------------------------------------------


def test_the_server_streams_chunked_without_a_content_length(model_server: ModelServer) -> None:
    model_server.script([TEXT])
    connection = http.client.HTTPConnection(model_server.origin.removeprefix("http://"))
    body = json.dumps({"model": "m", "stream": True, "messages": MESSAGES})
    pieces = iter([body[:9].encode(), body[9:].encode()])  # a chunked request body too
    connection.request("POST", "/v1/chat/completions", pieces, {"Authorization": "Bearer s"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.getheader("Content-Length") is None
    assert data.endswith(b"data: [DONE]\n\n")
    assert model_server.hits[0].headers["authorization"] == "Bearer s"
    assert model_server.hits[0].headers["transfer-encoding"] == "chunked"
    assert model_server.hits[0].body == body.encode()


def test_the_server_answers_http_errors_and_echoes_a_header(live: Live) -> None:
    server = live.load(HttpError(503, "try later", retry=False), TEXT, echo="authorization")
    with pytest.raises(anthropic.InternalServerError, match="try later"):
        live.anthropic.messages.create(model="c", max_tokens=9, messages=MESSAGES)
    message = live.anthropic.messages.create(model="c", max_tokens=9, messages=MESSAGES)
    block = message.content[0]
    assert block.type == "text"
    assert block.text == f"{TEXT['text']} Bearer sk-ant-test"
    assert [r.path for r in server.hits] == ["/v1/messages", "/v1/messages"]
