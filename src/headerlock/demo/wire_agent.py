"""A small agent on the official OpenAI SDK, for the ``app: wire`` demo scenario.

It knows nothing of headerlock's runtime: it sends chat completions with a
tool list and runs the tool calls it gets back, as agents built on the SDK do.
headerlock captures its requests at the HTTP layer. Its tools go through the
deterministic order (what ``headerlock.order_wire_tools`` does for a chat tool list; the
demo never imports ``headerlock.testing``), so the request bytes do not depend on the
order the tools were gathered in. The endpoint is ``HEADERLOCK_DEMO_BASE_URL`` (a closed
local port by default: under headerlock the scripted model answers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from headerlock.runtime.wire_tools import ToolShape, order_shaped_tools

CHAT_TOOLS = ToolShape("OpenAI chat", wrapper="function", kind="function")
"""How a chat completions request holds its tools (the SDK client this demo is)."""
SYSTEM = "You are a terse assistant. Use the tools for anything about text."
MAX_STEPS = 4


def _word_count(arguments: Mapping[str, Any]) -> str:
    return str(len(str(arguments.get("text", "")).split()))


def _reverse(arguments: Mapping[str, Any]) -> str:
    return str(arguments.get("text", ""))[::-1]


def _upper(arguments: Mapping[str, Any]) -> str:
    return str(arguments.get("text", "")).upper()


TOOLS: dict[str, tuple[str, Callable[[Mapping[str, Any]], str]]] = {
    "word_count": ("Count the words in a text.", _word_count),
    "reverse": ("Reverse a text.", _reverse),
    "upper": ("Upper-case a text.", _upper),
}
TEXT_ARGUMENT = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "The text."}},
    "required": ["text"],
}


def tool_list() -> list[dict[str, Any]]:
    """The tools in the OpenAI chat format, in RFC order with canonical schemas."""
    tools = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": TEXT_ARGUMENT}}
        for n, (d, _) in TOOLS.items()
    ]
    return order_shaped_tools(tools, (CHAT_TOOLS,))


def run(prompt: str) -> str:
    """Answer ``prompt``, calling tools until the model stops asking for them."""
    import openai

    client = openai.OpenAI(
        base_url=os.environ.get("HEADERLOCK_DEMO_BASE_URL", "http://127.0.0.1:9/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-headerlock-demo"),
        max_retries=0,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt},
    ]
    tools = tool_list()
    for _ in range(MAX_STEPS):
        sdk: Any = client.chat.completions  # plain dicts, as most SDK agents pass them
        reply = sdk.create(model="gpt-4o-mini", messages=messages, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            function = getattr(call, "function", None)
            name = getattr(function, "name", "")
            arguments = json.loads(getattr(function, "arguments", "") or "{}")
            handler = TOOLS.get(name)
            result = handler[1](arguments) if handler else f"unknown tool {name!r}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return ""
