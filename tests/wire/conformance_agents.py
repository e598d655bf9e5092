"""One agent per model API for the conformance test: the same conversation sent through
each API's real SDK client (``openai``, ``anthropic``, ``google-genai``, ``boto3``).

``ask(api, origin, ...)`` sends one request: a system prompt, tools given as
``(name, description, schema)``, and the conversation as ``(role, text)`` turns,
streamed or not, with a cache breakpoint after the system where the API has them
(``mark``); it returns the answer's text. Each client carries a planted credential
(``KEYS``; Bedrock's secret key and session token never travel, only their signature).
As a user's agent does, each keeps one client per API and origin.

This module imports only the SDKs: the conformance test copies its source into the
pytest projects it lays out, as a user's own agent module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import anthropic
import boto3  # type: ignore[import-untyped]
import openai
from google import genai
from google.genai import types

Tool = tuple[str, str, dict[str, Any]]
"""A tool: its name, description and JSON schema."""
Turn = tuple[str, str]
"""A turn of the conversation: ``user`` or ``assistant``, and its text."""

KEYS: dict[str, tuple[str, ...]] = {
    "openai.chat": ("sk-conformance-chat-PLANTED-key-0001",),
    "openai.responses": ("sk-conformance-responses-PLANTED-key-0002",),
    "anthropic.messages": ("sk-ant-conformance-PLANTED-key-0003",),
    "gemini.generate": ("AIzaSy-conformance-PLANTED-key-0004",),
    "bedrock.converse": (
        "AKIACONFORMANCE00005",
        "conformance/PLANTED/secretAccessKey/0005EXAMPLE",
        "FwoGZXIvconformancePLANTEDsessionToken0005",
    ),
}
"""The credential each client is given (Bedrock: key id, secret key, session token)."""

MODELS: dict[str, str] = {
    "openai.chat": "gpt-4o",
    "openai.responses": "gpt-4o",
    "anthropic.messages": "claude-sonnet-4-5",
    "gemini.generate": "gemini-2.5-flash",
    "bedrock.converse": "anthropic.claude-sonnet-4-5-20250929-v1:0",
}

Ask = Callable[[str, str, Sequence[Tool], Sequence[Turn], bool, bool], str]


@cache
def _openai(api: str, origin: str) -> openai.OpenAI:
    [key] = KEYS[api]
    return openai.OpenAI(base_url=f"{origin}/v1", api_key=key, max_retries=0)


@cache
def _anthropic_client(origin: str) -> anthropic.Anthropic:
    [key] = KEYS["anthropic.messages"]
    return anthropic.Anthropic(base_url=origin, api_key=key, max_retries=0)


@cache
def _gemini_client(origin: str) -> genai.Client:
    [key] = KEYS["gemini.generate"]
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=origin))


@cache
def _bedrock_client(origin: str) -> Any:
    key_id, secret, token = KEYS["bedrock.converse"]
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=origin,
        region_name="us-east-1",
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        aws_session_token=token,
    )


def _chat(origin: str, system: str, tools: Sequence[Tool], turns: Sequence[Turn], stream: bool,
          mark: bool) -> str:  # fmt: skip
    client = _openai("openai.chat", origin)
    messages: Any = [{"role": "system", "content": system}]
    messages += [{"role": role, "content": text} for role, text in turns]
    listed: Any = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": s}}
        for n, d, s in tools
    ]
    model = MODELS["openai.chat"]
    if not stream:
        reply = client.chat.completions.create(model=model, messages=messages, tools=listed)
        return reply.choices[0].message.content or ""
    chunks = client.chat.completions.create(
        model=model, messages=messages, tools=listed, stream=True
    )
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _responses(origin: str, system: str, tools: Sequence[Tool], turns: Sequence[Turn],
               stream: bool, mark: bool) -> str:  # fmt: skip
    client = _openai("openai.responses", origin)
    given: Any = [{"role": role, "content": text} for role, text in turns]
    listed: Any = [
        {"type": "function", "name": n, "description": d, "parameters": s} for n, d, s in tools
    ]
    model = MODELS["openai.responses"]
    if not stream:
        reply = client.responses.create(model=model, instructions=system, input=given, tools=listed)
        return reply.output_text
    with client.responses.stream(
        model=model, instructions=system, input=given, tools=listed
    ) as events:
        return events.get_final_response().output_text


def _anthropic(origin: str, system: str, tools: Sequence[Tool], turns: Sequence[Turn],
               stream: bool, mark: bool) -> str:  # fmt: skip
    client = _anthropic_client(origin)
    blocks: Any = [{"type": "text", "text": system}]
    if mark:
        blocks[0]["cache_control"] = {"type": "ephemeral"}
    messages: Any = [{"role": role, "content": text} for role, text in turns]
    listed: Any = [{"name": n, "description": d, "input_schema": s} for n, d, s in tools]
    fields: Any = {"model": MODELS["anthropic.messages"], "max_tokens": 256}
    if not stream:
        reply = client.messages.create(system=blocks, messages=messages, tools=listed, **fields)
        return "".join(b.text for b in reply.content if b.type == "text")
    with client.messages.stream(system=blocks, messages=messages, tools=listed, **fields) as s:
        return "".join(s.text_stream)


def _gemini(origin: str, system: str, tools: Sequence[Tool], turns: Sequence[Turn],
            stream: bool, mark: bool) -> str:  # fmt: skip
    client = _gemini_client(origin)
    contents = [
        types.Content(role="model" if role == "assistant" else "user", parts=[types.Part(text=t)])
        for role, t in turns
    ]
    declarations = [
        types.FunctionDeclaration(name=n, description=d, parameters_json_schema=s)
        for n, d, s in tools
    ]
    config = types.GenerateContentConfig(
        system_instruction=system,
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    model = MODELS["gemini.generate"]
    if not stream:
        return (
            client.models.generate_content(model=model, contents=contents, config=config).text or ""
        )
    chunks = client.models.generate_content_stream(model=model, contents=contents, config=config)
    return "".join(chunk.text or "" for chunk in chunks)


def _bedrock(origin: str, system: str, tools: Sequence[Tool], turns: Sequence[Turn],
             stream: bool, mark: bool) -> str:  # fmt: skip
    client = _bedrock_client(origin)
    point = {"cachePoint": {"type": "default"}}
    fields: Any = {
        "modelId": MODELS["bedrock.converse"],
        "system": [{"text": system}, *([point] if mark else [])],
        "messages": [{"role": role, "content": [{"text": text}]} for role, text in turns],
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": n, "description": d, "inputSchema": {"json": s}}}
                for n, d, s in tools
            ]
        },
        "inferenceConfig": {"maxTokens": 256},
    }
    if not stream:
        content = client.converse(**fields)["output"]["message"]["content"]
        return "".join(block.get("text", "") for block in content)
    events = client.converse_stream(**fields)["stream"]  # botocore's event-stream parser
    return "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
    )


AGENTS: dict[str, Ask] = {
    "openai.chat": _chat,
    "openai.responses": _responses,
    "anthropic.messages": _anthropic,
    "gemini.generate": _gemini,
    "bedrock.converse": _bedrock,
}
"""The agent of each model API (the conformance test fails for an API missing here)."""


def ask(
    api: str,
    origin: str,
    *,
    system: str,
    tools: Sequence[Tool],
    turns: Sequence[Turn] = (("user", "hi"),),
    stream: bool = False,
    mark: bool = False,
) -> str:
    """Send one request of ``api`` to ``origin`` through its SDK; the answer's text."""
    return AGENTS[api](origin, system, tools, turns, stream, mark)
