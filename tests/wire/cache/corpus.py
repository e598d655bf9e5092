"""The cache-report corpus: recorded sessions of the real SDK clients, each with one
planted cache break (or none), over real HTTP to the loopback model server.

A session is three requests of one conversation (``Req``); ``planted(code, api)``
changes what the code needs (at request 3, or the whole session for
``prefix-too-short``); ``record`` sends them through the API's SDK client under a
recording ``wire.lock`` and returns the run and the recording's path. ``EXPECTED``
says where each planted break must be found: (request, segment, code).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anthropic
import boto3  # type: ignore[import-untyped]
import openai
from google import genai
from google.genai import types

from headerlock import wire
from headerlock.testing.wire.run import WireRun
from tests.model_server import ModelServer

KEY = "sk-test-not-a-real-key-0020"
APIS = (
    "openai.chat",
    "openai.responses",
    "anthropic.messages",
    "gemini.generate",
    "bedrock.converse",
)
MODELS = {
    "openai.chat": "gpt-4o",
    "openai.responses": "gpt-4o",
    "anthropic.messages": "claude-sonnet-4-5",
    "gemini.generate": "gemini-2.5-flash",
    "bedrock.converse": "anthropic.claude-sonnet-4-5-20250929-v1:0",
}
BREAKPOINT_APIS = ("anthropic.messages", "bedrock.converse")
"""The APIs that cache only at explicit breakpoints (``cache_control``, ``cachePoint``)."""
LONG = " ".join(
    f"Rule {n}: answer in plain words, cite the file you read, and never guess a path."
    for n in range(70)
)
"""A system prompt of about 5,800 bytes: over every model's minimum (~1,450 tokens)."""


def schema(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {n: {"type": "string"} for n in names},
        "required": list(names[:1]),
    }


TOOLS = (
    ("read_file", "Read a file.", schema("path")),
    ("grep", "Search files.", schema("pattern", "path")),
    ("bash", "Run a command.", schema("command")),
)


@dataclass(frozen=True)
class Req:
    """One request: the tools (name, description, schema), the system, the conversation
    up to ``turn``, the model, extra body fields, and breakpoints (Anthropic)."""

    tools: tuple[tuple[str, str, dict[str, Any]], ...] = TOOLS
    system: str = LONG
    turn: int = 1
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    rewrite: bool = False
    """Rewrite the first answer (the history changes instead of growing)."""
    mark_last: bool = False
    """Breakpoint APIs: a breakpoint on the newest block (the agent pattern)."""
    tool_marks: int = 0
    """Breakpoint APIs: breakpoints on the first ``tool_marks`` tools."""
    blocks: int = 1
    """Text blocks of the newest user message."""
    system_mark: bool = True
    """Breakpoint APIs: a breakpoint on the system (none anywhere: ``no-breakpoint``)."""


def base(api: str) -> list[Req]:
    """A stable session: the same tools and system, the conversation growing."""
    return [Req(turn=n, model=MODELS[api]) for n in (1, 2, 3)]


def conversation(req: Req) -> list[tuple[str, Any]]:
    """(role, text or text blocks) of the conversation up to ``req.turn``."""
    out: list[tuple[str, Any]] = []
    for n in range(1, req.turn + 1):
        if n > 1:
            answer = f"Answer {n - 1}: done."
            if n == 2 and req.rewrite:
                answer = "Answer 1: (summarised)"
            out.append(("assistant", answer))
        question = f"Question {n}: what is in notes/{n}.txt?"
        if n == req.turn and req.blocks > 1:
            out.append(("user", [f"{question} part {k}" for k in range(req.blocks)]))
        else:
            out.append(("user", question))
    return out


def _moved_keys(value: dict[str, Any]) -> dict[str, Any]:
    return dict(reversed(list(value.items())))


KEYED: dict[str, dict[str, Any]] = {
    "openai.chat": {"response_format": {"type": "json_object"}},
    "openai.responses": {"text": {"format": {"type": "json_object"}}},
    "anthropic.messages": {
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "max_tokens": 2048,
    },
    "gemini.generate": {"cached_content": "cachedContents/agent-notes"},
    "bedrock.converse": {
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    },
}
"""A config key of each API that keys its cache, other than the model (``config-changed``)."""


def planted(code: str, api: str) -> list[Req]:
    """The session with one planted ``code`` (at request 3, or throughout)."""
    reqs = base(api)
    last = reqs[2]
    if code == "tools-reordered":
        last = replace(last, tools=tuple(reversed(TOOLS)))
    elif code == "tool-added":
        last = replace(last, tools=(*TOOLS, ("todo", "Track a task.", schema("task"))))
    elif code == "tool-removed":
        last = replace(last, tools=TOOLS[:2])
    elif code == "tool-changed":
        last = replace(last, tools=(TOOLS[0], (TOOLS[1][0], "Search code.", TOOLS[1][2]), TOOLS[2]))
    elif code == "schema-key-order":
        name, text, params = TOOLS[1]
        last = replace(last, tools=(TOOLS[0], (name, text, _moved_keys(params)), TOOLS[2]))
    elif code == "system-changed":
        last = replace(last, system=LONG + " Be kind.")
    elif code == "volatile-content":
        reqs = [replace(r, system=f"Now: 2026-01-01T10:1{r.turn}:00Z. {LONG}") for r in reqs]
        reqs[1] = replace(reqs[1], system=reqs[0].system)
        last = reqs[2]
    elif code == "config-changed":  # another model is another session: no break
        last = replace(last, extra=KEYED[api])
    elif code == "tool-choice-changed":
        reqs = [replace(r, extra={"tool_choice": {"type": "auto"}}) for r in reqs]
        last = replace(reqs[2], extra={"tool_choice": {"type": "any"}})
    elif code == "history-rewritten":
        last = replace(last, rewrite=True)
    elif code == "prefix-too-short":
        reqs = [replace(r, system="Be brief.") for r in reqs]
        last = reqs[2]
    elif code == "too-many-breakpoints":
        last = replace(last, tool_marks=3, mark_last=True)
    elif code == "no-breakpoint":
        reqs = [replace(r, system_mark=False) for r in reqs]
        last = reqs[2]
    elif code == "breakpoint-lookback":
        reqs = [replace(r, mark_last=True) for r in reqs]
        last = replace(reqs[2], blocks=24)
    else:
        raise ValueError(code)
    return [reqs[0], reqs[1], last]


BREAKPOINTS_ONLY = (
    "tool-choice-changed",
    "no-breakpoint",
    "too-many-breakpoints",
    "breakpoint-lookback",
)
"""Codes of explicit breakpoints and of the documented tool-choice rule (Anthropic's
``tool_choice``, Bedrock's ``toolConfig.toolChoice``). Every other code applies on every
API: the google-genai SDK too sends ``parameters_json_schema`` in the dict's own key
order, so ``schema-key-order`` is planted on Gemini as well."""

EXPECTED: dict[str, tuple[int, str]] = {
    "tools-reordered": (3, "tools"),
    "tool-added": (3, "tools"),
    "tool-removed": (3, "tools"),
    "tool-changed": (3, "tools"),
    "schema-key-order": (3, "tools"),
    "system-changed": (3, "system"),
    "volatile-content": (3, "system"),
    "config-changed": (3, "config"),
    "tool-choice-changed": (3, "config"),
    "history-rewritten": (3, "messages"),
    "prefix-too-short": (1, "messages"),
    "no-breakpoint": (1, "config"),
    "too-many-breakpoints": (3, "messages"),
    "breakpoint-lookback": (3, "messages"),
}


def applies(code: str, api: str) -> bool:
    return code not in BREAKPOINTS_ONLY or api in BREAKPOINT_APIS


# -- sending through the SDKs ----------------------------------------------------------


def _chat(server: ModelServer) -> Callable[[Req], None]:
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)

    def send(req: Req) -> None:
        messages: list[Any] = [{"role": "system", "content": req.system}]
        messages += [{"role": r, "content": _text(c)} for r, c in conversation(req)]
        tools: Any = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": s}}
            for n, d, s in req.tools
        ]
        client.chat.completions.create(model=req.model, messages=messages, tools=tools, **req.extra)

    return send


def _responses(server: ModelServer) -> Callable[[Req], None]:
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)

    def send(req: Req) -> None:
        given: Any = [{"role": r, "content": _text(c)} for r, c in conversation(req)]
        tools: Any = [
            {"type": "function", "name": n, "description": d, "parameters": s}
            for n, d, s in req.tools
        ]
        client.responses.create(
            model=req.model, instructions=req.system, input=given, tools=tools, **req.extra
        )

    return send


def _anthropic(server: ModelServer) -> Callable[[Req], None]:
    client = anthropic.Anthropic(base_url=server.origin, api_key=KEY, max_retries=0)
    mark = {"type": "ephemeral"}

    def send(req: Req) -> None:
        messages: list[Any] = []
        for role, content in conversation(req):
            texts = content if isinstance(content, list) else [content]
            messages.append({"role": role, "content": [{"type": "text", "text": t} for t in texts]})
        if req.mark_last:
            messages[-1]["content"][-1]["cache_control"] = mark
        tools: Any = [{"name": n, "description": d, "input_schema": s} for n, d, s in req.tools]
        for tool in tools[: req.tool_marks]:
            tool["cache_control"] = mark
        system: Any = [{"type": "text", "text": req.system}]
        if req.system_mark:
            system[0]["cache_control"] = mark
        extra = {"max_tokens": 256, **req.extra}
        client.messages.create(
            model=req.model, system=system, messages=messages, tools=tools, **extra
        )

    return send


def _gemini(server: ModelServer) -> Callable[[Req], None]:
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=server.origin))

    def send(req: Req) -> None:
        contents = [
            types.Content(
                role="model" if r == "assistant" else "user", parts=[types.Part(text=_text(c))]
            )
            for r, c in conversation(req)
        ]
        declarations = [
            types.FunctionDeclaration(
                name=n, description=d, parameters_json_schema=copy.deepcopy(s)
            )
            for n, d, s in req.tools
        ]
        config = types.GenerateContentConfig(
            system_instruction=req.system,
            tools=[types.Tool(function_declarations=declarations)],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **req.extra,
        )
        client.models.generate_content(model=req.model, contents=contents, config=config)

    return send


def _bedrock(server: ModelServer) -> Callable[[Req], None]:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=server.origin,
        region_name="us-east-1",
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    )
    point = {"cachePoint": {"type": "default"}}

    def send(req: Req) -> None:
        messages: list[Any] = []
        for role, content in conversation(req):
            texts = content if isinstance(content, list) else [content]
            messages.append({"role": role, "content": [{"text": t} for t in texts]})
        if req.mark_last:
            messages[-1]["content"].append(point)
        tools: list[Any] = []
        for at, (n, d, s) in enumerate(req.tools):
            tools.append({"toolSpec": {"name": n, "description": d, "inputSchema": {"json": s}}})
            tools += [point] if at < req.tool_marks else []
        system: list[Any] = [{"text": req.system}, *([point] if req.system_mark else [])]
        extra = dict(req.extra)
        tool_config: dict[str, Any] = {"tools": tools}
        if "tool_choice" in extra:  # {"type": "any"} -> {"any": {}}
            tool_config["toolChoice"] = {extra.pop("tool_choice")["type"]: {}}
        client.converse(
            modelId=req.model, system=system, messages=messages, toolConfig=tool_config, **extra
        )

    return send


def _text(content: Any) -> str:
    return "\n".join(content) if isinstance(content, list) else str(content)


SENDERS: dict[str, Callable[[ModelServer], Callable[[Req], None]]] = {
    "openai.chat": _chat,
    "openai.responses": _responses,
    "anthropic.messages": _anthropic,
    "gemini.generate": _gemini,
    "bedrock.converse": _bedrock,
}


def record(
    server: ModelServer, api: str, reqs: list[Req], path: Path, *, pin: bool = True
) -> WireRun:
    """Send ``reqs`` through ``api``'s SDK to ``server`` under a recording lock on ``path``."""
    server.reset()
    server.script([{"text": f"Answer {n}: done."} for n in range(1, len(reqs) + 1)])
    send = SENDERS[api](server)
    with wire.lock(path, mode="record", pin=pin) as run:
        for req in reqs:
            send(req)
    return run
