"""``headerlock.testing.wire.lock``: the real OpenAI and Anthropic SDK clients, recorded
against a real server on 127.0.0.1 and replayed against a closed port."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from headerlock.errors import ConfigError, ScriptExhaustedError, WireMismatch, WireRecordingError
from headerlock.formats.wire_recording import load_wire_recording
from headerlock.testing.wire.clients import httpx_client as transport
from headerlock.testing.wire.lock import lock
from tests.model_server import ModelServer, serve
from tests.wire.agents import (
    CLOSED,
    CLOSED_ORIGIN,
    KEY,
    REPLIES,
    anthropic_agent,
    chat_agent,
    chat_client,
    fn_tool,
    recording,
    responses_agent,
    tool_loop,
)


@pytest.mark.parametrize("legacy", [False, True], ids=["httpx2", "legacy-httpx"])
def test_chat_plain_and_streamed_record_then_replay_offline(
    tmp_path: Path, legacy: bool, model_server: ModelServer
) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record") as run:
        recorded = chat_agent(chat_client(model_server.base_url, legacy))
    assert recorded == ["hello there", "streamed three words"]
    assert [r.api for r in run.requests] == ["openai.chat", "openai.chat"]
    first = run.requests[0]
    assert first.header.system == [{"role": "system", "content": "You are terse."}]
    assert first.header.config == {"model": "gpt-test"}
    assert json.loads(first.body)["messages"][1] == {"role": "user", "content": "hi"}
    text = path.read_text()
    assert "kind: wire" in text and "127.0.0.1" not in text and KEY not in text
    assert "stream: |\n" in text  # the stream is kept as its events' text, one per line
    assert "\n      data: {" in text and "events:" not in text

    with lock(path) as replay:
        assert chat_agent(chat_client(CLOSED, legacy)) == recorded
    assert [r.body for r in replay.requests] == [r.body for r in run.requests]
    assert not replay.pinned


def test_an_unrecorded_request_is_refused_in_replay_and_fails_the_lock(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """A sealed replay forwards nothing: an unrecorded request fails naming its URL, even
    when the agent swallows the connection error."""
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record"):
        chat_agent(chat_client(model_server.base_url))
    hits = len(model_server.hits)

    def agent_that_lists_models() -> None:
        chat_agent(chat_client(model_server.base_url))
        with pytest.raises(openai.APIConnectionError):
            chat_client(model_server.base_url).models.list()

    expected = pytest.raises(WireMismatch, match=r"GET /v1/models is not in the recording")
    with expected, lock(path):
        agent_that_lists_models()
    assert len(model_server.hits) == hits


@pytest.mark.parametrize("legacy", [False, True], ids=["httpx2", "legacy-httpx"])
def test_async_openai_streams(tmp_path: Path, legacy: bool, model_server: ModelServer) -> None:
    path = tmp_path / "async.yaml"

    async def agent(base: str) -> str:
        http = httpx.AsyncClient() if legacy else None
        client = openai.AsyncOpenAI(base_url=base, api_key=KEY, max_retries=0, http_client=http)  # type: ignore[arg-type]
        async with client:
            stream = await client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            return "".join([c.choices[0].delta.content or "" async for c in stream])

    model_server.script([{"text": "async words"}])
    with lock(path, mode="record"):
        assert asyncio.run(agent(model_server.base_url)) == "async words"

    async def replay() -> str:
        async with lock(path):
            return await agent(CLOSED)

    assert asyncio.run(replay()) == "async words"


def test_responses_api_plain_and_streamed(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "responses.yaml"
    with recording(model_server, path, [{"text": "one"}, {"text": "two words"}]) as run:
        assert responses_agent(chat_client(model_server.base_url)) == ["one", "two words"]
    assert run.requests[0].api == "openai.responses"
    assert run.requests[0].header.system == "Be brief."
    assert run.requests[0].messages == "hi"
    assert run.requests[0].tool_names == ("lookup",)
    with lock(path):
        assert responses_agent(chat_client(CLOSED)) == ["one", "two words"]


def test_anthropic_messages_sync(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "anthropic.yaml"

    def client(base: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)

    with recording(model_server, path, [{"text": "hi back"}, {"text": "a stream"}]) as run:
        assert anthropic_agent(client(model_server.origin)) == ["hi back", "a stream"]
    assert run.requests[0].api == "anthropic.messages"
    assert run.requests[0].header.system == "You are terse."
    assert KEY not in path.read_text()
    with lock(path):
        assert anthropic_agent(client(CLOSED_ORIGIN)) == ["hi back", "a stream"]


def test_anthropic_messages_async(tmp_path: Path, model_server: ModelServer) -> None:
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

    with recording(model_server, path, [{"text": "async hi"}, {"text": "async stream"}]):
        assert asyncio.run(agent(model_server.origin)) == ["async hi", "async stream"]
    with lock(path):
        assert asyncio.run(agent(CLOSED_ORIGIN)) == ["async hi", "async stream"]


def test_full_tool_call_loop_tokenizes_ids(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "loop.yaml"
    script: Any = [
        {"tool_calls": [{"name": "weather", "arguments": {"q": "Oslo"}}]},
        {"text": "Sunny."},
    ]
    model_server.script(script)
    with lock(path, mode="record"):
        assert tool_loop(chat_client(model_server.base_url)) == "Sunny."
    recording = load_wire_recording(path)
    messages = recording.requests[1].messages
    assert messages[1]["tool_calls"][0]["id"] == "<<id:1>>"
    assert messages[2]["tool_call_id"] == "<<id:1>>"
    with lock(path):
        assert tool_loop(chat_client(CLOSED)) == "Sunny."


# -- record mode ----------------------------------------------------------------------


def test_a_failed_record_keeps_the_old_file(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record"):
        chat_agent(chat_client(model_server.base_url))
    before = path.read_bytes()
    model_server.reset()
    model_server.script([{"text": "other"}, {"text": "answers"}])
    with pytest.raises(RuntimeError, match="the agent failed"):
        record_then_fail(path, lambda: chat_agent(chat_client(model_server.base_url)))
    assert len(model_server.hits) == 2  # the requests went out and were answered
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
        with serve() as server, lock(path, mode="record"):  # a new server: another port
            server.script(REPLIES)
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


# -- misuse ---------------------------------------------------------------------------


def test_misuse_is_a_config_error(tmp_path: Path, model_server: ModelServer) -> None:
    path = tmp_path / "chat.yaml"
    model_server.script(REPLIES)
    with lock(path, mode="record"):
        chat_agent(chat_client(model_server.base_url))
    with pytest.raises(ConfigError, match="the recording is not pinned; record it with pin=True"):
        lock(path, pin=True).__enter__()
    with pytest.raises(
        ConfigError,
        match=r"^lock\(\): mode = 'live': expected a record mode: none, new or all \(aliases:"
        r" replay = none, record = all\)$",
    ):
        lock(path, mode="live")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"mode 'none' needs the path of a wire recording"):
        lock(None)
    with pytest.raises(WireRecordingError, match="no such wire recording"):
        lock(tmp_path / "missing.yaml").__enter__()
    assert transport.patched_classes() == []
