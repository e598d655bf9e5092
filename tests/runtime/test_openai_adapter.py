"""The live OpenAI-compatible adapter against a real loopback HTTP server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from headerlock.agent import ToolSchema
from headerlock.errors import ConfigError, ModelError
from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter
from headerlock.runtime.app import AgentApp
from headerlock.runtime.header import RequestHeader
from headerlock.runtime.llm import ModelRequest, StreamItem, TextDelta, ToolCallRequest
from tests.model_server import (
    ModelServer,
    chat_stream,
    json_answer,
    text_chunks,
    tool_call_chunks,
)

SECRET = "sk-sentinel-0123456789abcdef"


def collect(adapter: OpenAICompatAdapter, request: ModelRequest) -> list[StreamItem]:
    async def go() -> list[StreamItem]:
        return [item async for item in adapter.stream(request)]

    return asyncio.run(go())


REQUEST = ModelRequest(
    RequestHeader(
        {"model": "demo", "temperature": 0.0},
        "Be brief.",
        (
            ToolSchema(
                "read",
                "Read a file",
                {"type": "object", "properties": {"path": {"type": "string"}}},
            ),
        ),
    ),
    ({"role": "user", "content": "hi"},),
)


def test_streams_text_and_maps_the_header_to_the_wire(model_server: ModelServer) -> None:
    model_server.route("*/chat/completions", chat_stream(text_chunks("Hel", "lo")))
    adapter = OpenAICompatAdapter(base_url=model_server.base_url, api_key=SECRET)
    assert collect(adapter, REQUEST) == [TextDelta("Hel"), TextDelta("lo")]
    sent = model_server.hits[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    body = sent.json()
    assert body["stream"] is True and body["model"] == "demo" and body["temperature"] == 0.0
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    assert SECRET not in repr(adapter)


def test_assembles_streamed_tool_calls(model_server: ModelServer) -> None:
    chunks = tool_call_chunks("call_a", "read", '{"path": "notes.txt"}')
    model_server.route("*/chat/completions", chat_stream(chunks))
    items = collect(OpenAICompatAdapter(base_url=model_server.base_url), REQUEST)
    assert items == [ToolCallRequest("call_a", "read", {"path": "notes.txt"})]


def test_malformed_tool_call_arguments_are_a_model_error(model_server: ModelServer) -> None:
    model_server.route(
        "*/chat/completions", chat_stream(tool_call_chunks("c", "read", '{"path": '))
    )
    with pytest.raises(ModelError, match='malformed arguments for tool "read"'):
        collect(OpenAICompatAdapter(base_url=model_server.base_url), REQUEST)


def test_http_errors_name_the_status_and_never_the_key(model_server: ModelServer) -> None:
    model_server.route(
        "*/chat/completions", json_answer({"error": {"message": f"invalid key {SECRET}"}}, 401)
    )
    with pytest.raises(ModelError) as info:
        collect(OpenAICompatAdapter(base_url=model_server.base_url, api_key=SECRET), REQUEST)
    assert "HTTP 401" in str(info.value)
    assert SECRET not in str(info.value)


def test_timeouts_are_a_model_error(model_server: ModelServer) -> None:
    model_server.route("*/chat/completions", chat_stream(text_chunks("late"), delay=1.0))
    adapter = OpenAICompatAdapter(base_url=model_server.base_url, timeout=0.2)
    with pytest.raises(ModelError, match=r"timed out after 0\.2s"):
        collect(adapter, REQUEST)


def test_from_env_and_the_full_loop_over_http(
    monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> None:
    with pytest.raises(ConfigError, match="set HEADERLOCK_BASE_URL"):
        OpenAICompatAdapter.from_env(environ={})
    with pytest.raises(ConfigError, match="HEADERLOCK_TIMEOUT must be a positive finite number"):
        OpenAICompatAdapter.from_env(
            environ={"HEADERLOCK_BASE_URL": "http://x", "HEADERLOCK_TIMEOUT": "soon"}
        )
    first = tool_call_chunks("call_1", "read", "{}")
    model_server.route("*/chat/completions", chat_stream(first), chat_stream(text_chunks("done")))
    monkeypatch.setenv("HEADERLOCK_BASE_URL", model_server.base_url)
    monkeypatch.setenv("HEADERLOCK_API_KEY", SECRET)

    def plugin(ctx: Any) -> None:
        ctx.tools.register(ToolSchema("read"), lambda a: "contents")

    app = AgentApp({"model": "live-model"}, plugins=[plugin])

    async def go() -> Any:
        await app.start()
        return await app.run_turn("read it")

    result = asyncio.run(go())
    assert (result.reason.kind, result.text) == ("stop", "done")
    second = model_server.hits[1].json()["messages"]
    assert second[-2]["tool_calls"][0]["function"] == {"name": "read", "arguments": "{}"}
    assert second[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "contents"}
    assert SECRET not in str(app.session.to_data())
