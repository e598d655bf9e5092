"""``headerlock.testing.wire.lock``: the real OpenAI and Anthropic SDK clients, recorded
against a real server on 127.0.0.1 and replayed against a closed port."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from headerlock.errors import ScriptExhaustedError, WireMismatch
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.lock import WireRun, lock
from wire_server import Server, serve

KEY = "sk-test-not-a-real-key-0001"


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


CLOSED_ORIGIN = _closed_port()
CLOSED = f"{CLOSED_ORIGIN}/v1"
"""Nothing listens here: a request that leaks out of a replay fails."""


def fn_tool(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    parameters = schema or {"type": "object", "properties": {"q": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def chat_client(base: str, legacy: bool = False) -> openai.OpenAI:
    http = httpx.Client() if legacy else None
    return openai.OpenAI(base_url=base, api_key=KEY, max_retries=0, http_client=http)  # type: ignore[arg-type]


def chat_agent(client: openai.OpenAI, tools: list[dict[str, Any]] | None = None) -> list[str]:
    """A plain answer, then a streamed one."""
    messages: list[Any] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]
    extra: dict[str, Any] = {"tools": tools} if tools else {}
    first = client.chat.completions.create(model="gpt-test", messages=messages, **extra)
    stream = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "stream it"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    return [first.choices[0].message.content or "", streamed]


REPLIES = [{"text": "hello there"}, {"text": "streamed three words"}]


@contextmanager
def recording(
    path: Path, replies: Any, *, echo_header: str | None = None, **options: Any
) -> Iterator[tuple[Server, WireRun]]:
    """A real server answering ``replies``, and a record lock around it."""
    with (
        serve(replies, echo_header=echo_header) as server,
        lock(path, mode="record", **options) as run,
    ):
        yield server, run


def replay(path: Path, body: Callable[[], object], runs: list[WireRun]) -> None:
    """Run ``body`` under a replay lock (one call, for ``pytest.raises``), keeping the run."""
    with lock(path) as run:
        runs.append(run)
        body()


def swallowing(call: Callable[[], object], caught: list[Exception]) -> Callable[[], None]:
    """``call``, as an agent that catches the SDK's error and carries on."""

    def body() -> None:
        try:
            call()
        except openai.BadRequestError as error:
            caught.append(error)

    return body


@pytest.mark.parametrize("legacy", [False, True], ids=["httpx2", "legacy-httpx"])
def test_chat_plain_and_streamed_record_then_replay_offline(tmp_path: Path, legacy: bool) -> None:
    path = tmp_path / "chat.yaml"
    with serve(REPLIES) as server, lock(path, mode="record") as run:
        recorded = chat_agent(chat_client(server.base_url, legacy))
    assert recorded == ["hello there", "streamed three words"]
    assert [r.api for r in run.requests] == ["openai.chat", "openai.chat"]
    first = run.requests[0]
    assert first.header.system == [{"role": "system", "content": "You are terse."}]
    assert first.header.config == {"model": "gpt-test"}
    assert json.loads(first.body)["messages"][1] == {"role": "user", "content": "hi"}
    text = path.read_text()
    assert "kind: wire" in text and "127.0.0.1" not in text and KEY not in text
    assert "events:" in text  # the stream is kept as its server-sent events

    with lock(path) as replay:
        assert chat_agent(chat_client(CLOSED, legacy)) == recorded
    assert [r.body for r in replay.requests] == [r.body for r in run.requests]
    assert not replay.pinned


def test_a_leaked_request_fails_in_replay(tmp_path: Path) -> None:
    """Only model requests are served; anything else goes out, and the port is closed."""
    path = tmp_path / "chat.yaml"
    with serve(REPLIES) as server, lock(path, mode="record"):
        chat_agent(chat_client(server.base_url))
    with lock(path):
        chat_agent(chat_client(CLOSED))
        with pytest.raises(openai.APIConnectionError):
            chat_client(CLOSED).models.list()


@pytest.mark.parametrize("legacy", [False, True], ids=["httpx2", "legacy-httpx"])
def test_async_openai_streams(tmp_path: Path, legacy: bool) -> None:
    path = tmp_path / "async.yaml"

    async def agent(base: str) -> str:
        http = httpx.AsyncClient() if legacy else None
        client = openai.AsyncOpenAI(base_url=base, api_key=KEY, max_retries=0, http_client=http)  # type: ignore[arg-type]
        async with client:
            stream = await client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            return "".join([c.choices[0].delta.content or "" async for c in stream])

    with serve([{"text": "async words"}]) as server, lock(path, mode="record"):
        assert asyncio.run(agent(server.base_url)) == "async words"

    async def replay() -> str:
        async with lock(path):
            return await agent(CLOSED)

    assert asyncio.run(replay()) == "async words"


def responses_agent(client: openai.OpenAI) -> list[str]:
    tools: Any = [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]
    plain = client.responses.create(
        model="gpt-test", instructions="Be brief.", input="hi", tools=tools
    )
    with client.responses.stream(model="gpt-test", instructions="Be brief.", input="more") as s:
        final = s.get_final_response()
    return [plain.output_text, final.output_text]


def test_responses_api_plain_and_streamed(tmp_path: Path) -> None:
    path = tmp_path / "responses.yaml"
    with recording(path, [{"text": "one"}, {"text": "two words"}]) as (server, run):
        assert responses_agent(chat_client(server.base_url)) == ["one", "two words"]
    assert run.requests[0].api == "openai.responses"
    assert run.requests[0].header.system == "Be brief."
    assert run.requests[0].messages == "hi"
    assert run.requests[0].tool_names == ("lookup",)
    with lock(path):
        assert responses_agent(chat_client(CLOSED)) == ["one", "two words"]


def anthropic_agent(client: anthropic.Anthropic) -> list[str]:
    first = client.messages.create(
        model="claude-test",
        max_tokens=64,
        system="You are terse.",
        messages=[{"role": "user", "content": "hi"}],
    )
    with client.messages.stream(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "more"}]
    ) as stream:
        streamed = "".join(stream.text_stream)
    block = first.content[0]
    assert block.type == "text"
    return [block.text, streamed]


def test_anthropic_messages_sync(tmp_path: Path) -> None:
    path = tmp_path / "anthropic.yaml"

    def client(base: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)

    with recording(path, [{"text": "hi back"}, {"text": "a stream"}]) as (server, run):
        assert anthropic_agent(client(server.origin)) == ["hi back", "a stream"]
    assert run.requests[0].api == "anthropic.messages"
    assert run.requests[0].header.system == "You are terse."
    assert KEY not in path.read_text()
    with lock(path):
        assert anthropic_agent(client(CLOSED_ORIGIN)) == ["hi back", "a stream"]


def test_anthropic_messages_async(tmp_path: Path) -> None:
    path = tmp_path / "anthropic-async.yaml"

    async def agent(base: str) -> list[str]:
        client = anthropic.AsyncAnthropic(base_url=base, api_key=KEY, max_retries=0)
        message = await client.messages.create(
            model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
        async with client.messages.stream(
            model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "more"}]
        ) as stream:
            streamed = "".join([t async for t in stream.text_stream])
        block = message.content[0]
        assert block.type == "text"
        return [block.text, streamed]

    with recording(path, [{"text": "async hi"}, {"text": "async stream"}]) as (server, _):
        assert asyncio.run(agent(server.origin)) == ["async hi", "async stream"]
    with lock(path):
        assert asyncio.run(agent(CLOSED_ORIGIN)) == ["async hi", "async stream"]


def tool_loop(client: openai.OpenAI) -> str:
    """A stock tool-call loop: call the tool the model asks for, send the result back."""
    messages: list[Any] = [{"role": "user", "content": "weather?"}]
    tools: Any = [fn_tool("weather")]
    while True:
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            assert call.type == "function"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})


def test_full_tool_call_loop_tokenizes_ids(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    script: Any = [
        {"tool_calls": [{"name": "weather", "arguments": {"q": "Oslo"}}]},
        {"text": "Sunny."},
    ]
    with serve(script) as server, lock(path, mode="record"):
        assert tool_loop(chat_client(server.base_url)) == "Sunny."
    recording = load_wire_recording(path)
    messages = recording.requests[1].messages
    assert messages[1]["tool_calls"][0]["id"] == "<<id:1>>"
    assert messages[2]["tool_call_id"] == "<<id:1>>"
    with lock(path):
        assert tool_loop(chat_client(CLOSED)) == "Sunny."


# -- pins -------------------------------------------------------------------------------


def _record_tools(path: Path, tools: list[dict[str, Any]], *, pin: bool) -> None:
    with serve(REPLIES) as server, lock(path, mode="record", pin=pin):
        chat_agent(chat_client(server.base_url), tools)


def test_unpinned_replay_accepts_a_tool_reorder(tmp_path: Path) -> None:
    path = tmp_path / "unpinned.yaml"
    tools = [fn_tool("alpha"), fn_tool("beta")]
    _record_tools(path, tools, pin=False)
    assert 'tools: "<<tools>>"' in path.read_text()
    with lock(path):
        chat_agent(chat_client(CLOSED), tools[::-1])


def test_pinned_replay_rejects_a_tool_reorder(tmp_path: Path) -> None:
    path = tmp_path / "pinned.yaml"
    tools = [fn_tool("alpha"), fn_tool("beta")]
    _record_tools(path, tools, pin=True)
    runs: list[WireRun] = []
    with pytest.raises(WireMismatch) as info:
        replay(path, lambda: chat_agent(chat_client(CLOSED), tools[::-1]), runs)
    [run] = runs
    message = str(info.value)
    assert "request 1 (openai.chat) tools: order alpha, beta -> beta, alpha" in message
    assert "request 1 (openai.chat) prefix: prefix_sha256" in message
    assert run.pinned and run.differences[0].tool == "alpha"
    assert isinstance(info.value.__context__, openai.BadRequestError)
    with lock(path):  # the recorded order still replays
        chat_agent(chat_client(CLOSED), tools)


def test_pinned_schema_key_order_is_a_prefix_byte_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    swapped = {"properties": {"q": {"type": "string"}}, "type": "object"}

    def agent(base: str, input_schema: dict[str, Any]) -> None:
        client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            system="sys",
            tools=[
                {"name": "fetch", "input_schema": {"type": "object"}},
                {"name": "search", "input_schema": input_schema},
            ],
            messages=[{"role": "user", "content": "hi"}],
        )

    with serve([{"text": "ok"}]) as server, lock(path, mode="record", pin=True) as run:
        agent(server.origin, schema)
    with lock(path):  # unchanged bytes replay
        agent(CLOSED_ORIGIN, schema)
    runs: list[WireRun] = []
    with pytest.raises(WireMismatch) as info:
        replay(path, lambda: agent(CLOSED_ORIGIN, swapped), runs)
    [replayed] = runs
    [difference] = replayed.differences
    assert (difference.segment, difference.tool) == ("prefix", "search")
    assert difference.cache_reason == "tools_changed"
    old = json.loads(run.requests[0].body)
    raw_old, raw_new = run.requests[0].body, replayed.requests[0].body
    tools_at = raw_old.index(b'"tools":') + len(b'"tools":')
    first = next(n for n, (a, b) in enumerate(zip(raw_old, raw_new, strict=False)) if a != b)
    assert difference.offset == first - tools_at
    assert "the same data in other bytes (JSON key order or spacing)" in str(info.value)
    assert "anthropic cache: tools_changed" in str(info.value)
    assert old["tools"][1]["input_schema"] == swapped  # equal as data, different as bytes


def test_replay_reads_pin_from_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "pin.yaml"
    _record_tools(path, [fn_tool("alpha")], pin=True)
    with lock(path, pin=False) as run:
        chat_agent(chat_client(CLOSED), [fn_tool("alpha")])
    assert run.pinned


# -- mismatches ------------------------------------------------------------------------


def test_a_swallowed_mismatch_still_raises(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    with serve(REPLIES) as server, lock(path, mode="record"):
        chat_agent(chat_client(server.base_url))
    client = openai.OpenAI(base_url=CLOSED, api_key=KEY)  # default retries
    caught: list[Exception] = []
    runs: list[WireRun] = []

    def call() -> object:
        messages: Any = [{"role": "user", "content": "hi"}]
        return client.chat.completions.create(model="gpt-other", messages=messages)

    with pytest.raises(WireMismatch) as info:
        replay(path, swallowing(call, caught), runs)
    [error] = caught
    [run] = runs
    assert isinstance(error, openai.BadRequestError)
    assert error.status_code == 400 and "headerlock: request 1 (openai.chat) config" in str(error)
    assert error.response.headers.get("x-should-retry") is None
    assert len(run.requests) == 1  # a 400 is not retried
    message = str(info.value)
    assert 'config.model: "gpt-test" -> "gpt-other"' in message
    assert "request 2 (openai.chat) request: recorded but never sent" in message
    assert info.value.__context__ is None


def test_extra_and_unsent_requests_are_mismatches(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    with serve([{"text": "a"}]) as server, lock(path, mode="record"):
        chat_client(server.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    with pytest.raises(WireMismatch, match="recorded but never sent"):
        replay(path, lambda: None, [])
    client = chat_client(CLOSED)
    messages: Any = [{"role": "user", "content": "x"}]
    call = swallowing(lambda: client.chat.completions.create(model="m", messages=messages), [])
    with pytest.raises(WireMismatch, match=r"request 2 \(openai.chat\) request: sent"):
        replay(path, lambda: [call(), call()], [])


def test_an_agent_error_without_mismatch_propagates(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    with serve(REPLIES) as server, lock(path, mode="record"):
        chat_agent(chat_client(server.base_url))
    with pytest.raises(KeyError):
        replay(path, lambda: {"a": 1}["agent bug"], [])


# -- record mode ----------------------------------------------------------------------


def test_a_failed_record_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    with serve(REPLIES) as server, lock(path, mode="record"):
        chat_agent(chat_client(server.base_url))
    before = path.read_bytes()
    with serve([{"text": "other"}, {"text": "answers"}]) as server:
        with pytest.raises(RuntimeError, match="the agent failed"):
            record_then_fail(path, lambda: chat_agent(chat_client(server.base_url)))
        assert len(server.received) == 2  # the requests went out and were answered
    assert path.read_bytes() == before
    fresh = tmp_path / "never.yaml"
    with pytest.raises(RuntimeError):
        record_then_fail(fresh, lambda: None)
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.yaml"]


def record_then_fail(path: Path, body: Callable[[], object]) -> None:
    with lock(path, mode="record"):
        body()
        raise RuntimeError("the agent failed")


def test_re_records_are_byte_identical_across_ports(tmp_path: Path) -> None:
    texts = []
    for n in range(2):
        path = tmp_path / f"run{n}.yaml"
        with serve(REPLIES) as server, lock(path, mode="record"):
            chat_agent(chat_client(server.base_url), [fn_tool("b"), fn_tool("a")])
        texts.append(path.read_bytes())
    assert texts[0] == texts[1]


def test_script_answers_without_a_server(tmp_path: Path) -> None:
    path = tmp_path / "scripted.yaml"
    with lock(path, mode="record", script=REPLIES) as run:
        assert chat_agent(chat_client(CLOSED)) == ["hello there", "streamed three words"]
    assert len(run.requests) == 2
    with lock(path):
        assert chat_agent(chat_client(CLOSED)) == ["hello there", "streamed three words"]


def scripted(path: Path, script: Any, body: Callable[[], object]) -> None:
    with lock(path, mode="record", script=script):
        body()


def test_an_exhausted_script_raises_at_exit(tmp_path: Path) -> None:
    path = tmp_path / "short.yaml"
    with pytest.raises(ScriptExhaustedError, match="no reply for request 2") as info:
        scripted(path, REPLIES[:1], lambda: chat_agent(chat_client(CLOSED)))
    assert isinstance(info.value.__context__, openai.BadRequestError)
    assert not path.exists()


# -- secrets --------------------------------------------------------------------------


def test_secrets_from_headers_env_and_redact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret.yaml"
    monkeypatch.setenv("MY_TOKEN", "tok-9876543210")

    def agent(client: openai.OpenAI) -> str:
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "token tok-9876543210 in /home/alice"}]
        )
        said = first.choices[0].message.content or ""
        messages: Any = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": said},
            {"role": "tool", "tool_call_id": "c1", "content": f"env key {KEY}"},
        ]
        return client.chat.completions.create(model="m", messages=messages).id

    replies = [{"text": "you are"}, {"text": "ok"}]
    options: Any = {"redact_env": ["MY_TOKEN"], "redact": _home}
    with recording(path, replies, echo_header="authorization", **options) as (server, run):
        agent(chat_client(server.base_url))
    text = path.read_text()
    assert KEY not in text and "tok-9876543210" not in text and "alice" not in text
    assert "you are <<secret>>" in text  # the echoed "Bearer <key>" header, in the response
    assert "env key <<secret>>" in text  # in a tool output
    assert "token <<secret>> in <<home>>" in text
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"
    assert run.requests[0].body.count(b"tok-9876543210") == 1  # live data is not scrubbed

    other = "sk-another-key-for-ci-0002"  # replay in CI with another key
    with lock(path, redact_env=["MY_TOKEN"], redact=_home):
        client = openai.OpenAI(base_url=CLOSED, api_key=other, max_retries=0)
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "token tok-9876543210 in /home/alice"}]
        )
        assert first.choices[0].message.content == "you are <<secret>>"
        client.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "you are <<secret>>"},
                {"role": "tool", "tool_call_id": "c9", "content": f"env key {other}"},
            ],
        )


def _home(text: str) -> str:
    return text.replace("/home/alice", "<<home>>")


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_anthropic_key_never_recorded(tmp_path: Path, header: str) -> None:
    path = tmp_path / "anthropic.yaml"
    headers = {"x-api-key": KEY} if header == "x-api-key" else {}
    with serve([{"text": "hello"}], echo_header=header) as server, lock(path, mode="record"):
        client = anthropic.Anthropic(base_url=server.origin, api_key=KEY, default_headers=headers)
        client.messages.create(
            model="c", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    text = path.read_text()
    assert KEY not in text and "hello <<secret>>" in text
