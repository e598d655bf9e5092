"""Argument re-serialization: a tool call's arguments sent back in other bytes than the
model emitted them (key order, spacing, number formatting) is ``history-rewritten`` at
the request that first sends the turn back, naming the call, on the APIs that carry
arguments as text (OpenAI chat, responses) or as objects (Anthropic, Gemini, Bedrock: from a
ConverseStream, the ``toolUse.input`` pieces joined and parsed); sending back what
the model emitted is no finding. Recorded through the real SDKs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from headerlock import wire
from tests.model_server import ModelServer
from tests.wire.cache.corpus import KEY, LONG

CALL = {"tool_calls": [{"name": "search", "arguments": {"query": "cache", "limit": 2}}]}
SCRIPT: list[Any] = [CALL, {"text": "found it"}]
TOOL = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}


def reordered(raw: str) -> str:
    """The same data, keys reversed and spaced differently (what a parse-and-dump does)."""
    return json.dumps(dict(reversed(list(json.loads(raw).items()))), indent=1)


def chat(server: ModelServer, rewrite: bool, stream: bool) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    tools: Any = [{"type": "function", "function": {"name": "search", "parameters": TOOL}}]
    messages: list[Any] = [
        {"role": "system", "content": LONG},
        {"role": "user", "content": "Find the cache notes."},
    ]
    if stream:
        calls: dict[int, dict[str, str]] = {}
        for chunk in client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools, stream=True
        ):
            for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                got = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                got["id"] += delta.id or ""
                got["name"] += (delta.function.name or "") if delta.function else ""
                got["arguments"] += (delta.function.arguments or "") if delta.function else ""
        call_id, name, raw = calls[0]["id"], calls[0]["name"], calls[0]["arguments"]
    else:
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
        made: Any = (reply.choices[0].message.tool_calls or [])[0]
        call_id, name, raw = made.id, made.function.name, made.function.arguments
    sent = reordered(raw) if rewrite else raw
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": sent}}
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": "notes/cache.md"},
    ]  # fmt: skip
    client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)


def responses(server: ModelServer, rewrite: bool, stream: bool) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    tools: Any = [{"type": "function", "name": "search", "parameters": TOOL}]
    given: list[Any] = [{"role": "user", "content": "Find the cache notes."}]
    reply = client.responses.create(model="gpt-4o", instructions=LONG, input=given, tools=tools)
    made = next(item for item in reply.output if item.type == "function_call")
    sent = reordered(made.arguments) if rewrite else made.arguments
    given += [
        {"type": "function_call", "call_id": made.call_id, "name": made.name,
         "arguments": sent},
        {"type": "function_call_output", "call_id": made.call_id, "output": "notes/cache.md"},
    ]  # fmt: skip
    client.responses.create(model="gpt-4o", instructions=LONG, input=given, tools=tools)


def claude(server: ModelServer, rewrite: bool, stream: bool) -> None:
    client = anthropic.Anthropic(base_url=server.origin, api_key=KEY, max_retries=0)
    tools: Any = [{"name": "search", "input_schema": TOOL}]
    system: Any = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    messages: list[Any] = [{"role": "user", "content": "Find the cache notes."}]
    fields: Any = {"model": "claude-sonnet-4-5", "max_tokens": 256, "system": system}
    if stream:  # the SDK joins the partial_json pieces and parses them
        with client.messages.stream(messages=messages, tools=tools, **fields) as events:
            reply = events.get_final_message()
    else:
        reply = client.messages.create(messages=messages, tools=tools, **fields)
    use = next(block for block in reply.content if block.type == "tool_use")
    given = dict(use.input)
    if rewrite:  # a number re-formatted on the way back: 2 -> 2.0
        given["limit"] = float(str(given["limit"]))
    messages += [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": use.id, "name": use.name, "input": given}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": "notes/cache.md"}
        ]},
    ]  # fmt: skip
    client.messages.create(
        model="claude-sonnet-4-5", max_tokens=256, system=system, messages=messages, tools=tools
    )


def gemini(server: ModelServer, rewrite: bool, stream: bool) -> None:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=server.origin))
    declaration = types.FunctionDeclaration(name="search", parameters_json_schema=TOOL)
    config = types.GenerateContentConfig(
        system_instruction=LONG,
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Find it.")])]
    reply = client.models.generate_content(
        model="gemini-2.5-flash", contents=contents, config=config
    )
    call: Any = (reply.function_calls or [])[0]
    args = dict(call.args)
    if rewrite:  # a number re-formatted on the way back: 2 -> 2.0
        args["limit"] = float(str(args["limit"]))
    contents += [
        types.Content(role="model", parts=[
            types.Part(function_call=types.FunctionCall(name=call.name, args=args))
        ]),
        types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                name=call.name, response={"result": "notes/cache.md"}))
        ]),
    ]  # fmt: skip
    client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)


def bedrock(server: ModelServer, rewrite: bool, stream: bool) -> None:
    """A boto3 agent; streamed, it joins the ``toolUse.input`` pieces and parses them."""
    import boto3  # type: ignore[import-untyped]

    client = boto3.client(
        "bedrock-runtime", endpoint_url=server.origin, region_name="us-east-1",
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE", aws_secret_access_key="not-a-real-secret-key",
    )  # fmt: skip
    fields: Any = {
        "modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "system": [{"text": LONG}, {"cachePoint": {"type": "default"}}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "search", "inputSchema": {"json": TOOL}}}]},
    }
    messages: list[Any] = [{"role": "user", "content": [{"text": "Find the cache notes."}]}]
    if stream:
        events = list(client.converse_stream(messages=messages, **fields)["stream"])
        [use] = [
            e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e
        ]
        pieces = [e["contentBlockDelta"]["delta"].get("toolUse", {}).get("input", "")
                  for e in events if "contentBlockDelta" in e]  # fmt: skip
        use = {**use, "input": json.loads("".join(pieces))}
    else:
        content = client.converse(messages=messages, **fields)["output"]["message"]["content"]
        [use] = [block["toolUse"] for block in content if "toolUse" in block]
    given = dict(use["input"])
    if rewrite:  # a number re-formatted on the way back: 2 -> 2.0
        given["limit"] = float(str(given["limit"]))
    result = {"toolUseId": use["toolUseId"], "content": [{"text": "notes/cache.md"}]}
    messages += [
        {"role": "assistant", "content": [{"toolUse": {**use, "input": given}}]},
        {"role": "user", "content": [{"toolResult": result}]},
    ]
    client.converse(messages=messages, **fields)


AGENTS: dict[str, Callable[[ModelServer, bool, bool], None]] = {
    "gemini": gemini,
    "chat": lambda s, r, _: chat(s, r, stream=False),
    "chat-stream": lambda s, r, _: chat(s, r, stream=True),
    "responses": responses,
    "anthropic": claude,
    "anthropic-stream": lambda s, r, _: claude(s, r, stream=True),
    "bedrock": lambda s, r, _: bedrock(s, r, stream=False),
    "bedrock-stream": lambda s, r, _: bedrock(s, r, stream=True),
}


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_arguments_sent_back_in_other_bytes_are_history_rewritten(
    model_server: ModelServer, tmp_path: Path, name: str
) -> None:
    for rewrite in (False, True):
        model_server.reset()
        model_server.script(SCRIPT)
        path = tmp_path / f"{name}-{rewrite}.yaml"
        with wire.lock(path, mode="record", pin=True) as run:
            AGENTS[name](model_server, rewrite, False)
        for report in (wire.cache_report(run), wire.cache_report(path)):
            text = report.to_text()
            found = [(f.number, f.segment, f.code, f.tool) for f in report.findings]
            if not rewrite:
                assert found == [], text
                continue
            assert found == [(2, "messages", "history-rewritten", "search")], text
            detail = report.findings[0].detail
            assert detail.startswith(
                "tool call search: the arguments are sent back as the same data in other bytes: "
            ), detail
            assert report.requests[1].continues == 1
