"""Canonical wire bytes: what headerlock itself sends does not depend on the key order
a tool's schema was written in (issue 13, point 9)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headerlock.agent import Context, ToolSchema
from headerlock.runtime.adapters.openai_compat import OpenAICompatAdapter
from headerlock.runtime.app import AgentApp
from tests.model_server import ModelServer, chat_stream, text_chunks

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look up."},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["query"],
}
ORDERS = list(itertools.permutations(PARAMETERS))


def reordered(order: tuple[str, ...]) -> dict[str, Any]:
    """``PARAMETERS`` with its keys in ``order`` (and the properties' keys reversed
    on every other order, so nested dicts vary too)."""
    parameters = {key: PARAMETERS[key] for key in order}
    if ORDERS.index(order) % 2:
        properties = parameters["properties"]
        parameters["properties"] = {
            name: dict(reversed(list(properties[name].items())))
            for name in reversed(list(properties))
        }
    return parameters


def keys_in_order(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON ``object_pairs_hook`` that fails on an object with unsorted keys."""
    keys = [key for key, _ in pairs]
    assert keys == sorted(keys), f"keys not in canonical order: {keys}"
    return dict(pairs)


def test_six_key_orders_of_a_tool_schema_give_one_http_body(model_server: ModelServer) -> None:
    def plugin_for(parameters: dict[str, Any]) -> Any:
        def plugin(ctx: Context) -> None:
            ctx.tools.register(ToolSchema("lookup", "Look things up.", parameters), lambda a: "")

        return plugin

    async def send(base_url: str, parameters: dict[str, Any]) -> None:
        adapter = OpenAICompatAdapter(base_url=base_url, api_key="k", model="m")
        app = AgentApp(
            {"model": "m", "persona": "Be brief.", "temperature": 0.0, "max_tokens": 64},
            plugins=[plugin_for(parameters)],
            adapter=adapter,
        )
        async with app:
            result = await app.run_turn("hi")
        assert (result.reason.kind, result.text) == ("stop", "ok")

    model_server.route("*/chat/completions", chat_stream(text_chunks("ok")))
    for order in ORDERS:
        asyncio.run(send(model_server.base_url, reordered(order)))
    bodies = [hit.body for hit in model_server.hits]
    assert len(ORDERS) == len(bodies) == 6
    assert len(set(bodies)) == 1, "the HTTP body depends on the schema's key order"
    body = json.loads(bodies[0], object_pairs_hook=keys_in_order)
    assert body["stream"] is True
    assert body["tools"][0]["function"]["parameters"] == PARAMETERS


def rpc(process: subprocess.Popen[bytes], ident: int, method: str, params: Any) -> bytes:
    """Send one JSON-RPC request; return the raw line of its response."""
    assert process.stdin is not None and process.stdout is not None
    message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        assert line, "the ACP demo closed its output"
        if json.loads(line).get("id") == ident:
            return line


def sent_result(line: bytes) -> Any:
    """The ``result`` of a raw JSON-RPC response line (the envelope is the SDK's),
    checked to have its keys in canonical order at every depth."""
    text = line.decode()
    start = text.index('"result":') + len('"result":')
    result, _ = json.JSONDecoder(object_pairs_hook=keys_in_order).raw_decode(text, start)
    return result


TOOL_PLUGIN = """\
import json
from headerlock.agent import ToolSchema

def lookup(ctx):
    parameters = json.loads((ctx.get("workspace").root / "parameters.json").read_text())
    ctx.tools.register(ToolSchema("lookup", "Look things up.", parameters), lambda a: "")
"""


def test_acp_demo_sends_the_session_log_in_canonical_key_order(tmp_path: Path) -> None:
    pytest.importorskip("acp")
    (tmp_path / "wire_tools_plugin.py").write_text(TOOL_PLUGIN)
    (tmp_path / "app.yaml").write_text("plugins: ['wire_tools_plugin:lookup']\n")
    (tmp_path / "script.yaml").write_text("- ok\n")
    paths = [str(tmp_path), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    command = [sys.executable, "-m", "headerlock.demo.acp_app", "--config", "app.yaml"]
    process = subprocess.Popen(
        [*command, "--script", "script.yaml"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path, env=env,
    )  # fmt: skip
    tools: set[str] = set()
    try:
        rpc(process, 0, "initialize", {"protocolVersion": 1})
        for number, order in enumerate(ORDERS, 1):
            workspace = tmp_path / f"w{number}"
            workspace.mkdir()
            (workspace / "parameters.json").write_text(json.dumps(reordered(order)))
            new = rpc(process, 3 * number, "session/new", {"cwd": str(workspace), "mcpServers": []})
            session = json.loads(new)["result"]["sessionId"]
            prompt = [{"type": "text", "text": "hi"}]
            rpc(process, 3 * number + 1, "session/prompt", {"sessionId": session, "prompt": prompt})
            line = rpc(process, 3 * number + 2, "_headerlock/session_log", {"sessionId": session})
            events = sent_result(line)["events"]
            (header,) = [e for e in events if e["type"] == "request/header"]
            # Re-dumped without sorting: the bytes of the tools exactly as sent.
            tools.add(json.dumps(header["data"]["header"]["tools"]))
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(10)
    assert len(tools) == 1
