"""Issue 22's in-process workloads: the SDK calls, and the bytes that answer them.

Each workload is a sequence of official-OpenAI-SDK calls (``drive``) and the
reply to its ``number``-th request (``reply``), which depends on the request
number only: the loopback server answers a record with it, and the floor's
``httpx2.MockTransport`` serves the same bytes, prepared before the clock starts.

- ``tools``: 200 tools and a 30 KB system prompt, ``size`` independent requests;
- ``session``: one conversation of ``size`` growing requests (each reply is a
  tool call; its result is appended; the last reply is text);
- ``stream``: ``size`` streamed replies of ``EVENTS`` server-sent events each;
- ``gather``: ``size`` rounds of a 20-way ``asyncio.gather`` (``AsyncOpenAI``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

WIDTH = 20
"""Requests per ``asyncio.gather`` of the ``gather`` workload."""
MODEL = "gpt-4o-mini"
SYSTEM_30KB = " ".join(
    f"Rule {n:04d}: answer in plain words and cite the file." for n in range(560)
)
SHORT_SYSTEM = " ".join(f"Rule {n}: be terse." for n in range(100))


@dataclass(frozen=True, slots=True)
class Size:
    """How many calls a workload makes: ``size`` (and ``events`` per stream)."""

    size: int
    events: int = 0


def tool(n: int) -> dict[str, Any]:
    """Tool ``n`` of the 200-tool workload: a realistic function schema."""
    return {"type": "function", "function": {
        "name": f"tool_{n:03d}", "description": f"Tool number {n}: reads one file and reports.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "The file to read."},
            "limit": {"type": "integer", "description": "At most this many lines."}},
            "required": ["path"]}}}  # fmt: skip


TOOLS_200 = [tool(n) for n in range(200)]
WORD_COUNT = [tool(0)]


def _completion(number: int, message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 1_700_000_000,
        "model": MODEL, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


def _tool_call(number: int) -> dict[str, Any]:
    call = {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": "tool_000", "arguments": json.dumps({"path": f"f{number}.txt"})},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}  # fmt: skip


def _sse(number: int, events: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        data = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk",
                "created": 1_700_000_000, "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
        return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""}, None)]
    parts += [chunk({"content": f"w{k} "}, None) for k in range(events - 2)]
    parts += [chunk({}, "stop"), b"data: [DONE]\n\n"]
    return b"".join(parts)


def reply(workload: str, number: int, size: Size) -> tuple[str, bytes]:
    """The content type and body answering request ``number`` (from 1) of ``workload``."""
    if workload == "stream":
        return "text/event-stream", _sse(number, size.events)
    if workload == "session" and number < size.size:
        body = _completion(number, _tool_call(number), "tool_calls")
    else:
        text = {"role": "assistant", "content": f"Answer {number}: the file has 6 words."}
        body = _completion(number, text, "stop")
    return "application/json", json.dumps(body).encode()


def requests_of(workload: str, size: Size) -> int:
    """How many requests ``drive`` sends."""
    return size.size * WIDTH if workload == "gather" else size.size


def _tools(client: Any, size: Size) -> None:
    for i in range(size.size):
        client.chat.completions.create(model=MODEL, tools=TOOLS_200, messages=[
            {"role": "system", "content": SYSTEM_30KB},
            {"role": "user", "content": f"Question {i}: what is in notes.txt?"}])  # fmt: skip


def _session(client: Any, size: Size) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SHORT_SYSTEM},
                                      {"role": "user", "content": "Read the files one by one."}]  # fmt: skip
    for _ in range(size.size):
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=WORD_COUNT)
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            text = f"{call.function.arguments}: the file holds six words of plain text."
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    raise AssertionError("the session did not end with a text reply")


def _stream(client: Any, size: Size) -> None:
    for i in range(size.size):
        got = 0
        stream = client.chat.completions.create(model=MODEL, stream=True, messages=[
            {"role": "user", "content": f"Stream {i}: write many words."}])  # fmt: skip
        for _chunk in stream:
            got += 1
        if got != size.events:
            raise AssertionError(f"stream {i}: {got} events, not {size.events}")


async def _gather(client: Any, size: Size) -> None:
    for i in range(size.size):
        replies = await asyncio.gather(*(
            client.chat.completions.create(model=MODEL, messages=[
                {"role": "system", "content": SHORT_SYSTEM},
                {"role": "user", "content": f"Question {i}-{k}: what is in notes.txt?"}])
            for k in range(WIDTH)))  # fmt: skip
        if len(replies) != WIDTH:
            raise AssertionError("a gather lost a reply")


SYNC: dict[str, Callable[[Any, Size], None]] = {
    "tools": _tools,
    "session": _session,
    "stream": _stream,
}


def drive(workload: str, make_client: Callable[[bool], Any], size: Size) -> None:
    """Send ``workload``'s requests through a client of ``make_client(is_async)``."""
    if workload != "gather":
        SYNC[workload](make_client(False), size)
        return

    async def go() -> None:
        client = make_client(True)
        try:
            await _gather(client, size)
        finally:
            await client.close()

    asyncio.run(go())


def kind_of(body: dict[str, Any]) -> str:
    """Which workload sent ``body`` (the loopback server answers several in one process)."""
    if body.get("stream"):
        return "stream"
    tools = body.get("tools") or ()
    if len(tools) == len(TOOLS_200):
        return "tools"
    return "session" if tools else "gather"


def answer(sizes: dict[str, Size]) -> Callable[[dict[str, Any], int], tuple[str, bytes]]:
    """The loopback server's replies for workloads of ``sizes`` (one size per workload)."""

    def respond(body: dict[str, Any], number: int) -> tuple[str, bytes]:
        workload = kind_of(body)
        if workload == "session":  # the reply follows the conversation, not the server's count
            done = sum(1 for m in body.get("messages", ()) if m.get("role") == "tool")
            return reply(workload, done + 1, sizes[workload])
        return reply(workload, number, sizes[workload])

    return respond
