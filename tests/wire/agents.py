"""Agents on the real SDK clients and helpers for the wire lock tests."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai

from headerlock.testing.wire.lock import lock
from headerlock.testing.wire.run import WireRun
from tests.model_server import ModelServer

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
    server: ModelServer, path: Path, replies: Any, *, echo_header: str | None = None, **options: Any
) -> Iterator[WireRun]:
    """``server`` answering ``replies``, and a record lock around it."""
    server.script(replies, echo_header=echo_header)
    with lock(path, mode="record", **options) as run:
        yield run


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


def responses_agent(client: openai.OpenAI) -> list[str]:
    tools: Any = [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]
    plain = client.responses.create(
        model="gpt-test", instructions="Be brief.", input="hi", tools=tools
    )
    with client.responses.stream(model="gpt-test", instructions="Be brief.", input="more") as s:
        final = s.get_final_response()
    return [plain.output_text, final.output_text]


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
